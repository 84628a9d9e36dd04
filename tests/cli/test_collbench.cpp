// perfgap-collbench run for real: each collective under `mpirun -np 2` with the data check
// (every #wrong 0, busbw = algbw x nccl-tests' factor, sizes rounded as nccl-tests rounds them),
// its output read back by `perfgap analyze nccl-tests`; a singleton run; -c 0; bad flags; the
// NCCL backend asked for on a node without GPUs; the Open MPI tunables a sweep varies reaching
// the ranks; and, where tools/slurm-test-cluster.sh started a cluster, `srun --mpi=pmix`.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run.hpp"
#include "tree.hpp"

using perfgap::fixture::find_on_path;
using perfgap::fixture::line_count;
using perfgap::fixture::run_binary;
using perfgap::fixture::RunResult;
using perfgap::fixture::TempDir;

#ifndef PERFGAP_COLLBENCH

TEST(Collbench, NotBuilt) { GTEST_SKIP() << "perfgap-collbench not built (neither MPI nor the CUDA/NCCL headers were found)"; }

#else

namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

// Open MPI refuses root without these; CI containers run as root.
const Env kMpiEnv = {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}};

RunResult mpirun(int ranks, const std::vector<std::string>& args, const std::vector<std::string>& mpirun_args = {}) {
  std::vector<std::string> a = {"-np", std::to_string(ranks), "--oversubscribe"};
  a.insert(a.end(), mpirun_args.begin(), mpirun_args.end());
  a.push_back(PERFGAP_COLLBENCH);
  a.insert(a.end(), args.begin(), args.end());
  return run_binary(find_on_path("mpirun"), a, kMpiEnv);
}

struct Row {
  std::uint64_t size = 0, count = 0;
  std::string redop;
  double time[2] = {0, 0}, algbw[2] = {0, 0}, busbw[2] = {0, 0};
  std::string wrong[2];
};

// The table as a reader of nccl-tests output sees it, read independently of perfgap's parser.
std::vector<Row> rows_of(const std::string& out) {
  std::vector<Row> rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream cells(line);
    Row r;
    std::string type, root;
    cells >> r.size >> r.count >> type >> r.redop >> root;
    for (int v = 0; v < 2; ++v) cells >> r.time[v] >> r.algbw[v] >> r.busbw[v] >> r.wrong[v];
    EXPECT_FALSE(cells.fail()) << "unreadable row: " << line;
    EXPECT_EQ(type, "float");
    EXPECT_EQ(root, "-1");
    rows.push_back(r);
  }
  return rows;
}

double bus_factor(const std::string& collective, int ranks) {
  double n = ranks;
  return collective == "all_reduce" ? 2 * (n - 1) / n : (n - 1) / n;
}

// nccl-tests' rounding: whole floats, and whole floats per rank where the buffer is split.
std::uint64_t row_size(const std::string& collective, std::uint64_t requested, int ranks) {
  std::uint64_t count = requested / 4;
  if (collective != "all_reduce") count = count / ranks * ranks;
  return count * 4;
}

std::uint64_t row_count(const std::string& collective, std::uint64_t requested, int ranks) {
  return collective == "all_reduce" ? requested / 4 : requested / 4 / ranks;
}

// want_status -1: 0 or 1 (a warning allowed).
nlohmann::json analyze(const TempDir& dir, const std::string& name, const std::string& output, int want_status = 0) {
  std::string path = dir.path() + "/" + name;
  std::ofstream(path) << output;
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", path, "--format", "json"});
  if (want_status >= 0) EXPECT_EQ(r.status, want_status) << r.err;
  else EXPECT_LE(r.status, 1) << r.err;
  return nlohmann::json::parse(r.out);
}

// Requested sizes 13, 104, 832, 6656, 53248: the first is not a whole number of floats.
const std::vector<std::string> kSmallRun = {"-b", "13", "-e", "64K", "-f", "8", "-n", "3", "-w", "1"};
const std::vector<std::uint64_t> kRequested = {13, 104, 832, 6656, 53248};

