// Sysroot against trees made in a temporary directory: reads, lists, links and stats resolve
// inside the tree (absolute links included), nothing escapes it, and odd objects (a FIFO, a
// directory, an oversized file) give errors rather than hangs or crashes.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <string>

#include "files.hpp"
#include "sys/sysroot.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_file;
using perfgap::sys::ReadError;
using perfgap::sys::Sysroot;

// A captured tree:  <tmp>/outside/secret  (not in the tree)
//                   <tmp>/root/sys/devices/system/cpu/online = "0-3\n"
//                   <tmp>/root/sys/devices/system/node/node0/cpulist = "0-1\n"
//                   <tmp>/root/sys/bus/node/devices/node0 -> ../../../devices/system/node/node0
//                   <tmp>/root/etc/abs -> /sys/devices/system/cpu/online   (absolute, in tree)
//                   <tmp>/root/proc/self -> 4242 ...
class SysrootTest : public ::testing::TestWithParam<bool> {
 protected:
  // The parameter: walk by hand as where openat2 is refused (true) or use openat2 (false).
  void SetUp() override {
    perfgap::sys::force_no_openat2_for_tests(GetParam());
    base = tmp.path();
    root = base / "root";
    ASSERT_TRUE(write_file(base / "outside/secret", "escaped\n"));
    ASSERT_TRUE(write_file(base / "secret", "escaped-too\n"));
    ASSERT_TRUE(write_file(root / "sys/devices/system/cpu/online", "0-3\n"));
    ASSERT_TRUE(write_file(root / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "  performance \n"));
    ASSERT_TRUE(write_file(root / "sys/devices/system/node/node0/cpulist", "0-1\n"));
    ASSERT_TRUE(write_file(root / "sys/devices/system/node/node1/cpulist", "2-3\n"));
    fs::create_directories(root / "sys/devices/system/node/has_memory_dir_empty");
    fs::create_directories(root / "sys/bus/node/devices");
    fs::create_symlink("../../../devices/system/node/node0", root / "sys/bus/node/devices/node0");
    fs::create_directories(root / "etc");
    fs::create_symlink("/sys/devices/system/cpu/online", root / "etc/abs");
    fs::create_symlink("/sys/devices/system/node", root / "etc/absdir");
    fs::create_symlink("/nonexistent-perfgap-target", root / "etc/dangling");
    fs::create_symlink("../../outside/secret", root / "etc/rel_escape");
    fs::create_symlink("/../outside/secret", root / "etc/abs_escape");
    fs::create_symlink("/../../../../../../../../secret", root / "etc/deep_escape");
    ASSERT_TRUE(write_file(root / "proc/4242/comm", "python3\n"));
    fs::create_symlink("4242", root / "proc/self");
    auto s = Sysroot::at(root.string());
    ASSERT_TRUE(s) << s.error();
    sysroot.emplace(std::move(*s));
  }

  void TearDown() override { perfgap::sys::force_no_openat2_for_tests(false); }
  const Sysroot& sr() const { return *sysroot; }

  TempDir tmp;
  fs::path base, root;
  std::optional<Sysroot> sysroot;
};

TEST_P(SysrootTest, ReadsFilesByTheirRealPath) {
  EXPECT_FALSE(sr().is_live());
  EXPECT_EQ(sr().root(), root.string());
  auto r = sr().read("/sys/devices/system/cpu/online");
  ASSERT_TRUE(r) << r.error().reason();
  EXPECT_EQ(*r, "0-3\n");
  // Paths without the leading slash resolve the same way.
  auto rel = sr().read("sys/devices/system/cpu/online");
  ASSERT_TRUE(rel);
  EXPECT_EQ(*rel, "0-3\n");
}

TEST_P(SysrootTest, ReadValueTrims) {
  auto v = sr().read_value("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  ASSERT_TRUE(v) << v.error().reason();
  EXPECT_EQ(*v, "performance");
}

TEST_P(SysrootTest, ReadsEmptyFile) {
  ASSERT_TRUE(write_file(root / "sys/empty", ""));
  auto r = sr().read("/sys/empty");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "");
}

