# Timing helpers shared by the bench scripts (sourced, not run).

# time_us CMD...: runs CMD, leaves its wall time in microseconds in T.
time_us() { local a b; a=$(date +%s%N); "$@"; b=$(date +%s%N); T=$(( (b - a) / 1000 )); }

# stats US...: MIN and MED (the mean of the middle two for an even count) of microsecond figures.
stats() {
  local sorted n mid
  mapfile -t sorted < <(printf '%s\n' "$@" | sort -n)
  n=${#sorted[@]}
  mid=$(( n / 2 ))
  if (( n % 2 == 1 )); then MED=${sorted[$mid]}; else MED=$(( (sorted[mid - 1] + sorted[mid]) / 2 )); fi
  MIN=${sorted[0]}
}

ms() { printf '%d.%02d' $(( $1 / 1000 )) $(( ($1 % 1000) / 10 )); }   # us -> "12.34" (ms)
