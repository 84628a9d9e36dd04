// The framework a profile shows (parsers::framework_of) and the fixes written in its words
// (field review 2, item 12): an OpenMP offload export got PyTorch's .item() and
// torch.cuda.synchronize(). The real exports of ../shared (skipped without it) and generated
// profiles (tests/support/profile_gen) of each framework's names.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "analyzers/analyzers.hpp"
#include "analyzers/profile_model.hpp"
#include "files.hpp"
#include "findings.hpp"
#include "parsers/profile.hpp"
#include "profile_gen.hpp"
#include "profile_read.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using fixture::find;
using parsers::Framework;
using report::Status;

namespace {

const std::vector<std::string> kFwTorchWords = {".item()", "torch.", "non_blocking", "torch.compile", "pin_memory", "DataLoader", "zero_grad",
                                              "torch.profiler", ".cpu()"};
const std::vector<std::string> kFwJaxWords = {"jax.", "XLA", "jit", "donate_argnums", "--xla_gpu"};
const std::vector<std::string> kFwOmpWords = {"nowait", "target data", "taskwait", "target update", "omp_target_memcpy"};

// The words of `words` that `text` holds.
std::vector<std::string> fw_words_in(const std::string& text, const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const auto& w : words)
    if (text.find(w) != std::string::npos) out.push_back(w);
  return out;
}

bool fw_has_evidence(const report::Finding& f, const std::string& part) {
  for (const auto& e : f.evidence)
    if (e.observed.find(part) != std::string::npos) return true;
  return false;
}

std::string fw_evidence_text(const report::Finding& f) {
  std::string out;
  for (const auto& e : f.evidence) out += e.observed + "\n";
  return out;
}

parsers::Profile fw_real_export(const std::string& name) {
  const auto path = fs::path(PERFGAP_SHARED_DIR) / "fixtures" / "profiles" / name;
  if (!fs::exists(path)) return {};
  auto p = parsers::read_nsys_sqlite(fixture::read_file(path));
  EXPECT_TRUE(p) << p.error().describe();
  return p ? std::move(*p) : parsers::Profile{};
}

// gen::launch_bound (small kernels the host cannot launch fast enough) with other kernel names.
gen::Scenario fw_launch_bound_named(const std::string& kernel) {
  auto s = gen::launch_bound(1, 5);
  for (auto& g : s.gpus)
    for (auto& k : g.kernels) k.name = kernel;
  return s;
}

}  // namespace

// The issue's export: an OpenMP offload program, no Python. Its fixes name target regions,
// nowait and target data, never PyTorch.
TEST(ProfileFramework, RealOpenMpExportGetsOpenMpWordsNotTorch) {
  auto p = fw_real_export("nsys_2021_v100pcie_x2_openmp_report2.sqlite");
  if (p.acts.empty()) GTEST_SKIP() << "no shared fixture nsys_2021_v100pcie_x2_openmp_report2.sqlite";
  EXPECT_EQ(p.framework.framework, Framework::openmp) << p.framework.why;
  EXPECT_NE(p.framework.why.find("2419 of 2419 kernels OpenMP target regions (__omp_offloading_*)"), std::string::npos) << p.framework.why;
  // Another process's thread (python3, pid 5343) is not the program's.
  for (const auto& t : p.threads) EXPECT_NE(t, "python3");
  auto fs = analyzers::analyze_profile(p, "omp", {});
  const auto& lb = find(fs, "profile.launch_bound");
  ASSERT_EQ(lb.status, Status::warn) << lb.title;
  EXPECT_TRUE(fw_words_in(lb.fix, kFwTorchWords).empty()) << lb.fix;
  EXPECT_EQ(fw_words_in(lb.fix, kFwOmpWords).size(), kFwOmpWords.size()) << lb.fix;
  EXPECT_TRUE(fw_has_evidence(lb, "framework: OpenMP offload (")) << fw_evidence_text(lb);
  const auto& it = find(fs, "profile.iterations");
  EXPECT_TRUE(fw_words_in(it.fix, kFwTorchWords).empty()) << it.fix;
  EXPECT_NE(it.fix.find("nvtxRangePushA"), std::string::npos) << it.fix;
}

