#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 checkout: dependencies, build, fuzzers for a
# bounded time (PERFGAP_FUZZ_SECONDS per target, default 6), a throw-away Slurm cluster for
# the fan-out and health-check tests (root only; PERFGAP_SLURM_TESTS=0 leaves it out), then
# every ctest test. PERFGAP_RELEASE_CHECK=1 then also runs tools/release-check.sh (static and
# aarch64 release builds, Debian 11/13 chroots, the .deb: about 20 minutes from nothing on a
# busy 2-core VM, seconds once built and the chroots kept; bench/README.md), which CI leaves
# out to stay within its 20 minutes. The ReleaseBinary tests of ctest run whenever
# build-release/src/perfgap exists (and skip, saying so, when it does not).
set -euo pipefail
cd "$(dirname "$0")/.."

# Whatever happens from here on, the Slurm daemons started below are stopped (by PID).
slurm_dir=""
stop_slurm() {
  local rc=$?
  if [ -n "$slurm_dir" ]; then
    tools/slurm-test-cluster.sh stop "$slurm_dir" || true
    # Logs are kept when the run failed, for whoever reads the CI output.
    if [ "$rc" = 0 ]; then rm -rf "$slurm_dir"; else echo "== Slurm test cluster logs kept in $slurm_dir/log" >&2; fi
  fi
  return "$rc"
}
trap stop_slurm EXIT

if [ "${PERFGAP_RELEASE_CHECK:-0}" = 1 ]; then tools/setup-debian.sh --test --release; else tools/setup-debian.sh --test; fi
cmake --preset default
cmake --build --preset default
if [ "${PERFGAP_FUZZ_SECONDS:-6}" != "0" ] && [ -x tools/run-fuzz.sh ]; then
  # A fixed seed keeps the short CI run from failing at random on commits that did not touch
  # a parser; explore with an unseeded `tools/run-fuzz.sh 60`.
  FUZZ_SEED="${FUZZ_SEED:-1}" tools/run-fuzz.sh "${PERFGAP_FUZZ_SECONDS:-6}"
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
ctest --preset default
if [ "${PERFGAP_RELEASE_CHECK:-0}" = 1 ]; then
  tools/release-check.sh
fi
