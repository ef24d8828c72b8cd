#!/usr/bin/env bash
# Time handling under byoyomi: Pantheon against itself as two USI
# processes, 100 ms byoyomi and no main time, refereed by `pantheon match`
# (our rules; an answer later than the byoyomi plus the arbiter's 50 ms
# grace loses on time). Prints the result, each side's time per move
# (median, 99th percentile, maximum) and its games lost on time.
#
#   benches/byoyomi.sh [GAMES (500)] [VARIANT (minishogi)] [BYOYOMI_MS (100)]
#
# Uses target/release/pantheon (or $PANTHEON); build it first with
# `cargo build --release`.
set -euo pipefail
games=${1:-500}
variant=${2:-minishogi}
byoyomi=${3:-100}
bin=${PANTHEON:-$(dirname "$0")/../target/release/pantheon}
go="btime 0 wtime 0 byoyomi $byoyomi"
exec "$bin" match --variant "$variant" --games "$games" \
    --a "usi:$bin" --a-option Threads=1 --a-go "$go" \
    --b "usi:$bin" --b-option Threads=1 --b-go "$go" \
    --engine-timeout 10
