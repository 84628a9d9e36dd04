// Informational summaries (report/informational.hpp): a report whose findings are only skips and
// the passes of summaries that say what was read decided nothing, and never heads OK.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "report/informational.hpp"
#include "report/render.hpp"

using namespace perfgap::report;

namespace {

Finding informational_finding(std::string id, Status st, std::string title) {
  Finding f;
  f.id = std::move(id);
  f.layer = "virtualization";
  f.status = st;
  f.subject = "rec.data";
  f.title = std::move(title);
  return f;
}

Report informational_report(std::vector<Finding> findings) {
  Report r;
  r.tool_version = "0.1.0";
  r.generated_at = "2026-12-06T12:00:00Z";
  r.source.kind = "analyze";
  r.source.inputs = {"rec.data"};
  r.findings = std::move(findings);
  return r;
}

}  // namespace

TEST(ReportInformational, APassOfASummaryDecidesNothingItsWarnDoes) {
  EXPECT_TRUE(informational("perf.summary"));
  EXPECT_TRUE(informational("profile.ranks"));
  EXPECT_FALSE(informational("perf.hot_kernel"));
  EXPECT_FALSE(informational("gpu.inventory"));  // its pass says the driver sees every GPU on PCI: a verdict
  EXPECT_FALSE(informational("compare.summary"));
  EXPECT_FALSE(decides("perf.summary", Status::pass));
  EXPECT_FALSE(decides("perf.hot_kernel", Status::skip));
  EXPECT_TRUE(decides("perf.hot_kernel", Status::pass));
  for (auto st : {Status::warn, Status::fail, Status::error}) EXPECT_TRUE(decides("profile.ranks", st)) << to_string(st);
}

// The field review's case: analyze perf over a short perf.data read "OK  1 pass, 2 skip" where
// the one pass was perf.summary. It heads SKIP with the first skip's reason (no reason repeats); the counts stay.
TEST(ReportInformational, SummariesAndSkipsAloneHeadSkipWithTheFirstSkipsReason) {
  auto r = informational_report({informational_finding("perf.summary", Status::pass, "7 samples, 0 lost (perf.data)"),
                                 informational_finding("perf.smmu_cmdq", Status::skip, "too few samples (7; at least 100 to judge a 5% share)"),
                                 informational_finding("perf.hot_kernel", Status::skip, "too few samples (7)")});
  const std::string why = "nothing could be decided: too few samples (7; at least 100 to judge a 5% share)";
  EXPECT_EQ(r.undecided_why(), why);
  const auto text = render_text(r, {false, false});
  EXPECT_NE(text.find("perfgap analyze: SKIP  0 fail, 0 warn, 1 pass, 2 skip, 0 error; " + why + "\n"), std::string::npos) << text;
  EXPECT_EQ(text.find(" OK "), std::string::npos) << text;
  const auto j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j["undecided"], why);
  EXPECT_EQ(j["summary"]["pass"], 1);  // counts of findings by status, as before
  EXPECT_EQ(j["summary"]["skip"], 2);
  EXPECT_NE(render_html(r, {}).find("SKIP: 0 fail, 0 warn, 1 pass, 2 skip, 0 error; " + why), std::string::npos);
}

