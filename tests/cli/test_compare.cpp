// perfgap compare on real reports of the binary: a golden tree before and after a fix, the
// nccl-tests fixtures, and what it refuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "report_json.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::json_report;
using perfgap::fixture::run_binary;

namespace {

class CompareCli : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = perfgap::fixture::unpack_tree((fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/golden/h100-c1-remote-numa.tree").string(),
                                              tree_.path());
    ASSERT_TRUE(spec) << spec.error();
  }
  fs::path save(const std::string& name, const std::vector<std::string>& args, int status) {
    auto r = run_binary(PERFGAP_BINARY, args);
    EXPECT_EQ(r.status, status) << r.err;
    fs::path p = fs::path(out_.path()) / name;
    std::ofstream(p) << r.out;
    return p;
  }
  perfgap::fixture::TempDir tree_, out_;
};

TEST_F(CompareCli, AFixOnTheNodeIsFixedAndUndoingItRegresses) {
  auto before = save("before.json", {"check", "--root", tree_.path(), "--format", "json"}, 1);
  std::ofstream(fs::path(tree_.path()) / "proc/sys/kernel/numa_balancing") << "0\n";
  auto after = save("after.json", {"check", "--root", tree_.path(), "--format", "json"}, 1);

  auto j = json_report(PERFGAP_BINARY, {"compare", before.string(), after.string()}, 0);
  EXPECT_EQ(j["source"]["kind"], "compare");
  EXPECT_EQ(j["source"]["inputs"], nlohmann::json::array({before.string(), after.string()}));
  const auto* fixed = perfgap::fixture::finding(j, "compare.fixed", "numa.balancing");
  ASSERT_NE(fixed, nullptr) << j.dump(1);
  EXPECT_EQ((*fixed)["status"], "pass");
  const auto* still = perfgap::fixture::finding(j, "compare.unchanged", "cpu.cstate.deep_idle");
  ASSERT_NE(still, nullptr);
  EXPECT_EQ((*still)["status"], "warn") << "a problem still there is not a regression";
  EXPECT_EQ(perfgap::fixture::required_finding(j, "compare.summary")["metrics"]["fixed"], 1);

  auto back = json_report(PERFGAP_BINARY, {"compare", after.string(), before.string()}, 1);
  const auto* reg = perfgap::fixture::finding(back, "compare.regressed", "numa.balancing");
  ASSERT_NE(reg, nullptr);
  EXPECT_EQ((*reg)["status"], "fail");
  auto text = run_binary(PERFGAP_BINARY, {"compare", after.string(), before.string()});
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.out.find("numa.balancing"), std::string::npos) << text.out;
}

TEST_F(CompareCli, NcclTestsBandwidthDropIsAMetricRegression) {
  const fs::path logs = fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/logs/nccl-tests";
  auto ref = save("ref.json", {"analyze", "nccl-tests", (logs / "ref-allreduce.txt").string(), "--format", "json"}, 0);
  auto slow = save("slow.json", {"analyze", "nccl-tests", (logs / "slow-allreduce.txt").string(), "--format", "json"}, 0);
  auto j = json_report(PERFGAP_BINARY, {"compare", ref.string(), slow.string()}, 1);
  bool busbw_worse = false;
  for (const auto& f : j["findings"])
    if (f["id"] == "compare.metric" && f["status"] == "fail" && f["title"].get<std::string>().find("busbw") != std::string::npos) busbw_worse = true;
  EXPECT_TRUE(busbw_worse) << j.dump(1);
  json_report(PERFGAP_BINARY, {"compare", slow.string(), ref.string()}, 0);
}

TEST_F(CompareCli, RefusesMixedKindsAndBrokenReportsInOneLine) {
  auto node = save("node.json", {"check", "--root", tree_.path(), "--format", "json"}, 1);
  auto gap = save("gap.json", {"gap", "--measured", "110", "--reference", "100", "--format", "json"}, 1);
  auto mixed = run_binary(PERFGAP_BINARY, {"compare", node.string(), gap.string()});
  EXPECT_EQ(mixed.status, 2);
  EXPECT_TRUE(perfgap::fixture::one_line(mixed.err)) << mixed.err;
  EXPECT_NE(mixed.err.find("same kind"), std::string::npos) << mixed.err;
  EXPECT_TRUE(mixed.out.empty());
  fs::path cut = fs::path(out_.path()) / "cut.json";
  {
    std::ifstream in(node);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(cut) << text.substr(0, text.size() / 2);
  }
  auto bad = run_binary(PERFGAP_BINARY, {"compare", node.string(), cut.string()});
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(perfgap::fixture::one_line(bad.err)) << bad.err;
  EXPECT_NE(bad.err.find(cut.string() + ": line "), std::string::npos) << bad.err;
  auto missing = run_binary(PERFGAP_BINARY, {"compare", node.string(), (fs::path(out_.path()) / "nope.json").string()});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos);
}

