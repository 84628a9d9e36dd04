// Every status of the gpu.* rules: the captures written for this in
// tests/fixtures/logs/nvidia-smi/, edits of them, and facts models filled as the NVML helper
// would (NVLink state, which -q -x does not print).
#include <gtest/gtest.h>

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
    for (int i = 0; i < 18; ++i) links.push_back({i, i < up, crc, 0, 0});
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
  EXPECT_NE(nv.title.find("GPU0 (48)"), std::string::npos) << nv.title;
  EXPECT_NE(nv.title.find("GPU3 (48)"), std::string::npos) << nv.title;

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
