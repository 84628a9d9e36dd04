#!/usr/bin/env bash
# Cross-rank `perfgap analyze kineto` over a generated data-parallel job (issue 29): RANKS Kineto
# traces of ITERS iterations each (~14 KB of JSON per iteration: iters=3500 is ~50 MB a rank),
# one late rank, written by perfgap-gen-profile (tests/support/profile_gen.hpp gen::job).
# For each rank count: the read floor (`cat` of the same files, page cache warm, best of 3) and the
# analysis (wall time, user+sys CPU, peak RSS from /usr/bin/time -v), and MB/s of each.
# --gzip: the ranks also gzipped (as PyTorch's .pt.trace.json.gz), their floor `zcat` of them
# and the analysis of the .json.gz directory (MB/s of the JSON inflated).
# --before BIN: each input analysed by BIN too (an older perfgap), and the JSON reports compared.
# --whatif: `perfgap whatif` over the same .json ranks too (issue 40: within 1.5x of analyze).
# --cold (root): also from the disk, the page cache dropped before the floor's `cat` and before
# the analysis (a job's ranks larger than memory, as 512 ranks of 50 MB are, are read so).
#
#   bench/profiles/ranks.sh [--ranks "16 64"] [--iters 3500] [--build-dir build] [--gzip]
#                           [--cold] [--before BIN] [--whatif] [--keep] [--work DIR]
#
# Prints the machine and load, then lines per rank count; exit 0 unless setup fails (2). The
# traces are deleted after each count unless --keep.
set -euo pipefail

RANKS_LIST="16 64"
ITERS=3500
BDIR=build
KEEP=0
GZIP=0
COLD=0
BEFORE=""
WHATIF=0
WORK=""
usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ranks) RANKS_LIST="$2"; shift 2 ;;
    --iters) ITERS="$2"; shift 2 ;;
    --build-dir) BDIR="$2"; shift 2 ;;
    --gzip) GZIP=1; shift ;;
    --cold) COLD=1; shift ;;
    --before) BEFORE="$2"; shift 2 ;;
    --whatif) WHATIF=1; shift ;;
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
[[ -z "$BEFORE" || -x "$BEFORE" ]] || { echo "ranks.sh: --before $BEFORE is not an executable" >&2; exit 2; }
if [[ $COLD -eq 1 && ! -w /proc/sys/vm/drop_caches ]]; then echo "ranks.sh: --cold drops the page cache: run as root" >&2; exit 2; fi
if [[ $GZIP -eq 1 ]]; then command -v gzip > /dev/null && command -v zcat > /dev/null || { echo "ranks.sh: --gzip needs gzip and zcat" >&2; exit 2; }; fi

if [[ -z "$WORK" ]]; then WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgap-bench-ranks.XXXXXX")"; else mkdir -p "$WORK"; fi
cleanup() { if [[ $KEEP -eq 0 ]]; then rm -rf "$WORK"; else echo "kept: $WORK" >&2; fi; }
trap cleanup EXIT