// Field review 2: a captured s390 tree headed "nothing could be decided: not an NVIDIA Grace node"
// (its first check's skip) while a dozen checks skipped for want of the kernel log. The reason
// most skips share heads, with how many say it; the first skip breaks a tie.
TEST(ReportInformational, TheReasonMostSkipsShareHeadsNotTheFirstSkips) {
  const std::string no_log = "kernel log not readable: no kernel log captured with the tree";
  auto r = informational_report({informational_finding("virt.hypervisor", Status::pass, "virtualized: KVM"),
                                 informational_finding("smmu.cmdqv", Status::skip, "not an NVIDIA Grace node (CPU architecture s390x)"),
                                 informational_finding("kernel.edac", Status::skip, no_log),
                                 informational_finding("pcie.link", Status::skip, "PCI devices not readable"),
                                 informational_finding("gpu.xid", Status::skip, no_log)});
  EXPECT_EQ(r.undecided_why(), "nothing could be decided: 2 of 4 skips say: " + no_log);
  auto tie = informational_report({informational_finding("smmu.cmdqv", Status::skip, "not Grace"),
                                   informational_finding("pcie.link", Status::skip, "PCI devices not readable")});
  EXPECT_EQ(tie.undecided_why(), "nothing could be decided: not Grace");
  auto all_same = informational_report({informational_finding("gpu.xid", Status::skip, no_log),
                                        informational_finding("kernel.edac", Status::skip, no_log)});
  EXPECT_EQ(all_same.undecided_why(), "nothing could be decided: " + no_log);
}

TEST(ReportInformational, SummariesAloneSayWhatWasReadAndThatNothingJudgedIt) {
  auto r = informational_report({informational_finding("nccl_inspector.summary", Status::pass, "88 collective records of 16 ranks"),
                                 informational_finding("perf_stat.events", Status::pass, "7 events read")});
  EXPECT_EQ(r.undecided_why(), "nothing could be decided: nccl_inspector.summary only says what was read (88 collective records of 16 ranks); no finding judged it");
  EXPECT_NE(render_text(r, {false, false}).find(": SKIP  0 fail, 0 warn, 2 pass, 0 skip, 0 error; nothing could be decided: nccl_inspector.summary"),
            std::string::npos);
}

TEST(ReportInformational, OneRealPassOrASummaryThatWarnsDecides) {
  auto r = informational_report({informational_finding("perf.summary", Status::pass, "547 samples"),
                                 informational_finding("perf.smmu_cmdq", Status::skip, "no kernel symbols"),
                                 informational_finding("perf.hot_kernel", Status::pass, "no known-costly kernel frame")});
  EXPECT_EQ(r.undecided_why(), "");
  EXPECT_NE(render_text(r, {false, false}).find(": OK  0 fail, 0 warn, 2 pass, 1 skip, 0 error\n"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(render_json(r)).contains("undecided"));

  auto w = informational_report({informational_finding("profile.summary", Status::pass, "Kineto trace"),
                                 informational_finding("profile.ranks", Status::warn, "1 of 8 ranks analysed as the job"),
                                 informational_finding("profile.gpu_idle", Status::skip, "too few kernels to judge")});
  EXPECT_EQ(w.undecided_why(), "");
  EXPECT_NE(render_text(w, {false, false}).find(": WARN  0 fail, 1 warn, 1 pass, 1 skip, 0 error\n"), std::string::npos);
  // An informational id that errs (damaged lines) decides too: ERROR, not SKIP.
  auto e = informational_report({informational_finding("perf_stat.events", Status::error, "line 3 could not be read")});
  EXPECT_EQ(e.undecided_why(), "");
}

// docs/CONTRACT.md names the informational ids; the list there is the registry's.
TEST(ReportInformational, TheContractListsEveryInformationalIdAndNoOther) {
  std::ifstream in(std::string(PERFGAP_SOURCE_DIR) + "/docs/CONTRACT.md", std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  const auto at = text.find("**Informational summaries.**");
  ASSERT_NE(at, std::string::npos) << "docs/CONTRACT.md has no **Informational summaries.** paragraph";
  const std::string para = text.substr(at, text.find("\n\n", at) - at);
  std::set<std::string> documented, registered;
  static const std::regex id("`([a-z_]+(\\.[a-z_]+)+)`");
  for (std::sregex_iterator it(para.begin(), para.end(), id), end; it != end; ++it) documented.insert((*it)[1].str());
  for (auto i : kInformationalIds) registered.emplace(i);
  EXPECT_EQ(documented, registered) << para;
}
