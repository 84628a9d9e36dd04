#!/usr/bin/env bash
# One-shot checks on a machine with NVIDIA GPUs, of what the CPU-only CI and development
# machines cannot run. Builds perfgap, perfgap-gpu and perfgap-collbench unless a build
# directory that has them is given, and keeps everything under $OUT. Two parts:
#   nvml  perfgap-gpu against the real driver (docs/GPU.md: never run on one before): the
#         helper's document without and with --nvml, `perfgap check --only 'gpu.*' --format
#         json` (both ways) with the helper, and `nvidia-smi -q -x` read back by `perfgap analyze
#         nvidia-smi`, to compare NVML's answers with nvidia-smi's. Each run bounded (60 s).
#   probe perfgap-gpu --probe against the real CUDA driver (docs/PROBE.md: never run on one
#         before): H2D/D2H GB/s from each NUMA node and empty-kernel launch latency per GPU,
#         then `perfgap probe --gpu` and `perfgap probe --cpu --memory` (each bounded, 180 s).
#   nccl  perfgap-collbench's NCCL backend: all four collectives on one GPU (and on every GPU
#         when there are several) from 8 B to 128 MiB, each read back with `perfgap analyze
#         nccl-tests` (each run bounded by GPU_CHECK_RUN_TIMEOUT_S, default 180 s).
#
#   tools/gpu-check.sh [BUILD_DIR]          BUILD_DIR default: build-gpucheck (configured if needed)
#   OUT=/some/dir tools/gpu-check.sh        where the outputs go (default: ./gpu-check-out)
#   GPU_CHECK_PARTS=nvml tools/gpu-check.sh only some parts (default: "nvml probe nccl"); the
#                                           nvml and probe parts take well under two minutes each
#                                           after the build
#
# Exits 0 when every run passed: the helper exited 0 with a document perfgap reads and check
# gave gpu findings, the probes gave probe.h2d figures for every GPU, every collective run exited 0 with every #wrong 0 and every output
# parsed; non-zero otherwise. summary.txt lists each run.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build-gpucheck}
out=${OUT:-$PWD/gpu-check-out}
per_run_s=${GPU_CHECK_RUN_TIMEOUT_S:-180}
parts=${GPU_CHECK_PARTS:-nvml probe nccl}
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
helper=$build/src/gpu_helper/perfgap-gpu
need_bench=0; [[ " $parts " == *" nccl "* ]] && need_bench=1
if { [ "$need_bench" = 1 ] && [ ! -x "$bench" ]; } || [ ! -x "$perfgap" ] || [ ! -x "$helper" ]; then
  say "== building in $build"
  if ! { cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFGAP_TESTS=OFF &&
         cmake --build "$build" --target perfgap perfgap-gpu perfgap-collbench; } >"$out/build.log" 2>&1; then
    say "FAIL build (see build.log)"
    tail -n 30 "$out/build.log"
    exit 1
  fi
fi

# ---- nvml: perfgap-gpu and the gpu.* checks against the real driver --------------------
if [[ " $parts " == *" nvml "* ]]; then
  say "== nvml"
  readelf -d "$helper" | grep NEEDED >"$out/perfgap-gpu.needed" 2>&1
  for mode in plain nvml; do
    flag=(); [ "$mode" = nvml ] && flag=(--nvml)
    timeout 60 "$helper" --deadline 30 "${flag[@]}" >"$out/perfgap-gpu.$mode.json" 2>"$out/perfgap-gpu.$mode.err"
    rc=$?
    # The document read back by perfgap's own parser, through the check (PERFGAP_GPU_HELPER).
    PERFGAP_GPU_HELPER=$helper timeout 60 "$perfgap" check --only 'gpu.*' --format json "${flag[@]}" \
      >"$out/check-gpu.$mode.json" 2>"$out/check-gpu.$mode.err"
    crc=$?
    verdicts=$(python3 -c 'import json,sys,collections
r=json.load(open(sys.argv[1])); c=collections.Counter(f["id"]+"="+f["status"] for f in r["findings"])
print(", ".join(f"{k} x{v}" for k,v in sorted(c.items())))' "$out/check-gpu.$mode.json" 2>/dev/null || echo "unreadable")
    gpus=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["gpus"]), "GPUs, driver", d.get("driver_version"), "missing_calls", d.get("missing_calls"))' \
             "$out/perfgap-gpu.$mode.json" 2>/dev/null || echo "no document")
    status=PASS
    if [ "$rc" -ne 0 ] || { [ "$crc" -ne 0 ] && [ "$crc" -ne 1 ]; } || [ "$verdicts" = unreadable ]; then status=FAIL; failed=1; fi
    say "$status perfgap-gpu ($mode): exit $rc, $gpus; check exit $crc: $verdicts"
    [ -s "$out/perfgap-gpu.$mode.err" ] && say "     stderr: $(head -c 300 "$out/perfgap-gpu.$mode.err")"
  done
  # nvidia-smi's view of the same GPUs, judged by the same rules from the capture.
  if timeout 60 nvidia-smi -q -x >"$out/nvidia-smi-q.xml" 2>"$out/nvidia-smi-q.err"; then
    timeout 60 "$perfgap" analyze nvidia-smi "$out/nvidia-smi-q.xml" --format json >"$out/analyze-nvidia-smi.json" 2>&1
    say "analyze nvidia-smi -q -x: exit $?"
  else
    say "nvidia-smi -q -x failed (see nvidia-smi-q.err)"
  fi
