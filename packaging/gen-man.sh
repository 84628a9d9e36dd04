#!/usr/bin/env bash
# Writes OUTDIR/perfgap.1 (and perfgap-COMMAND.1 for each command) from the binary's --help:
# short, but exactly what this build accepts. Usage: gen-man.sh [EMULATOR...] BINARY OUTDIR
set -euo pipefail
out=${!#}
bin=("${@:1:$#-1}")
mkdir -p "$out"
version=$("${bin[@]}" --version | head -1 | awk '{print $2}')
binpath=${bin[${#bin[@]}-1]}
# The usage lines name the binary by the path it ran from: the pages say `perfgap`.
esc() { sed -e "s|$binpath|perfgap|g" -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/"; }
page() {  # name, summary, help text
  {
    echo ".TH $(echo "$1" | tr a-z A-Z) 1 \"\" \"perfgap $version\" \"User Commands\""
    echo ".SH NAME"
    echo "$1 \\- $2"
    echo ".SH DESCRIPTION"
    echo ".nf"
    printf '%s\n' "$3" | esc
    echo ".fi"
    echo ".SH SEE ALSO"
    echo "perfgap(1); docs/ in the source tree"
  } > "$out/$1.1"
}
page perfgap "find the configuration gap between a GPU node and the reference" "$("${bin[@]}" --help)"
for c in check analyze gap snapshot fleet health fanout sweep compare explain profile probe history expect version; do
  page "perfgap-$c" "perfgap $c" "$("${bin[@]}" "$c" --help)"
done
