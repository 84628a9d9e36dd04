// The contract's rules for what of an environment may appear in a report.
#pragma once

#include <string_view>

#include "parsers/procfs.hpp"
#include "report/model.hpp"

namespace perfgap::report {

inline constexpr std::string_view kRedacted = "<redacted>";

// NCCL_, UCX_, CUDA_, NVIDIA_, OMPI_, PMIX_, SLURM_, TORCH_, NVTE_, MEGATRON_.
bool audited_name(std::string_view name);
// Names containing TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL or PRIVATE, or with KEY or
// APIKEY as one of their '_'-separated words (WANDB_API_KEY; not NCCL_IB_PKEY).
bool secret_name(std::string_view name);
// The audited variables, secrets redacted; the last value of a repeated name wins.
StringMap audited_environment(const parsers::EnvList& env);

}  // namespace perfgap::report
