// Every status of the gpu.* rules: the captures written for this in
// tests/fixtures/logs/nvidia-smi/, edits of them, and facts models filled as the NVML helper
// would (NVLink state, which -q -x does not print).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "analyzers/analyzers.hpp"
#include "files.hpp"
#include "findings.hpp"

using namespace perfgap;
using fixture::find;
using fixture::log_fixture;
using fixture::metric;
using fixture::read_file;
using report::Status;

namespace {

parsers::NvidiaSmi parse(const std::string& text) {
  auto r = parsers::parse_nvidia_smi(text);
  if (!r) throw std::runtime_error(r.error().describe());
  return *r;
}

std::vector<report::Finding> analyze(const std::vector<std::pair<std::string, std::string>>& named_texts) {
  std::vector<parsers::NvidiaSmi> caps;
  caps.reserve(named_texts.size());
  for (const auto& [name, text] : named_texts) caps.push_back(parse(text));
  std::vector<analyzers::NvidiaSmiInput> in;
  for (std::size_t i = 0; i < caps.size(); ++i) in.push_back({named_texts[i].first, &caps[i]});
  return analyzers::analyze_nvidia_smi(in);
}
std::vector<report::Finding> analyze_file(const std::string& rel) { return analyze({{rel, read_file(log_fixture("nvidia-smi/" + rel))}}); }

// `text` with `from` replaced by `to`; throws when `from` is not there (an edit that does nothing would let a test pass for nothing).
std::string edit(std::string text, const std::string& from, const std::string& to) {
  auto p = text.find(from);
  if (p == std::string::npos) throw std::runtime_error("no '" + from + "' to edit");
  return text.replace(p, from.size(), to);
}
std::string healthy() { return read_file(log_fixture("nvidia-smi/healthy.xml")); }

const std::string kGpu0 = "0000:18:00.0", kGpu1 = "0000:2a:00.0", kGpu2 = "0000:3b:00.0";

}  // namespace

TEST(AnalyzerNvidiaSmi, HealthyCapturePassesEveryRuleItCanJudge) {
  auto fs = analyze_file("healthy.xml");
  for (const auto& s : {kGpu0, kGpu1}) {
    EXPECT_EQ(find(fs, "gpu.persistence", s).status, Status::pass);
    EXPECT_EQ(find(fs, "gpu.clocks", s).status, Status::pass) << find(fs, "gpu.clocks", s).title;
    EXPECT_EQ(find(fs, "gpu.ecc", s).status, Status::pass);
    EXPECT_EQ(find(fs, "gpu.pcie", s).status, Status::pass);
    EXPECT_EQ(find(fs, "gpu.fabric", s).status, Status::pass);
    // -q -x has no NVLink state: not judged, and said so.
    EXPECT_EQ(find(fs, "gpu.nvlink", s).status, Status::skip);
    EXPECT_NE(find(fs, "gpu.nvlink", s).title.find("not in this capture"), std::string::npos);
  }
  EXPECT_EQ(find(fs, "gpu.clocks", kGpu0).layer, "gpu");
  EXPECT_EQ(find(fs, "gpu.pcie", kGpu0).layer, "pcie");
  EXPECT_DOUBLE_EQ(metric(find(fs, "gpu.clocks", kGpu0), "enforced_limit_w"), 700);
  EXPECT_DOUBLE_EQ(metric(find(fs, "gpu.ecc", kGpu0), "volatile_corrected"), 3);
}

TEST(AnalyzerNvidiaSmi, FaultsCaptureFailsAndWarnsWhereItShould) {
  auto fs = analyze_file("faults.xml");
  EXPECT_EQ(find(fs, "gpu.persistence", kGpu0).status, Status::warn);
  const auto& c0 = find(fs, "gpu.clocks", kGpu0);
  EXPECT_EQ(c0.status, Status::fail);
  EXPECT_NE(c0.title.find("HW slowdown active"), std::string::npos) << c0.title;
  EXPECT_NE(c0.title.find("HW power brake active"), std::string::npos) << c0.title;
  const auto& e0 = find(fs, "gpu.ecc", kGpu0);
  EXPECT_EQ(e0.status, Status::fail);
  EXPECT_NE(e0.title.find("2 volatile uncorrectable"), std::string::npos) << e0.title;
  EXPECT_NE(e0.title.find("remap is pending"), std::string::npos) << e0.title;
  EXPECT_EQ(find(fs, "gpu.pcie", kGpu0).status, Status::warn);    // Gen4 of Gen5 at 87%
  EXPECT_EQ(find(fs, "gpu.fabric", kGpu0).status, Status::fail);  // In Progress

  EXPECT_EQ(find(fs, "gpu.clocks", kGpu1).status, Status::warn);  // 500 W of 700 W
  EXPECT_NE(find(fs, "gpu.clocks", kGpu1).title.find("500 W below the default 700 W"), std::string::npos);
  EXPECT_EQ(find(fs, "gpu.ecc", kGpu1).status, Status::fail);  // remap failure
  EXPECT_NE(find(fs, "gpu.ecc", kGpu1).title.find("row remapping failed"), std::string::npos);
  EXPECT_EQ(find(fs, "gpu.pcie", kGpu1).status, Status::warn);  // x8 of x16
  const auto& fab1 = find(fs, "gpu.fabric", kGpu1);
  EXPECT_EQ(fab1.status, Status::fail);
  EXPECT_NE(fab1.title.find("bandwidth Degraded"), std::string::npos) << fab1.title;

  EXPECT_EQ(find(fs, "gpu.clocks", kGpu2).status, Status::warn);  // application clocks lowered
  EXPECT_NE(find(fs, "gpu.clocks", kGpu2).title.find("application clocks lowered"), std::string::npos);
  EXPECT_EQ(find(fs, "gpu.ecc", kGpu2).status, Status::pass);
  // Gen1 of Gen5 at P8 and 0%: GPUs lower the speed when idle; not judged.
  EXPECT_EQ(find(fs, "gpu.pcie", kGpu2).status, Status::skip);
  EXPECT_NE(find(fs, "gpu.pcie", kGpu2).title.find("while idle"), std::string::npos);
  EXPECT_EQ(find(fs, "gpu.fabric", kGpu2).status, Status::skip);  // N/A: no NVLink-switch fabric
}

