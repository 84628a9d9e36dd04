// The headline never says OK on informational summaries alone (docs/CONTRACT.md, "Informational
// summaries"): the field review's case, analyze perf over a real perf.data of a few samples,
// read "OK  1 pass, 2 skip" where the one pass was perf.summary and both judges skipped.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "perf_data_gen.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_in;

TEST(InformationalHeadline, AShortRealPerfDataHeadsSkipWithWhyNotOk) {
  const fs::path rec = fs::path(PERFGAP_SHARED_DIR) / "fixtures/profiles/linuxperfdata_sleep.data";
  if (!fs::exists(rec)) GTEST_SKIP() << rec << " absent";
  const auto text = run_binary(PERFGAP_BINARY, {"analyze", "perf", rec.string()});
  EXPECT_EQ(text.status, 0) << text.err;  // the exit status is unchanged
  const std::string headline = text.out.substr(0, text.out.find('\n'));
  EXPECT_EQ(headline.rfind("perfgap analyze: SKIP  0 fail, 0 warn, 1 pass, 2 skip, 0 error; nothing could be decided: too few samples (7;", 0), 0u)
      << headline;
  const auto json = run_binary(PERFGAP_BINARY, {"analyze", "perf", rec.string(), "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_TRUE(j.contains("undecided")) << json.out.substr(0, 400);
  EXPECT_EQ(j["undecided"].get<std::string>().rfind("nothing could be decided: too few samples", 0), 0u) << j["undecided"];
  EXPECT_EQ(j["summary"]["pass"], 1);  // the counts stay counts of findings by status
  EXPECT_EQ(j["summary"]["skip"], 2);
  const auto html = run_binary(PERFGAP_BINARY, {"analyze", "perf", rec.string(), "--format", "html"});
  EXPECT_NE(html.out.find(">SKIP: 0 fail, 0 warn, 1 pass, 2 skip, 0 error; nothing could be decided: too few samples"), std::string::npos);
}

// A generated recording: with the node's kallsyms both judges decide (pass) and the headline is OK
// as before; without them (another kernel's recording) they skip, and so does the headline, with
// the reason a user can act on (--kallsyms).
TEST(InformationalHeadline, AGeneratedPerfDataHeadsOkOnlyWhereTheJudgesDecided) {
  TempDir t;
  const std::vector<std::pair<std::string, int>> kernel = {{"do_syscall_64", 30}};
  const auto rec = write_in(t, "rec.data", perfgap::gen::write_perf_data(perfgap::gen::demo_spec(kernel, 80)));
  const auto ks = write_in(t, "kallsyms", perfgap::gen::demo_kallsyms(kernel));
  const auto judged = run_binary(PERFGAP_BINARY, {"analyze", "perf", rec, "--kallsyms", ks});
  EXPECT_EQ(judged.status, 0) << judged.err;
  EXPECT_EQ(judged.out.rfind("perfgap analyze: OK  0 fail, 0 warn, 3 pass, 0 skip, 0 error\n", 0), 0u) << judged.out;
  const auto unnamed = run_binary(PERFGAP_BINARY, {"analyze", "perf", rec});
  EXPECT_EQ(unnamed.status, 0) << unnamed.err;
  const std::string headline = unnamed.out.substr(0, unnamed.out.find('\n'));
  EXPECT_EQ(headline.rfind("perfgap analyze: SKIP  0 fail, 0 warn, 1 pass, 2 skip, 0 error; nothing could be decided: ", 0), 0u) << unnamed.out;
  EXPECT_NE(headline.find("--kallsyms"), std::string::npos) << headline;
}
