// Credentials hidden inside values whatever the variable is called (and names ending in
// _PAT, PASS, AUTH), in reports and in snapshot environments.
#include <gtest/gtest.h>

#include <string>

#include "report/redact.hpp"

using namespace perfgap;
using namespace perfgap::report;

TEST(RedactHostile, NamesEndingInPatPassOrAuthAreSecret) {
  for (auto n : {"GITHUB_PAT", "SSHPASS", "AUTH", "NPM_AUTH", "MYSQL_PASS", "PAT", "HTTP_AUTHORIZATION", "gitlab_pat"})
    EXPECT_TRUE(secret_name(n)) << n;
  for (auto n : {"NCCL_IB_PKEY", "PATH", "PATCH_LEVEL", "UCX_BYPASS", "NCCL_NET_PLUGIN", "COMPASS_DIR_X", "AUTHOR_NAME"})
    EXPECT_FALSE(secret_name(n)) << n;
}

TEST(RedactHostile, ValuesThatCarryCredentials) {
  for (auto v : {"--lr 1 --password=hunter2", "postgres://u:p@h/db", "Bearer abc", "Authorization: Basic QWxhZGRpbjpvcGVu",
                 "--token abc", "--api-key=abc", "password=hunter2 user=x", "https://h/x?access_token=abc&y=1",
                 "X-Auth-Token: abc", "git clone https://oauth2:glpat-x@gitlab/x.git", "basic QWxhZGRpbjpvcGVu", "-p --secret s"})
    EXPECT_TRUE(secret_value(v)) << v;
  for (auto v : {"mlx5_0:1,mlx5_1:1", "eth0", "0,1,2,3", "http://host:8080/path", "ssh://user@host/repo", "--lr 1 --epochs 3",
                 "Basic mode", "INFO", "/etc/nccl/topo.xml", "--token", "--token --next", "", "password=", "1.2.3"})
    EXPECT_FALSE(secret_value(v)) << v;
}

TEST(RedactHostile, OneRuleForNamesAndValues) {
  EXPECT_EQ(redact("NCCL_DEBUG", "INFO"), "INFO");
  EXPECT_EQ(redact("NCCL_NET_ARGS", "--token abc"), "<redacted>");
  EXPECT_EQ(redact("GITHUB_PAT", "x"), "<redacted>");
  auto m = audited_environment({{"NCCL_IB_HCA", "mlx5_0"}, {"SLURM_DB_URL", "mysql://slurm:pw@db/acct"}, {"TRAIN_ARGS", "--password=x"}});
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m["NCCL_IB_HCA"], "mlx5_0");
  EXPECT_EQ(m["SLURM_DB_URL"], "<redacted>");
}

TEST(RedactHostile, SnapshotEnvironmentsLoseCredentialsInValues) {
  std::string env = std::string("TRAIN_ARGS=--lr 1 --password=hunter2") + '\0' + "DATABASE_URL=postgres://u:p@h/db" + '\0' +
                    "GITHUB_PAT=x" + '\0' + "SSHPASS=x" + '\0' + "AUTH=Bearer abc" + '\0' + "LOCAL_RANK=0" + '\0' +
                    "HOME=/root" + '\0' + "NCCL_IB_HCA=mlx5_0:1" + '\0';
  const std::string out = report::redact_environ(env);
  const std::string want = std::string("TRAIN_ARGS=<redacted>") + '\0' + "DATABASE_URL=<redacted>" + '\0' + "GITHUB_PAT=<redacted>" +
                           '\0' + "SSHPASS=<redacted>" + '\0' + "AUTH=<redacted>" + '\0' + "LOCAL_RANK=0" + '\0' + "HOME=/root" +
                           '\0' + "NCCL_IB_HCA=mlx5_0:1" + '\0';
  EXPECT_EQ(out, want);
}

// Issue 42: "pass:" is perfgap's status word, not a password header. Every compare.fixed title
// ("fixed: fail -> pass: TITLE") and every before/after evidence line ("pass: TITLE") was cut
// at "pass:" and showed "<redacted>" instead of the new state.
TEST(RedactHostile, StatusWordsBeforeAColonAreNotHeaders) {
  for (std::string t : {"fixed: fail -> pass: busy cores run at 3800 MHz, 100% of the rated 3800 MHz", "pass: idle cores reach deep C-states",
                        "better but not fixed: fail -> warn: x", "PASS: x", "Pass: all 8 GPUs", "still warn: x", "error: y", "skip: z"})
    EXPECT_EQ(redact_text(t), t) << t;
  // The same shapes with a credential's name are still headers, and the other forms of "pass" still options.
  for (std::string t : {"password: hunter2", "db_pass: hunter2", "SSHPASS: hunter2", "X-Auth-Token: hunter2", "Private-Token: hunter2",
                        "--pass hunter2", "--pass=hunter2", "pass=hunter2", "fixed: fail -> pass: ok; password: hunter2"}) {
    const auto out = redact_text(t);
    EXPECT_EQ(out.find("hunter2"), std::string::npos) << t << " -> " << out;
    EXPECT_NE(out.find(kRedacted), std::string::npos) << t;
  }
  EXPECT_EQ(redact_text("fixed: fail -> pass: ok; password: hunter2"), "fixed: fail -> pass: ok; password: <redacted>");
}

// A catalogue name in parentheses before a colon ("Xid 151 (ROBUST_CHANNEL_KEY_ROTATION_ERROR):
// resolution RESTART_VM") is a sentence, not a header: found by the every-fixture-case
// redaction property. A bare header of that name is still one.
TEST(RedactHostile, AParenthesizedNameBeforeAColonIsNoHeader) {
  const std::string t = "Xid 151 (ROBUST_CHANNEL_KEY_ROTATION_ERROR): resolution RESTART_VM";
  EXPECT_EQ(redact_text(t), t);
  EXPECT_EQ(redact_text("API_KEY: hunter2"), "API_KEY: " + std::string(kRedacted));
}