void expect_checked_run(const std::string& collective, const RunResult& r, int ranks) {
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  auto rows = rows_of(r.out);
  ASSERT_EQ(rows.size(), kRequested.size()) << r.out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    EXPECT_EQ(row.size, row_size(collective, kRequested[i], ranks)) << collective;
    EXPECT_EQ(row.count, row_count(collective, kRequested[i], ranks)) << collective;
    EXPECT_EQ(row.redop, collective == "all_reduce" || collective == "reduce_scatter" ? "sum" : "none");
    for (int v = 0; v < 2; ++v) {
      EXPECT_EQ(row.wrong[v], "0") << collective << " size " << row.size << (v ? " in-place" : " out-of-place");
      EXPECT_GT(row.time[v], 0);
      // Both printed with 2 decimals: allow their rounding.
      EXPECT_NEAR(row.busbw[v], row.algbw[v] * bus_factor(collective, ranks), 0.011 + 0.001 * row.busbw[v])
          << collective << " size " << row.size;
      if (row.size > 0 && row.time[v] >= 1) {  // algbw = bytes / time, in GB/s
        EXPECT_NEAR(row.algbw[v], row.size / (row.time[v] * 1e3), 0.011 + 0.02 * row.algbw[v]) << collective << " size " << row.size;
      }
    }
  }
  EXPECT_NE(r.out.find("# Out of bounds values : 0 OK\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Avg bus bandwidth    : "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Collective test starting: " + collective + "_perf\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("validation: 1"), std::string::npos);
  for (int rank = 0; rank < ranks; ++rank) {
    char rank_line[48];
    std::snprintf(rank_line, sizeof rank_line, "#  Rank %2d Group  0 Pid ", rank);
    EXPECT_NE(r.out.find(rank_line), std::string::npos) << r.out;
  }
}

bool have_mpirun() { return !find_on_path("mpirun").empty(); }

}  // namespace

TEST(CollbenchMpi, EachCollectiveUnderMpirunIsCorrectAndParsesBack) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not installed";
  TempDir dir;
  for (std::string collective : {"all_reduce", "all_gather", "reduce_scatter", "alltoall"}) {
    std::vector<std::string> args = {collective};
    args.insert(args.end(), kSmallRun.begin(), kSmallRun.end());
    auto r = mpirun(2, args);
    expect_checked_run(collective, r, 2);
    if (r.status != 0) continue;
    // perfgap's own parser reads it as nccl-tests output: same sizes, no wrong results.
    auto j = analyze(dir, collective + ".txt", r.out, -1);
    // nccl_tests.busbw, and where a larger size measured slower than a smaller one (the timing
    // of two ranks on a loaded machine can), nccl_tests.busbw_collapse beside it: no other.
    const nlohmann::json* busbw = nullptr;
    for (const auto& x : j["findings"]) {
      if (x["id"] == "nccl_tests.busbw") busbw = &x;
      else EXPECT_EQ(x["id"], "nccl_tests.busbw_collapse") << j.dump(2);
    }
    ASSERT_NE(busbw, nullptr) << j.dump(2);
    const auto& f = *busbw;
    EXPECT_EQ(f["status"], "skip") << "no wrong results, and one node has no basis to judge busbw: " << f.dump(2);
    EXPECT_EQ(f["metrics"]["wrong"].get<double>(), 0);
    EXPECT_EQ(f["metrics"]["sizes"].get<double>(), static_cast<double>(kRequested.size()));
    for (auto requested : kRequested)
      EXPECT_TRUE(f["metrics"].contains("busbw_gbps." + std::to_string(row_size(collective, requested, 2))))
          << collective << " " << requested << ": " << f["metrics"].dump();
    EXPECT_NE(f["title"].get<std::string>().find(collective + "_perf"), std::string::npos) << f["title"];
  }
}

TEST(CollbenchMpi, ThreeRanksRoundSizesToTheRankCount) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not installed";
  for (std::string collective : {"all_gather", "reduce_scatter"}) {
    std::vector<std::string> args = {collective};
    args.insert(args.end(), kSmallRun.begin(), kSmallRun.end());
    expect_checked_run(collective, mpirun(3, args), 3);
  }
}

