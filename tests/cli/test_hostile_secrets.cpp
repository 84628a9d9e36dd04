// Credentials inside values, with the real binary: no report format and no snapshot file
// shows them, whatever the variable is called.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap::hostile;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

namespace {

// --- 4. Secrets --------------------------------------------------------------------------

TEST(HostileSecrets, CredentialsInValuesNeverReachReportsOrSnapshots) {
  TempDir tmp;
  auto tree = healthy_tree(fs::path(tmp.path()) / "tree");
  write_file(tree / "proc/1000/environ",
             env_block({"SLURMD_NODENAME=gpu001", "LOCAL_RANK=0", "TRAIN_ARGS=--lr 1 --password=hunter2",
                        "DATABASE_URL=postgres://u:pw0rd@h/db", "GITHUB_PAT=ghp_s3cr3t", "SSHPASS=sshs3cr3t",
                        "AUTH=Bearer abc-bearer-tok", "NCCL_NET_ARGS=--token tok-in-nccl", "SLURM_DB_URL=mysql://slurm:slurmpw@db/acct",
                        "NCCL_PROXY_AUTH=Bearer nccl-bearer", "NCCL_DEBUG=INFO"}));
  const std::vector<std::string> secrets = {"hunter2", "pw0rd", "ghp_s3cr3t", "sshs3cr3t", "abc-bearer-tok", "tok-in-nccl", "slurmpw", "nccl-bearer"};
  for (const auto& format : kFormats) {
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", tree.string(), "--format", format, "-v"});
    ASSERT_LE(r.status, 1) << r.err;
    for (const auto& s : secrets) EXPECT_EQ(r.out.find(s), std::string::npos) << format << " shows " << s;
  }
  auto json = nlohmann::json::parse(run_binary(PERFGAP_BINARY, {"check", "--root", tree.string(), "--format", "json"}).out);
  EXPECT_EQ(json["node"]["environment"]["NCCL_NET_ARGS"], "<redacted>");
  EXPECT_EQ(json["node"]["environment"]["SLURM_DB_URL"], "<redacted>");
  EXPECT_EQ(json["node"]["environment"]["NCCL_DEBUG"], "INFO");
  const fs::path snap = fs::path(tmp.path()) / "snap";
  auto s = run_binary(PERFGAP_BINARY, {"snapshot", "--root", tree.string(), snap.string()});
  ASSERT_EQ(s.status, 0) << s.err;
  const std::string env = read_file(snap / "proc/1000/environ");
  ASSERT_NE(env.find("LOCAL_RANK=0"), std::string::npos) << "the environment was not captured";
  for (const char* redacted : {"TRAIN_ARGS=<redacted>", "DATABASE_URL=<redacted>", "GITHUB_PAT=<redacted>", "SSHPASS=<redacted>", "AUTH=<redacted>"})
    EXPECT_NE(env.find(std::string(redacted) + '\0'), std::string::npos) << redacted;
  for (const auto& e : fs::recursive_directory_iterator(snap)) {
    if (e.is_symlink() || !e.is_regular_file()) continue;
    auto text = read_file(e.path());
    for (const auto& secret : secrets) EXPECT_EQ(text.find(secret), std::string::npos) << e.path() << " holds " << secret;
  }
}

}  // namespace