TEST_P(SysrootTest, ReadsBinaryAndNulBytes) {
  std::string content("A=1\0B=2\0", 8);
  ASSERT_TRUE(write_file(root / "proc/4242/environ", content));
  auto r = sr().read("/proc/4242/environ");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, content);
}

TEST_P(SysrootTest, ReadsLargerThanOneBuffer) {
  std::string big(100000, 'x');
  ASSERT_TRUE(write_file(root / "proc/4242/maps", big));
  auto r = sr().read("/proc/4242/maps");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->size(), big.size());
}

TEST_P(SysrootTest, MissingFileIsUnavailableNotPresent) {
  auto r = sr().read("/sys/devices/system/cpu/cpu99/online");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ReadError::unavailable);
  EXPECT_EQ(r.error().err, ENOENT);
  EXPECT_EQ(r.error().reason(), "not present");
  EXPECT_EQ(r.error().path, "/sys/devices/system/cpu/cpu99/online");  // the real path asked for
  auto v = sr().read_value("/nope");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().kind, ReadError::unavailable);
}

TEST_P(SysrootTest, FileUsedAsDirectoryIsUnavailable) {
  auto r = sr().read("/sys/devices/system/cpu/online/child");  // ENOTDIR
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ReadError::unavailable);
  EXPECT_EQ(r.error().reason(), "not present");
}

TEST_P(SysrootTest, DirectoryReadAsFileIsAnError) {
  auto r = sr().read("/sys/devices/system/cpu");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, EISDIR);
  EXPECT_FALSE(r.error().reason().empty());
  EXPECT_FALSE(sr().read_value("/sys"));
}

TEST_P(SysrootTest, FifoDoesNotHangRead) {
  ASSERT_EQ(::mkfifo((root / "sys/fifo").c_str(), 0600), 0) << std::strerror(errno);
  // Run the read on another thread so that a regression fails the test instead of hanging it.
  auto fut = std::async(std::launch::async, [this] { return sr().read("/sys/fifo"); });
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(5)), std::future_status::ready)
      << "read() of a FIFO without a writer blocked";
  auto r = fut.get();
  // A tree's FIFO is never opened: it is not a file the checks could read.
  ASSERT_FALSE(r) << "opened a FIFO of the tree";
  EXPECT_EQ(r.error().err, ENXIO);
  EXPECT_EQ(r.error().kind, ReadError::unavailable);
  EXPECT_FALSE(sr().open_read("/sys/fifo"));
}

TEST_P(SysrootTest, SymlinkCycleIsAnError) {
  fs::create_symlink("loop_b", root / "sys/loop_a");
  fs::create_symlink("loop_a", root / "sys/loop_b");
  auto r = sr().read("/sys/loop_a");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ELOOP);
  EXPECT_FALSE(sr().list("/sys/loop_a"));
  EXPECT_FALSE(sr().exists("/sys/loop_b"));
  auto text = sr().readlink("/sys/loop_a");  // the link itself is still readable
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "loop_b");
}

TEST_P(SysrootTest, SocketIsUnavailable) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string path = (root / "sys/sock").string();
  if (path.size() >= sizeof addr.sun_path) {
    ::close(fd);
    GTEST_SKIP() << "temp path too long for a UNIX socket";
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  auto r = sr().read("/sys/sock");
  ::close(fd);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ENXIO);
  EXPECT_EQ(r.error().kind, ReadError::unavailable);
}

TEST_P(SysrootTest, TooLargeForTheLimit) {
  ASSERT_TRUE(write_file(root / "sys/big", std::string(20000, 'y')));
  auto r = sr().read("/sys/big", 1000);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ReadError::too_large);
  EXPECT_EQ(r.error().path, "/sys/big");
  EXPECT_EQ(r.error().reason(), "larger than the read limit");
  // Exactly at the limit is fine; one byte over is not.
  ASSERT_TRUE(write_file(root / "sys/exact", std::string(1000, 'z')));
  EXPECT_TRUE(sr().read("/sys/exact", 1000));
  EXPECT_FALSE(sr().read("/sys/exact", 999));
  // read_value caps at 64 KiB.
  ASSERT_TRUE(write_file(root / "sys/huge_value", std::string(70000, 'v')));
  auto v = sr().read_value("/sys/huge_value");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().kind, ReadError::too_large);
}

