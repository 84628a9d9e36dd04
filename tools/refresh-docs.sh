#!/usr/bin/env bash
# Regenerates docs/CHECKS.md from the check registry.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null
cmake --build --preset default --target perfgap-docgen
./build/tools/perfgap-docgen > docs/CHECKS.md
