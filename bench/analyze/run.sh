#!/usr/bin/env bash
# Times `perfgap analyze` on large generated inputs, pinned to one core, and reports MB/s
# beside `grep -c .` on the same file and the peak RSS (of the file and of the same input piped
# to `-`): perf (perf script text with -g call chains, ~200 MB), nccl-tests, nccl-log and
# steps (a Megatron-LM log), ~100 MB each.
# When `perf record -e cpu-clock -g` works here, it also records a short real profile and
# times `perf script | perfgap analyze perf` against `perf report --stdio` on the same
# recording, side by side in the same run. Last, bench/analyze/perf_data.sh times the native
# perf.data reader on a generated recording (--perf-mb) beside `perf report --stdio` (target
# >= 500 MB/s on one core).
#
#   bench/analyze/run.sh [--reps N] [--core C] [--no-build] [--perf-mb N] [--nccl-mb N] [--keep]
#   (--nccl-mb sizes the nccl-tests, nccl-log and steps inputs)
#
# Targets (issue 19): perf script >= 700 MB/s, nccl-tests, nccl-log and steps >= 400 MB/s,
# each within 5x of `grep -c` for the lines it reads (best of N runs). Exit status: 0 when all hold, 1 when one
# does not, 2 on a usage or setup error.
set -euo pipefail

