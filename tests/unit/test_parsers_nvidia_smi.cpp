// parse_nvidia_smi: the real -q -x (DTD v11-v13) and topo -m captures of ../shared (numbers
// read a second way from the text here), and the layouts and damage written out as strings.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "files.hpp"
#include "parsers/nvidia_smi.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using fixture::read_file;

namespace {

fs::path shared(const std::string& name) { return fs::path(PERFGAP_SHARED_DIR) / "fixtures" / "nvidia-smi" / name; }

#define REQUIRE_SHARED(name) \
  if (!fs::exists(shared(name))) GTEST_SKIP() << "no shared capture " << shared(name)

// The first <tag>NUMBER ...</tag> of the text, by regex: independent of the parser.
double first_number(const std::string& text, const std::string& tag) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("<" + tag + ">\\s*(-?[0-9.]+)"))) throw std::runtime_error("no <" + tag + "> number");
  return std::stod(m[1]);
}
std::string first_text(const std::string& text, const std::string& tag) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("<" + tag + ">([^<]*)</" + tag + ">"))) throw std::runtime_error("no <" + tag + ">");
  return m[1];
}
std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

parsers::GpuSnapshot query(const std::string& text) {
  auto r = parsers::parse_nvidia_smi(text);
  if (!r) throw std::runtime_error(r.error().describe());
  if (r->kind != parsers::NvidiaSmi::Kind::query) throw std::runtime_error("not read as -q -x");
  return r->query;
}
parsers::GpuTopology topo(const std::string& text) {
  auto r = parsers::parse_nvidia_smi(text);
  if (!r) throw std::runtime_error(r.error().describe());
  if (r->kind != parsers::NvidiaSmi::Kind::topo) throw std::runtime_error("not read as topo -m");
  return r->topo;
}
const parsers::TopoRow& row(const parsers::GpuTopology& t, const std::string& name) {
  for (const auto& r : t.rows)
    if (r.name == name) return r;
  throw std::runtime_error("no row " + name);
}
std::string cell(const parsers::GpuTopology& t, const std::string& r, const std::string& col) {
  auto it = std::find(t.columns.begin(), t.columns.end(), col);
  if (it == t.columns.end()) throw std::runtime_error("no column " + col);
  return row(t, r).links.at(static_cast<std::size_t>(it - t.columns.begin()));
}

}  // namespace

TEST(ParsersNvidiaSmi, QueryXmlV12A100NumbersMatchTheText) {
  const std::string name = "query-xml-a100-sxm4-v12-telegraf-testdata.xml";
  REQUIRE_SHARED(name);
  auto text = read_file(shared(name));
  auto s = query(text);
  EXPECT_EQ(s.schema, "nvsmi_device_v12.dtd");
  EXPECT_EQ(s.gpus.size(), occurrences(text, "<gpu id="));
  EXPECT_EQ(s.attached_gpus, static_cast<int>(first_number(text, "attached_gpus")));  // 4, one <gpu> kept
  const auto& g = s.gpus.at(0);
  EXPECT_EQ(g.name, first_text(text, "product_name"));
  EXPECT_EQ(g.uuid, first_text(text, "uuid"));
  EXPECT_EQ(g.pci_bus_id, first_text(text, "pci_bus_id"));
  EXPECT_EQ(g.persistence, first_text(text, "persistence_mode") == "Enabled");
  EXPECT_EQ(g.mig_enabled, first_text(text, "current_mig") == "Enabled");
  EXPECT_DOUBLE_EQ(*g.power.draw_w, first_number(text, "power_draw"));
  EXPECT_DOUBLE_EQ(*g.power.enforced_limit_w, first_number(text, "current_power_limit"));
  EXPECT_DOUBLE_EQ(*g.power.default_limit_w, first_number(text, "default_power_limit"));
  EXPECT_DOUBLE_EQ(*g.clocks.sm_mhz, first_number(text, "sm_clock"));  // <clocks> comes before <max_clocks>
  EXPECT_EQ(*g.pcie.gen_max, static_cast<int>(first_number(text, "max_link_gen")));
  EXPECT_EQ(*g.pcie.width_current, static_cast<int>(first_number(text, "current_link_width")));
  EXPECT_EQ(*g.pcie.replay_counter, static_cast<std::uint64_t>(first_number(text, "replay_counter")));
  EXPECT_DOUBLE_EQ(*g.temp_c, first_number(text, "gpu_temp"));
  // Every event reason of the block, none active.
  EXPECT_EQ(g.clock_events.size(), occurrences(text, "<clocks_event_reason_"));
  EXPECT_EQ(g.clock_events.at("hw_slowdown"), false);
  EXPECT_EQ(g.ecc_enabled, true);
  EXPECT_EQ(g.ecc_volatile.uncorrected, 0u);
  EXPECT_FALSE(g.remapped_rows.has_value());  // <remapped_rows>N/A</remapped_rows>
  ASSERT_TRUE(g.fabric.has_value());
  EXPECT_FALSE(g.fabric->state.has_value());  // N/A
  EXPECT_FALSE(g.nvlinks.has_value());
  EXPECT_EQ(s.driver_version, first_text(text, "driver_version"));
}

