#!/usr/bin/env bash
# Cross-rank `perfgap analyze kineto` over a generated data-parallel job (issue 29): RANKS Kineto
# traces of ITERS iterations each (~26 KB of JSON per iteration: iters=2000 is ~50 MB a rank),
# one late rank, written by perfgap-gen-profile (tests/support/profile_gen.hpp gen::job).
# For each rank count: the read floor (`cat` of the same files, page cache warm) and the
# analysis (wall time, user+sys CPU, peak RSS from /usr/bin/time -v), and MB/s of each.
#
#   bench/profiles/ranks.sh [--ranks "16 64"] [--iters 2000] [--build-dir build] [--keep] [--work DIR]
#
# Prints one line per rank count; exit 0 unless setup fails (2). The traces are deleted at the
# end unless --keep.
set -euo pipefail

RANKS_LIST="16 64"
ITERS=2000
BDIR=build
KEEP=0
WORK=""
usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ranks) RANKS_LIST="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --build-dir) BDIR="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --work) WORK="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "ranks.sh: unknown argument $1" >&2; usage ;;
  esac
done
[[ "$ITERS" =~ ^[1-9][0-9]*$ ]] || { echo "ranks.sh: --iters needs a number" >&2; exit 2; }

SRC="$(cd "$(dirname "$0")/../.." && pwd)"
BIN="$SRC/$BDIR/src/perfgap"
GEN="$SRC/$BDIR/tools/perfgap-gen-profile"
[[ -x "$BIN" && -x "$GEN" ]] || { echo "ranks.sh: $BIN or $GEN missing: cmake --build $BDIR --target perfgap perfgap-gen-profile" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "ranks.sh: /usr/bin/time (GNU time) needed for the peak RSS" >&2; exit 2; }

if [[ -z "$WORK" ]]; then WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgap-bench-ranks.XXXXXX")"; else mkdir -p "$WORK"; fi
cleanup() { if [[ $KEEP -eq 0 ]]; then rm -rf "$WORK"; else echo "kept: $WORK" >&2; fi; }
trap cleanup EXIT

now() { date +%s%N; }
field() { sed -n "s/^[[:space:]]*$1: //p" "$2"; }  # a line of /usr/bin/time -v

echo "cores: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $RANKS_LIST; do
  dir="$WORK/job$n"
  rm -rf "$dir" && mkdir -p "$dir"
  "$GEN" "job:$n:$(( n / 2 + 1 )):30:iters=$ITERS" kineto "$dir"
  mb=$(du -sm "$dir" | cut -f1)
  cat "$dir"/*.json > /dev/null  # into the page cache: both runs read from memory
  t=$(now); cat "$dir"/*.json > /dev/null; cat_ms=$(( ($(now) - t) / 1000000 ))
  t=$(now)
  /usr/bin/time -v -o "$WORK/time.$n" "$BIN" analyze kineto "$dir" --format json --output "$WORK/report.$n.json" || [[ $? -eq 1 ]]
  ms=$(( ($(now) - t) / 1000000 ))
  rss=$(( $(field 'Maximum resident set size (kbytes)' "$WORK/time.$n") / 1024 ))
  cpu=$(awk -v u="$(field 'User time (seconds)' "$WORK/time.$n")" -v s="$(field 'System time (seconds)' "$WORK/time.$n")" 'BEGIN { printf "%.1f", u + s }')
  straggler=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(next((f['title'][:90] for f in r['findings'] if f['id']=='profile.straggler'), 'no profile.straggler'))" "$WORK/report.$n.json" 2>/dev/null || echo '?')
  awk -v n="$n" -v mb="$mb" -v cms="$cat_ms" -v ms="$ms" -v cpu="$cpu" -v rss="$rss" 'BEGIN {
    printf "%d ranks, %d MiB: cat %d ms (%.0f MB/s); analyze kineto %d ms wall (%.0f MB/s, %.1fx the floor), %s s CPU, peak RSS %d MiB (%.2f x the input)\n",
      n, mb, cms, mb / (cms > 0 ? cms : 1) * 1000, ms, mb / ms * 1000, ms / (cms > 0 ? cms : 1), cpu, rss, rss / mb }'
  echo "  $straggler"
  rm -rf "$dir"
done
