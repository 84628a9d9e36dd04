// Sysroot against trees made in a temporary directory: reads, lists, links and stats resolve
// inside the tree (absolute links included), nothing escapes it, and odd objects (a FIFO, a
// directory, an oversized file) give errors rather than hangs or crashes.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

#include "sys/sysroot.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::TempDir;
using perfgap::sys::ReadError;
using perfgap::sys::Sysroot;

namespace {

void write_file(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << content;
  ASSERT_TRUE(out.good()) << p;
}

// Whether this kernel (and this container's seccomp profile) lets openat2 resolve in a root;
// without it Sysroot falls back to openat, where absolute links leave the tree.
bool openat2_in_root_works(const std::string& dir) {
  int root = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return false;
  struct open_how how {};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT;
  long fd = ::syscall(SYS_openat2, root, ".", &how, sizeof how);
  ::close(root);
  if (fd < 0) return false;
  ::close(static_cast<int>(fd));
  return true;
}

// A captured tree:  <tmp>/outside/secret  (not in the tree)
//                   <tmp>/root/sys/devices/system/cpu/online = "0-3\n"
//                   <tmp>/root/sys/devices/system/node/node0/cpulist = "0-1\n"
//                   <tmp>/root/sys/bus/node/devices/node0 -> ../../../devices/system/node/node0
//                   <tmp>/root/etc/abs -> /sys/devices/system/cpu/online   (absolute, in tree)
//                   <tmp>/root/proc/self -> 4242 ...
class SysrootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base = tmp.path();
    root = base / "root";
    write_file(base / "outside/secret", "escaped\n");
    write_file(base / "secret", "escaped-too\n");
    write_file(root / "sys/devices/system/cpu/online", "0-3\n");
    write_file(root / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "  performance \n");
    write_file(root / "sys/devices/system/node/node0/cpulist", "0-1\n");
    write_file(root / "sys/devices/system/node/node1/cpulist", "2-3\n");
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
    write_file(root / "proc/4242/comm", "python3\n");
    fs::create_symlink("4242", root / "proc/self");
    auto s = Sysroot::at(root.string());
    ASSERT_TRUE(s) << s.error();
    sysroot.emplace(std::move(*s));
  }

  const Sysroot& sr() const { return *sysroot; }

  TempDir tmp;
  fs::path base, root;
  std::optional<Sysroot> sysroot;
};

}  // namespace

TEST_F(SysrootTest, ReadsFilesByTheirRealPath) {
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

TEST_F(SysrootTest, ReadValueTrims) {
  auto v = sr().read_value("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  ASSERT_TRUE(v) << v.error().reason();
  EXPECT_EQ(*v, "performance");
}

TEST_F(SysrootTest, ReadsEmptyFile) {
  write_file(root / "sys/empty", "");
  auto r = sr().read("/sys/empty");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "");
}

TEST_F(SysrootTest, ReadsBinaryAndNulBytes) {
  std::string content("A=1\0B=2\0", 8);
  write_file(root / "proc/4242/environ", content);
  auto r = sr().read("/proc/4242/environ");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, content);
}

TEST_F(SysrootTest, ReadsLargerThanOneBuffer) {
  std::string big(100000, 'x');
  write_file(root / "proc/4242/maps", big);
  auto r = sr().read("/proc/4242/maps");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->size(), big.size());
}

TEST_F(SysrootTest, MissingFileIsUnavailableNotPresent) {
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

TEST_F(SysrootTest, FileUsedAsDirectoryIsUnavailable) {
  auto r = sr().read("/sys/devices/system/cpu/online/child");  // ENOTDIR
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ReadError::unavailable);
  EXPECT_EQ(r.error().reason(), "not present");
}

TEST_F(SysrootTest, DirectoryReadAsFileIsAnError) {
  auto r = sr().read("/sys/devices/system/cpu");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, EISDIR);
  EXPECT_FALSE(r.error().reason().empty());
  EXPECT_FALSE(sr().read_value("/sys"));
}