TEST_P(SysrootTest, ListIsSortedWithoutDots) {
  auto l = sr().list("/sys/devices/system/node");
  ASSERT_TRUE(l) << l.error().reason();
  EXPECT_EQ(*l, (std::vector<std::string>{"has_memory_dir_empty", "node0", "node1"}));
  auto empty = sr().list("/sys/devices/system/node/has_memory_dir_empty");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  auto top = sr().list("/");
  ASSERT_TRUE(top);
  EXPECT_EQ(*top, (std::vector<std::string>{"etc", "proc", "sys"}));
}

TEST_P(SysrootTest, ListErrors) {
  auto missing = sr().list("/sys/class/nothing");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ReadError::unavailable);
  EXPECT_EQ(missing.error().reason(), "not present");
  auto file = sr().list("/sys/devices/system/cpu/online");
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().kind, ReadError::unavailable);  // ENOTDIR
}

TEST_P(SysrootTest, ListFollowsLinkedDirectories) {
  auto l = sr().list("/sys/bus/node/devices/node0");
  ASSERT_TRUE(l) << l.error().reason();
  EXPECT_EQ(*l, (std::vector<std::string>{"cpulist"}));
}

TEST_P(SysrootTest, Readlink) {
  auto rel = sr().readlink("/sys/bus/node/devices/node0");
  ASSERT_TRUE(rel) << rel.error().reason();
  EXPECT_EQ(*rel, "../../../devices/system/node/node0");
  auto abs = sr().readlink("/etc/abs");
  ASSERT_TRUE(abs);
  EXPECT_EQ(*abs, "/sys/devices/system/cpu/online");  // the link text, not resolved
  auto self = sr().readlink("/proc/self");
  ASSERT_TRUE(self);
  EXPECT_EQ(*self, "4242");
  auto dangling = sr().readlink("/etc/dangling");
  ASSERT_TRUE(dangling);
  EXPECT_EQ(*dangling, "/nonexistent-perfgap-target");
}

TEST_P(SysrootTest, ReadlinkErrors) {
  auto notlink = sr().readlink("/sys/devices/system/cpu/online");
  ASSERT_FALSE(notlink);
  EXPECT_EQ(notlink.error().err, EINVAL);
  EXPECT_EQ(notlink.error().kind, ReadError::unavailable);
  auto missing = sr().readlink("/sys/bus/node/devices/node9");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().reason(), "not present");
  auto noparent = sr().readlink("/no/such/dir/link");
  ASSERT_FALSE(noparent);
  EXPECT_EQ(noparent.error().reason(), "not present");
}

TEST_P(SysrootTest, ReadlinkThroughLinkedParent) {
  // The parent directory is itself reached through a link: it resolves inside the tree.
  fs::create_symlink("/proc/4242", root / "etc/pidlink");
  fs::create_symlink("comm", root / "proc/4242/commlink");
  auto r = sr().readlink("/etc/pidlink/commlink");
  ASSERT_TRUE(r) << r.error().reason();
  EXPECT_EQ(*r, "comm");
}

TEST_P(SysrootTest, StatFollowsLinks) {
  auto dir = sr().stat("/sys/devices/system/node");
  ASSERT_TRUE(dir);
  EXPECT_TRUE(S_ISDIR(dir->st_mode));
  auto file = sr().stat("/sys/devices/system/cpu/online");
  ASSERT_TRUE(file);
  EXPECT_TRUE(S_ISREG(file->st_mode));
  EXPECT_EQ(file->st_size, 4);
  auto via_link = sr().stat("/sys/bus/node/devices/node0");
  ASSERT_TRUE(via_link);
  EXPECT_TRUE(S_ISDIR(via_link->st_mode));
  EXPECT_TRUE(sr().exists("/proc/self/comm"));
  EXPECT_FALSE(sr().exists("/proc/1/comm"));
  auto dangling = sr().stat("/etc/dangling");
  ASSERT_FALSE(dangling);
  EXPECT_EQ(dangling.error().reason(), "not present");
}

