#!/usr/bin/env bash
# Times what the hardware checks (issue 31) add to a live check: the RDMA counters of 8
# ConnectX ports read at both ends of the sample window, and a 1 MiB kernel-log tail parsed into
# events, in-process (perfgap-bench-hw), on inputs perfgap-bench-gen-hw writes. Target: the
# median at most 5 ms (exit 1 otherwise, 2 on a setup error).
#
#   bench/hw/run.sh [--build DIR] [--reps N] [-- GENERATOR OPTIONS]
#
# DIR is a build directory configured with PERFGAP_BENCH=ON (default build-bench, the `bench`
# preset); the two tools are built there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BUILD=build-bench
REPS=21
GEN=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --) shift; GEN=("$@"); break ;;
    *) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
if [[ $BUILD == build-bench && ! -f build-bench/CMakeCache.txt ]]; then cmake --preset bench >/dev/null; fi
cmake --build "$BUILD" --target perfgap-bench-gen-hw perfgap-bench-hw >/dev/null || exit 2
tree=$(mktemp -d "${TMPDIR:-/tmp}/perfgap-hw.XXXXXX")
trap 'rm -rf "$tree"' EXIT
"$BUILD/bench/perfgap-bench-gen-hw" "$tree" "${GEN[@]}" || exit 2
grep -m1 "model name" /proc/cpuinfo || true
echo "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), kernel $(uname -r)"
"$BUILD/bench/perfgap-bench-hw" "$tree" "$REPS"
