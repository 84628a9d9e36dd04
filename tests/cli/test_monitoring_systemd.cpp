// packaging/systemd (the .deb's perfgap.service and perfgap.timer, docs/MONITORING.md) is what
// systemd accepts: `systemd-analyze verify` says nothing about either (any warning fails), and
// `systemd-analyze security` rates the service's sandbox at most 5.0 ("OK"). Both run offline
// on a root made here (this machine's unit directory, the two units, an executable at
// /usr/bin/perfgap); the installed units naming the real /usr/bin/perfgap are verified by
// tools/release-check.sh's package step. systemd-analyze comes with Debian's systemd package
// (tools/setup-debian.sh --test); without it these tests skip, except under CI (CI=true).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;

namespace {

std::string systemd_unit_text(const std::string& name) {
  std::ifstream in(fs::path(PERFGAP_SOURCE_DIR) / "packaging/systemd" / name);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Key=value lines of a unit (comments left out); a key given twice keeps both, joined by '\n'.
std::map<std::string, std::string> systemd_unit_keys(const std::string& text) {
  std::map<std::string, std::string> keys;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#' || line[0] == '[') continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    auto& v = keys[line.substr(0, eq)];
    v += (v.empty() ? "" : "\n") + line.substr(eq + 1);
  }
  return keys;
}

class SystemdUnits : public ::testing::Test {
 protected:
  void SetUp() override {
    analyze_ = perfgap::fixture::find_on_path("systemd-analyze");
    if (analyze_.empty()) {
      const char* ci = std::getenv("CI");
      if (ci && std::string(ci) == "true") FAIL() << "CI must have systemd-analyze (tools/setup-debian.sh --test)";
      GTEST_SKIP() << "systemd-analyze not found: run tools/setup-debian.sh --test (Debian's systemd)";
    }
    const fs::path system_units = "/usr/lib/systemd/system";
    if (!fs::exists(system_units / "timers.target")) GTEST_SKIP() << "no systemd unit directory at " << system_units;
    root_ = fs::path(tmp_.path()) / "root";
    units_ = root_ / "usr/lib/systemd/system";
    fs::create_directories(root_ / "usr/bin");
    fs::create_directories(units_.parent_path());
    // The targets and slices perfgap's units are ordered after, as this machine has them.
    fs::copy(system_units, units_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    // verify checks that ExecStart= names an executable in the root; which one is the
    // package step's concern.
    std::ofstream(root_ / "usr/bin/perfgap") << "#!/bin/sh\n";
    fs::permissions(root_ / "usr/bin/perfgap", fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read | fs::perms::group_exec | fs::perms::others_exec);
    for (const char* u : {"perfgap.service", "perfgap.timer"}) std::ofstream(units_ / u) << systemd_unit_text(u);
  }
  perfgap::fixture::RunResult verify() {
    return run_binary(analyze_, {"verify", "--man=no", "--root=" + root_.string(), "perfgap.timer", "perfgap.service"});
  }
  std::string analyze_;
  perfgap::fixture::TempDir tmp_;
  fs::path root_, units_;
};

TEST_F(SystemdUnits, VerifyIsSilent) {
  auto r = verify();
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out + r.err, "") << "systemd-analyze verify warns";
}

TEST_F(SystemdUnits, VerifyCatchesABrokenUnit) {
  // What the silent verify above would say about a mistake: an unknown value and a bad timer.
  std::ofstream(units_ / "perfgap.service") << std::regex_replace(systemd_unit_text("perfgap.service"), std::regex("ProtectSystem=strict"), "ProtectSystem=stricter");
  std::ofstream(units_ / "perfgap.timer") << std::regex_replace(systemd_unit_text("perfgap.timer"), std::regex("OnCalendar=.*"), "OnCalendar=every 15 minutes");
  auto r = verify();
  EXPECT_NE(r.out + r.err, "");
  EXPECT_NE((r.out + r.err).find("stricter"), std::string::npos) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("calendar"), std::string::npos) << r.out << r.err;
}

TEST_F(SystemdUnits, SandboxRatedOkBySystemdAnalyzeSecurity) {
  // --threshold=50: exit status non-zero when the exposure is above 5.0 (of 10).
  auto r = run_binary(analyze_, {"security", "--offline=yes", "--root=" + root_.string(), "--threshold=50", "perfgap.service"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Overall exposure level for perfgap.service"), std::string::npos) << r.out << r.err;
}

TEST(SystemdUnitText, ScheduleSandboxAndOutputAgree) {
  const auto service = systemd_unit_keys(systemd_unit_text("perfgap.service"));
  const auto timer = systemd_unit_keys(systemd_unit_text("perfgap.timer"));
  // Every 15 minutes, each node at its own fixed offset, idle priority.
  EXPECT_EQ(timer.at("OnCalendar"), "*:0/15");
  EXPECT_TRUE(timer.count("RandomizedDelaySec"));
  EXPECT_EQ(timer.at("FixedRandomDelay"), "yes");
  EXPECT_EQ(timer.at("WantedBy"), "timers.target");
  EXPECT_EQ(service.at("Type"), "oneshot");
  EXPECT_EQ(service.at("IOSchedulingClass"), "idle");
  EXPECT_EQ(service.at("Nice"), "19");
  EXPECT_EQ(service.at("SuccessExitStatus"), "1");  // a run that found a `fail` wrote its file
  // Read-only but for the textfile directory, which is the directory the run writes into.
  EXPECT_EQ(service.at("ProtectSystem"), "strict");
  EXPECT_EQ(service.at("ProtectHome"), "read-only");
  EXPECT_EQ(service.at("NoNewPrivileges"), "yes");
  EXPECT_EQ(service.at("PrivateTmp"), "yes");
  std::smatch m;
  const std::string exec = service.at("ExecStart");
  ASSERT_TRUE(std::regex_match(exec, m, std::regex(R"(/usr/bin/perfgap check --history /var/lib/perfgap/history --format prometheus --output (\S+)/[^/ ]+\.prom)"))) << exec;
  EXPECT_EQ(service.at("ReadWritePaths"), m[1].str());
  EXPECT_EQ(service.at("StateDirectory"), "perfgap");  // the history's /var/lib/perfgap
}

}  // namespace
