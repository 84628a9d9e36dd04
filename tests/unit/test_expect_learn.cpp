// fleet/expect: gather (a report's findings to facts), learn (a clear majority per kind, never
// a minority), judge (fail for missing or degraded hardware, warn for versions and settings,
// skip for a kind not in the file) and the YAML file, on findings written as the checks write them.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "fleet/expect.hpp"
#include "fleet/reader.hpp"

namespace {

using perfgap::fleet::Aspect;
using perfgap::fleet::NodeFacts;
using perfgap::report::Finding;
using perfgap::report::Status;

// The findings of a node with `gpus` GPUs and one RDMA port per GPU, as gpu.inventory,
// pcie.link, net.ib.ports and net.ib.counters write them.
struct ExpectNodeSpec {
  std::string name = "gpu0001";
  int gpus = 4;
  std::string kernel = "6.8.0-45-generic";
  int width = 16;             // every GPU's link
  int narrow_gpu = -1;        // this GPU at x8
  int slow_port = -1;         // this port at 200 Gb/s
  int missing_nic = -1;       // this NIC gone (no port, no PCI link)
  int moved_nic = -1;         // this NIC on the other socket
  int moved_gpu = -1;         // this GPU on the other socket
  int nvlink_down_gpu = -1;   // this GPU with 16 of its 18 NVLinks up
  int old_firmware_nic = -1;  // this NIC on another firmware
  double nvlink_gbps = 0;     // the NVLinks' speed (gpu.nvlink's link_gbps; 0: not read)
  int slow_nvlink_gpu = -1;   // this GPU's NVLinks at 20 GB/s
  bool gpus_gone = false;     // no GPU on PCI (gpu.inventory's skip), every GPU finding gone
  bool driver = true;         // NVIDIA's driver loaded (node.settings.nvidia_driver)
  std::string cpu = "Neoverse-V2";
  std::string nic_model;        // net.ib.ports' "NIC model" evidence on every port ("" = none)
  std::string other_nic_model;  // ... except NIC 0 and 1, which are of this model
};

std::string expect_bdf(const char* bus, int i) { return std::string("0000:") + bus + std::to_string(i) + ":00.0"; }

Finding expect_make(std::string id, std::string layer, std::string subject = "", std::string title = "") {
  Finding f;
  f.id = std::move(id);
  f.layer = std::move(layer);
  f.status = Status::pass;
  f.subject = std::move(subject);
  f.title = std::move(title);
  return f;
}

std::vector<Finding> expect_findings(const ExpectNodeSpec& s) {
  std::vector<Finding> out;
  Finding inv = expect_make("gpu.inventory", "gpu");
  inv.title = std::to_string(s.gpus) + " GPU(s): " + std::to_string(s.gpus) + " x NVIDIA GB200, driver 570.133.20";
  inv.metric("gpus_pci", s.gpus).metric("gpus_visible", s.gpus);
  for (int i = 0; i < s.gpus; ++i) inv.metric("numa_node." + expect_bdf("1", i), (i < s.gpus / 2) == (i != s.moved_gpu) ? 0 : 1);
  if (s.gpus_gone) {
    inv = expect_make("gpu.inventory", "gpu", "", "no NVIDIA GPU on PCI (vendor 0x10de, display/3D class)");
    inv.status = Status::skip;
  }
  out.push_back(inv);
  for (int i = 0; i < s.gpus && !s.gpus_gone; ++i) {
    Finding nv = expect_make("gpu.nvlink", "gpu", expect_bdf("1", i), "18 NVLinks up");
    nv.metric("links_up", i == s.nvlink_down_gpu ? 16 : 18).metric("errors", 0);
    if (s.nvlink_gbps > 0) nv.metric("link_gbps", i == s.slow_nvlink_gpu ? 20 : s.nvlink_gbps);
    out.push_back(nv);
  }
  for (int i = 0; i < s.gpus && !s.gpus_gone; ++i) {
    Finding l = expect_make("pcie.link", "pcie", expect_bdf("1", i), "GPU link x16 at 32 GT/s (its maximum)");
    l.metric("link_width", i == s.narrow_gpu ? 8 : s.width).metric("link_speed_gts", 32);
    out.push_back(l);
  }
  for (int i = 0; i < s.gpus; ++i) {
    if (i == s.missing_nic) continue;
    Finding l = expect_make("pcie.link", "pcie", expect_bdf("2", i), "NIC link x16 at 32 GT/s (its maximum)");
    l.metric("link_width", 16).metric("link_speed_gts", 32);
    out.push_back(l);
    const std::string port = "mlx5_" + std::to_string(i) + ":1";
    Finding p = expect_make("net.ib.ports", "network", port, "ACTIVE, LinkUp");
    p.add("/sys/class/infiniband/mlx5_" + std::to_string(i) + "/ports/1/state", "ACTIVE", "ACTIVE");
    p.add("/sys/class/infiniband/mlx5_" + std::to_string(i) + "/fw_ver", i == s.old_firmware_nic ? "28.39.1002" : "28.43.1014");
    if (!s.nic_model.empty()) p.add("NIC model", i < 2 && !s.other_nic_model.empty() ? s.other_nic_model : s.nic_model);
    p.metric("rate_gbps", i == s.slow_port ? 200 : 400);
    out.push_back(p);
    Finding c = expect_make("net.ib.counters", "network", port);
    const int gpu = i == s.moved_nic ? (i + 2) % s.gpus : i;
    c.title = port + " (" + expect_bdf("2", i) + ", NUMA node of GPU " + std::to_string(gpu) + "): 0 link errors since boot";
    out.push_back(c);
  }
  return out;
}

NodeFacts expect_node(const ExpectNodeSpec& s) {
  perfgap::report::StringMap settings = {{"cpu_model", s.cpu}, {"nvidia_driver", s.driver ? "570.133.20" : "unknown"}, {"governor", "performance"},
                                         {"page_size_kb", "64"}, {"iommu_mode", "unknown"}};
  return perfgap::fleet::gather_facts(s.name, s.kernel, settings, expect_findings(s));
}

std::string expect_name(int i) { return "gpu" + std::string(i < 10 ? "000" : "00") + std::to_string(i); }

// Ten nodes of one kind, each spec changed by `edit`.
std::vector<NodeFacts> expect_fleet(const std::function<void(int, ExpectNodeSpec&)>& edit) {
  std::vector<NodeFacts> out;
  for (int i = 1; i <= 10; ++i) {
    ExpectNodeSpec s;
    s.name = expect_name(i);
    edit(i, s);
    out.push_back(expect_node(s));
  }
  return out;
}

const Finding& expect_finding(const std::vector<Finding>& fs, std::string_view id) {
  auto it = std::find_if(fs.begin(), fs.end(), [&](const Finding& f) { return f.id == id; });
  if (it == fs.end()) throw std::runtime_error("no " + std::string(id));
  return *it;
}

TEST(ExpectGather, ReadsCountsLinksPlacementVersionsAndSettingsFromTheFindings) {
  auto n = expect_node({});
  EXPECT_EQ(n.kind, "NVIDIA GB200 / Neoverse-V2");
  EXPECT_EQ(n.facts[Aspect::counts]["gpus"], "4");
  EXPECT_EQ(n.facts[Aspect::counts]["rdma_ports"], "4");
  EXPECT_EQ(n.facts[Aspect::counts]["port mlx5_2:1 state"], "ACTIVE");
  EXPECT_EQ(n.facts[Aspect::links]["gpu 0000:13:00.0 pcie_width"], "16");
  EXPECT_EQ(n.facts[Aspect::links]["nic 0000:21:00.0 pcie_gts"], "32");
  EXPECT_EQ(n.facts[Aspect::links]["port mlx5_0:1 rate_gbps"], "400");
  EXPECT_EQ(n.facts[Aspect::placement]["port mlx5_3:1 nearest_gpus"], "NUMA node of GPU 3");
  EXPECT_EQ(n.facts[Aspect::placement]["gpu 0000:13:00.0 numa_node"], "1");
  EXPECT_EQ(n.facts[Aspect::counts]["gpu 0000:10:00.0 nvlinks_up"], "18");
  EXPECT_EQ(n.facts[Aspect::versions]["nic mlx5_2 firmware"], "28.43.1014");
  EXPECT_EQ(n.facts[Aspect::versions]["kernel"], "6.8.0-45-generic");
  EXPECT_EQ(n.facts[Aspect::versions]["nvidia_driver"], "570.133.20");
  EXPECT_EQ(n.facts[Aspect::settings]["governor"], "performance");
  // A setting not read is no fact: learning "unknown" would hold the fleet to not knowing.
  EXPECT_EQ(n.facts[Aspect::settings].count("iommu_mode"), 0u);
}

TEST(ExpectLearn, MajorityLearnedMinorityNeverAndTheSplitLeftOut) {
  // gpu0003 lost a NIC, gpu0005 runs a GPU at x8, gpu0007 a port at 200, gpu0009 another kernel.
  auto nodes = expect_fleet([](int i, ExpectNodeSpec& s) {
    if (i == 3) s.missing_nic = 1;
    if (i == 5) s.narrow_gpu = 2;
    if (i == 7) s.slow_port = 2;
    if (i == 9) s.kernel = "6.8.0-99-generic";
  });
  // A setting 7 of the 10 nodes agree on: under 80%.
  for (int i = 0; i < 5; ++i) nodes[i].facts[Aspect::settings]["numa_balancing"] = i < 3 ? "0" : "1";
  for (int i = 5; i < 10; ++i) nodes[i].facts[Aspect::settings]["numa_balancing"] = "1";
  auto e = perfgap::fleet::learn(nodes, 80);
  ASSERT_EQ(e.kinds.size(), 1u);
  const auto& k = e.kinds[0];
  EXPECT_EQ(k.nodes, 10u);
  const auto& links = k.entries.at(Aspect::links);
  EXPECT_EQ(links.at("gpu 0000:12:00.0 pcie_width").value, "16");
  EXPECT_EQ(links.at("gpu 0000:12:00.0 pcie_width").agreed, 9u);
  ASSERT_EQ(links.at("gpu 0000:12:00.0 pcie_width").others.size(), 1u);
  EXPECT_EQ(links.at("gpu 0000:12:00.0 pcie_width").others[0].first, "gpu0005");
  EXPECT_EQ(links.at("port mlx5_2:1 rate_gbps").value, "400");
  EXPECT_EQ(k.entries.at(Aspect::versions).at("kernel").value, "6.8.0-45-generic");
  EXPECT_EQ(k.entries.at(Aspect::counts).at("rdma_ports").value, "4");
  // 7 of 10 agree on numa_balancing=1: under 80%, left out and said so.
  EXPECT_EQ(k.entries.at(Aspect::settings).count("numa_balancing"), 0u);
  EXPECT_TRUE(std::any_of(k.left_out.begin(), k.left_out.end(), [](const std::string& l) { return l.find("numa_balancing") != std::string::npos; }));
  // At --agree 60 the same 7 of 10 are a clear majority; at 50 a 5-5 split never is.
  EXPECT_EQ(perfgap::fleet::learn(nodes, 60).kinds[0].entries.at(Aspect::settings).at("numa_balancing").value, "1");
  for (int i = 0; i < 10; ++i) nodes[i].facts[Aspect::settings]["numa_balancing"] = i < 5 ? "0" : "1";
  EXPECT_EQ(perfgap::fleet::learn(nodes, 50).kinds[0].entries.at(Aspect::settings).count("numa_balancing"), 0u);
}

TEST(ExpectJudge, MissingAndDegradedHardwareFailsVersionsWarnMatchingPasses) {
  auto nodes = expect_fleet([](int i, ExpectNodeSpec& s) {
    if (i == 3) s.missing_nic = 1;
    if (i == 5) s.narrow_gpu = 2;
    if (i == 7) s.slow_port = 2;
    if (i == 8) s.moved_nic = 0;
    if (i == 9) s.kernel = "6.8.0-99-generic";
  });
  auto e = perfgap::fleet::learn(nodes, 80);
  e.file = "fleet.yaml";
  auto judged = [&](int i) { return perfgap::fleet::judge_expectations(e, nodes[i - 1]); };

  auto nic_gone = judged(3);
  EXPECT_EQ(expect_finding(nic_gone, "expect.counts").status, Status::fail);
  EXPECT_NE(expect_finding(nic_gone, "expect.counts").title.find("port mlx5_1:1 missing"), std::string::npos) << expect_finding(nic_gone, "expect.counts").title;
  EXPECT_NE(expect_finding(nic_gone, "expect.counts").title.find("rdma_ports 3 (kind: 4)"), std::string::npos);
  EXPECT_EQ(expect_finding(nic_gone, "expect.links").status, Status::fail);
  EXPECT_EQ(expect_finding(nic_gone, "expect.versions").status, Status::pass);

  auto narrow = expect_finding(judged(5), "expect.links");
  EXPECT_EQ(narrow.status, Status::fail);
  EXPECT_NE(narrow.title.find("gpu 0000:12:00.0 pcie_width 8 (kind: 16)"), std::string::npos) << narrow.title;
  ASSERT_EQ(narrow.evidence.size(), 1u);
  EXPECT_EQ(narrow.evidence[0].observed, "8");
  EXPECT_EQ(narrow.evidence[0].expected, "16");

  EXPECT_NE(expect_finding(judged(7), "expect.links").title.find("port mlx5_2:1 rate_gbps 200 (kind: 400)"), std::string::npos);
  EXPECT_EQ(expect_finding(judged(8), "expect.placement").status, Status::fail);
  auto kernel = judged(9);
  EXPECT_EQ(expect_finding(kernel, "expect.versions").status, Status::warn);
  EXPECT_EQ(expect_finding(kernel, "expect.links").status, Status::pass);

  for (auto& f : judged(1)) EXPECT_EQ(f.status, Status::pass) << f.id << ": " << f.title;
}

TEST(ExpectJudge, KindWhoseNodesAllRunX8LearnsX8AndRaisesNothing) {
  auto nodes = expect_fleet([](int, ExpectNodeSpec& s) { s.width = 8; });
  auto e = perfgap::fleet::learn(nodes, 80);
  EXPECT_EQ(e.kinds[0].entries.at(Aspect::links).at("gpu 0000:10:00.0 pcie_width").value, "8");
  for (const auto& n : nodes)
    for (auto& f : perfgap::fleet::judge_expectations(e, n)) EXPECT_EQ(f.status, Status::pass) << n.node << " " << f.id << ": " << f.title;
  // A node of that kind at x16 has more than the kind: a warning, not a failure.
  ExpectNodeSpec wide;
  auto links = expect_finding(perfgap::fleet::judge_expectations(e, expect_node(wide)), "expect.links");
  EXPECT_EQ(links.status, Status::warn) << links.title;
}

TEST(ExpectJudge, KindNotInTheFileSkipsNamingTheKindsItHas) {
  auto e = perfgap::fleet::learn(expect_fleet([](int, ExpectNodeSpec&) {}), 80);
  e.file = "fleet.yaml";
  ExpectNodeSpec other;
  other.cpu = "AMD EPYC 9654";
  for (auto& f : perfgap::fleet::judge_expectations(e, expect_node(other))) {
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_NE(f.title.find("NVIDIA GB200 / AMD EPYC 9654"), std::string::npos) << f.title;
    EXPECT_NE(f.title.find("it has: NVIDIA GB200 / Neoverse-V2"), std::string::npos) << f.title;
  }
}

TEST(ExpectJudge, SourceNotReadOnTheNodeWarnsInsteadOfCallingTheDeviceMissing) {
  auto nodes = expect_fleet([](int, ExpectNodeSpec&) {});
  auto e = perfgap::fleet::learn(nodes, 80);
  // A report of check --skip 'net.*': the ports were not read, not lost.
  auto n = nodes[0];
  n.facts[Aspect::counts].erase("port mlx5_0:1 state");
  std::erase(n.sources_read, "net.ib.ports");
  auto counts = expect_finding(perfgap::fleet::judge_expectations(e, n), "expect.counts");
  EXPECT_EQ(counts.status, Status::warn) << counts.title;
  EXPECT_NE(counts.title.find("not read"), std::string::npos);
}

TEST(ExpectFile, WrittenFileReadsBackWithEveryEntryAndCommentsTheVote) {
  auto nodes = expect_fleet([](int i, ExpectNodeSpec& s) {
    if (i == 4) s.slow_port = 0;
  });
  auto learned = perfgap::fleet::learn(nodes, 80);
  const auto text = perfgap::fleet::write_expectations(learned, 80);
  EXPECT_NE(text.find("# 9 of 10 nodes; not: gpu0004 (200)"), std::string::npos) << text;
  auto back = perfgap::fleet::read_expectations(text, "x.yaml");
  ASSERT_TRUE(back) << back.error();
  ASSERT_EQ(back->kinds.size(), 1u);
  for (auto a : perfgap::fleet::kAspects) {
    auto mine = learned.kinds[0].entries[a], theirs = back->kinds[0].entries[a];
    ASSERT_EQ(mine.size(), theirs.size()) << perfgap::fleet::aspect_name(a);
    for (const auto& [k, v] : mine) EXPECT_EQ(theirs.at(k).value, v.value) << k;
  }
}

TEST(ExpectFile, UpdateKeepsReviewedEntriesOverLearnedOnes) {
  auto nodes = expect_fleet([](int, ExpectNodeSpec& s) { s.width = 8; });
  auto reviewed = perfgap::fleet::learn(nodes, 80);
  reviewed.kinds[0].entries[Aspect::links]["gpu 0000:10:00.0 pcie_width"].value = "16";  // a person says x16
  auto text = perfgap::fleet::write_expectations(reviewed, 80);
  auto back = perfgap::fleet::read_expectations(text, "reviewed.yaml");
  ASSERT_TRUE(back) << back.error();
  auto learned = perfgap::fleet::learn(nodes, 80);
  perfgap::fleet::keep_reviewed(learned, *back);
  const auto& e = learned.kinds[0].entries[Aspect::links]["gpu 0000:10:00.0 pcie_width"];
  EXPECT_EQ(e.value, "16");
  EXPECT_TRUE(e.kept);
  EXPECT_NE(perfgap::fleet::write_expectations(learned, 80).find("reviewed: kept by --update"), std::string::npos);
}

TEST(ExpectFile, BadInputIsOneLineNamingFileAndLine) {
  auto not_yaml = perfgap::fleet::read_expectations("schema: perfgap.expect/1\nkinds: [\n  - {kind: x\n", "bad.yaml");
  ASSERT_FALSE(not_yaml);
  EXPECT_EQ(not_yaml.error().rfind("bad.yaml:", 0), 0u) << not_yaml.error();
  EXPECT_NE(not_yaml.error().find("not valid YAML"), std::string::npos);

  auto other = perfgap::fleet::read_expectations("schema: perfgap.report/1\nfindings: []\n", "report.json");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().find("report.json:1: schema is 'perfgap.report/1', not perfgap.expect/1"), std::string::npos) << other.error();

