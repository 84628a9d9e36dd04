// The release binary (preset `release`: static, stripped; docs/CONTAINERS.md), when it has been
// built: build-release/src/perfgap, or PERFGAP_RELEASE_BINARY (with PERFGAP_RELEASE_EMULATOR,
// e.g. qemu-aarch64-static, for a cross-built one; tools/release-check.sh). It must be a
// static executable of at most 10 MiB without a symbol table, link no NSS, resolver or unused
// archive format, and give the golden trees' findings unchanged and the same findings as this
// (dynamic) build on the Grace trees. Skipped, saying so, when no release binary exists.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "profile_gen.hpp"
#include "report_json.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::masked_report;
using perfgap::fixture::run_binary;
using perfgap::fixture::RunResult;

namespace {

std::string release_binary() {
  if (const char* b = std::getenv("PERFGAP_RELEASE_BINARY"); b && *b) return b;
  return std::string(PERFGAP_SOURCE_DIR) + "/build-release/src/perfgap";
}

// Runs the release binary (under the emulator when one is named).
RunResult run_release(std::vector<std::string> args) {
  if (const char* emu = std::getenv("PERFGAP_RELEASE_EMULATOR"); emu && *emu) {
    args.insert(args.begin(), release_binary());
    return run_binary(emu, args);
  }
  return run_binary(release_binary(), args);
}

class ReleaseBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(release_binary()))
      GTEST_SKIP() << "no release binary at " << release_binary()
                   << " (cmake --preset release && cmake --build --preset release --target perfgap)";
  }
};

