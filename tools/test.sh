#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 checkout: dependencies, build, clang-tidy over the
# last commit's src/*.cpp (tools/tidy-changed.sh, at most 240 s), fuzzers over their seed corpora
# (then for PERFGAP_FUZZ_SECONDS per target where asked; PERFGAP_FUZZ=0 leaves them out), the
# static x86_64 and aarch64 release builds (tools/release-check.sh static aarch64; the aarch64
# one at nice 19 in the background from the end of the test build to the end of ctest), a
# throw-away Slurm cluster for the fan-out and health-check tests (root only;
# PERFGAP_SLURM_TESTS=0 leaves it out), every ctest
# test (the ReleaseBinary ones against build-release/src/perfgap; as root, the real-container
# tests with runc, bubblewrap and the chroots, required: PERFGAP_REAL_CONTAINER_TESTS=required),
# then, as root, the static
# binary in Debian 11 and 13 chroots and the .deb installed and removed (release-check.sh
# chroot package; the chroots are made by debootstrap in the background while the builds run,
# and kept in /var/tmp/perfgap-chroots). PERFGAP_RELEASE_CHECK=0 leaves the release checks out.
# A build directory that does not exist yet is configured as a unity build (the from-scratch
# build in about half the time) without debug info; an existing one keeps its settings, so
# incremental builds stay per file (PERFGAP_UNITY=ON/OFF forces either).
set -euo pipefail
cd "$(dirname "$0")/.."

# Whatever happens from here on, the Slurm daemons started below are stopped (by PID), the
# tests' scratch directory removed, and the time of each phase printed (a failed run's too).
slurm_dir=""
test_tmp=""
phases=()
phase_start=$SECONDS
stop_slurm() {
  local rc=$?
  if [ "$rc" = 0 ]; then echo "== test.sh done in ${SECONDS}s: ${phases[*]}"
  else echo "== test.sh FAILED (exit $rc) after ${SECONDS}s: ${phases[*]} (then $(( SECONDS - phase_start ))s in the failing phase)" >&2; fi
  [ -z "$test_tmp" ] || rm -rf "$test_tmp"
  # The background aarch64 build of a run that failed before it was read (its process group).
  [ -z "${aarch64_pid:-}" ] || kill -- "-$aarch64_pid" 2>/dev/null || true
  if [ -n "$slurm_dir" ]; then
    tools/slurm-test-cluster.sh stop "$slurm_dir" || true
    # Logs are kept when the run failed, for whoever reads the CI output.
    if [ "$rc" = 0 ]; then rm -rf "$slurm_dir"; else echo "== Slurm test cluster logs kept in $slurm_dir/log" >&2; fi
  fi
  return "$rc"
}
trap stop_slurm EXIT

release=${PERFGAP_RELEASE_CHECK:-1}
phase() { phases+=("$1 $(( SECONDS - phase_start ))s"); phase_start=$SECONDS; }
if [ "$release" = 1 ]; then tools/setup-debian.sh --test --release; else tools/setup-debian.sh --test; fi
phase setup
chroots_pid=""
if [ "$release" = 1 ] && [ "$(id -u)" = 0 ]; then
  # Network-bound, so it runs beside the builds; its result is read before the chroot step.
  tools/release-check.sh chroots > /tmp/perfgap-chroots.log 2>&1 &
  chroots_pid=$!
fi
# An empty ccache (a fresh CI machine) can hit nothing in this run's four builds, whose flags all
# differ, and each miss costs ~9% over the bare compiler (bench/README.md, "The CI run"): off.
if [ -z "${CCACHE_DISABLE:-}" ] && command -v ccache >/dev/null &&
   [ "$(ccache --print-stats 2>/dev/null | awk '$1 == "files_in_cache" {print $2}')" = 0 ]; then
  export CCACHE_DISABLE=1
  echo "== ccache is empty: not used by this run's builds"