TEST(CollbenchMpi, SingletonRunsWithoutMpirun) {
  auto r = run_binary(PERFGAP_COLLBENCH, {"alltoall", "-b", "8", "-e", "1K", "-f", "4", "-n", "2", "-w", "0"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  auto rows = rows_of(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;  // 8, 32, 128, 512
  for (const auto& row : rows) {
    EXPECT_EQ(row.wrong[0], "0");
    EXPECT_EQ(row.wrong[1], "0");
    EXPECT_EQ(row.busbw[0], 0);  // one rank moves nothing over a link: (n-1)/n = 0
  }
  EXPECT_NE(r.out.find("ranks: 1\n"), std::string::npos) << r.out;
}

TEST(CollbenchMpi, NoCheckPrintsNotApplicable) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not installed";
  auto r = mpirun(2, {"reduce_scatter", "-b", "1K", "-e", "4K", "-f", "2", "-n", "2", "-w", "0", "-c", "0"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  auto rows = rows_of(r.out);
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.wrong[0], "N/A");
    EXPECT_EQ(row.wrong[1], "N/A");
  }
  EXPECT_NE(r.out.find("validation: 0"), std::string::npos);
  TempDir dir;
  auto j = analyze(dir, "nocheck.txt", r.out, -1);  // a busbw_collapse of timing noise may warn beside it
  EXPECT_NE(j["findings"][0]["title"].get<std::string>().find("not checked"), std::string::npos) << j["findings"][0]["title"];
}

// What `perfgap sweep -- mpirun -np 2 -x ... perfgap-collbench all_gather` relies on: the
// Open MPI tunable reaches every rank, the run stays correct under each algorithm.
TEST(CollbenchMpi, OpenMpiTunablesReachEveryRank) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not installed";
  for (std::string algorithm : {"1", "2", "3"}) {
    auto r = mpirun(2, {"all_gather", "-b", "4K", "-e", "64K", "-f", "4", "-n", "3", "-w", "1"},
                    {"-x", "OMPI_MCA_coll_tuned_use_dynamic_rules=1", "-x", "OMPI_MCA_coll_tuned_allgather_algorithm=" + algorithm});
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    // Other tunables of the CI environment may be listed too: look for these two words.
    auto at = r.out.find("# Settings: ");
    ASSERT_NE(at, std::string::npos) << r.out;
    std::string settings = " " + r.out.substr(at + 12, r.out.find('\n', at) - at - 12) + " ";
    EXPECT_NE(settings.find(" OMPI_MCA_coll_tuned_allgather_algorithm=" + algorithm + " "), std::string::npos) << settings;
    EXPECT_NE(settings.find(" OMPI_MCA_coll_tuned_use_dynamic_rules=1 "), std::string::npos) << settings;
    EXPECT_EQ(r.out.find("Settings differ"), std::string::npos) << r.out;
    for (const auto& row : rows_of(r.out)) EXPECT_EQ(row.wrong[0], "0") << "algorithm " << algorithm;
  }
}

TEST(Collbench, BadArgumentsExitTwoWithOneLine) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"broadcast"},
      {"all_reduce", "-b"},
      {"all_reduce", "-b", "1X"},
      {"all_reduce", "-b", "1M", "-e", "1K"},
      {"all_reduce", "-n", "0"},
      {"all_reduce", "-c", "2"},
      {"all_reduce", "-f", "-2"},
      {"all_reduce", "-d", "half"},
      {"all_reduce", "--frobnicate"},
      {"all_reduce", "--backend", "gloo"},
      {"all_reduce", "--backend", "mpi", "-g", "1"},
      {"all_reduce", "all_gather"},
      {"all_reduce", "-b", "0", "-f", "2"},
      {"all_reduce", "-b", "1", "-e", "1G", "-i", "1"},
  };
  for (const auto& args : cases) {
    auto r = run_binary(PERFGAP_COLLBENCH, args);
    std::string shown = ::testing::PrintToString(args);
    EXPECT_EQ(r.status, 2) << shown << r.out << r.err;
    EXPECT_EQ(line_count(r.err), 1) << shown << r.err;
    EXPECT_EQ(r.err.rfind("perfgap-collbench: ", 0), 0u) << shown << r.err;
    EXPECT_TRUE(r.out.empty()) << shown << r.out;
  }
  auto help = run_binary(PERFGAP_COLLBENCH, {"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("usage: perfgap-collbench COLLECTIVE"), std::string::npos);
}

// Without a GPU (or without CUDA/NCCL at all) asking for the NCCL backend is a clear one-line
// error, exit 2: never a crash, never a silent CPU run.
TEST(CollbenchNccl, UnavailableBackendIsAOneLineError) {
  auto version = run_binary(PERFGAP_COLLBENCH, {"--version"});
  ASSERT_EQ(version.status, 0);
  bool built = version.out.find("nccl") != std::string::npos;
  // A library that is not there: exit 2 whatever the node has.
  auto missing = run_binary(PERFGAP_COLLBENCH, {"all_reduce", "-g", "1", "-b", "8", "-e", "8"},
                            {{"PERFGAP_NCCL_LIBRARY", "/nonexistent/libnccl.so.2"}});
  EXPECT_EQ(missing.status, 2) << missing.out << missing.err;
  EXPECT_EQ(line_count(missing.err), 1) << missing.err;
  EXPECT_NE(missing.err.find(built ? "NCCL backend: cannot load" : "NCCL backend not built"), std::string::npos) << missing.err;
  // As found on this node: a GPU node runs it; any other says why in one line.
  for (std::vector<std::string> args : {std::vector<std::string>{"all_reduce", "-g", "1", "-b", "8", "-e", "1K", "-f", "4", "-n", "2"},
                                        std::vector<std::string>{"all_gather", "--backend", "nccl", "-b", "8", "-e", "8"}}) {
    auto r = run_binary(PERFGAP_COLLBENCH, args);
    if (r.status == 0) {
      EXPECT_FALSE(rows_of(r.out).empty()) << r.out;
      continue;
    }
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("NCCL backend"), std::string::npos) << r.err;
  }
  // Launched as several ranks, the single-process NCCL backend refuses instead of running N copies.
  auto ranks = run_binary(PERFGAP_COLLBENCH, {"all_reduce", "-g", "1"}, {{"OMPI_COMM_WORLD_SIZE", "2"}});
  EXPECT_EQ(ranks.status, 2);
  EXPECT_EQ(line_count(ranks.err), 1) << ranks.err;
}

