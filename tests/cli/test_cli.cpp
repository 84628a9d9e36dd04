// The binary as scripts see it: exit statuses, one-line errors, atomic output, selection.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::fixture_path;
using perfgap::fixture::line_count;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

namespace {

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    auto h = perfgap::fixture::unpack_tree(fixture_path("golden/healthy-x86.tree"), healthy.path());
    ASSERT_TRUE(h) << h.error();
    auto b = perfgap::fixture::unpack_tree(fixture_path("golden/h100-c1-remote-numa.tree"), bad.path());
    ASSERT_TRUE(b) << b.error();
  }
  TempDir healthy, bad;
};

TEST_F(Cli, MissingRootIsExit2WithOneLineNamingIt) {
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", "/nonexistent/tree"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/tree"), std::string::npos) << r.err;
}

TEST_F(Cli, RootThatIsAFileIsExit2) {
  TempDir d;
  std::ofstream(d.path() + "/file") << "x";
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", d.path() + "/file"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not a directory"), std::string::npos) << r.err;
}

TEST_F(Cli, RootWithoutProcOrSysIsExit2) {
  // An empty directory, and the directory above a tree: no input, not "OK, 5 pass".
  TempDir empty;
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", empty.path()});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no proc/ or sys/"), std::string::npos) << r.err;
  TempDir above;
  fs::create_directories(above.path() + "/node17");
  auto h = perfgap::fixture::unpack_tree(fixture_path("golden/healthy-x86.tree"), above.path() + "/node17");
  ASSERT_TRUE(h) << h.error();
  auto up = run_binary(PERFGAP_BINARY, {"check", "--root", above.path()});
  EXPECT_EQ(up.status, 2) << up.out;
  EXPECT_NE(up.err.find("inside, at node17/"), std::string::npos) << up.err;
  // A .tar.gz whose tree is one directory down (tar czf x.tar.gz node17): exit 2 saying where.
  const std::string archive = above.path() + "/nested.tar.gz";
  auto tar = run_binary("/bin/tar", {"czf", archive, "-C", above.path(), "node17"});
  ASSERT_EQ(tar.status, 0) << tar.err;
  auto nested = run_binary(PERFGAP_BINARY, {"check", "--root", archive});
  EXPECT_EQ(nested.status, 2) << nested.out;
  EXPECT_EQ(line_count(nested.err), 1) << nested.err;
  EXPECT_NE(nested.err.find(archive + ": not a node tree"), std::string::npos) << nested.err;
  EXPECT_NE(nested.err.find("inside, at node17/: give " + archive + "/node17"), std::string::npos) << nested.err;
  // ... and the path it suggests works: the tree below the archive's top, as unpacked.
  auto inside = run_binary(PERFGAP_BINARY, {"check", "--root", archive + "/node17", "--format", "json"});
  EXPECT_TRUE(inside.status == 0 || inside.status == 1) << inside.err;
  auto plain = run_binary(PERFGAP_BINARY, {"check", "--root", above.path() + "/node17", "--format", "json"});
  EXPECT_EQ(inside.status, plain.status) << inside.err;
  EXPECT_NE(inside.out.find("\"kind\": \"root\""), std::string::npos) << inside.out.substr(0, 400);
  // Nothing there, or a path that climbs out of the archive: exit 2, one line.
  for (const std::string& bad : {archive + "/node18", archive + "/../node17"}) {
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", bad});
    EXPECT_EQ(r.status, 2) << bad << ": " << r.out;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
  }
  // An empty proc/ is no content either.
  fs::create_directories(empty.path() + "/proc");
  auto bare = run_binary(PERFGAP_BINARY, {"check", "--root", empty.path()});
  EXPECT_EQ(bare.status, 2) << bare.out;
}