TEST(ParsersNvidiaSmi, QueryXmlV13CountersRemapsAndDeprecatedValues) {
  const std::string name = "query-xml-rtx-4000-sff-ada-v13-telegraf-testdata.xml";
  REQUIRE_SHARED(name);
  auto text = read_file(shared(name));
  auto s = query(text);
  EXPECT_EQ(s.schema, "nvsmi_device_v13.dtd");
  ASSERT_EQ(s.gpus.size(), 1u);
  const auto& g = s.gpus[0];
  EXPECT_EQ(g.persistence, true);
  EXPECT_DOUBLE_EQ(*g.power.draw_w, first_number(text, "instant_power_draw"));  // v13 has no power_draw
  EXPECT_DOUBLE_EQ(*g.power.enforced_limit_w, first_number(text, "current_power_limit"));
  // "Requested functionality has been deprecated" is not a clock.
  EXPECT_FALSE(g.clocks.app_sm_mhz.has_value());
  EXPECT_DOUBLE_EQ(*g.clocks.max_sm_mhz, 3105);
  EXPECT_EQ(*g.pcie.gen_current, static_cast<int>(first_number(text, "current_link_gen")));
  EXPECT_EQ(g.clock_events.at("gpu_idle"), true);
  EXPECT_EQ(g.clock_event_us.at("sw_power_cap"),
            static_cast<std::uint64_t>(first_number(text, "clocks_event_reasons_counters_sw_power_cap")));
  EXPECT_EQ(g.clock_event_us.count("hw_thermal_slowdown"), 1u);  // hw_therm_slowdown, by the reasons' name
  EXPECT_EQ(g.ecc_enabled, false);
  EXPECT_FALSE(g.ecc_volatile.uncorrected.has_value());  // N/A with ECC off
  ASSERT_TRUE(g.remapped_rows.has_value());
  EXPECT_EQ(g.remapped_rows->correctable, 0u);
  EXPECT_EQ(g.remapped_rows->pending, false);
  EXPECT_EQ(g.remapped_rows->failure, false);
  EXPECT_DOUBLE_EQ(*g.gpu_util_pct, first_number(text, "gpu_util"));
  EXPECT_EQ(g.performance_state, first_text(text, "performance_state"));
  // The T.Limit-relative thresholds of v13 are not the absolute slowdown temperature.
  EXPECT_FALSE(g.slowdown_temp_c.has_value());
}

