#!/usr/bin/env bash
# The GPU check: one command that measures a release binary on a machine
# with a GPU (no Rust toolchain needed there) and writes the figures as one
# JSON file plus a log per step.
#
#   benches/gpu-check.sh [--small] [--binary PATH] OUT_DIR
#
# PATH is the release binary built elsewhere with the default features,
# plain or gzipped (`.gz`; default: target/release/pantheon, then
# pantheon.gz beside this script). --small shrinks every size so that the
# whole check runs on a software Vulkan device (llvmpipe) in a few minutes.
#
# The Vulkan loader (libvulkan.so.1) may be present only as an unpacked
# Debian package: the caller then sets LD_LIBRARY_PATH to its directory
# (and VK_ICD_FILENAMES to the driver's ICD file if it is not in a
# standard place). The steps, each under its own time limit (8 minutes in
# all at most: 30 + 60 + 70 + 60 + 130 + 130 s):
#   1. the adapter: name, graphics API, driver, f16 support, measured peaks
#   2. bench nn: the small and the large net, batch 1 to 4096, both policy
#      paths, f32 and f16
#   3. bench search: 1 to 16 threads, against the net's raw rate
#   4. two minutes of self-play on the GPU (games/hour)
#   5. two minutes of training on the GPU (steps/s, samples/s)
set -uo pipefail

small=0
binary=""
while [ $# -gt 1 ]; do
  case "$1" in
    --small) small=1; shift ;;
    --binary) binary="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--small] [--binary PATH] OUT_DIR" >&2; exit 2; }
out="$1"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"

if [ -z "$binary" ]; then
  for candidate in "$here/../target/release/pantheon" "$here/pantheon.gz" "$here/../pantheon.gz"; do
    [ -e "$candidate" ] && { binary="$candidate"; break; }
  done
fi
[ -n "$binary" ] && [ -e "$binary" ] || { echo "no binary: pass --binary PATH" >&2; exit 2; }
case "$binary" in
  *.gz) gunzip -c "$binary" > "$out/pantheon" && chmod +x "$out/pantheon"; P="$out/pantheon" ;;
  *) P="$binary" ;;
esac

started=$(date +%s)
log() { echo "== $* ($(( $(date +%s) - started )) s)" | tee -a "$out/check.log"; }
# Runs a step under a time limit; its output goes to OUT/NAME.log.
step() {
  local name="$1" limit="$2"; shift 2
  log "$name"
  timeout --signal=INT --kill-after=10 "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  tail -n 40 "$out/$name.log" >> "$out/check.log"
  echo "$name: exit $rc" >> "$out/check.log"
  return 0
}

# Mesa's and wgpu's window-system probes complain on stderr without it.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"

variant=mansindam
if [ $small -eq 1 ]; then
  # A software device runs the nets at a few hundred positions/s: small
  # batches, short searches, and minishogi games for self-play.
  batches=1,8,64
  threads=1,2
  large="--blocks 2 --channels 32"
  nodes=2000
  net_nodes=200
  search_batch=16
  run_s=60
  play="--variant minishogi --parallel 16 --visits 16 --fast-visits 4 --max-plies 40"
else
  batches=1,8,32,128,512,1024,2048,4096
  threads=1,2,4,8,16
  large="--blocks 10 --channels 128"
  nodes=100000
  net_nodes=20000
  search_batch=256
  run_s=120
  play="--variant $variant --parallel 256"
fi

# 1. The adapter.
step device 30 "$P" bench device --device gpu --json "$out/device.json"

# 2. The network: the shipped (small) net and a large one (random weights:
# the speed does not depend on them), f32 and f16, both policy paths.
"$P" net init --variant $variant $large --features attacks --out "$out/large.pnet" > "$out/net-init.log" 2>&1
step nn-small 60 "$P" bench nn --variant $variant --device gpu --batch $batches --precision f32,f16 --json "$out/nn-small.json"
step nn-large 70 "$P" bench nn --variant $variant --device gpu --model "$out/large.pnet" --batch $batches --precision f32,f16 --json "$out/nn-large.json"

# 3. The search with the small net.
step search 60 "$P" bench search --variant $variant --device gpu --threads $threads --nodes $nodes --net-nodes $net_nodes --pipeline 1,2 --batch $search_batch --runs 1 --json "$out/search.json"

# 4. Self-play, then 5. training on its records, each for a fixed time.
# shellcheck disable=SC2086
step selfplay $((run_s + 10)) "$P" selfplay $play --device gpu --games 100000 --batch 256 --time-limit $run_s --out "$out/selfplay" --json "$out/selfplay.json"
train_variant=$(echo "$play" | awk '{print $2}')
step train $((run_s + 10)) "$P" train --variant "$train_variant" --device gpu --data "$out/selfplay" --out "$out/trained.pnet" --steps 1000000 --batch 256 --time-limit $run_s --json "$out/train.json"

# One JSON file of everything measured.
{
  echo "{"
  echo "  \"binary\": \"$("$P" --version 2>/dev/null | tr -d '"')\","
  echo "  \"small\": $([ $small -eq 1 ] && echo true || echo false),"
  echo "  \"seconds\": $(( $(date +%s) - started )),"
  first=1
  for part in device nn-small nn-large search selfplay train; do
    [ $first -eq 1 ] || echo ","
    first=0
    key=$(echo "$part" | tr '-' '_')
    if [ -s "$out/$part.json" ]; then
      printf '  "%s": ' "$key"; cat "$out/$part.json"
    else
      printf '  "%s": null' "$key"
    fi
  done
  echo
  echo "}"
} > "$out/gpu-check.json"
log "done: $out/gpu-check.json"
