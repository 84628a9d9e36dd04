// Profiles (analyze nsys / kineto): the readers and the profile.* findings on generated
// profiles with known overlap, idle and launch patterns (tests/support/profile_gen), bad
// inputs, and every real capture of ../shared/fixtures/profiles against an independent count.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analyzers/analyzers.hpp"
#include "facts/nccl.hpp"
#include "facts/platform.hpp"
#include "files.hpp"
#include "findings.hpp"
#include "parsers/gunzip.hpp"
#include "parsers/profile.hpp"
#include "profile_gen.hpp"
#include "profile_read.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using fixture::find;
using fixture::metric;
using fixture::read_file;
using fixture::TempDir;
using parsers::Coll;
using report::Status;

namespace {

std::vector<report::Finding> run(const parsers::Profile& p, analyzers::ProfileOptions o = {}) { return analyzers::analyze_profile(p, "test", o); }

// The first column of every row of a query (table and column names of a schema).
std::vector<std::string> sqlite_strings(sqlite3* db, const std::string& q) {
  std::vector<std::string> out;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, q.c_str(), -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  return out;
}

}  // namespace

TEST(ProfileNames, NcclKernelNamingsOfEveryVersion) {
  EXPECT_EQ(parsers::nccl_collective("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), Coll::AllReduce);
  EXPECT_EQ(parsers::nccl_collective("ncclKernel_ReduceScatter_RING_SIMPLE_Sum_bf16(ncclDevComm*, unsigned long, ncclWork*)"), Coll::ReduceScatter);
  EXPECT_EQ(parsers::nccl_collective("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), Coll::AllGather);
  EXPECT_EQ(parsers::nccl_collective("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"), Coll::SendRecv);
  EXPECT_EQ(parsers::nccl_collective("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"), Coll::SendRecv);
  EXPECT_EQ(parsers::nccl_collective("void ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs)"), Coll::AllReduce);
  EXPECT_EQ(parsers::nccl_collective("ncclBroadcastRingLLKernel_copy_i8(CollectiveArgs)"), Coll::Broadcast);
  EXPECT_EQ(parsers::nccl_collective("ncclDevKernel_Reduce_Sum_f32_RING_LL"), Coll::Reduce);
  EXPECT_EQ(parsers::nccl_collective("ncclKernel_AllToAll_RING_LL"), Coll::AllToAll);
  EXPECT_EQ(parsers::nccl_collective("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)"), Coll::other);
  // NCCL 2.19-2.27 (src/device/generate.py: ncclDevKernel_<coll>[_<redop>_<type>]_<algo>_<proto>,
  // the args struct in the demangled name) and the symmetric-memory kernels of 2.27+.
  EXPECT_EQ(parsers::nccl_collective("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)"), Coll::AllGather);
  EXPECT_EQ(parsers::nccl_collective("void ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            Coll::ReduceScatter);
  EXPECT_EQ(parsers::nccl_collective("ncclDevKernel_AllReduce_Sum_f32_TREE_LL(ncclDevKernelArgsStorage<4096ul>)"), Coll::AllReduce);
  EXPECT_EQ(parsers::nccl_collective("ncclDevKernel_AllReduce_Sum_u8_RING_LL"), Coll::AllReduce);
  EXPECT_EQ(parsers::nccl_collective("ncclDevKernel_AllGatherV_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), Coll::AllGather);
  EXPECT_EQ(parsers::nccl_collective("ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), Coll::Broadcast);
  EXPECT_EQ(parsers::nccl_collective("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"), Coll::other);
  EXPECT_EQ(parsers::nccl_collective("ncclSymkDevKernel_AllReduce_RSxLD_AGxST_sum_bf16(ncclSymkDevWorkArgs4K)"), Coll::AllReduce);
  EXPECT_EQ(parsers::nccl_collective("ncclSymkDevKernel_ReduceScatter_LDMC_sum_f32"), Coll::ReduceScatter);
  EXPECT_EQ(parsers::nccl_collective("ncclSymkDevKernel_AllGather_LLMC"), Coll::AllGather);
  EXPECT_EQ(parsers::nccl_collective("void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float, ncclAllReduce>)"), Coll::none);
  EXPECT_EQ(parsers::nccl_collective("sm90_xmma_gemm"), Coll::none);
  EXPECT_EQ(parsers::collective_from_arg("_allgather_base"), Coll::AllGather);
  EXPECT_EQ(parsers::collective_from_arg("reduce_scatter_tensor"), Coll::ReduceScatter);
  EXPECT_EQ(parsers::collective_from_arg("all_to_all"), Coll::AllToAll);
  EXPECT_EQ(parsers::collective_from_arg("recv"), Coll::SendRecv);
}

// Seed scenario 1: AllGather 30 ms (20 exposed) and ReduceScatter 15 ms (all exposed) of a
// 100 ms iteration; the last iteration's window is as long as its ProfilerStep (100 ms: its
// 5 ms of idle at the end count, as in the other iterations; it ended at its last kernel, 95 ms).
TEST(ProfileFindings, ExposedAllGatherAndReduceScatterWarnInBothFormats) {
  auto s = gen::exposed_comm(2, 5, 30, 15);
  for (const auto* fmt : {"nsys", "kineto"}) {
    SCOPED_TRACE(fmt);
    auto p = std::string(fmt) == "nsys" ? fixture::profile_from_nsys(s) : fixture::profile_from_kineto_ranks(s);
    auto fs = run(p);
    const double len = 100;
    auto& sum = find(fs, "profile.summary");
    EXPECT_EQ(metric(sum, "kernels"), 2 * 5 * 62);
    EXPECT_EQ(metric(sum, "devices"), 2);
    EXPECT_NEAR(metric(sum, "gpu_kernel_ms"), 2 * 5 * (60 + 30 + 15), 1e-6);
    EXPECT_NEAR(metric(sum, "nccl_kernel_ms"), 2 * 5 * 45, 1e-6);
    auto& it = find(fs, "profile.iterations");
    EXPECT_EQ(it.status, Status::pass);
    EXPECT_NE(it.title.find("ProfilerStep#N"), std::string::npos) << it.title;
    EXPECT_EQ(metric(it, "iterations"), 5);
    EXPECT_NEAR(metric(it, "iteration_ms"), 100, 1e-6);
    ASSERT_EQ(it.table.size(), 6u);  // header + 5 iterations
    EXPECT_EQ(it.table[0][3], "AllGather");
    EXPECT_EQ(it.table[1][3], "30.00");
    auto& ag = find(fs, "profile.exposed_comm", "AllGather");
    EXPECT_EQ(ag.status, Status::warn);
    EXPECT_NEAR(metric(ag, "comm_ms_per_iter"), 30, 1e-6);
    EXPECT_NEAR(metric(ag, "exposed_ms_per_iter"), 20, 1e-6);
    EXPECT_NEAR(metric(ag, "exposed_pct_of_iter"), 100 * 20 / len, 1e-6);
    EXPECT_NE(ag.fix.find("perfgap sweep"), std::string::npos);
    EXPECT_NE(ag.fix.find("all_gather_perf"), std::string::npos);
    auto& rs = find(fs, "profile.exposed_comm", "ReduceScatter");
    EXPECT_EQ(rs.status, Status::warn);
    EXPECT_NEAR(metric(rs, "exposed_ms_per_iter"), 15, 1e-6);
    EXPECT_NEAR(metric(ag, std::string(fmt) == "nsys" ? "exposed_pct_of_iter.pid1001.gpu1" : "exposed_pct_of_iter.rank1.gpu1"), 100 * 20 / len, 1e-6);
    auto& all = find(fs, "profile.exposed_comm", "all");
    EXPECT_NEAR(metric(all, "exposed_ms_per_iter"), 35, 1e-6);
    EXPECT_EQ(all.layer, "network");
    auto& idle = find(fs, "profile.gpu_idle");
    EXPECT_EQ(idle.status, Status::pass);
    EXPECT_NEAR(metric(idle, "idle_pct"), 100 * 5.0 / len, 1e-6);
    // The next launch began after the GPU went idle; the last window's tail has no next launch: other.
    EXPECT_NEAR(metric(idle, "host_bound_pct"), 100 * (4 * 5.0 / 5) / len, 1e-9);
    EXPECT_EQ(find(fs, "profile.launch_bound").status, Status::pass);
  }
}

TEST(ProfileFindings, ExposedCommThatShrinksWithASettingPasses) {
  auto fs = run(fixture::profile_from_nsys(gen::exposed_comm(2, 4, 12, 2)));  // AG 2 ms exposed of a 69 ms iteration
  EXPECT_EQ(find(fs, "profile.exposed_comm", "AllGather").status, Status::pass);
  EXPECT_EQ(find(fs, "profile.exposed_comm", "ReduceScatter").status, Status::pass);
  EXPECT_EQ(find(fs, "profile.exposed_comm", "all").status, Status::pass);  // 4 of 68 ms
}

TEST(ProfileFindings, PeriodOfTheTimelineGivesTheSameIterations) {
  auto fs = run(fixture::profile_from_nsys(gen::exposed_comm(2, 6, 30, 15, false)));
  auto& it = find(fs, "profile.iterations");
  EXPECT_EQ(it.status, Status::pass);
  EXPECT_NE(it.title.find("period"), std::string::npos) << it.title;
  EXPECT_EQ(metric(it, "iterations"), 6);
  EXPECT_NEAR(metric(it, "iteration_ms_median"), 100, 1e-6);
  EXPECT_NEAR(metric(it, "iteration_ms"), 99.1667, 1e-4);  // the mean: the last window ends at its last kernel, 5 ms of idle short
  EXPECT_NEAR(metric(find(fs, "profile.exposed_comm", "AllGather"), "exposed_ms_per_iter"), 20, 1e-6);
}

TEST(ProfileFindings, IterationRangeOptionChoosesTheRange) {
  auto s = gen::exposed_comm(1, 3, 30, 15);
  auto p = fixture::profile_from_nsys(s);
  analyzers::ProfileOptions o;
  o.iteration_range = "ProfilerStep";
  auto fs = run(p, o);
  EXPECT_NE(find(fs, "profile.iterations").title.find("--iteration-range"), std::string::npos);
  o.iteration_range = "no_such_range";
  auto none = run(p, o);
  auto& it = find(none, "profile.iterations");
  EXPECT_EQ(it.status, Status::skip);
  EXPECT_NE(it.title.find("no_such_range"), std::string::npos);
  // Whole-profile figures: one window of 295 ms.
  EXPECT_NEAR(metric(find(none, "profile.exposed_comm", "AllGather"), "exposed_ms_per_iter"), 60, 1e-6);
}

// --iteration-range NAME takes the ranges of exactly that name where there are any: a range
// enclosing them whose name starts with it ("test_outer" for "test", as in the public JAX nsys
// capture) is not an iteration.
TEST(ProfileFindings, IterationRangeOfAnExactNameIsNotSwallowedByAnEnclosingRange) {
  auto s = gen::exposed_comm(1, 3, 30, 15);
  const auto steps = s.ranges;
  for (const auto& r : steps) {
    auto t = r;
    t.name = "test";
    s.ranges.push_back(t);
  }
  auto outer = steps.front();
  outer.name = "test_outer";
  outer.end = steps.back().end;
  s.ranges.push_back(outer);
  analyzers::ProfileOptions o;
  o.iteration_range = "test";
  auto fs = run(fixture::profile_from_nsys(s), o);
  EXPECT_EQ(metric(find(fs, "profile.iterations"), "iterations"), 3);
  o.iteration_range = "test_o";  // a prefix that ends inside a word finds nothing
  EXPECT_EQ(find(run(fixture::profile_from_nsys(s), o), "profile.iterations").status, Status::skip);
}

// Seed scenario 2: 5 µs kernels launched every 30 µs (8 µs call, 4 µs latency).
TEST(ProfileFindings, LaunchBoundSmallKernelsWarn) {
  auto s = gen::launch_bound(2, 5, 200);
  for (const auto* fmt : {"nsys", "kineto"}) {
    SCOPED_TRACE(fmt);
    auto fs = run(std::string(fmt) == "nsys" ? fixture::profile_from_nsys(s) : fixture::profile_from_kineto_ranks(s));
    auto& it = find(fs, "profile.iterations");
    EXPECT_EQ(metric(it, "iterations"), 5);
    EXPECT_NE(it.title.find("train_step"), std::string::npos) << it.title;
    auto& lb = find(fs, "profile.launch_bound");
    EXPECT_EQ(lb.status, Status::warn);
    EXPECT_NEAR(metric(lb, "launch_api_us_p50"), 8, 1e-6);
    EXPECT_NEAR(metric(lb, "launch_delay_us_p50"), 4, 1e-6);
    EXPECT_NEAR(metric(lb, "launch_delay_us_p99"), 4, 1e-6);
    EXPECT_NEAR(metric(lb, "short_kernel_pct"), 100, 1e-6);
    EXPECT_NE(lb.fix.find("smmu"), std::string::npos);
    EXPECT_NE(lb.fix.find("cpu.cstate"), std::string::npos);
    EXPECT_NE(lb.fix.find("placement"), std::string::npos);
    auto& idle = find(fs, "profile.gpu_idle");
    EXPECT_EQ(idle.status, Status::warn);
    // Windows: 4 x 6100 µs and the last as long as its range (6100 µs from its first kernel;
    // it ended at its last kernel, 5975 µs); 200 x 5 µs busy each.
    const double len = 6100, idle_us = 5100;
    EXPECT_NEAR(metric(idle, "idle_pct"), 100 * idle_us / len, 1e-6);
    // All host-bound but the last window's 125 µs after its last kernel (no next launch).
    EXPECT_NEAR(metric(idle, "host_bound_pct"), 100 * (idle_us - 125.0 / 5) / len, 1e-6);
    EXPECT_EQ(find(fs, "profile.exposed_comm", "all").status, Status::skip);
  }
}

TEST(ProfileFindings, OverlappedRunPassesAndIdleThatIsNotHostBound) {
  auto fs = run(fixture::profile_from_nsys(gen::overlapped(2, 5, 1)));
  EXPECT_EQ(find(fs, "profile.exposed_comm", "AllReduce").status, Status::pass);
  EXPECT_NEAR(metric(find(fs, "profile.exposed_comm", "AllReduce"), "comm_ms_per_iter"), 20, 1e-6);
  EXPECT_NEAR(metric(find(fs, "profile.exposed_comm", "AllReduce"), "exposed_ms_per_iter"), 0, 1e-9);
  EXPECT_EQ(find(fs, "profile.gpu_idle").status, Status::pass);
  EXPECT_EQ(find(fs, "profile.launch_bound").status, Status::pass);
  EXPECT_NEAR(metric(find(fs, "profile.iterations"), "memcpy_ms_per_iter"), 2, 1e-6);
  EXPECT_NE(find(fs, "profile.iterations").title.find("'step'"), std::string::npos);
  // Idle of 8 ms per 58 ms iteration while the host is 15 ms ahead: idle, not host-bound.
  auto idle = run(fixture::profile_from_nsys(gen::overlapped(2, 5, 8)));
  auto& gi = find(idle, "profile.gpu_idle");
  EXPECT_EQ(gi.status, Status::warn);
  EXPECT_NEAR(metric(gi, "host_bound_pct"), 0, 1e-9);
  EXPECT_NEAR(metric(gi, "idle_pct"), 100 * 8.0 / 58,
              1e-6);  // the last window as long as its 58 ms step too (it was 50 ms, to its last kernel)
  EXPECT_EQ(find(idle, "profile.launch_bound").status, Status::pass);
  // The host was ahead: the fix names a dependency, never the data loader (the reviewer's case: a
  // public trace whose work was launched 164 ms ahead was told to pin memory and add workers).
  EXPECT_NE(gi.fix.find("already launched: on a dependency"), std::string::npos) << gi.fix;
  EXPECT_EQ(gi.fix.find("pin_memory"), std::string::npos) << gi.fix;
}

// profile.env and nccl.env.disabled_paths read the switches from one table, as NCCL reads
// their values (strtoll for integers: "00" is 0, " 1" is 1; LOC in any case).
TEST(ProfileFindings, EnvSwitchesAreReadAsTheNodeCheckReadsThem) {
  auto p = fixture::profile_from_nsys(gen::overlapped(1, 2));
  p.env_present = true;
  p.env = {{"NCCL_P2P_DISABLE", "00"}, {"NCCL_SHM_DISABLE", " 1"}, {"NCCL_NVLS_ENABLE", "0x0"}, {"NCCL_NET_GDR_LEVEL", "loc"}, {"NCCL_IB_DISABLE", ""}};
  auto& e = find(run(p), "profile.env");
  EXPECT_EQ(e.status, Status::warn);
  EXPECT_EQ(e.title.find("NCCL_P2P_DISABLE"), std::string::npos) << e.title;  // "00" is 0: P2P stays on
  EXPECT_EQ(e.title.find("NCCL_IB_DISABLE"), std::string::npos) << e.title;   // empty: ignored by NCCL
  for (const char* off : {"NCCL_SHM_DISABLE= 1", "NCCL_NVLS_ENABLE=0x0", "NCCL_NET_GDR_LEVEL=loc"})
    EXPECT_NE(e.title.find(off), std::string::npos) << off << " in " << e.title;
  for (const auto& sw : facts::nccl_fast_path_switches()) EXPECT_FALSE(sw.switches_off("")) << sw.name;
}

TEST(ProfileFindings, EnvFromTargetInfoSystemEnv) {
  auto warn = run(fixture::profile_from_nsys(gen::overlapped(1, 2)));
  auto& e = find(warn, "profile.env");
  EXPECT_EQ(e.status, Status::warn);
  EXPECT_NE(e.title.find("NCCL_IB_DISABLE=1"), std::string::npos) << e.title;
  EXPECT_NE(e.title.find("driver 550.54.15"), std::string::npos) << e.title;
  EXPECT_EQ(metric(e, "cpu_sockets"), 2);
  auto ok = run(fixture::profile_from_nsys(gen::exposed_comm(1, 2, 30, 15)));
  auto& o = find(ok, "profile.env");
  EXPECT_EQ(o.status, Status::pass);
  EXPECT_EQ(metric(o, "nccl_settings"), 3);
  EXPECT_NE(o.title.find("NCCL_MIN_NCHANNELS=4"), std::string::npos) << o.title;
  EXPECT_EQ(find(run(fixture::profile_from_kineto_ranks(gen::overlapped(1, 2))), "profile.env").status, Status::skip);
}

TEST(ProfileFindings, CompareAgainstAReference) {
  auto before = fixture::profile_from_nsys(gen::exposed_comm(2, 5, 30, 15));
  auto after = fixture::profile_from_nsys(gen::exposed_comm(2, 5, 15, 5));  // with the better NCCL setting: 75 ms iterations
  analyzers::ProfileOptions o;
  auto ref = analyzers::profile_figures(after, o);
  EXPECT_NEAR(ref.iteration_ms, 75, 1e-6);
  EXPECT_NEAR(ref.comm_ms[static_cast<int>(Coll::AllGather)], 15, 1e-6);
  o.reference = &ref;
  o.reference_source = "after.sqlite";
  auto slow_fs = run(before, o);
  auto& slow = find(slow_fs, "profile.compare");
  EXPECT_EQ(slow.status, Status::fail);  // 75 / 100 of the reference pace
  EXPECT_NEAR(metric(slow, "pct_of_reference"), 75, 1e-6);
  bool line = false;
  for (const auto& ev : slow.evidence) line = line || ev.observed.rfind("AllGather 15.00 -> 30.00 ms per iteration (+15.00 ms, +100.0%)", 0) == 0;
  EXPECT_TRUE(line);
  auto back = analyzers::profile_figures(before, {});
  o.reference = &back;
  auto fast_fs = run(after, o);
  auto& fast = find(fast_fs, "profile.compare");
  EXPECT_EQ(fast.status, Status::pass);
  EXPECT_NEAR(metric(fast, "measured_ms.ReduceScatter"), 5, 1e-6);
  EXPECT_NEAR(metric(fast, "reference_ms.ReduceScatter"), 15, 1e-6);
}

// A reference of another job (other GPU models) gives no verdict: the field's HTA pair (a
// 2-rank V100 trace against rank 3 of an 8-rank A100 job) read "62.4% of the reference pace".
TEST(ProfileFindings, AReferenceOfAnotherJobIsNoVerdict) {
  auto scenario = gen::exposed_comm(2, 5, 15, 5);
  auto other = fixture::profile_from_nsys(scenario);
  scenario.gpu_name = "NVIDIA A100-SXM4-80GB";
  auto a100 = fixture::profile_from_nsys(scenario);
  auto before = fixture::profile_from_nsys(gen::exposed_comm(2, 5, 30, 15));
  analyzers::ProfileOptions o;
  const auto ref_a100 = analyzers::profile_figures(a100, o);
  EXPECT_EQ(ref_a100.gpu_models, std::vector<std::string>{"NVIDIA A100-SXM4-80GB"});
  o.reference = &ref_a100;
  o.reference_source = "a100.sqlite";
  auto fs = run(before, o);
  const auto& c = find(fs, "profile.compare");
  EXPECT_EQ(c.status, Status::skip) << c.title;
  EXPECT_NE(c.title.find("another job"), std::string::npos) << c.title;
  EXPECT_NE(c.title.find("NVIDIA A100-SXM4-80GB in the reference"), std::string::npos) << c.title;
  EXPECT_NEAR(metric(c, "pct_of_reference"), 75, 1e-6);  // the rows and figures are kept
  // The same GPUs: the verdict as before.
  const auto ref_same = analyzers::profile_figures(other, {});
  o.reference = &ref_same;
  EXPECT_EQ(find(run(before, o), "profile.compare").status, Status::fail);
}

// Issue 42 item 7: a GPU that copies 28.4 ms of every 29.3 ms iteration with no kernel running
// passed every finding (no idle: copies are activity). profile.copies says the share by
// direction and host memory, from the generator's schedule, in every format and schema.
TEST(ProfileFindings, CopyBoundGpuWarnsWithTheCopyShareByKindAndMemory) {
  const auto s = gen::copy_bound(2, 10);
  TempDir t;
  auto old_path = t.file("old.sqlite");
  ASSERT_EQ(gen::write_nsys_sqlite(s, old_path, gen::NsysSchema::v2021), "");  // no ENUM_* tables: the numbers
  auto old = parsers::read_nsys_sqlite(read_file(old_path));
  ASSERT_TRUE(old) << old.error().describe();
  for (const auto& p : {fixture::profile_from_nsys(s), fixture::profile_from_kineto_ranks(s), *old}) {
    SCOPED_TRACE(p.format);
    auto fs = run(p);
    EXPECT_EQ(find(fs, "profile.gpu_idle").status, Status::pass);  // no gap: why a finding of its own is needed
    auto& c = find(fs, "profile.copies");
    EXPECT_EQ(c.status, Status::warn) << c.title;
    EXPECT_NEAR(metric(c, "copy_ms_per_iter"), 28.4, 1e-6);
    EXPECT_NEAR(metric(c, "copy_pct_of_iter"), 100 * 28.4 / 29.3, 1e-6);
    EXPECT_NEAR(metric(c, "copy_no_kernel_pct_of_iter"), 100 * 28.4 / 29.3, 1e-6);
    EXPECT_NEAR(metric(c, "copy_ms_per_iter.h2d_pageable"), 20, 1e-6);
    EXPECT_NEAR(metric(c, "copy_ms_per_iter.h2d_pinned"), 5, 1e-6);
    EXPECT_NEAR(metric(c, "copy_ms_per_iter.d2d"), 2, 1e-6);
    EXPECT_NEAR(metric(c, "copy_ms_per_iter.d2h_pageable"), 1, 1e-6);
    EXPECT_NEAR(metric(c, "copy_ms_per_iter.p2p"), 0.4, 1e-6);
    EXPECT_EQ(metric(c, "copies"), 2 * 10 * 5);
    EXPECT_EQ(metric(c, "copies.h2d_pageable"), 20);
    EXPECT_NEAR(metric(c, "bytes.h2d_pageable"), 20 * 20e6, 1);
    EXPECT_NE(
        c.title.find(
            "memory copies 96.9% per iteration (28.40 of 29.30 ms), 96.9% with no kernel running (> 10%): H2D pageable 20.00 ms, H2D pinned 5.00 ms, D2D 2.00 ms"),
        std::string::npos)
        << c.title;
    // The Kineto trace is PyTorch's; the exports' kernels and "step" ranges name no framework: CUDA's words.
    if (p.framework.framework == parsers::Framework::pytorch) {
      EXPECT_NE(c.fix.find("pin_memory=True"), std::string::npos) << c.fix;
    } else {
      EXPECT_EQ(p.framework.framework, parsers::Framework::unknown) << p.framework.why;
      EXPECT_NE(c.fix.find("cudaHostAlloc"), std::string::npos) << c.fix;
      EXPECT_EQ(c.fix.find("pin_memory"), std::string::npos) << c.fix;
    }
    EXPECT_FALSE(c.impact.empty());
  }
}

// Copies under compute are the healthy pattern: reported, not warned about.
TEST(ProfileFindings, CopiesUnderComputePass) {
  for (const auto& p : {fixture::profile_from_nsys(gen::overlapped(2, 5, 1)), fixture::profile_from_kineto_ranks(gen::overlapped(2, 5, 1))}) {
    auto fs = run(p);
    auto& c = find(fs, "profile.copies");
    EXPECT_EQ(c.status, Status::pass) << c.title;
    EXPECT_NEAR(metric(c, "copy_ms_per_iter.h2d_pinned"), 2, 1e-6);
    EXPECT_NEAR(metric(c, "copy_no_kernel_pct_of_iter"), 0, 1e-9);
    EXPECT_TRUE(c.fix.empty());
  }
  auto none_fs = run(fixture::profile_from_nsys(gen::exposed_comm(1, 3, 20, 10)));
  auto& none = find(none_fs, "profile.copies");
  EXPECT_EQ(none.status, Status::pass);
  EXPECT_EQ(none.title, "no memory copies or memsets in the profile");
}

// Issue 42 item 8: kernels run by a CUDA graph all join the one cudaGraphLaunch; counted as
// launches they made the launch call p50 the graph launch's and most kernels "shorter than
// their launch call". They are counted apart, and their share said.
TEST(ProfileFindings, GraphLaunchedKernelsAreCountedApartFromTheLaunchFigures) {
  const auto s = gen::graphs(1, 5);
  for (const auto& p : {fixture::profile_from_nsys(s), fixture::profile_from_kineto_ranks(s)}) {
    SCOPED_TRACE(p.format);
    std::size_t graph = 0;
    for (const auto& a : p.acts) graph += a.graph_launch;
    EXPECT_EQ(graph, 5u * 300);
    auto fs = run(p);
    auto& l = find(fs, "profile.launch_bound");
    EXPECT_NEAR(metric(l, "launch_api_us_p50"), 10, 1e-9);  // 16 (the graph launch) counting graph kernels
    EXPECT_NEAR(metric(l, "launch_delay_us_p50"), 5, 1e-9);
    EXPECT_NEAR(metric(l, "short_kernel_pct"), 0, 1e-9);  // 75 counting graph kernels
    EXPECT_NEAR(metric(l, "graph_kernel_pct"), 75, 1e-9);
    EXPECT_NE(l.title.find("75.0% of kernels ran under CUDA graphs"), std::string::npos) << l.title;
  }
  // Every joined kernel under graphs: no launch figures, said so.
  auto only = s;
  for (auto& k : only.gpus[0].kernels)
    if (k.graph < 0) k.api_start = k.api_end = -1;
  auto only_fs = run(fixture::profile_from_kineto_ranks(only));
  auto& l = find(only_fs, "profile.launch_bound");
  EXPECT_EQ(l.status, Status::skip);
  EXPECT_NE(l.title.find("all 1500 kernels joined to a launch call ran under CUDA graphs"), std::string::npos) << l.title;
}

// Issue 42 item 8: the median of an even number of iterations is the mean of the middle two
// (it was the lower one), in profile.iterations and in what profile.compare compares.
TEST(ProfileFindings, MedianOfAnEvenNumberOfIterationsIsTheMeanOfTheMiddleTwo) {
  gen::Scenario s;
  gen::Gpu gpu;
  gpu.pid = 1000;
  std::int64_t base = 1'000'000'000;
  for (double len_ms : {10.0, 40.0, 20.0, 30.0}) {
    const auto len = static_cast<std::int64_t>(len_ms * 1e6), step = len / 50;
    for (int k = 0; k < 50; ++k) {
      gen::Kernel kn;
      kn.start = base + k * step, kn.end = base + (k + 1) * step, kn.name = "gemm" + std::to_string(k);
      kn.api_start = base - 20'000 + k * 100, kn.api_end = kn.api_start + 50;
      gpu.kernels.push_back(kn);
    }
    s.ranges.push_back({base - 50'000, base + len - 50'000, "ProfilerStep#" + std::to_string(s.ranges.size() + 1), 1000});
    base += len;
  }
  s.gpus.push_back(gpu);
  auto p = fixture::profile_from_kineto_ranks(s);
  auto fs = run(p);
  auto& it = find(fs, "profile.iterations");
  EXPECT_EQ(metric(it, "iterations"), 4);
  EXPECT_NEAR(metric(it, "iteration_ms"), 25, 1e-6);  // the mean, (10 + 40 + 20 + 30) / 4
  EXPECT_NEAR(metric(it, "iteration_ms_median"), 25, 1e-6);  // (20 + 30) / 2; was 20
  EXPECT_NE(it.title.find("25.00 ms per iteration (mean; median window 25.00 ms)"), std::string::npos) << it.title;
  analyzers::ProfileOptions o;
  auto ref = analyzers::profile_figures(p, o);
  EXPECT_NEAR(ref.iteration_ms, 25, 1e-6);
  o.reference = &ref;
  o.reference_source = "ref";
  auto cfs = run(p, o);
  auto& c = find(cfs, "profile.compare");
  EXPECT_NEAR(metric(c, "iteration_ms"), 25, 1e-6);
  EXPECT_NEAR(metric(c, "reference_iteration_ms"), 25, 1e-6);
}

// Issue 42 item 8: the last iteration's window ends where its step ends, not where the last
// work launched in it ends (HTA's trace_diff test trace: 173.69 ms for a 122.15 ms step).
TEST(ProfileFindings, LastIterationWindowEndsWhereTheStepEnds) {
  gen::Scenario s;
  gen::Gpu gpu;
  gpu.pid = 1000;
  std::int64_t base = 1'000'000'000;
  for (int i = 0; i < 3; ++i) {
    const std::int64_t len = 20'000'000, step = len / 50;
    for (int k = 0; k < 50; ++k) {
      gen::Kernel kn;
      kn.start = base + k * step, kn.end = base + (k + 1) * step, kn.name = "gemm" + std::to_string(k);
      kn.api_start = base - 20'000 + k * 100, kn.api_end = kn.api_start + 50;
      gpu.kernels.push_back(kn);
    }
    if (i == 2) {  // launched in the last step, running 15 ms past its end
      gen::Kernel tail;
      tail.start = base + len, tail.end = base + len + 15'000'000, tail.name = "tail", tail.stream = 9;
      tail.api_start = base - 10'000, tail.api_end = tail.api_start + 50;
      gpu.kernels.push_back(tail);
    }
    s.ranges.push_back({base - 50'000, base + len - 50'000, "ProfilerStep#" + std::to_string(i + 1), 1000});
    base += len;
  }
  s.gpus.push_back(gpu);
  for (const auto& p : {fixture::profile_from_kineto_ranks(s), fixture::profile_from_nsys(s)}) {
    auto fs = run(p);
    auto& it = find(fs, "profile.iterations");
    ASSERT_EQ(it.table.size(), 4u);
    EXPECT_EQ(it.table[3][1], "20.00") << "the last window: as long as its step from its first kernel (was 35.00, to the tail's end)";
    EXPECT_NEAR(metric(it, "iteration_ms_mean"), 20, 1e-6);
  }
}

TEST(ProfileReaders, NsysAndKinetoAgreeOnTheSameTimeline) {
  auto s = gen::exposed_comm(3, 4, 25, 10);
  auto a = run(fixture::profile_from_nsys(s)), b = run(fixture::profile_from_kineto_ranks(s));
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].id == "profile.env" || a[i].id == "profile.summary") continue;
    EXPECT_EQ(a[i].status, b[i].status) << a[i].id << " " << a[i].subject;
    // Per-GPU metrics are named by process (nsys) or rank (Kineto): compared in order.
    std::vector<double> per_gpu_a, per_gpu_b;
    for (const auto& [k, v] : a[i].metrics)
      if (k.find('.') == std::string::npos) EXPECT_NEAR(v, metric(b[i], k), 1e-6) << a[i].id << " " << k;
      else per_gpu_a.push_back(v);
    for (const auto& [k, v] : b[i].metrics)
      if (k.find('.') != std::string::npos) per_gpu_b.push_back(v);
    ASSERT_EQ(per_gpu_a.size(), per_gpu_b.size()) << a[i].id;
    for (std::size_t m = 0; m < per_gpu_a.size(); ++m) EXPECT_NEAR(per_gpu_a[m], per_gpu_b[m], 1e-6) << a[i].id;
  }
}

// The same timeline written in every export schema the reader knows gives the same findings.
TEST(ProfileReaders, EverySchemaVariantGivesTheSameMetrics) {
  TempDir t;
  auto read_as = [&](const gen::Scenario& s, gen::NsysSchema v) {
    auto path = t.file("v.sqlite");
    EXPECT_EQ(gen::write_nsys_sqlite(s, path, v), "");
    auto p = parsers::read_nsys_sqlite(read_file(path));
    if (!p) throw std::runtime_error(p.error().describe());
    return std::move(*p);
  };
  for (const auto& s : {gen::exposed_comm(3, 4, 25, 10), gen::launch_bound(2, 3, 100), gen::overlapped(2, 4, 8)}) {
    auto ref = run(read_as(s, gen::NsysSchema::v372));
    for (auto v : {gen::NsysSchema::v2021, gen::NsysSchema::v2025}) {
      auto p = read_as(s, v);
      SCOPED_TRACE(p.format);
      auto fs = run(p);
      ASSERT_EQ(fs.size(), ref.size());
      for (std::size_t i = 0; i < fs.size(); ++i) {
        ASSERT_EQ(fs[i].id, ref[i].id);
        ASSERT_EQ(fs[i].subject, ref[i].subject);
        if (fs[i].id == "profile.env" && v == gen::NsysSchema::v2021) {
          EXPECT_EQ(fs[i].status, Status::skip);  // 2021's exports have no TARGET_INFO_SYSTEM_ENV
          continue;
        }
        EXPECT_EQ(fs[i].status, ref[i].status) << fs[i].id << " " << fs[i].subject;
        EXPECT_EQ(fs[i].metrics.size(), ref[i].metrics.size()) << fs[i].id;
        for (const auto& [k, val] : ref[i].metrics) EXPECT_NEAR(metric(fs[i], k), val, 1e-9) << fs[i].id << " " << k;
      }
    }
  }
}

// 2025-style: kernels' deviceId is the process's CUDA device, TARGET_INFO_GPU has ids of its own
// and TARGET_INFO_CUDA_DEVICE maps one to the other; the launch calls carry newer names.
TEST(ProfileReaders, Schema2025MapsCudaDevicesThroughTargetInfoCudaDevice) {
  TempDir t;
  auto s = gen::exposed_comm(2, 2, 30, 15);
  auto path = t.file("late.sqlite");
  ASSERT_EQ(gen::write_nsys_sqlite(s, path, gen::NsysSchema::v2025), "");
  auto p = parsers::read_nsys_sqlite(read_file(path));
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_NE(p->format.find("schema 3.17.2"), std::string::npos) << p->format;
  ASSERT_EQ(p->gpus.size(), 2u);
  for (const auto& g : p->gpus) {
    EXPECT_NE(g.label.find(s.gpu_name), std::string::npos) << g.label;
    EXPECT_EQ(g.label.find("unused"), std::string::npos) << g.label;  // TARGET_INFO_GPU id 0 is another GPU
  }
  std::size_t joined = 0;
  for (const auto& a : p->acts) joined += a.api_start >= 0;
  EXPECT_EQ(joined, p->acts.size());  // cudaLaunchKernelExC_v11060 calls join as cudaLaunchKernel_v7000 ones did
}

// The generator's 2021 variant has the columns of the real 2021 export, for the tables it has.
TEST(ProfileReaders, GeneratorColumnsAreThoseOfThe2021Export) {
  fs::path real = fs::path(PERFGAP_SHARED_DIR) / "fixtures/profiles/nsys_2021_v100pcie_x2_openmp_report2.sqlite";
  if (!fs::exists(real)) GTEST_SKIP() << "no " << real;
  TempDir t;
  auto gen_path = t.file("g.sqlite");
  ASSERT_EQ(gen::write_nsys_sqlite(gen::overlapped(1, 1), gen_path, gen::NsysSchema::v2021), "");
  sqlite3 *ref = nullptr, *g = nullptr;
  sqlite3_open_v2(real.c_str(), &ref, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_open(gen_path.c_str(), &g);
  int checked = 0;
  for (const auto& table : sqlite_strings(g, "SELECT name FROM sqlite_master WHERE type='table'")) {
    auto cols = sqlite_strings(ref, "SELECT name FROM pragma_table_info('" + table + "')");
    if (cols.empty()) continue;  // MEMSET, NVTX_EVENTS: not in that capture
    for (const auto& c : sqlite_strings(g, "SELECT name FROM pragma_table_info('" + table + "')")) {
      EXPECT_NE(std::find(cols.begin(), cols.end(), c), cols.end()) << table << "." << c;
      ++checked;
    }
  }
  EXPECT_GT(checked, 25);
  sqlite3_close(ref);
  sqlite3_close(g);
}

namespace {

void exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* e = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &e), SQLITE_OK) << (e ? e : "") << " in " << sql;
  sqlite3_free(e);
  sqlite3_close(db);
}

}  // namespace

// CUDA graphs, as nsys records them: traced by node (--cuda-graph-trace=node), the graph's
// kernels are kernel rows sharing the correlationId of their cudaGraphLaunch; traced whole (graph
// mode), one CUPTI_ACTIVITY_KIND_GRAPH_TRACE row per execution stands for them.
TEST(ProfileReaders, CudaGraphsTracedByNodeOrWhole) {
  TempDir t;
  auto s = gen::overlapped(1, 3, 1);  // 50 x 1 ms compute per iteration, an AllReduce under it
  auto path = t.file("g.sqlite");
  ASSERT_EQ(gen::write_nsys_sqlite(s, path, gen::NsysSchema::v2025), "");
  // Node mode: the compute kernels of each iteration launched by one cudaGraphLaunch.
  exec(path,
       "INSERT INTO StringIds VALUES (9001, 'cudaGraphLaunch_v10000');"
       "CREATE TEMP TABLE it AS SELECT (start - 1000000000) / 51000000 AS i, min(start) AS s FROM CUPTI_ACTIVITY_KIND_KERNEL "
       "  WHERE shortName IN (SELECT id FROM StringIds WHERE value LIKE 'ampere%') GROUP BY 1;"
       "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue) "
       "  SELECT s - 20000, s - 10000, 1, (3000 << 24) | 3000, 100000 + i, 9001, 0 FROM it;"
       "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET graphId = 7, graphNodeId = rowid, correlationId = 100000 + (start - 1000000000) / 51000000 "
       "  WHERE shortName IN (SELECT id FROM StringIds WHERE value LIKE 'ampere%');");
  auto node = parsers::read_nsys_sqlite(read_file(path));
  ASSERT_TRUE(node) << node.error().describe();
  std::size_t by_graph = 0;
  for (const auto& a : node->acts)
    if (a.kind == parsers::ActKind::kernel && a.coll == Coll::none) {
      EXPECT_GE(a.api_start, 0);
      by_graph += a.api_end == a.api_start + 10000;
    }
  EXPECT_EQ(by_graph, 3u * 50);
  auto nf = run(*node);
  EXPECT_NEAR(metric(find(nf, "profile.exposed_comm", "AllReduce"), "exposed_ms_per_iter"), 0, 1e-9);
  // Graph mode: each iteration's compute kernels give way to one whole-graph execution row.
  exec(
      path,
      "CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
      "  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, graphId INTEGER, graphExecId INTEGER);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE SELECT min(start), max(end), deviceId, 1, 7, correlationId, globalPid, 7, 1 "
      "  FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId = 7 GROUP BY correlationId;"
      "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId = 7;");
  auto whole = parsers::read_nsys_sqlite(read_file(path));
  ASSERT_TRUE(whole) << whole.error().describe();
  std::size_t graphs = 0;
  for (const auto& a : whole->acts) {
    if (a.kind != parsers::ActKind::graph) continue;
    ++graphs;
    EXPECT_EQ(whole->names[a.name], "CUDA graph 7");
    EXPECT_EQ(a.api_end - a.api_start, 10000);  // joined to its cudaGraphLaunch
  }
  EXPECT_EQ(graphs, 3u);
  bool noted = false;
  for (const auto& n : whole->notes) noted = noted || n.find("--cuda-graph-trace=node") != std::string::npos;
  EXPECT_TRUE(noted);
  auto wf = run(*whole);
  EXPECT_EQ(metric(find(wf, "profile.summary"), "kernels"), 3);  // the AllReduces; the graphs are no kernels
  // The graphs' time is compute: the AllReduce under them stays hidden, idle is as before.
  EXPECT_NEAR(metric(find(wf, "profile.exposed_comm", "AllReduce"), "exposed_ms_per_iter"), 0, 1e-9);
  EXPECT_NEAR(metric(find(wf, "profile.gpu_idle"), "idle_pct"), metric(find(nf, "profile.gpu_idle"), "idle_pct"), 1e-9);
  // Everything in graphs, no kernel table at all: still a profile.
  exec(path, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;");
  auto only = parsers::read_nsys_sqlite(read_file(path));
  ASSERT_TRUE(only) << only.error().describe();
  EXPECT_EQ(only->acts.size(), 3u + 3u);  // 3 graphs, 3 memcpys
}

TEST(ProfileReaders, KinetoNcclArgs) {
  auto fs = run(fixture::profile_from_kineto_ranks(gen::exposed_comm(2, 3, 30, 15)));
  auto& ag = find(fs, "profile.exposed_comm", "AllGather");
  EXPECT_EQ(metric(ag, "msg_bytes"), 2.0 * 3 * (1 << 24) * 4);
  bool group = false;
  for (const auto& e : ag.evidence) group = group || e.observed.find("group size 2") != std::string::npos;
  EXPECT_TRUE(group);
}

TEST(ProfileReaders, BadNsysInputsSayWhatIsWrong) {
  EXPECT_NE(parsers::read_nsys_sqlite("hello").error().message.find("not an SQLite database"), std::string::npos);
  TempDir t;
  auto path = t.file("x.sqlite");
  ASSERT_EQ(gen::write_nsys_sqlite(gen::exposed_comm(2, 20, 30, 15), path), "");
  auto whole = read_file(path);
  ASSERT_TRUE(parsers::read_nsys_sqlite(whole));
  auto cut = parsers::read_nsys_sqlite(whole.substr(0, whole.size() / 2));
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("truncated"), std::string::npos) << cut.error().message;
  // Another schema; an nsys export without kernels; every 3.7.2 table, all empty.
  auto make = [&](const char* name, const std::string& ddl) {
    auto p = t.file(name);
    sqlite3* db = nullptr;
    sqlite3_open(p.c_str(), &db);
    char* e = nullptr;
    EXPECT_EQ(sqlite3_exec(db, ddl.c_str(), nullptr, nullptr, &e), SQLITE_OK) << (e ? e : "");
    sqlite3_free(e);
    sqlite3_close(db);
    return read_file(p);
  };
  auto other = parsers::read_nsys_sqlite(make("other.sqlite", "CREATE TABLE moz_places (id INTEGER, url TEXT); INSERT INTO moz_places VALUES (1, 'x');"));
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("not an Nsight Systems export"), std::string::npos) << other.error().message;
  EXPECT_NE(other.error().message.find("moz_places"), std::string::npos);
  auto no_kernels = parsers::read_nsys_sqlite(make("nok.sqlite", "CREATE TABLE StringIds (id INTEGER, value TEXT); CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER);"));
  ASSERT_FALSE(no_kernels);
  EXPECT_NE(no_kernels.error().message.find("CUPTI_ACTIVITY_KIND_KERNEL"), std::string::npos);
  auto no_start = parsers::read_nsys_sqlite(make("nostart.sqlite", "CREATE TABLE StringIds (id INTEGER, value TEXT); CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (begin INTEGER, end INTEGER); INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2);"));
  ASSERT_FALSE(no_start);
  EXPECT_NE(no_start.error().message.find("CUPTI_ACTIVITY_KIND_KERNEL has no start column"), std::string::npos) << no_start.error().message;
  // Pages overwritten in the middle: SQLite's own corruption checks, an error, never a crash.
  std::string corrupt = whole;
  for (std::size_t i = 4096 * 3; i < corrupt.size() - 4096; i += 4096 * 5)
    for (std::size_t k = 0; k < 512; ++k) corrupt[i + k] = static_cast<char>((i * 131 + k * 7) & 0xFF);
  auto bad = parsers::read_nsys_sqlite(corrupt);
  if (!bad) {
    EXPECT_FALSE(bad.error().message.empty());
  }
  fs::path ddl = fs::path(PERFGAP_SHARED_DIR) / "fixtures/profiles/nsys-2023.4.4-export-schema-3.7.2-lazy-false.sql";
  if (fs::exists(ddl)) {
    auto empty = parsers::read_nsys_sqlite(make("empty.sqlite", read_file(ddl)));
    ASSERT_FALSE(empty);
    EXPECT_NE(empty.error().message.find("empty CUPTI_ACTIVITY_KIND_KERNEL"), std::string::npos) << empty.error().message;
  }
}

// The generator writes the tables and columns of the real 3.7.2 schema (no invented ones).
TEST(ProfileReaders, GeneratorColumnsAreThoseOfSchema372) {
  fs::path ddl = fs::path(PERFGAP_SHARED_DIR) / "fixtures/profiles/nsys-2023.4.4-export-schema-3.7.2-lazy-false.sql";
  if (!fs::exists(ddl)) GTEST_SKIP() << "no " << ddl;
  TempDir t;
  auto gen_path = t.file("g.sqlite");
  ASSERT_EQ(gen::write_nsys_sqlite(gen::overlapped(1, 1), gen_path), "");
  sqlite3 *ref = nullptr, *g = nullptr;
  sqlite3_open(":memory:", &ref);
  ASSERT_EQ(sqlite3_exec(ref, read_file(ddl).c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_open(gen_path.c_str(), &g);
  int checked = 0;
  for (const auto& table : sqlite_strings(g, "SELECT name FROM sqlite_master WHERE type='table'")) {
    auto cols = sqlite_strings(ref, "SELECT name FROM pragma_table_info('" + table + "')");
    ASSERT_FALSE(cols.empty()) << table << " is not a 3.7.2 table";
    for (const auto& c : sqlite_strings(g, "SELECT name FROM pragma_table_info('" + table + "')")) {
      EXPECT_NE(std::find(cols.begin(), cols.end(), c), cols.end()) << table << "." << c;
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
  sqlite3_close(ref);
  sqlite3_close(g);
}

TEST(ProfileReaders, BadKinetoInputsSayWhatIsWrong) {
  auto other = parsers::parse_kineto(R"({"schema": "perfgap.report/1", "findings": []})");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("traceEvents"), std::string::npos);
  auto cpu_only = parsers::parse_kineto(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]})");
  ASSERT_FALSE(cpu_only);
  EXPECT_NE(cpu_only.error().message.find("no GPU activity"), std::string::npos);
  EXPECT_NE(cpu_only.error().message.find("a CPU-only profile"), std::string::npos) << cpu_only.error().message;
  // CUDA calls but no GPU activity: the CUDA activity was not captured.
  auto no_cuda = parsers::parse_kineto(R"({"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 2,)"
                                       R"( "args": {"correlation": 7}}]})");
  ASSERT_FALSE(no_cuda);
  EXPECT_NE(no_cuda.error().message.find("profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"), std::string::npos)
      << no_cuda.error().message;
  // Another device's trace (as PyTorch writes MTIA's), and CUPTI's counter replay: said, not "profile with CUDA".
  auto mtia = parsers::parse_kineto(R"({"distributedInfo": {"backend": "mtia:hccl", "rank": 0}, "traceEvents": [)"
                                    R"({"ph": "X", "cat": "mtia_ccp_events", "name": "fused_op", "pid": 9, "tid": 1, "ts": 1, "dur": 2},)"
                                    R"({"ph": "X", "cat": "mtia_runtime", "name": "launch", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]})");
  ASSERT_FALSE(mtia);
  EXPECT_NE(mtia.error().message.find("an MTIA device's trace (mtia_* events, backend mtia:hccl)"), std::string::npos) << mtia.error().message;
  EXPECT_NE(mtia.error().message.find(parsers::kNotAGpuTraceWords), std::string::npos) << mtia.error().message;
  auto ranges = parsers::parse_kineto(R"({"traceEvents": [{"ph": "X", "cat": "cuda_profiler_range", "name": "at::native::fill_kernel", "ts": 1,)"
                                      R"( "dur": 121000, "args": {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 0}}]})");
  ASSERT_FALSE(ranges);
  EXPECT_NE(ranges.error().message.find("CUPTI profiler ranges instead"), std::string::npos) << ranges.error().message;
  auto json = gen::kineto_json(gen::exposed_comm(1, 2, 30, 15), 0);
  auto cut = parsers::parse_kineto(json.substr(0, json.size() / 2));
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("truncated"), std::string::npos) << cut.error().message;
  EXPECT_GT(cut.error().line, 1);
  auto bad = parsers::parse_kineto("{\"traceEvents\": [\n{\"ph\": \"X\",\n \"cat\": kernel}]}");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().line, 3);
  EXPECT_FALSE(parsers::parse_kineto("[1, 2]"));
  EXPECT_FALSE(parsers::parse_kineto(""));
  // Times that are no numbers, or absurd, are left out and said so.
  auto odd = parsers::parse_kineto(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e300, "dur": 1},
                                                       {"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": 1, "args": {"device": 0}}]})");
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->acts.size(), 1u);
  ASSERT_EQ(odd->notes.size(), 2u);
  EXPECT_NE(odd->notes[1].find("1 events without a usable ts/dur"), std::string::npos);
}

