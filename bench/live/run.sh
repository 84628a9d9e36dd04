#!/usr/bin/env bash
# Times a live `perfgap check` on this machine (the real binary): every check with the
# default sample window; every check but the two sampled ones (cpu.steal,
# placement.shared_cores: the work without the window); and a read floor, one `cat` of every
# file the checks declare they read (their `reads` globs expanded here). Median and min of N
# runs, and the clone calls of one run when strace is installed (threads started). With
# --nhc, LBNL NHC (github.com/mej/nhc, installed apart from this repository) is timed the same
# way beside it, on --nhc-conf (default bench/live/nhc.conf.example, 17 checks written for the
# 2-vCPU dev VM: adapt it first elsewhere, since NHC must pass, exit 0, to be timed).
#
#   bench/live/run.sh [--reps N] [--bin PERFGAP] [--nhc NHC [--nhc-conf FILE] [--nhc-scripts DIR]]
#
# NHC is run as `NHC -c FILE -l - -t 30 INCDIR=DIR MARK_OFFLINE=0` (its output discarded, no
# resource manager marking); DIR, its check scripts (*.nhc), defaults to the first of
# NHC's ../etc/nhc/scripts, its ./scripts (a source tree) and /etc/nhc/scripts that has any.
#
# Targets (issue 19): the work without the window within 3x the read floor; with --nhc also
# `check` of every check (default window) at most NHC's median. Exit status 0 when they
# hold, 1 when one does not, 2 on a usage or setup error (NHC not passing here included).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

REPS=11
BIN=""
NHC=""
NHC_CONF=""
NHC_SCRIPTS=""
usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) REPS="$2"; shift 2 ;;
    --bin) BIN="$2"; shift 2 ;;
    --nhc) NHC="$2"; shift 2 ;;
    --nhc-conf) NHC_CONF="$2"; shift 2 ;;
    --nhc-scripts) NHC_SCRIPTS="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument $1" >&2; usage ;;
  esac
done
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --reps needs a number" >&2; exit 2; }
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
BIN=${BIN:-$SRC/build/src/perfgap}
[[ -x "$BIN" ]] || { echo "run.sh: no perfgap at $BIN (cmake --build --preset default, or --bin)" >&2; exit 2; }
command -v jq >/dev/null || { echo "run.sh: needs jq" >&2; exit 2; }
# The timed runs ignore exit codes (a check may fail here), so a binary that cannot run as
# asked (exit 2: e.g. an older build without --sample-ms) would be timed as fast: refuse it.
for opt in --skip=cpu.steal,placement.shared_cores --sample-ms=100; do
  rc=0; "$BIN" check "$opt" > /dev/null 2>&1 || rc=$?
  (( rc != 2 )) || { echo "run.sh: $BIN check $opt: exit 2 (too old a build?)" >&2; exit 2; }
done

nhc_cmd=()
if [[ -n "$NHC" ]]; then
  [[ -x "$NHC" ]] || { echo "run.sh: no NHC at $NHC" >&2; exit 2; }
  NHC="$(cd "$(dirname "$NHC")" && pwd)/$(basename "$NHC")"
  NHC_CONF=${NHC_CONF:-$SRC/bench/live/nhc.conf.example}
  [[ -r "$NHC_CONF" ]] || { echo "run.sh: no NHC config at $NHC_CONF" >&2; exit 2; }
  NHC_CONF="$(cd "$(dirname "$NHC_CONF")" && pwd)/$(basename "$NHC_CONF")"
  if [[ -z "$NHC_SCRIPTS" ]]; then
    for d in "$(dirname "$NHC")/../etc/nhc/scripts" "$(dirname "$NHC")/scripts" /etc/nhc/scripts; do
      if compgen -G "$d/*.nhc" >/dev/null; then NHC_SCRIPTS=$d; break; fi
    done
  fi
  # NHC without its scripts reports "command not found" and still exits 0: insist on them.
  compgen -G "$NHC_SCRIPTS/*.nhc" >/dev/null \
    || { echo "run.sh: no NHC check scripts (*.nhc) found; give --nhc-scripts DIR" >&2; exit 2; }
  NHC_SCRIPTS="$(cd "$NHC_SCRIPTS" && pwd)"
  nhc_opts=(-c "$NHC_CONF" -l - -t 30)   # options first: NHC takes VAR=VALUE words after them
  nhc_vars=("INCDIR=$NHC_SCRIPTS" MARK_OFFLINE=0)
  nhc_cmd=("$NHC" "${nhc_opts[@]}" "${nhc_vars[@]}")
  # One verbose run first: it must pass and must have run its checks.
  nhc_rc=0
  nhc_out=$("$NHC" "${nhc_opts[@]}" -v "${nhc_vars[@]}" 2>&1) || nhc_rc=$?
  nhc_checks=$(grep -c '^Running check:' <<< "$nhc_out" || true)
  if (( nhc_rc != 0 )) || grep -q 'command not found' <<< "$nhc_out" || (( nhc_checks == 0 )); then
    echo "run.sh: NHC does not pass here (exit $nhc_rc, $nhc_checks checks run); adapt $NHC_CONF:" >&2
    grep -v '^Running check:' <<< "$nhc_out" | tail -5 >&2
    exit 2
  fi
  nhc_version=""
  if [[ -e "$(dirname "$NHC")/.git" ]]; then   # run from a clone of its source
    nhc_version=$(git -C "$(dirname "$NHC")" describe --tags --always 2>/dev/null || true)
  fi
fi

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
every=$LAST_MED
run_set "check, every check, --sample-ms 100" "$BIN" check --sample-ms 100
every100=$LAST_MED
if (( ${#nhc_cmd[@]} )); then
  run_set "NHC, $nhc_checks checks, passing" "${nhc_cmd[@]}"
  nhc=$LAST_MED
fi
if command -v strace >/dev/null; then
  clones=$(strace -f -qq -c -e trace=clone,clone3 "$BIN" check 2>&1 >/dev/null | awk '/clone/ {n += $4} END {print n + 0}')
  echo "threads started by one check (clone calls): $clones"
fi
# The window the default took here: 100 ms, taken on while cpu.steal's tick margin is wider
# than its distance to the limit (a steal-free node: about 610 ms / sqrt(CPUs)).
steal_title=$("$BIN" check --only cpu.steal 2>/dev/null | awk '/cpu.steal/ {sub(/.*cpu\.steal +/, ""); print; exit}')
echo "cpu.steal with the default window: ${steal_title:-(no finding)}"
ratio=$(awk -v w="$work" -v f="$floor" 'BEGIN { printf "%.2f", (f > 0 ? w / f : 0) }')
echo "work without the window / read floor: ${ratio}x (target <= 3x)"
verdict=0
awk -v r="$ratio" 'BEGIN { exit !(r <= 3) }' || verdict=1
if (( ${#nhc_cmd[@]} )); then
  echo "NHC: $NHC${nhc_version:+ ($nhc_version)}, config $NHC_CONF, scripts $NHC_SCRIPTS"
  if (( every <= nhc )); then held=met; else held=missed; verdict=1; fi
  echo "check, every check (default window) $(ms "$every") ms <= NHC $(ms "$nhc") ms (median): $held"
  if (( every100 <= nhc )); then held=yes; else held=no; fi
  echo "  (not the target) with --sample-ms 100: $(ms "$every100") ms <= NHC: $held"
fi
exit "$verdict"
