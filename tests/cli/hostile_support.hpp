// Shared by the tests/cli/test_hostile_*.cpp files (issue 12: hostile trees, output
// targets, archives, secrets, encodings): small file helpers and the test tree.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tree.hpp"

namespace perfgap::hostile {

namespace fs = std::filesystem;

inline const std::vector<std::string> kFormats = {"text", "json", "junit", "prometheus"};
inline const std::pair<std::string, std::string> kNoOpenat2{"PERFGAP_NO_OPENAT2", "1"};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

inline void replace_with_link(const fs::path& p, const std::string& target) {
  fs::create_directories(p.parent_path());
  std::error_code ec;
  fs::remove_all(p, ec);
  fs::create_symlink(target, p);
}

inline bool one_line(const std::string& err) { return !err.empty() && err.find('\n') == err.size() - 1; }

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