TEST(AnalyzerNvidiaSmi, TwoCapturesJudgeGrowth) {
  auto before = read_file(log_fixture("nvidia-smi/replay-before.xml")), after = read_file(log_fixture("nvidia-smi/replay-after.xml"));
  auto fs = analyze({{"before.xml", before}, {"after.xml", after}});
  const auto& p = find(fs, "gpu.pcie", kGpu0);
  EXPECT_EQ(p.status, Status::warn);
  EXPECT_NE(p.title.find("grew by 240"), std::string::npos) << p.title;
  EXPECT_DOUBLE_EQ(metric(p, "replay_counter"), 250);
  // 1.0 s -> 4.5 s of HW thermal slowdown between them: clocks were held down in between.
  const auto& c = find(fs, "gpu.clocks", kGpu0);
  EXPECT_EQ(c.status, Status::fail);
  EXPECT_NE(c.title.find("3.5 s of HW thermal slowdown"), std::string::npos) << c.title;
  // One GPU, judged once (on the later capture).
  EXPECT_EQ(std::count_if(fs.begin(), fs.end(), [](const report::Finding& f) { return f.id == "gpu.pcie"; }), 1);
  // Either alone: the replay count is shown, its growth is not judged.
  auto one = analyze({{"after.xml", after}});
  EXPECT_EQ(find(one, "gpu.pcie", kGpu0).status, Status::pass);
  EXPECT_EQ(find(one, "gpu.clocks", kGpu0).status, Status::pass);
  // The same bus id in two nodes' captures (other UUIDs): two GPUs, subjects name the input.
  auto other_node = edit(before, "GPU-0000aaaa-1111-2222-3333-000000000000", "GPU-ffffffff-1111-2222-3333-000000000000");
  auto two = analyze({{"node1.xml", after}, {"node2.xml", other_node}});
  EXPECT_EQ(find(two, "gpu.pcie", "node1.xml:" + kGpu0).status, Status::pass);
  EXPECT_EQ(find(two, "gpu.pcie", "node2.xml:" + kGpu0).status, Status::pass);
}

TEST(AnalyzerNvidiaSmi, SkipsWhenTheCaptureLacksTheFacts) {
  auto t = healthy();
  t = edit(t, "<persistence_mode>Enabled</persistence_mode>", "<persistence_mode>N/A</persistence_mode>");
  auto a = t.find("<clocks_event_reasons>"), b = t.find("</clocks_event_reasons>");
  t.erase(a, b + std::string("</clocks_event_reasons>").size() - a);
  t = edit(t, "<current_ecc>Enabled</current_ecc>", "<current_ecc>Disabled</current_ecc>");
  a = t.find("<pci_gpu_link_info>"), b = t.find("</pci_gpu_link_info>");
  t.erase(a, b + std::string("</pci_gpu_link_info>").size() - a);
  a = t.find("<replay_counter>"), b = t.find("</replay_counter>");
  t.erase(a, b + std::string("</replay_counter>").size() - a);
  a = t.find("<fabric>"), b = t.find("</fabric>");
  t.erase(a, b + std::string("</fabric>").size() - a);
  auto fs = analyze({{"t.xml", t}});
  EXPECT_EQ(find(fs, "gpu.persistence", kGpu0).status, Status::skip);
  EXPECT_EQ(find(fs, "gpu.clocks", kGpu0).status, Status::skip);
  EXPECT_EQ(find(fs, "gpu.ecc", kGpu0).status, Status::skip);
  EXPECT_NE(find(fs, "gpu.ecc", kGpu0).title.find("ECC is off"), std::string::npos);
  EXPECT_EQ(find(fs, "gpu.pcie", kGpu0).status, Status::skip);
  EXPECT_EQ(find(fs, "gpu.fabric", kGpu0).status, Status::skip);
  EXPECT_NE(find(fs, "gpu.fabric", kGpu0).title.find("no fabric state"), std::string::npos);
  // The other GPU keeps its facts.
  EXPECT_EQ(find(fs, "gpu.clocks", kGpu1).status, Status::pass);
  // ECC on but no counts: skip, not pass.
  auto n = edit(healthy(), "<dram_uncorrectable>0</dram_uncorrectable>", "<dram_uncorrectable>N/A</dram_uncorrectable>");
  n = edit(n, "<sram_uncorrectable>0</sram_uncorrectable>", "<sram_uncorrectable>N/A</sram_uncorrectable>");
  a = n.find("<remapped_rows>"), b = n.find("</remapped_rows>");
  n.replace(a, b - a, "<remapped_rows>N/A");
  EXPECT_EQ(find(analyze({{"n.xml", n}}), "gpu.ecc", kGpu0).status, Status::skip);
}

