#include <gtest/gtest.h>

#include "analyzers/analyzers.hpp"
#include "parsers/numastat.hpp"

using namespace perfgap;

TEST(ParsersNumastat, ProcessTable) {
  auto n = parsers::parse_numastat(
      "Per-node process memory usage (in MBs) for PID 4242 (python)\n"
      "                           Node 0          Node 1           Total\n"
      "                  --------------- --------------- ---------------\n"
      "Heap                        10.00            0.00           10.00\n"
      "Private                    800.00          190.00          990.00\n"
      "----------------  --------------- --------------- ---------------\n"
      "Total                      810.00          190.00         1000.00\n");
  ASSERT_TRUE(n) << n.error().describe();
  ASSERT_EQ(n->processes.size(), 1u);
  EXPECT_EQ(n->processes[0].pid, "4242");
  EXPECT_EQ(n->processes[0].name, "python");
  EXPECT_EQ(n->processes[0].per_node, (std::vector<double>{810, 190}));
  auto f = analyzers::analyze_numastat(*n, "t");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].subject, "pid:4242");
  EXPECT_EQ(f[0].status, report::Status::fail);  // 19% remote
}

TEST(ParsersNumastat, ProcessRowsAndStatuses) {
  auto n = parsers::parse_numastat(
      "Per-node process memory usage (in MBs)\n"
      "PID              Node 0 Node 1 Total\n"
      "---------------  ------ ------ -----\n"
      "100 (python)        970     30  1000\n"
      "200 (python)        930     70  1000\n"
      "300 (python)        500    500  1000\n"
      "---------------  ------ ------ -----\n"
      "Total              2400    600  3000\n");
  ASSERT_TRUE(n);
  auto f = analyzers::analyze_numastat(*n, "t");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].status, report::Status::pass);
  EXPECT_EQ(f[1].status, report::Status::warn);
  EXPECT_EQ(f[2].status, report::Status::fail);
}

TEST(ParsersNumastat, ProcessesTooSmallToMatterAreNotJudged) {
  auto n = parsers::parse_numastat(
      "Per-node process memory usage (in MBs)\n"
      "PID              Node 0 Node 1 Total\n"
      "---------------  ------ ------ -----\n"
      "100 (bash)        1.14   0.18  1.32\n"
      "200 (python)       200     55   255\n"
      "300 (python)       200     57   257\n"
      "---------------  ------ ------ -----\n"
      "Total              401    112   513\n");
  ASSERT_TRUE(n);
  auto f = analyzers::analyze_numastat(*n, "t");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].status, report::Status::skip) << f[0].title;
  EXPECT_EQ(f[1].status, report::Status::skip) << f[1].title;  // 255 MB: just under
  EXPECT_EQ(f[2].status, report::Status::fail) << f[2].title;  // 257 MB at 22% remote
}

TEST(ParsersNumastat, CountersRawAndMeminfo) {
  auto plain = parsers::parse_numastat("                 node0   node1\nlocal_node        900     800\nother_node        100       0\n");
  ASSERT_TRUE(plain);
  auto f = analyzers::analyze_numastat(*plain, "t");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].subject, "node0");
  EXPECT_EQ(f[0].status, report::Status::warn);  // 10% is not > 10%
  EXPECT_EQ(f[1].status, report::Status::pass);
  auto raw = parsers::parse_numastat("numa_hit 10\nlocal_node 10\nother_node 90\n");
  ASSERT_TRUE(raw);
  EXPECT_EQ(analyzers::analyze_numastat(*raw, "t")[0].status, report::Status::fail);
  auto mem = parsers::parse_numastat("Per-node system memory usage (in MBs):\n   Node 0 Node 1 Total\nMemTotal 10 10 20\n");
  ASSERT_TRUE(mem);
  EXPECT_EQ(analyzers::analyze_numastat(*mem, "t")[0].status, report::Status::skip);
}

TEST(ParsersNumastat, NotNumastat) {
  EXPECT_FALSE(parsers::parse_numastat(""));
  EXPECT_FALSE(parsers::parse_numastat("Core CPU Busy% Bzy_MHz\n0 0 1 2\n"));
}