  auto config = perfgap::fleet::read_expectations("cpu.steal:\n  warn_pct: 2\n", "config.yaml");
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().find("schema is missing"), std::string::npos) << config.error();

  auto key = perfgap::fleet::read_expectations("schema: perfgap.expect/1\nkinds:\n  - kind: a\n    cuonts: {gpus: 8}\n", "typo.yaml");
  ASSERT_FALSE(key);
  EXPECT_NE(key.error().find("typo.yaml:4: unknown key 'cuonts'"), std::string::npos) << key.error();

  auto nodes = perfgap::fleet::read_expectations("schema: perfgap.expect/1\nkinds:\n  - kind: a\n    nodes: ten\n", "n.yaml");
  ASSERT_FALSE(nodes);
  EXPECT_EQ(nodes.error().rfind("n.yaml:4:", 0), 0u) << nodes.error();
  // A measured entry is a floor: any other value is refused where it stands.
  auto floor = perfgap::fleet::read_expectations("schema: perfgap.expect/1\nkinds:\n  - kind: a\n    measured:\n      nccl-tests 8 ranks 1 node busbw_gbps 1048576: 50.6\n", "f.yaml");
  ASSERT_FALSE(floor);
  EXPECT_NE(floor.error().find("f.yaml:5: the value of nccl-tests 8 ranks 1 node busbw_gbps 1048576 is not a floor ('>= 356.2')"), std::string::npos)
      << floor.error();
  // A count, a width, a rate or a NUMA node is a number: "4 ports" compared as text would warn
  // where 2 of 4 ports fails.
  auto typed = perfgap::fleet::read_expectations("schema: perfgap.expect/1\nkinds:\n  - kind: a\n    counts:\n      gpus: 8\n      rdma_ports: 4 ports\n", "t.yaml");
  ASSERT_FALSE(typed);
  EXPECT_NE(typed.error().find("t.yaml:6: the value of rdma_ports is not a number ('4 ports'"), std::string::npos) << typed.error();
  auto rate = perfgap::fleet::read_expectations("schema: perfgap.expect/1\nkinds:\n  - kind: a\n    links:\n      port mlx5_0:1 rate_gbps: 100Gb\n", "r.yaml");
  ASSERT_FALSE(rate);
  EXPECT_NE(rate.error().find("r.yaml:5: the value of port mlx5_0:1 rate_gbps is not a number"), std::string::npos) << rate.error();
  EXPECT_TRUE(perfgap::fleet::read_expectations("schema: perfgap.expect/1\nkinds:\n  - kind: a\n    links:\n      gpu 0000:13:00.0 nvlink_gbps: 26.562\n    versions:\n      kernel: 6.8.0 x\n", "ok.yaml"));
  for (const auto* r : {&not_yaml, &other, &config, &key, &nodes, &floor, &typed, &rate}) EXPECT_EQ(r->error().find('\n'), std::string::npos) << r->error();
}

}  // namespace

