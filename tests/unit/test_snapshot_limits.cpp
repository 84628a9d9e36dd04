// Unpacking a snapshot archive against hostile input: every limit (entries, bytes, one
// entry's size) and the destination's free space are checked on a first pass over the
// headers, so a refused archive writes nothing; a million empty files are refused in
// seconds.
#include <gtest/gtest.h>

#include <archive.h>
#include <archive_entry.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "snapshot/archive.hpp"
#include "snapshot/capture.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using fixture::TempDir;

namespace {

// An in-memory .tar.gz of `n` entries from `make(i, entry)`.
template <class Make>
std::string tar_gz(std::size_t n, Make make) {
  std::string out;
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_gzip(a);
  archive_write_set_filter_option(a, "gzip", "compression-level", "1");
  archive_write_set_bytes_in_last_block(a, 1);
  archive_write_open(
      a, &out, nullptr,
      [](struct archive*, void* client, const void* buf, size_t len) -> la_ssize_t {
        static_cast<std::string*>(client)->append(static_cast<const char*>(buf), len);
        return static_cast<la_ssize_t>(len);
      },
      nullptr);
  struct archive_entry* e = archive_entry_new();
  std::string content;
  for (std::size_t i = 0; i < n; ++i) {
    archive_entry_clear(e);
    content.clear();
    make(i, e, content);
    archive_entry_set_perm(e, 0644);
    if (archive_entry_filetype(e) == AE_IFREG) archive_entry_set_size(e, static_cast<la_int64_t>(content.size()));
    archive_write_header(a, e);
    if (!content.empty()) archive_write_data(a, content.data(), content.size());
  }
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

std::string files(std::size_t n, std::size_t bytes) {
  return tar_gz(n, [bytes](std::size_t i, struct archive_entry* e, std::string& content) {
    archive_entry_set_pathname(e, ("f" + std::to_string(i)).c_str());
    archive_entry_set_filetype(e, AE_IFREG);
    content.assign(bytes, 'x');
  });
}

std::size_t count_entries(const fs::path& dir) {
  std::size_t n = 0;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) ++n;
  return n;
}

// Unpacks into a fresh directory; returns the error ("" on success) and how many entries
// the destination holds afterwards.
std::pair<std::string, std::size_t> unpack(const std::string& bytes, const snapshot::ExtractLimits& limits) {
  TempDir tmp;
  auto r = snapshot::extract_memory(bytes.data(), bytes.size(), tmp.path(), limits);
  return {r ? "" : r.error(), count_entries(tmp.path())};
}

}  // namespace

TEST(SnapshotLimits, EveryLimitIsCheckedBeforeAnythingIsWritten) {
  snapshot::ExtractLimits lim;
  lim.max_entries = 10;
  auto [err, left] = unpack(files(11, 1), lim);
  EXPECT_NE(err.find("more than 10 entries"), std::string::npos) << err;
  EXPECT_EQ(left, 0u) << "entries were written before the entry limit was seen";

  lim = {};
  lim.max_total_bytes = 1000;
  std::tie(err, left) = unpack(files(3, 400), lim);
  EXPECT_NE(err.find("more than"), std::string::npos) << err;
  EXPECT_EQ(left, 0u) << "files were written before the total limit was seen";

  lim = {};
  lim.max_entry_bytes = 1000;
  std::tie(err, left) = unpack(tar_gz(3, [](std::size_t i, struct archive_entry* e, std::string& c) {
                                 archive_entry_set_pathname(e, ("f" + std::to_string(i)).c_str());
                                 archive_entry_set_filetype(e, AE_IFREG);
                                 c.assign(i == 2 ? 2000 : 10, 'x');  // the last one is too large
                               }),
                               lim);
  EXPECT_NE(err.find("larger than"), std::string::npos) << err;
  EXPECT_EQ(left, 0u);

  // A refused entry type at the end: nothing of the good ones before it is written either.
  std::tie(err, left) = unpack(tar_gz(3, [](std::size_t i, struct archive_entry* e, std::string&) {
                                 archive_entry_set_pathname(e, ("e" + std::to_string(i)).c_str());
                                 archive_entry_set_filetype(e, i == 2 ? AE_IFIFO : AE_IFDIR);
                               }),
                               {});
  EXPECT_NE(err.find("not a file"), std::string::npos) << err;
  EXPECT_EQ(left, 0u);
}

TEST(SnapshotLimits, AFullFileSystemIsRefusedBeforeWriting) {
  snapshot::ExtractLimits lim;
  lim.assume_free = snapshot::FreeSpace{16 * 1024, 1'000'000};  // 16 KiB free
  auto [err, left] = unpack(files(4, 8192), lim);
  EXPECT_NE(err.find("free"), std::string::npos) << err;
  EXPECT_NE(err.find("needs"), std::string::npos) << err;
  EXPECT_EQ(left, 0u);
  lim.assume_free = snapshot::FreeSpace{1ull << 40, 3};  // space, but 3 inodes
  std::tie(err, left) = unpack(files(5, 1), lim);
  EXPECT_NE(err.find("inodes"), std::string::npos) << err;
  EXPECT_EQ(left, 0u);
  lim.assume_free = snapshot::FreeSpace{1ull << 40, 1'000'000};
  std::tie(err, left) = unpack(files(5, 1), lim);
  EXPECT_EQ(err, "");
  EXPECT_EQ(left, 5u);
  // The real statvfs of a temporary directory has room for a few small files.
  std::tie(err, left) = unpack(files(5, 1), {});
  EXPECT_EQ(err, "");
}

TEST(SnapshotLimits, AMillionEmptyFilesAreRefusedInSeconds) {
  const std::size_t n = snapshot::ExtractLimits{}.max_entries + 1;
  auto bytes = tar_gz(n, [](std::size_t i, struct archive_entry* e, std::string&) {
    archive_entry_set_pathname(e, ("d/" + std::to_string(i)).c_str());
    archive_entry_set_filetype(e, AE_IFREG);
  });
  EXPECT_LT(bytes.size(), 64u << 20) << "the bomb should be small";
  const auto start = std::chrono::steady_clock::now();
  auto [err, left] = unpack(bytes, {});
  const auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(err.find("more than 1000000 entries"), std::string::npos) << err;
  EXPECT_EQ(left, 0u) << "a million files were written before the limit";
  EXPECT_LT(secs, 20.0);
}