TEST_F(SysrootTest, FifoDoesNotHangRead) {
  ASSERT_EQ(::mkfifo((root / "sys/fifo").c_str(), 0600), 0) << std::strerror(errno);
  // Run the read on another thread so that a regression fails the test instead of hanging it.
  auto fut = std::async(std::launch::async, [this] { return sr().read("/sys/fifo"); });
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(5)), std::future_status::ready)
      << "read() of a FIFO without a writer blocked";
  auto r = fut.get();
  if (r) {
    EXPECT_EQ(*r, "");  // no writer: nothing to read (an error is fine too)
  }
}

TEST_F(SysrootTest, SymlinkCycleIsAnError) {
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

TEST_F(SysrootTest, SocketIsUnavailable) {
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

TEST_F(SysrootTest, TooLargeForTheLimit) {
  write_file(root / "sys/big", std::string(20000, 'y'));
  auto r = sr().read("/sys/big", 1000);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ReadError::too_large);
  EXPECT_EQ(r.error().path, "/sys/big");
  EXPECT_EQ(r.error().reason(), "larger than the read limit");
  // Exactly at the limit is fine; one byte over is not.
  write_file(root / "sys/exact", std::string(1000, 'z'));
  EXPECT_TRUE(sr().read("/sys/exact", 1000));
  EXPECT_FALSE(sr().read("/sys/exact", 999));
  // read_value caps at 64 KiB.
  write_file(root / "sys/huge_value", std::string(70000, 'v'));
  auto v = sr().read_value("/sys/huge_value");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().kind, ReadError::too_large);
}

TEST_F(SysrootTest, ListIsSortedWithoutDots) {
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

TEST_F(SysrootTest, ListErrors) {
  auto missing = sr().list("/sys/class/nothing");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ReadError::unavailable);
  EXPECT_EQ(missing.error().reason(), "not present");
  auto file = sr().list("/sys/devices/system/cpu/online");
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().kind, ReadError::unavailable);  // ENOTDIR
}

TEST_F(SysrootTest, ListFollowsLinkedDirectories) {
  auto l = sr().list("/sys/bus/node/devices/node0");
  ASSERT_TRUE(l) << l.error().reason();
  EXPECT_EQ(*l, (std::vector<std::string>{"cpulist"}));
}

TEST_F(SysrootTest, Readlink) {
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

TEST_F(SysrootTest, ReadlinkErrors) {
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

TEST_F(SysrootTest, ReadlinkThroughLinkedParent) {
  // The parent directory is itself reached through a link: it resolves inside the tree.
  fs::create_symlink("/proc/4242", root / "etc/pidlink");
  fs::create_symlink("comm", root / "proc/4242/commlink");
  auto r = sr().readlink("/etc/pidlink/commlink");
  ASSERT_TRUE(r) << r.error().reason();
  EXPECT_EQ(*r, "comm");
}

TEST_F(SysrootTest, StatFollowsLinks) {
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

TEST_F(SysrootTest, StatDoesNotOpenFifo) {
  ASSERT_EQ(::mkfifo((root / "sys/fifo2").c_str(), 0600), 0);
  auto fut = std::async(std::launch::async, [this] { return sr().stat("/sys/fifo2"); });
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  auto st = fut.get();
  ASSERT_TRUE(st);
  EXPECT_TRUE(S_ISFIFO(st->st_mode));
}

TEST_F(SysrootTest, RelativeLinksResolve) {
  auto r = sr().read("/sys/bus/node/devices/node0/cpulist");
  ASSERT_TRUE(r) << r.error().reason();
  EXPECT_EQ(*r, "0-1\n");
  auto self = sr().read_value("/proc/self/comm");
  ASSERT_TRUE(self);
  EXPECT_EQ(*self, "python3");
}

TEST_F(SysrootTest, AbsoluteLinksResolveInsideTheTree) {
  if (!openat2_in_root_works(root.string())) GTEST_SKIP() << "openat2(RESOLVE_IN_ROOT) not available here";
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

TEST_F(SysrootTest, DotDotCannotEscapeTheRoot) {
  if (!openat2_in_root_works(root.string())) GTEST_SKIP() << "openat2(RESOLVE_IN_ROOT) not available here";
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

TEST_F(SysrootTest, CopiesShareTheRoot) {
  Sysroot copy = sr();
  sysroot.reset();  // the copy keeps the root descriptor open
  auto r = copy.read("/sys/devices/system/cpu/online");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "0-3\n");
}

TEST_F(SysrootTest, OpenReadGivesADescriptor) {
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
