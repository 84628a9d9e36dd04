// --baseline end to end, from two real runs of the binary: a report taken on the host tree
// (which sets NCCL_TOPO_FILE and has the file), then a run on the job's container tree
// (which has neither) compared against it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

namespace {

std::string base_tree(const char* name) {
  return (fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/cases/base" / name).string();
}

TEST(Baseline, ContainerMissingTheHostsTopologyFileFailsDrift) {
  TempDir host, container, out;
  ASSERT_TRUE(perfgap::fixture::unpack_tree(base_tree("ib-host-topo.tree"), host.path()));
  ASSERT_TRUE(perfgap::fixture::unpack_tree(base_tree("enroot-container.tree"), container.path()));
  const std::string host_json = out.path() + "/host.json";

  auto h = run_binary(PERFGAP_BINARY, {"check", "--root", host.path(), "--format", "json", "--output", host_json});
  ASSERT_TRUE(h.status == 0 || h.status == 1) << h.err;
  std::ifstream in(host_json);
  auto hj = nlohmann::json::parse(in);
  EXPECT_EQ(hj["node"]["environment"]["NCCL_TOPO_FILE"], "/etc/nccl/topo.xml");
  EXPECT_EQ(hj["node"]["settings"]["nccl_topo_file"], "present");
  EXPECT_EQ(hj["node"]["container"], "none");

  auto c = run_binary(PERFGAP_BINARY, {"check", "--root", container.path(), "--baseline", host_json, "--format", "json"});
  EXPECT_EQ(c.status, 1) << c.err;
  auto cj = nlohmann::json::parse(c.out);
  EXPECT_EQ(cj["node"]["container"], "enroot");
  EXPECT_EQ(cj["node"]["settings"]["nccl_topo_file"], "unset");
  bool drift = false, topo_warn = false;
  for (const auto& f : cj["findings"]) {
    if (f["id"] == "container.env_drift" && f["status"] == "fail" && f.value("subject", "") == "NCCL_TOPO_FILE") {
      drift = true;
      EXPECT_NE(f["title"].get<std::string>().find("NCCL_TOPO_FILE"), std::string::npos);
      EXPECT_NE(f["fix"].get<std::string>().find("--container-env"), std::string::npos) << f["fix"];
    }
    if (f["id"] == "nccl.topo_file" && f["status"] == "warn") topo_warn = true;
  }
  EXPECT_TRUE(drift) << c.out;
  EXPECT_TRUE(topo_warn) << "nccl.topo_file should warn: the baseline had a topology file";

  // The same container compared with itself as baseline has no drift.
  const std::string self_json = out.path() + "/self.json";
  auto s = run_binary(PERFGAP_BINARY, {"check", "--root", container.path(), "--format", "json", "--output", self_json});
  ASSERT_TRUE(s.status == 0 || s.status == 1) << s.err;
  auto again = run_binary(PERFGAP_BINARY, {"check", "--root", container.path(), "--baseline", self_json, "--only",
                                           "container.env_drift", "--format", "json"});
  EXPECT_EQ(again.status, 0) << again.out;
}

}  // namespace
