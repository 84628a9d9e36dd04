#!/usr/bin/env bash
# Times `perfgap analyze nsys` on a generated 8-GPU Nsight Systems export of 2.2 M kernels
# (every kernel with its launch call: 4.4 M rows), pinned to one core, best of N runs.
#
#   bench/profiles/run.sh [--reps N] [--core C] [--no-build] [--build-dir DIR] [--kernels-per-gpu N] [--keep]
#   bench/profiles/run.sh --kineto [--kineto-kernels N] [same options]
#
# Targets (issue 16): >= 2 M kernel rows/s and the 2.2 M-kernel profile in <= 1.5 s.
# --build-dir build uses the default preset's binaries (RelWithDebInfo) instead of build-bench;
# the rows/s target is judged on the reader's phase time (perfgap-bench-time-profile, bench preset),
# else on the whole process (stricter).
# --kineto: instead, one generated Kineto trace of N kernels (default 1 M, each with its
# cuda_runtime call, ProfilerStep#N every 2000 kernels) side by side: the whole `perfgap analyze
# kineto` (and of the trace gzipped), the bare SAX parse with the reader's RapidJSON and flags
# (perfgap-bench-time-profile kineto-sax), RapidJSON's Reader and json_scan's scanner as the
# reader runs them (kineto-stream, kineto-scan), the DOM parse (kineto-parse), python3's json.load,
# and HTA-style pandas (hta_style.py, when /usr/bin/python3 has pandas); prints the ratios.
# Exit 0 unless setup fails.
# Exit status: 0 when both hold, 1 when one does not, 2 on a usage or setup error.
set -euo pipefail

REPS=5
CORE=0
BUILD=1
BDIR=build-bench
PER_GPU=275000
KEEP=0
KINETO=0
KINETO_KERNELS=1000000
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) REPS="$2"; shift 2 ;;
    --core) CORE="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --build-dir) BDIR="$2"; BUILD=0; shift 2 ;;
    --kernels-per-gpu) PER_GPU="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --kineto) KINETO=1; shift ;;
    --kineto-kernels) KINETO_KERNELS="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument $1" >&2; usage ;;
  esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ && "$CORE" =~ ^[0-9]+$ && "$PER_GPU" =~ ^[1-9][0-9]*$ && "$KINETO_KERNELS" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: numbers needed" >&2; exit 2; }

SRC="$(cd "$(dirname "$0")/../.." && pwd)"
BIN="$SRC/$BDIR/src/perfgap"
GEN="$SRC/$BDIR/bench/perfgap-bench-gen-profile"
[[ -x "$GEN" ]] || GEN="$SRC/$BDIR/tools/perfgap-gen-profile"
if [[ $BUILD -eq 1 ]]; then
  (cd "$SRC" && cmake --preset bench >/dev/null && cmake --build --preset bench --target perfgap perfgap-bench-gen-profile) >&2