// The NUMA node of each GPU (gpu.inventory), its NVLinks up (gpu.nvlink from NVML) and each
// NIC's firmware (net.ib.ports' fw_ver) are learned like the rest: a GPU on the other socket
// and NVLinks down fail, another firmware warns.
TEST(ExpectJudge, GpuSocketNvlinksAndNicFirmwareAreHeldToTheKind) {
  auto nodes = expect_fleet([](int i, ExpectNodeSpec& s) {
    if (i == 4) s.moved_gpu = 1;
    if (i == 6) s.nvlink_down_gpu = 2;
    if (i == 8) s.old_firmware_nic = 0;
  });
  auto e = perfgap::fleet::learn(nodes, 80);
  e.file = "fleet.yaml";
  auto judged = [&](int i) { return perfgap::fleet::judge_expectations(e, nodes[i - 1]); };
  auto socket = expect_finding(judged(4), "expect.placement");
  EXPECT_EQ(socket.status, Status::fail);
  EXPECT_NE(socket.title.find("gpu 0000:11:00.0 numa_node 1 (kind: 0)"), std::string::npos) << socket.title;
  auto links = expect_finding(judged(6), "expect.counts");
  EXPECT_EQ(links.status, Status::fail);
  EXPECT_NE(links.title.find("gpu 0000:12:00.0 nvlinks_up 16 (kind: 18)"), std::string::npos) << links.title;
  auto firmware = expect_finding(judged(8), "expect.versions");
  EXPECT_EQ(firmware.status, Status::warn);
  EXPECT_NE(firmware.title.find("nic mlx5_0 firmware 28.39.1002 (kind: 28.43.1014)"), std::string::npos) << firmware.title;
  for (auto& f : judged(2)) EXPECT_EQ(f.status, Status::pass) << f.id << ": " << f.title;
}