TEST_F(Cli, BadArgumentsAreExit2) {
  for (std::vector<std::string> args : {std::vector<std::string>{"check", "--format", "xml"},
                                        {"check", "--no-such-flag"},
                                        {"check", "--pid", "abc"},
                                        {"frobnicate"},
                                        {}}) {
    auto r = run_binary(PERFGAP_BINARY, args);
    EXPECT_EQ(r.status, 2) << ::testing::PrintToString(args) << r.err;
    EXPECT_EQ(line_count(r.err), 1) << ::testing::PrintToString(args) << r.err;
  }
}

TEST_F(Cli, UsageErrorsSayWhatIsWrong) {
  // CLI11's own words named its internals: "A subcommand is required", "The following
  // arguments were not expected: json --formt", "files is required".
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"chek"}, "unknown command 'chek' (did you mean check?)"},
      {{"frobnicate"}, "unknown command 'frobnicate'; commands: check, analyze"},
      {{"check", "--formt", "json"}, "unknown option --formt for 'check' (did you mean --format?)"},
      {{"check", "--formt=json"}, "unknown option --formt for 'check' (did you mean --format?)"},
      {{"fleet", "--no-such-flag", "x.json"}, "unknown option --no-such-flag for 'fleet'"},
      {{"analyze", "check"}, "unknown analyze KIND 'check'"},
      {{"analyze", "nccl-test", "x.txt"}, "unknown analyze KIND 'nccl-test'"},
      {{"analyze", "perf"}, "analyze perf needs at least one input file"},
      {{"analyze"}, "analyze needs a KIND and input files"},
      {{}, "a command is required: check, analyze"},
  };
  for (const auto& [args, want] : cases) {
    auto r = run_binary(PERFGAP_BINARY, args);
    EXPECT_EQ(r.status, 2) << ::testing::PrintToString(args) << r.err;
    EXPECT_EQ(line_count(r.err), 1) << ::testing::PrintToString(args) << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << ::testing::PrintToString(args) << ": " << r.err;
  }
}

TEST_F(Cli, ExitStatusFollowsFailures) {
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"check", "--root", healthy.path()}).status, 0);
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"check", "--root", bad.path()}).status, 1);
  // Skipping the failing checks leaves warnings only.
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", bad.path(), "--skip", "cpu.cstate.*,numa.remote_memory,placement.gpu_affinity"});
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST_F(Cli, OnlyAndSkipTakeIdsAndGlobs) {
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", healthy.path(), "--format", "json", "--only", "cpu.*", "--skip", "cpu.steal"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::set<std::string> ids;
  for (const auto& f : j["findings"]) ids.insert(f["id"].get<std::string>());
  EXPECT_EQ(ids, (std::set<std::string>{"cpu.cstate.deep_idle", "cpu.turbo", "cpu.governor", "cpu.thermal_throttle"}));
  auto none = run_binary(PERFGAP_BINARY, {"check", "--root", healthy.path(), "--only", "gpu.nothing*"});
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("gpu.nothing*"), std::string::npos);
}

TEST_F(Cli, ListShowsEveryCheckWithLayer) {
  auto r = run_binary(PERFGAP_BINARY, {"check", "--list"});
  ASSERT_EQ(r.status, 0);
  for (auto id : {"virt.hypervisor", "cpu.cstate.deep_idle", "cpu.turbo", "cpu.governor", "cpu.steal", "numa.balancing",
                  "numa.remote_memory", "placement.gpu_affinity", "placement.shared_cores"})
    EXPECT_NE(r.out.find(id), std::string::npos) << id;
  auto j = run_binary(PERFGAP_BINARY, {"check", "--list", "--format", "json"});
  auto arr = nlohmann::json::parse(j.out);
  ASSERT_TRUE(arr.is_array());
  EXPECT_EQ(arr.size(), static_cast<std::size_t>(line_count(r.out)));
  for (const auto& c : arr) EXPECT_FALSE(c["reads"].empty()) << c["id"];
}

