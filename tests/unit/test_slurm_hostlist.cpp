#include <gtest/gtest.h>

#include <algorithm>

#include "slurm/fanout.hpp"
#include "parsers/hostlist.hpp"
#include "slurm/locate.hpp"

namespace perfgap::slurm {
namespace {

using parsers::compress_hostlist;
using parsers::compress_hostlist_fit;
using parsers::expand_hostlist;

using Names = std::vector<std::string>;

TEST(SlurmHostlist, RangesListsAndPadding) {
  EXPECT_EQ(*expand_hostlist("n[1-4]"), (Names{"n1", "n2", "n3", "n4"}));
  EXPECT_EQ(*expand_hostlist("gpu[008-010,012],login1"), (Names{"gpu008", "gpu009", "gpu010", "gpu012", "login1"}));
  EXPECT_EQ(*expand_hostlist("a[1-2]-ib[0-1]"), (Names{"a1-ib0", "a1-ib1", "a2-ib0", "a2-ib1"}));
  EXPECT_EQ(*expand_hostlist("single"), (Names{"single"}));
  EXPECT_TRUE(expand_hostlist("")->empty());
}

TEST(SlurmHostlist, MalformedListsAreErrorsNamingThePart) {
  for (const char* bad : {"n[1-4", "n]1", "n[]", "n[4-1]", "n[a-b]", "n[1-999999999999]"}) {
    auto r = expand_hostlist(bad);
    EXPECT_FALSE(r.has_value()) << bad;
  }
  EXPECT_NE(expand_hostlist("n[1-4").error().find("unclosed"), std::string::npos);
}

TEST(SlurmHostlist, TooManyNamesIsAnError) {
  EXPECT_FALSE(expand_hostlist("n[0-999][0-999]").has_value());
}

TEST(SlurmLocate, NodePlaceholderAndSlurmdConfigArgument) {
  EXPECT_EQ(expand_node("/trees/{node}/x-{node}", "n3"), "/trees/n3/x-n3");
  EXPECT_EQ(expand_node("/etc/perfgap/config.yaml", "n3"), "/etc/perfgap/config.yaml");
  EXPECT_EQ(conf_from_slurmd_args({"slurmd", "-D", "-N", "n1", "-f", "/tmp/s.conf"}), "/tmp/s.conf");
  EXPECT_EQ(conf_from_slurmd_args({"/usr/sbin/slurmd", "-f/etc/x.conf"}), "/etc/x.conf");
  EXPECT_FALSE(conf_from_slurmd_args({"slurmd", "-D", "--conf-server", "ctl"}).has_value());
}

TEST(SlurmFanout, SrunCommandRunsOneNodeTaskPerNode) {
  FanoutPlan plan;
  plan.srun = "/usr/bin/srun";
  plan.perfgap = "/opt/perfgap/bin/perfgap";
  plan.report_dir = "/shared/r";
  plan.nodes = {"n1", "n2"};
  plan.nodelist = "n[1-2]";
  plan.check_args = {"--root", "/trees/{node}"};
  auto cmd = build_srun_command(plan);
  Names expected = {"/usr/bin/srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--nodelist=n[1-2]",
                    "--kill-on-bad-exit=0", "--job-name=perfgap-fanout", "/opt/perfgap/bin/perfgap", "fanout",
                    "--node-task", "--report-dir", "/shared/r", "--", "--root", "/trees/{node}"};
  EXPECT_EQ(cmd, expected);
}

TEST(SlurmFanout, ContainerImageMountsTheBinaryAndTheReportDirectory) {
  FanoutPlan plan;
  plan.perfgap = "/opt/perfgap/bin/perfgap";
  plan.report_dir = "/shared/r";
  plan.nodes = {"n1"};
  plan.nodelist = "n1";
  plan.container_image = "nvcr.io#nvidia/pytorch:24.05-py3";
  plan.container_mounts = "/data:/data:ro";
  auto cmd = build_srun_command(plan);
  EXPECT_NE(std::find(cmd.begin(), cmd.end(), "--container-image=nvcr.io#nvidia/pytorch:24.05-py3"), cmd.end());
  EXPECT_NE(std::find(cmd.begin(), cmd.end(),
                      "--container-mounts=/opt/perfgap/bin/perfgap:/opt/perfgap/bin/perfgap:ro,/shared/r:/shared/r,/data:/data:ro"),
            cmd.end());
  plan.container_perfgap = "/usr/local/bin/perfgap";
  cmd = build_srun_command(plan);
  EXPECT_NE(std::find(cmd.begin(), cmd.end(), "--container-mounts=/shared/r:/shared/r,/data:/data:ro"), cmd.end());
  EXPECT_NE(std::find(cmd.begin(), cmd.end(), "/usr/local/bin/perfgap"), cmd.end());
}

TEST(SlurmFanout, CheckArgumentsFanoutOwnsAreRefused) {
  EXPECT_TRUE(validate_check_args({"--root", "/x", "--only", "cpu.*"}).has_value());
  EXPECT_FALSE(validate_check_args({"--format", "text"}).has_value());
  EXPECT_FALSE(validate_check_args({"--output=/tmp/x"}).has_value());
  EXPECT_EQ(report_path("/r/", "n1"), "/r/n1.json");
}

TEST(SlurmHostlist, CompressRangesKeepingPadding) {
  EXPECT_EQ(compress_hostlist({"n001", "n002", "n003", "n005", "n017", "n016"}), "n[001-003,005,016-017]");
  EXPECT_EQ(compress_hostlist({"n8", "n9", "n10", "n11"}), "n[8-11]");
  EXPECT_EQ(compress_hostlist({"n08", "n09", "n10"}), "n[08-10]");
  EXPECT_EQ(compress_hostlist({"gpu017"}), "gpu017");
  EXPECT_EQ(compress_hostlist({}), "");
}

TEST(SlurmHostlist, CompressMixedPrefixesLiteralsAndDuplicates) {
  EXPECT_EQ(compress_hostlist({"login", "b2", "a1", "a2", "b1", "a1", "gpu-x"}), "a[1-2],b[1-2],gpu-x,login");
  // Different padding of one number stays apart.
  EXPECT_EQ(compress_hostlist({"n1", "n01", "n02"}), "n[1,01-02]");
  // More than 9 digits: literal, so the list expands back.
  EXPECT_EQ(compress_hostlist({"x12345678901", "x12345678902"}), "x12345678901,x12345678902");
}

TEST(SlurmHostlist, CompressThousandsOfNodesStayShort) {
  std::vector<std::string> names;
  for (int i = 1; i <= 1000; ++i)
    if (i != 17) names.push_back("gpu" + std::string(i < 10 ? "000" : i < 100 ? "00" : i < 1000 ? "0" : "") + std::to_string(i));
  std::vector<std::string_view> views(names.begin(), names.end());
  EXPECT_EQ(compress_hostlist(views), "gpu[0001-0016,0018-1000]");
}

TEST(SlurmHostlist, CompressThenExpandGivesTheNames) {
  Names names{"gpu008", "gpu009", "gpu010", "n1", "n01", "n02", "login", "a-1", "x12345678901"};
  std::vector<std::string_view> views(names.begin(), names.end());
  auto back = expand_hostlist(compress_hostlist(views));
  ASSERT_TRUE(back) << back.error();
  std::sort(back->begin(), back->end());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(*back, names);
}

TEST(SlurmHostlist, CompressFitCutsAndCounts) {
  std::vector<std::string> names;
  for (int i = 1; i <= 200; i += 2) names.push_back("n" + std::to_string(1000 + i));
  std::vector<std::string_view> views(names.begin(), names.end());
  auto s = compress_hostlist_fit(views, 40);
  EXPECT_LE(s.size(), 40u) << s;
  EXPECT_NE(s.find("more)"), std::string::npos) << s;
  EXPECT_EQ(s.rfind("n[1001,1003", 0), 0u) << s;
  EXPECT_EQ(compress_hostlist_fit(views, 10000), compress_hostlist(views));
}

}  // namespace
}  // namespace perfgap::slurm