fi
[[ -x "$BIN" && -x "$GEN" ]] || { echo "run.sh: $BIN or $GEN missing: build the bench preset" >&2; exit 2; }
command -v taskset >/dev/null || { echo "run.sh: taskset not found (util-linux)" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/perfgap-bench-profiles.XXXXXX")"
cleanup() { if [[ $KEEP -eq 0 ]]; then rm -rf "$WORK"; else echo "kept: $WORK" >&2; fi; }
trap cleanup EXIT

now() { date +%s%N; }
TIMER="$SRC/$BDIR/bench/perfgap-bench-time-profile"

# Best wall ms of REPS runs of a command (after one warm-up), pinned to CORE; peak RSS (MiB) of the last.
best_ms() {
  local best="" t ms
  for ((i = 0; i < REPS + 1; i++)); do
    t=$(now)
    /usr/bin/time -f %M -o "$WORK/rss" taskset -c "$CORE" "$@" > /dev/null || [[ $? -eq 1 ]]
    ms=$(( ($(now) - t) / 1000000 ))
    (( i == 0 )) && continue
    [[ -z "$best" || $ms -lt $best ]] && best=$ms
  done
  echo "$best $(( $(cat "$WORK/rss") / 1024 ))"
}

if [[ $KINETO -eq 1 ]]; then
  PY=/usr/bin/python3
  "$GEN" "large-steps:1:$KINETO_KERNELS" kineto "$WORK/trace.json" 0
  mb=$(du -m "$WORK/trace.json" | cut -f1)
  echo "Kineto trace: $KINETO_KERNELS kernels + $KINETO_KERNELS cuda_runtime events, $mb MiB (best of $REPS, core $CORE)"
  cat "$WORK/trace.json" > /dev/null
  read -r pg pg_rss < <(best_ms "$BIN" analyze kineto "$WORK/trace.json" --format json --output "$WORK/report.json")
  echo "perfgap analyze kineto (whole process):  $pg ms, peak $pg_rss MiB"
  gzip -1 -c "$WORK/trace.json" > "$WORK/trace.json.gz"
  read -r gz gz_rss < <(best_ms "$BIN" analyze kineto "$WORK/trace.json.gz" --format json --output "$WORK/report.json")
  echo "perfgap analyze kineto, .json.gz ($(du -m "$WORK/trace.json.gz" | cut -f1) MiB): $gz ms, peak $gz_rss MiB"
  parse="" dom=""
  if [[ -x "$TIMER" ]]; then
    line=$(taskset -c "$CORE" "$TIMER" kineto-sax "$WORK/trace.json" "$REPS")
    parse=$(sed -n 's/.* \([0-9]*\) ms (.*/\1/p' <<< "$line")
    echo "RapidJSON SAX parse only (in-process):   $parse ms  [$line]"
    echo "RapidJSON Reader as the reader ran it:   $(taskset -c "$CORE" "$TIMER" kineto-stream "$WORK/trace.json" "$REPS")"
    echo "json_scan scanner (the reader's parse):  $(taskset -c "$CORE" "$TIMER" kineto-scan "$WORK/trace.json" "$REPS")"
    line=$(taskset -c "$CORE" "$TIMER" kineto-parse "$WORK/trace.json" "$REPS")
    dom=$(sed -n 's/.* \([0-9]*\) ms (.*/\1/p' <<< "$line")
    echo "RapidJSON DOM parse only (in-process):   $dom ms  [$line]"
    echo "phases: $(taskset -c "$CORE" "$TIMER" kineto "$WORK/trace.json" "$REPS")"
  fi
  read -r py py_rss < <(best_ms "$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' "$WORK/trace.json")
  echo "python3 json.load:                       $py ms, peak $py_rss MiB"
  hta=""
  if "$PY" -c 'import pandas' 2> /dev/null; then
    read -r hta hta_rss < <(best_ms "$PY" "$SRC/bench/profiles/hta_style.py" "$WORK/trace.json")
    echo "HTA-style pandas (hta_style.py):         $hta ms, peak $hta_rss MiB: $("$PY" "$SRC/bench/profiles/hta_style.py" "$WORK/trace.json")"
  else
    echo "HTA-style pandas: skipped ($PY has no pandas: apt-get install python3-pandas)"
  fi
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / (b > 0 ? b : 1) }'; }
  [[ -n "$parse" ]] && echo "perfgap / RapidJSON SAX parse: $(ratio "$pg" "$parse")x"
  [[ -n "$dom" ]] && echo "perfgap / RapidJSON DOM parse: $(ratio "$pg" "$dom")x"
  echo "python json.load / perfgap: $(ratio "$py" "$pg")x"
  [[ -n "$hta" ]] && echo "HTA-style pandas / perfgap: $(ratio "$hta" "$pg")x"
  exit 0
fi

t0=$(now)
"$GEN" "large:8:$PER_GPU" nsys "$WORK/large.sqlite"
echo "generated $((8 * PER_GPU)) kernels in $(( ($(now) - t0) / 1000000 )) ms: $(du -m "$WORK/large.sqlite" | cut -f1) MB" >&2
cat "$WORK/large.sqlite" > /dev/null

best=""
for ((i = 0; i < REPS + 1; i++)); do
  t=$(now)
  taskset -c "$CORE" "$BIN" analyze nsys "$WORK/large.sqlite" --format json --output "$WORK/report.json" || [[ $? -eq 1 ]]
  ms=$(( ($(now) - t) / 1000000 ))
  (( i == 0 )) && continue  # warm-up
  [[ -z "$best" || $ms -lt $best ]] && best=$ms
done
kernels=$((8 * PER_GPU))
rate=$(( kernels * 1000 / (best > 0 ? best : 1) ))
echo "analyze nsys: $kernels kernels (8 GPUs), best of $REPS: $best ms for the whole process ($rate kernels/s end to end)"
# The reader's own rate (SQLite rows into the model, joined) from the phase timer when built
# (the bench preset); else the end-to-end rate, which is stricter.
if [[ -x "$TIMER" ]]; then
  line=$(taskset -c "$CORE" "$TIMER" nsys "$WORK/large.sqlite" "$REPS")
  echo "phases: $line"
  rate=$(sed -n 's/.*(\([0-9.]*\) M kernel rows\/s).*/\1/p' <<< "$line" | awk '{printf "%d", $1 * 1000000}')
fi
rc=0
(( rate >= 2000000 )) || { echo "below 2 M kernel rows/s ($rate)" >&2; rc=1; }
(( kernels < 2200000 || best <= 1500 )) || { echo "2.2 M kernels took more than 1.5 s" >&2; rc=1; }
exit $rc