REPS=5
CORE=0
BUILD=1
PERF_MB=200
NCCL_MB=100
KEEP=0
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
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
# Issue 19 targets, best of N on one core: MB/s, and at most 5x the time of `grep -c` for
# the lines the analyzer reads (GREP_FOR: perf script's sample headers, the result rows'
# type, NCCL INFO lines, Megatron's iteration lines), the grep a shell pipeline would start
# from. `grep -c .` (every non-empty line) is printed beside it. grep writes its count to a
# file: GNU grep stops at the first match when its output is /dev/null.
declare -A TARGET=([perf]=700 [nccl-tests]=400 [nccl-log]=400 [steps]=400)
declare -A GREP_FOR=([perf]=cpu-clock [nccl-tests]=float [nccl-log]='NCCL INFO' [steps]='elapsed time per iteration')
declare -A GENKIND=([perf]=perf-script [nccl-tests]=nccl-tests [nccl-log]=nccl-log [steps]=steps)
GREP_FACTOR=5
TIME_BIN=$(command -v /usr/bin/time || true)  # GNU time, for the peak RSS (optional)
rss_kb() {  # peak RSS in KB of "$@" (one run), or "-" without GNU time
  if [[ -z "$TIME_BIN" ]]; then echo "-"; return; fi
  "$TIME_BIN" -f '%M' -o "$WORK/rss" taskset -c "$CORE" "$@" >/dev/null 2>&1 || true
  tail -1 "$WORK/rss"
}
best_of() {  # best and median microseconds of REPS runs of "$@", after one warm-up: "BEST MED"
  local runs=() i sorted
  time_ms "$@" >/dev/null
  for ((i = 0; i < REPS; i++)); do runs+=("$(time_ms "$@")"); done
  mapfile -t sorted < <(printf '%s\n' "${runs[@]}" | sort -n)
  echo "${sorted[0]} ${sorted[$((REPS / 2))]}"
}
for kind in perf nccl-tests nccl-log steps; do
  f="$WORK/${GENKIND[$kind]}.txt"
  mb=$NCCL_MB; [[ $kind == perf ]] && mb=$PERF_MB
  "$GEN" "${GENKIND[$kind]}" "$f" --mb "$mb" >&2
  bytes=$(stat -c %s "$f")
  cat "$f" > /dev/null  # page cache
  read -r best med < <(best_of "$BIN" analyze "$kind" "$f" --format json --output "$WORK/report.json")
  read -r gbest _ < <(best_of sh -c 'grep -c -- "$1" "$2" > "$3"' sh "${GREP_FOR[$kind]}" "$f" "$WORK/grep.out")
  read -r dbest _ < <(best_of sh -c 'grep -c . "$1" > "$2"' sh "$f" "$WORK/grep.out")
  best_mbps=$(mbps "$bytes" "$best"); med_mbps=$(mbps "$bytes" "$med")
  ratio=$(awk -v a="$best" -v g="$gbest" 'BEGIN { printf "%.1f", a / g }')
  dratio=$(awk -v a="$best" -v g="$dbest" 'BEGIN { printf "%.1f", a / g }')
  rss=$(rss_kb "$BIN" analyze "$kind" "$f" --format json --output "$WORK/report.json")
  rss_pipe=$(rss_kb sh -c "cat '$f' | '$BIN' analyze $kind - --format json --output '$WORK/report.json'; [ \$? -le 1 ]")
  verdict=ok
  awk -v a="$best_mbps" -v t="${TARGET[$kind]}" 'BEGIN { exit !(a >= t) }' || { verdict="MISSED (MB/s)"; status=1; }
  awk -v r="$ratio" -v t="$GREP_FACTOR" 'BEGIN { exit !(r <= t) }' || { verdict="MISSED (vs grep)"; status=1; }
  printf '%-10s %6.1f MB  best %7.1f ms = %6.1f MB/s  median %7.1f ms = %6.1f MB/s  RSS %s KB, piped %s KB\n' \
    "$kind" "$(awk -v b="$bytes" 'BEGIN{print b/1e6}')" "$(awk -v u="$best" 'BEGIN{print u/1000}')" "$best_mbps" \
    "$(awk -v u="$med" 'BEGIN{print u/1000}')" "$med_mbps" "$rss" "$rss_pipe" | tee -a "$SUMMARY"
  printf '%-10s grep -c '"'"'%s'"'"' %.1f ms (%sx), grep -c . %.1f ms (%sx)  target >= %s MB/s, <= %sx grep: %s\n' \
    "" "${GREP_FOR[$kind]}" "$(awk -v u="$gbest" 'BEGIN{print u/1000}')" "$ratio" "$(awk -v u="$dbest" 'BEGIN{print u/1000}')" "$dratio" \
    "${TARGET[$kind]}" "$GREP_FACTOR" "$verdict" | tee -a "$SUMMARY"
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
  pr=(); ps_=(); pa=(); pipe=(); pipe_g=()
  for ((i = 0; i <= REPS; i++)); do
    a=$(time_ms perf report -i "$WORK/perf.data" --stdio)
    b=$(time_ms perf script -i "$WORK/perf.data")
    c=$(time_ms "$BIN" analyze perf "$WORK/rec.txt" --format json --output "$WORK/r.json")
    d=$(time_ms sh -c "perf script -i '$WORK/perf.data' > '$WORK/rec2.txt' 2>/dev/null && '$BIN' analyze perf '$WORK/rec2.txt' --format json --output '$WORK/r.json'; [ \$? -le 1 ]")
    e=$(time_ms sh -c "perf script -G -i '$WORK/perf.data' 2>/dev/null | '$BIN' analyze perf - --format json --output '$WORK/r.json'; [ \$? -le 1 ]")
    [[ $i -eq 0 ]] && continue
    pr+=("$a"); ps_+=("$b"); pa+=("$c"); pipe+=("$d"); pipe_g+=("$e")
  done
  med() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {printf "%.1f", v[int((NR+1)/2)]/1000}'; }
  printf '  perf report --stdio                       median %8s ms\n' "$(med "${pr[@]}")" | tee -a "$SUMMARY"
  printf '  perf script (to /dev/null)               median %8s ms\n' "$(med "${ps_[@]}")" | tee -a "$SUMMARY"
  printf '  perfgap analyze perf (on that text)       median %8s ms\n' "$(med "${pa[@]}")" | tee -a "$SUMMARY"
  printf '  perf script + perfgap analyze perf        median %8s ms\n' "$(med "${pipe[@]}")" | tee -a "$SUMMARY"
  printf '  perf script -G | perfgap analyze perf -   median %8s ms\n' "$(med "${pipe_g[@]}")" | tee -a "$SUMMARY"
  taskset -c "$CORE" "$BIN" analyze perf "$WORK/rec.txt" > "$WORK/rec-report.txt" 2>&1 || true
  head -1 "$WORK/rec-report.txt" | sed 's/^/  perfgap: /' | tee -a "$SUMMARY"
else
  echo "real recording: skipped (perf missing or 'perf record -e cpu-clock -g' does not work here)" | tee -a "$SUMMARY"
fi
bash "$SRC/bench/analyze/perf_data.sh" "$SRC/build-bench" "$WORK" "$SUMMARY" --mb "$PERF_MB" --reps "$REPS" --core "$CORE" || status=1
echo "summary: $SUMMARY" >&2
exit $status