// Figures of nccl-tests runs given beside the reports: a floor learned from the kind's spread;
// a one-node run below it fails its node, a run over several warns each of them, a node with
// no measurement given is not judged on it (neither absent nor failed), the NCCL version is voted.
TEST(ExpectMeasured, FloorFromTheKindsSpreadJudgedOnlyWhereAMeasurementIsGiven) {
  const std::string one = "nccl-tests all_reduce_perf 8 ranks 1 node busbw_gbps 1073741824";
  const std::string two = "nccl-tests all_reduce_perf 16 ranks 2 nodes busbw_gbps 1073741824";
  auto nodes = expect_fleet([](int, ExpectNodeSpec&) {});
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const double v = 360.0 + static_cast<double>(i % 5);  // 360-364: median 362, MAD 1
    nodes[i].facts[Aspect::measured][one] = fmt::format("{:.1f}", v);
    nodes[i].facts[Aspect::measured][two] = fmt::format("{:.1f}", v - 20);
    nodes[i].facts[Aspect::versions]["nccl-tests nccl_version"] = "2.21.5";
    nodes[i].sources_read.emplace_back("nccl-tests");
  }
  auto e = perfgap::fleet::learn(nodes, 80);
  e.file = "fleet.yaml";
  ASSERT_EQ(e.kinds.size(), 1u);
  const auto& k = e.kinds[0];
  // 362 - max(5% = 18.1, 4 x 1.4826 x 1 = 5.9) = 343.9
  EXPECT_EQ(k.entries.at(Aspect::measured).at(one).value, ">= 343.9");
  EXPECT_EQ(k.entries.at(Aspect::versions).at("nccl-tests nccl_version").value, "2.21.5");
  EXPECT_NE(perfgap::fleet::write_expectations(e, 80).find("median 362.0 over 10 of 10 nodes, spread 1.5"), std::string::npos);

  // A node at or above every floor passes the aspect.
  auto fine = expect_finding(perfgap::fleet::judge_expectations(e, nodes[0]), "expect.measured");
  EXPECT_EQ(fine.status, Status::pass) << fine.title;
  EXPECT_NE(fine.title.find("matches the 2 measured entries"), std::string::npos) << fine.title;

  auto slow = nodes[2];
  slow.facts[Aspect::measured][one] = "300.0";
  slow.facts[Aspect::measured][two] = "290.0";
  slow.facts[Aspect::versions]["nccl-tests nccl_version"] = "2.18.3";
  auto judged = perfgap::fleet::judge_expectations(e, slow);
  auto m = expect_finding(judged, "expect.measured");
  EXPECT_EQ(m.status, Status::fail);
  EXPECT_NE(m.title.find(one + " 300.0 (kind: >= 343.9)"), std::string::npos) << m.title;
  auto diffs = perfgap::fleet::expect_differences(k, slow, "fleet.yaml");
  auto pair = std::find_if(diffs.begin(), diffs.end(), [&](const auto& d) { return d.line.rfind(two, 0) == 0; });
  ASSERT_NE(pair, diffs.end());
  EXPECT_EQ(pair->status, Status::warn) << pair->line;
  EXPECT_NE(pair->line.find("in a run over several nodes"), std::string::npos) << pair->line;
  EXPECT_EQ(expect_finding(judged, "expect.versions").status, Status::warn);

  // A node whose check report came without measurements (check --expect on the node).
  auto bare = nodes[4];
  bare.facts.erase(Aspect::measured);
  bare.facts[Aspect::versions].erase("nccl-tests nccl_version");
  std::erase(bare.sources_read, "nccl-tests");
  auto plain = perfgap::fleet::judge_expectations(e, bare);
  auto none = expect_finding(plain, "expect.measured");
  EXPECT_EQ(none.status, Status::skip);
  EXPECT_NE(none.title.find("no measurement of this node was given for the 2 measured entries"), std::string::npos) << none.title;
  auto versions = expect_finding(plain, "expect.versions");
  EXPECT_EQ(versions.status, Status::pass) << versions.title;
  EXPECT_NE(versions.title.find("(1 not judged: no nccl-tests or probe measurement of this node was given)"), std::string::npos) << versions.title;

  // Fewer than three nodes measured, or not more than half of the kind: no floor, said so.
  auto few = nodes;
  for (std::size_t i = 2; i < few.size(); ++i) few[i].facts.erase(Aspect::measured);
  auto sparse = perfgap::fleet::learn(few, 80);
  EXPECT_EQ(sparse.kinds[0].entries.count(Aspect::measured), 0u);
  EXPECT_NE(fmt::format("{}", fmt::join(sparse.kinds[0].left_out, "|")).find("measured: " + one + ": measured on 2 of 10 nodes (more than half needed)"),
            std::string::npos);
}