TEST_P(SysrootTest, StatDoesNotOpenFifo) {
  ASSERT_EQ(::mkfifo((root / "sys/fifo2").c_str(), 0600), 0);
  auto fut = std::async(std::launch::async, [this] { return sr().stat("/sys/fifo2"); });
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  auto st = fut.get();
  ASSERT_TRUE(st);
  EXPECT_TRUE(S_ISFIFO(st->st_mode));
}

TEST_P(SysrootTest, RelativeLinksResolve) {
  auto r = sr().read("/sys/bus/node/devices/node0/cpulist");
  ASSERT_TRUE(r) << r.error().reason();
  EXPECT_EQ(*r, "0-1\n");
  auto self = sr().read_value("/proc/self/comm");
  ASSERT_TRUE(self);
  EXPECT_EQ(*self, "python3");
}

TEST_P(SysrootTest, AbsoluteLinksResolveInsideTheTree) {
  auto r = sr().read("/etc/abs");
  ASSERT_TRUE(r) << r.error().reason();
  EXPECT_EQ(*r, "0-3\n");
  auto through_dir = sr().read("/etc/absdir/node1/cpulist");
  ASSERT_TRUE(through_dir) << through_dir.error().reason();
  EXPECT_EQ(*through_dir, "2-3\n");
  auto l = sr().list("/etc/absdir");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->size(), 3u);
  auto st = sr().stat("/etc/absdir/node0");
  ASSERT_TRUE(st);
  EXPECT_TRUE(S_ISDIR(st->st_mode));
  // A link to a path that exists on the host but not in the tree stays in the tree.
  fs::create_symlink("/proc/self/status", root / "etc/host_only");
  auto host = sr().read("/etc/host_only");
  ASSERT_FALSE(host) << "read the host's /proc/self/status through an absolute link";
  EXPECT_EQ(host.error().kind, ReadError::unavailable);
}

TEST_P(SysrootTest, DotDotCannotEscapeTheRoot) {
  for (const char* path : {"/../outside/secret", "../outside/secret", "/sys/../../outside/secret",
                           "/../../../../../../../../../secret", "/etc/rel_escape", "/etc/abs_escape",
                           "/etc/deep_escape"}) {
    auto r = sr().read(path);
    EXPECT_FALSE(r) << path << " escaped the root and read: " << *r;
    if (!r) {
      EXPECT_EQ(r.error().kind, ReadError::unavailable) << path;
    }
    EXPECT_FALSE(sr().exists(path)) << path;
  }
  auto l = sr().list("/..");
  ASSERT_TRUE(l);  // ".." of the root is the root
  EXPECT_EQ(*l, (std::vector<std::string>{"etc", "proc", "sys"}));
  // ".." inside the tree still works.
  auto inside = sr().read("/sys/devices/system/node/../cpu/online");
  ASSERT_TRUE(inside);
  EXPECT_EQ(*inside, "0-3\n");
}

TEST_P(SysrootTest, CopiesShareTheRoot) {
  Sysroot copy = sr();
  sysroot.reset();  // the copy keeps the root descriptor open
  auto r = copy.read("/sys/devices/system/cpu/online");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "0-3\n");
}

