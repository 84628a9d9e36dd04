// Snapshot archives replayed with check --root, with the real binary: a tar bomb of a million
// empty files is refused in seconds before anything is written, a write error (RLIMIT_FSIZE
// standing in for a full disk) is exit 2 with its cause, SIGINT/SIGTERM/SIGHUP remove the
// unpacked tree; never a partial tree checked, nothing left behind.
#include <gtest/gtest.h>

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

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

// --- 3. Snapshots ------------------------------------------------------------------------

// A .tar.gz of `n` empty files (and one of `big` bytes when big > 0), written to `path`.
void make_archive(const fs::path& path, std::size_t n, std::size_t big = 0) {
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_gzip(a);
  archive_write_set_filter_option(a, "gzip", "compression-level", "1");
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
  struct archive_entry* e = archive_entry_new();
  auto add = [&](const std::string& name, const std::string& content) {
    archive_entry_clear(e);
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, static_cast<la_int64_t>(content.size()));
    archive_write_header(a, e);
    if (!content.empty()) archive_write_data(a, content.data(), content.size());
  };
  add("proc/sys/kernel/hostname", "bomb\n");
  if (big) add("proc/big", std::string(big, 'b'));
  for (std::size_t i = 0; i < n; ++i) add("d" + std::to_string(i % 100) + "/f" + std::to_string(i), "");
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
}

TEST(HostileSnapshot, AWriteErrorIsExit2WithItsCauseAndLeavesNothing) {
  TempDir tmp;
  const fs::path work = fs::path(tmp.path()) / "tmp";
  fs::create_directories(work);
  const fs::path archive = fs::path(tmp.path()) / "big.tar.gz";
  make_archive(archive, 10, 1 << 20);
  // RLIMIT_FSIZE makes every write past 64 blocks fail (EFBIG), as a full disk would.
  auto r = run_binary("/bin/sh", {"-c", "ulimit -f 64 && exec \"$0\" check --root \"$1\"", PERFGAP_BINARY, archive.string()},
                      {{"TMPDIR", work.string()}});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find(archive.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "a partial tree was checked";
  EXPECT_TRUE(entries_of(work).empty()) << "the unpacked tree was left behind";
}

TEST(HostileSnapshot, TooManyEntriesIsRefusedBeforeWriting) {
  TempDir tmp;
  const fs::path work = fs::path(tmp.path()) / "tmp";
  fs::create_directories(work);
  const fs::path archive = fs::path(tmp.path()) / "bomb.tar.gz";
  make_archive(archive, 1'000'000);  // + the hostname: one entry over the limit
  const auto start = std::chrono::steady_clock::now();
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", archive.string()}, {{"TMPDIR", work.string()}});
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("more than 1000000 entries"), std::string::npos) << r.err;
  EXPECT_LT(secs, 30.0);
  EXPECT_TRUE(entries_of(work).empty());
}

TEST(HostileSnapshot, SignalsRemoveTheUnpackedTree) {
  TempDir tmp;
  const fs::path archive = fs::path(tmp.path()) / "many.tar.gz";
  make_archive(archive, 200'000);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    const fs::path work = fs::path(tmp.path()) / ("tmp" + std::to_string(sig));
    fs::create_directories(work);
    std::vector<std::string> args = {PERFGAP_BINARY, "check", "--root", archive.string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s = {"TMPDIR=" + work.string(), "PATH=/usr/bin:/bin"};
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, args[0].c_str(), &fa, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&fa);
    // Wait until unpacking has written something, then interrupt it.
    bool writing = false;
    for (int i = 0; i < 3000 && !writing; ++i) {
      for (const auto& name : entries_of(work))
        if (entries_of(work / name).size() > 1) writing = true;
      if (!writing) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(writing) << "the archive was never unpacked";
    ASSERT_EQ(::kill(pid, sig), 0);
    int st = 0;
    ASSERT_EQ(::waitpid(pid, &st, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == sig) << "signal " << sig << ": status " << st;
    EXPECT_TRUE(entries_of(work).empty()) << "signal " << sig << " left the unpacked tree";
  }
}

}  // namespace
