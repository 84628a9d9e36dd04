// `perfgap analyze perf-stat` as scripts see it: the Grace VM against bare metal (exit 1 before
// CMDQV, 0 after), the guest without a PMU, bad input as one line naming the file and line.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "files.hpp"
#include "report_json.hpp"
#include "run.hpp"

using perfgap::fixture::finding;
using perfgap::fixture::json_report;
using perfgap::fixture::line_count;
using perfgap::fixture::log_fixture;
using perfgap::fixture::run_binary;
using perfgap::fixture::source_path;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_in;

namespace {
std::string ps(const std::string& f) { return log_fixture("perf-stat/" + f); }
}  // namespace

TEST(AnalyzePerfStat, VmAgainstBareMetalBeforeAndAfterCmdqv) {
  auto before = json_report(PERFGAP_BINARY, {"analyze", "perf-stat", ps("grace-vm-before-cmdqv.txt"), "--reference", ps("grace-baremetal.txt")}, 1);
  const auto& d = *finding(before, "perf_stat.dtlb");
  EXPECT_EQ(d["status"], "fail") << d.dump();
  EXPECT_EQ(d["layer"], "virtualization");
  EXPECT_NEAR(d["metrics"]["times_reference"].get<double>(), 2.77, 0.01);
  auto after = json_report(PERFGAP_BINARY, {"analyze", "perf-stat", ps("grace-vm-after-cmdqv.txt"), "--reference", ps("grace-baremetal-de.txt")}, 0);
  EXPECT_EQ((*finding(after, "perf_stat.dtlb"))["status"], "pass");
  // Without a reference: the figures, undecided.
  auto alone = json_report(PERFGAP_BINARY, {"analyze", "perf-stat", ps("grace-baremetal.json")}, 0);
  EXPECT_EQ((*finding(alone, "perf_stat.dtlb"))["status"], "skip");
  EXPECT_NEAR((*finding(alone, "perf_stat.dtlb"))["metrics"]["dtlb_load_miss_pct"].get<double>(), 0.22, 0.001);
}

TEST(AnalyzePerfStat, GuestWithoutPmuSkipsNamingTheEvents) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "perf-stat", ps("guest-no-pmu.txt")}, 0);
  const auto& d = *finding(j, "perf_stat.dtlb");
  EXPECT_EQ(d["status"], "skip");
  EXPECT_NE(d["title"].get<std::string>().find("dTLB-load-misses <not supported>"), std::string::npos) << d.dump();
}

TEST(AnalyzePerfStat, BadInputIsOneLineNamingFileAndLine) {
  TempDir d;
  auto bad = write_in(d, "bad.txt", "\n Performance counter stats for 'system wide':\n\n   12x4      dTLB-load-misses\n");
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "perf-stat", bad});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line 4"), std::string::npos) << r.err;
  auto empty = write_in(d, "empty.txt", "");
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"analyze", "perf-stat", empty}).status, 2);
  auto other = run_binary(PERFGAP_BINARY, {"analyze", "perf-stat", log_fixture("perf/smmu-report.txt")});
  EXPECT_EQ(other.status, 2) << other.out;
  // An unusable reference is the run's error.
  auto ref = run_binary(PERFGAP_BINARY, {"analyze", "perf-stat", ps("grace-baremetal.txt"), "--reference", empty});
  EXPECT_EQ(ref.status, 2);
  EXPECT_NE(ref.err.find("--reference"), std::string::npos) << ref.err;
  // A damaged row next to good ones: an error finding naming the line.
  auto mixed = write_in(d, "mixed.txt", "   1,000,000      dTLB-loads\n   12x4      dTLB-load-misses\n");
  auto j = json_report(PERFGAP_BINARY, {"analyze", "perf-stat", mixed}, 1);  // a row it could not use: exit 1 (docs/CONTRACT.md)
  EXPECT_NE(j.dump().find("mixed.txt:2"), std::string::npos) << j.dump(2);
}

// A Kineto trace given to perf-stat (the field's .json.gz) is exit 2, one line naming the file,
// never a pass with made-up events; likewise a Python script and a perf report.
TEST(AnalyzePerfStat, AnotherToolsOutputIsExit2NotPerfStatOutput) {
  TempDir d;
  auto trace = write_in(d, "trace.json",
                        "{\n  \"traceEvents\": [\n  {\n    \"name\": \"void at::native::kernel<float, 4, true, cutlass::Tile>(Params)\",\n"
                        "    \"ts\": 1.5, \"dur\": 2\n  }\n  ]\n}\n");
  std::vector<std::string> inputs = {trace, source_path("tests/fixtures/logs/nccl-inspector/generate.py"), source_path("tests/fixtures/logs/nccl-ras/dead-rank.txt")};
  const std::string field = source_path("../shared/fixtures/profiles/kineto_hta_a100x2_nccl_metadata.json.gz");
  if (std::ifstream(field).good()) inputs.push_back(field);
  for (const auto& in : inputs) {
    auto r = run_binary(PERFGAP_BINARY, {"analyze", "perf-stat", in});
    EXPECT_EQ(r.status, 2) << in << ": " << r.out;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(in), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("not perf stat output"), std::string::npos) << r.err;
  }
}