TEST(ParsersNvidiaSmi, QueryXmlV11ThrottleReasonsAndPowerReadings) {
  const std::string name = "query-xml-tesla-t4-telegraf-testdata.xml";
  REQUIRE_SHARED(name);
  auto text = read_file(shared(name));
  auto s = query(text);
  ASSERT_EQ(s.gpus.size(), occurrences(text, "<gpu id="));
  const auto& g = s.gpus[0];
  EXPECT_EQ(g.clock_events.size(), occurrences(text, "<clocks_throttle_reason_"));
  EXPECT_EQ(g.clock_events.count("sw_thermal_slowdown"), 1u);
  EXPECT_DOUBLE_EQ(*g.power.enforced_limit_w, first_number(text, "enforced_power_limit"));
  EXPECT_DOUBLE_EQ(*g.power.draw_w, first_number(text, "power_draw"));
  EXPECT_DOUBLE_EQ(*g.clocks.app_sm_mhz, 585);
  EXPECT_DOUBLE_EQ(*g.slowdown_temp_c, first_number(text, "gpu_temp_slow_threshold"));
  EXPECT_EQ(g.retirement_pending, false);
  EXPECT_FALSE(g.fabric.has_value());  // driver 515 prints no fabric block
  EXPECT_FALSE(g.remapped_rows.has_value());
}

TEST(ParsersNvidiaSmi, EveryTopoCaptureParsesWithAllCellsAndNoDamage) {
  if (!fs::is_directory(shared(""))) GTEST_SKIP() << "no shared captures at " << shared("");
  int n = 0;
  for (const auto& e : fs::directory_iterator(shared(""))) {
    auto name = e.path().filename().string();
    if (!name.starts_with("topo-m-")) continue;
    ++n;
    auto text = read_file(e.path());
    auto t = topo(text);
    EXPECT_TRUE(t.damaged.empty()) << name << ": " << (t.damaged.empty() ? "" : t.damaged[0].describe());
    // Independently: the device columns are the header's GPUn/NICn/mlx5_n words; a row is a
    // line that starts with one of them.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, std::regex("(^|\n)[ \t]+GPU0[^\n]*"))) << name;
    std::string header = m[0];
    std::regex dev("(GPU|NIC|mlx5_)[0-9]+");
    auto cols = static_cast<std::size_t>(std::distance(std::sregex_iterator(header.begin(), header.end(), dev), std::sregex_iterator()));
    EXPECT_EQ(t.columns.size(), cols) << name;
    std::size_t rows = 0;
    std::regex rowre("(^|\n)(GPU|NIC|mlx5_)[0-9]+[ \t]");
    rows = static_cast<std::size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), rowre), std::sregex_iterator()));
    EXPECT_EQ(t.rows.size(), rows) << name;
    for (const auto& r : t.rows) EXPECT_EQ(r.links.size(), cols) << name << " " << r.name;
  }
  EXPECT_GE(n, 8);  // the eight captures of ../shared at the time of writing
}