// The NICs' models make part of the kind: two NIC SKUs of one GPU and CPU are two kinds. A node
// that lost every NIC of its kind's model still finds its kind by GPU and CPU and fails on it;
// a file learned before NIC models made part of the kind still applies.
TEST(ExpectKind, NicModelsMakePartOfTheKindAndANodeThatLostAModelStillFindsIt) {
  const std::string cx7 = "ConnectX-7 (pci 15b3:1021)", bf3 = "BlueField-3 (pci 15b3:a2dc)";
  auto nodes = expect_fleet([&](int i, ExpectNodeSpec& s) { s.nic_model = i > 7 ? bf3 : cx7; });
  EXPECT_EQ(nodes[0].kind, "NVIDIA GB200 / Neoverse-V2 / " + cx7);
  EXPECT_EQ(nodes[9].kind, "NVIDIA GB200 / Neoverse-V2 / " + bf3);
  auto e = perfgap::fleet::learn(nodes, 80);
  e.file = "fleet.yaml";
  EXPECT_EQ(e.kinds.size(), 2u);

  // Half its NICs swapped for the other model: its kind is not in the file, and two kinds share
  // its GPU and CPU: not ours to choose.
  ExpectNodeSpec mixed;
  mixed.nic_model = cx7;
  mixed.other_nic_model = bf3;
  EXPECT_EQ(perfgap::fleet::find_kind(e, expect_node(mixed)), nullptr);

  // One SKU only in the file: a node whose NICs are all of another model is another SKU, not a
  // node of the kind that lost its NICs: not held to it (it would fail "port missing" and drain).
  std::vector<NodeFacts> seven(nodes.begin(), nodes.begin() + 7);
  auto one = perfgap::fleet::learn(seven, 80);
  one.file = "fleet.yaml";
  ExpectNodeSpec swapped;
  swapped.nic_model = bf3;
  EXPECT_EQ(perfgap::fleet::find_kind(one, expect_node(swapped)), nullptr);
  // A node that lost every NIC (no model left) still finds its kind and fails on it.
  ExpectNodeSpec bare;
  bare.nic_model = cx7;
  auto lost = expect_node(bare);
  lost.kind = "NVIDIA GB200 / Neoverse-V2";
  lost.facts[Aspect::counts].erase("nic_models");
  ASSERT_NE(perfgap::fleet::find_kind(one, lost), nullptr);

  // A file learned without NIC models: a node that has them is held to it (more than it knew: warn).
  auto old = perfgap::fleet::learn(expect_fleet([](int, ExpectNodeSpec&) {}), 80);
  old.file = "old.yaml";
  ExpectNodeSpec with_model;
  with_model.nic_model = cx7;
  const auto now = expect_node(with_model);
  ASSERT_NE(perfgap::fleet::find_kind(old, now), nullptr);
  for (const auto& f : perfgap::fleet::judge_expectations(old, now)) EXPECT_EQ(f.status, Status::pass) << f.id << ": " << f.title;
}