TEST(AnalyzerNvidiaSmi, ClocksRulesOneByOne) {
  auto judge = [](const std::string& text) { return find(analyze({{"c.xml", text}}), "gpu.clocks", kGpu0); };
  auto active = [&](const std::string& reason) {
    return edit(healthy(), "<clocks_event_reason_" + reason + ">Not Active", "<clocks_event_reason_" + reason + ">Active");
  };
  for (const auto& r : {"hw_slowdown", "hw_thermal_slowdown", "sw_thermal_slowdown", "hw_power_brake_slowdown"})
    EXPECT_EQ(judge(active(r)).status, Status::fail) << r;
  // Power capping under load and the GPU idling are normal.
  EXPECT_EQ(judge(active("gpu_idle")).status, Status::pass);
  // Held at application clocks below the max.
  auto held = edit(edit(active("applications_clocks_setting"),
                        "<graphics_clock>1980 MHz</graphics_clock>\n\t\t\t<mem_clock>2619 MHz</mem_clock>\n\t\t</applications_clocks>",
                        "<graphics_clock>1600 MHz</graphics_clock>\n\t\t\t<mem_clock>2619 MHz</mem_clock>\n\t\t</applications_clocks>"),
                   "<graphics_clock>1980 MHz</graphics_clock>\n\t\t\t<mem_clock>2619 MHz</mem_clock>\n\t\t</default_applications_clocks>",
                   "<graphics_clock>1600 MHz</graphics_clock>\n\t\t\t<mem_clock>2619 MHz</mem_clock>\n\t\t</default_applications_clocks>");
  EXPECT_EQ(judge(held).status, Status::warn);
  // The same default application clock below the max without that reason: the default of
  // data-centre GPUs (A100: 1275 of 1410 MHz), boost goes above it.
  auto dflt =
      edit(held, "<clocks_event_reason_applications_clocks_setting>Active", "<clocks_event_reason_applications_clocks_setting>Not Active");
  EXPECT_EQ(judge(dflt).status, Status::pass);
}

TEST(AnalyzerNvidiaSmi, PcieUnderLoadByUtilisationOrP0) {
  auto t = edit(healthy(), "<current_link_gen>5</current_link_gen>", "<current_link_gen>3</current_link_gen>");
  EXPECT_EQ(find(analyze({{"p.xml", t}}), "gpu.pcie", kGpu0).status, Status::warn);
  // Utilisation N/A (MIG) at P0 counts as loaded; at P8 it does not.
  auto mig = edit(t, "<gpu_util>87 %</gpu_util>", "<gpu_util>N/A</gpu_util>");
  EXPECT_EQ(find(analyze({{"p.xml", mig}}), "gpu.pcie", kGpu0).status, Status::warn);
  auto idle = edit(mig, "<performance_state>P0</performance_state>", "<performance_state>P8</performance_state>");
  EXPECT_EQ(find(analyze({{"p.xml", idle}}), "gpu.pcie", kGpu0).status, Status::skip);
}

TEST(AnalyzerNvidiaSmi, FabricHealthFields) {
  auto t = edit(healthy(), "<route_unhealthy>False</route_unhealthy>", "<route_unhealthy>True</route_unhealthy>");
  const auto& f = find(analyze({{"f.xml", t}}), "gpu.fabric", kGpu0);
  EXPECT_EQ(f.status, Status::fail);
  EXPECT_NE(f.title.find("route_unhealthy True"), std::string::npos) << f.title;
  auto s = edit(healthy(), "<status>Success</status>", "<status>Failure</status>");
  EXPECT_EQ(find(analyze({{"f.xml", s}}), "gpu.fabric", kGpu0).status, Status::fail);
}

TEST(AnalyzerNvidiaSmi, NvlinkFromFactsAsTheHelperWouldFillThem) {
  auto gpu = [](const std::string& uuid, const std::string& bus, int up, std::uint64_t crc) {
    parsers::GpuFacts g;
    g.name = "NVIDIA H100 80GB HBM3";
    g.uuid = uuid;
    g.pci_bus_id = bus;
    std::vector<parsers::GpuNvLink> links;
    for (int i = 0; i < 18; ++i) links.push_back({i, i < up, crc, 0, 0, {}});
    g.nvlinks = links;
    return g;
  };
  parsers::GpuSnapshot s1, s2;
  s1.gpus = {gpu("GPU-a", "0000:18:00.0", 18, 0), gpu("GPU-b", "0000:2a:00.0", 16, 0)};
  s2.gpus = {gpu("GPU-a", "0000:18:00.0", 18, 2), gpu("GPU-b", "0000:2a:00.0", 16, 0)};
  auto one = analyzers::judge_gpu_snapshots({{"nvml", &s1, nullptr, {}}});
  EXPECT_EQ(find(one, "gpu.nvlink", "0000:18:00.0").status, Status::pass);
  const auto& down = find(one, "gpu.nvlink", "0000:2a:00.0");
  EXPECT_EQ(down.status, Status::fail);
  EXPECT_NE(down.title.find("16 NVLinks up, same-model GPUs have 18"), std::string::npos) << down.title;
  auto two = analyzers::judge_gpu_snapshots({{"t0", &s1, nullptr, {}}, {"t1", &s2, nullptr, {}}});
  EXPECT_EQ(find(two, "gpu.nvlink", "0000:18:00.0").status, Status::warn);  // CRC 0 -> 2 on every link
  // Facts the helper did not fill are skips, not passes.
  EXPECT_EQ(find(one, "gpu.persistence", "0000:18:00.0").status, Status::skip);
  EXPECT_EQ(find(one, "gpu.clocks", "0000:18:00.0").status, Status::skip);
  EXPECT_EQ(find(one, "gpu.ecc", "0000:18:00.0").status, Status::skip);
  EXPECT_EQ(find(one, "gpu.pcie", "0000:18:00.0").status, Status::skip);
  EXPECT_EQ(find(one, "gpu.fabric", "0000:18:00.0").status, Status::skip);
}

