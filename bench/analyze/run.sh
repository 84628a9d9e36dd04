#!/usr/bin/env bash
# Times `perfgap analyze` on large generated inputs, pinned to one core, and reports MB/s:
#   perf (perf script text with -g call chains, ~200 MB), nccl-tests (~100 MB), nccl-log (~100 MB).
# When `perf record -e cpu-clock -g` works here, it also records a short real profile and
# times `perf script | perfgap analyze perf` against `perf report --stdio` on the same
# recording, side by side in the same run.
#
#   bench/analyze/run.sh [--reps N] [--core C] [--no-build] [--perf-mb N] [--nccl-mb N] [--keep]
#
# Targets (issue 5): perf script >= 300 MB/s, nccl-tests and nccl-log >= 100 MB/s (best of
# N runs). Exit status: 0 when all hold, 1 when one does not, 2 on a usage or setup error.
set -euo pipefail

REPS=5
CORE=0
BUILD=1
PERF_MB=200
NCCL_MB=100
KEEP=0
usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) REPS="$2"; shift 2 ;;
    --core) CORE="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --perf-mb) PERF_MB="$2"; shift 2 ;;
    --nccl-mb) NCCL_MB="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument $1" >&2; usage ;;
  esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ && "$CORE" =~ ^[0-9]+$ ]] || { echo "run.sh: --reps/--core need numbers" >&2; exit 2; }

SRC="$(cd "$(dirname "$0")/../.." && pwd)"
BIN="$SRC/build-bench/src/perfgap"
GEN="$SRC/build-bench/bench/perfgap-bench-gen-analyze"
OUT="$SRC/bench/out"
mkdir -p "$OUT"
if [[ $BUILD -eq 1 ]]; then
  (cd "$SRC" && cmake --preset bench >/dev/null && cmake --build --preset bench) >&2
fi
[[ -x "$BIN" && -x "$GEN" ]] || { echo "run.sh: $BIN or $GEN missing: build the bench preset" >&2; exit 2; }
command -v taskset >/dev/null || { echo "run.sh: taskset not found (util-linux)" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgap-bench-analyze.XXXXXX")"
cleanup() { if [[ $KEEP -eq 0 ]]; then rm -rf "$WORK"; else echo "kept: $WORK" >&2; fi; }
trap cleanup EXIT

now() { date +%s%N; }
# ms of one run of "$@", pinned; the command's own status must be 0 or 1 (findings).
time_ms() {
  local s e rc
  s=$(now)
  set +e
  taskset -c "$CORE" "$@" >/dev/null 2>"$WORK/err"
  rc=$?
  set -e
  e=$(now)
  if [[ $rc -gt 1 ]]; then echo "run.sh: '$*' exited $rc: $(head -c 400 "$WORK/err")" >&2; exit 2; fi
  echo $(( (e - s) / 1000 ))  # microseconds
}
mbps() { awk -v b="$1" -v us="$2" 'BEGIN { printf "%.1f", b / us }'; }  # bytes per us = MB/s

SUMMARY="$OUT/analyze-summary-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
  echo "perfgap analyze throughput, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) online, kernel $(uname -r)"
  echo "pinned to core $CORE, best and median of $REPS runs (first run of each discarded as warm-up)"
} | tee "$SUMMARY"

status=0
declare -A TARGET=([perf]=300 [nccl-tests]=100 [nccl-log]=100)
declare -A GENKIND=([perf]=perf-script [nccl-tests]=nccl-tests [nccl-log]=nccl-log)
for kind in perf nccl-tests nccl-log; do
  f="$WORK/${GENKIND[$kind]}.txt"
  mb=$NCCL_MB; [[ $kind == perf ]] && mb=$PERF_MB
  "$GEN" "${GENKIND[$kind]}" "$f" --mb "$mb" >&2
  bytes=$(stat -c %s "$f")
  cat "$f" > /dev/null  # page cache
  time_ms "$BIN" analyze "$kind" "$f" --format json --output "$WORK/report.json" >/dev/null  # warm-up
  runs=()
  for ((i = 0; i < REPS; i++)); do runs+=("$(time_ms "$BIN" analyze "$kind" "$f" --format json --output "$WORK/report.json")"); done
  sorted=($(printf '%s\n' "${runs[@]}" | sort -n))
  best=${sorted[0]}; med=${sorted[$((REPS / 2))]}
  best_mbps=$(mbps "$bytes" "$best"); med_mbps=$(mbps "$bytes" "$med")
  verdict=ok
  awk -v a="$best_mbps" -v t="${TARGET[$kind]}" 'BEGIN { exit !(a >= t) }' || { verdict="MISSED"; status=1; }
  printf '%-10s %7.1f MB  best %8.1f ms = %6.1f MB/s  median %8.1f ms = %6.1f MB/s  target >= %s MB/s: %s\n' \
    "$kind" "$(awk -v b="$bytes" 'BEGIN{print b/1e6}')" "$(awk -v u="$best" 'BEGIN{print u/1000}')" "$best_mbps" \
    "$(awk -v u="$med" 'BEGIN{print u/1000}')" "$med_mbps" "${TARGET[$kind]}" "$verdict" | tee -a "$SUMMARY"
  [[ $kind == perf ]] || rm -f "$f"
