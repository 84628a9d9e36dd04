#include "report/redact.hpp"

#include <cctype>
#include <string>

namespace perfgap::report {

bool audited_name(std::string_view name) {
  for (std::string_view p : {"NCCL_", "UCX_", "CUDA_", "NVIDIA_", "OMPI_", "PMIX_", "SLURM_", "TORCH_", "NVTE_", "MEGATRON_"})
    if (name.substr(0, p.size()) == p) return true;
  return false;
}

bool secret_name(std::string_view name) {
  std::string upper(name);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::string_view s : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE"})
    if (upper.find(s) != std::string::npos) return true;
  std::size_t start = 0;
  while (start <= upper.size()) {
    auto end = upper.find('_', start);
    if (end == std::string::npos) end = upper.size();
    std::string_view word(upper.data() + start, end - start);
    if (word == "KEY" || word == "APIKEY") return true;
    start = end + 1;
  }
  return false;
}

StringMap audited_environment(const parsers::EnvList& env) {
  StringMap out;
  for (const auto& [k, v] : env) {
    if (!audited_name(k)) continue;
    out[k] = secret_name(k) ? std::string(kRedacted) : v;
  }
  return out;
}

}  // namespace perfgap::report