// The analyze kineto reports of two different jobs (A100-PG509-200 at world size 8, Tesla
// V100-SXM2-16GB at world size 2): compare said fixed and regressed (exit 1); analyze kineto
// --reference skips the same pair as another job, and so does compare now (exit 0: nothing failed).
TEST_F(CompareCli, ProfilesOfTwoDifferentJobsAreNotCompared) {
  const fs::path dir = fs::path(PERFGAP_SHARED_DIR) / "fixtures/profiles";
  if (!fs::exists(dir / "kineto_hta_a100_ws8_trace_diff_control.json.gz")) GTEST_SKIP() << dir << " absent";
  auto control = save("control.json", {"analyze", "kineto", (dir / "kineto_hta_a100_ws8_trace_diff_control.json.gz").string(), "--format", "json"}, 0);
  auto test = save("test.json", {"analyze", "kineto", (dir / "kineto_hta_a100_ws8_trace_diff_test.json.gz").string(), "--format", "json"}, 0);
  auto j = json_report(PERFGAP_BINARY, {"compare", control.string(), test.string()}, 0);
  ASSERT_EQ(j["findings"].size(), 1u) << j.dump(1);
  const auto& s = j["findings"][0];
  EXPECT_EQ(s["id"], "compare.summary");
  EXPECT_EQ(s["status"], "skip");
  const std::string title = s["title"];
  EXPECT_NE(title.find("NVIDIA A100-PG509-200"), std::string::npos) << title;
  EXPECT_NE(title.find("Tesla V100-SXM2-16GB"), std::string::npos) << title;
  EXPECT_NE(title.find("world size 8 in"), std::string::npos) << title;
  // One job against itself (a copy of its report) is compared as before.
  const fs::path copy = fs::path(out_.path()) / "control-copy.json";
  fs::copy_file(control, copy);
  auto self = json_report(PERFGAP_BINARY, {"compare", control.string(), copy.string()}, 0);
  EXPECT_GT(self["findings"].size(), 1u);
}

// nccl-tests runs of another scale: the p5 run on 16 ranks over two nodes against its 8-rank
// one-node reference, neither printing its ranks (busbw/algbw 1.875 and 1.75). compare called it a
// regression (busbw_gbps.1048576 64.24 -> 15.95, exit 1) though analyze --reference skipped the
// same pair; now it is not compared (exit 0, both counts named). Two reports of one scale (the
// same 16-rank run, and the p4de run of 16 ranks against it) are compared as before.
TEST_F(CompareCli, NcclTestsRunsOfAnotherScaleAreNotCompared) {
  const fs::path logs = fs::path(PERFGAP_SHARED_DIR) / "field/logs";
  if (!fs::exists(logs / "nt-p5-2node-vs-1node-reference/reference.txt")) GTEST_SKIP() << logs << " absent";
  auto analyze = [&](const std::string& name, const fs::path& input) {
    return save(name, {"analyze", "nccl-tests", input.string(), "--format", "json"}, 0);
  };
  auto one = analyze("p5-1n.json", logs / "nt-p5-2node-vs-1node-reference/reference.txt");
  auto two = analyze("p5-2n.json", logs / "nt-p5-2node-vs-1node-reference/input.txt");
  auto j = json_report(PERFGAP_BINARY, {"compare", one.string(), two.string()}, 0);
  ASSERT_EQ(j["findings"].size(), 1u) << j.dump(1);
  const auto& s = j["findings"][0];
  EXPECT_EQ(s["id"], "compare.summary");
  EXPECT_EQ(s["status"], "skip");
  const std::string title = s["title"];
  EXPECT_NE(title.find("8 ranks in " + one.string() + ", 16 in " + two.string()), std::string::npos) << title;
  // The same setup: the 16-rank run against another capture of it, and the p4de 16-rank run.
  auto again = analyze("p5-2n-srun.json", logs / "nt-p5-2node-srun-label-allreduce-16g/input.txt");
  auto same = json_report(PERFGAP_BINARY, {"compare", two.string(), again.string()}, 0);
  const auto& summary = perfgap::fixture::required_finding(same, "compare.summary");
  EXPECT_NE(summary["status"], "skip") << same.dump(1);
  EXPECT_EQ(summary["title"].get<std::string>().find("different jobs"), std::string::npos) << same.dump(1);
  auto p4de = analyze("p4de-2n.json", logs / "nt-p4de-2node-srun-label-allreduce/input.txt");
  auto slower = json_report(PERFGAP_BINARY, {"compare", two.string(), p4de.string()}, 1);
  bool busbw_worse = false;
  for (const auto& f : slower["findings"])
    busbw_worse = busbw_worse || (f["id"] == "compare.metric" && f["status"] == "fail" &&
                                  f["title"].get<std::string>().find("busbw") != std::string::npos);
  EXPECT_TRUE(busbw_worse) << slower.dump(1);
}

