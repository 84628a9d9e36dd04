// nccl.topo_file over trees: PCI devices that match one of the real, publicly posted files in
// ../shared/fixtures/topo-xml/ (read in place, never copied; the tests skip when that
// directory is absent) and trees that do not, and a 50 MB file. The parser's own tests on
// text are in test_parsers_nccl_topo.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/check.hpp"
#include "core/config.hpp"
#include "core/runner.hpp"
#include "facts/nccl.hpp"
#include "files.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using fixture::read_file;

namespace {

const fs::path kTopoDir = fs::path(PERFGAP_SHARED_DIR) / "fixtures/topo-xml";

#define REQUIRE_TOPO_FILE(file)                                                   \
  if (!fs::exists(kTopoDir / (file))) GTEST_SKIP() << kTopoDir / (file) << " not present (no ../shared here)"

// ---- the check on trees built around the shared files ------------------------------------

// A node tree holding exactly the PCI functions `devs` (bdf, vendor, class, numa_node) and
// NCCL_TOPO_FILE=/opt/topo.xml holding `xml`.
struct Dev {
  std::string bdf, vendor, klass;
  int numa;
};

report::Finding run_topo_check(const std::string& dir, const std::vector<Dev>& devs, const std::string& xml) {
  fs::create_directories(dir + "/proc/self");
  std::ofstream(dir + "/proc/self/environ", std::ios::binary) << std::string("HOME=/root\0NCCL_TOPO_FILE=/opt/topo.xml\0", 41);
  fs::create_directories(dir + "/opt");
  std::ofstream(dir + "/opt/topo.xml", std::ios::binary) << xml;
  for (const auto& d : devs) {
    auto p = dir + "/sys/bus/pci/devices/" + d.bdf;
    fs::create_directories(p);
    std::ofstream(p + "/vendor") << d.vendor << "\n";
    std::ofstream(p + "/class") << d.klass << "\n";
    std::ofstream(p + "/numa_node") << d.numa << "\n";
  }
  auto root = sys::Sysroot::at(dir);
  EXPECT_TRUE(root);
  auto facts = std::make_shared<facts::Facts>(*root, facts::Options{});
  const auto* info = core::builtin_registry().find("nccl.topo_file");
  EXPECT_NE(info, nullptr);
  auto findings = core::run_checks({info}, facts, core::Config{}, core::RunOptions{});
  EXPECT_EQ(findings.size(), 1u);
  return findings.front();
}

std::vector<Dev> ndv2_devices() {
  std::vector<Dev> devs;
  for (int i = 1; i <= 8; ++i) devs.push_back({"000" + std::to_string(i) + ":00:00.0", "0x10de", "0x030200", i <= 4 ? 0 : 1});
  devs.push_back({"0101:00:00.0", "0x15b3", "0x020700", 0});
  return devs;
}

TEST(NcclTopoCheck, TreeMatchingAzureNdv2Passes) {
  REQUIRE_TOPO_FILE("azhpc-ndv2-topo.xml");
  fixture::TempDir tmp;
  auto f = run_topo_check(tmp.path(), ndv2_devices(), read_file(kTopoDir / "azhpc-ndv2-topo.xml"));
  EXPECT_EQ(f.status, report::Status::pass) << f.title;
}

TEST(NcclTopoCheck, TreeWithAGpuElsewhereFails) {
  REQUIRE_TOPO_FILE("azhpc-ndv2-topo.xml");
  fixture::TempDir tmp;
  auto devs = ndv2_devices();
  devs[7].bdf = "0009:00:00.0";  // the file's 0008:00:00.0 is gone, a GPU it does not list is here
  auto f = run_topo_check(tmp.path(), devs, read_file(kTopoDir / "azhpc-ndv2-topo.xml"));
  EXPECT_EQ(f.status, report::Status::fail) << f.title;
  EXPECT_NE(f.title.find("0008:00:00.0"), std::string::npos) << f.title;
}

TEST(NcclTopoCheck, TreeWithWrongNumaFails) {
  REQUIRE_TOPO_FILE("azhpc-ndv2-topo.xml");
  fixture::TempDir tmp;
  auto devs = ndv2_devices();
  devs[0].numa = 1;
  auto f = run_topo_check(tmp.path(), devs, read_file(kTopoDir / "azhpc-ndv2-topo.xml"));
  EXPECT_EQ(f.status, report::Status::fail) << f.title;
  EXPECT_NE(f.title.find("numa_node"), std::string::npos) << f.title;
}

TEST(NcclTopoCheck, TreeMatchingAwsP4dPassesAndAnotherNodeTypeFails) {
  REQUIRE_TOPO_FILE("aws-ofi-nccl-p4d-24xl-topo.xml");
  std::vector<Dev> devs;
  for (const char* bus : {"10", "20", "90", "a0"}) {
    int numa = (bus[0] == '1' || bus[0] == '2') ? 0 : 1;
    devs.push_back({std::string("0000:") + bus + ":1c.0", "0x10de", "0x030200", numa});
    devs.push_back({std::string("0000:") + bus + ":1d.0", "0x10de", "0x030200", numa});
    devs.push_back({std::string("0000:") + bus + ":1b.0", "0x1d0f", "0x020000", numa});
  }
  {
    fixture::TempDir tmp;
    auto f = run_topo_check(tmp.path(), devs, read_file(kTopoDir / "aws-ofi-nccl-p4d-24xl-topo.xml"));
    EXPECT_EQ(f.status, report::Status::pass) << f.title;
  }
  if (fs::exists(kTopoDir / "azhpc-ndv4-topo.xml")) {
    fixture::TempDir tmp;
    auto f = run_topo_check(tmp.path(), devs, read_file(kTopoDir / "azhpc-ndv4-topo.xml"));
    EXPECT_EQ(f.status, report::Status::fail) << f.title;
  }
}

TEST(NcclTopoCheck, GraphFileFails) {
  REQUIRE_TOPO_FILE("azhpc-ncv4-graph.xml");
  fixture::TempDir tmp;
  auto f = run_topo_check(tmp.path(), ndv2_devices(), read_file(kTopoDir / "azhpc-ncv4-graph.xml"));
  EXPECT_EQ(f.status, report::Status::fail);
  EXPECT_NE(f.title.find("graph file"), std::string::npos) << f.title;
}

// ---- bad input ---------------------------------------------------------------------------

TEST(NcclTopoBadInput, FiftyMegabytesIsRefusedWithoutReadingItWhole) {
  fixture::TempDir tmp;
  std::string xml = "<system version=\"1\"><cpu numaid=\"0\">";
  std::string row = "<pci busid=\"0000:18:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" link_width=\"16\"/>\n";
  xml.reserve(50u << 20);
  while (xml.size() < (50u << 20)) xml += row;
  xml += "</cpu></system>";
  auto start = std::chrono::steady_clock::now();
  auto f = run_topo_check(tmp.path(), ndv2_devices(), xml);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(f.status, report::Status::fail);
  EXPECT_NE(f.title.find("larger than 4 MiB"), std::string::npos) << f.title;
  EXPECT_LT(ms, 5000);
  // The parser refuses it too when handed the text directly.
  auto t = parsers::parse_nccl_topo(xml);
  EXPECT_FALSE(t);
}

}  // namespace
