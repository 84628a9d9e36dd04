#!/usr/bin/env bash
# Times `perfgap fleet` over N generated node reports (default 10,000, ~40 findings and
# ~26 KB each, as `perfgap check --format json` writes them), with the page cache warm, and
# compares the median with the target: <= 2 s for 10,000 reports (issue: fleet at scale).
# Also times `cat` of the same files (the floor: reading them) and the other formats once.
#
#   bench/fleet/run.sh [--nodes N] [--reps N] [--warmup N] [--build-dir DIR] [--no-build]
#                      [--dir DIR] [--keep] [--limit-ms MS]
#
# --build-dir: a build configured with -DPERFGAP_BENCH=ON (default build-bench, the `bench`
# preset). --dir: reuse reports already generated there. Exit status: 0 when the median
# meets the target, 1 when it does not, 2 on a usage or setup error.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

NODES=10000
REPS=7
WARMUP=2
BUILD=1
BUILD_DIR=""
DIR=""
KEEP=0
LIMIT_MS=2000

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nodes) NODES="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --build-dir) BUILD_DIR="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --dir) DIR="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --limit-ms) LIMIT_MS="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument $1" >&2; usage ;;
  esac
done
for v in "$NODES" "$REPS" "$LIMIT_MS"; do [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --nodes/--reps/--limit-ms need positive numbers" >&2; exit 2; }; done
[[ "$WARMUP" =~ ^[0-9]+$ ]] || { echo "run.sh: --warmup needs a number" >&2; exit 2; }

SRC="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ -z "$BUILD_DIR" ]]; then
  BUILD_DIR="$SRC/build-bench"
  if [[ $BUILD -eq 1 ]]; then (cd "$SRC" && cmake --preset bench >/dev/null && cmake --build --preset bench) >&2; fi
elif [[ $BUILD -eq 1 ]]; then
  cmake --build "$BUILD_DIR" --target perfgap perfgap-bench-gen-fleet >&2
fi
BIN="$BUILD_DIR/src/perfgap"
GEN="$BUILD_DIR/bench/perfgap-bench-gen-fleet"
[[ -x "$BIN" && -x "$GEN" ]] || { echo "run.sh: $BIN or $GEN missing: configure $BUILD_DIR with -DPERFGAP_BENCH=ON" >&2; exit 2; }
OUT="$SRC/bench/out"
mkdir -p "$OUT"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgap-fleet-bench.XXXXXX")"
cleanup() { if [[ $KEEP -eq 0 ]]; then rm -rf "$WORK"; else echo "kept: $WORK" >&2; fi; }
trap cleanup EXIT
if [[ -z "$DIR" ]]; then
  DIR="$WORK/reports"
  "$GEN" "$DIR" "$NODES" | tee "$WORK/gen.txt" >&2
else
  DIR="$(cd "$DIR" && pwd)"
  echo "$(find "$DIR" -maxdepth 1 -name '*.json' | wc -l) existing reports in $DIR" > "$WORK/gen.txt"
fi
BYTES=$(find "$DIR" -maxdepth 1 -name '*.json' -printf '%s\n' | awk '{s += $1} END {print s + 0}')

fleet_cmd() {
  local rc=0
  "$BIN" fleet "$DIR" --format "$1" --output "$WORK/fleet.$1" || rc=$?
  # 0 or 1 (the generated fleet has failing nodes) is a completed run.
  if [[ $rc -gt 1 ]]; then echo "run.sh: perfgap fleet exited $rc" >&2; exit 2; fi
}
read_cmd() { find "$DIR" -maxdepth 1 -name '*.json' -print0 | xargs -0 cat | wc -c > "$WORK/cat.bytes"; }
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for ((i = 0; i < WARMUP; ++i)); do read_cmd; fleet_cmd json; done
FLEET_US=(); READ_US=()
for ((i = 0; i < REPS; ++i)); do
  time_us fleet_cmd json; FLEET_US+=("$T")
  time_us read_cmd; READ_US+=("$T")
done
time_us fleet_cmd text; TEXT_US=$T
time_us fleet_cmd junit; JUNIT_US=$T
time_us fleet_cmd prometheus; PROM_US=$T

stats "${FLEET_US[@]}"; FLEET_MIN=$MIN; FLEET_MED=$MED
stats "${READ_US[@]}"; READ_MIN=$MIN; READ_MED=$MED

MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)
[[ -n "$MODEL" ]] || MODEL=$(uname -m)
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
VERDICT=ok; STATUS=0
if (( FLEET_MED > LIMIT_MS * 1000 )); then VERDICT="FAIL: median above ${LIMIT_MS} ms"; STATUS=1; fi

SUMMARY="$OUT/fleet-summary-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
  echo "perfgap fleet benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine:   $MODEL, $(nproc) CPUs usable, kernel $(uname -r); load average before/after: $LOAD_BEFORE / $LOAD_AFTER"
  echo "reports:   $(cat "$WORK/gen.txt"); $BYTES bytes"
  echo "runs:      $WARMUP warm-up, $REPS timed (wall clock, page cache warm)"
  echo
  printf '%-52s %10s %10s\n' "" "min ms" "median ms"
  printf '%-52s %10s %10s\n' "read:  cat of every report | wc -c" "$(ms $READ_MIN)" "$(ms $READ_MED)"
  printf '%-52s %10s %10s\n' "fleet: perfgap fleet DIR --format json --output F" "$(ms $FLEET_MIN)" "$(ms $FLEET_MED)"
  printf '%-52s %10s\n' "fleet --format text (once)" "$(ms $TEXT_US)"
  printf '%-52s %10s\n' "fleet --format junit (once; keeps titles/evidence)" "$(ms $JUNIT_US)"
  printf '%-52s %10s\n' "fleet --format prometheus (once)" "$(ms $PROM_US)"
  echo
  echo "target:    fleet median <= ${LIMIT_MS} ms: $VERDICT"
  echo "raw us:    fleet ${FLEET_US[*]}"
  echo "           read  ${READ_US[*]}"
} | tee "$SUMMARY"
exit $STATUS
