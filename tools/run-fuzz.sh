#!/usr/bin/env bash
# Builds the libFuzzer targets (cmake preset `fuzz`, build-fuzz/: one executable, perfgap-fuzz,
# with a link build-fuzz/fuzz/fuzz_<target> to it per target) and runs each for
# SECONDS_PER_TARGET seconds (default 8) on a scratch copy of its seed corpus (fuzz/corpus/),
# with its dictionary when there is one (fuzz/<target>.dict), as many at once as there are
# CPUs. Each target first runs its whole seed corpus; 0 seconds runs only that (libFuzzer's
# -runs=0: the test command's smoke run). Exits non-zero when any target crashes, leaks, times
# out, or cannot run; the reproducers are kept under build-fuzz/fuzz-artifacts/.
#
#   tools/run-fuzz.sh [SECONDS_PER_TARGET]
#   tools/run-fuzz.sh 0                                 # the seed corpora only (tools/test.sh's)
#   FUZZ_TARGETS="cpulist config" tools/run-fuzz.sh 30   # a subset
#   FUZZ_JOBS=1 tools/run-fuzz.sh                       # one at a time
#   FUZZ_SEED=1 tools/run-fuzz.sh                       # a fixed seed (the test command's default)
#   FUZZ_OPT=-O0 tools/run-fuzz.sh 0                    # build at -O0 (the test command's): faster
#                                                       # to build, slower to fuzz; default -O1
set -euo pipefail

secs=${1:-8}
[[ $secs =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS_PER_TARGET]   (0: the seed corpora only)" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# Every fuzz/fuzz_<name>.cpp is a target: a new parser's target runs without editing this.
all_targets=()
for src in fuzz/fuzz_*.cpp; do
  name=${src#fuzz/fuzz_}
  all_targets+=("${name%.cpp}")
done
read -r -a targets <<< "${FUZZ_TARGETS:-${all_targets[*]}}"
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}

start=$SECONDS
echo "== configure + build (preset fuzz)"
# A fresh build directory is a unity build (the library in about half the time); an existing
# one keeps its setting (PERFGAP_UNITY=ON/OFF forces either), as in tools/test.sh.
unity=()
if [ -n "${PERFGAP_UNITY:-}" ]; then unity=(-DCMAKE_UNITY_BUILD="$PERFGAP_UNITY")
elif [ ! -f build-fuzz/CMakeCache.txt ]; then unity=(-DCMAKE_UNITY_BUILD=ON); fi
# FUZZ_OPT=-O0|-O1 sets the build's optimisation (fuzz/CMakeLists.txt, PERFGAP_FUZZ_OPT); the
# build directory keeps it until told otherwise.
[ -z "${FUZZ_OPT:-}" ] || unity+=(-DPERFGAP_FUZZ_OPT="$FUZZ_OPT")
cmake --preset fuzz "${unity[@]}" > /dev/null
cmake --build --preset fuzz
if (( secs )); then
  echo "== built in $((SECONDS - start))s; fuzzing ${#targets[@]} targets x ${secs}s, $jobs at a time"
  budget=(-max_total_time="$secs")
else
  echo "== built in $((SECONDS - start))s; running the seed corpora of ${#targets[@]} targets, $jobs at a time"
  budget=(-runs=0)  # the corpus is read and run, then libFuzzer stops
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/perfgap-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
artifacts="$root/build-fuzz/fuzz-artifacts"
mkdir -p "$artifacts"

run_one() {  # target -> writes $work/<target>.log and $work/<target>.rc
  local t=$1 bin="$root/build-fuzz/fuzz/fuzz_$1"
  mkdir -p "$work/corpus/$t"
  cp -R "$root/fuzz/corpus/$t/." "$work/corpus/$t/" 2>/dev/null || true
  local rc=0 dict=()
  [[ -f $root/fuzz/$t.dict ]] && dict=(-dict="$root/fuzz/$t.dict")
  "$bin" "${budget[@]}" -rss_limit_mb=2048 -timeout=5 -print_final_stats=1 "${dict[@]}" ${FUZZ_SEED:+-seed="$FUZZ_SEED"} \
         -artifact_prefix="$artifacts/$t-" "$work/corpus/$t" > "$work/$t.log" 2>&1 || rc=$?
  echo "$rc" > "$work/$t.rc"
}

running=0
for t in "${targets[@]}"; do
  if [[ ! -x build-fuzz/fuzz/fuzz_$t ]]; then
    echo "no fuzz target '$t'" > "$work/$t.log"; echo 127 > "$work/$t.rc"; continue
  fi
  run_one "$t" &
  running=$((running + 1))
  if (( running >= jobs )); then wait -n || true; running=$((running - 1)); fi
done
wait || true

failed=()
printf '%-14s %10s %8s  %s\n' target execs exec/s result
for t in "${targets[@]}"; do
  rc=$(cat "$work/$t.rc" 2>/dev/null || echo 125)
  log="$work/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [[ $rc == 0 ]]; then
    printf '%-14s %10s %8s  ok\n' "$t" "${execs:-?}" "${rate:-?}"
  else
    printf '%-14s %10s %8s  FAILED (exit %s)\n' "$t" "${execs:-?}" "${rate:-?}" "$rc"
    failed+=("$t")
  fi
done

for t in "${failed[@]}"; do
  echo
  echo "===== $t: last lines of the fuzzer log"
  grep -v -E '^#[0-9]+\s+(NEW|REDUCE|pulse|INITED|RELOAD)' "$work/$t.log" | tail -40
done
echo
echo "== done in $((SECONDS - start))s"
if (( ${#failed[@]} )); then
  echo "FAILED: ${failed[*]} (reproducers: $artifacts; rerun one: build-fuzz/fuzz/fuzz_<target> FILE)"
  exit 1
fi
