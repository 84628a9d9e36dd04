#!/usr/bin/env bash
# Sizes (CONTRIBUTING.md, "Lint"; issue 46): functions of one job each, none over 150 lines, and
# no source file over 900 lines. Fails, naming FILE:LINE, on each C++ source of SRC over 900
# lines and each function over 150 lines.
#   tools/lint-sizes.sh [SRC]     (default: src)
# A ctest (lint.sizes); a second one runs it on tests/fixtures/lint/sizes and expects it to fail,
# so the lint itself is tested.
#
# How a function is found (a heuristic, not a parser; the code's own style is what makes it
# work): it starts at a line in column 0 that begins a declaration with a '(' (a name, a return
# type, a template's second line), not a preprocessor line, a comment, a closing brace or a
# namespace/struct/class/enum/union/using/typedef/static_assert/extern/template line, and whose
# signature ends with '{' on that line or on one of the next few lines before any ';'. It ends at
# the next line that begins with '}' in column 0. Its length counts both, inclusive.
# Its limits:
#   - only functions whose signature starts in column 0 are seen: member functions defined
#     inside a class body, and anything in an indented namespace, are not (this code does not
#     indent namespaces, and defines long member functions out of line);
#   - a lambda, a local class or a nested block is part of the function around it, not one of
#     its own;
#   - a brace in column 0 inside a raw string or a comment ends the function early (and so can
#     only hide a long one, never fail a short one);
#   - a data table at namespace scope ('... = {') is not a function.
set -uo pipefail
src=${1:-"$(dirname "$0")/../src"}
[ -d "$src" ] || { echo "lint-sizes: $src: not a directory" >&2; exit 2; }
max_file=900
max_function=150

mapfile -t files < <(find "$src" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cc' \) | sort)
[ ${#files[@]} -gt 0 ] || { echo "lint-sizes: no C++ sources in $src" >&2; exit 2; }
out=$(awk -v max_file="$max_file" -v max_function="$max_function" '
  function flush_file() {
    if (file != "" && lines > max_file)
      printf "%s:%d: file of %d lines, over %d: split it by job\n", file, 1, lines, max_file
  }
  FNR == 1 { flush_file(); file = FILENAME; lines = 0; start = 0; pending = 0; name = "" }
  { lines = FNR }
  # Inside a function: it ends at the next closing brace in column 0.
  start && /^}/ {
    n = FNR - start + 1
    if (n > max_function)
      printf "%s:%d: function %s of %d lines, over %d: split it into helpers of one job each\n", file, start, name, n, max_function
    start = 0
    next
  }
  start { next }
  # A signature begun in column 0 and not yet opened: it opens here, or a ; or a brace in
  # column 0 says it was a declaration, or it runs too long to be one.
  pending {
    if (/^[}#]/ || /;[[:space:]]*(\/\/.*)?$/ || FNR - pending > 8) { pending = 0 }
    else if (/\{[[:space:]]*(\/\/.*)?$/ && !/=[[:space:]]*\{[[:space:]]*$/) { start = pending; pending = 0; next }
    else next
  }
  /^[A-Za-z_~]/ && /\(/ \
    && !/^(namespace|struct|class|enum|union|using|typedef|static_assert|extern|template|return|case|default)[^A-Za-z0-9_]/ \
    && !/;[[:space:]]*(\/\/.*)?$/ {
    name = $0
    sub(/[[:space:]]*\(.*/, "", name); sub(/.*[[:space:]*&]/, "", name)
    if (/\{[[:space:]]*(\/\/.*)?$/) { if (!/=[[:space:]]*\{[[:space:]]*$/) start = FNR }
    else pending = FNR
  }
  END { flush_file() }
' "${files[@]}")
if [ -n "$out" ]; then
  echo "$out"
  echo "lint-sizes: the sources above are over the limits (functions of at most $max_function lines, files of at most $max_file): split them into well-named helpers of one job each (CONTRIBUTING.md, \"Lint\")" >&2
  exit 1
fi
echo "lint-sizes: ${#files[@]} files in $src, none over $max_file lines, no function over $max_function"