TEST_P(SysrootTest, OpenReadGivesADescriptor) {
  auto fd = sr().open_read("/proc/4242/comm");
  ASSERT_TRUE(fd);
  char buf[16] = {};
  EXPECT_EQ(::read(*fd, buf, sizeof buf), 8);
  ::close(*fd);
  EXPECT_EQ(std::string(buf), "python3\n");
  auto missing = sr().open_read("/proc/4242/nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().reason(), "not present");
}

// Links written to leave the tree: absolute host paths (an /etc/shadow-like target), '../'
// chains, a link to a directory outside, links through links. None reads the outside file,
// with openat2 and with the walk by hand.
TEST_P(SysrootTest, HostileLinksNeverLeaveTheTree) {
  const std::string outside = (base / "outside").string();
  ASSERT_TRUE(write_file(base / "outside/shadow", "root:SENTINEL-HASH:19000::::::\n"));
  fs::create_symlink(outside + "/shadow", root / "etc/shadow_abs");               // the host's absolute path
  fs::create_symlink("../../../../../../../../../../" + outside.substr(1) + "/shadow", root / "etc/shadow_dots");
  fs::create_symlink(outside, root / "etc/outdir_abs");                            // a directory outside
  fs::create_symlink("../outside", root / "outdir_rel");                           // one level up from the root
  fs::create_symlink("../etc/outdir_abs/shadow", root / "sys/via_link");           // a link to a link
  fs::create_symlink("/etc/../../../" + outside.substr(1) + "/shadow", root / "sys/abs_dots");
  fs::create_symlink("/", root / "sys/rootlink");
  fs::create_directories(root / "sys/a/b");
  fs::create_symlink("../../../..", root / "sys/a/b/up");                          // a '..' chain through a link
  for (const std::string& path : std::vector<std::string>{"/etc/shadow_abs", "/etc/shadow_dots", "/etc/outdir_abs/shadow", "/outdir_rel/shadow",
                           "/sys/via_link", "/sys/abs_dots", "/sys/rootlink/../outside/shadow",
                           "/sys/a/b/up/../../outside/shadow", "/sys/a/b/up/outside/shadow", outside + "/shadow"}) {
    auto r = sr().read(path);
    EXPECT_FALSE(r) << path << " left the tree and read: " << *r;
    if (!r) {
      EXPECT_EQ(r.error().kind, ReadError::unavailable) << path << ": " << r.error().reason();
    }
    auto fd = sr().open_read(path);
    EXPECT_FALSE(fd) << path;
    if (fd) ::close(*fd);
    EXPECT_FALSE(sr().exists(path)) << path;
  }
  // A link to a directory outside lists nothing of it; a '..' chain ends at the tree's root.
  EXPECT_FALSE(sr().list("/etc/outdir_abs"));
  auto up = sr().list("/sys/a/b/up");
  ASSERT_TRUE(up) << up.error().reason();
  EXPECT_EQ(*up, (std::vector<std::string>{"etc", "outdir_rel", "proc", "sys"}));
  auto via_root = sr().read("/sys/rootlink/sys/devices/system/cpu/online");
  ASSERT_TRUE(via_root) << via_root.error().reason();
  EXPECT_EQ(*via_root, "0-3\n");
  // The readlink of a parent reached through an outside link stays inside too.
  EXPECT_FALSE(sr().readlink("/etc/outdir_abs/shadow"));
}

// read_values_in answers each name as read_value would: values trimmed, missing entries
// unavailable, links resolved inside the tree (never out of it), odd objects refused, and a
// directory that is not there an error for every name.
TEST_P(SysrootTest, ReadValuesInAnswersAsReadValue) {
  const fs::path dir = root / "sys/class/infiniband/mlx5_0/ports/1/counters";
  ASSERT_TRUE(write_file(dir / "symbol_error", "12\n"));
  ASSERT_TRUE(write_file(dir / "link_downed", " 3 \n"));
  fs::create_symlink("/sys/devices/system/cpu/online", dir / "abs_link");  // resolves in the tree
  fs::create_symlink((base / "outside/secret").string(), dir / "out_link");  // must not escape
  fs::create_directories(dir / "subdir");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  const std::string d = "/sys/class/infiniband/mlx5_0/ports/1/counters";
  const std::vector<std::string> names{"symbol_error", "link_downed", "absent", "abs_link", "out_link", "subdir", "fifo", "../../../../../../../etc/abs", ""};
  auto got = sr().read_values_in(d, names);
  ASSERT_EQ(got.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto want = sr().read_value(perfgap::sys::join(d, names[i]));
    EXPECT_EQ(got[i].has_value(), want.has_value()) << names[i];
    if (got[i] && want) {
      EXPECT_EQ(*got[i], *want) << names[i];
    }
    if (!got[i] && !want) {
      EXPECT_EQ(got[i].error().kind, want.error().kind) << names[i];
      EXPECT_EQ(got[i].error().err, want.error().err) << names[i];
    }
  }
  EXPECT_EQ(*got[0], "12");
  EXPECT_EQ(*got[1], "3");
  EXPECT_EQ(got[2].error().reason(), "not present");
  EXPECT_EQ(*got[3], "0-3");
  EXPECT_FALSE(got[4]) << "a link out of the tree was followed: " << *got[4];
  EXPECT_FALSE(got[6]);  // the FIFO: refused at once, not a hang
  auto none = sr().read_values_in("/sys/class/infiniband/absent", {"a", "b"});
  ASSERT_EQ(none.size(), 2u);
  EXPECT_FALSE(none[0]);
  EXPECT_FALSE(none[1]);
}

TEST_P(SysrootTest, FortyLinksResolveAndFortyOneAreELOOP) {
  ASSERT_TRUE(write_file(root / "sys/chain/target", "end\n"));
  auto chain = [&](const std::string& prefix, int links) {
    for (int i = 0; i < links; ++i) {
      std::string next = i + 1 == links ? "target" : prefix + std::to_string(i + 1);
      fs::create_symlink(next, root / "sys/chain" / (prefix + std::to_string(i)));
    }
  };
  chain("ok", 40);
  chain("over", 41);
  auto ok = sr().read("/sys/chain/ok0");
  ASSERT_TRUE(ok) << ok.error().reason();
  EXPECT_EQ(*ok, "end\n");
  auto over = sr().read("/sys/chain/over0");
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().err, ELOOP);
}

