#!/usr/bin/env bash
# Writes tests/ctest-cost-seed.txt: the tests that take 2 s or more, with their mean time, from a
# build whose ctest has run (its Testing/Temporary/CTestCostData.txt), keeping only tests that
# still exist. tools/test.sh gives it to a build that has no cost data yet (a fresh clone), so that
# `ctest -j` starts the longest tests first instead of in declaration order, where the slowest
# (ExpectField, the Slurm pair searches, the Chromium pages) came last and ran on alone. Only the
# order changes: no test reads it, and a stale or missing line only costs a little wall time.
#
#   tools/ctest-cost-seed.sh [BUILD_DIR]   (default build/)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
costs="$build/Testing/Temporary/CTestCostData.txt"
[ -f "$costs" ] || { echo "ctest-cost-seed: no $costs (run ctest in $build first)" >&2; exit 2; }
names=$(mktemp)
trap 'rm -f "$names"' EXIT
ctest --test-dir "$build" -N | sed -n 's/^ *Test *#[0-9]*: //p' | sort -u > "$names"
{
  echo "# ctest's cost data for a fresh build (tools/ctest-cost-seed.sh writes it; tools/test.sh reads it)."
  echo "# Each line: test, runs, mean seconds; the tests of 2 s or more, longest first."
  awk -v names="$names" 'BEGIN { while ((getline n < names) > 0) keep[n] = 1 }
       $0 == "---" { exit }
       NF == 3 && ($1 in keep) && $3 >= 2 { printf "%s 1 %.1f\n", $1, $3 }' "$costs" | sort -k3,3 -g -r
} > tests/ctest-cost-seed.txt.new
mv tests/ctest-cost-seed.txt.new tests/ctest-cost-seed.txt
echo "ctest-cost-seed: $(grep -vc '^#' tests/ctest-cost-seed.txt) tests in tests/ctest-cost-seed.txt"
