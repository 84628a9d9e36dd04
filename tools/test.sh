#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 checkout: dependencies, build, fuzzers for a
# bounded time (PERFGAP_FUZZ_SECONDS per target, default 6), then every ctest test.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup-debian.sh
cmake --preset default
cmake --build --preset default
if [ "${PERFGAP_FUZZ_SECONDS:-6}" != "0" ] && [ -x tools/run-fuzz.sh ]; then
  tools/run-fuzz.sh "${PERFGAP_FUZZ_SECONDS:-6}"
fi
ctest --preset default