TEST_F(ReleaseBinary, IsStaticStrippedAndSmall) {
  auto ldd = run_binary("/usr/bin/ldd", {release_binary()});
  EXPECT_NE((ldd.out + ldd.err).find("not a dynamic executable"), std::string::npos) << ldd.out << ldd.err;
  auto sections = run_binary("/usr/bin/readelf", {"-S", "-W", release_binary()});
  ASSERT_EQ(sections.status, 0) << sections.err;
  EXPECT_EQ(sections.out.find(".interp"), std::string::npos) << "has a program interpreter";
  EXPECT_EQ(sections.out.find(".dynamic"), std::string::npos) << "has a dynamic section";
  EXPECT_EQ(sections.out.find(".symtab"), std::string::npos) << "not stripped";
  // 8.09 MiB on 2026-12-04 with perf-stat, the Xid catalogue and the new readers; 8.99 MiB on
  // 2026-12-05 (whatif's pipelines, explain's pricing by collective, the node counts), 5 KiB under
  // the old 9 MiB: 10 MiB keeps a bound on growth, and the link map (below) on what is linked.
  EXPECT_LE(fs::file_size(release_binary()), 10u << 20);
  auto v = run_release({"version"});
  ASSERT_EQ(v.status, 0) << v.err;
  EXPECT_NE(v.out.find("linkage: static"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("build: Release"), std::string::npos) << v.out;
  auto sub = run_release({"check", "--version"});
  EXPECT_EQ(sub.status, 0);
  EXPECT_EQ(sub.out, v.out);
}

// The linker map of the release build: which archive members were linked, and why.
TEST_F(ReleaseBinary, LinksNoNssResolverOrUnusedArchiveFormat) {
  fs::path map = fs::path(release_binary()).parent_path() / "perfgap.map";
  if (!fs::exists(map)) GTEST_SKIP() << "no linker map next to " << release_binary();
  std::ifstream in(map);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  ASSERT_NE(text.find("libarchive.a(archive_read_support_format_tar.o)"), std::string::npos) << "not the map of perfgap";
  for (const char* member : {"(getpwuid", "(getpwnam", "(getgrgid", "(getgrnam", "(getaddrinfo", "(gethstbynm", "(nsswitch.o)",
                             "(nss_files", "(glob.o)", "(getlogin", "(res_query.o)", "(res_send.o)", "archive_read_support_format_all.o", "archive_read_support_format_xar.o",
                             "archive_write_set_format_xar.o", "archive_write_set_format_zip.o", "archive_write_set_format.o)",
                             "archive_disk_acl_linux.o", "archive_read_disk_posix.o", "archive_cryptor.o", "libxml2.a", "libicu",
                             "libnettle.a", "liblzma.a", "libbz2.a", "libacl.a", "liblz4.a", "libsimdjson", "libfmt",
                             "libzstd.a(zstd_compress.o)", "libzstd.a(zstdmt_compress.o)"})
    EXPECT_EQ(text.find(member), std::string::npos) << member << " is linked into the static perfgap";
  // zstd is there for perf.data's compressed records (parsers/perf_data.cpp), and only its
  // decompressor: libarchive's zstd filters stay out, as no filter but gzip is registered.
  EXPECT_NE(text.find("libzstd.a(zstd_decompress.o)"), std::string::npos) << "perf.data's zstd reader is not linked";
  EXPECT_EQ(text.find("archive_read_support_filter_zstd.o"), std::string::npos);
  EXPECT_EQ(text.find("archive_write_add_filter_zstd.o"), std::string::npos);
}

std::vector<std::string> golden_trees() { return {"healthy-x86", "h100-c1-remote-numa", "kvm-guest", "gb200-vm"}; }

TEST_F(ReleaseBinary, GoldenTreesGiveTheGoldenReports) {
  const fs::path src = PERFGAP_SOURCE_DIR;
  for (const auto& name : golden_trees()) {
    SCOPED_TRACE(name);
    perfgap::fixture::TempDir tmp;
    auto spec = perfgap::fixture::unpack_tree((src / "tests/fixtures/golden" / (name + ".tree")).string(), tmp.path());
    ASSERT_TRUE(spec) << spec.error();
    auto r = run_release({"check", "--root", tmp.path(), "--format", "json"});
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    std::ifstream in(src / "tests/golden" / (name + ".json"));
    ASSERT_TRUE(in);
    auto expected = nlohmann::json::parse(in);
    auto actual = masked_report(nlohmann::json::parse(r.out));
    EXPECT_TRUE(actual == expected) << perfgap::fixture::report_diff(expected, actual);
  }
}

// Trees without a golden report (the Grace ones among them): the same report as this build's.
TEST_F(ReleaseBinary, SameReportsAsTheDynamicBuild) {
  const fs::path src = PERFGAP_SOURCE_DIR;
  for (const char* tree : {"cases/base/grace-host.tree", "cases/base/grace-guest.tree", "cases/base/x86-2node.tree"}) {
    SCOPED_TRACE(tree);
    perfgap::fixture::TempDir tmp;
    auto spec = perfgap::fixture::unpack_tree((src / "tests/fixtures" / tree).string(), tmp.path());
    ASSERT_TRUE(spec) << spec.error();
    for (const char* format : {"json", "text"}) {
      auto mine = run_binary(PERFGAP_BINARY, {"check", "--root", tmp.path(), "--format", format});
      auto theirs = run_release({"check", "--root", tmp.path(), "--format", format});
      EXPECT_EQ(theirs.status, mine.status) << theirs.err;
      if (std::string(format) == "json") {
        const auto a = masked_report(nlohmann::json::parse(mine.out)), b = masked_report(nlohmann::json::parse(theirs.out));
        EXPECT_TRUE(b == a) << perfgap::fixture::report_diff(a, b);
      } else {
        EXPECT_EQ(theirs.out, mine.out);
      }
    }
  }
}

// The analyzers through the static binary's own SQLite and JSON reader: an nsys export and a
// Kineto trace give the dynamic build's report.
TEST_F(ReleaseBinary, ProfilesGiveTheDynamicBuildsReports) {
  perfgap::fixture::TempDir tmp;
  const auto scenario = perfgap::gen::exposed_comm(2, 5, 30, 15);
  const std::string nsys = tmp.path() + "/p.sqlite", kineto = tmp.path() + "/p.json";
  ASSERT_EQ(perfgap::gen::write_nsys_sqlite(scenario, nsys), "");
  std::ofstream(kineto) << perfgap::gen::kineto_json(scenario, 0);
  for (const auto& [kind, file] : {std::pair{"nsys", nsys}, std::pair{"kineto", kineto}}) {
    SCOPED_TRACE(kind);
    auto mine = run_binary(PERFGAP_BINARY, {"analyze", kind, file, "--format", "json"});
    auto theirs = run_release({"analyze", kind, file, "--format", "json"});
    ASSERT_EQ(theirs.status, mine.status) << theirs.err;
    const auto a = masked_report(nlohmann::json::parse(mine.out)), b = masked_report(nlohmann::json::parse(theirs.out));
    EXPECT_TRUE(b == a) << perfgap::fixture::report_diff(a, b);
  }
}

// A snapshot archive written by one build reads the same in the other (tar + gzip both ways).
TEST_F(ReleaseBinary, SnapshotArchivesRoundTripWithTheDynamicBuild) {
  const fs::path src = PERFGAP_SOURCE_DIR;
  perfgap::fixture::TempDir tmp;
  const fs::path tree = fs::path(tmp.path()) / "tree";
  auto spec = perfgap::fixture::unpack_tree((src / "tests/fixtures/golden/h100-c1-remote-numa.tree").string(), tree.string());
  ASSERT_TRUE(spec) << spec.error();
  const std::string a = (fs::path(tmp.path()) / "a.tar.gz").string(), b = (fs::path(tmp.path()) / "b.tar.gz").string();
  auto s1 = run_release({"snapshot", "--root", tree.string(), a});
  ASSERT_EQ(s1.status, 0) << s1.err;
  auto s2 = run_binary(PERFGAP_BINARY, {"snapshot", "--root", tree.string(), b});
  ASSERT_EQ(s2.status, 0) << s2.err;
  auto from_release = run_binary(PERFGAP_BINARY, {"check", "--root", a, "--format", "json"});
  auto from_dynamic = run_release({"check", "--root", b, "--format", "json"});
  EXPECT_EQ(from_release.status, 1) << from_release.err;
  EXPECT_EQ(from_dynamic.status, 1) << from_dynamic.err;
  const auto written_by_release = masked_report(nlohmann::json::parse(from_release.out));
  const auto written_by_dynamic = masked_report(nlohmann::json::parse(from_dynamic.out));
  EXPECT_TRUE(written_by_dynamic == written_by_release) << perfgap::fixture::report_diff(written_by_release, written_by_dynamic);
}

}  // namespace