// Field review 5: an all_reduce_perf run of 256 ranks on 16 nodes against an alltoall_perf run
// (its collective known by the file's name) was `FAIL compare.metric ... busbw 67.29 -> 0.51
// (-99.2%)`, exit 1, and swapped `+13094.1%`: different runs, not compared, exit 0 both ways.
TEST_F(CompareCli, NcclTestsOfDifferentCollectivesAreDifferentRuns) {
  const fs::path dir = fs::path(PERFGAP_SHARED_DIR) / "fixtures/nccl-tests";
  const fs::path ar = dir / "all-reduce-256gpu-nccl-2.8.4-old-format-NA-errors-nccl-tests-78.txt";
  const fs::path a2a = dir / "alltoall-8node-v100-old-format-nccl-tests-78.txt";
  if (!fs::exists(ar) || !fs::exists(a2a)) GTEST_SKIP() << dir << " absent";
  auto all_reduce = save("ar.json", {"analyze", "nccl-tests", ar.string(), "--format", "json"}, 0);
  auto all_to_all = save("a2a.json", {"analyze", "nccl-tests", a2a.string(), "--format", "json"}, 0);
  for (const auto& [before, after, first, second] : {std::tuple{all_reduce, all_to_all, "AllReduce", "AllToAll"},
                                                     std::tuple{all_to_all, all_reduce, "AllToAll", "AllReduce"}}) {
    auto j = json_report(PERFGAP_BINARY, {"compare", before.string(), after.string()}, 0);
    ASSERT_EQ(j["findings"].size(), 1u) << j.dump(1);
    const auto& s = j["findings"][0];
    EXPECT_EQ(s["id"], "compare.summary");
    EXPECT_EQ(s["status"], "skip");
    const std::string title = s["title"];
    EXPECT_NE(title.find(std::string("the reports are of different runs (") + first + " in " + before.string() + ", " + second + " in " +
                         after.string() + ")"),
              std::string::npos)
        << title;
  }
}

// Field review 4: the p5 16-rank run over 8 B to 16 GiB against the EKS capture of it that stops at
// 2 GiB (rows elided). compare said `max_busbw_gbps: 487.1 -> 437.8 (-10.1%)` worse, a peak of
// 16 GiB against one of 2 GiB; at 2 GiB both read 443.7 and 437.8. The peak is compared over the
// sizes both measured (-1.3%, not worse), and `sizes: 32 -> 7` is said to be no measure of speed.
// The sizes that did fall (64 MiB to 1 GiB) still do.
TEST_F(CompareCli, APeakOfAShorterSizeRangeIsComparedOverTheCommonSizes) {
  const fs::path logs = fs::path(PERFGAP_SHARED_DIR) / "field/logs";
  const auto srun = logs / "nt-p5-2node-srun-label-allreduce-16g/input.txt", eks = logs / "nt-p5-eks-tag-output-elided-rows/input.txt";
  if (!fs::exists(srun) || !fs::exists(eks)) GTEST_SKIP() << logs << " absent";
  auto a = save("a.json", {"analyze", "nccl-tests", srun.string(), "--format", "json"}, 0);
  auto b = save("b.json", {"analyze", "nccl-tests", eks.string(), "--format", "json"}, 0);
  auto j = json_report(PERFGAP_BINARY, {"compare", a.string(), b.string(), "-v"}, 1);
  const nlohmann::json* m = nullptr;
  for (const auto& f : j["findings"])
    if (f["id"] == "compare.metric") m = &f;
  ASSERT_NE(m, nullptr) << j.dump(1);
  const std::string title = (*m)["title"];
  EXPECT_EQ(title.find("max_busbw_gbps"), std::string::npos) << title;
  EXPECT_NE(title.find("busbw_gbps.134217728"), std::string::npos) << title;
  EXPECT_DOUBLE_EQ((*m)["metrics"]["max_busbw_gbps.before"].get<double>(), 443.72);
  EXPECT_DOUBLE_EQ((*m)["metrics"]["max_busbw_gbps.after"].get<double>(), 437.79);
  std::string peak, sizes;
  for (const auto& e : (*m)["evidence"]) {
    const std::string src = e["source"];
    if (src.ends_with(" max_busbw_gbps")) peak = e["observed"];
    if (src.ends_with(" sizes")) sizes = e["observed"];
  }
  EXPECT_NE(peak.find("443.7 -> 437.8 (-1.3%, higher is better; the peak over the 6 sizes both runs measured (64 MiB to 2 GiB)"),
            std::string::npos)
      << peak;
  EXPECT_NE(peak.find("487.1 -> 437.8"), std::string::npos) << peak;
  EXPECT_NE(sizes.find("32 -> 7"), std::string::npos) << sizes;
  EXPECT_NE(sizes.find("(before 8 B to 16 GiB, after 0 B to 2 GiB), not a measure of speed"), std::string::npos) << sizes;
  const auto& summary = perfgap::fixture::required_finding(j, "compare.summary");
  EXPECT_EQ(summary["title"].get<std::string>().find("max_busbw"), std::string::npos) << summary["title"];
}