TEST_P(SysrootTest, TrailingSlashAndDotsAfterAFileAreNotADirectory) {
  for (const char* path : {"/sys/devices/system/cpu/online/", "/sys/devices/system/cpu/online/.",
                           "/sys/devices/system/cpu/online/.."}) {
    auto r = sr().stat(path);
    ASSERT_FALSE(r) << path;
    EXPECT_EQ(r.error().err, ENOTDIR) << path;
  }
  auto dir = sr().list("/sys/bus/node/devices/node0/");
  ASSERT_TRUE(dir) << dir.error().reason();
  EXPECT_EQ(*dir, (std::vector<std::string>{"cpulist"}));
}

TEST_P(SysrootTest, DeviceNodesOfATreeAreNeverOpened) {
  // A copy of /dev/zero: reading it would never end (too_large), so an open shows.
  if (::mknod((root / "sys/zero").c_str(), S_IFCHR | 0644, makedev(1, 5)) != 0)
    GTEST_SKIP() << "cannot make a device node here (not root): " << std::strerror(errno);
  fs::create_symlink("/sys/zero", root / "etc/zero_link");
  for (const char* path : {"/sys/zero", "/etc/zero_link"}) {
    auto r = sr().read(path);
    ASSERT_FALSE(r) << path << " was opened";
    EXPECT_EQ(r.error().err, ENXIO) << path;
    EXPECT_EQ(r.error().kind, ReadError::unavailable);
    auto st = sr().stat(path);  // still visible as what it is
    ASSERT_TRUE(st) << path;
    EXPECT_TRUE(S_ISCHR(st->st_mode));
  }
  // A captured /dev/cpu_dma_latency is a regular file with its 4 bytes (contract), and reads.
  std::int32_t v = 20;
  ASSERT_TRUE(write_file(root / "dev/cpu_dma_latency", std::string(reinterpret_cast<const char*>(&v), 4)));
  auto qos = sr().read("/dev/cpu_dma_latency");
  ASSERT_TRUE(qos) << qos.error().reason();
  EXPECT_EQ(qos->size(), 4u);
}

TEST_P(SysrootTest, TheSwitchReallyWalksByHand) {
  const auto before = perfgap::sys::tree_walks();
  ASSERT_TRUE(sr().read("/sys/bus/node/devices/node0/cpulist"));
  if (GetParam()) {
    EXPECT_FALSE(perfgap::sys::openat2_in_use());
    EXPECT_GT(perfgap::sys::tree_walks(), before);
  } else if (perfgap::sys::openat2_in_use()) {
    EXPECT_EQ(perfgap::sys::tree_walks(), before);
  }
}

INSTANTIATE_TEST_SUITE_P(Resolvers, SysrootTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("walk") : std::string("openat2"); });