// ---- real captures -------------------------------------------------------------------------

namespace {

fs::path shared_profiles() { return fs::path(PERFGAP_SHARED_DIR) / "fixtures" / "profiles"; }

#define REQUIRE_PROFILES() \
  if (!fs::is_directory(shared_profiles())) GTEST_SKIP() << "no shared fixtures at " << shared_profiles()

// Kernel count and total kernel ms straight from the file with the sqlite3 C API.
std::pair<double, double> sqlite_kernels(const fs::path& p) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(p.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL", -1, &st, nullptr);
  std::pair<double, double> r{-1, -1};
  if (sqlite3_step(st) == SQLITE_ROW) r = {sqlite3_column_double(st, 0), sqlite3_column_double(st, 1) / 1e6};
  sqlite3_finalize(st);
  sqlite3_close(db);
  return r;
}

}  // namespace

TEST(ProfileFixtures, EveryNsysExportParsesAndCountsMatchSqlite) {
  REQUIRE_PROFILES();
  int n = 0, known = 0;
  for (const auto& e : fs::directory_iterator(shared_profiles())) {
    if (e.path().extension() != ".sqlite") continue;
    SCOPED_TRACE(e.path().filename().string());
    ++n;
    auto p = parsers::read_nsys_sqlite(read_file(e.path()));
    ASSERT_TRUE(p) << p.error().describe();
    auto fs = analyzers::analyze_profile(*p, e.path().filename().string(), {});
    auto [count, total_ms] = sqlite_kernels(e.path());
    auto& sum = find(fs, "profile.summary");
    EXPECT_EQ(metric(sum, "kernels"), count);
    EXPECT_NEAR(metric(sum, "gpu_kernel_ms"), total_ms, 1e-6);
    if (e.path().filename().string().rfind("nsys_202", 0) == 0) {  // the three of SOURCES.md: none ran NCCL
      ++known;
      EXPECT_EQ(metric(sum, "nccl_kernel_ms"), 0);
      EXPECT_EQ(find(fs, "profile.exposed_comm", "all").status, Status::skip);
    }
  }
  EXPECT_GE(n, 3);  // exports added to the shared captures are read and counted too
  EXPECT_EQ(known, 3);
  auto old = parsers::read_nsys_sqlite(read_file(shared_profiles() / "nsys_2021_v100pcie_x2_openmp_report2.sqlite"));
  ASSERT_TRUE(old);
  EXPECT_NE(old->format.find("2021"), std::string::npos) << old->format;
  EXPECT_FALSE(old->env_present);
  EXPECT_GT(old->api_calls, 0u);
  auto jax = parsers::read_nsys_sqlite(read_file(shared_profiles() / "nsys_2023.2.3_v100x8_jax_report2.exported-by-nsys-2023.4.4.sqlite"));
  ASSERT_TRUE(jax);
  EXPECT_NE(jax->format.find("3.7.2"), std::string::npos);
  std::size_t joined = 0;
  for (const auto& a : jax->acts) joined += a.api_start >= 0;
  EXPECT_EQ(joined, jax->acts.size());  // every kernel found its cuLaunchKernel
  EXPECT_GT(jax->ranges.size(), 20000u);
  auto env = analyzers::analyze_profile(*jax, "report2", {});
  auto& pe = find(env, "profile.env");
  EXPECT_NE(pe.status, Status::skip);
  EXPECT_NE(pe.title.find("driver 470.82.01"), std::string::npos) << pe.title;
  EXPECT_NE(pe.title.find("2 CPU sockets"), std::string::npos) << pe.title;
  EXPECT_EQ(metric(find(env, "profile.summary"), "devices"), 1);
}