namespace {

// `perfgap version` and every command's --version: one identity, of this build.
TEST(Version, EveryCommandAnswersTheSame) {
  auto v = run_binary(PERFGAP_BINARY, {"version"});
  ASSERT_EQ(v.status, 0) << v.err;
  EXPECT_EQ(v.out.rfind("perfgap ", 0), 0u) << v.out;
  for (const char* line : {"\ncommit: ", "\nbuild: ", "\narch: ", "\nlinkage: dynamic\n"})
    EXPECT_NE(v.out.find(line), std::string::npos) << line << " missing in\n" << v.out;
#if defined(__x86_64__)
  EXPECT_NE(v.out.find("\narch: x86_64\n"), std::string::npos) << v.out;
#elif defined(__aarch64__)
  EXPECT_NE(v.out.find("\narch: aarch64\n"), std::string::npos) << v.out;
#endif
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"--version"}).out, v.out);
  for (const char* cmd : {"check", "analyze", "gap", "snapshot", "fleet", "health", "fanout", "sweep"}) {
    auto r = run_binary(PERFGAP_BINARY, {cmd, "--version"});
    EXPECT_EQ(r.status, 0) << cmd << ": " << r.err;
    EXPECT_EQ(r.out, v.out) << cmd;
  }
}

}  // namespace
