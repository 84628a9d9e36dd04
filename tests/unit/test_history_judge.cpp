// history::judge on report views (pure): what moved since the previous run and since the last
// run without a fail; history::keep's rotation on a temporary directory.
#include <gtest/gtest.h>

#include <filesystem>

#include "history/history.hpp"
#include "tree.hpp"

using perfgap::compare::ReportFinding;
using perfgap::compare::ReportView;
using perfgap::report::Status;
namespace history = perfgap::history;

namespace {

ReportView history_view(const std::string& at, std::vector<std::pair<std::string, std::string>> facts, std::vector<ReportFinding> findings) {
  ReportView v;
  v.kind = "root";
  v.node = "gpu001";
  v.generated_at = at;
  v.node_facts = std::move(facts);
  v.findings = std::move(findings);
  return v;
}

ReportFinding history_rf(const std::string& id, Status s) {
  ReportFinding f;
  f.id = id;
  f.status = s;
  f.title = id + " title";
  return f;
}

const perfgap::report::Finding& history_of(const std::vector<perfgap::report::Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return f;
  static perfgap::report::Finding none;
  ADD_FAILURE() << "no " << id;
  return none;
}

}  // namespace

TEST(HistoryJudge, SinceGoodListsWhatMovedSinceTheNewestRunWithoutFail) {
  history::Past past;
  past.runs.push_back({"r1", history_view("t1", {{"settings.turbo", "on"}}, {history_rf("cpu.turbo", Status::pass)})});
  past.runs.push_back({"r2", history_view("t2", {{"settings.turbo", "off"}}, {history_rf("cpu.turbo", Status::fail)})});
  auto now = history_view("t3", {{"settings.turbo", "off"}}, {history_rf("cpu.turbo", Status::fail)});
  auto out = history::judge(now, past);
  const auto& changed = history_of(out, "history.changed");
  EXPECT_EQ(changed.status, Status::pass) << changed.title;  // nothing moved since r2
  const auto& since = history_of(out, "history.since_good");
  EXPECT_EQ(since.status, Status::warn);
  EXPECT_NE(since.title.find("(t1, r1)"), std::string::npos) << since.title;
  ASSERT_GE(since.evidence.size(), 2u);
  EXPECT_EQ(since.evidence[0].source, "node.settings.turbo");
  EXPECT_EQ(since.evidence[0].observed, "on at t1 -> off now");
  EXPECT_EQ(since.evidence[1].source, "cpu.turbo");
  EXPECT_NE(since.evidence[1].observed.find("pass at t1 -> fail now"), std::string::npos);
}

TEST(HistoryJudge, NoGoodRunKeptSkipsAndAGoodRunPasses) {
  history::Past past;
  past.runs.push_back({"r1", history_view("t1", {}, {history_rf("cpu.turbo", Status::fail)})});
  auto bad = history::judge(history_view("t2", {}, {history_rf("cpu.turbo", Status::fail)}), past);
  EXPECT_EQ(history_of(bad, "history.since_good").status, Status::skip);
  auto fixed = history::judge(history_view("t2", {}, {history_rf("cpu.turbo", Status::pass)}), past);
  EXPECT_EQ(history_of(fixed, "history.since_good").status, Status::pass);
  const auto& changed = history_of(fixed, "history.changed");
  EXPECT_EQ(changed.status, Status::pass);  // only cleared: nothing to look at
  EXPECT_NE(changed.title.find("1 cleared"), std::string::npos) << changed.title;
}

TEST(HistoryJudge, EarlierHistoryFindingsAreNotCompared) {
  history::Past past;
  past.runs.push_back({"r1", history_view("t1", {}, {history_rf("history.changed", Status::pass)})});
  auto out = history::judge(history_view("t2", {}, {history_rf("history.changed", Status::warn)}), past);
  EXPECT_EQ(history_of(out, "history.changed").status, Status::pass);
}

