// Text output piped (not a terminal: a file, a mail, a CI log) keeps whole lines: every
// command's titles, evidence and fixes as the JSON report has them, none cut to a width.
// Only fleet fits a width, and only a terminal's or an explicit COLUMNS (tests/cli/test_fleet.cpp);
// COLUMNS changes nothing elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "files.hpp"
#include "run.hpp"
#include "tree.hpp"

using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

namespace {

struct TextWholeCase {
  const char* name;
  std::vector<std::string> args;  // the command, run once as text and once with --format json
  bool shows_fix = true;          // fleet shows fixes with -v only
};

std::size_t textwhole_longest_line(const std::string& text) {
  std::istringstream in(text);
  std::size_t longest = 0;
  for (std::string line; std::getline(in, line);) longest = std::max(longest, line.size());
  return longest;
}

// Every actionable finding's title, first evidence lines and fix appear whole in `text`.
void textwhole_expect_whole(const TextWholeCase& c, const std::string& text, const nlohmann::json& report) {
  std::size_t checked = 0;
  for (const auto& f : report["findings"]) {
    const std::string status = f["status"];
    if (status != "fail" && status != "warn" && status != "error") continue;
    ++checked;
    std::string head = f["id"].get<std::string>();
    if (f.contains("subject") && f["subject"].is_string() && !f["subject"].get<std::string>().empty())
      head += " [" + f["subject"].get<std::string>() + "]";
    EXPECT_NE(text.find(head + "  " + f["title"].get<std::string>() + "\n"), std::string::npos)
        << c.name << ": title of " << head << " not whole:\n" << f["title"] << "\n" << text;
    const auto& ev = f["evidence"];
    for (std::size_t i = 0; i < ev.size() && i < 3; ++i) {
      std::string line = ev[i]["source"].get<std::string>() + ": " + ev[i]["observed"].get<std::string>();
      EXPECT_NE(text.find(line), std::string::npos) << c.name << ": evidence of " << head << " not whole: " << line;
    }
    if (c.shows_fix && f.contains("fix") && f["fix"].is_string() && !f["fix"].get<std::string>().empty()) {
      EXPECT_NE(text.find("fix: " + f["fix"].get<std::string>() + "\n"), std::string::npos) << c.name << ": fix of " << head << " not whole";
    }
  }
  EXPECT_GT(checked, 0u) << c.name << ": no fail/warn finding to look at";
}

TEST(TextWhole, PipedOutputKeepsTitlesEvidenceAndFixesWhole) {
  TempDir tmp;
  const std::string tree = tmp.file("h100");
  auto spec = perfgap::fixture::unpack_tree(perfgap::fixture::fixture_path("golden/h100-c1-remote-numa.tree"), tree);
  ASSERT_TRUE(spec) << spec.error();
  auto log = [](const std::string& rel) { return perfgap::fixture::log_fixture(rel); };
  const std::string golden = perfgap::fixture::source_path("tests/golden/");
  const std::vector<TextWholeCase> cases = {
      {"check", {"check", "--root", tree}},
      {"analyze nccl-tests", {"analyze", "nccl-tests", log("nccl-tests/slow-allreduce.txt"), "--reference", log("nccl-tests/ref-allreduce.txt")}},
      {"analyze perf", {"analyze", "perf", log("perf/smmu-report.txt")}},
      {"analyze nvidia-smi", {"analyze", "nvidia-smi", log("nvidia-smi/faults.xml")}},
      {"analyze nccl-log", {"analyze", "nccl-log", log("nccl-log/topo-missing-2.27.txt")}},
      {"gap", {"gap", "--reference", log("steps/reference.log"), "--measured", log("steps/measured.csv")}},
      {"explain", {"explain", "--reference", log("steps/reference.log"), "--measured", log("steps/measured.csv"), golden + "h100-c1-remote-numa.json"}},
      {"compare", {"compare", golden + "healthy-x86.json", golden + "h100-c1-remote-numa.json"}},
      {"fleet", {"fleet", golden}, false},
  };
  for (const auto& c : cases) {
    // No COLUMNS and no terminal: nothing to fit.
    auto text = run_binary(PERFGAP_BINARY, c.args, {{"COLUMNS", ""}});
    ASSERT_TRUE(text.status == 0 || text.status == 1) << c.name << ": " << text.err;
    auto json_args = c.args;
    json_args.insert(json_args.end(), {"--format", "json"});
    auto json = run_binary(PERFGAP_BINARY, json_args);
    ASSERT_EQ(json.status, text.status) << c.name << ": " << json.err;
    textwhole_expect_whole(c, text.out, nlohmann::json::parse(json.out));
    // Lines past 100 columns are there, whole (a cut at ~100 columns would have lost them).
    EXPECT_GT(textwhole_longest_line(text.out), 100u) << c.name;
    EXPECT_EQ(text.out.find("\x1b["), std::string::npos) << c.name << ": colour when piped";
    // A narrow COLUMNS cuts nothing but fleet's terminal view.
    if (c.args[0] != "fleet") {
      auto narrow = run_binary(PERFGAP_BINARY, c.args, {{"COLUMNS", "60"}});
      EXPECT_EQ(narrow.out, text.out) << c.name << ": COLUMNS changed the text";
    }
  }
}

}  // namespace
