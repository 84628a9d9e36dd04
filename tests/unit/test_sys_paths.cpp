// sys/paths: each function is the one call it replaced outside sys/ (std::filesystem, stat,
// mkdtemp, ...), so it must answer as that call did; and the snapshot directory writer builds
// OUT whole or leaves nothing.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "files.hpp"
#include "sys/paths.hpp"
#include "tree.hpp"

namespace perfgap::sys {
namespace {

namespace fs = std::filesystem;

TEST(SysPaths, PathStringsAsStdFilesystem) {
  for (const std::string p : {"a/b.json", "b.json", "dir/", "/", "", ".", "..", "a/.", "/x/y/../z", "a//b", "./a/./b/"}) {
    SCOPED_TRACE(p);
    EXPECT_EQ(base_name(p), fs::path(p).filename().string());
    EXPECT_EQ(lexically_normal(p), fs::path(p).lexically_normal().string());
    if (!p.empty()) {
      auto a = absolute_path(p);
      ASSERT_TRUE(a.has_value());
      EXPECT_EQ(*a, fs::absolute(p).string());
    }
  }
  EXPECT_EQ(in_temp_directory("x.XXXXXX"), (fs::temp_directory_path() / "x.XXXXXX").string());
}

TEST(SysPaths, QuestionsAndChanges) {
  fixture::TempDir tmp;
  const std::string dir = tmp.file("d");
  EXPECT_FALSE(exists(dir));
  EXPECT_FALSE(stat_path(dir).has_value());
  EXPECT_EQ(stat_path(dir).error(), ENOENT);
  ASSERT_TRUE(make_directory(dir));
  EXPECT_FALSE(make_directory(dir));
  EXPECT_EQ(errno, EEXIST);
  EXPECT_TRUE(is_directory(dir));
  EXPECT_TRUE(is_empty_directory(dir));
  fixture::write_file(dir + "/f.json", "12345");
  EXPECT_FALSE(is_empty_directory(dir));
  EXPECT_FALSE(is_directory(dir + "/f.json"));
  EXPECT_TRUE(can_access(dir + "/f.json", R_OK));
  EXPECT_EQ(read_file_head(dir + "/f.json", 2), "12");
  EXPECT_EQ(read_file_head(dir + "/none", 2), "");
  ASSERT_EQ(::symlink("f.json", (dir + "/link").c_str()), 0);
  EXPECT_TRUE(S_ISLNK(lstat_path(dir + "/link")->st_mode));
  EXPECT_EQ(read_link(dir + "/link"), "f.json");
  EXPECT_EQ(real_path(dir + "/link"), fs::canonical(dir + "/f.json").string());
  EXPECT_EQ(canonical_path(dir + "/link").value(), fs::canonical(dir + "/f.json").string());

  auto listing = list_directory(dir);
  EXPECT_EQ(listing.error, "");
  std::sort(listing.entries.begin(), listing.entries.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  ASSERT_EQ(listing.entries.size(), 2u);
  EXPECT_EQ(listing.entries[0].name, "f.json");
  EXPECT_TRUE(listing.entries[0].regular);
  EXPECT_EQ(listing.entries[0].size, 5u);
  EXPECT_EQ(listing.entries[1].name, "link");  // a link to a regular file counts as one
  EXPECT_TRUE(listing.entries[1].regular);
  std::error_code ec;
  fs::directory_iterator missing(dir + "/none", ec);
  EXPECT_EQ(list_directory(dir + "/none").error, ec.message());

  std::string t = tmp.file("t.XXXXXX");
  ASSERT_TRUE(make_temp_directory(t));
  EXPECT_TRUE(is_directory(t));
  std::string f = tmp.file("f.XXXXXX");
  ASSERT_TRUE(make_temp_file(f));
  EXPECT_FALSE(is_directory(f));
  EXPECT_TRUE(exists(f));
  remove_path(f);
  EXPECT_FALSE(exists(f));
  ASSERT_TRUE(make_directories(t + "/a/b/c").has_value());
  remove_tree(t);
  EXPECT_FALSE(exists(t));

  ASSERT_TRUE(append_to_file(tmp.file("log"), "one\n"));
  ASSERT_TRUE(append_to_file(tmp.file("log"), "two\n"));
  EXPECT_EQ(fixture::read_file(tmp.file("log")), "one\ntwo\n");
  EXPECT_FALSE(append_to_file(tmp.file("none/log"), "x"));
}

TEST(SysPaths, NewDirectoryWholeOrNothing) {
  fixture::TempDir tmp;
  const std::string bytes = "cpu\n", target = "../cpu";
  std::vector<std::pair<std::string, NewItem>> items{{"proc", {NewItem::dir, nullptr}},
                                                     {"proc/cpuinfo", {NewItem::file, &bytes}},
                                                     {"proc/self", {NewItem::link, &target}}};
  const std::string out = tmp.file("snap");
  ASSERT_TRUE(write_new_directory(out, items).has_value());
  EXPECT_EQ(fixture::read_file(out + "/proc/cpuinfo"), "cpu\n");
  EXPECT_EQ(read_link(out + "/proc/self"), "../cpu");
  // OUT now holds files: rename() refuses to replace it, and the temporary beside it goes.
  auto again = write_new_directory(out, items);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error(), std::string(std::strerror(ENOTEMPTY)));
  auto left = list_directory(tmp.path());
  ASSERT_EQ(left.entries.size(), 1u);
  EXPECT_EQ(left.entries[0].name, "snap");
  auto nowhere = write_new_directory(tmp.file("no/such/out"), items);
  ASSERT_FALSE(nowhere.has_value());
  EXPECT_EQ(nowhere.error(), "cannot create a directory beside it: " + std::string(std::strerror(ENOENT)));
}

}  // namespace
}  // namespace perfgap::sys