TEST_F(Cli, OutputIsWrittenAtomically) {
  TempDir out;
  std::string file = out.path() + "/report.json";
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", bad.path(), "--format", "json", "--output", file});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(r.out.empty());
  std::ifstream in(file);
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["schema"], "perfgap.report/1");
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(out.path())) ++entries;
  EXPECT_EQ(entries, 1) << "a temporary file was left behind";
  // A directory that does not exist: exit 2, nothing written anywhere.
  auto r2 = run_binary(PERFGAP_BINARY, {"check", "--root", healthy.path(), "--output", out.path() + "/missing/r.json"});
  EXPECT_EQ(r2.status, 2);
  EXPECT_EQ(line_count(r2.err), 1);
  EXPECT_FALSE(fs::exists(out.path() + "/missing"));
}

TEST_F(Cli, ConfigOverridesThresholdsAndRejectsTypos) {
  TempDir d;
  std::string cfg = d.path() + "/config.yaml";
  // With fail_pct 20 the 18% remote rank only warns; rank 0 still fails gpu_affinity.
  std::ofstream(cfg) << "numa.remote_memory: {warn_pct: 5, fail_pct: 20}\nonly: [numa.remote_memory]\n";
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", bad.path(), "--format", "json", "--config", cfg});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out);
  bool saw_warn = false;
  for (const auto& f : j["findings"]) {
    EXPECT_EQ(f["id"], "numa.remote_memory");
    saw_warn = saw_warn || f["status"] == "warn";
  }
  EXPECT_TRUE(saw_warn);
  // Command-line selection wins over the file's.
  auto r2 = run_binary(PERFGAP_BINARY, {"check", "--root", bad.path(), "--format", "json", "--config", cfg, "--only", "numa.balancing"});
  auto j2 = nlohmann::json::parse(r2.out);
  ASSERT_EQ(j2["findings"].size(), 1u);
  EXPECT_EQ(j2["findings"][0]["id"], "numa.balancing");

  std::ofstream(cfg) << "# thresholds\ncpu.steal:\n  fail_pc: 3\n";
  auto typo = run_binary(PERFGAP_BINARY, {"check", "--root", healthy.path(), "--config", cfg});
  EXPECT_EQ(typo.status, 2);
  EXPECT_NE(typo.err.find("config.yaml:3"), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("fail_pc"), std::string::npos) << typo.err;
  std::ofstream(cfg) << "cpu.stael: {fail_pct: 3}\n";
  auto unknown = run_binary(PERFGAP_BINARY, {"check", "--root", healthy.path(), "--config", cfg});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("config.yaml:1: unknown check 'cpu.stael'"), std::string::npos) << unknown.err;
  std::ofstream(cfg) << "cpu.steal: [1, 2\n";
  auto broken = run_binary(PERFGAP_BINARY, {"check", "--root", healthy.path(), "--config", cfg});
  EXPECT_EQ(broken.status, 2);
  EXPECT_EQ(line_count(broken.err), 1) << broken.err;
  auto missing = run_binary(PERFGAP_BINARY, {"check", "--root", healthy.path(), "--config", d.path() + "/nope.yaml"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("nope.yaml"), std::string::npos);
}

TEST_F(Cli, TextReportLeadsWithSummaryAndFailsFirst) {
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", bad.path()}, {{"NO_COLOR", "1"}});
  ASSERT_EQ(r.status, 1);
  EXPECT_EQ(r.out.find("perfgap check on gpu017"), 0u) << r.out;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "colour when piped";
  auto first_line_end = r.out.find('\n');
  EXPECT_NE(r.out.substr(0, first_line_end).find("fail"), std::string::npos);
  // Inside the placement layer the FAIL lines come before PASS lines.
  auto layer = r.out.find("\nplacement\n");
  ASSERT_NE(layer, std::string::npos);
  auto fail = r.out.find("FAIL", layer), pass = r.out.find("PASS", layer);
  EXPECT_LT(fail, pass);
  EXPECT_NE(r.out.find("fix: "), std::string::npos);
  // Non-verbose hides passing evidence; -v shows it.
  auto v = run_binary(PERFGAP_BINARY, {"check", "--root", bad.path(), "-v"});
  EXPECT_GT(line_count(v.out), line_count(r.out));
  EXPECT_NE(v.out.find("metrics:"), std::string::npos);
}

