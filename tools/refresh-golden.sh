#!/usr/bin/env bash
# Regenerates tests/golden/*.json from tests/fixtures/golden/*.tree with the real binary
# (time, version and the temporary root masked). Review `git diff tests/golden` afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build --preset default --target perfgap perfgap_cli_tests
PERFGAP_UPDATE_GOLDEN=1 ./build/tests/perfgap_cli_tests --gtest_filter='Trees/GoldenTree.*'
git --no-pager diff --stat -- tests/golden || true