// The exports named ..._jax_report{1,2} are not JAX's: ATen's and nvFuser's kernels, nvFuser's
// NVTX ranges (a PyTorch container running lightning-thunder). They are read as PyTorch, and
// keep PyTorch's fix.
TEST(ProfileFramework, RealJaxNamedExportsAreReadAsPyTorchFromTheirKernels) {
  for (const std::string name : {"nsys_2023.2.3_v100x8_jax_report1.exported-by-nsys-2023.4.4.sqlite",
                                 "nsys_2023.2.3_v100x8_jax_report2.exported-by-nsys-2023.4.4.sqlite"}) {
    SCOPED_TRACE(name);
    auto p = fw_real_export(name);
    if (p.acts.empty()) GTEST_SKIP() << "no shared fixture " << name;
    EXPECT_EQ(p.framework.framework, Framework::pytorch) << p.framework.why;
    EXPECT_NE(p.framework.why.find("in ATen's namespace (at::)"), std::string::npos) << p.framework.why;
    auto fs = analyzers::analyze_profile(p, "jax", {});
    const auto& lb = find(fs, "profile.launch_bound");
    if (lb.status != Status::warn) continue;
    EXPECT_NE(lb.fix.find("torch.compile"), std::string::npos) << lb.fix;
    EXPECT_TRUE(fw_words_in(lb.fix, kFwOmpWords).empty()) << lb.fix;
    EXPECT_TRUE(fw_has_evidence(lb, "framework: PyTorch (")) << fw_evidence_text(lb);
  }
}

// XLA's kernels and NVTX ranges: JAX's words (block_until_ready, jit, XLA's command buffers), no torch.
TEST(ProfileFramework, JaxProfileGetsJaxWords) {
  {
    auto p = fixture::profile_from_nsys(gen::sync_every_kernel("loop_add_fusion_3", "XlaModule:#hlo_module=jit_train_step,program_id="));
    EXPECT_EQ(p.framework.framework, Framework::jax) << p.framework.why;
    auto fs = analyzers::analyze_profile(p, "jax", {});
    const auto& lb = find(fs, "profile.launch_bound");
    ASSERT_EQ(lb.status, Status::warn) << lb.title;
    EXPECT_TRUE(fw_words_in(lb.fix, kFwTorchWords).empty()) << lb.fix;
    EXPECT_NE(lb.fix.find("jax.block_until_ready()"), std::string::npos) << lb.fix;
    EXPECT_TRUE(fw_has_evidence(lb, "framework: JAX/XLA (")) << fw_evidence_text(lb);
  }
  {
    auto p = fixture::profile_from_nsys(fw_launch_bound_named("input_reduce_fusion_12"));
    EXPECT_EQ(p.framework.framework, Framework::jax) << p.framework.why;
    auto fs = analyzers::analyze_profile(p, "jax", {});
    const auto& lb = find(fs, "profile.launch_bound");
    ASSERT_EQ(lb.status, Status::warn) << lb.title;
    EXPECT_TRUE(fw_words_in(lb.fix, kFwTorchWords).empty()) << lb.fix;
    EXPECT_NE(lb.fix.find("--xla_gpu_enable_command_buffer"), std::string::npos) << lb.fix;
    EXPECT_NE(lb.fix.find("jit whole training steps"), std::string::npos) << lb.fix;
  }
}

// Names of no framework: CUDA's own calls, neither PyTorch's nor JAX's nor OpenMP's.
TEST(ProfileFramework, UnknownFrameworkGetsCudaWords) {
  for (const auto& s : {gen::sync_every_kernel("void my_solver_step<float>(float*, int)", "step "), fw_launch_bound_named("void stencil7(double*)")}) {
    auto p = fixture::profile_from_nsys(s);
    EXPECT_EQ(p.framework.framework, Framework::unknown) << p.framework.why;
    auto fs = analyzers::analyze_profile(p, "app", {});
    const auto& lb = find(fs, "profile.launch_bound");
    ASSERT_EQ(lb.status, Status::warn) << lb.title;
    EXPECT_TRUE(fw_words_in(lb.fix, kFwTorchWords).empty()) << lb.fix;
    EXPECT_TRUE(fw_words_in(lb.fix, kFwJaxWords).empty()) << lb.fix;
    EXPECT_TRUE(fw_words_in(lb.fix, kFwOmpWords).empty()) << lb.fix;
    EXPECT_TRUE(lb.fix.find("cudaStreamSynchronize") != std::string::npos || lb.fix.find("cudaStreamBeginCapture") != std::string::npos) << lb.fix;
    EXPECT_TRUE(fw_has_evidence(lb, "framework: not recognised (")) << fw_evidence_text(lb);
  }
}

// A Kineto trace is PyTorch's by construction: the PyTorch fix stays, said so.
TEST(ProfileFramework, KinetoTraceKeepsThePyTorchFix) {
  auto p = fixture::profile_from_kineto_ranks(gen::sync_every_kernel("void my_solver_step<float>(float*, int)", "ProfilerStep#"));
  EXPECT_EQ(p.framework.framework, Framework::pytorch);
  auto fs = analyzers::analyze_profile(p, "kineto", {});
  const auto& lb = find(fs, "profile.launch_bound");
  ASSERT_EQ(lb.status, Status::warn) << lb.title;
  EXPECT_NE(lb.fix.find(".item()"), std::string::npos) << lb.fix;
  EXPECT_NE(lb.fix.find("torch.cuda.set_sync_debug_mode('warn')"), std::string::npos) << lb.fix;
  EXPECT_TRUE(fw_has_evidence(lb, "framework: PyTorch (a PyTorch profiler (Kineto) trace)")) << fw_evidence_text(lb);
}

