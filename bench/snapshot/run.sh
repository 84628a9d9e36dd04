#!/usr/bin/env bash
# Times `perfgap snapshot` (the real binary): on this live node, and on the large generated
# node tree of bench/gen_tree.cpp (384 CPUs, 8 GPUs, 8 NICs, 8 ranks) captured again with
# `snapshot --root`. Each into a new directory and into a .tar.gz; median and min of N runs.
#
#   bench/snapshot/run.sh [--reps N] [--warmup N] [--no-build] [--bin PERFGAP] [--gen GENERATOR]
#                         [--tree DIR] [--keep]
#
# Target (issue 6): snapshot of a live node, median <= 1000 ms (directory and .tar.gz). Exit
# status: 0 when it holds, 1 when it does not, 2 on a usage or setup error.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

REPS=11
WARMUP=2
BUILD=1
BIN=""
GEN=""
TREE=""
KEEP=0
LIMIT_MS=1000

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) REPS="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --bin) BIN="$2"; BUILD=0; shift 2 ;;
    --gen) GEN="$2"; shift 2 ;;
    --tree) TREE="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument $1" >&2; usage ;;
  esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ && "$WARMUP" =~ ^[0-9]+$ ]] || { echo "run.sh: --reps/--warmup need numbers" >&2; exit 2; }

SRC="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ $BUILD -eq 1 ]]; then
  (cd "$SRC" && cmake --preset bench >/dev/null && cmake --build --preset bench --target perfgap perfgap-bench-gen) >&2
fi
BIN="${BIN:-$SRC/build-bench/src/perfgap}"
GEN="${GEN:-$SRC/build-bench/bench/perfgap-bench-gen}"
[[ -x "$BIN" ]] || { echo "run.sh: $BIN missing: build the bench preset or pass --bin" >&2; exit 2; }

OUT="$SRC/bench/out"
mkdir -p "$OUT"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgap-bench-snapshot.XXXXXX")"
cleanup() { if [[ $KEEP -eq 0 ]]; then rm -rf "$WORK"; else echo "kept: $WORK" >&2; fi; }
trap cleanup EXIT

if [[ -z "$TREE" ]]; then
  if [[ -x "$GEN" ]]; then
    TREE="$WORK/tree"
    "$GEN" "$TREE" > "$WORK/gen.txt"
  else
    echo "run.sh: $GEN missing: the generated-tree figures are left out" >&2
  fi
else
  TREE="$(cd "$TREE" && pwd)"
  echo "$TREE: existing tree" > "$WORK/gen.txt"
fi

# Wall clock of one snapshot in microseconds, into T; the output is removed after each run so
# every run writes a new directory or archive (as on a node).
N=0
snap() {  # snap OUT-SUFFIX [ARGS...]
  local suffix=$1; shift
  local target="$WORK/snap-$N$suffix" a b rc=0
  N=$((N + 1))
  a=$(date +%s%N)
  "$BIN" snapshot "$@" "$target" > "$WORK/last.txt" 2>&1 || rc=$?
  b=$(date +%s%N)
  if [[ $rc -ne 0 ]]; then echo "run.sh: perfgap snapshot exited $rc: $(cat "$WORK/last.txt")" >&2; exit 2; fi
  T=$(( (b - a) / 1000 ))
  LAST="$target"
}
drop() { rm -rf "$LAST"; }


declare -A RESULT DESC
measure() {  # measure KEY SUFFIX [ARGS...]
  local key=$1 suffix=$2; shift 2
  local times=() i
  for ((i = 0; i < WARMUP; ++i)); do snap "$suffix" "$@"; drop; done
  for ((i = 0; i < REPS; ++i)); do snap "$suffix" "$@"; times+=("$T"); [[ $i -lt $((REPS - 1)) ]] && drop; done
  stats "${times[@]}"
  RESULT[$key]="$MIN $MED"
  local manifest="$LAST/.perfgap/snapshot.json"
  if [[ "$suffix" == ".tar.gz" ]]; then
    DESC[$key]="$(stat -c %s "$LAST") bytes compressed"
  else
    DESC[$key]="$(sed -n 's/.*"files": \([0-9]*\).*/\1 files/p' "$manifest" | head -1), $(find "$LAST" -type l | wc -l) links, $(du -sk "$LAST" | cut -f1) KiB on disk"
  fi
  drop
}

# Yardsticks for the tree: copying it (`cp -a`, the cost of creating that many files here)
# and archiving it (`tar czf`), neither of which selects, redacts or resolves anything.
yardstick() {  # yardstick KEY COMMAND...
  local key=$1; shift
  local times=() i a b
  for ((i = 0; i < REPS; ++i)); do
    rm -rf "$WORK/yard"
    a=$(date +%s%N); "$@" > /dev/null; b=$(date +%s%N)
    times+=($(( (b - a) / 1000 )))
  done
  rm -rf "$WORK/yard"
  stats "${times[@]}"
  RESULT[$key]="$MIN $MED"
}

measure live-dir ""
measure live-tgz ".tar.gz"
if [[ -n "$TREE" ]]; then
  measure tree-dir "" --root "$TREE"
  measure tree-tgz ".tar.gz" --root "$TREE"
  yardstick tree-cp cp -a "$TREE" "$WORK/yard"
  yardstick tree-tar tar -C "$TREE" -czf "$WORK/yard" .
fi

MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)
[[ -n "$MODEL" ]] || MODEL=$(uname -m)
read -r _ LIVE_DIR_MED <<< "${RESULT[live-dir]}"
read -r _ LIVE_TGZ_MED <<< "${RESULT[live-tgz]}"
VERDICT=ok; STATUS=0
if (( LIVE_DIR_MED > LIMIT_MS * 1000 || LIVE_TGZ_MED > LIMIT_MS * 1000 )); then VERDICT="FAIL: live snapshot median above ${LIMIT_MS} ms"; STATUS=1; fi

SUMMARY="$OUT/snapshot-summary-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
  echo "perfgap snapshot benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine:   $MODEL, $(nproc --all) CPUs online, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "live node: $(nproc --all) CPUs, $(ls -d /proc/[0-9]* 2>/dev/null | wc -l) processes, $(ls /sys/bus/pci/devices 2>/dev/null | wc -l) PCI functions"
  [[ -n "$TREE" ]] && echo "tree:      $(head -1 "$WORK/gen.txt")"
  echo "runs:      $WARMUP warm-up, $REPS timed each (wall clock of the whole command, date +%s%N)"
  echo
  printf '%-48s %9s %9s  %s\n' "" "min ms" "median ms" "output"
  for key in live-dir live-tgz tree-dir tree-tgz tree-cp tree-tar; do
    [[ -n "${RESULT[$key]:-}" ]] || continue
    read -r mn md <<< "${RESULT[$key]}"
    case $key in
      live-dir) label="perfgap snapshot DIR (live)" ;;
      live-tgz) label="perfgap snapshot OUT.tar.gz (live)" ;;
      tree-dir) label="perfgap snapshot --root TREE DIR" ;;
      tree-tgz) label="perfgap snapshot --root TREE OUT.tar.gz" ;;
      tree-cp) label="yardstick: cp -a TREE DIR" ;;
      tree-tar) label="yardstick: tar -C TREE -czf OUT.tar.gz ." ;;
    esac
    printf '%-48s %9s %9s  %s\n' "$label" "$(ms "$mn")" "$(ms "$md")" "${DESC[$key]:-}"
  done
  echo
  echo "target:    live snapshot median <= ${LIMIT_MS} ms: $VERDICT"
} | tee "$SUMMARY"
exit $STATUS
