#!/usr/bin/env bash
# Times `perfgap check --root TREE` on a large generated node tree against simply reading the
# same files (`tar cf - TREE | wc -c`), side by side in one run, pinned to one core.
#
#   bench/run.sh [--reps N] [--warmup N] [--core C] [--no-build] [--tree DIR] [--keep]
#                [-- GENERATOR-OPTIONS...]
#
# Targets (issue): check median <= 150 ms, and <= 3x the tar read median. Exit status: 0 when
# both hold, 1 when one does not, 2 on a usage or setup error.
# Needs only bash, coreutils (taskset from util-linux, tar) and `date +%s%N`.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPS=15
WARMUP=3
CORE=0
BUILD=1
TREE=""
KEEP=0
GEN_ARGS=()
LIMIT_MS=150
LIMIT_RATIO_X100=300

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) REPS="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --core) CORE="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --tree) TREE="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --) shift; GEN_ARGS=("$@"); break ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument $1" >&2; usage ;;
  esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ && "$WARMUP" =~ ^[0-9]+$ && "$CORE" =~ ^[0-9]+$ ]] || { echo "run.sh: --reps/--warmup/--core need numbers" >&2; exit 2; }

SRC="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$SRC/build-bench/src/perfgap"
GEN="$SRC/build-bench/bench/perfgap-bench-gen"
OUT="$SRC/bench/out"
mkdir -p "$OUT"

if [[ $BUILD -eq 1 ]]; then
  (cd "$SRC" && cmake --preset bench >/dev/null && cmake --build --preset bench) >&2
fi
[[ -x "$BIN" && -x "$GEN" ]] || { echo "run.sh: $BIN or $GEN missing: build the bench preset" >&2; exit 2; }
command -v taskset >/dev/null || { echo "run.sh: taskset not found (util-linux)" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgap-bench.XXXXXX")"
cleanup() { if [[ $KEEP -eq 0 ]]; then rm -rf "$WORK"; else echo "kept: $WORK" >&2; fi; }
trap cleanup EXIT
if [[ -z "$TREE" ]]; then
  TREE="$WORK/tree"
  "$GEN" "$TREE" "${GEN_ARGS[@]}" | tee "$WORK/gen.txt" >&2
else
  TREE="$(cd "$TREE" && pwd)"
  echo "$TREE: existing tree" > "$WORK/gen.txt"
fi
REPORT="$WORK/report.json"
TREE_PARENT="$(dirname "$TREE")"
TREE_NAME="$(basename "$TREE")"

# Both commands run under `taskset -c CORE` (threads and pipeline members inherit it), so
# tar shares the core with wc as perfgap's threads share it with each other.
read_cmd() { taskset -c "$CORE" sh -c 'tar -C "$1" -cf - "$2" | wc -c' sh "$TREE_PARENT" "$TREE_NAME" > "$WORK/tar.bytes"; }
check_cmd() {
  local rc=0
  taskset -c "$CORE" "$BIN" check --root "$TREE" --format json --output "$REPORT" || rc=$?
  # 0 pass/warn, 1 a failing check: both are a completed run; anything else is not.
  if [[ $rc -gt 1 ]]; then echo "run.sh: perfgap check exited $rc" >&2; exit 2; fi
}

# Wall clock of one command in microseconds, into T (no subshell, so errors stop the script).
# Warm-up (page cache, dynamic loader), and a check that tar really read the whole tree.
tar -C "$TREE_PARENT" -cf - "$TREE_NAME" | wc -c > "$WORK/tar.bytes"   # pipefail: tar errors stop us
for ((i = 0; i < WARMUP; ++i)); do read_cmd; check_cmd; done
[[ -s "$REPORT" ]] || { echo "run.sh: perfgap wrote no report" >&2; exit 2; }

TAR_US=(); CHECK_US=(); NOOP_US=()
for ((i = 0; i < REPS; ++i)); do
  # Alternate which goes first so neither always runs right after the other.
  if (( i % 2 == 0 )); then
    time_us read_cmd; TAR_US+=("$T"); time_us check_cmd; CHECK_US+=("$T")
  else
    time_us check_cmd; CHECK_US+=("$T"); time_us read_cmd; TAR_US+=("$T")
  fi
  time_us taskset -c "$CORE" true; NOOP_US+=("$T")   # the timer's and taskset's own cost
done

x100() { printf '%d.%02d' $(( $1 / 100 )) $(( $1 % 100 )); }          # 123 -> "1.23"

stats "${TAR_US[@]}"; TAR_MIN=$MIN; TAR_MED=$MED
stats "${CHECK_US[@]}"; CHECK_MIN=$MIN; CHECK_MED=$MED
stats "${NOOP_US[@]}"; NOOP_MED=$MED
RATIO_MED=$(( CHECK_MED * 100 / (TAR_MED > 0 ? TAR_MED : 1) ))
RATIO_MIN=$(( CHECK_MIN * 100 / (TAR_MIN > 0 ? TAR_MIN : 1) ))

FILES=$(find "$TREE" -type f | wc -l)
LINKS=$(find "$TREE" -type l | wc -l)
MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)
[[ -n "$MODEL" ]] || MODEL=$(uname -m)

VERDICT=ok
STATUS=0
if (( CHECK_MED > LIMIT_MS * 1000 )); then VERDICT="FAIL: check median above ${LIMIT_MS} ms"; STATUS=1; fi
if (( RATIO_MED > LIMIT_RATIO_X100 )); then VERDICT="FAIL: check median above $(x100 $LIMIT_RATIO_X100)x the tar read"; STATUS=1; fi

SUMMARY="$OUT/summary-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
  echo "perfgap check --root benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine:   $MODEL, $(nproc --all) CPUs online, kernel $(uname -r); pinned to CPU $CORE"
  echo "tree:      $(cat "$WORK/gen.txt")"
  echo "           $FILES files, $LINKS links; tar stream $(cat "$WORK/tar.bytes") bytes"
  echo "runs:      $WARMUP warm-up, $REPS timed of each, interleaved (wall clock, date +%s%N)"
  echo
  printf '%-44s %10s %10s\n' "" "min ms" "median ms"
  printf '%-44s %10s %10s\n' "read:  tar cf - TREE | wc -c" "$(ms $TAR_MIN)" "$(ms $TAR_MED)"
  printf '%-44s %10s %10s\n' "check: perfgap check --root TREE --format json" "$(ms $CHECK_MIN)" "$(ms $CHECK_MED)"
  printf '%-44s %10s %10s\n' "ratio check / read" "$(x100 $RATIO_MIN)" "$(x100 $RATIO_MED)"
  echo "(each figure includes about $(ms $NOOP_MED) ms of timer and taskset start-up: \`taskset -c $CORE true\` median; not subtracted)"
  echo
  echo "targets:   check median <= ${LIMIT_MS} ms and <= $(x100 $LIMIT_RATIO_X100)x read median: $VERDICT"
  echo "raw us:    read  ${TAR_US[*]}"
  echo "           check ${CHECK_US[*]}"
} | tee "$SUMMARY"
cp "$REPORT" "$OUT/last-report.json"
exit $STATUS