// The NVLinks' speed (gpu.nvlink's link_gbps: NVML's common speed of the active links, or the
// slowest link up of nvidia-smi nvlink -s) is a link of the kind: a GPU whose links trained
// slower fails, like a PCIe link trained narrow.
TEST(ExpectJudge, NvlinkSpeedIsALinkOfTheKind) {
  auto nodes = expect_fleet([](int i, ExpectNodeSpec& s) {
    s.nvlink_gbps = 26.562;
    if (i == 5) s.slow_nvlink_gpu = 3;
  });
  EXPECT_EQ(nodes[0].facts[Aspect::links]["gpu 0000:13:00.0 nvlink_gbps"], "26.562");
  auto e = perfgap::fleet::learn(nodes, 80);
  e.file = "fleet.yaml";
  EXPECT_EQ(e.kinds[0].entries.at(Aspect::links).at("gpu 0000:13:00.0 nvlink_gbps").value, "26.562");
  auto links = expect_finding(perfgap::fleet::judge_expectations(e, nodes[4]), "expect.links");
  EXPECT_EQ(links.status, Status::fail);
  EXPECT_NE(links.title.find("gpu 0000:13:00.0 nvlink_gbps 20 (kind: 26.562)"), std::string::npos) << links.title;
  EXPECT_EQ(expect_finding(perfgap::fleet::judge_expectations(e, nodes[0]), "expect.links").status, Status::pass);
}