TEST(AnalyzerNvidiaSmi, TopologyAffinityAndBondedLinks) {
  auto pass = analyze_file("topo-pix-legend.txt");
  const auto& tp = find(pass, "gpu.topology");
  EXPECT_EQ(tp.status, Status::pass) << tp.title;
  EXPECT_EQ(tp.layer, "pcie");
  EXPECT_DOUBLE_EQ(metric(tp, "nics"), 4);
  bool named = false;
  for (const auto& e : tp.evidence) named = named || e.observed.find("GPU2: nearest NIC2 (mlx5_2) via PXB") != std::string::npos;
  EXPECT_TRUE(named);
  EXPECT_EQ(find(pass, "gpu.nvlink").status, Status::pass);

  auto far = analyze_file("topo-far-nic.txt");
  const auto& tf = find(far, "gpu.topology");
  EXPECT_EQ(tf.status, Status::warn);
  EXPECT_NE(tf.title.find("GPU2 (NODE to NIC1 (mlx5_1))"), std::string::npos) << tf.title;
  EXPECT_DOUBLE_EQ(metric(tf, "gpus_far_from_nic"), 2);
  const auto& nv = find(far, "gpu.nvlink");
  EXPECT_EQ(nv.status, Status::fail);  // GPU0<->GPU3 NV12 where the others have NV18
  // Said as the matrix prints the cells, not as a sum of them (a sum is no link count).
  EXPECT_NE(nv.title.find("than GPU1's NV18 x3: GPU0 (NV12 x1, NV18 x2), GPU3 (NV12 x1, NV18 x2)"), std::string::npos) << nv.title;
  EXPECT_DOUBLE_EQ(metric(nv, "nvlinks.GPU0"), 48);

  // No NIC, no NVLink: nothing to judge, and said so.
  auto none = analyze({{"t.txt", "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPHB\t0-7\nGPU1\tPHB\t X \t0-7\n"}});
  EXPECT_EQ(find(none, "gpu.topology").status, Status::skip);
  EXPECT_EQ(find(none, "gpu.nvlink").status, Status::skip);
  // Every GPU equally far: pass, with the spread in the title.
  auto sys = analyze({{"t.txt", "\tGPU0\tGPU1\tNIC0\nGPU0\t X \tSYS\tPHB\nGPU1\tSYS\t X \tSYS\n"}});
  EXPECT_EQ(find(sys, "gpu.topology").status, Status::pass);
  EXPECT_NE(find(sys, "gpu.topology").title.find("1 PHB, 1 SYS"), std::string::npos) << find(sys, "gpu.topology").title;
  // A capture cut short (rows lost, header kept): judged on the rows, and said so.
  auto cut = analyze({{"t.txt", "\tGPU0\tGPU1\tGPU2\tNIC0\nGPU0\t X \tNV4\tNV4\tPIX\nGPU1\tNV4\t X \tNV4\tSYS\n"}});
  for (const char* id : {"gpu.topology", "gpu.nvlink"}) {
    bool said = false;
    for (const auto& e : find(cut, id).evidence) said = said || e.observed.find("1 of the header's 3 GPU columns have no row (GPU2)") != std::string::npos;
    EXPECT_TRUE(said) << id;
  }
  for (const auto& e : find(pass, "gpu.topology").evidence) EXPECT_EQ(e.observed.find("no row"), std::string::npos) << e.observed;
  // A damaged row is an error finding naming its line.
  auto dmg = analyze({{"t.txt", "\tGPU0\tGPU1\tNIC0\nGPU0\t X \tSYS\tPIX\nGPU1\tSYS\n"}});
  const auto& err = find(dmg, "gpu.topology", "t.txt (unreadable lines)");
  EXPECT_EQ(err.status, Status::error);
  EXPECT_EQ(err.evidence.at(0).source, "t.txt:3");
}

TEST(AnalyzerNvidiaSmi, SharedCapturesGiveConcreteOutcomes) {
  const std::filesystem::path dir = std::filesystem::path(PERFGAP_SHARED_DIR) / "fixtures" / "nvidia-smi";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no shared captures at " << dir;
  auto shared = [&](const std::string& name) { return analyze({{name, read_file(dir / name)}}); };
  // A100 (v12, MIG): persistence off, everything else it has at rest is healthy.
  auto a100 = shared("query-xml-a100-sxm4-v12-telegraf-testdata.xml");
  EXPECT_EQ(find(a100, "gpu.persistence", "0000:01:00.0").status, Status::warn);
  EXPECT_EQ(find(a100, "gpu.clocks", "0000:01:00.0").status, Status::pass);  // application 1275 = default, below the 1410 max
  EXPECT_EQ(find(a100, "gpu.ecc", "0000:01:00.0").status, Status::pass);
  EXPECT_EQ(find(a100, "gpu.pcie", "0000:01:00.0").status, Status::pass);
  EXPECT_EQ(find(a100, "gpu.fabric", "0000:01:00.0").status, Status::skip);
  // ... left in MIG mode, and one of its four attached GPUs described: both said.
  EXPECT_EQ(find(a100, "gpu.mig", "0000:01:00.0").status, Status::warn);
  const auto& cut = find(a100, "gpu.nvml", "query-xml-a100-sxm4-v12-telegraf-testdata.xml");
  EXPECT_EQ(cut.status, Status::warn);
  EXPECT_NE(cut.title.find("1 of its 4 attached GPUs"), std::string::npos) << cut.title;
  // RTX 4000 Ada (v13): idle at Gen1 of Gen4, ECC off.
  auto ada = shared("query-xml-rtx-4000-sff-ada-v13-telegraf-testdata.xml");
  EXPECT_EQ(find(ada, "gpu.pcie", "0000:06:00.0").status, Status::skip);
  EXPECT_EQ(find(ada, "gpu.ecc", "0000:06:00.0").status, Status::skip);
  EXPECT_EQ(find(ada, "gpu.persistence", "0000:06:00.0").status, Status::pass);
  EXPECT_GT(metric(find(ada, "gpu.clocks", "0000:06:00.0"), "reason_s.sw_power_cap"), 4000);
  // Tesla T4 (v11): a x8 link of a x16 card.
  auto t4 = shared("query-xml-tesla-t4-telegraf-testdata.xml");
  EXPECT_EQ(find(t4, "gpu.pcie", "0000:00:1e.0").status, Status::warn);
  EXPECT_EQ(find(t4, "gpu.fabric", "0000:00:1e.0").status, Status::skip);
  // topo -m: a PIX NIC for every GPU on the DGX B200 (glued cells read), the RTX 4090 box's
  // one PHB GPU among SYS ones, GB200's NICs all SYS.
  EXPECT_EQ(find(shared("topo-m-dgx-b200-16nic-missing-tab-SYSSYS-quirk-nccl-1646.txt"), "gpu.topology").status, Status::pass);
  EXPECT_EQ(find(shared("topo-m-dgx-b200-16nic-missing-tab-SYSSYS-quirk-nccl-1646.txt"), "gpu.nvlink").status, Status::pass);
  const auto& rtx = find(shared("topo-m-8x-rtx4090-all-sys-tabs-complete-go-gpuallocator-17.txt"), "gpu.topology");
  EXPECT_EQ(rtx.status, Status::pass);
  EXPECT_NE(rtx.title.find("1 PHB, 7 SYS"), std::string::npos) << rtx.title;
  EXPECT_EQ(find(shared("topo-m-8x-rtx4090-all-sys-tabs-complete-go-gpuallocator-17.txt"), "gpu.nvlink").status, Status::skip);
  EXPECT_EQ(find(shared("topo-m-2x-rtx5090-phb-with-legend-complete-club-3090-1229.txt"), "gpu.topology").status, Status::skip);
  EXPECT_DOUBLE_EQ(metric(find(shared("topo-m-dgx2-16gpu-nv6-mlx5-columns-old-format-nccl-tests-78.txt"), "gpu.nvlink"), "nvlinks.GPU0"),
                   90);
}