// A device lost between two checks of one node is a regression, not "cannot tell": an RDMA
// port whose siblings the after run still read (the GB200 VM's mlx5_3 removed), and the only
// GPU of a node (gpu.inventory pass "1 GPU(s)" -> skip "no NVIDIA GPU on PCI").
TEST(CompareCliLostDevices, ALostPortOrGpuRegressesWithExit1) {
  perfgap::fixture::TempDir a, b, out;
  for (const auto* dir : {&a, &b})
    ASSERT_TRUE(perfgap::fixture::unpack_tree((fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/golden/gb200-vm.tree").string(), dir->path()));
  fs::remove_all(fs::path(b.path()) / "sys/class/infiniband/mlx5_3");
  auto report = [&](const perfgap::fixture::TempDir& root, const std::string& name) {
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", root.path(), "--format", "json"});
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    const auto p = fs::path(out.path()) / name;
    std::ofstream(p) << r.out;
    return p.string();
  };
  const auto before = report(a, "before.json"), after = report(b, "after.json");
  auto j = json_report(PERFGAP_BINARY, {"compare", before, after}, 1);
  const auto* lost = perfgap::fixture::finding(j, "compare.regressed", "net.ib.ports (mlx5_3:1)");
  ASSERT_NE(lost, nullptr) << j.dump(1);
  EXPECT_EQ((*lost)["status"], "fail");
  EXPECT_NE((*lost)["title"].get<std::string>().find("mlx5_3:1 is gone"), std::string::npos) << (*lost)["title"];
  EXPECT_EQ(perfgap::fixture::finding(j, "compare.gone", "net.ib.ports (mlx5_3:1)"), nullptr);
  EXPECT_GE(perfgap::fixture::required_finding(j, "compare.summary")["metrics"]["regressed"].get<double>(), 1);

  // The GPU: the kvm guest's one H100 gone from PCI and from the driver's list.
  perfgap::fixture::TempDir g1, g2;
  for (const auto* dir : {&g1, &g2})
    ASSERT_TRUE(perfgap::fixture::unpack_tree((fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/golden/kvm-guest.tree").string(), dir->path()));
  for (const auto& e : fs::directory_iterator(fs::path(g2.path()) / "sys/bus/pci/devices")) {
    std::ifstream vendor(e.path() / "vendor");
    std::string v;
    vendor >> v;
    if (v == "0x10de") fs::remove_all(e.path());
  }
  fs::remove_all(fs::path(g2.path()) / "proc/driver/nvidia/gpus");
  const auto gpu_before = report(g1, "gpu-before.json"), gpu_after = report(g2, "gpu-after.json");
  auto g = json_report(PERFGAP_BINARY, {"compare", gpu_before, gpu_after}, 1);
  const auto* gone = perfgap::fixture::finding(g, "compare.regressed", "gpu.inventory");
  ASSERT_NE(gone, nullptr) << g.dump(1);
  EXPECT_NE((*gone)["title"].get<std::string>().find("gpus_pci 1 -> absent"), std::string::npos) << (*gone)["title"];
}

// Field review 3: `compare ctl.json ctl.json` said "4 still a problem" as if a change had been
// made and had fixed nothing. One file named twice (or through a link) is a usage error naming
// both; a copy of it may be a second run of an unchanged node, and is compared.
TEST_F(CompareCli, OneFileNamedTwiceIsRefused) {
  auto once = save("once.json", {"check", "--root", tree_.path(), "--format", "json"}, 1);
  const fs::path link = fs::path(out_.path()) / "link.json";
  fs::create_symlink(once, link);
  for (const auto& second : {once, link}) {
    auto r = run_binary(PERFGAP_BINARY, {"compare", once.string(), second.string()});
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.err.find("are the same file"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  const fs::path copy = fs::path(out_.path()) / "copy.json";
  fs::copy_file(once, copy);
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"compare", once.string(), copy.string()}).status, 0);
}

}  // namespace
