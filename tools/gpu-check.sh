#!/usr/bin/env bash
# One-shot check of perfgap-collbench's NCCL backend on a machine with NVIDIA GPUs (the NCCL
# backend cannot run on the CPU-only CI and development machines). Builds perfgap and
# perfgap-collbench unless a build directory that has them is given, runs all four collectives
# on one GPU (and on every GPU when there are several) from 8 B to 128 MiB, reads each output
# back with `perfgap analyze nccl-tests`, and keeps everything under $OUT.
#
#   tools/gpu-check.sh [BUILD_DIR]      BUILD_DIR default: build-gpucheck (configured if needed)
#   OUT=/some/dir tools/gpu-check.sh    where the outputs go (default: ./gpu-check-out)
#
# Exits 0 when every run exited 0 with every #wrong 0 and every output parsed; non-zero
# otherwise. summary.txt lists each run: exit status, rows, #wrong total, analyzer verdict.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build-gpucheck}
out=${OUT:-$PWD/gpu-check-out}
per_run_s=${GPU_CHECK_RUN_TIMEOUT_S:-180}
mkdir -p "$out"
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
failed=0

# What the node has: the figures mean little without it.
{
  echo "== date"; date -u
  echo "== uname"; uname -a
  echo "== nvidia-smi -L"; nvidia-smi -L 2>&1
  echo "== nvidia-smi"; nvidia-smi 2>&1
  echo "== nvidia-smi topo -m"; nvidia-smi topo -m 2>&1
  echo "== libraries"; ldconfig -p 2>/dev/null | grep -E 'libnccl|libcudart|libcuda\.so' || true
  ls -l /usr/local/cuda/lib64/libnccl* /usr/local/cuda/lib64/libcudart* 2>&1 || true
} >"$out/node.txt" 2>&1

bench=$build/src/collbench/perfgap-collbench
perfgap=$build/src/perfgap
if [ ! -x "$bench" ] || [ ! -x "$perfgap" ]; then
  say "== building in $build"
  if ! { cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFGAP_TESTS=OFF &&
         cmake --build "$build" --target perfgap perfgap-collbench; } >"$out/build.log" 2>&1; then
    say "FAIL build (see build.log)"
    tail -n 30 "$out/build.log"
    exit 1
  fi
fi
"$bench" --version >"$out/version.txt" 2>&1
say "$(cat "$out/version.txt")"
grep -q nccl "$out/version.txt" || { say "FAIL perfgap-collbench was built without the NCCL backend (no CUDA/NCCL headers at build time)"; exit 1; }

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
say "GPUs visible: ${gpus:-0}"
gpu_counts=(1)
[ "${gpus:-0}" -gt 1 ] && gpu_counts+=("$gpus")

for g in "${gpu_counts[@]}"; do
  for coll in all_reduce all_gather reduce_scatter alltoall; do
    name=$coll-g$g
    timeout "$per_run_s" "$bench" "$coll" -g "$g" -b 8 -e 128M -f 2 >"$out/$name.txt" 2>"$out/$name.err"
    rc=$?
    rows=$(grep -cE '^ *[0-9]+ +[0-9]+ +float' "$out/$name.txt" || true)
    # Sum of both #wrong columns; N/A (in-place alltoall, not checked, as nccl-tests) adds 0.
    wrong=$(awk '!/^#/ && NF >= 13 { w += ($9 == "N/A" ? 0 : $9) + ($13 == "N/A" ? 0 : $13) } END { print w + 0 }' "$out/$name.txt")
    "$perfgap" analyze nccl-tests "$out/$name.txt" --format json >"$out/$name.analyze.json" 2>"$out/$name.analyze.err"
    arc=$?
    verdict=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["findings"][0]; print(f["status"], "-", f["title"])' \
                "$out/$name.analyze.json" 2>/dev/null || echo "unreadable (exit $arc)")
    status=PASS
    if [ "$rc" -ne 0 ] || [ "$rows" -ne 25 ] || [ "$wrong" != 0 ] || [ "$arc" -ne 0 ]; then status=FAIL; failed=1; fi
    say "$status $name: exit $rc, $rows rows (want 25), #wrong $wrong, analyze exit $arc: $verdict"
    [ -s "$out/$name.err" ] && say "     stderr: $(head -c 300 "$out/$name.err")"
  done
done

# The CLI tests of the benchmark, when the test binary was built (they exercise -g 1 here).
if [ -x "$build/tests/perfgap_cli_tests" ]; then
  timeout 300 "$build/tests/perfgap_cli_tests" --gtest_filter='Collbench*' >"$out/cli-tests.txt" 2>&1
  say "cli tests (Collbench*): exit $?"
fi

say "outputs in $out"
exit "$failed"