// ---- the other forms users hold (issue 43, item 6) ----------------------------------------
// Written here in the forms of telegraf's dual_2080-v13.xml (one UUID for both GPUs), gpud's
// nvidia-smi-query.*.valid and nvidia-smi.nvlink.status.a100, and azurehpc-health-checks'
// bad_nvsmi8_output.txt (-q -d PAGE_RETIREMENT) and {good,bad}_nvlink_status.txt.
namespace {

// One GPU of `nvidia-smi -q` as the 535 driver prints it (the sections perfgap reads and some
// it does not), keys padded to column 42.
std::string q_gpu(const std::string& bus, const std::string& uuid, const std::string& width, const std::string& remap_pending) {
  auto kv = [](int indent, const std::string& k, const std::string& v) {
    std::string key = std::string(static_cast<std::size_t>(indent), ' ') + k;
    key.resize(std::max<std::size_t>(key.size(), 42), ' ');
    return key + ": " + v + "\n";
  };
  auto sec = [](int indent, const std::string& k) { return std::string(static_cast<std::size_t>(indent), ' ') + k + "\n"; };
  return "GPU " + bus + "\n" + kv(4, "Product Name", "NVIDIA A100-SXM4-80GB") + kv(4, "Product Architecture", "Ampere") +
         kv(4, "Persistence Mode", "Enabled") + sec(4, "MIG Mode") + kv(8, "Current", "Disabled") + kv(8, "Pending", "Disabled") +
         kv(4, "GPU UUID", uuid) + sec(4, "PCI") + kv(8, "Bus Id", bus) + sec(8, "GPU Link Info") + sec(12, "PCIe Generation") +
         kv(16, "Max", "4") + kv(16, "Current", "4") + kv(16, "Device Current", "4") + sec(12, "Link Width") + kv(16, "Max", "16x") +
         kv(16, "Current", width) + kv(8, "Replays Since Reset", "0") + kv(8, "Replay Number Rollovers", "0") +
         kv(4, "Performance State", "P0") + sec(4, "Clocks Event Reasons") + kv(8, "Idle", "Not Active") +
         kv(8, "SW Power Cap", "Active") + kv(8, "HW Slowdown", "Not Active") + kv(12, "HW Thermal Slowdown", "Not Active") +
         kv(12, "HW Power Brake Slowdown", "Not Active") + kv(8, "SW Thermal Slowdown", "Not Active") + sec(4, "Utilization") +
         kv(8, "Gpu", "97 %") + sec(4, "ECC Mode") + kv(8, "Current", "Enabled") + kv(8, "Pending", "Enabled") + sec(4, "ECC Errors") +
         sec(8, "Volatile") + kv(12, "SRAM Correctable", "0") + kv(12, "SRAM Uncorrectable", "0") + kv(12, "DRAM Correctable", "2") +
         kv(12, "DRAM Uncorrectable", "0") + sec(8, "Aggregate") + kv(12, "SRAM Correctable", "0") + kv(12, "SRAM Uncorrectable", "0") +
         kv(12, "DRAM Correctable", "5") + kv(12, "DRAM Uncorrectable", "0") + sec(4, "Retired Pages") + kv(8, "Single Bit ECC", "N/A") +
         kv(8, "Double Bit ECC", "N/A") + kv(8, "Pending Page Blacklist", "N/A") + sec(4, "Remapped Rows") +
         kv(8, "Correctable Error", "0") + kv(8, "Uncorrectable Error", "0") + kv(8, "Pending", remap_pending) +
         kv(8, "Remapping Failure Occurred", "No") + sec(4, "Temperature") + kv(8, "GPU Current Temp", "34 C") +
         kv(8, "GPU Shutdown Temp", "92 C") + kv(8, "GPU Slowdown Temp", "89 C") + sec(4, "GPU Power Readings") +
         kv(8, "Power Draw", "88.10 W") + kv(8, "Current Power Limit", "400.00 W") + kv(8, "Default Power Limit", "400.00 W") +
         kv(8, "Max Power Limit", "400.00 W") + sec(4, "Clocks") + kv(8, "Graphics", "1410 MHz") + kv(8, "SM", "1410 MHz") +
         kv(8, "Memory", "1593 MHz") + sec(4, "Applications Clocks") + kv(8, "Graphics", "1275 MHz") + kv(8, "Memory", "1593 MHz") +
         sec(4, "Default Applications Clocks") + kv(8, "Graphics", "1275 MHz") + kv(8, "Memory", "1593 MHz") + sec(4, "Max Clocks") +
         kv(8, "Graphics", "1410 MHz") + kv(8, "SM", "1410 MHz") + kv(8, "Memory", "1593 MHz") + sec(4, "Fabric") +
         kv(8, "State", "N/A") + kv(8, "Status", "N/A") + kv(4, "Processes", "None") + "\n";
}

std::string q_text(const std::string& gpus) {
  return "\n==============NVSMI LOG==============\n\nTimestamp                                 : Mon Jul  8 08:11:21 2024\n"
         "Driver Version                            : 535.154.05\nCUDA Version                              : 12.2\n\n"
         "Attached GPUs                             : 2\n" +
         gpus;
}

const std::string kUuidA = "GPU-5269b708-678a-b1a8-60f0-c90406537486", kUuidB = "GPU-a7605225-d684-1f65-4ad4-ee2ab39338b4";

std::string nvlink_gpu(int index, const std::string& uuid, int up, int inactive) {
  std::string s = "GPU " + std::to_string(index) + ": NVIDIA A100-SXM4-80GB (UUID: " + uuid + ")\n";
  for (int l = 0; l < up + inactive; ++l) s += "\t Link " + std::to_string(l) + (l < up ? ": 25 GB/s\n" : ": <inactive>\n");
  return s;
}

}  // namespace

