// Issue 28 with the real binary: nsys export of a hostile .nsys-rep (its name, a signal while
// it runs), report readers given numbers beyond double's range, snapshot of names that are not
// UTF-8, credentials quoted by any check, Kineto bombs. Inputs are generated here; each case is
// one line naming the file and exit 2, or the right answer, within a second and under 200 MB.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "hostile_support.hpp"
#include "profile_gen.hpp"
#include "run.hpp"

namespace fs = std::filesystem;
using namespace perfgap::hostile;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_in;

namespace {

using Clock = std::chrono::steady_clock;

struct Outcome {
  int status = -1;
  long max_rss_kb = 0;
  double seconds = 0;
  std::string err;
};

// perfgap ARGS with `env` added, stderr captured, its peak RSS (wait4).
Outcome run_measured(const std::vector<std::string>& args, const std::vector<std::pair<std::string, std::string>>& env = {}) {
  Outcome o;
  TempDir tmp;
  const std::string err_path = tmp.file("err");
  auto t0 = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    int out = ::open("/dev/null", O_WRONLY);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, 1);
    ::dup2(err, 2);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv{const_cast<char*>(PERFGAP_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(PERFGAP_BINARY, argv.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage ru {};
  ::wait4(pid, &status, 0, &ru);
  o.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.max_rss_kb = ru.ru_maxrss;
  o.err = read_file(err_path);
  return o;
}

// A report (as check --format json writes it) with `metrics` as the first finding's metrics text.
std::string report_with_metrics(const std::string& metrics) {
  return R"({"schema": "perfgap.report/1", "tool": {"name": "perfgap", "version": "0"}, "generated_at": "2026-01-01T00:00:00Z",
  "source": {"kind": "root", "root": "/t", "inputs": []},
  "node": {"name": "n1", "hostname": "n1", "arch": "x86_64", "kernel": "6.1", "virtualized": false, "container": "none",
           "settings": {}, "environment": {"NCCL_DEBUG": "INFO"}, "nccl_conf": {}},
  "summary": {"pass": 0, "warn": 1, "fail": 0, "skip": 0, "error": 0},
  "findings": [{"id": "cpu.governor", "layer": "cpu_power", "status": "warn", "title": "t", "evidence": [], "fix": "", "impact": "",
                "metrics": )" + metrics + "}]}\n";
}

}  // namespace

// ---- report readers: out-of-range numbers, invalid UTF-8, wrong types ------------------------

TEST(HostileReaders, NumbersBeyondDoubleAreAOneLineErrorNamingTheFile) {
  TempDir d;
  auto good = write_in(d, "good.json", report_with_metrics(R"({"capped_cpus": 1})"));
  const std::vector<std::pair<std::string, std::string>> bad_reports = {
      {"huge.json", report_with_metrics(R"({"capped_cpus": 1e400})")},
      {"utf8.json", report_with_metrics("{\"capped\xff\": 1}")},
      {"types.json", R"({"schema": "perfgap.report/1", "source": {"kind": 7}, "findings": {"id": []}, "node": []})"}};
  for (const auto& [name, text] : bad_reports) {
    auto bad = write_in(d, name, text);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"compare", good, bad}, std::vector<std::string>{"compare", bad, good}}) {
      auto r = run_binary(PERFGAP_BINARY, args);
      EXPECT_EQ(r.status, 2) << name << ": " << r.err;
      EXPECT_TRUE(one_line(r.err)) << r.err;
      EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
    }
    auto f = run_binary(PERFGAP_BINARY, {"fleet", good, bad, "--format", "json"});
    EXPECT_EQ(f.err.find("internal error"), std::string::npos) << f.err;
    EXPECT_LE(f.status, 2) << f.err;
  }
  // check --baseline: the same one line, before any check runs.
  auto tree = healthy_tree(fs::path(d.path()) / "tree");
  auto huge = write_in(d, "baseline.json", report_with_metrics(R"({"x": -1e400})"));
  auto b = run_binary(PERFGAP_BINARY, {"check", "--root", tree.string(), "--baseline", huge});
  EXPECT_EQ(b.status, 2) << b.err;
  EXPECT_TRUE(one_line(b.err)) << b.err;
  EXPECT_EQ(b.err.find("internal error"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find(huge), std::string::npos) << b.err;
  auto deep = write_in(d, "deep.json", std::string(100000, '[') + std::string(100000, ']'));
  b = run_binary(PERFGAP_BINARY, {"check", "--root", tree.string(), "--baseline", deep});
  EXPECT_EQ(b.status, 2) << b.err;
  EXPECT_NE(b.err.find("nested deeper than 64 levels"), std::string::npos) << b.err;
}

