// fleet input expansion: perfgap expands quoted globs itself (not glob(3), which would link
// NSS into the static binary); it must find what glob(3) with no flags finds, in its order.
#include <gtest/gtest.h>

#include <glob.h>

#include <filesystem>
#include <fstream>

#include "fleet/inputs.hpp"
#include "tree.hpp"

namespace perfgap::fleet {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> libc_glob(const std::string& pattern) {
  glob_t g{};
  std::vector<std::string> out;
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  return out;
}

TEST(FleetInputs, GlobsExpandAsGlob3Does) {
  perfgap::fixture::TempDir tmp;
  const fs::path root = tmp.path();
  for (const char* f : {"a/n1.json", "a/n2.json", "a/.hidden.json", "a-b/n3.json", "a/sub/n4.json", "c/x.txt", "c/y.json", "b[1]/z.json"}) {
    fs::create_directories((root / f).parent_path());
    std::ofstream(root / f) << "{}";
  }
  fs::create_directories(root / "locked");
  const std::string r = root.string();
  for (const std::string& pattern : {r + "/*/*.json", r + "/a*/n?.json", r + "/a/*", r + "/[ab]*/n[13].json", r + "/*/sub/*.json",
                                    r + "/b\\[1\\]/*.json", r + "/nothing/*.json"}) {
    SCOPED_TRACE(pattern);
    auto in = expand_inputs({pattern});
    // A matched directory stands for its *.json files; compare on plain files only.
    std::vector<std::string> expected;
    for (auto& p : libc_glob(pattern))
      if (!fs::is_directory(p)) expected.push_back(p);
    std::vector<std::string> got;
    for (auto& p : in.files)
      if (!fs::is_directory(p)) got.push_back(p);
    // r/a/* also matches the directory a/sub, which expand_inputs reads as its *.json.
    if (pattern == r + "/a/*") expected.push_back(r + "/a/sub/n4.json");
    EXPECT_EQ(got, expected);
    EXPECT_EQ(in.problems.empty(), !libc_glob(pattern).empty());
  }
  // Hidden files only with an explicit leading dot.
  auto hidden = expand_inputs({r + "/a/.*.json"});
  ASSERT_EQ(hidden.files.size(), 1u);
  EXPECT_EQ(hidden.files[0], r + "/a/.hidden.json");
}

}  // namespace
}  // namespace perfgap::fleet