TEST(AnalyzerNvidiaSmi, TwoGpusSharingOneUuidAreBothJudged) {
  // Both GPUs of one capture with one (anonymised) UUID: two GPUs, not two captures of one.
  auto text = edit(healthy(), "GPU-0000aaaa-1111-2222-3333-000000000001", "GPU-0000aaaa-1111-2222-3333-000000000000");
  auto fs = analyze({{"dual.xml", text}});
  for (const auto& s : {kGpu0, kGpu1}) {
    EXPECT_EQ(find(fs, "gpu.persistence", s).status, Status::pass) << s;
    EXPECT_EQ(find(fs, "gpu.pcie", s).status, Status::pass) << s;
  }
  // Two captures of that node: each GPU's counters compared with its own.
  auto twice = analyze({{"a.xml", text}, {"b.xml", text}});
  EXPECT_EQ(find(twice, "gpu.pcie", kGpu1).status, Status::pass);
  EXPECT_EQ(std::count_if(twice.begin(), twice.end(), [](const report::Finding& f) { return f.id == "gpu.ecc"; }), 2);
}

TEST(AnalyzerNvidiaSmi, QueryTextIsReadAsItsXmlWouldBe) {
  auto cap = parse(q_text(q_gpu("00000000:07:00.0", kUuidA, "16x", "No") + q_gpu("00000000:0F:00.0", kUuidB, "8x", "Yes")));
  EXPECT_EQ(cap.kind, parsers::NvidiaSmi::Kind::query);
  EXPECT_EQ(cap.form, "nvidia-smi -q");
  EXPECT_EQ(cap.query.driver_version, "535.154.05");
  EXPECT_EQ(cap.query.attached_gpus, 2);
  ASSERT_EQ(cap.query.gpus.size(), 2u);
  const auto& g = cap.query.gpus[0];
  EXPECT_EQ(g.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g.uuid, kUuidA);
  EXPECT_EQ(g.pci_bus_id, "00000000:07:00.0");
  EXPECT_EQ(g.persistence, true);
  EXPECT_EQ(g.mig_enabled, false);
  EXPECT_EQ(g.pcie.gen_current, 4);
  EXPECT_EQ(g.pcie.width_max, 16);
  EXPECT_EQ(g.pcie.replay_counter, 0u);
  EXPECT_EQ(g.gpu_util_pct, 97);
  EXPECT_EQ(g.clock_events.at("sw_power_cap"), true);
  EXPECT_EQ(g.clock_events.at("hw_thermal_slowdown"), false);
  EXPECT_EQ(g.clock_events.at("gpu_idle"), false);
  EXPECT_EQ(g.ecc_enabled, true);
  EXPECT_EQ(g.ecc_volatile.corrected, 2u);
  EXPECT_EQ(g.ecc_aggregate.corrected, 5u);
  EXPECT_EQ(g.ecc_volatile.uncorrected, 0u);
  ASSERT_TRUE(g.remapped_rows);
  EXPECT_EQ(g.remapped_rows->pending, false);
  EXPECT_EQ(g.retirement_pending, std::nullopt);
  EXPECT_EQ(g.temp_c, 34);
  EXPECT_EQ(g.slowdown_temp_c, 89);
  EXPECT_EQ(g.power.draw_w, 88.1);
  EXPECT_EQ(g.power.enforced_limit_w, 400);
  EXPECT_EQ(g.clocks.sm_mhz, 1410);
  EXPECT_EQ(g.clocks.app_sm_mhz, 1275);
  EXPECT_EQ(g.clocks.max_mem_mhz, 1593);
  ASSERT_TRUE(g.fabric);
  EXPECT_FALSE(g.fabric->state);
  EXPECT_FALSE(g.nvlinks);
  // Judged as the XML: the narrow link and the pending remap of the second GPU.
  auto fs = analyze({{"q.txt", q_text(q_gpu("00000000:07:00.0", kUuidA, "16x", "No") + q_gpu("00000000:0F:00.0", kUuidB, "8x", "Yes"))}});
  EXPECT_EQ(find(fs, "gpu.pcie", "0000:07:00.0").status, Status::pass);
  EXPECT_EQ(find(fs, "gpu.pcie", "0000:0f:00.0").status, Status::warn);
  EXPECT_EQ(find(fs, "gpu.ecc", "0000:0f:00.0").status, Status::fail);
  EXPECT_EQ(find(fs, "gpu.clocks", "0000:07:00.0").status, Status::pass);
  EXPECT_EQ(find(fs, "gpu.persistence", "0000:07:00.0").status, Status::pass);
  EXPECT_EQ(find(fs, "gpu.nvlink", "0000:07:00.0").status, Status::skip);
  EXPECT_NE(find(fs, "gpu.nvlink", "0000:07:00.0").title.find("nvlink -s"), std::string::npos);
}

