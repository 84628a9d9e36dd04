// profile.launch_bound when the host synchronises after every kernel (issue: an OpenMP offload
// export whose 2,419 cuLaunchKernel calls each wait in cuStreamSynchronize for its ~1 ms kernel):
// the GPU waits on the host's syncs, not on slow launches of small kernels, and the finding says
// so. Generated profiles (tests/support/profile_gen) with the syncs as runtime calls.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "analyzers/analyzers.hpp"
#include "files.hpp"
#include "findings.hpp"
#include "parsers/profile.hpp"
#include "profile_gen.hpp"
#include "profile_read.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using fixture::find;
using fixture::metric;
using report::Status;

namespace {

// The OpenMP export's shape (gen::sync_every_kernel) as PyTorch steps: each 1 ms kernel followed
// by a host wait when `sync`; the GPU idles 170 us of every 1170 us waiting for the host.
gen::Scenario sync_every_kernel(bool sync) {
  return gen::sync_every_kernel("void omp_offload_region_kernel<float>(float*, int)", "ProfilerStep#", sync);
}

}  // namespace

TEST(ProfileLaunchBound, HostSyncAfterEveryKernelIsSaidAndNotTheSmallKernelAdvice) {
  for (const std::string fmt : {"nsys", "kineto"}) {
    SCOPED_TRACE(fmt);
    const auto s = sync_every_kernel(true);
    auto fs = analyzers::analyze_profile(fmt == "nsys" ? fixture::profile_from_nsys(s) : fixture::profile_from_kineto_ranks(s), "omp", {});
    const auto& lb = find(fs, "profile.launch_bound");
    EXPECT_EQ(lb.status, Status::warn) << lb.title;
    EXPECT_DOUBLE_EQ(metric(lb, "sync_calls"), 100);
    EXPECT_NEAR(metric(lb, "syncs_per_launch"), 1, 1e-9);
    EXPECT_NEAR(metric(lb, "short_kernel_pct"), 0, 1e-9);
    EXPECT_NE(lb.title.find("the host synchronises with the GPU after (nearly) every kernel"), std::string::npos) << lb.title;
    EXPECT_NE(lb.fix.find(".item()"), std::string::npos) << lb.fix;
    EXPECT_NE(lb.fix.find("torch.cuda.synchronize()"), std::string::npos) << lb.fix;
    EXPECT_EQ(lb.fix.find("small-kernel"), std::string::npos) << lb.fix;
    EXPECT_EQ(lb.fix.find("torch.compile"), std::string::npos) << lb.fix;
  }
}

TEST(ProfileLaunchBound, WithoutSyncsTheLaunchAdviceStays) {
  const auto s = sync_every_kernel(false);
  auto fs = analyzers::analyze_profile(fixture::profile_from_kineto_ranks(s), "omp", {});
  const auto& lb = find(fs, "profile.launch_bound");
  EXPECT_EQ(lb.status, Status::warn) << lb.title;
  EXPECT_EQ(lb.title.find("synchronises"), std::string::npos) << lb.title;
  EXPECT_NE(lb.fix.find("small-kernel"), std::string::npos) << lb.fix;
}

TEST(ProfileLaunchBound, SyncCallsAreTheOnesThatWaitForTheGpu) {
  for (const char* n : {"cudaStreamSynchronize", "cuStreamSynchronize", "cudaDeviceSynchronize_v3020", "cuCtxSynchronize", "cudaEventSynchronize",
                        "cudaMemcpy", "cudaMemcpy_v3020", "cudaMemcpy2D", "cuMemcpyDtoH_v2",
                        // ROCm's, as HTA's MI250 trace records them
                        "hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize", "hipMemcpy", "hipMemcpyWithStream"})
    EXPECT_TRUE(parsers::is_sync_call(n)) << n;
  for (const char* n : {"cudaLaunchKernel", "cuLaunchKernel", "cudaMemcpyAsync", "cuMemcpyDtoHAsync_v2", "cudaMemsetAsync", "cudaEventRecord",
                        "cudaStreamWaitEvent", "cudaStreamQuery", "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemcpyAsync", "hipMemsetAsync"})
    EXPECT_FALSE(parsers::is_sync_call(n)) << n;
}

// The real export of the issue: 2,434 cuStreamSynchronize calls for 2,419 cuLaunchKernel calls.
TEST(ProfileLaunchBound, RealOpenMpExportSynchronisesAfterEveryKernel) {
  const auto path = fs::path(PERFGAP_SHARED_DIR) / "fixtures" / "profiles" / "nsys_2021_v100pcie_x2_openmp_report2.sqlite";
  if (!fs::exists(path)) GTEST_SKIP() << "no shared fixture " << path;
  auto p = parsers::read_nsys_sqlite(fixture::read_file(path));
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_GE(p->sync_calls, 2434u);
  auto fs = analyzers::analyze_profile(*p, "omp", {});
  const auto& lb = find(fs, "profile.launch_bound");
  EXPECT_NE(lb.title.find("synchronises with the GPU after (nearly) every kernel"), std::string::npos) << lb.title;
  EXPECT_EQ(lb.fix.find("small-kernel"), std::string::npos) << lb.fix;
}

// The iteration table numbers its rows by the trace's own steps (ProfilerStep#2 to #6 here), not 1..N.
TEST(ProfileWords, IterationTableShowsTheTracesStepNumbers) {
  auto fs = analyzers::analyze_profile(fixture::profile_from_kineto_ranks(sync_every_kernel(true)), "omp", {});
  const auto& it = find(fs, "profile.iterations");
  ASSERT_EQ(it.table.size(), 6u) << it.title;
  EXPECT_EQ(it.table[0][0], "step");
  for (std::size_t r = 1; r < it.table.size(); ++r) EXPECT_EQ(it.table[r][0], "#" + std::to_string(r + 1));
}

// Without iterations the share is of the capture, not of an "iteration" that was never found.
TEST(ProfileWords, ExposedCommWithoutIterationsIsAShareOfTheCapture) {
  gen::Scenario s;
  gen::Gpu g;
  std::int64_t t = 1'000'000;
  for (int k = 0; k < 60; ++k) {  // no two kernels alike: no period, no ranges
    gen::Kernel kn;
    kn.name = "kernel_" + std::to_string(k) + "(float*)";
    kn.api_start = t - 20'000, kn.api_end = t - 10'000;
    kn.start = t, kn.end = t + 1'000'000;
    g.kernels.push_back(kn);
    t = kn.end + 10'000;
  }
  gen::Kernel ar;
  ar.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  ar.api_start = t - 20'000, ar.api_end = t - 10'000;
  ar.start = t, ar.end = t + 20'000'000;
  g.kernels.push_back(ar);
  s.gpus.push_back(g);
  auto fs = analyzers::analyze_profile(fixture::profile_from_kineto_ranks(s), "cap", {});
  EXPECT_EQ(find(fs, "profile.iterations").status, Status::skip);
  const auto& ec = find(fs, "profile.exposed_comm", "AllReduce");
  EXPECT_NE(ec.title.find(" ms capture)"), std::string::npos) << ec.title;
  EXPECT_EQ(ec.title.find(" ms iteration)"), std::string::npos) << ec.title;
}
