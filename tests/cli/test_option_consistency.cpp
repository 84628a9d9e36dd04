// One meaning per option across commands: the formats each command declares (and renders
// through report::render), --reference as milliseconds where a time per iteration is the
// reference, the one spelling of the live window and its aliases, and usage errors that say
// what is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "files.hpp"
#include "profile_gen.hpp"
#include "report_json.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace {

using perfgap::fixture::log_fixture;
using perfgap::fixture::one_line;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

const std::vector<std::string> kOptFormats = {"text", "json", "html", "junit", "prometheus"};

struct OptCommand {
  std::string name;
  std::vector<std::string> args;  // a run that works, without --format
  std::set<std::string> formats;  // what the command declares
  bool runs = true;               // false: a cluster or benchmark command, its formats checked by parsing only
};

// Whether `out` is what `format` writes.
std::string opt_shape_problem(const std::string& format, const std::string& out) {
  if (out.empty()) return "empty output";
  if (format == "json") {
    auto j = nlohmann::json::parse(out, nullptr, false);
    if (j.is_discarded() || !j.contains("findings")) return "not a JSON report";
  } else if (format == "html") {
    if (out.find("<html") == std::string::npos) return "not an HTML page";
  } else if (format == "junit") {
    if (out.rfind("<?xml", 0) != 0 || out.find("<testsuites>") == std::string::npos || out.find("<testcase") == std::string::npos)
      return "not JUnit XML with testcases";
  } else if (format == "prometheus") {
    if (out.find("# TYPE perfgap_finding gauge") == std::string::npos) return "not the Prometheus textfile format";
  } else if (out[0] == '{' || out[0] == '<') {
    return "not text";
  }
  return "";
}

class OptionConsistency : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    const std::string tree = dir_->path() + "/tree";
    auto h = perfgap::fixture::unpack_tree(perfgap::fixture::fixture_path("golden/healthy-x86.tree"), tree);
    ASSERT_TRUE(h) << h.error();
    node_ = dir_->path() + "/node.json";
    history_ = dir_->path() + "/history";
    ASSERT_LT(run_binary(PERFGAP_BINARY, {"check", "--root", tree, "--format", "json", "--output", node_, "--history", history_}).status, 2);
    before_ = dir_->path() + "/before.json";
    after_ = dir_->path() + "/after.json";
    ASSERT_LT(run_binary(PERFGAP_BINARY, {"gap", "--reference", "830", "--measured", "850", "--format", "json", "--output", before_}).status, 2);
    ASSERT_LT(run_binary(PERFGAP_BINARY, {"gap", "--reference", "830", "--measured", "1000", "--format", "json", "--output", after_}).status, 2);
    const std::string steps = log_fixture("steps/measured.csv");
    // A job of two ranks' Kineto traces for whatif.
    perfgap::gen::JobSpec spec;
    spec.ranks = 2;
    spec.iterations = 4;
    const auto job = perfgap::gen::job(spec);
    const std::string ranks = dir_->path() + "/ranks";
    for (std::size_t r = 0; r < job.gpus.size(); ++r)
      ASSERT_TRUE(perfgap::fixture::write_file(ranks + "/rank" + std::to_string(r) + ".json", perfgap::gen::kineto_json(job, r, static_cast<int>(r))));
    const std::set<std::string> all(kOptFormats.begin(), kOptFormats.end());
    commands_ = {
        {"check", {"check", "--root", tree}, all},
        {"analyze", {"analyze", "steps", steps, "--reference", "830"}, all},
        {"gap", {"gap", "--reference", "830", "--measured", steps}, all},
        {"compare", {"compare", before_, after_}, all},
        {"explain", {"explain", "--reference", "880", "--measured", "1000", node_}, {"text", "json", "html", "prometheus"}},
        {"fleet", {"fleet", node_}, all},
        {"history", {"history", history_}, {"text", "json", "html"}},
        {"whatif", {"whatif", ranks}, all},
        {"profile", {"profile", "--seconds", "1"}, all},
        {"probe", {"probe", "--cpu", "--seconds-per-probe", "0.1"}, all},
        {"sweep", {"sweep", "--env", "X=1", "--repeat", "1"}, {"text", "json", "html"}, false},
        {"fanout", {"fanout", "--dry-run"}, all, false},
        {"snapshot", {"snapshot", dir_->path() + "/snap"}, {"text", "json"}, false},
    };
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static inline TempDir* dir_ = nullptr;
  static inline std::string node_, history_, before_, after_;
  static inline std::vector<OptCommand> commands_;
};

