// Control characters and invalid UTF-8 in what a tree or a fleet of reports holds, with the
// real binary: text escapes them, JUnit stays valid XML, Prometheus and JSON valid UTF-8.
#include <gtest/gtest.h>

#include <archive.h>
#include <archive_entry.h>

#include <nlohmann/json.hpp>
#include <pugixml.hpp>

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

// --- 5. Output encodings -----------------------------------------------------------------

TEST(HostileEncoding, ControlCharactersAndBadBytesNeverReachOutputsRaw) {
  TempDir tmp;
  auto tree = healthy_tree(fs::path(tmp.path()) / "tree");
  const std::string evil = "gpu\x1b[2J\x07\x1b]0;pwned\x07\xff\xfe\x01x\xc2\x9b";
  write_file(tree / "proc/1000/environ", env_block({"SLURMD_NODENAME=" + evil, "NCCL_DEBUG=IN\x1b[31mFO\xff", "LOCAL_RANK=0"}));
  write_file(tree / "proc/1000/comm", "py\x1b[2Jthon\x07\n");
  auto run = [&](const std::string& format) {
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", tree.string(), "--format", format, "-v"});
    EXPECT_LE(r.status, 1) << r.err;
    return r.out;
  };
  auto text = run("text");
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos);
  EXPECT_NE(text.find("gpu\\x1b[2J\\x07"), std::string::npos) << "the name is shown escaped:\n" << text.substr(0, 300);
  EXPECT_TRUE(valid_utf8(text));
  auto junit = run("junit");
  EXPECT_TRUE(valid_utf8(junit));
  for (char c : junit) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') << int(c);
  pugi::xml_document doc;
  auto parsed = doc.load_string(junit.c_str());
  EXPECT_TRUE(parsed) << parsed.description();
  EXPECT_TRUE(doc.child("testsuites").child("testsuite"));
  auto prom = run("prometheus");
  EXPECT_TRUE(valid_utf8(prom));
  for (char c : prom) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 && c != '\n') << int(c);
  auto json = run("json");
  EXPECT_TRUE(valid_utf8(json));
  EXPECT_TRUE(nlohmann::json::parse(json).is_object());

  // A fleet of reports whose node names clear the screen.
  const fs::path reports = fs::path(tmp.path()) / "reports";
  auto base = nlohmann::json::parse(read_file(std::string(PERFGAP_SOURCE_DIR) + "/tests/golden/healthy-x86.json"));
  base["generated_at"] = "2026-11-30T12:00:00Z";
  for (int i = 0; i < 2; ++i) {
    auto j = base;
    j["node"]["name"] = "node" + std::to_string(i) + "\x1b[2J\x1b]2;title\x07";
    write_file(reports / ("n" + std::to_string(i) + ".json"), j.dump());
  }
  auto fleet = run_binary(PERFGAP_BINARY, {"fleet", reports.string(), "-v"});
  EXPECT_LE(fleet.status, 1) << fleet.err;
  EXPECT_EQ(fleet.out.find('\x1b'), std::string::npos) << fleet.out;
  EXPECT_EQ(fleet.out.find('\x07'), std::string::npos);
  EXPECT_NE(fleet.out.find("\\x1b[2J"), std::string::npos) << fleet.out;
  for (const auto& format : {"junit", "prometheus"}) {
    auto f = run_binary(PERFGAP_BINARY, {"fleet", reports.string(), "--format", format});
    EXPECT_TRUE(valid_utf8(f.out)) << format;
    EXPECT_EQ(f.out.find('\x1b'), std::string::npos) << format;
  }
}

TEST(HostileEncoding, ErrorsAndSnapshotSummariesEscapeNamesFromTheInput) {
  TempDir tmp;
  // An archive entry refused by name: the one-line error quotes the name escaped.
  const fs::path archive = fs::path(tmp.path()) / "evil.tar.gz";
  {
    struct archive* a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    archive_write_add_filter_gzip(a);
    ASSERT_EQ(archive_write_open_filename(a, archive.c_str()), ARCHIVE_OK);
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, "dev/evil\x1b[2J\x07name");
    archive_entry_set_filetype(e, AE_IFIFO);
    archive_entry_set_perm(e, 0644);
    archive_write_header(a, e);
    archive_entry_free(e);
    archive_write_close(a);
    archive_write_free(a);
  }
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", archive.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x07'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("evil\\x1b[2J\\x07name"), std::string::npos) << r.err;
  // A snapshot's one-line summary names the host the tree says it is.
  auto tree = healthy_tree(fs::path(tmp.path()) / "tree");
  write_file(tree / "proc/sys/kernel/hostname", "host\x1b]0;title\x07\n");
  auto s = run_binary(PERFGAP_BINARY, {"snapshot", "--root", tree.string(), (fs::path(tmp.path()) / "snap").string(), "-v"});
  EXPECT_EQ(s.status, 0) << s.err;
  EXPECT_NE(s.out.find("host\\x1b]0;title\\x07"), std::string::npos) << s.out;
  EXPECT_EQ(s.out.find('\x1b'), std::string::npos) << s.out;
}

}  // namespace