TEST(ParsersNvidiaSmi, TopoQuirksOfTheCaptures) {
  if (!fs::is_directory(shared(""))) GTEST_SKIP() << "no shared captures at " << shared("");
  // Cells glued together as published: "PIXNODE" is NIC10 PIX, NIC11 NODE.
  auto b200 = topo(read_file(shared("topo-m-dgx-b200-16nic-missing-tab-SYSSYS-quirk-nccl-1646.txt")));
  EXPECT_EQ(cell(b200, "GPU4", "NIC10"), "PIX");
  EXPECT_EQ(cell(b200, "GPU4", "NIC11"), "NODE");
  EXPECT_EQ(cell(b200, "GPU0", "NIC10"), "SYS");
  EXPECT_EQ(cell(b200, "GPU0", "NIC4"), "PIX");
  EXPECT_EQ(row(b200, "GPU7").cpu_affinity, "84-111,196-223");
  EXPECT_EQ(row(b200, "GPU7").numa_affinity, "3");
  EXPECT_FALSE(row(b200, "NIC0").cpu_affinity.has_value());  // NIC rows end in tabs only
  // GB200: multi-range NUMA affinity and a GPU NUMA ID.
  auto gb = topo(read_file(shared("topo-m-gb200-4gpu-gpu-numa-id-sglang-11208.txt")));
  EXPECT_EQ(row(gb, "GPU0").numa_affinity, "0,3-9,11-17");
  EXPECT_EQ(row(gb, "GPU0").gpu_numa_id, "2");
  EXPECT_EQ(row(gb, "GPU2").gpu_numa_id, "18");
  // H800: no GPU NUMA ID column.
  auto h800 = topo(read_file(shared("topo-m-h800-nv8-no-gpu-numa-id-column-nccl-933.txt")));
  EXPECT_EQ(h800.affinity_columns, (std::vector<std::string>{"CPU Affinity", "NUMA Affinity"}));
  EXPECT_FALSE(row(h800, "GPU0").gpu_numa_id.has_value());
  EXPECT_EQ(cell(h800, "GPU0", "GPU1"), "NV8");
  // DGX-2: NIC columns named by device, a CPU Affinity column only.
  auto dgx2 = topo(read_file(shared("topo-m-dgx2-16gpu-nv6-mlx5-columns-old-format-nccl-tests-78.txt")));
  EXPECT_EQ(dgx2.affinity_columns, (std::vector<std::string>{"CPU Affinity"}));
  EXPECT_EQ(cell(dgx2, "GPU2", "mlx5_1"), "PIX");
  EXPECT_EQ(row(dgx2, "GPU0").cpu_affinity, "0-23,48-71");
  // The legend is read; N/A stays as printed.
  auto rtx = topo(read_file(shared("topo-m-2x-rtx5090-phb-with-legend-complete-club-3090-1229.txt")));
  EXPECT_TRUE(rtx.legend);
  EXPECT_EQ(cell(rtx, "GPU0", "GPU1"), "PHB");
  EXPECT_EQ(row(rtx, "GPU1").gpu_numa_id, "N/A");
  // Space-aligned.
  auto sp = topo(read_file(shared("topo-m-8gpu-nv18-9nic-spaces-sglang-13973.txt")));
  EXPECT_EQ(cell(sp, "GPU3", "NIC4"), "PIX");
  EXPECT_EQ(row(sp, "GPU4").numa_affinity, "2");
  // Tab-separated with NIC rows.
  auto h100 = topo(read_file(shared("topo-m-h100-8gpu-9nic-tabs-nic-rows-nccl-1453.txt")));
  EXPECT_EQ(cell(h100, "NIC1", "GPU7"), "PIX");
  EXPECT_EQ(cell(h100, "GPU7", "NIC1"), "PIX");
}

TEST(ParsersNvidiaSmi, TopoTerminalHeaderNicLegendAndDamagedRow) {
  auto t = topo(
      "$ nvidia-smi topo -m\n"
      "\x1b[4m\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
      "GPU0\t X \tNV4\tPXB\t0-15\t0\t\tN/A\r\n"
      "GPU1\tNV4\t X \n"
      "NIC0\tPXB\tSYS\t X \n"
      "\n"
      "NIC Legend:\n"
      "\n"
      "  NIC0: mlx5_0\n");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"GPU0", "GPU1", "NIC0"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(row(t, "GPU0").gpu_numa_id, "N/A");
  EXPECT_EQ(t.nic_names.at("NIC0"), "mlx5_0");
  ASSERT_EQ(t.damaged.size(), 1u);
  EXPECT_EQ(t.damaged[0].line, 4);
  EXPECT_NE(t.damaged[0].message.find("2 link cells"), std::string::npos) << t.damaged[0].message;
}

