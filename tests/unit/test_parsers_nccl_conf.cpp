// NCCL's config files (parsed as src/misc/param.cc setEnvFile does), integer settings read
// like strtoll, and the NCCL_IB_HCA / NCCL_SOCKET_IFNAME list syntax.
#include <gtest/gtest.h>

#include "parsers/nccl_conf.hpp"

using namespace perfgap;

TEST(ParsersNcclConf, ParsesAsNcclDoes) {
  auto e = parsers::parse_nccl_conf(
      "# comment\n"
      "NCCL_DEBUG=WARN\n"
      "  # indented, not a comment, but without an equals sign: ignored\n"
      "NCCL_SOCKET_IFNAME==ens1f0\n"
      "NCCL_A = 1\n"
      "=nameless\n"
      "NCCL_CR=1\r\n"
      "NCCL_DEBUG=INFO\n"
      "NCCL_EMPTY=\n"
      "NCCL_LAST=x");
  ASSERT_EQ(e.size(), 6u);
  EXPECT_EQ(e[0].name, "NCCL_DEBUG");
  EXPECT_EQ(e[0].value, "WARN");  // first setting wins (setenv without overwrite)
  EXPECT_EQ(e[0].line, 2);
  EXPECT_EQ(e[1].name, "NCCL_SOCKET_IFNAME");
  EXPECT_EQ(e[1].value, "=ens1f0");  // split at the first '='
  EXPECT_EQ(e[2].name, "NCCL_A ");   // not trimmed
  EXPECT_EQ(e[2].value, " 1");
  EXPECT_EQ(e[3].value, "1\r");      // only '\n' is dropped
  EXPECT_EQ(e[4].name, "NCCL_EMPTY");
  EXPECT_EQ(e[4].value, "");
  EXPECT_EQ(e[5].value, "x");        // last line without '\n'
}

TEST(ParsersNcclConf, LongLinesAndNulsAreCutLikeCStrings) {
  std::string longname(2000, 'N');
  auto e = parsers::parse_nccl_conf(longname + "=" + std::string(3000, 'v') + "\n" + std::string("A=b\0c\nB\0=x\n", 12));
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].name.size(), 1023u);
  EXPECT_EQ(e[0].value.size(), 1023u);
  EXPECT_EQ(e[1].name, "A");
  EXPECT_EQ(e[1].value, "b");
}

TEST(ParsersNcclInt, ReadsLikeStrtoll) {
  EXPECT_EQ(parsers::nccl_int("1"), 1);
  EXPECT_EQ(parsers::nccl_int(" 2"), 2);
  EXPECT_EQ(parsers::nccl_int("0x10"), 16);
  EXPECT_EQ(parsers::nccl_int("010"), 8);
  EXPECT_EQ(parsers::nccl_int("-3"), -3);
  EXPECT_EQ(parsers::nccl_int("1abc"), 1);
  EXPECT_EQ(parsers::nccl_int("yes"), 0);
  EXPECT_EQ(parsers::nccl_int(""), 0);
  EXPECT_EQ(parsers::nccl_int("99999999999999999999999"), INT64_MAX);
}

TEST(ParsersNcclIfList, Syntax) {
  auto l = parsers::parse_nccl_if_list("mlx5_0:1,mlx5_1");
  EXPECT_FALSE(l.exclude);
  EXPECT_FALSE(l.exact);
  ASSERT_EQ(l.entries.size(), 2u);
  EXPECT_EQ(l.entries[0].prefix, "mlx5_0");
  EXPECT_EQ(l.entries[0].port, 1);
  EXPECT_EQ(l.entries[1].port, -1);
  EXPECT_TRUE(parsers::nccl_if_match(l, "mlx5_0", 1));
  EXPECT_FALSE(parsers::nccl_if_match(l, "mlx5_0", 2));
  EXPECT_TRUE(parsers::nccl_if_match(l, "mlx5_10", 1));  // prefix
  EXPECT_TRUE(parsers::nccl_if_match(l, "mlx5_1", 2));

  auto x = parsers::parse_nccl_if_list("^=mlx5_0");
  EXPECT_TRUE(x.exclude);
  EXPECT_TRUE(x.exact);
  EXPECT_TRUE(parsers::nccl_if_match(x, "mlx5_0", 1));
  EXPECT_FALSE(parsers::nccl_if_match(x, "mlx5_01", 1));

  // "=^x": '=' first means exact, and '^' is then part of the name.
  auto y = parsers::parse_nccl_if_list("=^mlx5_0");
  EXPECT_FALSE(y.exclude);
  EXPECT_EQ(y.entries.at(0).prefix, "^mlx5_0");

  // '^=:,,' : exclusion, exact, and no entry: NCCL's empty list matches everything, so
  // everything is excluded.
  auto z = parsers::parse_nccl_if_list("^=:,,");
  EXPECT_TRUE(z.exclude);
  EXPECT_TRUE(z.exact);
  EXPECT_TRUE(z.entries.empty());
  EXPECT_TRUE(parsers::nccl_if_match(z, "mlx5_0", 1));

  auto port_garbage = parsers::parse_nccl_if_list("mlx5_0:x,mlx5_1:99999999999");
  ASSERT_EQ(port_garbage.entries.size(), 2u);
  EXPECT_EQ(port_garbage.entries[0].port, 0);  // atoi("x")
  EXPECT_FALSE(parsers::nccl_if_match(port_garbage, "mlx5_0", 1));

  std::string many;
  for (int i = 0; i < 100; ++i) many += "d" + std::to_string(i) + ",";
  EXPECT_EQ(parsers::parse_nccl_if_list(many).entries.size(), 32u);
}
