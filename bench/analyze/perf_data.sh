#!/usr/bin/env bash
# perf.data decoding (issue 17): a generated recording with 16-frame call chains (~MB megabytes,
# tests/support/perf_data_gen.hpp, attr v7 so that perf 6.1 reads it too), timed on one core:
# the reader alone in-process (perfgap-bench-perf-data: best wall and thread-CPU time), the whole
# `perfgap analyze perf FILE --kallsyms K`, and `perf report --stdio --no-children --sort sym`
# with the same kallsyms on the same file, side by side in one run (perf when installed).
#
#   bench/analyze/perf_data.sh BUILD_DIR WORK_DIR SUMMARY [--mb N] [--reps N] [--core C]
#
# Target: the reader >= 500 MB/s (best CPU time) on one core. Exit 0 when it holds, 1 when not.
set -euo pipefail
B="$1"; WORK="$2"; SUMMARY="$3"; shift 3
MB=300; REPS=5; CORE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mb) MB="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --core) CORE="$2"; shift 2 ;;
    *) echo "perf_data.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
GEN="$B/bench/perfgap-bench-gen-perf-data"
DEC="$B/bench/perfgap-bench-perf-data"
BIN="$B/src/perfgap"
for x in "$GEN" "$DEC" "$BIN"; do [[ -x "$x" ]] || { echo "perf_data.sh: $x missing (bench preset)" >&2; exit 2; }; done
"$GEN" "large:$MB" "$WORK/large.data" "$WORK/large.kallsyms" v7
bytes=$(stat -c %s "$WORK/large.data")
echo "perf.data: $(awk -v b="$bytes" 'BEGIN{printf "%.1f", b/1e6}') MB generated (16-frame call chains, period-weighted)" | tee -a "$SUMMARY"
line=$(taskset -c "$CORE" "$DEC" "$WORK/large.data" "$WORK/large.kallsyms" "$REPS" | tail -1)
echo "  reader: $line" | tee -a "$SUMMARY"
cpu_mbps=$(sed -n 's/.*best CPU [0-9.]* s (\([0-9]*\) MB\/s).*/\1/p' <<<"$line")
status=0
awk -v a="${cpu_mbps:-0}" 'BEGIN { exit !(a >= 500) }' || { echo "  reader below 500 MB/s: MISSED" | tee -a "$SUMMARY"; status=1; }
t() {  # "wall user sys" of one pinned run
  /usr/bin/time -f "%e %U %S" -o "$WORK/time" taskset -c "$CORE" "$@" >/dev/null 2>"$WORK/err" || [[ $? -le 1 ]]
  tail -1 "$WORK/time"
}
best() { sort -n -k1,1 | head -1; }
pg=$(for i in $(seq "$REPS"); do t "$BIN" analyze perf "$WORK/large.data" --kallsyms "$WORK/large.kallsyms" --format json --output "$WORK/o.json"; done | best)
printf '  perfgap analyze perf (whole process)     best wall/user/sys %s s\n' "$pg" | tee -a "$SUMMARY"
if command -v perf >/dev/null; then
  pr=$(for i in $(seq "$REPS"); do HOME="$WORK" t perf report --stdio --no-children --sort sym -i "$WORK/large.data" --kallsyms "$WORK/large.kallsyms"; done | best)
  printf '  perf report --stdio --sort sym            best wall/user/sys %s s\n' "$pr" | tee -a "$SUMMARY"
else
  echo "  perf report: skipped (perf not installed)" | tee -a "$SUMMARY"
fi
exit $status