namespace {

// A probe report of `node` as the fleet reads it (perfgap probe --format json): the memory
// matrix, one GPU's copies and the CPU probe.
perfgap::fleet::NodeReport expect_probe(const std::string& node, double triad, double h2d, bool starved_remote = false) {
  perfgap::fleet::NodeReport r;
  r.kind = "probe";
  r.name = node;
  r.file = node + ".probe.json";
  Finding mem = expect_make("probe.memory_bw", "placement");
  mem.metric("gbps_cpu0_mem0", triad).metric("gbps_cpu1_mem1", triad + 1);
  mem.metric(starved_remote ? "starved_gbps_cpu0_mem1" : "gbps_cpu0_mem1", triad / 2).metric("best_local_gbps", triad + 1);
  r.report_findings.push_back(mem);
  Finding h = expect_make("probe.h2d", "pcie", "0000:18:00.0");
  h.metric("h2d_gbps_node0", h2d).metric("d2h_gbps_node0", h2d - 1).metric("expected_gbps", 55.7);
  r.report_findings.push_back(h);
  Finding cpu = expect_make("probe.cpu_busy_mhz", "cpu-power");
  cpu.status = Status::skip;  // no source here: its figure, if any, is not the CPU's
  cpu.metric("busy_mhz", 1200);
  r.report_findings.push_back(cpu);
  Finding launch = expect_make("probe.launch_latency", "gpu", "0000:18:00.0");
  launch.metric("launch_p50_us", 8.1);
  r.report_findings.push_back(launch);
  return r;
}

}  // namespace

