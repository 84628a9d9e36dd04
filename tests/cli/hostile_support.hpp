// Shared by the tests/cli/test_hostile_*.cpp files (issue 12: hostile trees, output
// targets, archives, secrets, encodings): small file helpers and the test tree.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "files.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace perfgap::hostile {

namespace fs = std::filesystem;

inline const std::vector<std::string> kFormats = {"text", "json", "junit", "prometheus"};
inline const std::pair<std::string, std::string> kNoOpenat2{"PERFGAP_NO_OPENAT2", "1"};

using fixture::read_file;
using fixture::write_file;

inline void replace_with_link(const fs::path& p, const std::string& target) {
  fs::create_directories(p.parent_path());
  std::error_code ec;
  fs::remove_all(p, ec);
  fs::create_symlink(target, p);
}

using fixture::one_line;

// The golden healthy host, unpacked under `dir`.
inline fs::path healthy_tree(const fs::path& dir) {
  auto spec = perfgap::fixture::unpack_tree(std::string(PERFGAP_SOURCE_DIR) + "/tests/fixtures/golden/healthy-x86.tree", dir.string());
  EXPECT_TRUE(spec) << spec.error();
  return dir;
}

inline std::string env_block(const std::vector<std::string>& vars) {
  std::string out;
  for (const auto& v : vars) out += v + '\0';
  return out;
}

// Every byte sequence valid UTF-8 (what JUnit and Prometheus consumers require).
inline bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    std::size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size() || (len == 2 && b < 0xC2)) return false;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += len;
  }
  return true;
}

inline std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); ++it) out.push_back(it->path().filename().string());
  return out;
}

}  // namespace perfgap::hostile