TEST(AnalyzerNvidiaSmi, QueryTextOfOneSectionJudgesWhatItHas) {
  // -q -d PAGE_RETIREMENT: the retired pages only; the other rules cannot judge, and say so.
  auto page = [](const std::string& bus, int sbe, int dbe, const char* pending) {
    return "GPU " + bus + "\n    Retired Pages\n        Single Bit ECC                    : " + std::to_string(sbe) +
           "\n        Double Bit ECC                    : " + std::to_string(dbe) + "\n        Pending Page Blacklist            : " + pending +
           "\n\n";
  };
  auto fs = analyze({{"pages.txt", q_text(page("00000002:00:00.0", 2, 6, "Yes") + page("00000003:00:00.0", 0, 0, "No") +
                                          page("00000006:00:00.0", 20, 45, "No"))}});
  const auto& pending = find(fs, "gpu.ecc", "0002:00:00.0");
  EXPECT_EQ(pending.status, Status::fail) << pending.title;
  EXPECT_NE(pending.title.find("page retirement is pending"), std::string::npos) << pending.title;
  EXPECT_DOUBLE_EQ(metric(pending, "retired_pages"), 8);
  EXPECT_EQ(find(fs, "gpu.ecc", "0003:00:00.0").status, Status::pass);
  const auto& many = find(fs, "gpu.ecc", "0006:00:00.0");
  EXPECT_EQ(many.status, Status::warn) << many.title;
  EXPECT_NE(many.title.find("65 pages retired"), std::string::npos) << many.title;
  for (const char* id : {"gpu.persistence", "gpu.clocks", "gpu.pcie", "gpu.nvlink", "gpu.fabric"})
    EXPECT_EQ(find(fs, id, "0003:00:00.0").status, Status::skip) << id;
  // No banner, no GPU: refused, saying what it looked for.
  auto none = parsers::parse_nvidia_smi("\n==============NVSMI LOG==============\n\nDriver Version : 535.86.10\n");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("without a GPU section"), std::string::npos) << none.error().message;
}

TEST(AnalyzerNvidiaSmi, NvlinkStatusIsJudgedAgainstTheSameModel) {
  // GPU 1: four links inactive; GPU 2: NVML's "all links are inactive".
  const std::string text = nvlink_gpu(0, kUuidA, 12, 0) + nvlink_gpu(1, kUuidB, 8, 4) +
                           "GPU 2: NVIDIA A100-SXM4-80GB (UUID: GPU-9667d95e-6d22-0c22-1f57-c481f13e7c44)\n"
                           "NVML: Unable to retrieve NVLink information as all links are inactive\n";
  auto cap = parse(text);
  EXPECT_EQ(cap.kind, parsers::NvidiaSmi::Kind::nvlink);
  EXPECT_EQ(cap.form, "nvidia-smi nvlink -s");
  ASSERT_EQ(cap.query.gpus.size(), 3u);
  ASSERT_TRUE(cap.query.gpus[1].nvlinks);
  EXPECT_EQ(cap.query.gpus[1].nvlinks->size(), 12u);
  EXPECT_EQ(cap.query.gpus[1].nvlinks->at(9).up, false);
  EXPECT_TRUE(cap.query.gpus[2].nvlinks && cap.query.gpus[2].nvlinks->empty());
  auto fs = analyze({{"nvlink.txt", text}});
  // Only gpu.nvlink: nvlink -s says nothing of the rest. Subject: the UUID (no bus id printed).
  EXPECT_EQ(fs.size(), 3u);
  EXPECT_EQ(find(fs, "gpu.nvlink", kUuidA).status, Status::pass);
  EXPECT_EQ(find(fs, "gpu.nvlink", kUuidB).status, Status::fail);
  EXPECT_NE(find(fs, "gpu.nvlink", kUuidB).title.find("8 NVLinks up, same-model GPUs have 12"), std::string::npos);
  EXPECT_EQ(find(fs, "gpu.nvlink", "GPU-9667d95e-6d22-0c22-1f57-c481f13e7c44").status, Status::fail);
  // The links' speed as nvlink -s prints it: the slowest link up, a metric expect learn holds the kind to.
  EXPECT_DOUBLE_EQ(cap.query.gpus[0].nvlinks->at(0).speed_gbps.value_or(0), 25);
  EXPECT_FALSE(cap.query.gpus[1].nvlinks->at(9).speed_gbps);
  const auto& a = find(fs, "gpu.nvlink", kUuidA);
  EXPECT_TRUE(std::any_of(a.metrics.begin(), a.metrics.end(), [](const auto& kv) { return kv.first == "link_gbps" && kv.second == 25; }));
  auto mixed = analyze({{"slow.txt", "GPU 0: NVIDIA A100-SXM4-80GB (UUID: " + kUuidA + ")\n\t Link 0: 25 GB/s\n\t Link 1: 12.5 GB/s\n"}});
  EXPECT_TRUE(std::any_of(mixed[0].metrics.begin(), mixed[0].metrics.end(), [](const auto& kv) { return kv.first == "link_gbps" && kv.second == 12.5; }))
      << mixed[0].title;
  // One GPU alone with every link inactive: nothing to compare it with.
  auto alone = analyze({{"bad.txt", "GPU 6: NVIDIA A100-SXM4-80GB (UUID: GPU-9667d95e-6d22-0c22-1f57-c481f13e7c44)\n"
                                    "NVML: Unable to retrieve NVLink information as all links are inactive\n"}});
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].status, Status::skip) << alone[0].title;
  // Given with the -q of the same node: its links join the GPUs of the same UUID.
  auto both = analyze({{"q.txt", q_text(q_gpu("00000000:07:00.0", kUuidA, "16x", "No") + q_gpu("00000000:0F:00.0", kUuidB, "16x", "No"))},
                       {"nvlink.txt", nvlink_gpu(0, kUuidA, 12, 0) + nvlink_gpu(1, kUuidB, 8, 4)}});
  EXPECT_EQ(find(both, "gpu.nvlink", "0000:07:00.0").status, Status::pass);
  EXPECT_EQ(find(both, "gpu.nvlink", "0000:0f:00.0").status, Status::fail);
  EXPECT_EQ(std::count_if(both.begin(), both.end(), [](const report::Finding& f) { return f.id == "gpu.nvlink"; }), 2);
  // A line of another tool inside it: refused at its line.
  auto bad = parsers::parse_nvidia_smi(nvlink_gpu(0, kUuidA, 2, 0) + "\t Link 2: hello\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().line, 4);
}