now() { date +%s%N; }
field() { sed -n "s/^[[:space:]]*$1: //p" "$2"; }  # a line of /usr/bin/time -v
load() { cut -d' ' -f1-3 /proc/loadavg; }
# best_of_3 CMD...: the shortest of three runs in ms, after one that fills the page cache (the floor is from memory).
best_of_3() {
  "$@" > /dev/null
  local best=0 t ms
  for _ in 1 2 3; do
    t=$(now); "$@" > /dev/null; ms=$(( ($(now) - t) / 1000000 ))
    if [[ $best -eq 0 || $ms -lt $best ]]; then best=$ms; fi
  done
  echo "$best"
}
# analyse LABEL PERFGAP DIR MB FLOOR_MS TAG [COMMAND...]: one analysis (analyze kineto, or the
# command given), its line; the report in $WORK/report.TAG.json.
analyse() {
  local label=$1 bin=$2 dir=$3 mb=$4 floor_ms=$5 tag=$6 t ms rss cpu straggler
  shift 6
  local cmd=("$@")
  [[ ${#cmd[@]} -gt 0 ]] || cmd=(analyze kineto)
  t=$(now)
  /usr/bin/time -v -o "$WORK/time.$tag" "$bin" "${cmd[@]}" "$dir" --format json --output "$WORK/report.$tag.json" || [[ $? -eq 1 ]]
  ms=$(( ($(now) - t) / 1000000 ))
  rss=$(( $(field 'Maximum resident set size (kbytes)' "$WORK/time.$tag") / 1024 ))
  cpu=$(awk -v u="$(field 'User time (seconds)' "$WORK/time.$tag")" -v s="$(field 'System time (seconds)' "$WORK/time.$tag")" 'BEGIN { printf "%.2f", u + s }')
  straggler=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(next((f['title'].replace(sys.argv[2] + '/', '')[:50] for f in r['findings'] if f['id'] in ('profile.straggler', 'whatif.rank')), 'no profile.straggler'))" "$WORK/report.$tag.json" "$dir" 2>/dev/null || echo '?')
  awk -v l="$label" -v mb="$mb" -v fms="$floor_ms" -v ms="$ms" -v cpu="$cpu" -v rss="$rss" -v s="$straggler" 'BEGIN {
    printf "  %s: %d ms wall (%.0f MB/s, %.1fx the floor), %.2f s CPU (%.0f MB/s a CPU second), peak RSS %d MiB; %s\n",
      l, ms, mb / ms * 1000, ms / (fms > 0 ? fms : 1), cpu, mb / (cpu > 0 ? cpu : 0.01), rss, s }'
}
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }
same() {  # same TAG1 TAG2: the two reports but generated_at
  if cmp -s <(grep -v '"generated_at"' "$WORK/report.$1.json") <(grep -v '"generated_at"' "$WORK/report.$2.json"); then echo "  reports of $1 and $2: identical (generated_at aside)"; else echo "  reports of $1 and $2: DIFFER"; fi
}

echo "cores: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); load before: $(load)"
for n in $RANKS_LIST; do
  dir="$WORK/job$n"
  rm -rf "$dir" "$dir.gz" && mkdir -p "$dir"
  "$GEN" "job:$n:$(( n / 2 + 1 )):30:iters=$ITERS" kineto "$dir"
  mb=$(du -sb "$dir" | awk '{ printf "%d", $1 / 1e6 }')
  echo "$n ranks, $mb MB of JSON (load $(load)):"
  cat_ms=$(best_of_3 cat "$dir"/*.json)
  awk -v mb="$mb" -v ms="$cat_ms" 'BEGIN { printf "  floor cat of the .json: %d ms (%.0f MB/s)\n", ms, mb / (ms > 0 ? ms : 1) * 1000 }'
  [[ -n "$BEFORE" ]] && analyse "before, .json" "$BEFORE" "$dir" "$mb" "$cat_ms" "$n.before"
  analyse "analyze kineto, .json" "$BIN" "$dir" "$mb" "$cat_ms" "$n"
  [[ $WHATIF -eq 1 ]] && analyse "whatif, .json" "$BIN" "$dir" "$mb" "$cat_ms" "$n.whatif" whatif
  [[ -n "$BEFORE" ]] && same "$n.before" "$n"
  if [[ $COLD -eq 1 ]]; then
    drop_caches; t=$(now); cat "$dir"/*.json > /dev/null; cold_ms=$(( ($(now) - t) / 1000000 ))
    awk -v mb="$mb" -v ms="$cold_ms" 'BEGIN { printf "  floor cat of the .json from the disk (page cache dropped): %d ms (%.0f MB/s)\n", ms, mb / (ms > 0 ? ms : 1) * 1000 }'
    drop_caches
    analyse "analyze kineto, .json from the disk" "$BIN" "$dir" "$mb" "$cold_ms" "$n.cold"
  fi
  if [[ $GZIP -eq 1 ]]; then
    mkdir -p "$dir.gz"
    ls "$dir"/*.json | xargs -P "$(nproc)" -I{} sh -c 'gzip -c "$1" > "$2/$(basename "$1").gz"' _ {} "$dir.gz"
    gz_mb=$(du -sb "$dir.gz" | awk '{ printf "%d", $1 / 1e6 }')
    zcat_ms=$(best_of_3 zcat "$dir.gz"/*.json.gz)
    awk -v mb="$mb" -v gz="$gz_mb" -v ms="$zcat_ms" 'BEGIN { printf "  floor zcat of the .json.gz (%d MB): %d ms (%.0f MB/s of JSON)\n", gz, ms, mb / (ms > 0 ? ms : 1) * 1000 }'
    [[ -n "$BEFORE" ]] && analyse "before, .json.gz" "$BEFORE" "$dir.gz" "$mb" "$zcat_ms" "$n.gz.before"
    analyse "analyze kineto, .json.gz" "$BIN" "$dir.gz" "$mb" "$zcat_ms" "$n.gz"
    [[ -n "$BEFORE" ]] && same "$n.gz.before" "$n.gz"
  fi
  echo "  load after: $(load)"
  [[ $KEEP -eq 1 ]] || rm -rf "$dir" "$dir.gz"
done