TEST(ParsersNvidiaSmi, NotThisKind) {
  auto e = parsers::parse_nvidia_smi("");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message, "empty");
  auto words = parsers::parse_nvidia_smi("hello\nworld\n");
  ASSERT_FALSE(words);
  EXPECT_NE(words.error().message.find("no nvidia-smi topo -m matrix"), std::string::npos);
  // An NCCL topology file is the third kind (compared with a matrix); another root is not.
  auto topo = parsers::parse_nvidia_smi("<?xml version=\"1.0\"?>\n<system version=\"1\"><cpu/></system>\n");
  ASSERT_TRUE(topo) << topo.error().describe();
  EXPECT_EQ(topo->kind, parsers::NvidiaSmi::Kind::nccl_topo);
  EXPECT_EQ(topo->nccl_topo.cpus, 1);
  auto other = parsers::parse_nvidia_smi("<?xml version=\"1.0\"?>\n<graphs version=\"1\"><graph/></graphs>\n");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("root <graphs>"), std::string::npos) << other.error().describe();
  EXPECT_EQ(other.error().line, 2);
  auto cut = parsers::parse_nvidia_smi("<?xml version=\"1.0\"?>\n<nvidia_smi_log>\n<gpu id=\"0\">\n<product_name>X</product_name>\n");
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("not well-formed XML"), std::string::npos);
  EXPECT_GE(cut.error().line, 4);
  auto nogpu = parsers::parse_nvidia_smi("<nvidia_smi_log><driver_version>1</driver_version></nvidia_smi_log>");
  ASSERT_FALSE(nogpu);
  EXPECT_NE(nogpu.error().message.find("without a <gpu>"), std::string::npos);
  auto header_only = parsers::parse_nvidia_smi("\tGPU0\tCPU Affinity\n");
  ASSERT_FALSE(header_only);
  EXPECT_EQ(header_only.error().line, 1);
}

TEST(ParsersNvidiaSmi, XmlAfterAPromptAndOldEccLayout) {
  auto s = query(
      "$ nvidia-smi -q -x\n"
      "<?xml version=\"1.0\" ?>\n"
      "<nvidia_smi_log><gpu id=\"00000000:3B:00.0\"><product_name>Tesla V100</product_name>"
      "<ecc_mode><current_ecc>Enabled</current_ecc></ecc_mode>"
      "<ecc_errors><volatile><single_bit><device_memory>4</device_memory><total>5</total></single_bit>"
      "<double_bit><device_memory>1</device_memory><total>1</total></double_bit></volatile></ecc_errors>"
      "<persistence_mode>N/A</persistence_mode><power_readings><power_draw>[N/A]</power_draw></power_readings>"
      "</gpu></nvidia_smi_log>\n");
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].pci_bus_id, "00000000:3B:00.0");  // from the id attribute
  EXPECT_EQ(s.gpus[0].ecc_volatile.corrected, 5u);
  EXPECT_EQ(s.gpus[0].ecc_volatile.uncorrected, 1u);
  EXPECT_FALSE(s.gpus[0].persistence.has_value());
  EXPECT_FALSE(s.gpus[0].power.draw_w.has_value());
  // A damaged XML after the prompt names its own line.
  auto bad = parsers::parse_nvidia_smi("$ nvidia-smi -q -x\n<nvidia_smi_log>\n<gpu>\n</nvidia_smi_log>\n");
  ASSERT_FALSE(bad);
  EXPECT_GE(bad.error().line, 3);
}

TEST(ParsersNvidiaSmi, LinkRanks) {
  EXPECT_LT(parsers::topo_link_rank("NV18"), parsers::topo_link_rank("PIX"));
  EXPECT_LT(parsers::topo_link_rank("PIX"), parsers::topo_link_rank("PXB"));
  EXPECT_LT(parsers::topo_link_rank("PHB"), parsers::topo_link_rank("NODE"));
  EXPECT_LT(parsers::topo_link_rank("NODE"), parsers::topo_link_rank("SYS"));
  EXPECT_EQ(parsers::topo_link_rank("???"), -1);
  EXPECT_EQ(parsers::topo_nvlinks("NV12"), 12);
  EXPECT_EQ(parsers::topo_nvlinks("PIX"), 0);
}