// A GPU passed through to a VM (nvidia-smi's GPU Virtualization Mode Pass-Through): x8 of x16 is
// still a warn, but the host's slot as the hypervisor presents it decides the link, so the fix
// says the host or the instance type, never "reseat the GPU or riser" inside the guest.
TEST(AnalyzerNvidiaSmi, ANarrowLinkInAVmPointsAtTheHostNotAReseat) {
  const std::string faults = read_file(log_fixture("nvidia-smi/faults.xml"));
  const auto bare_fs = analyze({{"bare.xml", faults}});
  const auto& bare = find(bare_fs, "gpu.pcie", kGpu1);
  EXPECT_NE(bare.fix.find("reseat the GPU or riser"), std::string::npos) << bare.fix;
  const std::string vm = edit(faults, "\t\t<uuid>GPU-0000aaaa-1111-2222-3333-000000000001</uuid>",
                              "\t\t<gpu_virtualization_mode>\n\t\t\t<virtualization_mode>Pass-Through</virtualization_mode>\n"
                              "\t\t\t<host_vgpu_mode>N/A</host_vgpu_mode>\n\t\t</gpu_virtualization_mode>\n"
                              "\t\t<uuid>GPU-0000aaaa-1111-2222-3333-000000000001</uuid>");
  const auto fs = analyze({{"vm.xml", vm}});
  const auto& guest = find(fs, "gpu.pcie", kGpu1);
  EXPECT_EQ(guest.status, Status::warn) << guest.title;
  EXPECT_EQ(guest.fix.find("reseat"), std::string::npos) << guest.fix;
  EXPECT_NE(guest.fix.find("instance type"), std::string::npos) << guest.fix;
  bool said = false;
  for (const auto& e : guest.evidence) said = said || e.observed.find("GPU virtualization mode Pass-Through") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(AnalyzerNvidiaSmi, MigModeWarnsWhereEnabledAndACutCaptureSaysSo) {
  auto fs = analyze({{"healthy.xml", healthy()}});
  EXPECT_EQ(find(fs, "gpu.mig", kGpu0).status, Status::pass);
  EXPECT_EQ(std::count_if(fs.begin(), fs.end(), [](const report::Finding& f) { return f.id == "gpu.nvml"; }), 0)
      << "every attached GPU described: nothing to say";
  auto mig = analyze({{"mig.xml", edit(healthy(), "<current_mig>Disabled</current_mig>", "<current_mig>Enabled</current_mig>")}});
  const auto& on = find(mig, "gpu.mig", kGpu0);
  EXPECT_EQ(on.status, Status::warn);
  EXPECT_NE(on.fix.find("-mig 0"), std::string::npos) << on.fix;
  EXPECT_EQ(find(mig, "gpu.mig", kGpu1).status, Status::pass);
  auto na = analyze({{"na.xml", edit(healthy(), "<current_mig>Disabled</current_mig>", "<current_mig>N/A</current_mig>")}});
  EXPECT_EQ(find(na, "gpu.mig", kGpu0).status, Status::skip);
  auto cut = analyze({{"cut.xml", edit(healthy(), "<attached_gpus>2</attached_gpus>", "<attached_gpus>8</attached_gpus>")}});
  const auto& n = find(cut, "gpu.nvml", "cut.xml");
  EXPECT_EQ(n.status, Status::warn);
  EXPECT_NE(n.title.find("2 of its 8 attached GPUs: the other 6 were not judged"), std::string::npos) << n.title;
}

// `nvidia-smi topo -p2p r|w|n|a|p` prints a capability matrix of OK/NS cells under the same
// header as topo -m: refused naming what it is (it was "no readable GPU row"); a one-GPU matrix
// has no pair to hold NVLinks between (it was "no NVLink between the 1 GPUs (PCIe only)").
TEST(AnalyzerNvidiaSmi, P2pCapabilityMatrixIsNamedAndOneGpuHasNoPair) {
  const std::string p2p =
      " \tGPU0\tGPU1\tGPU2\n GPU0\tX\tOK\tNS\n GPU1\tOK\tX\tOK\n GPU2\tNS\tOK\tX\n\nLegend:\n\n  X    = Self\n  OK   = Status Ok\n  NS   = Not supported\n";
  auto r = parsers::parse_nvidia_smi(p2p);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("an nvidia-smi topo -p2p capability matrix"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("capture `nvidia-smi topo -m`"), std::string::npos) << r.error().message;
  const auto one = analyze({{"one.txt", " \tGPU0\tCPU Affinity\tNUMA Affinity\n GPU0\tX\t0-31\t0\n"}});
  const auto& nv = find(one, "gpu.nvlink");
  EXPECT_EQ(nv.status, Status::skip);
  EXPECT_EQ(nv.title, "1 GPU in the matrix: no pair of GPUs to hold NVLinks between");
}
