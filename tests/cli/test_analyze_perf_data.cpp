// `perfgap analyze perf` on perf.data: detection by magic, --kallsyms, exit statuses, damaged
// recordings, standard input; and the shares perf itself reports for the real recordings.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "files.hpp"
#include "perf_data_gen.hpp"
#include "report_json.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::finding;
using perfgap::fixture::json_report;
using perfgap::fixture::log_fixture;
using perfgap::fixture::one_line;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_in;

namespace {
// 160 samples (above the analyzer's minimum of 100): 37.5% SMMU, 12.5% syscall entry, 50% user.
const std::vector<std::pair<std::string, int>> kSmmu = {{"arm_smmu_cmdq_issue_cmdlist", 60}, {"do_syscall_64", 20}};
}


// `perf report --stdio --sort sym` rows "  12.34%  [k] symbol": self share per kernel symbol
// (only unnamed 0x... addresses when `unnamed_only`).
std::map<std::string, double> perf_report_kernel_shares(const std::string& out, bool unnamed_only) {
  std::map<std::string, double> shares;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string pct, mark, sym;
    if (!(ls >> pct >> mark >> sym) || pct.back() != '%' || mark != "[k]") continue;
    if (unnamed_only && sym.rfind("0x", 0) != 0) continue;
    shares[sym] += std::stod(pct.substr(0, pct.size() - 1));
  }
  return shares;
}

TEST(AnalyzePerfData, KallsymsNamesTheSmmuFramesAndFails) {
  TempDir t;
  auto spec = perfgap::gen::demo_spec(kSmmu, 80);
  spec.compressed = 83;
  auto data = write_in(t, "rec.data", perfgap::gen::write_perf_data(spec));
  auto ks = write_in(t, "kallsyms", perfgap::gen::demo_kallsyms(kSmmu));
  auto j = json_report(PERFGAP_BINARY, {"analyze", "perf", data, "--kallsyms", ks}, 1);
  auto f = finding(j, "perf.smmu_cmdq");
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)["status"], "fail");
  EXPECT_NEAR((*f)["metrics"]["smmu_cmdq_pct"].get<double>(), 37.5, 1e-9);
  auto s = finding(j, "perf.summary");
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)["status"], "pass");
  EXPECT_EQ((*s)["metrics"]["samples"], 160);
  EXPECT_NEAR((*s)["metrics"]["kernel_pct"].get<double>(), 50, 1e-9);
  EXPECT_NEAR((*s)["metrics"]["top.libc.so.6"].get<double>(), 25, 1e-9);
  // Without symbols (the recording's kernel is not this one): the named findings skip.
  j = json_report(PERFGAP_BINARY, {"analyze", "perf", data}, 0);
  f = finding(j, "perf.smmu_cmdq");
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)["status"], "skip");
  EXPECT_NE((*f)["title"].get<std::string>().find("--kallsyms"), std::string::npos);
  // Standard input, pipe mode.
  spec.pipe = true;
  auto piped = write_in(t, "pipe.data", perfgap::gen::write_perf_data(spec));
  auto r = run_binary("/bin/sh", {"-c", std::string(PERFGAP_BINARY) + " analyze perf - --kallsyms " + ks + " --format json < " + piped});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("\"perf.smmu_cmdq\""), std::string::npos);
}

TEST(AnalyzePerfData, DamagedInputsAndOptions) {
  TempDir t;
  auto good = perfgap::gen::write_perf_data(perfgap::gen::demo_spec(kSmmu, 80));
  auto cut = write_in(t, "cut.data", good.substr(0, good.size() / 2));
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "perf", cut});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find(cut), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("offset"), std::string::npos) << r.err;
  // Next to a good input: an error finding, the good one judged.
  auto ok = write_in(t, "ok.data", good);
  auto j = json_report(PERFGAP_BINARY, {"analyze", "perf", cut, ok}, 1);
  bool error = false;
  for (const auto& f : j["findings"]) error = error || (f["status"] == "error" && f["subject"] == cut);
  EXPECT_TRUE(error);
  // --kallsyms: unreadable or not kallsyms is exit 2; it belongs to analyze perf only.
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"analyze", "perf", ok, "--kallsyms", t.file("missing")}).status, 2);
  auto junk = write_in(t, "junk", "hello\n");
  r = run_binary(PERFGAP_BINARY, {"analyze", "perf", ok, "--kallsyms", junk});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("line 1"), std::string::npos) << r.err;
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"analyze", "turbostat", ok, "--kallsyms", junk}).status, 2);
  // Binary that is not perf.data stays refused.
  auto bin = write_in(t, "bin", std::string("\x7f" "ELF\0\0\0\0\0\0\0\0", 12));
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"analyze", "perf", bin}).status, 2);
}

