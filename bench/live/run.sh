#!/usr/bin/env bash
# Times a live `perfgap check` on this machine (the real binary): every check with the
# default sample window; every check but the two sampled ones (cpu.steal,
# placement.shared_cores: the work without the window); and a read floor, one `cat` of every
# file the checks declare they read (their `reads` globs expanded here). Median and min of N
# runs, and the clone calls of one run when strace is installed (threads started).
#
#   bench/live/run.sh [--reps N] [--bin PERFGAP]
#
# Targets (issue 19): the work without the window within 3x the read floor. Exit status 0
# when it holds, 1 when it does not, 2 on a usage or setup error.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

REPS=11
BIN=""
usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) REPS="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument $1" >&2; usage ;;
  esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --reps needs a number" >&2; exit 2; }
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
BIN=${BIN:-$SRC/build/src/perfgap}
[[ -x "$BIN" ]] || { echo "run.sh: no perfgap at $BIN (cmake --build --preset default, or --bin)" >&2; exit 2; }
command -v jq >/dev/null || { echo "run.sh: needs jq" >&2; exit 2; }

# The declared reads, expanded as globs on this machine (files only, each once).
mapfile -t patterns < <("$BIN" check --list --format json | jq -r '.[].reads[]' | sort -u)
files=()
shopt -s nullglob
for p in "${patterns[@]}"; do
  for f in $p; do [[ -f "$f" && -r "$f" ]] && files+=("$f"); done
done
shopt -u nullglob
mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u)

run_set() {  # label CMD...: REPS timed runs, one line of figures
  local label=$1; shift
  local t=() i
  for ((i = 0; i < REPS; i++)); do time_us "$@" > /dev/null 2>&1 || true; t+=("$T"); done
  stats "${t[@]}"
  printf '%-44s %10s %10s\n' "$label" "$(ms "$MIN")" "$(ms "$MED")"
  LAST_MED=$MED
}

echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg); ${#files[@]} declared files readable here"
printf '%-44s %10s %10s\n' "what" "min ms" "median ms"
run_set "read floor: cat of the declared files" cat -- "${files[@]}"
floor=$LAST_MED
run_set "check, sampled checks skipped" "$BIN" check --skip cpu.steal,placement.shared_cores
work=$LAST_MED
run_set "check, every check (default window)" "$BIN" check
run_set "check, every check, --sample-ms 100" "$BIN" check --sample-ms 100
if command -v strace >/dev/null; then
  clones=$(strace -f -qq -c -e trace=clone,clone3 "$BIN" check 2>&1 >/dev/null | awk '/clone/ {n += $4} END {print n + 0}')
  echo "threads started by one check (clone calls): $clones"
fi
ratio=$(awk -v w="$work" -v f="$floor" 'BEGIN { printf "%.2f", (f > 0 ? w / f : 0) }')
echo "work without the window / read floor: ${ratio}x (target <= 3x)"
awk -v r="$ratio" 'BEGIN { exit !(r <= 3) }'