TEST_F(OptionConsistency, EveryCommandRendersTheFormatsItDeclares) {
  for (const auto& c : commands_) {
    if (!c.runs) continue;
    for (const auto& format : c.formats) {
      auto args = c.args;
      args.insert(args.end(), {"--format", format});
      auto r = run_binary(PERFGAP_BINARY, args);
      EXPECT_LT(r.status, 2) << c.name << " --format " << format << ": " << r.err;
      const auto problem = opt_shape_problem(format, r.out);
      EXPECT_EQ(problem, "") << c.name << " --format " << format << ":\n" << r.out.substr(0, 400);
    }
  }
}

TEST_F(OptionConsistency, FormatsACommandDoesNotDeclareAreExit2NamingTheChoices) {
  for (const auto& c : commands_)
    for (const auto& format : kOptFormats) {
      if (c.formats.count(format)) continue;
      auto args = c.args;
      args.insert(args.end(), {"--format", format});
      if (c.name == "sweep") args.insert(args.end(), {"--", "true"});
      auto r = run_binary(PERFGAP_BINARY, args);
      EXPECT_EQ(r.status, 2) << c.name << " --format " << format;
      EXPECT_TRUE(r.out.empty()) << c.name << " --format " << format;
      EXPECT_TRUE(one_line(r.err)) << r.err;
      EXPECT_NE(r.err.find("unknown value '" + format + "'"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("one of: text, json"), std::string::npos) << r.err;
    }
}

TEST_F(OptionConsistency, HelpListsExactlyTheDeclaredFormats) {
  for (const auto& c : commands_) {
    auto r = run_binary(PERFGAP_BINARY, {c.name, "--help"});
    ASSERT_EQ(r.status, 0) << c.name;
    const auto at = r.out.find("--format FORMAT");
    ASSERT_NE(at, std::string::npos) << c.name << ":\n" << r.out;
    const auto line_end = r.out.find("Output format: ", at);
    ASSERT_NE(line_end, std::string::npos) << c.name;
    const std::string listed = r.out.substr(line_end, r.out.find_first_of(";\n", line_end) - line_end);
    for (const auto& format : kOptFormats)
      EXPECT_EQ(listed.find(format) != std::string::npos, c.formats.count(format) == 1) << c.name << ": " << format << " in " << listed;
  }
}

TEST_F(OptionConsistency, FormatTypoSaysDidYouMean) {
  for (const auto& c : commands_) {
    auto args = c.args;
    args.insert(args.end(), {"--format", "jsn"});
    auto r = run_binary(PERFGAP_BINARY, args);
    EXPECT_EQ(r.status, 2) << c.name;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("unknown value 'jsn' (did you mean json?)"), std::string::npos) << c.name << ": " << r.err;
  }
}

