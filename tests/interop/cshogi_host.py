"""Pantheon driven by cshogi's USI engine class (`pip install cshogi`),
the way a Python match runner or GUI built on it drives an engine: the
handshake, options, `isready`, `usinewgame`, then a game of minishogi
against itself, one `position startpos moves ...` and `go byoyomi 100`
per ply, to its end or 80 plies. The moves are then replayed by
`pantheon show`, which fails on an illegal one.

    python3 tests/interop/cshogi_host.py PATH/TO/pantheon

cshogi's own board knows standard shogi only, so it cannot host a
variant game by itself; its engine class speaks plain USI and works.
"""
import subprocess
import sys
import time

from cshogi.usi import Engine

binary = sys.argv[1]
engine = Engine(binary)
print(f"connected: {engine.name}")
engine.setoption("USI_Variant", "minishogi")
engine.setoption("Threads", 1)
engine.isready()
engine.usinewgame()
moves, times = [], []
for ply in range(80):
    engine.position(moves)
    started = time.monotonic()
    best, _ = engine.go(byoyomi=100)
    times.append(time.monotonic() - started)
    if best in ("resign", "win"):
        print(f"ply {ply + 1}: {best}")
        break
    moves.append(best)
engine.quit()
shown = subprocess.run([binary, "show", "--variant", "minishogi", "--moves", *moves], capture_output=True, text=True)
if shown.returncode != 0:
    sys.exit(f"pantheon show refused the game: {shown.stderr.strip()}")
result = [line for line in shown.stdout.splitlines() if line.startswith("result:")]
print(f"{len(moves)} legal plies, {max(times) * 1000:.0f} ms the longest move; {result[0] if result else ''}")