fi
unity=()
if [ -n "${PERFGAP_UNITY:-}" ]; then unity=(-DCMAKE_UNITY_BUILD="$PERFGAP_UNITY")
elif [ ! -f build/CMakeCache.txt ]; then
  # A fresh build (CI's) also leaves out debug info: the preset's -g1 costs 7-21% of a unity
  # source's compile and nothing here reads it (the static release is -O2 without it, and links
  # this library: debug flags aside, the code flags are the same). A developer's build/ keeps -g1.
  unity=(-DCMAKE_UNITY_BUILD=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG")
fi
cmake --preset default "${unity[@]}"
cmake --build --preset default
phase build
aarch64_pid=""
if [ "$release" = 1 ]; then
  # The aarch64 cross build shares nothing with the others, so it starts now, at the lowest
  # priority (nice 19: ~1.5% of a core against any other process), and takes the CPU the
  # phases below leave idle: clang-tidy's last file, the static link, the tests that wait on
  # Slurm, containers, Chromium and sockets. Its own check (the ReleaseBinary tests under qemu)
  # runs when it is built; its result is read after ctest.
  # Its own process group (set -m), so a run that fails first can stop all of it, but not its
  # own session: the kernel's autogroups weigh sessions against each other, which would undo
  # the nice.
  set -m
  CMAKE_BUILD_PARALLEL_LEVEL=2 nice -n 19 tools/release-check.sh aarch64 > /tmp/perfgap-aarch64.log 2>&1 &
  aarch64_pid=$!
  set +m
fi
# clang-tidy over the src/*.cpp files of the last commit (CONTRIBUTING.md, "Lint").
tools/tidy-changed.sh
phase tidy
if [ "${PERFGAP_FUZZ:-1}" != "0" ] && [ -x tools/run-fuzz.sh ]; then
  # A smoke run: each target's whole seed corpus, and no more (a second more of fuzzing per
  # target cost ~40 s, bench/README.md "The CI run"). PERFGAP_FUZZ_SECONDS=N adds N seconds
  # per target with a fixed seed (so a run does not fail at random on commits that did not touch
  # a parser); explore with an unseeded `tools/run-fuzz.sh 60`.
  # Built at -O0 for a fresh build-fuzz/ (an existing one keeps its setting): the instrumented
  # library compiles in ~40% of -O1's time, and a smoke run is its seed corpora; it compiles only
  # the library files the targets link (fuzz/library-sources.cmake).
  fuzz_opt=${FUZZ_OPT:-}
  [ -n "$fuzz_opt" ] || [ -f build-fuzz/CMakeCache.txt ] || fuzz_opt=-O0
  FUZZ_OPT="$fuzz_opt" FUZZ_SEED="${FUZZ_SEED:-1}" tools/run-fuzz.sh "${PERFGAP_FUZZ_SECONDS:-0}"
  phase fuzz
fi
if [ "$release" = 1 ]; then
  tools/release-check.sh static
  phase release-static
fi
if [ "${PERFGAP_SLURM_TESTS:-1}" != "0" ] && [ "$(id -u)" = 0 ]; then
  slurm_start=$SECONDS
  slurm_dir=$(mktemp -d /tmp/perfgap-slurm.XXXXXX)
  tools/slurm-test-cluster.sh start "$slurm_dir" >/dev/null
  export PERFGAP_TEST_SLURM_ENV="$slurm_dir/env"
  echo "== Slurm test cluster up in $((SECONDS - slurm_start))s: $(tr '\n' ' ' < "$slurm_dir/env")"
else
  echo "== no Slurm test cluster (needs root; PERFGAP_SLURM_TESTS=${PERFGAP_SLURM_TESTS:-1}): the Slurm tests skip"
fi
# The real-container tests (runc, bubblewrap, enroot's mechanism; the GPU helper in Debian
# 11/13) need the minbase roots made above: waited for here, and required, not skipped.
if [ -n "$chroots_pid" ]; then
  wait "$chroots_pid" || { cat /tmp/perfgap-chroots.log >&2; echo "== debootstrap of the release-check chroots failed" >&2; exit 1; }
  chroots_pid=""
  cat /tmp/perfgap-chroots.log
  export PERFGAP_REAL_CONTAINER_TESTS=required
fi
# The tests unpack, write and remove hundreds of thousands of small files (fixture trees,
# snapshots, fake roots): on ext4 most of that time is inode allocation (its scan of recently
# deleted inodes), on a tmpfs a small part of it (SnapshotReplay.EveryFixtureCaseReplaysUnchanged:
# 100 s -> 15 s). /dev/shm is used where it is a tmpfs that runs programs and has 4 GiB free (a
# container's default 64 MiB one would fill up); TMPDIR given wins.
shm_free_gib=$(df --output=avail -B1G /dev/shm 2>/dev/null | tail -1 | tr -d ' ' || echo 0)
if [ -z "${TMPDIR:-}" ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ "${shm_free_gib:-0}" -ge 4 ] 2>/dev/null &&
   test_tmp=$(mktemp -d /dev/shm/perfgap-ctest.XXXXXX 2>/dev/null); then
  printf '#!/bin/sh\nexit 0\n' > "$test_tmp/x" && chmod +x "$test_tmp/x"
  if "$test_tmp/x" 2>/dev/null; then rm -f "$test_tmp/x"; else rm -rf "$test_tmp"; test_tmp=""; fi
fi
echo "== test files under ${test_tmp:-${TMPDIR:-/tmp}}"
# ctest -j starts the longest tests first where it knows their times; a build that has none yet (a
# fresh clone) gets them from tests/ctest-cost-seed.txt (tools/ctest-cost-seed.sh), so the slowest
# tests, declared last, do not run on alone at the end. Only the order changes.
cost_data=build/Testing/Temporary/CTestCostData.txt
if [ ! -f "$cost_data" ] && [ -f tests/ctest-cost-seed.txt ]; then
  mkdir -p "$(dirname "$cost_data")"
  grep -v '^#' tests/ctest-cost-seed.txt > "$cost_data"
fi
TMPDIR=${test_tmp:-${TMPDIR:-/tmp}} ctest --preset default
phase ctest
if [ -n "$aarch64_pid" ]; then
  aarch64_rc=0
  wait "$aarch64_pid" || aarch64_rc=$?
  aarch64_pid=""
  cat /tmp/perfgap-aarch64.log
  [ "$aarch64_rc" = 0 ] || { echo "== release-check aarch64 failed (above)" >&2; exit 1; }
  # What was left of the aarch64 build once the tests were done (it ran beside the phases above).
  phase release-aarch64-rest
fi
if [ "$release" = 1 ] && [ "$(id -u)" = 0 ]; then
  tools/release-check.sh chroot package
  phase chroot+package
elif [ "$release" = 1 ]; then
  echo "== release-check chroot and package need root: left out"
fi
