#!/usr/bin/env bash
# Checks are pure functions of facts (CONTRIBUTING.md, "The rules the design depends on"):
# no check reads the node itself. Fails, naming file:line, on any use in DIR (default
# src/checks) of the sysroot (Facts::root(), sys::Sysroot, sys/ headers that open files or
# spawn), a Sysroot-taking reader of src/facts (read_pci_link), or the C/C++ ways of opening
# files, spawning processes or reading the clock. Comment lines are not code.
# A ctest (lint.checks_are_pure); a second one runs it on tests/fixtures/lint/impure and
# expects it to fail, so the lint itself is tested.
set -uo pipefail
dir=${1:-"$(dirname "$0")/../src/checks"}
[ -d "$dir" ] || { echo "lint-pure-checks: $dir: not a directory" >&2; exit 2; }
pattern='root\(\)|Sysroot|"sys/(sysroot|named_file|process|output|bounded)\.hpp"|read_pci_link\(|std::(i|o)?fstream|std::filesystem|<filesystem>|<fstream>|\bfopen\(|\bpopen\(|::open(at)?\(|::(l|f)?stat\(|\bopendir\(|::read(link)?\(|::system\(|\bfork\(|\bexecv?p?e?\(|getpid\(|_clock::now\(|\bgettimeofday\(|clock_gettime\('
hits=$(grep -rnE --include='*.cpp' --include='*.hpp' "$pattern" "$dir" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//')
if [ -n "$hits" ]; then
  echo "$hits"
  echo "lint-pure-checks: the lines above read the node (or spawn, or look at the clock) from a check: make it a fact in src/facts (CONTRIBUTING.md, \"Adding a check\")" >&2
  exit 1
fi
echo "lint-pure-checks: $(find "$dir" -name '*.cpp' -o -name '*.hpp' | wc -l) files in $dir read no files themselves"