// Two frameworks' names in one profile, or a plain word: unknown, never a guess.
TEST(ProfileFramework, MixedOrWeakNamesAreUnknown) {
  auto s = gen::sync_every_kernel("void at::native::vectorized_elementwise_kernel<4, op>(int)", "step ");
  s.gpus[0].kernels[0].name = "__omp_offloading_31_18a80bc__Z2mmlllid_l17";
  auto p = fixture::profile_from_nsys(s);
  EXPECT_EQ(p.framework.framework, Framework::unknown) << p.framework.why;
  EXPECT_NE(p.framework.why.find("more than one framework"), std::string::npos) << p.framework.why;
  // One kernel named like an XLA fusion among 100 others: a program's own name, not XLA's.
  auto w = gen::sync_every_kernel("void my_solver_step<float>(float*, int)", "step ");
  w.gpus[0].kernels[0].name = "fusion";
  EXPECT_EQ(fixture::profile_from_nsys(w).framework.framework, Framework::unknown);
}

// The framework travels in the digest (whatif --digest) and joins a job's ranks.
TEST(ProfileFramework, DigestCarriesTheFrameworkAndRanksJoin) {
  auto p = fixture::profile_from_nsys(gen::sync_every_kernel("__omp_offloading_31_18a80bc__Z2mmlllid_l17", "step "));
  ASSERT_EQ(p.framework.framework, Framework::openmp);
  const auto d = analyzers::profile_model::digest(p, {});
  EXPECT_EQ(d.framework.framework, Framework::openmp);
  auto back = analyzers::profile_model::deserialize_digest(analyzers::profile_model::serialize_digest(d, "omp", {}));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->digest.framework.framework, Framework::openmp);
  EXPECT_EQ(back->digest.framework.why, d.framework.why);
  const parsers::FrameworkSeen torch{Framework::pytorch, "a PyTorch profiler (Kineto) trace"};
  EXPECT_EQ(parsers::framework_joined(d.framework, d.framework).framework, Framework::openmp);
  EXPECT_EQ(parsers::framework_joined({}, d.framework).framework, Framework::openmp);
  const auto mixed = parsers::framework_joined(d.framework, torch);
  EXPECT_EQ(mixed.framework, Framework::unknown);
  EXPECT_NE(mixed.why.find("the inputs differ"), std::string::npos) << mixed.why;
}

// whatif replays a job's traces: its launch change's fix is in the framework's words too. The
// generated job as Kineto traces (PyTorch), and as nsys exports whose compute kernels are an
// OpenMP program's target regions and whose steps are NVTX ranges named "step N".
TEST(ProfileFramework, WhatifLaunchFixSpeaksTheJobsFramework) {
  gen::JobSpec spec;
  spec.ranks = 4;
  spec.launch_bound_rank = 2;
  spec.launch_gap_us = 500;
  auto s = gen::job(spec);
  auto launch_of = [](const std::vector<report::Finding>& fs) -> const report::Finding* {
    for (const auto& f : fs)
      if (f.id == "whatif.launch") return &f;
    return nullptr;
  };
  {
    const auto t = fixture::kinetos_of_ranks(s);
    const auto fs = analyzers::whatif_profile_job(t.files, t.reader(), {}, {}, 2).findings;
    const auto* l = launch_of(fs);
    ASSERT_NE(l, nullptr);
    ASSERT_EQ(l->status, Status::warn) << l->title;
    EXPECT_NE(l->fix.find("torch.compile"), std::string::npos) << l->fix;
    EXPECT_TRUE(fw_has_evidence(*l, "framework: PyTorch (")) << fw_evidence_text(*l);
  }
  for (auto& g : s.gpus)
    for (auto& k : g.kernels)
      if (parsers::nccl_collective(k.name) == parsers::Coll::none) k.name = "__omp_offloading_31_18a80bc__Z2mmlllid_l17";
  for (auto& r : s.ranges) r.name = "step " + r.name.substr(r.name.find('#') + 1);
  fixture::TempDir dir;
  const auto files = fixture::nsys_rank_files(s, dir);
  const auto fs = analyzers::whatif_profile_job(files, fixture::nsys_file_reader(), {}, {}, 2).findings;
  const auto* l = launch_of(fs);
  ASSERT_NE(l, nullptr);
  ASSERT_EQ(l->status, Status::warn) << l->title;
  EXPECT_TRUE(fw_words_in(l->fix, kFwTorchWords).empty()) << l->fix;
  EXPECT_NE(l->fix.find("target regions launched with nowait"), std::string::npos) << l->fix;
  EXPECT_TRUE(fw_has_evidence(*l, "framework: OpenMP offload (")) << fw_evidence_text(*l);
}
