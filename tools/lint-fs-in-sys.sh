#!/usr/bin/env bash
# The file system only through src/sys/ (CONTRIBUTING.md, "Lint"): sys/ is where every read is
# confined (the Sysroot), declared and bounded (named inputs, --output, temporary directories,
# the input expander), so no other folder names a path to the kernel itself. Fails, naming
# FILE:LINE, on each direct file-system call in a C++ source of SRC outside its sys/.
#   tools/lint-fs-in-sys.sh [SRC]     (default: src)
# A ctest (lint.fs_only_in_sys); a second one runs it on tests/fixtures/lint/fs and expects it
# to fail, so the lint itself is tested.
#
# What counts as a direct call (comments and string literals are not code, and are not matched):
#   headers     <filesystem> <fstream> <dirent.h> <fcntl.h> <glob.h> <ftw.h> <sys/statvfs.h>
#               <sys/vfs.h> <sys/file.h>
#   C++         std::filesystem, std::ifstream, std::ofstream, std::fstream, std::filebuf
#   C/POSIX     fopen freopen opendir fdopendir readdir scandir nftw ftw glob mkdtemp mkstemp
#               mkostemp tmpfile tmpnam realpath statvfs statfs lstat fstatat openat openat2
#               creat unlinkat mkdirat renameat renameat2 symlinkat readlinkat linkat faccessat
#               fchmodat fchownat utimensat, called with or without a leading ::
#   ::NAME(     open stat access unlink rmdir readlink rename mkdir link symlink chdir truncate
#               remove chmod chown: names that are also methods here (ReplayRoot::open,
#               Sysroot::stat), so only the global call, the way this code writes POSIX, counts
# Not matched: reads, writes and closes of a descriptor (::read(fd, ...)): what sys/ opened
# (Sysroot::open_read) or what is no file (a perf_event counter, a pipe); fnmatch(3), which
# matches strings.
# Not linted: src/sys/ (the place for it), and the programs that are not perfgap's library:
# src/gpu_helper/ (perfgap-gpu, libc only), src/collbench/ (its own executable) and src/static/
# (the static link's shims).
set -uo pipefail
src=${1:-"$(dirname "$0")/../src"}
[ -d "$src" ] || { echo "lint-fs-in-sys: $src: not a directory" >&2; exit 2; }
exempt='sys|gpu_helper|collbench|static'

headers='#[[:space:]]*include[[:space:]]*<(filesystem|fstream|dirent\.h|fcntl\.h|glob\.h|ftw\.h|sys/statvfs\.h|sys/vfs\.h|sys/file\.h)>'
cxx='std::(filesystem|ifstream|ofstream|fstream|filebuf)\b'
calls='(^|[^[:alnum:]_.>])(::)?(fopen|freopen|opendir|fdopendir|readdir|scandir|nftw|ftw|glob|mkdtemp|mkstemp|mkostemp|tmpfile|tmpnam|realpath|statvfs|statfs|lstat|fstatat|openat2?|creat|unlinkat|mkdirat|renameat2?|symlinkat|readlinkat|linkat|faccessat|fchmodat|fchownat|utimensat)[[:space:]]*\('
global='(^|[^[:alnum:]_:])::(open|stat|access|unlink|rmdir|readlink|rename|mkdir|link|symlink|chdir|truncate|remove|chmod|chown)[[:space:]]*\('

mapfile -t files < <(find "$src" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cc' \) | sort |
                     grep -vE "^${src%/}/($exempt)/")
status=0
if [ ${#files[@]} -gt 0 ]; then
  # Each line with its comments and string/character literals blanked (block comments across
  # lines too; an #include's <...> stays), then matched.
  hits=$(awk '
    FNR == 1 { block = 0 }
    {
      line = $0; out = ""; i = 1; n = length(line)
      while (i <= n) {
        c = substr(line, i, 1); d = substr(line, i, 2)
        if (block) { if (d == "*/") { block = 0; i += 2 } else i++; continue }
        if (d == "//") break
        if (d == "/*") { block = 1; i += 2; continue }
        if (c == "\"" || c == "\047") {
          q = c; i++
          while (i <= n && substr(line, i, 1) != q) { if (substr(line, i, 1) == "\\") i++; i++ }
          i++; out = out q q; continue
        }
        out = out c; i++
      }
      print FILENAME ":" FNR ":" out
    }' "${files[@]}" | grep -E "^[^:]+:[0-9]+:.*($headers|$cxx|$calls|$global)")
  if [ -n "$hits" ]; then
    while IFS=: read -r file line code; do
      what=$(grep -oE "$headers|$cxx|$calls|$global" <<< "$code" | head -1 | sed -E 's/^[^[:alnum:]_:<#]+//; s/[[:space:]]*\($//')
      echo "$file:$line: calls the file system directly ($what) outside sys/: $(sed -n "${line}p" "$file" | sed -E 's/^[[:space:]]+//')"
    done <<< "$hits"
    status=1
  fi
fi
if [ "$status" != 0 ]; then
  echo "lint-fs-in-sys: the lines above touch the file system outside src/sys/: call a sys/ function (sys/paths.hpp, sys/named_file.hpp, sys/output.hpp, sys/input_expand.hpp, the Sysroot), or add a small one there (CONTRIBUTING.md, \"Lint\")" >&2
  exit 1
fi
echo "lint-fs-in-sys: ${#files[@]} files in $src outside sys/ (and gpu_helper/, collbench/, static/) call no file system directly"