TEST(AnalyzePerfData, TextInputsGetTheSummaryToo) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "perf", log_fixture("perf/smmu-report.txt")}, 1);
  auto s = finding(j, "perf.summary");
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)["status"], "pass");
  EXPECT_TRUE((*s)["metrics"].contains("kernel_pct"));
}

// perf report --stdio --no-children --sort sym on each real recording perf 6.1 reads: every
// kernel address both leave unresolved ("[k] 0xffff...") has the same self share within 0.5
// points. Named rows are not compared: perf names addresses from this machine's kallsyms
// where it finds no other, which is not the recording's kernel.
TEST(AnalyzePerfData, AgreesWithPerfReportOnUnresolvedKernelAddresses) {
  const std::string perf = perfgap::fixture::find_on_path("perf");
  if (perf.empty()) GTEST_SKIP() << "perf not installed";
  const fs::path dir = fs::path(PERFGAP_SHARED_DIR) / "fixtures/profiles";
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " absent";
  TempDir home;
  int compared = 0, files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    auto name = e.path().filename().string();
    if (name.rfind("quipper_perf.data.", 0) != 0 && name.rfind("linuxperfdata_", 0) != 0) continue;
    auto pr = run_binary(perf, {"report", "--stdio", "--no-children", "--sort", "sym", "-i", e.path().string()}, {{"HOME", home.path()}});
    if (pr.status != 0 || pr.out.find('%') == std::string::npos) continue;  // a format this perf cannot read
    const auto theirs = perf_report_kernel_shares(pr.out, true);
    auto j = json_report(PERFGAP_BINARY, {"analyze", "perf", e.path().string()}, 0);
    auto s = finding(j, "perf.summary");
    ASSERT_TRUE(s) << name;
    ++files;
    for (const auto& [k, v] : (*s)["metrics"].items()) {
      if (k.rfind("top.0x", 0) != 0) continue;
      auto it = theirs.find(k.substr(4));
      if (it == theirs.end()) continue;
      EXPECT_NEAR(v.get<double>(), it->second, 0.5) << name << " " << k;
      ++compared;
    }
  }
  if (files == 0) GTEST_SKIP() << "perf read none of the recordings";
  EXPECT_GT(compared, 5);
}

// A generated recording (attr v7, which perf 6.1 reads) with its kallsyms: perf names the
// kernel frames from the same --kallsyms file, and every named kernel symbol's self share
// agrees with perfgap's within 0.5 points (they are exact here: 37.50 / 12.50).
TEST(AnalyzePerfData, AgreesWithPerfReportOnAGeneratedRecordingWithKallsyms) {
  const std::string perf = perfgap::fixture::find_on_path("perf");
  if (perf.empty()) GTEST_SKIP() << "perf not installed";
  TempDir t;
  auto spec = perfgap::gen::demo_spec(kSmmu, 80);
  spec.attr_size = 128;
  spec.callchains = true;
  for (std::size_t i = 0; i < spec.samples.size(); ++i) spec.samples[i].period = 1 + i % 5;
  auto data = write_in(t, "rec.data", perfgap::gen::write_perf_data(spec));
  auto ks = write_in(t, "kallsyms", perfgap::gen::demo_kallsyms(kSmmu));
  auto pr = run_binary(perf, {"report", "--stdio", "--no-children", "--sort", "sym", "-i", data, "--kallsyms", ks}, {{"HOME", t.path()}});
  if (pr.status != 0) GTEST_SKIP() << "perf report cannot read it: " << pr.err.substr(0, 200);
  const auto theirs = perf_report_kernel_shares(pr.out, false);
  auto j = json_report(PERFGAP_BINARY, {"analyze", "perf", data, "--kallsyms", ks}, 1);
  auto s = finding(j, "perf.summary");
  ASSERT_TRUE(s);
  int compared = 0;
  for (const char* sym : {"arm_smmu_cmdq_issue_cmdlist", "do_syscall_64"}) {
    ASSERT_TRUE(theirs.count(sym)) << sym << "\n" << pr.out;
    EXPECT_NEAR((*s)["metrics"][std::string("top.") + sym].get<double>(), theirs.at(sym), 0.5) << sym;
    ++compared;
  }
  EXPECT_EQ(compared, 2);
}
