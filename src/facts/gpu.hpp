// NVML facts from perfgap-gpu (src/gpu_helper, docs/GPU.md), for the gpu.* node checks and
// snapshot. Live, the helper found beside perfgap (or named by $PERFGAP_GPU_HELPER) is run
// twice, kNvmlSampleGap apart, each run bounded by a deadline cut from the check budget, so
// the rules see counter growth (PCIe replays, NVLink errors); --nvml is passed through when
// asked. Under --root the documents a snapshot stored (kNvmlFirstPath, kNvmlSecondPath) are
// replayed, or the reason it stored instead (kNvmlWhyPath). Running the helper is this
// fact's job: the checks only judge what it returns.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "facts/facts.hpp"
#include "parsers/nvml_json.hpp"

namespace perfgap::facts {

inline constexpr const char* kNvmlFirstPath = "/.perfgap/nvml-1.json";
inline constexpr const char* kNvmlSecondPath = "/.perfgap/nvml-2.json";
inline constexpr const char* kNvmlWhyPath = "/.perfgap/nvml-why.txt";  // one line: why there is no document
// Between the end of the first run and the start of the second: growth over this long is a
// link retransmitting now, not a count left from months ago.
inline constexpr std::chrono::milliseconds kNvmlSampleGap{1000};
// The longest --deadline given to one run (the helper's own default is 10 s).
inline constexpr int kNvmlMaxDeadlineS = 5;

struct NvmlSample {
  std::string json;    // the document as the helper printed it (what snapshot stores)
  parsers::NvmlHelperOutput doc;
  std::string source;  // "perfgap-gpu run 1" live, or the tree's file
};

struct NvmlSamples {
  NvmlSample first;
  std::optional<NvmlSample> second;  // the same GPUs again, for counter growth
  std::string second_why;            // why there is no second sample ("" when there is)
  int deadline_s = 0;                // live: the --deadline each run was given
};

// The helpers perfgap may run, in the order it tries them: $PERFGAP_GPU_HELPER alone when
// set (tests, unusual installs); else the copy embedded in perfgap itself, started from
// memory (a sealed memfd: the static binary stays one file), then perfgap-gpu in perfgap's
// own directory, for when the kernel or a policy refuses to execute from memory.
struct GpuHelperCandidate {
  std::string path;  // what is executed ("/proc/self/fd/N" for the embedded copy)
  std::string how;   // for evidence: "embedded in perfgap, run from memory", "beside perfgap (/x/perfgap-gpu)", ...
};
struct GpuHelperChoice {
  std::vector<GpuHelperCandidate> candidates;  // empty: none usable, `why` says each one's problem
  std::string why;                             // why the embedded or installed copies were passed over ("" when none was)
};
// The pure choice (unit-tested): `override_path` is $PERFGAP_GPU_HELPER ("" unset);
// `embedded` the memfd path or, failing, why ("" path and why: this build carries none);
// `beside` the path next to perfgap ("" when perfgap's directory is unknown) and its problem.
GpuHelperChoice choose_gpu_helpers(const std::string& override_path, const std::string& override_problem,
                                   const std::string& embedded_path, const std::string& embedded_why,
                                   const std::string& beside_path, const std::string& beside_problem);
// This process's choice (the embedded copy is put in memory once, on first use).
const GpuHelperChoice& gpu_helpers();

// The first candidate's path ("" when none is usable): `overridden` says whether it is
// $PERFGAP_GPU_HELPER. probe --gpu runs this one.
std::string gpu_helper_path(bool* overridden = nullptr);

// missing() says why there is no document: the helper is not installed, no NVIDIA driver
// library (exit 3), NVML did not initialise (4) or answer in time (5), a tree that did not
// capture it. Options::nvml passes --nvml; Options::gpu_helper_budget bounds both runs.
const Avail<NvmlSamples>& nvml_samples(Facts& f);

}  // namespace perfgap::facts
