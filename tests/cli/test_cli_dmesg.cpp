// check --dmesg FILE with the real binary on the forms a user saves besides stamped dmesg:
// dmesg -t output (no stamps) is read; a syslog file's user-space lines that quote the
// driver's Xid lines are not the kernel's; a file that is no kernel log at all is exit 2 on
// one line naming it, with no report written; an empty file skips the log checks.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "report_json.hpp"

namespace fs = std::filesystem;
using namespace perfgap::hostile;
using perfgap::fixture::finding;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

namespace dmesg_cli {

const std::string kLogChecks = "gpu.xid,gpu.fallen_off_bus";

struct DmesgCli : ::testing::Test {
  TempDir tmp;
  fs::path dir = tmp.path();
  fs::path tree = healthy_tree(dir / "tree");
  std::string file(const std::string& name, const std::string& text) {
    write_file(dir / name, text);
    return (dir / name).string();
  }
  perfgap::fixture::RunResult check(const std::string& dmesg, const std::vector<std::string>& more = {}) {
    std::vector<std::string> args = {"check", "--root", tree.string(), "--dmesg", dmesg, "--only", kLogChecks, "--format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    return run_binary(PERFGAP_BINARY, args);
  }
};

}  // namespace dmesg_cli

using dmesg_cli::DmesgCli;
using dmesg_cli::kLogChecks;

TEST_F(DmesgCli, StamplessDmesgIsReadAsTheKernelLog) {
  std::string text;
  for (int i = 0; i < 3; ++i)
    text += "NVRM: Xid (PCI:0000:3b:00): 119, pid=4242, name=python3, Timeout after 6s of waiting for RPC response from GPU1 GSP!\n"
            "NVRM: GPU1 GSP RPC buffer contains function 103 (GSP_RM_ALLOC)\n";
  auto r = check(file("notime.log", text));
  ASSERT_EQ(r.status, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto* xid = finding(j, "gpu.xid");
  ASSERT_NE(xid, nullptr);
  EXPECT_EQ((*xid)["status"], "fail") << r.out;
  EXPECT_NE((*xid)["title"].get<std::string>().find("Xid 119 x3"), std::string::npos) << (*xid)["title"];
}

TEST_F(DmesgCli, DaemonsQuotingXidsInSyslogAreNotKernelEvents) {
  auto r = check(file("syslog.log",
                      "Mar 14 09:12:01 node-a kernel: [ 912.500000] NVRM: Xid (PCI:0000:3b:00): 119, pid=4242, name=python3, "
                      "Timeout after 6s of waiting for RPC response from GPU1 GSP!\n"
                      "Mar 14 09:12:02 node-a healthd[7001]: saw line=\"NVRM: Xid (PCI:0000:3b:00): 119, pid=4242\"\n"
                      "Mar 14 09:12:02 node-a nvidia-persistenced[1180]: NVRM: Xid (PCI:0000:3b:00): 119, quoted\n"
                      "2026-03-14T09:12:03+0000 node-a healthd[7001]: injecting \"NVRM: Xid (PCI:0000:86:00): 79, GPU has fallen off "
                      "the bus\"\n"));
  ASSERT_EQ(r.status, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto* xid = finding(j, "gpu.xid");
  ASSERT_NE(xid, nullptr);
  EXPECT_NE((*xid)["title"].get<std::string>().find("Xid 119 x1"), std::string::npos) << (*xid)["title"];
  const auto* fob = finding(j, "gpu.fallen_off_bus");
  ASSERT_NE(fob, nullptr);
  EXPECT_EQ((*fob)["status"], "pass") << (*fob)["title"];
}

TEST_F(DmesgCli, AFileThatIsNoKernelLogIsExit2AndWritesNothing) {
  const auto lspci = file("lspci.txt", "3b:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
                                       "\tSubsystem: NVIDIA Corporation Device 16c1\n"
                                       "\tKernel driver in use: nvidia\n\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n");
  const auto fm = file("fabricmanager.log", "[Mar 14 2026 09:12:01] [INFO] [tid 1929] Fabric Manager version is : 550.54.15\n"
                                            "[Mar 14 2026 09:12:02] [ERROR] [tid 1929] detected NVSwitch fatal error 20034 on fid 0\n");
  const auto daemons = file("daemons.log", "Mar 14 09:12:02 node-a healthd[7001]: saw \"NVRM: Xid (PCI:0000:3b:00): 79\"\n");
  for (const auto& f : {lspci, fm, daemons}) {
    const auto out = (dir / "report.json").string();
    auto r = check(f, {"--output", out});
    EXPECT_EQ(r.status, 2) << f << ": " << r.out;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_EQ(r.err.find("perfgap: --dmesg " + f + ": not a kernel log: "), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(fs::exists(out)) << f;
  }
  // Refused whichever checks run: the option names a file that cannot stand for the log.
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", tree.string(), "--dmesg", lspci, "--only", "cpu.governor"});
  EXPECT_EQ(r.status, 2) << r.out;
}

TEST_F(DmesgCli, AnEmptyFileSkipsTheLogChecks) {
  auto r = check(file("empty.log", "\n"));
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto* xid = finding(j, "gpu.xid");
  ASSERT_NE(xid, nullptr);
  EXPECT_EQ((*xid)["status"], "skip");
  EXPECT_NE((*xid)["title"].get<std::string>().find("empty"), std::string::npos) << (*xid)["title"];
}
