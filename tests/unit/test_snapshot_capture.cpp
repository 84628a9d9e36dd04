// snapshot: what a capture takes from a tree (declared paths, links and their targets, no
// more), environment redaction, the writers (directory, .tar.gz) and the guarded extraction;
// and the strongest check of the `reads` declarations: every fixture case, captured and
// replayed, gives the same findings as the case tree itself.
#include <gtest/gtest.h>

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/baseline.hpp"
#include "core/config.hpp"
#include "core/node.hpp"
#include "core/runner.hpp"
#include "facts/facts.hpp"
#include "facts/reads.hpp"
#include "files.hpp"
#include "findings.hpp"
#include "parsers/procfs.hpp"
#include "report/redact.hpp"
#include "snapshot/archive.hpp"
#include "snapshot/capture.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using fixture::read_file;
using fixture::TempDir;
using fixture::write_file;
using namespace std::string_literals;

namespace {

snapshot::Capture capture_tree(const std::string& dir, snapshot::Options opts = {}) {
  auto root = sys::Sysroot::at(dir);
  EXPECT_TRUE(root);
  return snapshot::capture(*root, opts);
}

bool has_skip(const snapshot::Capture& c, const std::string& path, const std::string& words) {
  return std::any_of(c.skipped.begin(), c.skipped.end(),
                     [&](const auto& s) { return s.path == path && s.reason.find(words) != std::string::npos; });
}

// ---- redaction and patterns ----------------------------------------------------------------

TEST(SnapshotRedact, BlanksSecretValuesAndKeepsEveryName) {
  auto env = "HOME=/root\0WANDB_API_KEY=abc123\0NCCL_IB_PKEY=3\0MY_TOKEN=t0k\0LOCAL_RANK=0\0"s;
  auto out = report::redact_environ(env);
  EXPECT_EQ(out, "HOME=/root\0WANDB_API_KEY=<redacted>\0NCCL_IB_PKEY=3\0MY_TOKEN=<redacted>\0LOCAL_RANK=0\0"s);
}

TEST(SnapshotRedact, KeepsOddEntriesAndAMissingFinalNul) {
  auto env = "NOEQUALS\0=empty-name\0DB_PASSWORD=x"s;
  EXPECT_EQ(report::redact_environ(env), "NOEQUALS\0=empty-name\0DB_PASSWORD=<redacted>"s);
  EXPECT_EQ(report::redact_environ(""), "");
}

TEST(SnapshotPattern, MatchesLikeTheDeclarations) {
  EXPECT_TRUE(snapshot::component_matches("[0-9]*", "4242"));
  EXPECT_FALSE(snapshot::component_matches("[0-9]*", "self"));
  EXPECT_TRUE(snapshot::component_matches("cpu*", "cpu12"));
  EXPECT_TRUE(snapshot::component_matches("NVDA200C:*", "NVDA200C:00"));
  EXPECT_FALSE(snapshot::component_matches("state*", "power"));
}

TEST(SnapshotPattern, EveryCheckDeclaresAbsolutePaths) {
  auto patterns = snapshot::declared_patterns();
  ASSERT_FALSE(patterns.empty());
  for (const auto& p : patterns) {
    if (facts::is_named_read(p.pattern)) continue;  // $NCCL_TOPO_FILE and the like (facts/reads.hpp)
    EXPECT_EQ(p.pattern.front(), '/') << p.pattern;
    EXPECT_EQ(p.pattern.find("//"), std::string::npos) << p.pattern;
  }
}

// ---- capture ------------------------------------------------------------------------------

// A sysfs-like tree: class links into /sys/devices, an undeclared file beside the declared
// ones, an absolute link, a link cycle, and training process 4242.
void make_tree(const fs::path& t) {
  const fs::path dev = t / "sys/devices/pci0000:00/0000:05:00.0";
  write_file(dev / "vendor", "0x15b3\n");
  write_file(dev / "infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)\n");
  write_file(dev / "infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  write_file(dev / "infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "ibp5s0\n");  // no check reads it
  write_file(dev / "undeclared_attribute", "x\n");
  fs::create_directories(t / "sys/class/infiniband");
  fs::create_symlink("../../devices/pci0000:00/0000:05:00.0/infiniband/mlx5_0", t / "sys/class/infiniband/mlx5_0");
  fs::create_symlink("../../../0000:05:00.0", dev / "infiniband/mlx5_0/device");
  fs::create_directories(t / "sys/bus/pci/devices");
  fs::create_symlink("../../../devices/pci0000:00/0000:05:00.0", t / "sys/bus/pci/devices/0000:05:00.0");
  // A cycle on a declared path (/sys/class/net/*) and a self-link.
  fs::create_directories(t / "sys/class/net");
  fs::create_symlink("b", t / "sys/class/net/a");
  fs::create_symlink("a", t / "sys/class/net/b");
  fs::create_symlink("loop", t / "sys/class/net/loop");
  write_file(t / "opt/nccl/nccl.conf", "NCCL_IB_QPS_PER_CONNECTION=4\n");
  fs::create_directories(t / "etc");
  fs::create_symlink("/opt/nccl/nccl.conf", t / "etc/nccl.conf");
  write_file(t / "etc/shadow", "root:secret\n");
  write_file(t / "sys/devices/system/cpu/online", "0-3\n");
  write_file(t / "proc/self/environ", "HOME=/root\0API_KEY=s3cr3t\0NCCL_TOPO_FILE=/etc/topo/my.xml\0"s);
  write_file(t / "etc/topo/my.xml", "<system version=\"1\"/>\n");
  write_file(t / "etc/topo/other.xml", "not named\n");
  write_file(t / "proc/4242/environ", "LOCAL_RANK=0\0HF_TOKEN=hf_abc\0"s);
  write_file(t / "proc/4242/maps", "7f00-7f01 r-xp 0 08:01 1 /usr/lib/libcuda.so.1\n");
  write_file(t / "proc/4242/status", "Name:\tpython3\nPPid:\t1\nCpus_allowed_list:\t0-3\n");
  write_file(t / "proc/4242/task/4242/stat", "4242 (python3) R 1 1 1 0 -1 0 0 0 0 0 10 5 0 0 20 0 1 0 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 2 0 0 0 0 0\n");
  write_file(t / "proc/4242/cmdline", "python3\0train.py\0"s);                  // not declared
  write_file(t / "proc/777/environ", "PATH=/bin\0"s);           // not training
  write_file(t / "proc/777/task/777/stat", "777 (sshd) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 50 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 0 0\n");
}

TEST(SnapshotCapture, KeepsLinksAndOnlyTheDeclaredPartOfTheirTargets) {
  TempDir tmp;
  make_tree(tmp.path());
  auto c = capture_tree(tmp.path());
  const auto& e = c.entries;
  ASSERT_TRUE(e.count("/sys/class/infiniband/mlx5_0"));
  EXPECT_EQ(e.at("/sys/class/infiniband/mlx5_0").kind, snapshot::Entry::link);
  EXPECT_EQ(e.at("/sys/class/infiniband/mlx5_0").content, "../../devices/pci0000:00/0000:05:00.0/infiniband/mlx5_0");
  const std::string real = "/sys/devices/pci0000:00/0000:05:00.0";
  ASSERT_TRUE(e.count(real + "/infiniband/mlx5_0/ports/1/rate"));
  EXPECT_EQ(e.at(real + "/infiniband/mlx5_0/ports/1/rate").content, "400 Gb/sec (4X NDR)\n");
  EXPECT_EQ(e.at(real + "/infiniband/mlx5_0/device").kind, snapshot::Entry::link);
  EXPECT_EQ(e.at(real + "/vendor").content, "0x15b3\n");
  EXPECT_FALSE(e.count(real + "/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0"));
  EXPECT_FALSE(e.count(real + "/undeclared_attribute"));
  EXPECT_FALSE(e.count("/etc/shadow"));
  // An absolute link resolves inside the tree; its target is captured, nothing beside it.
  EXPECT_EQ(e.at("/etc/nccl.conf").kind, snapshot::Entry::link);
  EXPECT_EQ(e.at("/etc/nccl.conf").content, "/opt/nccl/nccl.conf");
  EXPECT_EQ(e.at("/opt/nccl/nccl.conf").content, "NCCL_IB_QPS_PER_CONNECTION=4\n");
}

TEST(SnapshotCapture, LinkCyclesAreKeptAndEnd) {
  TempDir tmp;
  make_tree(tmp.path());
  auto c = capture_tree(tmp.path());  // returns: a cycle does not hang
  for (const char* p : {"/sys/class/net/a", "/sys/class/net/b", "/sys/class/net/loop"}) {
    ASSERT_TRUE(c.entries.count(p)) << p;
    EXPECT_EQ(c.entries.at(p).kind, snapshot::Entry::link) << p;
  }
  EXPECT_TRUE(has_skip(c, "/sys/class/net/loop", "symbolic links")) << c.skipped.size();
}

TEST(SnapshotCapture, TrainingProcessesOnlyAndEnvironmentsRedacted) {
  TempDir tmp;
  make_tree(tmp.path());
  auto c = capture_tree(tmp.path());
  EXPECT_EQ(c.training_pids, std::vector<int>{4242});
  ASSERT_TRUE(c.entries.count("/proc/4242/environ"));
  EXPECT_EQ(c.entries.at("/proc/4242/environ").content, "LOCAL_RANK=0\0HF_TOKEN=<redacted>\0"s);
  EXPECT_TRUE(c.entries.count("/proc/4242/maps"));
  EXPECT_TRUE(c.entries.count("/proc/4242/status"));
  EXPECT_FALSE(c.entries.count("/proc/4242/cmdline"));
  EXPECT_FALSE(c.entries.count("/proc/777/environ"));
  // Thread statistics of every process (placement.shared_cores looks for other busy threads).
  EXPECT_TRUE(c.entries.count("/proc/777/task/777/stat"));
  EXPECT_EQ(c.entries.at("/proc/self/environ").content,
            "HOME=/root\0API_KEY=<redacted>\0NCCL_TOPO_FILE=/etc/topo/my.xml\0"s);
}

// One rule, two paths: what a snapshot keeps of the audited environment and what the report's
// node.environment (core::describe_node) shows of it are the same values, hidden alike.
TEST(SnapshotRedact, SnapshotAndReportHideTheSameVariables) {
  TempDir tmp;
  make_tree(tmp.path());
  const std::string env = "NCCL_IB_HCA=mlx5_0\0NCCL_NET_ARGS=--token abc\0SLURM_DB_URL=mysql://u:pw@db/x\0"
                          "CUDA_VISIBLE_DEVICES=0,1\0TORCH_HUB_TOKEN=x\0UCX_NET_DEVICES=mlx5_0:1\0"
                          "TRAIN_ARGS=--password=x\0GITHUB_PAT=y\0HOME=/root\0"s;
  write_file(fs::path(tmp.path()) / "proc/self/environ", env);
  auto c = capture_tree(tmp.path());
  ASSERT_TRUE(c.entries.count("/proc/self/environ"));
  std::map<std::string, std::string> kept;
  for (const auto& [k, v] : parsers::parse_environ(c.entries.at("/proc/self/environ").content)) kept[k] = v;
  auto root = sys::Sysroot::at(tmp.path());
  ASSERT_TRUE(root);
  facts::Facts f(*root, {});
  const auto shown = core::describe_node(f).environment;
  int audited = 0, hidden = 0;
  for (const auto& [k, v] : parsers::parse_environ(env)) {
    ASSERT_TRUE(kept.count(k)) << k;  // the snapshot keeps every name
    EXPECT_EQ(kept[k], report::redact(k, v)) << k;
    if (!report::audited_name(k)) {
      EXPECT_FALSE(shown.count(k)) << k;
      continue;
    }
    ++audited;
    ASSERT_TRUE(shown.count(k)) << k;
    EXPECT_EQ(shown.at(k), kept[k]) << k;
    hidden += shown.at(k) == report::kRedacted;
  }
  EXPECT_EQ(audited, 6);
  EXPECT_EQ(hidden, 3);  // NCCL_NET_ARGS, SLURM_DB_URL, TORCH_HUB_TOKEN
  EXPECT_EQ(kept["TRAIN_ARGS"], report::kRedacted);
  EXPECT_EQ(kept["GITHUB_PAT"], report::kRedacted);
}

TEST(SnapshotCapture, TakesTheFilesTheAuditedEnvironmentNames) {
  TempDir tmp;
  make_tree(tmp.path());
  auto c = capture_tree(tmp.path());
  ASSERT_TRUE(c.entries.count("/etc/topo/my.xml"));
  EXPECT_FALSE(c.entries.count("/etc/topo/other.xml"));
  auto manifest = nlohmann::json::parse(snapshot::manifest_json(c, "9.9.9"));
  EXPECT_EQ(manifest["schema"], "perfgap.snapshot/1");
  EXPECT_EQ(manifest["source"]["kind"], "root");
  bool topo = false;
  for (const auto& m : manifest["captured"])
    if (m["pattern"] == "/etc/topo/my.xml") topo = m["matched"] == 1 && m["why"].get<std::string>().find("NCCL_TOPO_FILE") != std::string::npos;
  EXPECT_TRUE(topo) << manifest["captured"].dump();
}

TEST(SnapshotCapture, OversizedFilesAreSkippedWithTheReason) {
  TempDir tmp;
  write_file(fs::path(tmp.path()) / "proc/cpuinfo", std::string(5000, 'x'));
  snapshot::Options opts;
  opts.max_file_bytes = 4096;
  auto c = capture_tree(tmp.path(), opts);
  EXPECT_FALSE(c.entries.count("/proc/cpuinfo"));
  EXPECT_TRUE(has_skip(c, "/proc/cpuinfo", "larger than"));
}

// ---- writers and extraction ---------------------------------------------------------------

TEST(SnapshotWrite, DirectoryAndArchiveHoldTheSameTree) {
  TempDir tmp;
  const fs::path t = fs::path(tmp.path()) / "tree";
  make_tree(t);
  auto c = capture_tree(t.string());
  const fs::path dir = fs::path(tmp.path()) / "out";
  ASSERT_TRUE(snapshot::write_directory(c, "{}\n", dir.string()));
  const fs::path tgz = fs::path(tmp.path()) / "out.tar.gz";
  ASSERT_TRUE(snapshot::write_tar_gz(c, "{}\n", tgz.string()));
  const fs::path back = fs::path(tmp.path()) / "back";
  fs::create_directories(back);
  auto x = snapshot::extract(tgz.string(), back.string());
  ASSERT_TRUE(x) << x.error();
  for (const auto& [path, e] : c.entries) {
    for (const fs::path& base : {dir, back}) {
      fs::path p = base / path.substr(1);
      auto st = fs::symlink_status(p);
      if (e.kind == snapshot::Entry::link) {
        ASSERT_TRUE(fs::is_symlink(st)) << p;
        EXPECT_EQ(fs::read_symlink(p).string(), e.content) << p;
      } else if (e.kind == snapshot::Entry::dir) {
        EXPECT_TRUE(fs::is_directory(st)) << p;
      } else {
        ASSERT_TRUE(fs::is_regular_file(st)) << p;
        EXPECT_EQ(read_file(p), e.content) << p;
      }
    }
  }
  EXPECT_EQ(read_file(dir / ".perfgap/snapshot.json"), "{}\n");
  EXPECT_EQ(read_file(back / ".perfgap/snapshot.json"), "{}\n");
  // Only OUT and the archive appear beside them: no temporary is left.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(tmp.path())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"back", "out", "out.tar.gz", "tree"}));
}

TEST(SnapshotWrite, RefusesADirectoryThatIsNotEmpty) {
  TempDir tmp;
  write_file(fs::path(tmp.path()) / "out/keep", "mine\n");
  snapshot::Capture c;
  auto r = snapshot::write_directory(c, "{}\n", tmp.path() + "/out");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("not empty"), std::string::npos) << r.error();
  EXPECT_EQ(read_file(fs::path(tmp.path()) / "out/keep"), "mine\n");
  fs::create_directories(fs::path(tmp.path()) / "empty");
  EXPECT_TRUE(snapshot::write_directory(c, "{}\n", tmp.path() + "/empty"));
  EXPECT_TRUE(fs::exists(fs::path(tmp.path()) / "empty/.perfgap/snapshot.json"));
}

