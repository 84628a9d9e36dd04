#!/usr/bin/env bash
# Times what the hardware checks (issue 31) add to a live check: the RDMA counters of 8
# ConnectX ports read at both ends of the sample window, and a 1 MiB kernel-log tail parsed into
# events, on inputs perfgap-bench-gen-hw writes.
#  1. In-process (perfgap-bench-hw): the tree path (--root, snapshots) and the live path (the
#     same files read as a live check reads them), thread CPU and wall time.
#  2. End to end (root with unshare only): `perfgap check --sample-ms 100` on the live system in
#     a private mount namespace, once with the 8 ports at /sys/class/infiniband and the 1 MiB log
#     at /dev/kmsg (a regular file bound over the device: read in 64 KiB blocks, where the real
#     device answers one record per read(); bench/README.md has that cost measured apart), once
#     with no ports and an empty log; the difference of the medians is what they add.
# Target: the end-to-end difference at most 5 ms (exit 1 otherwise, 2 on a setup error); without
# root, the in-process tree-path wall time stands for it.
#
#   bench/hw/run.sh [--build DIR] [--reps N] [-- GENERATOR OPTIONS]
#
# DIR is a build directory configured with PERFGAP_BENCH=ON (default build-bench, the `bench`
# preset); the tools and perfgap are built there.
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
    *) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
if [[ $BUILD == build-bench && ! -f build-bench/CMakeCache.txt ]]; then cmake --preset bench >/dev/null; fi
cmake --build "$BUILD" --target perfgap-bench-gen-hw perfgap-bench-hw perfgap >/dev/null || exit 2
tree=$(mktemp -d "${TMPDIR:-/tmp}/perfgap-hw.XXXXXX")
trap 'rm -rf "$tree"' EXIT
"$BUILD/bench/perfgap-bench-gen-hw" "$tree" "${GEN[@]}" || exit 2
grep -m1 "model name" /proc/cpuinfo || true
echo "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), kernel $(uname -r)"
"$BUILD/bench/perfgap-bench-hw" "$tree" "$REPS" || inproc=$?
inproc=${inproc:-0}
if [[ $inproc == 2 ]]; then exit 2; fi

if [[ $(id -u) != 0 ]] || ! command -v unshare >/dev/null; then
  echo "end to end: not run (needs root and unshare for a private mount namespace)"
  exit "$inproc"
fi
source bench/lib.sh
perfgap=$(realpath "$BUILD/src/perfgap")
empty=$(mktemp -d "${TMPDIR:-/tmp}/perfgap-hw-empty.XXXXXX")
trap 'rm -rf "$tree" "$empty"' EXIT
: > "$empty/kmsg"
# One check in a namespace whose /sys/class holds only the given infiniband tree and whose
# /dev/kmsg is the given file; prints its wall time in us (timed inside, around perfgap only).
one_check() {  # IBDIR KMSG
  unshare --mount sh -c '
    mount -t tmpfs perfgap-bench /sys/class && cp -rL "$1" /sys/class/infiniband && mount --bind "$2" /dev/kmsg || exit 2
    a=$(date +%s%N); "$3" check --sample-ms 100 --format json --output /dev/null; rc=$?; b=$(date +%s%N)
    [ $rc -le 1 ] || exit 2
    echo $(( (b - a) / 1000 ))' sh "$1" "$2" "$perfgap"
}
mkdir -p "$empty/infiniband"
# The live path in-process: the same files where a live check reads them.
unshare --mount sh -c '
  mount -t tmpfs perfgap-bench /sys/class && cp -rL "$1" /sys/class/infiniband && mount --bind "$2" /dev/kmsg || exit 2
  exec "$3" --live "$4"' sh "$tree/sys/class/infiniband" "$tree/.perfgap/dmesg.txt" "$(realpath "$BUILD/bench/perfgap-bench-hw")" "$REPS" || [[ $? == 1 ]] || exit 2
with=() without=()
for ((i = 0; i < REPS; i++)); do  # alternated, so drifting load falls on both alike
  t=$(one_check "$tree/sys/class/infiniband" "$tree/.perfgap/dmesg.txt") || exit 2; with+=("$t")
  t=$(one_check "$empty/infiniband" "$empty/kmsg") || exit 2; without+=("$t")
done
stats "${with[@]}"; w_med=$MED; w_min=$MIN
stats "${without[@]}"; n_med=$MED; n_min=$MIN
d=$(( w_med - n_med ))
echo "end to end, check --sample-ms 100 (median of $REPS, ms): with 8 ports and the 1 MiB log $(ms "$w_med") (min $(ms "$w_min")), without $(ms "$n_med") (min $(ms "$n_min"))"
awk -v d="$d" 'BEGIN { printf "added: %.2f ms%s\n", d / 1000, d < 0 ? " (below the noise)" : "" }'
(( d <= 5000 )) || exit 1