done

# Real recording: perf script + perfgap vs perf report, same perf.data.
if command -v perf >/dev/null && perf record -e cpu-clock -g -o "$WORK/probe.data" -- sleep 0.1 >/dev/null 2>&1; then
  # Something with deep user and kernel stacks for a few seconds: perfgap analyzing the big file.
  perf record -q -e cpu-clock -g -F 4000 -o "$WORK/perf.data" -- \
    sh -c "for i in 1 2 3; do '$BIN' analyze perf '$WORK/perf-script.txt' --format json --output '$WORK/r.json' || true; done; \
           find /usr -xdev -type f -name '*.so*' -exec cat {} + > /dev/null 2>&1 || true" >/dev/null 2>&1
  perf script -i "$WORK/perf.data" > "$WORK/rec.txt" 2>/dev/null
  rec_bytes=$(stat -c %s "$WORK/rec.txt")
  samples=$(grep -c 'cpu-clock' "$WORK/rec.txt" || true)
  echo "real recording: perf record -e cpu-clock -g ($samples samples, $(awk -v b="$(stat -c %s "$WORK/perf.data")" 'BEGIN{printf "%.1f", b/1e6}') MB perf.data, perf script text $(awk -v b="$rec_bytes" 'BEGIN{printf "%.1f", b/1e6}') MB)" | tee -a "$SUMMARY"
  pr=(); ps_=(); pa=(); pipe=()
  for ((i = 0; i <= REPS; i++)); do
    a=$(time_ms perf report -i "$WORK/perf.data" --stdio)
    b=$(time_ms perf script -i "$WORK/perf.data")
    c=$(time_ms "$BIN" analyze perf "$WORK/rec.txt" --format json --output "$WORK/r.json")
    d=$(time_ms sh -c "perf script -i '$WORK/perf.data' > '$WORK/rec2.txt' 2>/dev/null && '$BIN' analyze perf '$WORK/rec2.txt' --format json --output '$WORK/r.json'; [ \$? -le 1 ]")
    [[ $i -eq 0 ]] && continue
    pr+=("$a"); ps_+=("$b"); pa+=("$c"); pipe+=("$d")
  done
  med() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {printf "%.1f", v[int((NR+1)/2)]/1000}'; }
  printf '  perf report --stdio                       median %8s ms\n' "$(med "${pr[@]}")" | tee -a "$SUMMARY"
  printf '  perf script (to /dev/null)               median %8s ms\n' "$(med "${ps_[@]}")" | tee -a "$SUMMARY"
  printf '  perfgap analyze perf (on that text)       median %8s ms\n' "$(med "${pa[@]}")" | tee -a "$SUMMARY"
  printf '  perf script + perfgap analyze perf        median %8s ms\n' "$(med "${pipe[@]}")" | tee -a "$SUMMARY"
  taskset -c "$CORE" "$BIN" analyze perf "$WORK/rec.txt" > "$WORK/rec-report.txt" 2>&1 || true
  head -1 "$WORK/rec-report.txt" | sed 's/^/  perfgap: /' | tee -a "$SUMMARY"
else
  echo "real recording: skipped (perf missing or 'perf record -e cpu-clock -g' does not work here)" | tee -a "$SUMMARY"
fi
echo "summary: $SUMMARY" >&2
exit $status
