// docs/report.schema.json: the validator the tests use catches what the schema forbids, and
// reports of every kind perfgap writes validate (contract_violations also runs it on every
// report the other CLI tests read).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "contract.hpp"
#include "json_schema.hpp"
#include "report_json.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using perfgap::fixture::report_schema;
using perfgap::fixture::schema_violations;

namespace {

json minimal_report() {
  return json::parse(R"({"schema":"perfgap.report/1","tool":{"name":"perfgap","version":"0.1.0"},
    "generated_at":"2026-12-01T00:00:00Z","source":{"kind":"analyze","root":null,"inputs":["x"]},"node":null,
    "summary":{"pass":1,"warn":0,"fail":0,"skip":0,"error":0},
    "findings":[{"id":"perf.hot_kernel","layer":"virtualization","status":"pass","title":"t","evidence":[],
                 "fix":"","impact":"","metrics":{"samples":3}}]})");
}

bool mentions(const std::vector<std::string>& v, const std::string& what) {
  for (const auto& s : v)
    if (s.find(what) != std::string::npos) return true;
  return false;
}

TEST(ReportSchema, AcceptsAMinimalReport) {
  auto v = schema_violations(report_schema(), minimal_report());
  EXPECT_TRUE(v.empty()) << ::testing::PrintToString(v);
}

TEST(ReportSchema, CatchesWhatTheContractForbids) {
  auto r = minimal_report();
  r["findings"][0].erase("fix");
  EXPECT_TRUE(mentions(schema_violations(report_schema(), r), "/findings/0: required property fix"));
  r = minimal_report();
  r["findings"][0]["metrics"]["samples"] = "3";
  EXPECT_TRUE(mentions(schema_violations(report_schema(), r), "/findings/0/metrics/samples"));
  r = minimal_report();
  r["findings"][0]["layer"] = "kernel";
  EXPECT_TRUE(mentions(schema_violations(report_schema(), r), "/findings/0/layer"));
  r = minimal_report();
  r["generated_at"] = "2026-12-01 00:00";
  EXPECT_TRUE(mentions(schema_violations(report_schema(), r), "/generated_at"));
  r = minimal_report();
  r["extra"] = 1;
  EXPECT_TRUE(mentions(schema_violations(report_schema(), r), "/extra: not allowed"));
  r = minimal_report();
  r["node"] = json::parse(R"({"name":"n","hostname":"n","arch":"x86_64","kernel":"6","virtualized":null,"container":"none",
                              "settings":{"cpu_model":"x"},"environment":{},"nccl_conf":{}})");
  EXPECT_TRUE(mentions(schema_violations(report_schema(), r), "/node: matches 0 of the oneOf"));
}

TEST(ReportSchema, AnUnimplementedKeywordIsAViolationNotIgnored) {
  auto schema = json::parse(R"({"type":"object","maxProperties":1})");
  EXPECT_TRUE(mentions(schema_violations(schema, json::object()), "maxProperties is not implemented"));
}

// The schema file is valid draft 2020-12 and agrees with an independent validator (Python's
// jsonschema, Debian's python3-jsonschema) on a report of each kind; skipped where it is absent.
TEST(ReportSchema, IndependentValidatorAgrees) {
  auto probe = perfgap::fixture::run_binary("/usr/bin/python3", {"-c", "import jsonschema"});
  if (probe.status != 0) GTEST_SKIP() << "python3-jsonschema not installed";
  perfgap::fixture::TempDir tmp;
  const fs::path src = PERFGAP_SOURCE_DIR;
  std::vector<fs::path> reports;
  auto keep = [&](const std::string& name, const std::vector<std::string>& args) {
    auto r = perfgap::fixture::run_binary(PERFGAP_BINARY, args);
    ASSERT_TRUE(r.status == 0 || r.status == 1) << name << ": " << r.err;
    reports.push_back(fs::path(tmp.path()) / (name + ".json"));
    std::ofstream(reports.back()) << r.out;
  };
  keep("check", {"check", "--format", "json"});
  keep("analyze", {"analyze", "nccl-tests", (src / "tests/fixtures/logs/nccl-tests/slow-allreduce.txt").string(), "--format", "json"});
  keep("gap", {"gap", "--measured", "110", "--reference", "100", "--format", "json"});
  keep("fleet", {"fleet", reports.front().string(), "--format", "json"});
  std::string script =
      "import json,sys,jsonschema\n"
      "s=json.load(open(sys.argv[1]))\n"
      "jsonschema.Draft202012Validator.check_schema(s)\n"
      "v=jsonschema.Draft202012Validator(s)\n"
      "bad=[f'{p}: {e.message}' for p in sys.argv[2:] for e in v.iter_errors(json.load(open(p)))]\n"
      "print('\\n'.join(bad)); sys.exit(1 if bad else 0)\n";
  std::vector<std::string> args{"-c", script, (src / "docs/report.schema.json").string()};
  for (const auto& p : reports) args.push_back(p.string());
  auto r = perfgap::fixture::run_binary("/usr/bin/python3", args);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

}  // namespace