TEST(ProfileFixtures, EveryKinetoTraceParsesAndCountsMatchAJsonWalk) {
  REQUIRE_PROFILES();
  int n = 0;
  for (const auto& e : fs::directory_iterator(shared_profiles())) {
    auto name = e.path().filename().string();
    if (name.rfind("kineto_", 0) != 0) continue;
    SCOPED_TRACE(name);
    ++n;
    auto z = parsers::gunzip(read_file(e.path()), 1u << 30);
    ASSERT_TRUE(z) << z.error();
    auto p = parsers::parse_kineto(*z);
    ASSERT_TRUE(p) << p.error().describe();
    // The independent count: a plain nlohmann walk over traceEvents.
    auto j = nlohmann::json::parse(*z);
    double kernels = 0, kernel_us = 0, nccl_us = 0;
    for (const auto& ev : j["traceEvents"])
      if (ev.value("ph", "") == "X" && ev.value("cat", "") == "kernel") {
        ++kernels;
        kernel_us += ev["dur"].get<double>();
        if (ev.value("name", "").rfind("nccl", 0) == 0) nccl_us += ev["dur"].get<double>();
      }
    auto fs = analyzers::analyze_profile(*p, name, {});
    auto& sum = find(fs, "profile.summary");
    EXPECT_EQ(metric(sum, "kernels"), kernels);
    EXPECT_NEAR(metric(sum, "gpu_kernel_ms"), kernel_us / 1e3, 1e-3);
    EXPECT_NEAR(metric(sum, "nccl_kernel_ms"), nccl_us / 1e3, 1e-3);
    EXPECT_GT(nccl_us, 0);
    EXPECT_NE(find(fs, "profile.exposed_comm", "all").status, Status::skip);
    EXPECT_EQ(find(fs, "profile.launch_bound").status == Status::skip, false);
  }
  EXPECT_EQ(n, 5);
  auto z = parsers::gunzip(read_file(shared_profiles() / "kineto_hta_v100x2_allreduce_df_index_resolver.json.gz"), 1u << 30);
  auto p = parsers::parse_kineto(*z);
  ASSERT_TRUE(p);
  auto fs = analyzers::analyze_profile(*p, "df", {});
  auto& it = find(fs, "profile.iterations");
  EXPECT_EQ(it.status, Status::pass);
  EXPECT_NE(it.title.find("ProfilerStep#N"), std::string::npos) << it.title;
  EXPECT_GE(metric(it, "iterations"), 2);
  EXPECT_EQ(metric(find(fs, "profile.exposed_comm", "AllReduce"), "kernels"), 2020);
  auto nm = parsers::parse_kineto(*parsers::gunzip(read_file(shared_profiles() / "kineto_hta_a100x2_nccl_metadata.json.gz"), 1u << 30));
  ASSERT_TRUE(nm);
  auto nf = analyzers::analyze_profile(*nm, "nm", {});
  EXPECT_GT(metric(find(nf, "profile.exposed_comm", "AllReduce"), "msg_bytes"), 0);
  EXPECT_EQ(find(nf, "profile.exposed_comm", "Broadcast").subject, "Broadcast");
}

