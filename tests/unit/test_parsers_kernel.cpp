// Text parsers the platform and RDMA facts use, on strings: kernel config, gzip, kernel log
// formats, PCIe link and RDMA port attributes.
#include <gtest/gtest.h>

#include <string>

#include "parsers/gunzip.hpp"
#include "parsers/kernel_config.hpp"
#include "parsers/kernel_log.hpp"
#include "parsers/sysfs_values.hpp"

using namespace perfgap;

namespace {

// gzip -9 of "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_TEGRA241_CMDQV=y\n"
const std::string kConfigGz(
    "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\x73\xf6\xf7\x73\xf3\x74\x8f\x77\xb4\xad\xe4\x52\x56\x70\x86\x70\x9c\x14"
    "\x32\x8b\x15\xf2\xf2\x4b\x14\x8a\x53\x4b\xb8\xa0\x62\x21\xae\xee\x41\x8e\x46\x26\x86\xf1\xce\xbe\x2e\x81\x61\x40"
    "\xd5\x00\x05\x35\xba\x9e\x39\x00\x00\x00",
    66);

}  // namespace

TEST(ParsersKernelConfig, ValuesAndUnsetOptions) {
  auto c = parsers::parse_kernel_config("#\n# Linux/arm64 Kernel Configuration\n#\nCONFIG_ARM64=y\nCONFIG_NR_CPUS=512\n"
                                      "# CONFIG_TEGRA241_CMDQV is not set\nCONFIG_CMDLINE=\"a b\"\nnot a line\nCONFIG_=x\n");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->get("ARM64"), "y");
  EXPECT_EQ(c->get("CONFIG_NR_CPUS"), "512");
  EXPECT_EQ(c->get("TEGRA241_CMDQV"), "n");
  EXPECT_EQ(c->get("CMDLINE"), "\"a b\"");
  EXPECT_FALSE(c->get("ARM_SMMU_V3"));
  EXPECT_FALSE(parsers::parse_kernel_config(""));
  EXPECT_FALSE(parsers::parse_kernel_config("hello\n# comment\n"));
}

TEST(ParsersGunzip, WholeTruncatedCorruptAndLimited) {
  auto text = parsers::gunzip(kConfigGz);
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(*text, "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_TEGRA241_CMDQV=y\n");
  // Every truncation is an error with a reason, never a crash or a partial success.
  for (std::size_t n = 0; n < kConfigGz.size(); ++n) {
    auto cut = parsers::gunzip(std::string_view(kConfigGz).substr(0, n));
    EXPECT_FALSE(cut) << "cut at " << n;
  }
  auto cut = parsers::gunzip(std::string_view(kConfigGz).substr(0, 40));
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().find("truncated"), std::string::npos) << cut.error();
  EXPECT_FALSE(parsers::gunzip("CONFIG_A=y\n"));
  std::string corrupt = kConfigGz;
  corrupt[20] = static_cast<char>(corrupt[20] ^ 0x55);
  EXPECT_FALSE(parsers::gunzip(corrupt));
  EXPECT_FALSE(parsers::gunzip(kConfigGz, 10));  // beyond the output limit
}

TEST(ParsersKernelLog, KmsgDmesgJournalAndBinary) {
  auto dmesg = parsers::parse_kernel_log("[    1.912530] acpi NVDA200C:00: Falling back to standard SMMU CMDQ\n[Mon Nov 30 12:00:00 2026] x\n");
  ASSERT_EQ(dmesg.size(), 2u);
  EXPECT_EQ(dmesg[0], "acpi NVDA200C:00: Falling back to standard SMMU CMDQ");
  EXPECT_EQ(dmesg[1], "x");
  auto kmsg = parsers::parse_kernel_log("6,513,1912530,-,caller=T1;tegra241_cmdqv: hello\n SUBSYSTEM=acpi\n DEVICE=+acpi:NVDA200C:00\n4,514,1,c;second\n");
  ASSERT_EQ(kmsg.size(), 2u);
  EXPECT_EQ(kmsg[0], "tegra241_cmdqv: hello");
  EXPECT_EQ(kmsg[1], "second");
  auto journal = parsers::parse_kernel_log("Nov 30 12:00:00 gpu01 kernel: arm-smmu-v3: probe\n");
  ASSERT_EQ(journal.size(), 1u);
  EXPECT_EQ(journal[0], "arm-smmu-v3: probe");
  auto binary = parsers::parse_kernel_log(std::string("\x7f" "ELF\x00\xff\xfe\r\n\x1b[31mred\n", 15));
  for (const auto& m : binary)
    for (char c : m) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << m;
  EXPECT_EQ(parsers::parse_kernel_log(std::string(2000, 'a')).front().size(), 512u);
  EXPECT_TRUE(parsers::parse_kernel_log("\n\n  \n").empty());
}

TEST(ParsersSysfsValues, LinkSpeedAndWidth) {
  EXPECT_EQ(parsers::parse_link_speed("16.0 GT/s PCIe\n"), 16.0);
  EXPECT_EQ(parsers::parse_link_speed("8 GT/s"), 8.0);
  EXPECT_EQ(parsers::parse_link_speed("2.5 GT/s PCIe"), 2.5);
  EXPECT_FALSE(parsers::parse_link_speed("Unknown"));
  EXPECT_FALSE(parsers::parse_link_speed("fast GT/s"));
  EXPECT_FALSE(parsers::parse_link_speed("-8 GT/s"));
  EXPECT_FALSE(parsers::parse_link_speed(""));
  EXPECT_EQ(parsers::parse_link_width("16\n"), 16);
  EXPECT_EQ(parsers::parse_link_width("x8"), 8);
  EXPECT_EQ(parsers::parse_link_width("0"), 0);
  EXPECT_FALSE(parsers::parse_link_width("x1?6"));
  EXPECT_FALSE(parsers::parse_link_width("64"));
  EXPECT_FALSE(parsers::parse_link_width("-1"));
  EXPECT_FALSE(parsers::parse_link_width(""));
}

TEST(ParsersSysfsValues, IbRateAndStateText) {
  EXPECT_EQ(parsers::parse_ib_rate("400 Gb/sec (4X NDR)\n"), 400.0);
  EXPECT_EQ(parsers::parse_ib_rate("2.5 Gb/sec"), 2.5);
  EXPECT_FALSE(parsers::parse_ib_rate("fast"));
  EXPECT_FALSE(parsers::parse_ib_rate("-1 Gb/sec"));
  EXPECT_EQ(parsers::strip_state_number("4: ACTIVE\n"), "ACTIVE");
  EXPECT_EQ(parsers::strip_state_number("5: LinkUp"), "LinkUp");
  EXPECT_EQ(parsers::strip_state_number("DOWN"), "DOWN");
}