// Probe reports give their node's own figures: memory triad per NUMA pair (a starved pair's
// figure is not the memory's and is not taken), host<->GPU copies per GPU and host node; a CPU
// probe that skipped and launch latency (less is better: no floor) give none. A node below the
// kind's floor fails (the figure is its own), a node not probed is not judged on them.
TEST(ExpectMeasured, ProbeFiguresAreTheNodesOwnAndLearnedAsFloors) {
  auto nodes = expect_fleet([](int, ExpectNodeSpec&) {});
  std::vector<perfgap::fleet::NodeReport> probes;
  for (int i = 1; i <= 10; ++i) probes.push_back(expect_probe(expect_name(i), i == 6 ? 150.0 : 300.0 + i, 52.0, i == 2));
  probes.push_back(expect_probe("gpu9999", 300, 52));  // of no node given
  auto unused = perfgap::fleet::add_measurements(probes, nodes);
  ASSERT_EQ(unused.size(), 1u);
  EXPECT_EQ(probes[unused[0]].name, "gpu9999");
  const auto& m = nodes[0].facts[Aspect::measured];
  EXPECT_EQ(m.at("probe memory cpu 0 mem 0 triad_gbps"), "301.0");
  EXPECT_EQ(m.at("probe memory cpu 0 mem 1 triad_gbps"), "150.5");
  EXPECT_EQ(m.at("probe gpu 0000:18:00.0 node 0 h2d_gbps"), "52.0");
  EXPECT_EQ(m.at("probe gpu 0000:18:00.0 node 0 d2h_gbps"), "51.0");
  EXPECT_EQ(m.count("probe cpu busy_mhz"), 0u);
  EXPECT_EQ(nodes[1].facts[Aspect::measured].count("probe memory cpu 0 mem 1 triad_gbps"), 0u);  // starved on gpu0002
  for (const auto& [key, v] : m) EXPECT_EQ(key.find("launch"), std::string::npos) << key;
  EXPECT_NE(std::find(nodes[0].sources_read.begin(), nodes[0].sources_read.end(), "probe"), nodes[0].sources_read.end());

  auto e = perfgap::fleet::learn(nodes, 80);
  e.file = "fleet.yaml";
  // 9 nodes at 301-310 and one at 150: median 304.5, MAD 3; 304.5 - max(5% = 15.2, 4 x 1.4826 x 3 = 17.8) = 286.7
  EXPECT_EQ(e.kinds[0].entries.at(Aspect::measured).at("probe memory cpu 0 mem 0 triad_gbps").value, ">= 286.7");
  auto slow = expect_finding(perfgap::fleet::judge_expectations(e, nodes[5]), "expect.measured");
  EXPECT_EQ(slow.status, Status::fail);
  EXPECT_NE(slow.title.find("probe memory cpu 0 mem 0 triad_gbps 150.0 (kind: >= 286.7)"), std::string::npos) << slow.title;
  EXPECT_EQ(slow.title.find("over several nodes"), std::string::npos) << slow.title;
  EXPECT_EQ(expect_finding(perfgap::fleet::judge_expectations(e, nodes[0]), "expect.measured").status, Status::pass);

  auto bare = expect_node({});
  auto none = expect_finding(perfgap::fleet::judge_expectations(e, bare), "expect.measured");
  EXPECT_EQ(none.status, Status::skip) << none.title;
  EXPECT_NE(none.title.find("nccl-tests and probe reports"), std::string::npos) << none.title;
}

// A node whose GPUs all fell off the bus (no GPU on PCI, NVIDIA's driver loaded) is held to the
// one kind of its CPU and NICs and fails its GPU count; a CPU-only node (no driver) is not
// held to a GPU kind: a file learned on the GPU partition must not drain the CPU partition.
TEST(ExpectKind, ANodeThatLostEveryGpuFailsItsKindACpuNodeIsNotHeldToIt) {
  auto e = perfgap::fleet::learn(expect_fleet([](int, ExpectNodeSpec&) {}), 80);
  e.file = "fleet.yaml";
  ExpectNodeSpec gone;
  gone.gpus_gone = true;
  const auto n = expect_node(gone);
  EXPECT_EQ(n.kind, "no GPU / Neoverse-V2");
  ASSERT_NE(perfgap::fleet::find_kind(e, n), nullptr);
  auto counts = expect_finding(perfgap::fleet::judge_expectations(e, n), "expect.counts");
  EXPECT_EQ(counts.status, Status::fail);
  EXPECT_NE(counts.title.find("gpus 0 (kind: 4)"), std::string::npos) << counts.title;

  ExpectNodeSpec cpu_node = gone;
  cpu_node.driver = false;
  EXPECT_EQ(perfgap::fleet::find_kind(e, expect_node(cpu_node)), nullptr);
}
