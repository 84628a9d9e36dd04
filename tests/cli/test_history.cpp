// check --history DIR and perfgap history DIR with the real binary over golden trees: a tree
// replayed twice with one setting changed gives exactly that change; the last good run is
// found after a failing one; corrupt and foreign files are named, never fatal; a held lock
// makes the history findings skip and keeps nothing; two runs at once keep two runs; the
// config key; listing and --compare.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "contract.hpp"
#include "files.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;

namespace {

struct HistoryTreeCase {
  perfgap::fixture::TempDir tmp;
  std::string tree, dir;
  explicit HistoryTreeCase(const char* golden) {
    tree = tmp.path() + "/tree";
    dir = tmp.path() + "/history";
    auto spec = perfgap::fixture::unpack_tree(std::string(PERFGAP_SOURCE_DIR) + "/tests/fixtures/golden/" + golden + ".tree", tree);
    EXPECT_TRUE(spec) << spec.error();
  }
  nlohmann::json check(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args{"check", "--root", tree, "--history", dir, "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_binary(PERFGAP_BINARY, args);
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.status << ": " << r.err;
    return nlohmann::json::parse(r.out);
  }
  std::vector<std::string> kept() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().rfind("perfgap-run-", 0) == 0) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

const nlohmann::json& history_finding(const nlohmann::json& report, const std::string& id) {
  for (const auto& f : report["findings"])
    if (f["id"] == id) return f;
  static const nlohmann::json none;
  ADD_FAILURE() << "no " << id;
  return none;
}

double history_metric(const nlohmann::json& f, const std::string& name) { return f["metrics"].value(name, -1.0); }

}  // namespace

TEST(History, ReplayedTwiceWithOneSettingChangedGivesExactlyThatChange) {
  HistoryTreeCase c("healthy-x86");
  auto first = c.check();
  EXPECT_EQ(history_finding(first, "history.changed")["status"], "skip");
  EXPECT_EQ(history_finding(first, "history.since_good")["status"], "skip");
  auto same = c.check();
  EXPECT_EQ(history_finding(same, "history.changed")["status"], "pass") << history_finding(same, "history.changed").dump();
  // One setting moves: automatic NUMA balancing turned on.
  { std::ofstream(c.tree + "/proc/sys/kernel/numa_balancing") << "1\n"; }
  auto moved = c.check();
  const auto& ch = history_finding(moved, "history.changed");
  EXPECT_EQ(ch["status"], "warn") << ch.dump();
  EXPECT_EQ(history_metric(ch, "settings_changed"), 1) << ch.dump();
  std::vector<std::string> sources;
  for (const auto& e : ch["evidence"]) sources.push_back(e["source"]);
  EXPECT_NE(std::find(sources.begin(), sources.end(), "node.settings.numa_balancing"), sources.end()) << ch.dump();
  for (const auto& e : ch["evidence"])
    if (e["source"] == "node.settings.numa_balancing") {
      EXPECT_NE(e["observed"].get<std::string>().find("0 at "), std::string::npos) << e.dump();
    }
  // Only what the setting moved: the balancing finding got worse, nothing else did.
  for (const auto& s : sources) EXPECT_TRUE(s == "node.settings.numa_balancing" || s.rfind("numa.", 0) == 0) << s;
  EXPECT_EQ(c.kept().size(), 3u);
}

TEST(History, CorruptAndForeignFilesAreNamedNeverFatal) {
  HistoryTreeCase c("healthy-x86");
  c.check();
  { std::ofstream(c.dir + "/notes.txt") << "mine\n"; }
  { std::ofstream(c.dir + "/perfgap-run-00000007-broken.json") << "{\"schema\":"; }
  auto r = c.check();
  const auto& ch = history_finding(r, "history.changed");
  EXPECT_EQ(ch["status"], "pass") << ch.dump();  // compared with the one good run
  std::string notused;
  for (const auto& e : ch["evidence"])
    if (e["source"] == "not used") notused += e["observed"].get<std::string>() + "\n";
  EXPECT_NE(notused.find("notes.txt"), std::string::npos) << notused;
  EXPECT_NE(notused.find("perfgap-run-00000007-broken.json: line 1, byte"), std::string::npos) << notused;
  EXPECT_TRUE(fs::exists(c.dir + "/notes.txt"));  // never removed: not ours
  auto listing = run_binary(PERFGAP_BINARY, {"history", c.dir});
  EXPECT_EQ(listing.status, 0) << listing.err;
  EXPECT_NE(listing.out.find("not used: notes.txt"), std::string::npos) << listing.out;
}

TEST(History, AHeldLockSkipsAndKeepsNothing) {
  HistoryTreeCase c("healthy-x86");
  fs::create_directories(c.dir);
  const int held = ::open((c.dir + "/.perfgap-history.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
  auto r = c.check();
  for (const char* id : {"history.changed", "history.since_good"}) {
    const auto& f = history_finding(r, id);
    EXPECT_EQ(f["status"], "skip") << f.dump();
    EXPECT_NE(f["title"].get<std::string>().find("another perfgap run holds its lock"), std::string::npos) << f.dump();
  }
  EXPECT_TRUE(c.kept().empty());
  ::close(held);
}

TEST(History, TwoRunsAtOnceKeepTwoRuns) {
  HistoryTreeCase c("healthy-x86");
  auto a = std::async(std::launch::async, [&] { return c.check(); });
  auto b = std::async(std::launch::async, [&] { return c.check(); });
  a.get();
  b.get();
  auto names = c.kept();
  ASSERT_EQ(names.size(), 2u);
  EXPECT_NE(names[0].substr(0, 20), names[1].substr(0, 20));  // two sequence numbers
  for (const auto& n : names) {
    std::ifstream in(c.dir + "/" + n);
    EXPECT_NO_THROW({
      const auto j = nlohmann::json::parse(in);
      EXPECT_FALSE(j.is_null()) << n;
    }) << n;
  }
}

TEST(History, ConfigKeyListingAndCompare) {
  HistoryTreeCase c("healthy-x86");
  const std::string config = c.tmp.path() + "/config.yaml";
  { std::ofstream(config) << "history: " << c.dir << "\n"; }
  for (int i = 0; i < 2; ++i) {
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", c.tree, "--config", config, "--format", "json"});
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
  }
  EXPECT_EQ(c.kept().size(), 2u);
  auto list = run_binary(PERFGAP_BINARY, {"history", c.dir, "--format", "json"});
  ASSERT_EQ(list.status, 0) << list.err;
  auto j = nlohmann::json::parse(list.out);
  EXPECT_EQ(j["source"]["kind"], "history");
  int runs = 0;
  for (const auto& f : j["findings"]) runs += f["id"] == "history.run" && f["status"] != "skip";
  EXPECT_EQ(runs, 2);
  auto cmp = run_binary(PERFGAP_BINARY, {"history", c.dir, "--compare", "previous", "latest", "--format", "json"});
  ASSERT_TRUE(cmp.status == 0 || cmp.status == 1) << cmp.err;
  EXPECT_EQ(nlohmann::json::parse(cmp.out)["source"]["kind"], "compare");
  auto bad = run_binary(PERFGAP_BINARY, {"history", c.dir, "--compare", "previous", "7"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("run 7 not kept"), std::string::npos) << bad.err;
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"history", c.tmp.path() + "/none"}).status, 2);
}

TEST(History, BadHistoryInputIsOneLineExit2) {
  HistoryTreeCase c("healthy-x86");
  const std::string config = c.tmp.path() + "/bad.yaml";
  { std::ofstream(config) << "history: [a, b]\n"; }
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", c.tree, "--config", config});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bad.yaml:1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("history must be a directory path"), std::string::npos) << r.err;
  EXPECT_TRUE(perfgap::fixture::one_line(r.err)) << r.err;
  EXPECT_FALSE(fs::exists(c.dir));  // nothing written
  auto compare_one = run_binary(PERFGAP_BINARY, {"history", c.tmp.path(), "--compare", "latest"});
  EXPECT_EQ(compare_one.status, 2) << compare_one.err;
}

// Issue 42: the listing shows the runs in time order whatever their status (it put the failing
// run first); --compare previous latest never counts check --history's own findings (a
// history.changed that went pass -> warn was a regression, exit 1); the fixes name the real
// directory, not "DIR". One directory shared by two nodes: the second run is the H100 node's.
TEST(History, ListingInTimeOrderOwnFindingsNeverRegressAndFixesNameTheDirectory) {
  HistoryTreeCase c("healthy-x86");
  const std::string h100 = c.tmp.path() + "/h100";
  auto spec = perfgap::fixture::unpack_tree(std::string(PERFGAP_SOURCE_DIR) + "/tests/fixtures/golden/h100-c1-remote-numa.tree", h100);
  ASSERT_TRUE(spec) << spec.error();
  c.check();                                                                  // 1: gpu001, warn
  auto failing = run_binary(PERFGAP_BINARY, {"check", "--root", h100, "--history", c.dir, "--format", "json"});
  ASSERT_EQ(failing.status, 1) << failing.err;                                // 2: gpu017, fail
  c.check();                                                                  // 3: gpu001
  c.check();                                                                  // 4: nothing moved
  { std::ofstream(c.tree + "/proc/sys/kernel/osrelease") << "6.8.0-99-generic\n"; }
  auto last = c.check();                                                      // 5: the kernel moved, nothing else
  const auto runs = c.kept();
  ASSERT_EQ(runs.size(), 5u);

  const auto& changed = history_finding(last, "history.changed");
  EXPECT_EQ(changed["status"], "warn") << changed.dump();
  const std::string fix = changed["fix"];
  EXPECT_NE(fix.find("`perfgap history " + c.dir + " --compare " + runs[3] + " latest`"), std::string::npos) << fix;
  EXPECT_EQ(fix.find(" DIR "), std::string::npos) << fix;

  for (const char* format : {"text", "html"}) {
    auto listing = run_binary(PERFGAP_BINARY, {"history", c.dir, "--format", format});
    ASSERT_EQ(listing.status, 0) << listing.err;
    // Past the HTML page's "Needs action" list (problems first by design), the runs as kept.
    std::size_t at = std::string(format) == "html" ? listing.out.find("<section class=\"layer\"") : 0;
    ASSERT_NE(at, std::string::npos) << listing.out;
    for (const auto& r : runs) {
      const auto here = listing.out.find(r, at);
      EXPECT_NE(here, std::string::npos) << format << ": " << r << " not after the run before it:\n" << listing.out;
      if (here != std::string::npos) at = here + r.size();
    }
  }

  auto cmp = run_binary(PERFGAP_BINARY, {"history", c.dir, "--compare", "previous", "latest", "--format", "json"});
  EXPECT_EQ(cmp.status, 0) << cmp.err << cmp.out;
  auto j = nlohmann::json::parse(cmp.out);
  for (const auto& f : j["findings"]) {
    EXPECT_NE(f["status"], "fail") << f.dump();
    EXPECT_EQ(f.value("subject", "").find("history."), std::string::npos) << f.dump();
  }
}
