#!/usr/bin/env bash
# clang-tidy (14, with the repository's .clang-tidy) over the src/ .cpp files the last commit
# changed; fails on any warning. Needs a configured build/ (build/compile_commands.json):
#   cmake --preset default && tools/tidy-changed.sh
# Nothing changed: nothing to do. A shallow clone without HEAD~1: skipped, with a message.
# TIDY_BASE=<rev> compares against another revision (TIDY_BASE=main: a whole branch);
# TIDY_BUDGET_S bounds the time (default 240 s, 0: none), TIDY_JOBS the parallel runs (nproc).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tidy=${CLANG_TIDY:-clang-tidy-14}
base=${TIDY_BASE:-HEAD~1}
build=${TIDY_BUILD_DIR:-build}

if ! git rev-parse --verify --quiet "$base^{commit}" > /dev/null; then
  echo "tidy-changed: no $base here (a shallow clone?): skipped"
  exit 0
fi
mapfile -t files < <(git diff --name-only --diff-filter=d "$base" HEAD -- 'src/*.cpp')
if [[ ${#files[@]} -eq 0 ]]; then
  echo "tidy-changed: no src/*.cpp changed since $base: nothing to do"
  exit 0
fi
command -v "$tidy" > /dev/null || { echo "tidy-changed: $tidy not found (apt-get install clang-tidy-14)" >&2; exit 2; }
cc=$build/compile_commands.json
[[ -f $cc ]] || { echo "tidy-changed: no $cc (cmake --preset default first)" >&2; exit 2; }

# The compile database, for clang: without GCC's precompiled header (clang cannot read it;
# each file then compiles from its own includes, as it must anyway). A unity build (what a
# fresh tools/test.sh build is) lists only its batches: a file it does not list gets
# perfgap_core's command with its own name in it. src/static/ (the static release's) and
# src/collbench/ (other targets, MPI) are checked only where the database lists them.
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
strip_pch() { sed -E 's# -include [^ ]*cmake_pch\.hxx##g; s# -Winvalid-pch##g; s# -fpch-preprocess##g'; }
template=$(grep -B2 -m1 '"file": "[^"]*perfgap_core\.dir/Unity/' "$cc" | grep -v '"file"' | strip_pch || true)
template_src=$(grep -m1 -o '"file": "[^"]*perfgap_core\.dir/Unity/[^"]*"' "$cc" | sed -E 's/"file": "(.*)"/\1/' || true)
checked=()
{
  echo "["
  for f in "${files[@]}"; do
    # -m1: a source built into two targets (report/redact.cpp: perfgap_core and collbench) is
    # listed twice, and two matches would put grep's "--" separator into the database.
    entry=$(grep -m1 -B2 -F "\"file\": \"$root/$f\"" "$cc" | strip_pch || true)
    if [[ -z $entry && -n $template && $f != src/static/* && $f != src/collbench/* ]]; then
      entry=$(printf '%s\n  "file": "%s"' "${template//"$template_src"/$root/$f}" "$root/$f")
    fi
    if [[ -z $entry ]]; then
      echo "tidy-changed: $f is not in $cc: not checked" >&2
      continue
    fi
    [[ ${#checked[@]} -eq 0 ]] || echo ","
    printf '{\n%s\n}\n' "${entry%,}"
    checked+=("$f")
  done
  echo "]"
} > "$db/compile_commands.json"
if [[ ${#checked[@]} -eq 0 ]]; then
  echo "tidy-changed: nothing this build compiles changed: nothing to do"
  exit 0
fi

echo "tidy-changed: ${#checked[@]} file(s) changed since $base: ${checked[*]}"
# A time budget (TIDY_BUDGET_S, default 240 s; 0: none) keeps CI inside its 20 minutes when a
# commit touches many files (5-15 s of CPU each here): files are checked two at a time, and
# those not reached in time are named, not passed.
budget=${TIDY_BUDGET_S:-240}
jobs=${TIDY_JOBS:-$(nproc)}
start=$SECONDS
rc=0
unchecked=()
i=0
while (( i < ${#checked[@]} )); do
  if (( budget > 0 && SECONDS - start >= budget )); then
    unchecked=("${checked[@]:i}")
    break
  fi
  batch=("${checked[@]:i:jobs}")
  pids=()
  for f in "${batch[@]}"; do
    "$tidy" -p "$db" --quiet "$f" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
  i=$((i + ${#batch[@]}))
done
echo "tidy-changed: $((SECONDS - start)) s"
if (( ${#unchecked[@]} )); then
  echo "tidy-changed: the ${budget} s budget ran out; not checked: ${unchecked[*]} (run tools/tidy-changed.sh with TIDY_BUDGET_S=0)"
fi
if [[ $rc -ne 0 ]]; then
  echo "tidy-changed: clang-tidy found problems (above)" >&2
  exit 1
fi
