#!/usr/bin/env bash
# Prints the src/ files the fuzz targets link, the list fuzz/library-sources.cmake is kept to
# (the fuzz build compiles its instrumented library from that list only), and how that list
# differs. It builds the fuzz preset per file (no unity batches) from every folder but cli/
# (PERFGAP_FUZZ_ALL_SOURCES) in BUILD_DIR, then links perfgap-fuzz again with lld, the library's
# objects given as lazy members (--start-lib ... --end-lib: pulled only when a symbol is needed,
# as from the static library, but each named by its path), and reads lld's --why-extract table.
# The first run compiles the whole library once, per file (minutes); BUILD_DIR is kept, so a
# rerun after an edit compiles only what changed. Run it when a fuzz target starts to call
# something new or code moves between files; the full table (which symbol pulled each file) is
# left in BUILD_DIR/why-extract.txt.
#
#   tools/fuzz-sources.sh [BUILD_DIR]    # default build-fuzz-sources/
#
# Exit status: 0 when the list is exactly what the link needs; 1 when it lists a file no target
# needs (compiled for nothing) or lacks a needed one (perfgap-fuzz would not link).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
dir=$(realpath -m "${1:-build-fuzz-sources}")
command -v ld.lld >/dev/null || { echo "fuzz-sources.sh: needs lld (ld.lld; tools/setup-debian.sh --test installs it)" >&2; exit 2; }

cmake --preset fuzz -B "$dir" -DCMAKE_UNITY_BUILD=OFF -DPERFGAP_FUZZ_OPT=-O0 -DPERFGAP_FUZZ_ALL_SOURCES=ON > /dev/null
cmake --build "$dir" --target perfgap-fuzz

# The link as ninja runs it (in $dir), with the library's archive replaced by its objects as
# lazy members and another output, so build-fuzz-sources' own perfgap-fuzz stays as built.
link=$(ninja -C "$dir" -t commands perfgap-fuzz | tail -1)
link=${link%%&& cd *}  # the post-build links to fuzz_<name>
objdir=src/CMakeFiles/perfgap_core.dir
mapfile -t objects < <(cd "$dir" && find "$objdir" -name '*.o' | sort)
[[ $link == *" src/libperfgap_core.a "* ]] || { echo "fuzz-sources.sh: no src/libperfgap_core.a in the link: $link" >&2; exit 2; }
[[ $link == *-fuse-ld=lld* ]] || { echo "fuzz-sources.sh: the fuzz link does not use lld: $link" >&2; exit 2; }
why=$dir/why-extract.txt
link=${link/ src\/libperfgap_core.a / -Wl,--start-lib ${objects[*]} -Wl,--end-lib -Wl,--why-extract=$why }
link=${link/ -o fuzz\/perfgap-fuzz / -o fuzz\/perfgap-fuzz.why-extract }
(cd "$dir" && eval "$link")

# lld's table: reference <TAB> extracted <TAB> symbol; the extracted library objects, as src/ paths.
mapfile -t needed < <(awk -F'\t' -v p="$objdir/" 'index($2, p) == 1 { f = substr($2, length(p) + 1); sub(/\.o$/, "", f); print f }' "$why" |
                      grep -v '^generated/' | sort -u)

# The list as src/CMakeLists.txt expands it.
script=$(mktemp)
trap 'rm -f "$script"' EXIT
cat > "$script" <<'EOF'
include(${ROOT}/fuzz/library-sources.cmake)
file(GLOB files RELATIVE ${ROOT}/src ${PERFGAP_FUZZ_LIBRARY_SOURCES})
list(SORT files)
foreach(f IN LISTS files)
  message("${f}")
endforeach()
EOF
mapfile -t listed < <(cd src && cmake -DROOT="$root" -P "$script" 2>&1)

# What the link needs, a folder whose .cpp files are all needed as its glob.
echo "== the fuzz targets link ${#needed[@]} of the library's files:"
printf '%s\n' "${needed[@]}" | awk -F/ '{ d = $0; sub(/\/[^\/]*$/, "", d); n[d]++; f[d] = f[d] " " $NF }
  END { for (d in n) print d, n[d], f[d] }' | sort | while read -r d n files; do
  total=$(find "src/$d" -maxdepth 1 -name '*.cpp' | wc -l)
  if [[ $n == "$total" ]]; then echo "  $d/*.cpp"; else for f in $files; do echo "  $d/$f"; done; fi
done
unneeded=$(comm -23 <(printf '%s\n' "${listed[@]}") <(printf '%s\n' "${needed[@]}"))
missing=$(comm -13 <(printf '%s\n' "${listed[@]}") <(printf '%s\n' "${needed[@]}"))
rc=0
if [[ -n $unneeded ]]; then
  echo "== fuzz/library-sources.cmake lists files no fuzz target links (they compile for nothing):"
  sed 's/^/  /' <<< "$unneeded"; rc=1
fi
if [[ -n $missing ]]; then
  echo "== fuzz/library-sources.cmake lacks files the fuzz targets link (perfgap-fuzz would not link):"
  sed 's/^/  /' <<< "$missing"; rc=1
fi
(( rc )) || echo "== fuzz/library-sources.cmake lists exactly these (${#listed[@]} files)"
echo "== why each was pulled: $why"
exit "$rc"