TEST_F(OptionConsistency, UnknownOptionSaysDidYouMeanOnEveryCommand) {
  for (const auto& c : commands_) {
    auto r = run_binary(PERFGAP_BINARY, {c.name, "--formt", "json"});
    EXPECT_EQ(r.status, 2) << c.name;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("unknown option --formt for '" + c.name + "' (did you mean --format?)"), std::string::npos) << r.err;
  }
  // An option of another command: named as unknown here, with this command's closest.
  auto r = run_binary(PERFGAP_BINARY, {"gap", "--reference-ms", "830", "--measured", "900"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown option --reference-ms for 'gap' (did you mean --reference?)"), std::string::npos) << r.err;
  for (const char* cmd : {"health", "snapshot", "version"}) {
    auto u = run_binary(PERFGAP_BINARY, {cmd, "--no-such-option"});
    EXPECT_EQ(u.status, 2) << cmd;
    EXPECT_NE(u.err.find(std::string("unknown option --no-such-option for '") + cmd + "'"), std::string::npos) << u.err;
  }
}

TEST_F(OptionConsistency, UnexpectedArgumentIsNamed) {
  auto r = run_binary(PERFGAP_BINARY, {"gap", "--reference", "830", "--measured", "900", "stray"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("unexpected argument 'stray' for 'gap'"), std::string::npos) << r.err;
}

TEST_F(OptionConsistency, ReferenceNumberIsMillisecondsWhereATimeIsTheReference) {
  const std::string steps = log_fixture("steps/measured.csv");
  auto pct = [](const nlohmann::json& rep) -> double {
    return perfgap::fixture::required_finding(rep, "steps.gap")["metrics"].value("percent_of_reference", -1.0);
  };
  auto gap = perfgap::fixture::json_report(PERFGAP_BINARY, {"gap", "--reference", "830", "--measured", steps}, 1);
  auto analyze = perfgap::fixture::json_report(PERFGAP_BINARY, {"analyze", "steps", steps, "--reference", "830"}, 1);
  auto with_unit = perfgap::fixture::json_report(PERFGAP_BINARY, {"analyze", "steps", steps, "--reference", "830ms"}, 1);
  auto deprecated = perfgap::fixture::json_report(PERFGAP_BINARY, {"analyze", "steps", steps, "--reference-ms", "830"}, 1);
  ASSERT_GT(pct(gap), 0);
  EXPECT_DOUBLE_EQ(pct(analyze), pct(gap)) << "analyze steps --reference 830 is gap's 830 ms";
  EXPECT_DOUBLE_EQ(pct(with_unit), pct(gap));
  EXPECT_DOUBLE_EQ(pct(deprecated), pct(gap)) << "--reference-ms stays an alias";
  // The same bad value is refused the same way by every command that takes milliseconds.
  for (std::vector<std::string> args : {std::vector<std::string>{"gap", "--reference", "0", "--measured", steps},
                                        {"analyze", "steps", steps, "--reference", "0"},
                                        {"explain", "--reference", "0", "--measured", "900", node_}}) {
    auto r = run_binary(PERFGAP_BINARY, args);
    EXPECT_EQ(r.status, 2) << args[0];
    EXPECT_NE(r.err.find("--reference 0: milliseconds per iteration must be positive"), std::string::npos) << r.err;
  }
  auto both = run_binary(PERFGAP_BINARY, {"analyze", "steps", steps, "--reference", "830", "--reference-ms", "830"});
  EXPECT_EQ(both.status, 2) << both.err;
}

TEST_F(OptionConsistency, ReferenceNumberForAWholeRunKindIsAUsageError) {
  for (const char* kind : {"nccl-tests", "nsys", "kineto"}) {
    auto r = run_binary(PERFGAP_BINARY, {"analyze", kind, "--reference", "830", node_});
    EXPECT_EQ(r.status, 2) << kind;
    EXPECT_TRUE(r.out.empty()) << kind;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(std::string("--reference 830: analyze ") + kind + " takes a reference"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("not a number"), std::string::npos) << r.err;
  }
  // A file that happens to be named like a number (in the working directory) is still read as
  // the file: its own error, not "not a number".
  TempDir d;
  perfgap::fixture::write_in(d, "830", "not an nccl-tests output\n");
  auto r = run_binary("/bin/sh", {"-c", "cd \"$1\" && exec \"$2\" analyze nccl-tests --reference 830 \"$3\"", "sh", d.path(), PERFGAP_BINARY, node_});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("--reference 830: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("not a number"), std::string::npos) << r.err;
}

TEST_F(OptionConsistency, LiveWindowHasOneSpellingAndKeepsItsAliases) {
  // --profile-seconds on check and profile; check --profile and profile --seconds still parse.
  for (const char* spelling : {"--profile-seconds", "--profile"}) {
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", "/tmp", spelling, "2"});
    EXPECT_EQ(r.status, 2) << spelling;
    EXPECT_NE(r.err.find("--root trees cannot be profiled"), std::string::npos) << spelling << ": " << r.err;
  }
  for (const char* spelling : {"--profile-seconds", "--seconds"}) {
    auto r = run_binary(PERFGAP_BINARY, {"profile", spelling, "61"});
    EXPECT_EQ(r.status, 2) << spelling;
    EXPECT_EQ(r.err.find("unknown option"), std::string::npos) << spelling << ": " << r.err;
  }
  for (const char* cmd : {"check", "profile"}) {
    auto h = run_binary(PERFGAP_BINARY, {cmd, "--help"});
    EXPECT_NE(h.out.find("--profile-seconds"), std::string::npos) << cmd << ":\n" << h.out;
  }
}

TEST_F(OptionConsistency, PlaceholdersNameWhatTheyTake) {
  auto check = run_binary(PERFGAP_BINARY, {"check", "--help"});
  EXPECT_NE(check.out.find("--sample-ms MS"), std::string::npos) << check.out;
  EXPECT_EQ(check.out.find("--sample-ms TEXT"), std::string::npos) << check.out;
  for (const char* cmd : {"gap", "explain", "analyze"}) {
    auto h = run_binary(PERFGAP_BINARY, {cmd, "--help"});
    EXPECT_NE(h.out.find("--reference FILE|MS"), std::string::npos) << cmd << ":\n" << h.out;
  }
}

TEST_F(OptionConsistency, AnalyzeJunitHasOneTestcasePerFinding) {
  const std::string steps = log_fixture("steps/measured.csv");
  auto j = perfgap::fixture::json_report(PERFGAP_BINARY, {"analyze", "steps", steps, "--reference", "830"}, 1);
  auto x = run_binary(PERFGAP_BINARY, {"analyze", "steps", steps, "--reference", "830", "--format", "junit"});
  EXPECT_EQ(x.status, 1);
  std::size_t cases = 0;
  for (auto at = x.out.find("<testcase "); at != std::string::npos; at = x.out.find("<testcase ", at + 1)) ++cases;
  EXPECT_EQ(cases, j["findings"].size()) << x.out;
  EXPECT_NE(x.out.find("<testsuite name=\"perfgap analyze\""), std::string::npos) << "a report of no node is named after its command\n" << x.out;
  EXPECT_NE(x.out.find("<failure"), std::string::npos) << "steps.gap fails at 830 ms\n" << x.out;
}

TEST_F(OptionConsistency, PrometheusOfGapCompareAndExplainCarriesWhatAUserGraphs) {
  auto gap = run_binary(PERFGAP_BINARY, {"gap", "--reference", "830", "--measured", "1000", "--format", "prometheus"});
  EXPECT_EQ(gap.status, 1);
  const std::string series = "id=\"steps.gap\",subject=\"--measured\",metric=\"percent_of_reference\"} ";
  const auto at = gap.out.find(series);
  ASSERT_NE(at, std::string::npos) << gap.out;
  EXPECT_NEAR(std::stod(gap.out.substr(at + series.size())), 83.0, 1e-9) << "830 ms of 1000 ms";
  auto cmp = run_binary(PERFGAP_BINARY, {"compare", before_, after_, "--format", "prometheus"});
  EXPECT_LT(cmp.status, 2) << cmp.err;
  EXPECT_NE(cmp.out.find("perfgap_finding{node=\"unknown\",id=\"compare."), std::string::npos) << cmp.out;
  auto ex = run_binary(PERFGAP_BINARY, {"explain", "--reference", "880", "--measured", "1000", node_, "--format", "prometheus"});
  EXPECT_LT(ex.status, 2) << ex.err;
  for (const char* m : {"metric=\"measured_pct_of_reference\"", "metric=\"unexplained_pct\"", "metric=\"step.unexplained.points\""})
    EXPECT_NE(ex.out.find(m), std::string::npos) << m << " in\n" << ex.out;
}

}  // namespace
