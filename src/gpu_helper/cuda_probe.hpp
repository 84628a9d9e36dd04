// perfgap-gpu --probe (cuda_probe.cpp): copy bandwidth from each NUMA node and launch latency
// per GPU, one JSON document on stdout (parsers/gpu_probe_json.hpp reads it). Returns the exit
// status: 0 printed, 2 bad --nodes, 3 libcuda.so.1 not loadable or too old, 4 cuInit failed.
#pragma once

int run_cuda_probe(const char* nodes);
