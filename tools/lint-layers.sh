#!/usr/bin/env bash
# The layers of src/ (docs/ARCHITECTURE.md, "Layers"), lowest first: a file may include its
# own folder's headers and those of folders below it, never above. Fails naming file:line for
# each include that points up (a back-arrow), or a folder of SRC that is not in the list.
# A ctest (lint.layers); a second one runs it on tests/fixtures/lint/layers and expects it to
# fail, so the lint itself is tested.
#   tools/lint-layers.sh [SRC]     (default: src)
set -uo pipefail
src=${1:-"$(dirname "$0")/../src"}
[ -d "$src" ] || { echo "lint-layers: $src: not a directory" >&2; exit 2; }
layers=(sys parsers report compare facts core profile analyzers checks probe snapshot sweep history
        fleet node tool_outputs slurm cli static gpu_helper collbench)
declare -A rank
for i in "${!layers[@]}"; do rank[${layers[$i]}]=$i; done

status=0
for dir in "$src"/*/; do
  name=$(basename "$dir")
  if [ -z "${rank[$name]+x}" ]; then
    echo "lint-layers: $src/$name is not in the layer list of tools/lint-layers.sh (and docs/ARCHITECTURE.md)" >&2
    status=1
  fi
done
while IFS=: read -r file line text; do
  own=${file#"$src"/}
  own=${own%%/*}
  [ -n "${rank[$own]+x}" ] || continue
  # Matched in bash, not a sed per line: ~4,000 include lines took ~30 s of processes.
  [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([a-z_]+)/ ]] || continue
  target=${BASH_REMATCH[1]}
  [ -n "${rank[$target]+x}" ] || continue
  if (( rank[$target] > rank[$own] )); then
    echo "$file:$line: $own includes $target, a layer above it: $text"
    status=1
  fi
done < <(grep -rnE --include='*.cpp' --include='*.hpp' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' "$src")
if [ "$status" != 0 ]; then
  echo "lint-layers: the lines above point up the layers (${layers[*]}): move the shared code down, or the caller up" >&2
  exit 1
fi
echo "lint-layers: $(grep -rlE --include='*.cpp' --include='*.hpp' '#include' "$src" | wc -l) files in $src include only their layer and those below it"
