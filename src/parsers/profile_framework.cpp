// The framework a GPU profile's names show (parsers/profile.hpp framework_of): its kernels',
// NVTX ranges' and threads' names, each a strong sign of one framework, counted; a framework
// is named only where one shows and no other does.
#include "parsers/profile.hpp"

#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace perfgap::parsers {

namespace {

constexpr std::size_t kFrameworks = 4;

// XLA's fusion kernels: `fusion`, `fusion_12`, `loop_add_fusion`, `input_reduce_fusion_3`,
// `fusion.7`: lower-case words joined by `_` ending in `fusion`, an optional `_N` or `.N`.
bool xla_fusion_name(std::string_view n) {
  while (!n.empty() && std::isdigit(static_cast<unsigned char>(n.back()))) n.remove_suffix(1);
  if (!n.empty() && (n.back() == '_' || n.back() == '.')) n.remove_suffix(1);
  if (!n.ends_with("fusion")) return false;
  for (char c : n)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// TorchInductor's Triton kernels: triton_poi_fused_*, triton_red_fused_*, triton_per_fused_*, triton_tem_fused_*.
bool inductor_name(std::string_view n) {
  if (!n.starts_with("triton_")) return false;
  n.remove_prefix(7);
  return n.size() > 10 && n.substr(3, 7) == "_fused_";
}

enum KernelSign : std::uint8_t { kNoSign, kAten, kInductor, kNvfuser, kXlaFusion, kOmpOffload, kNvhpcOffload, kKernelSigns };
constexpr std::array<std::string_view, kKernelSigns> kKernelSignWords = {
    "",
    "in ATen's namespace (at::)",
    "TorchInductor's (triton_*_fused_*)",
    "nvFuser's (CudaCodeGen::)",
    "XLA fusions (fusion_N, loop_*_fusion, input_*_fusion)",
    "OpenMP target regions (__omp_offloading_*)",
    "NVHPC OpenMP target regions (nvkernel_*)"};
constexpr std::array<Framework, kKernelSigns> kKernelSignOf = {Framework::unknown, Framework::pytorch, Framework::pytorch, Framework::pytorch,
                                                               Framework::jax,     Framework::openmp,  Framework::openmp};

KernelSign kernel_sign(std::string_view name) {
  const std::string_view n = kernel_base_name(name);  // nsys's are already; Kineto's start "void at::native::...<...>(...)"
  if (n.starts_with("at::")) return kAten;
  if (inductor_name(n)) return kInductor;
  if (n.starts_with("CudaCodeGen::")) return kNvfuser;
  if (n.starts_with("__omp_offloading_")) return kOmpOffload;
  if (n.starts_with("nvkernel_")) return kNvhpcOffload;
  if (xla_fusion_name(n)) return kXlaFusion;
  return kNoSign;
}

Framework range_sign(std::string_view n) {
  if (n.starts_with("aten::") || n.starts_with("ProfilerStep#")) return Framework::pytorch;
  if (n.starts_with("XlaModule:") || n.starts_with("Thunk:")) return Framework::jax;
  return Framework::unknown;
}

Framework thread_sign(std::string_view n) {
  if (n.starts_with("pt_autograd") || n == "pt_main_thread") return Framework::pytorch;
  if (n.find("XLA") != std::string_view::npos || n.find("PjRt") != std::string_view::npos || n.find("pjrt") != std::string_view::npos)
    return Framework::jax;
  return Framework::unknown;
}

struct FrameworkSigns {
  std::array<std::size_t, kKernelSigns> kernels{};
  std::size_t all_kernels = 0;
  std::array<std::size_t, kFrameworks> ranges{};
  std::array<std::string, kFrameworks> range_example, thread_example;
  // What shows each framework, in words; empty: nothing.
  std::array<std::vector<std::string>, kFrameworks> said;
};

void framework_words(FrameworkSigns& s) {
  for (int k = 1; k < kKernelSigns; ++k) {
    const auto fw = static_cast<std::size_t>(kKernelSignOf[k]);
    // XLA's fusion names are plain words a program's own kernel may have: a tenth of the kernels at least.
    if (s.kernels[k] == 0 || (k == kXlaFusion && s.kernels[k] * 10 < s.all_kernels)) continue;
    s.said[fw].push_back(fmt::format("{} of {} kernels {}", s.kernels[k], s.all_kernels, kKernelSignWords[k]));
  }
  for (std::size_t fw = 1; fw < kFrameworks; ++fw) {
    if (s.ranges[fw]) s.said[fw].push_back(fmt::format("{} NVTX ranges such as '{}'", s.ranges[fw], s.range_example[fw]));
    if (!s.thread_example[fw].empty()) s.said[fw].push_back(fmt::format("a thread named '{}'", s.thread_example[fw]));
  }
}

}  // namespace

std::string_view framework_name(Framework f) {
  switch (f) {
    case Framework::pytorch: return "PyTorch";
    case Framework::jax: return "JAX/XLA";
    case Framework::openmp: return "OpenMP offload";
    case Framework::unknown: return "unknown";
  }
  return "unknown";
}

FrameworkSeen framework_of(const Profile& p) {
  FrameworkSigns s;
  constexpr std::uint8_t kNotLooked = kKernelSigns;
  std::vector<std::uint8_t> sign_of(p.names.size(), kNotLooked);  // per distinct kernel name, once
  for (const auto& a : p.acts) {
    if (a.kind != ActKind::kernel) continue;
    ++s.all_kernels;
    if (a.name >= sign_of.size()) continue;
    auto& k = sign_of[a.name];
    if (k == kNotLooked) k = kernel_sign(p.names[a.name]);
    ++s.kernels[k];
  }
  for (const auto& r : p.ranges) {
    if (r.name >= p.names.size()) continue;
    const auto fw = static_cast<std::size_t>(range_sign(p.names[r.name]));
    if (fw == 0) continue;
    if (s.ranges[fw]++ == 0) s.range_example[fw] = p.names[r.name].substr(0, 40);
  }
  for (const auto& t : p.threads) {
    const auto fw = static_cast<std::size_t>(thread_sign(t));
    if (fw != 0 && s.thread_example[fw].empty()) s.thread_example[fw] = t.substr(0, 40);
  }
  framework_words(s);
  FrameworkSeen out;
  std::vector<std::size_t> shown;
  for (std::size_t fw = 1; fw < kFrameworks; ++fw)
    if (!s.said[fw].empty()) shown.push_back(fw);
  if (shown.size() == 1) {
    out.framework = static_cast<Framework>(shown[0]);
    out.why = fmt::format("{}", fmt::join(s.said[shown[0]], "; "));
  } else if (shown.empty()) {
    out.why = "no kernel, NVTX range or thread named as PyTorch, JAX/XLA or OpenMP offload name theirs";
  } else {
    std::vector<std::string> each;
    each.reserve(shown.size());
    for (auto fw : shown) each.push_back(fmt::format("{}: {}", framework_name(static_cast<Framework>(fw)), fmt::join(s.said[fw], "; ")));
    out.why = fmt::format("names of more than one framework ({})", fmt::join(each, "; "));
  }
  return out;
}

FrameworkSeen framework_joined(const FrameworkSeen& a, const FrameworkSeen& b) {
  if (a.framework == b.framework) return a.why.empty() ? b : a;
  if (a.why.empty()) return b;  // a profile not read yet (a default Profile or Digest)
  if (b.why.empty()) return a;
  return {Framework::unknown, fmt::format("the inputs differ: {} in one ({}), {} in another ({})", framework_name(a.framework), a.why,
                                          framework_name(b.framework), b.why)};
}

}  // namespace perfgap::parsers