// profile.copies on every real capture: the copies of each direction and host memory counted
// straight from the file (Kineto: the memcpy events' names; nsys: copyKind/srcKind/dstKind
// through the export's own enum labels, or nsys's numbers where it has none).
TEST(ProfileFixtures, CopiesByKindAndMemoryMatchTheFilesOwnCounts) {
  REQUIRE_PROFILES();
  int n = 0;
  for (const auto& e : fs::directory_iterator(shared_profiles())) {
    const auto name = e.path().filename().string();
    std::map<std::string, double> want;  // metric key -> count
    std::optional<parsers::Profile> p;
    if (name.rfind("kineto_", 0) == 0) {
      auto z = parsers::gunzip(read_file(e.path()), 1u << 30);
      ASSERT_TRUE(z) << z.error();
      auto r = parsers::parse_kineto(*z);
      ASSERT_TRUE(r) << r.error().describe();
      p = std::move(*r);
      const auto j = nlohmann::json::parse(*z);
      for (const auto& ev : j["traceEvents"]) {
        if (ev.value("ph", "") != "X") continue;
        const auto cat = ev.value("cat", ""), nm = ev.value("name", "");
        if (cat == "gpu_memset") ++want["memset"];
        if (cat != "gpu_memcpy") continue;
        const bool h2d = nm.find("HtoD") != std::string::npos, d2h = nm.find("DtoH") != std::string::npos;
        const std::string mem = nm.find("Pageable") != std::string::npos ? "_pageable"
                                : nm.find("Pinned") != std::string::npos ? "_pinned"
                                                                         : "";
        ++want[h2d                                    ? "h2d" + mem
               : d2h                                  ? "d2h" + mem
               : nm.find("DtoD") != std::string::npos ? "d2d"
               : nm.find("PtoP") != std::string::npos ? "p2p"
                                                      : "other"];
      }
    } else if (e.path().extension() == ".sqlite") {
      auto r = parsers::read_nsys_sqlite(read_file(e.path()));
      ASSERT_TRUE(r) << r.error().describe();
      p = std::move(*r);
      sqlite3* db = nullptr;
      sqlite3_open_v2(e.path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
      const bool labels = !sqlite_strings(db, "SELECT name FROM sqlite_master WHERE name='ENUM_CUDA_MEM_KIND'").empty();
      // nsys's memory kinds (0 pageable, 1 pinned) where the export has no enum table.
      const std::string q =
          labels
              ? "SELECT o.label || '|' || coalesce(s.label, '') || '|' || coalesce(d.label, '') FROM CUPTI_ACTIVITY_KIND_MEMCPY c "
                "LEFT JOIN ENUM_CUDA_MEMCPY_OPER o ON o.id = c.copyKind LEFT JOIN ENUM_CUDA_MEM_KIND s ON s.id = c.srcKind "
                "LEFT JOIN ENUM_CUDA_MEM_KIND d ON d.id = c.dstKind"
              : "SELECT CASE copyKind WHEN 1 THEN 'Host-to-Device' WHEN 2 THEN 'Device-to-Host' WHEN 8 THEN 'Device-to-Device' "
                "WHEN 10 THEN 'Peer-to-Peer' ELSE 'x' END || '|' || CASE srcKind WHEN 0 THEN 'Pageable' WHEN 1 THEN 'Pinned' "
                "ELSE '' END || '|' || CASE dstKind WHEN 0 THEN 'Pageable' WHEN 1 THEN 'Pinned' ELSE '' END FROM CUPTI_ACTIVITY_KIND_MEMCPY";
      if (!sqlite_strings(db, "SELECT name FROM sqlite_master WHERE name='CUPTI_ACTIVITY_KIND_MEMCPY'").empty())
        for (const auto& row : sqlite_strings(db, q)) {
          const auto a = row.find('|'), b = row.find('|', a + 1);
          const std::string kind = row.substr(0, a), src = row.substr(a + 1, b - a - 1), dst = row.substr(b + 1);
          auto mem = [](const std::string& m) {
            return m == "Pageable" ? std::string("_pageable") : m == "Pinned" ? std::string("_pinned") : std::string();
          };
          ++want[kind == "Host-to-Device"     ? "h2d" + mem(src)
                 : kind == "Device-to-Host"   ? "d2h" + mem(dst)
                 : kind == "Device-to-Device" ? "d2d"
                 : kind == "Peer-to-Peer"     ? "p2p"
                                              : "other"];
        }
      if (!sqlite_strings(db, "SELECT name FROM sqlite_master WHERE name='CUPTI_ACTIVITY_KIND_MEMSET'").empty())
        want["memset"] += std::stod(sqlite_strings(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET")[0]);
      sqlite3_close(db);
    } else {
      continue;
    }
    SCOPED_TRACE(name);
    ++n;
    auto fs = analyzers::analyze_profile(*p, name, {});
    auto& c = find(fs, "profile.copies");
    if (c.status == Status::skip) continue;  // too few kernels
    double all = 0;
    for (const auto& [k, v] : want) {
      if (v == 0) continue;
      all += v;
      EXPECT_EQ(metric(c, "copies." + k), v) << k;
    }
    EXPECT_EQ(metric(c, "copies"), all);
  }
  EXPECT_GE(n, 8);
}

// Issue 42 item 8 on HTA's own trace_diff test trace (6 ProfilerSteps, 12 cudaGraphLaunch):
// the usual median of 6 windows (107.22 and 122.21 ms in the middle; it took 107.22), the last
// window as long as ProfilerStep#1014 (166.35 ms; it ran to 166.49), and launch figures without
// the graph-launched kernels (p50 16.0 us and 68.2% shorter than their call with them).
TEST(ProfileFixtures, HtaTraceDiffFiguresAsHtaDefinesThem) {
  REQUIRE_PROFILES();
  auto z = parsers::gunzip(read_file(shared_profiles() / "kineto_hta_a100_ws8_trace_diff_test.json.gz"), 1u << 30);
  ASSERT_TRUE(z) << z.error();
  auto p = parsers::parse_kineto(*z);
  ASSERT_TRUE(p) << p.error().describe();
  auto fs = analyzers::analyze_profile(*p, "test", {});
  auto& it = find(fs, "profile.iterations");
  EXPECT_EQ(metric(it, "iterations"), 6);
  EXPECT_NEAR(metric(it, "iteration_ms_median"), 114.72, 0.005);
  EXPECT_NEAR(metric(it, "iteration_ms"), 124.18, 0.005);  // the mean, every per-iteration figure's iteration (issue 41 item 7)
  ASSERT_EQ(it.table.size(), 7u);
  EXPECT_EQ(it.table[6][1], "166.35");
  auto& l = find(fs, "profile.launch_bound");
  EXPECT_NEAR(metric(l, "launch_api_us_p50"), 8, 1e-9);
  EXPECT_NEAR(metric(l, "short_kernel_pct"), 39.3, 0.05);
  EXPECT_NEAR(metric(l, "graph_kernel_pct"), 45.2, 0.05);
  auto& c = find(fs, "profile.copies");
  EXPECT_EQ(c.status, Status::warn) << c.title;  // 13% of the iteration copying with no kernel running
  EXPECT_NEAR(metric(c, "copy_no_kernel_pct_of_iter"), 13.0, 0.05);
}

// Issue 41 item 7: one iteration per report. With iterations of unequal length the median window
// and the mean differ (a mixed report read 283.4 ms in profile.exposed_comm and 331.7 ms in
// profile.iterations); every finding now states the same one, the mean.
TEST(ProfileFindings, OneIterationLengthInEveryFinding) {
  gen::Scenario s;
  gen::Gpu gpu;
  gpu.pid = 1000;
  std::int64_t base = 1'000'000'000;
  for (double len_ms : {10.0, 40.0, 40.0}) {
    const auto len = static_cast<std::int64_t>(len_ms * 1e6), step = len / 50;
    for (int k = 0; k < 50; ++k) {
      gen::Kernel kn;
      kn.start = base + k * step, kn.end = base + (k + 1) * step, kn.name = k == 49 ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL" : "gemm" + std::to_string(k);
      kn.api_start = base - 20'000 + k * 100, kn.api_end = kn.api_start + 50;
      gpu.kernels.push_back(kn);
    }
    s.ranges.push_back({base - 50'000, base + len - 50'000, "ProfilerStep#" + std::to_string(s.ranges.size() + 1), 1000});
    base += len;
  }
  s.gpus.push_back(gpu);
  auto fs = run(fixture::profile_from_kineto_ranks(s));
  const auto& it = find(fs, "profile.iterations");
  EXPECT_NEAR(metric(it, "iteration_ms"), 30, 1e-6);
  EXPECT_NEAR(metric(it, "iteration_ms_median"), 40, 1e-6);
  EXPECT_NE(it.title.find("30.00 ms per iteration"), std::string::npos) << it.title;
  for (const auto* id : {"profile.exposed_comm", "profile.gpu_idle"})
    for (const auto& f : fs) {
      if (f.id == id && !f.title.empty()) {
        EXPECT_EQ(f.title.find("40.00 ms iteration"), std::string::npos) << f.title;
      }
    }
  EXPECT_NE(find(fs, "profile.exposed_comm", "all").title.find("of the 30.00 ms iteration"), std::string::npos) << find(fs, "profile.exposed_comm", "all").title;
  EXPECT_NEAR(analyzers::profile_figures(fixture::profile_from_kineto_ranks(s), {}).iteration_ms, 30, 1e-6);
}
