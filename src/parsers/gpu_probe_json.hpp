// The JSON document `perfgap-gpu --probe` prints (docs/PROBE.md): per GPU, copy bandwidth from
// pinned host memory bound to each NUMA node and the launch latency of an empty kernel. Text
// in, a model out; a field of the wrong type is an error naming it (fuzz/fuzz_gpu_probe_json).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

struct GpuProbeCopy {
  int node = -1;  // the NUMA node the pinned host buffer was bound to
  std::optional<double> h2d_gbps, d2h_gbps;
  std::string error;  // why this node's buffer could not be measured
};

struct GpuProbeDevice {
  int index = 0;
  std::string name, bus_id;  // bus_id as CUDA prints it ("0000:18:00.0")
  std::vector<GpuProbeCopy> copies;
  std::optional<double> launch_p50_us, launch_p99_us;
  int launches = 0;
  std::string error;  // the GPU could not be probed at all (context, module, ...)
};

struct GpuProbeDoc {
  std::string driver_version;  // cuDriverGetVersion, "12.4"
  std::vector<GpuProbeDevice> gpus;
  std::string error;  // a document-level failure (cuInit refused, no device)
};

inline constexpr std::size_t kMaxGpuProbeBytes = 4u << 20;

Parsed<GpuProbeDoc> parse_gpu_probe_json(std::string_view text);

}  // namespace perfgap::parsers