TEST(HostileReaders, ExplainMakesTheOutOfRangeReportAnErrorFindingAndReadsTheOther) {
  TempDir d;
  auto tree = healthy_tree(fs::path(d.path()) / "tree");
  auto check = run_binary(PERFGAP_BINARY, {"check", "--root", tree.string(), "--format", "json"});
  ASSERT_LE(check.status, 1) << check.err;
  auto good = write_in(d, "good.json", check.out);
  auto bad = write_in(d, "bad.json", report_with_metrics(R"({"capped_cpus": 1e400})"));
  auto r = run_binary(PERFGAP_BINARY, {"explain", "--reference", "880", "--measured", "1000", good, bad, "--format", "json"});
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  ASSERT_LE(r.status, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  bool error_for_bad = false, budget = false;
  for (const auto& f : j["findings"]) {
    if (f["status"] == "error" && f.value("subject", "") == bad) error_for_bad = true;
    if (f["id"] == "gap.budget" && f["status"] != "error") budget = true;
  }
  EXPECT_TRUE(error_for_bad) << r.out;
  EXPECT_TRUE(budget) << r.out;
}

// ---- snapshot of names that are not UTF-8 ------------------------------------------------------

TEST(HostileReaders, SnapshotOfInvalidUtf8HostnameAndRootIsWritten) {
  TempDir d;
  auto tree = healthy_tree(fs::path(d.path()) / "tree\xff");
  write_file(tree / "proc/sys/kernel/hostname", "gpu\xff" "17\n");
  const fs::path out = fs::path(d.path()) / "snap.tar.gz";
  auto r = run_binary(PERFGAP_BINARY, {"snapshot", "--root", tree.string(), out.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  ASSERT_TRUE(fs::exists(out));
  // The snapshot replays.
  auto c = run_binary(PERFGAP_BINARY, {"check", "--root", out.string(), "--format", "json"});
  EXPECT_LE(c.status, 1) << c.err;
}

// ---- credentials quoted by any check, in every format ---------------------------------------

TEST(HostileReaders, NcclDeviceSettingsWithCredentialsAreRedactedInEveryFormat) {
  for (const std::string value : {"--token SECRET1", "Bearer SECRET1", "https://u:SECRET1@h/x"}) {
    TempDir d;
    auto tree = healthy_tree(fs::path(d.path()) / "tree");
    write_file(tree / "proc/1000/environ", env_block({"LOCAL_RANK=0", "NCCL_SOCKET_IFNAME=" + value, "NCCL_IB_HCA=" + value}));
    for (const auto& format : kFormats) {
      auto r = run_binary(PERFGAP_BINARY, {"check", "--root", tree.string(), "--format", format, "-v", "--only", "nccl.env.devices"});
      ASSERT_LE(r.status, 1) << r.err;
      EXPECT_NE(r.out.find("nccl.env.devices"), std::string::npos) << format;
      EXPECT_EQ(r.out.find("SECRET1"), std::string::npos) << format << " shows the credential of " << value << ":\n" << r.out;
    }
  }
}

// ---- nsys export of a .nsys-rep --------------------------------------------------------------

namespace {

// A directory with bin/nsys: a stand-in that logs its arguments, then runs `body`.
std::string fake_nsys(const TempDir& d, const std::string& body) {
  fs::create_directories(d.path() + "/bin");
  auto script = write_in(d, "bin/nsys", "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '" + d.path() + "/args'\n" + body);
  ::chmod(script.c_str(), 0755);
  return d.path() + "/bin:/usr/bin:/bin";
}

}  // namespace

TEST(HostileReaders, NsysRepNamedLikeAnOptionIsPassedAbsoluteAfterDoubleDash) {
  TempDir d;
  auto src = d.file("src.sqlite");
  ASSERT_EQ(perfgap::gen::write_nsys_sqlite(perfgap::gen::exposed_comm(1, 3, 30, 15), src), "");
  auto path = fake_nsys(d, "while [ $# -gt 1 ]; do [ \"$1\" = --output ] && out=$2; shift; done\ncp '" + src + "' \"$out\"\n");
  fs::create_directories(d.path() + "/work");
  write_in(d, "work/--output=evil.nsys-rep", std::string("NVIDIA Nsight Systems Report\n") + std::string(100, '\x01'));
  auto r = run_binary("/bin/sh", {"-c", "cd '" + d.path() + "/work' && exec '" + PERFGAP_BINARY + "' analyze nsys --format json -- --output=evil.nsys-rep"},
                      {{"PATH", path}});
  EXPECT_LE(r.status, 1) << r.err;
  auto args = read_file(d.path() + "/args");
  auto dashes = args.find("\n--\n");
  ASSERT_NE(dashes, std::string::npos) << args;
  EXPECT_EQ(args.substr(dashes + 4), d.path() + "/work/--output=evil.nsys-rep\n") << args;
  EXPECT_EQ(args.find("\n--output=evil"), std::string::npos) << args;
  EXPECT_FALSE(fs::exists(d.path() + "/work/evil.nsys-rep"));
}

TEST(HostileReaders, SigtermDuringNsysExportStopsNsysAndRemovesTheTempDir) {
  TempDir d;
  auto path = fake_nsys(d, "echo $$ > '" + d.path() + "/nsys.pid'\nexec sleep 30\n");
  auto rep = write_in(d, "run.nsys-rep", std::string("NVIDIA Nsight Systems Report\n") + std::string(100, '\x01'));
  fs::create_directories(d.path() + "/tmp");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("PATH", path.c_str(), 1);
    ::setenv("TMPDIR", (d.path() + "/tmp").c_str(), 1);
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(PERFGAP_BINARY, PERFGAP_BINARY, "analyze", "nsys", rep.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait (up to 20 s, on a loaded machine) for the stand-in to have started.
  const std::string pid_file = d.path() + "/nsys.pid";
  for (int i = 0; i < 2000 && (!fs::exists(pid_file) || read_file(pid_file).empty()); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(pid_file));
  const pid_t nsys = std::stoi(read_file(pid_file));
  ASSERT_EQ(entries_of(d.path() + "/tmp").size(), 1u);  // perfgap-nsys.XXXXXX
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_TRUE(entries_of(d.path() + "/tmp").empty());
  // nsys was stopped and reaped by perfgap: no such process (or, at most, a zombie of init's).
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    std::string stat = read_file("/proc/" + std::to_string(nsys) + "/stat");
    gone = stat.empty() || stat.find(") Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "nsys (pid " << nsys << ") still runs";
  if (!gone) ::kill(nsys, SIGKILL);
}

// ---- Kineto bombs, through the CLI ---------------------------------------------------------

TEST(HostileReaders, KinetoNestingAndDeviceBombsStayUnder200MB) {
  TempDir d;
  // 40 M '[' after an empty traceEvents (RapidJSON kept 8 bytes a level: 320 MB).
  std::string deep = R"({"traceEvents":[],"x":)" + std::string(40'000'000, '[');
  auto deep_gz = write_in(d, "deep.json.gz", perfgap::fixture::gzip_text(deep));
  deep.clear();
  deep.shrink_to_fit();
  auto r = run_measured({"analyze", "kineto", deep_gz});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find(deep_gz), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nested deeper than 1000 levels"), std::string::npos) << r.err;
  EXPECT_LT(r.max_rss_kb, 200 * 1024);
  // 200,000 kernels, each on its own device.
  std::string many = R"({"traceEvents":[)";
  for (int k = 0; k < 200'000; ++k)
    many += (k ? ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":" : "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":") + std::to_string(k) +
            ",\"dur\":1,\"args\":{\"device\":" + std::to_string(k) + "}}";
  many += "]}";
  auto many_gz = write_in(d, "many.json.gz", perfgap::fixture::gzip_text(many));
  many.clear();
  many.shrink_to_fit();
  r = run_measured({"analyze", "kineto", many_gz});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("more than 1024 distinct GPU devices"), std::string::npos) << r.err;
  EXPECT_LT(r.max_rss_kb, 200 * 1024);
  EXPECT_LT(r.seconds, 10.0);  // a hang or a quadratic path, not a benchmark
}