fi
# ---- probe: perfgap-gpu --probe and perfgap probe against the real driver ------------------
if [[ " $parts " == *" probe "* ]]; then
  say "== probe"
  nodes=$(cat /sys/devices/system/node/has_memory 2>/dev/null || echo 0)
  timeout 180 "$helper" --probe --nodes "$nodes" --deadline 150 >"$out/perfgap-gpu.probe.json" 2>"$out/perfgap-gpu.probe.err"
  rc=$?
  figures=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for g in d["gpus"]:
    c=" ".join("node%d H2D %s D2H %s%s" % (x["node"], x.get("h2d_gbps"), x.get("d2h_gbps"), (" error "+x["error"]) if "error" in x else "") for x in g.get("copies",[]))
    l=g.get("launch",{})
    print("GPU %d %s %s: %s; launch p50 %s us p99 %s us (%s)%s" % (g["index"], g.get("name"), g.get("pci_bus_id"), c, l.get("p50_us"), l.get("p99_us"), l.get("count"), (" error "+g["error"]) if "error" in g else ""))' \
            "$out/perfgap-gpu.probe.json" 2>/dev/null || echo "no document")
  status=PASS; [ "$rc" -ne 0 ] && { status=FAIL; failed=1; }
  say "$status perfgap-gpu --probe --nodes $nodes: exit $rc"
  while IFS= read -r line; do say "     $line"; done <<<"$figures"
  [ -s "$out/perfgap-gpu.probe.err" ] && say "     stderr: $(head -c 300 "$out/perfgap-gpu.probe.err")"
  for what in gpu "cpu memory"; do
    name=probe-${what// /-}
    args=(); for w in $what; do args+=("--$w"); done
    PERFGAP_GPU_HELPER=$helper timeout 180 "$perfgap" probe "${args[@]}" --format json >"$out/$name.json" 2>"$out/$name.err"
    prc=$?
    verdicts=$(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
for f in r["findings"]:
    m=", ".join("%s=%.2f" % (k, v) for k, v in sorted(f.get("metrics",{}).items()))
    print("%s %s %s: %s [%s]" % (f["id"], f.get("subject",""), f["status"], f["title"], m))' "$out/$name.json" 2>/dev/null || echo "unreadable")
    status=PASS
    if { [ "$prc" -ne 0 ] && [ "$prc" -ne 1 ]; } || [ "$verdicts" = unreadable ]; then status=FAIL; failed=1; fi
    # On a GPU machine the GPU probe must have measured (not skipped) every GPU.
    if [ "$what" = gpu ] && ! grep -q '"h2d_gbps_node' "$out/$name.json"; then status=FAIL; failed=1; fi
    say "$status perfgap probe ${args[*]}: exit $prc"
    while IFS= read -r line; do say "     $line"; done <<<"$verdicts"
  done
fi
[[ " $parts " == *" nccl "* ]] || { say "outputs in $out"; exit "$failed"; }

# ---- nccl: perfgap-collbench's NCCL backend ---------------------------------------------
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