// Issue 42: the fixes' commands named a literal "DIR"; they name the directory the runs were
// loaded from, quoted for a shell where it needs it.
// A run that decided nothing (its checks skipped; virt.hypervisor and container.detect only name
// what runs the node) is no good run: not "the node is good now", not the last good run to go
// back to, and the listing says so instead of a pass.
TEST(HistoryJudge, ARunThatDecidedNothingIsNoGoodRun) {
  const std::vector<ReportFinding> nothing = {history_rf("virt.hypervisor", Status::pass), history_rf("container.detect", Status::pass),
                                              history_rf("cpu.turbo", Status::skip)};
  history::Past past;
  past.runs.push_back({"r1", history_view("t1", {{"settings.turbo", "on"}}, {history_rf("cpu.turbo", Status::pass)})});
  past.runs.push_back({"r2", history_view("t2", {{"settings.turbo", "unknown"}}, nothing)});
  const auto undecided_run = history::judge(history_view("t3", {}, nothing), past);
  const auto& now_undecided = history_of(undecided_run, "history.since_good");
  EXPECT_EQ(now_undecided.status, Status::skip);
  EXPECT_NE(now_undecided.title.find("nothing in this run was decided"), std::string::npos) << now_undecided.title;
  auto failing = history::judge(history_view("t3", {{"settings.turbo", "off"}}, {history_rf("cpu.turbo", Status::fail)}), past);
  const auto& since = history_of(failing, "history.since_good");
  EXPECT_EQ(since.status, Status::warn);
  EXPECT_NE(since.title.find("(t1, r1)"), std::string::npos) << "r2 decided nothing: r1 is the last good run: " << since.title;
  const auto runs = history::listing(past);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].status, Status::pass);
  EXPECT_EQ(runs[1].status, Status::skip);
  EXPECT_NE(runs[1].title.find("nothing decided"), std::string::npos) << runs[1].title;
}

TEST(HistoryJudge, FixesNameTheRealDirectory) {
  history::Past past;
  past.dir = "/var/lib/perfgap/history";
  past.runs.push_back({"r1", history_view("t1", {{"settings.turbo", "on"}}, {history_rf("cpu.turbo", Status::pass)})});
  auto out = history::judge(history_view("t2", {{"settings.turbo", "off"}}, {history_rf("cpu.turbo", Status::fail)}), past);
  const auto& changed = history_of(out, "history.changed");
  EXPECT_NE(changed.fix.find("`perfgap history /var/lib/perfgap/history --compare r1 latest`"), std::string::npos) << changed.fix;
  const auto& since = history_of(out, "history.since_good");
  EXPECT_NE(since.fix.find("`perfgap history /var/lib/perfgap/history --compare r1 latest`"), std::string::npos) << since.fix;
  past.dir = "/srv/my runs";
  auto spaced = history::judge(history_view("t2", {{"settings.turbo", "off"}}, {history_rf("cpu.turbo", Status::fail)}), past);
  EXPECT_NE(history_of(spaced, "history.changed").fix.find("`perfgap history '/srv/my runs' --compare r1 latest`"), std::string::npos);
  for (const auto& f : spaced) EXPECT_EQ(f.fix.find(" DIR "), std::string::npos) << f.fix;
}

TEST(HistoryKeep, RotatesOldestBeyondTheLimitsNeverTheNewRun) {
  perfgap::fixture::TempDir tmp;
  history::Limits limits;
  limits.max_runs = 3;
  std::vector<std::string> names;
  for (int i = 0; i < 5; ++i) {
    auto n = history::keep(tmp.path(), "{}", "2026-12-02T10:00:0" + std::to_string(i) + "Z", limits);
    ASSERT_TRUE(n) << n.error();
    names.push_back(*n);
  }
  EXPECT_EQ(names.front(), "perfgap-run-00000001-20261202T100000Z.json");
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{names[2], names[3], names[4]}));
  // A byte limit below one run keeps the run just written, alone.
  limits.max_bytes = 1;
  auto last = history::keep(tmp.path(), "{\"x\": 1}", "t", limits);
  ASSERT_TRUE(last);
  left.clear();
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{*last});
}