// The walk by hand gives what openat2 gives, path for path (where this kernel has openat2).
TEST(SysrootWalk, SameAnswersAsOpenat2) {
  TempDir tmp;
  fs::path root = fs::path(tmp.path()) / "root";
  ASSERT_TRUE(write_file(fs::path(tmp.path()) / "outside/f", "outside\n"));
  ASSERT_TRUE(write_file(root / "a/b/c", "c\n"));
  ASSERT_TRUE(write_file(root / "a/d", "d\n"));
  fs::create_symlink("b", root / "a/lb");
  fs::create_symlink("/a/b", root / "a/abs");
  fs::create_symlink("../../../outside/f", root / "a/esc");
  fs::create_symlink("/../outside/f", root / "a/absesc");
  fs::create_symlink("lb/../d", root / "a/dots");
  fs::create_symlink("nowhere", root / "a/dangling");
  fs::create_symlink("c/x", root / "a/b/through_file");
  fs::create_symlink("self", root / "a/self");
  auto s = Sysroot::at(root.string());
  ASSERT_TRUE(s);
  std::vector<std::string> paths = {"/", "/a", "/a/b/c", "/a/lb/c", "/a/abs/c", "/a/esc", "/a/absesc", "/a/dots",
                                    "/a/dangling", "/a/b/through_file", "/a/self", "/a/lb/../d", "/a/abs/../d",
                                    "/../../a/d", "/a/b/c/", "/a//b///c", "/a/./b/./c", "/a/lb/", "/nope/x"};
  auto answer = [&](const std::string& p) {
    std::string out;
    auto r = s->read(p);
    out += r ? "read:" + *r : "read-err:" + std::to_string(r.error().err);
    auto l = s->list(p);
    out += l ? " list:" + std::to_string(l->size()) : " list-err:" + std::to_string(l.error().err);
    auto st = s->stat(p);
    out += st ? " stat:" + std::to_string(st->st_mode & S_IFMT) : " stat-err:" + std::to_string(st.error().err);
    auto rl = s->readlink(p);
    out += rl ? " link:" + *rl : " link-err:" + std::to_string(rl.error().err);
    return out;
  };
  perfgap::sys::force_no_openat2_for_tests(false);
  std::vector<std::string> with;
  for (const auto& p : paths) with.push_back(answer(p));
  if (!perfgap::sys::openat2_in_use()) GTEST_SKIP() << "openat2(RESOLVE_IN_ROOT) is refused here: nothing to compare with";
  perfgap::sys::force_no_openat2_for_tests(true);
  for (std::size_t i = 0; i < paths.size(); ++i) EXPECT_EQ(answer(paths[i]), with[i]) << paths[i];
  perfgap::sys::force_no_openat2_for_tests(false);
}

TEST(SysrootAt, MissingDirectoryIsNamed) {
  TempDir tmp;
  std::string missing = tmp.path() + "/no-such-capture";
  auto s = Sysroot::at(missing);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find(missing), std::string::npos) << s.error();
}

TEST(SysrootAt, RegularFileIsNotADirectory) {
  TempDir tmp;
  std::string file = tmp.path() + "/file";
  std::ofstream(file) << "x";
  auto s = Sysroot::at(file);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find(file), std::string::npos) << s.error();
  EXPECT_NE(s.error().find("not a directory"), std::string::npos) << s.error();
}

TEST(SysrootAt, LiveReadsTheRealSystem) {
  Sysroot live = Sysroot::live();
  EXPECT_TRUE(live.is_live());
  EXPECT_EQ(live.root(), "");
  auto r = live.read("/proc/self/stat");
  ASSERT_TRUE(r) << r.error().reason();
  EXPECT_FALSE(r->empty());
  auto missing = live.read("/proc/self/perfgap-no-such-file");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().reason(), "not present");
}

TEST(SysrootAt, JoinUsesOneSlash) {
  EXPECT_EQ(perfgap::sys::join("/sys/devices", "cpu0"), "/sys/devices/cpu0");
  EXPECT_EQ(perfgap::sys::join("/sys/devices/", "cpu0"), "/sys/devices/cpu0");
  EXPECT_EQ(perfgap::sys::join("", "cpu0"), "/cpu0");
}
