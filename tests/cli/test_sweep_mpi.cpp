// The real end-to-end sweep: `mpirun -np 2 perfgap-collbench all_gather` over Open MPI's
// allgather algorithms (coll/tuned with dynamic rules), 3 interleaved repeats. It must run
// every benchmark to a correct result (#wrong 0), export the settings with -x, and end in a
// recommendation or an honest "no significant difference". Skips without mpirun or without
// the perfgap-collbench target.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "contract.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using perfgap::fixture::find_on_path;

TEST(SweepMpi, OpenMpiAllgatherAlgorithmsEndToEnd) {
#ifndef PERFGAP_COLLBENCH
  GTEST_SKIP() << "perfgap-collbench is not built here";
#else
  const std::string mpirun = find_on_path("mpirun");
  if (mpirun.empty()) GTEST_SKIP() << "mpirun not on PATH";
  perfgap::fixture::TempDir d;
  const std::string out = d.path() + "/report.json";
  auto t0 = std::chrono::steady_clock::now();
  auto r = perfgap::fixture::run_binary(
      PERFGAP_BINARY,
      {"sweep", "--env", "OMPI_MCA_coll_tuned_allgather_algorithm=0,1,4", "--env", "OMPI_MCA_coll_tuned_use_dynamic_rules=1",
       "--repeat", "3", "--timeout", "30", "--run-dir", d.path() + "/run", "--format", "json", "--output", out, "--",
       "mpirun", "-np", "2", "--oversubscribe", PERFGAP_COLLBENCH, "all_gather", "-b", "1M", "-e", "4M", "-f", "2", "-n", "10", "-w", "2"},
      // Containers and CI run as root; Open MPI refuses that without both variables.
      {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}});
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  ASSERT_EQ(r.status, 0) << r.err << ss.str();
  EXPECT_LT(took, 60.0);
  auto j = json::parse(ss.str());
  auto v = perfgap::fixture::contract_violations(j);
  EXPECT_TRUE(v.empty()) << ::testing::PrintToString(v);
  EXPECT_EQ(j["source"]["kind"], "sweep");

  int results = 0;
  const json* rec = nullptr;
  for (const auto& fd : j["findings"]) {
    if (fd["id"] == "sweep.result") {
      ++results;
      EXPECT_EQ(fd["status"], "pass") << fd.dump(1);  // every run parsed, no #wrong
      EXPECT_EQ(fd["metrics"]["runs_ok"], 3.0) << fd.dump(1);
      EXPECT_GT(fd["metrics"]["busbw_gbps.4194304.median"].get<double>(), 0.0);
    }
    if (fd["id"] == "sweep.recommendation") rec = &fd;
  }
  EXPECT_EQ(results, 3);
  ASSERT_TRUE(rec);
  const std::string status = (*rec)["status"];
  ASSERT_TRUE(status == "pass" || status == "warn") << rec->dump(1);
  ASSERT_TRUE(j["recommendation"].is_object());
  if (status == "pass") {
    EXPECT_NE(j["recommendation"]["setting"]["OMPI_MCA_coll_tuned_allgather_algorithm"], "0");
    EXPECT_GT(j["recommendation"]["gain_pct"].get<double>(), 0.0);
  } else {
    EXPECT_NE((*rec)["title"].get<std::string>().find("no significant difference: keep the baseline"), std::string::npos);
    EXPECT_EQ(j["recommendation"]["setting"]["OMPI_MCA_coll_tuned_allgather_algorithm"], "0");
  }
  std::cout << "[ sweep    ] " << (*rec)["title"].get<std::string>() << " (" << took << " s)\n";

  std::ifstream mf(d.path() + "/run/manifest.json");
  auto m = json::parse(mf);
  EXPECT_EQ(m["status"], "complete");
  EXPECT_EQ(m["launcher"], "open-mpi");
  ASSERT_EQ(m["runs"].size(), 9u);
  const auto& argv = m["runs"][0]["argv"];
  EXPECT_EQ(argv[1], "-x");
  EXPECT_EQ(argv[2], "OMPI_MCA_coll_tuned_allgather_algorithm");
  EXPECT_EQ(argv[4], "OMPI_MCA_coll_tuned_use_dynamic_rules");
#endif
}
