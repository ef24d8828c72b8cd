"""Generates tests/data/perft-pandemonium.txt with Fairy-Stockfish's Python
binding (pyffish) as an independent oracle. Not used by the test suite,
which needs no Python; kept to document where the counts come from.

    pip install pyffish && python3 tests/data/tools/oracle_perft.py SHARED_REFDATA_DIR > tests/data/perft-pandemonium.txt

Positions come from seeded random playouts. Counts follow the project's
perft definition (a game-over position has no successors). Only variants
where Fairy-Stockfish's move generation matches ../shared/rules without
history are used (pandemonium, pandemonium2022).
"""
import random, re, sys
import pyffish as sf

sf.load_variant_config(open(sys.argv[1] + "/variants.ini").read())
N = 9


def fsf_sq(s):  # USI 7g -> FSF c3
    return chr(ord("a") + N - int(s[0])) + str(N - (ord(s[1]) - ord("a")))


def fen_to_sfen(fen):
    board_hand, side = fen.split()[:2]
    board, hand = re.match(r"(.*)\[(.*)\]", board_hand).groups()
    counts = {}
    for c in hand:
        counts[c] = counts.get(c, 0) + 1
    order = sorted(counts, key=lambda c: (c.islower(), c))
    h = "".join((str(counts[c]) if counts[c] > 1 else "") + c for c in order) or "-"
    return f"{board} {'b' if side == 'w' else 'w'} {h} 1"


def perft(variant, fen, moves, depth):
    if depth == 0:
        return 1
    if sf.is_immediate_game_end(variant, fen, moves)[0]:
        return 0
    legal = sf.legal_moves(variant, fen, moves)
    if depth == 1:
        return len(legal)
    return sum(perft(variant, fen, moves + [m], depth - 1) for m in legal)


def main():
    rng = random.Random(20261129)
    print("# Perft of pandemonium and pandemonium2022 positions from seeded random playouts,")
    print("# computed with pyffish (tests/data/tools/oracle_perft.py). Fields: variant|sfen|depth|count|note")
    for variant in ["pandemonium", "pandemonium2022"]:
        start = sf.start_fen(variant)
        done = 0
        while done < 40:
            moves = []
            plies = rng.randrange(4, 120)
            for _ in range(plies):
                legal = sf.legal_moves(variant, start, moves)
                if not legal or sf.is_immediate_game_end(variant, start, moves)[0]:
                    break
                moves.append(rng.choice(legal))
            fen = sf.get_fen(variant, start, moves)
            depth = 2 if done % 4 else 1
            count = perft(variant, fen, [], depth)
            check = ";check" if sf.gives_check(variant, start, moves) else ""
            print(f"{variant}|{fen_to_sfen(fen)}|{depth}|{count}|ply={len(moves)}{check}")
            done += 1


main()
