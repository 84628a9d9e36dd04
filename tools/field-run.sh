#!/usr/bin/env bash
# Runs `perfgap check --root` over every real machine tree of ../shared/field/trees and prints
# one summary line per tree (and the full text reports into OUT/), to read what perfgap says
# about machines nobody here wrote:
#   tools/field-run.sh [OUT]            (default /tmp/perfgap-field)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/perfgap-field}
bin=${PERFGAP:-build/src/perfgap}
unpack=${PERFGAP_FIELD_UNPACK:-build/tools/perfgap-field-unpack}
trees=${PERFGAP_FIELD_TREES:-../shared/field/trees}
[ -d "$trees" ] || { echo "field-run.sh: $trees not found" >&2; exit 2; }
rm -rf "$out" && mkdir -p "$out/unpacked" "$out/reports"
"$unpack" "$trees" "$out/unpacked" > "$out/trees.tsv"
while IFS=$'\t' read -r name root; do
  safe=$(printf '%s' "$name" | tr '/: +' '____')
  rc=0
  "$bin" check --root "$root" -v > "$out/reports/$safe.txt" 2> "$out/reports/$safe.err" || rc=$?
  "$bin" check --root "$root" --format json --output "$out/reports/$safe.json" 2>/dev/null || true
  printf '%-70s rc=%s  %s\n' "$name" "$rc" "$(head -1 "$out/reports/$safe.txt" | sed 's/.*: //')$(head -c 200 "$out/reports/$safe.err")"
done < "$out/trees.tsv"