TEST_F(Cli, MachineFormatsForCiAndNodeExporter) {
  auto j = run_binary(PERFGAP_BINARY, {"check", "--root", bad.path(), "--format", "junit"});
  EXPECT_EQ(j.status, 1);
  EXPECT_EQ(j.out.rfind("<?xml", 0), 0u);
  EXPECT_NE(j.out.find("<failure"), std::string::npos);
  auto p = run_binary(PERFGAP_BINARY, {"check", "--root", bad.path(), "--format", "prometheus"});
  EXPECT_EQ(p.status, 1);
  EXPECT_NE(p.out.find("perfgap_findings{node=\"gpu017\",status=\"fail\"} 3"), std::string::npos) << p.out;
  auto l = run_binary(PERFGAP_BINARY, {"check", "--list", "--format", "junit"});
  EXPECT_EQ(l.status, 2);
}

TEST_F(Cli, UnusableBaselineOrDmesgIsExit2) {
  TempDir d;
  std::ofstream(d.path() + "/notjson.json") << "{oops";
  std::ofstream(d.path() + "/other.json") << "{\"schema\": \"other/1\"}";
  for (auto args : {std::vector<std::string>{"check", "--root", healthy.path(), "--baseline", d.path() + "/missing.json"},
                    {"check", "--root", healthy.path(), "--baseline", d.path() + "/notjson.json"},
                    {"check", "--root", healthy.path(), "--baseline", d.path() + "/other.json"},
                    {"check", "--root", healthy.path(), "--dmesg", d.path() + "/missing.txt"}}) {
    auto r = run_binary(PERFGAP_BINARY, args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(d.path()), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST_F(Cli, SecretsAreRedactedAndOnlyAuditedPrefixesReported) {
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", healthy.path(), "--format", "json"});
  auto env = nlohmann::json::parse(r.out)["node"]["environment"];
  EXPECT_EQ(env["NVIDIA_API_KEY"], "<redacted>");
  EXPECT_EQ(env["NCCL_IB_PKEY"], "0x8001");
  EXPECT_EQ(env["NCCL_IB_QPS_PER_CONNECTION"], "4");
  EXPECT_FALSE(env.contains("WANDB_API_KEY"));
  EXPECT_FALSE(env.contains("PATH"));
  EXPECT_EQ(r.out.find("abc123"), std::string::npos);
  EXPECT_EQ(r.out.find("nvapi-secret"), std::string::npos);
  EXPECT_EQ(r.out.find("hf_secret"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(r.out)["node"]["name"], "gpu001");
}

TEST_F(Cli, PidSelectsTheProcessAndUnreadablePidsAreRefused) {
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", bad.path(), "--format", "json", "--pid", "4243", "--only", "placement.gpu_affinity,numa.remote_memory"});
  auto j = nlohmann::json::parse(r.out);
  for (const auto& f : j["findings"]) EXPECT_EQ(f["subject"], "pid:4243");
  // Only processes that cannot be read: exit 2 on one line naming them (it was exit 0 with
  // every per-process check skipped: a node check of nothing).
  auto none = run_binary(PERFGAP_BINARY, {"check", "--root", bad.path(), "--format", "json", "--pid", "999999", "--only", "numa.remote_memory"});
  EXPECT_EQ(none.status, 2) << none.out;
  EXPECT_TRUE(none.out.empty()) << none.out;
  EXPECT_NE(none.err.find("--pid"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("999999"), std::string::npos) << none.err;
  EXPECT_EQ(none.err.find('\n'), none.err.size() - 1) << none.err;
  // One readable among unreadable ones: the run goes on, the unreadable one said.
  auto some = run_binary(PERFGAP_BINARY, {"check", "--root", bad.path(), "--format", "json", "--pid", "4243", "--pid", "999999", "--only", "numa.remote_memory"});
  EXPECT_LE(some.status, 1) << some.err;
  EXPECT_NE(some.out.find("pid:4243"), std::string::npos) << some.out;
}

}  // namespace
