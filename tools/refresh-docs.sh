#!/usr/bin/env bash
# Regenerates docs/CHECKS.md and the README's checks table from the check registry.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build --preset default --target perfgap-docgen
./build/tools/perfgap-docgen > docs/CHECKS.md
# Written whole to a temporary file first: a failed run leaves README.md as it was.
if ./build/tools/perfgap-docgen --readme README.md > README.md.tmp; then mv README.md.tmp README.md; else rm -f README.md.tmp; exit 1; fi