// An archive made entry by entry, for the hostile cases.
struct RawEntry {
  std::string name;
  int type = AE_IFREG;
  std::string content;  // file bytes or link target
  std::string hardlink;
};

std::string make_tar_gz(const std::vector<RawEntry>& entries) {
  std::string out;
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_gzip(a);
  archive_write_set_bytes_in_last_block(a, 1);  // no zero padding after the gzip stream
  archive_write_open(
      a, &out, nullptr,
      [](struct archive*, void* client, const void* buf, size_t n) -> la_ssize_t {
        static_cast<std::string*>(client)->append(static_cast<const char*>(buf), n);
        return static_cast<la_ssize_t>(n);
      },
      nullptr);
  for (const auto& r : entries) {
    struct archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, r.name.c_str());
    archive_entry_set_filetype(e, static_cast<unsigned>(r.type));
    archive_entry_set_perm(e, 0644);
    if (!r.hardlink.empty()) archive_entry_set_hardlink(e, r.hardlink.c_str());
    if (r.type == AE_IFLNK) archive_entry_set_symlink(e, r.content.c_str());
    if (r.type == AE_IFREG && r.hardlink.empty()) archive_entry_set_size(e, static_cast<la_int64_t>(r.content.size()));
    archive_write_header(a, e);
    if (r.type == AE_IFREG && !r.content.empty()) archive_write_data(a, r.content.data(), r.content.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

// Extracts into <tmp>/in/dest and returns the error, "" on success; fails the test when
// anything appears in <tmp>/in beside dest.
std::string extract_guarded(const std::string& bytes, const snapshot::ExtractLimits& limits = {}) {
  TempDir tmp;
  const fs::path dest = fs::path(tmp.path()) / "in/dest";
  fs::create_directories(dest);
  auto r = snapshot::extract_memory(bytes.data(), bytes.size(), dest.string(), limits);
  std::vector<std::string> beside;
  for (const auto& e : fs::directory_iterator(fs::path(tmp.path()) / "in")) beside.push_back(e.path().filename().string());
  EXPECT_EQ(beside, std::vector<std::string>{"dest"}) << "something was written outside the destination";
  std::vector<std::string> top;
  for (const auto& e : fs::directory_iterator(tmp.path())) top.push_back(e.path().filename().string());
  EXPECT_EQ(top, std::vector<std::string>{"in"});
  return r ? "" : r.error();
}

TEST(SnapshotExtract, AcceptsFilesDirectoriesAndLinks) {
  auto err = extract_guarded(make_tar_gz({{"./proc/", AE_IFDIR, "", ""},
                                          {"./proc/cpuinfo", AE_IFREG, "model name\t: x\n", ""},
                                          {"proc/mounts", AE_IFLNK, "self/mounts", ""},
                                          {"etc/abs", AE_IFLNK, "/etc/passwd", ""}}));
  EXPECT_EQ(err, "");
}

TEST(SnapshotExtract, RefusesEntriesThatWouldLeaveTheDirectory) {
  EXPECT_NE(extract_guarded(make_tar_gz({{"../escaped", AE_IFREG, "x", ""}})).find(".."), std::string::npos);
  EXPECT_NE(extract_guarded(make_tar_gz({{"a/../../escaped", AE_IFREG, "x", ""}})).find(".."), std::string::npos);
  EXPECT_NE(extract_guarded(make_tar_gz({{"/tmp/escaped", AE_IFREG, "x", ""}})).find("absolute"), std::string::npos);
  // Through a link: the link is fine, writing below it is not.
  EXPECT_NE(extract_guarded(make_tar_gz({{"up", AE_IFLNK, "..", ""}, {"up/escaped", AE_IFREG, "x", ""}})), "");
  EXPECT_NE(extract_guarded(make_tar_gz({{"abs", AE_IFLNK, "/tmp", ""}, {"abs/escaped", AE_IFREG, "x", ""}})), "");
  EXPECT_NE(extract_guarded(make_tar_gz({{"f", AE_IFREG, "x", ""}, {"h", AE_IFREG, "", "f"}})).find("hard link"), std::string::npos);
  EXPECT_NE(extract_guarded(make_tar_gz({{"fifo", AE_IFIFO, "", ""}})).find("not a file"), std::string::npos);
}

TEST(SnapshotExtract, LimitsStopTarBombs) {
  snapshot::ExtractLimits small;
  small.max_entries = 3;
  EXPECT_NE(extract_guarded(make_tar_gz({{"a", AE_IFREG, "1", ""}, {"b", AE_IFREG, "2", ""}, {"c", AE_IFREG, "3", ""}, {"d", AE_IFREG, "4", ""}}), small)
                .find("more than 3 entries"),
            std::string::npos);
  small.max_entries = 100;
  small.max_total_bytes = 1000;
  small.max_entry_bytes = 600;
  EXPECT_NE(extract_guarded(make_tar_gz({{"a", AE_IFREG, std::string(700, 'x'), ""}}), small).find("larger than"), std::string::npos);
  EXPECT_NE(extract_guarded(make_tar_gz({{"a", AE_IFREG, std::string(500, 'x'), ""}, {"b", AE_IFREG, std::string(501, 'x'), ""}}), small)
                .find("more than"),
            std::string::npos);
}

TEST(SnapshotExtract, GarbageTruncatedAndEmptyInputsAreErrors) {
  auto good = make_tar_gz({{"proc/cpuinfo", AE_IFREG, std::string(100000, 'x'), ""}});
  EXPECT_NE(extract_guarded(good.substr(0, good.size() / 2)), "");
  EXPECT_NE(extract_guarded("this is not an archive at all, just text\n"), "");
  EXPECT_NE(extract_guarded(""), "");
  EXPECT_NE(extract_guarded(make_tar_gz({})), "");
}

TEST(SnapshotReplayRoot, RemovesTheUnpackedTreeAndNamesBadArchives) {
  TempDir tmp;
  const fs::path work = fs::path(tmp.path()) / "tmp";
  fs::create_directories(work);
  ::setenv("TMPDIR", work.c_str(), 1);
  write_file(fs::path(tmp.path()) / "snap.tar.gz", make_tar_gz({{"proc/sys/kernel/hostname", AE_IFREG, "gpu1\n", ""}}));
  {
    auto r = snapshot::ReplayRoot::open(tmp.path() + "/snap.tar.gz");
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ((*r)->root().read_value("/proc/sys/kernel/hostname").value_or(""), "gpu1");
    EXPECT_FALSE(fs::is_empty(work));
  }
  EXPECT_TRUE(fs::is_empty(work)) << "the unpacked tree outlived the replay";
  write_file(fs::path(tmp.path()) / "bad.tar.gz", "garbage");
  auto bad = snapshot::ReplayRoot::open(tmp.path() + "/bad.tar.gz");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("bad.tar.gz"), std::string::npos) << bad.error();
  EXPECT_EQ(bad.error().find('\n'), std::string::npos);
  EXPECT_TRUE(fs::is_empty(work)) << "a failed unpack left files";
  ::unsetenv("TMPDIR");
}

// ---- replay of every fixture case ---------------------------------------------------------

// Every case tree with PERFGAP_SNAPSHOT_ALL_CASES=1 (minutes on a busy 2-core machine: each
// case is unpacked, captured, written and checked twice); otherwise the first case of each
// check folder and status (fail-*, pass-*, skip-*, ...), which still reaches every status of
// every check.
std::vector<std::string> replayed_case_files() {
  const char* all = std::getenv("PERFGAP_SNAPSHOT_ALL_CASES");
  const bool every = all && std::string(all) == "1";
  std::vector<std::string> out;
  std::set<std::string> kinds;
  for (const auto& f : fixture::case_tree_files()) {
    auto name = fs::path(f).filename().string();
    auto kind = fs::path(f).parent_path().string() + "/" + name.substr(0, name.find('-'));
    if (every || kinds.insert(kind).second) out.push_back(f);
  }
  return out;
}

// Every case tree (the whole range of statuses the checks have), captured with snapshot and
// replayed: the same findings, titles and evidence as the tree itself. A difference means a
// check reads a path it does not declare in `reads`.
TEST(SnapshotReplay, EveryFixtureCaseReplaysUnchanged) {
  const auto& registry = core::builtin_registry();
  std::vector<const core::CheckInfo*> all;
  for (const auto& c : registry.all()) all.push_back(&c);
  int compared = 0;
  for (const auto& name : replayed_case_files()) {
    SCOPED_TRACE(name);
    TempDir tmp;
    const std::string tree = tmp.path() + "/tree", snap = tmp.path() + "/snap";
    auto spec = fixture::unpack_tree((fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/cases" / name).string(), tree);
    ASSERT_TRUE(spec) << spec.error();
    facts::Options opts;
    snapshot::Options sopts;
    for (const auto& [k, v] : spec->options) {
      if (k == "pid") {
        opts.pids.push_back(std::stoi(v));
        sopts.pids.push_back(std::stoi(v));
      } else if (k == "dmesg") {
        opts.dmesg_path = tree + "/" + v;
      } else if (k == "baseline") {
        auto b = core::load_baseline(tree + "/" + v);
        ASSERT_TRUE(b) << b.error();
        opts.baseline = std::move(*b);
      }
    }
    auto source = sys::Sysroot::at(tree);
    ASSERT_TRUE(source);
    auto captured = snapshot::capture(*source, sopts);
    ASSERT_TRUE(snapshot::write_directory(captured, "{}\n", snap));
    auto replay = sys::Sysroot::at(snap);
    ASSERT_TRUE(replay);
    auto expected = core::run_checks(all, std::make_shared<facts::Facts>(*source, opts), core::Config{}, core::RunOptions{});
    auto actual = core::run_checks(all, std::make_shared<facts::Facts>(*replay, opts), core::Config{}, core::RunOptions{});
    EXPECT_EQ(fixture::describe_findings(actual), fixture::describe_findings(expected));
    ++compared;
  }
  EXPECT_GT(compared, 60);
}

}  // namespace
