// The JSON document perfgap-gpu prints (src/gpu_helper/main.cpp, docs/GPU.md) read into the
// GPU facts model (parsers/gpu_facts.hpp). NVML's numbers are turned into the words nvidia-smi
// prints, so the gpu rules judge both sources alike: the fabric state and health mask
// ("Completed", "Healthy", bandwidth "Full"/"Degraded"), P-states ("P0"), NVLink CRC errors
// (flit + data). A fact the helper left out stays nullopt.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/gpu_facts.hpp"
#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

struct NvmlHelperOutput {
  GpuSnapshot snapshot;                                      // schema "perfgap-gpu/1"
  bool forced = false;                                       // run with --nvml
  std::vector<std::string> missing_calls;                    // NVML calls the driver's library lacks
  std::map<std::string, std::string> skipped;                // GPU (uuid, else bus id) -> why it was not queried
  std::map<std::string, std::map<std::string, int>> errors;  // GPU -> call -> NVML error code
};

// Error (with the line of a syntax error) for text that is not JSON, not schema 1, or has a
// field of the wrong type.
Parsed<NvmlHelperOutput> parse_nvml_json(std::string_view text);

}  // namespace perfgap::parsers