// The executable needs no libmpi: without its MPI plugin (a GPU node without Open MPI) it
// still starts, and the MPI backend is a one-line error.
TEST(Collbench, RunsWithoutItsMpiPlugin) {
  TempDir dir;
  std::string alone = dir.path() + "/perfgap-collbench";
  std::filesystem::copy_file(PERFGAP_COLLBENCH, alone);
  auto version = run_binary(alone, {"--version"});
  EXPECT_EQ(version.status, 0) << version.err;
  auto r = run_binary(alone, {"all_reduce", "-b", "8", "-e", "8"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("MPI backend unavailable"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// srun --mpi=pmix on the throw-away cluster of tools/slurm-test-cluster.sh; the test env file
// (PERFGAP_TEST_SLURM_ENV) gives SLURM_CONF. Its nodes have one CPU each: --overcommit.
TEST(CollbenchSlurm, RunsUnderSrunPmix) {
  const char* env_file = std::getenv("PERFGAP_TEST_SLURM_ENV");
  if (!env_file || !*env_file) GTEST_SKIP() << "PERFGAP_TEST_SLURM_ENV not set (no test Slurm cluster)";
  std::ifstream in(env_file);
  ASSERT_TRUE(in) << "cannot read " << env_file;
  Env env = kMpiEnv;
  for (std::string line; std::getline(in, line);)
    if (auto eq = line.find('='); eq != std::string::npos && line[0] != '#') env.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  std::string srun = find_on_path("srun");
  if (srun.empty()) GTEST_SKIP() << "srun not installed";
  auto list = run_binary(srun, {"--mpi=list"}, env);
  if ((list.out + list.err).find("pmix") == std::string::npos) GTEST_SKIP() << "srun --mpi=list has no pmix: " << list.out << list.err;
  std::vector<std::string> args = {"--mpi=pmix", "-N1", "-n2", "--overcommit", PERFGAP_COLLBENCH, "all_reduce"};
  args.insert(args.end(), kSmallRun.begin(), kSmallRun.end());
  auto r = run_binary(srun, args, env);
  expect_checked_run("all_reduce", r, 2);
  EXPECT_NE(r.out.find("ranks: 2\n"), std::string::npos) << r.out;
}

#endif  // PERFGAP_COLLBENCH
