// The README against the binary: its example output is what the commands it shows print, and
// its checks table names the ids `check --list` knows (the rest with the command that owns
// them). Both fail when the README drifts; regenerate the table with tools/refresh-docs.sh and
// paste the example's output anew (the failure shows it).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "files.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

namespace {

std::string readme_text() { return perfgap::fixture::read_file(perfgap::fixture::source_path("README.md")); }

// The fenced blocks (``` ... ```) after `marker` and before `end`, their lines without the fences.
std::vector<std::vector<std::string>> readme_blocks_between(const std::string& readme, const std::string& marker, const std::string& end) {
  std::vector<std::vector<std::string>> blocks;
  auto from = readme.find(marker);
  if (from == std::string::npos) return blocks;
  auto to = readme.find(end, from);
  std::istringstream in(readme.substr(from, to == std::string::npos ? std::string::npos : to - from));
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      inside = !inside;
      if (inside) blocks.emplace_back();
      continue;
    }
    if (inside) blocks.back().push_back(line);
  }
  return blocks;
}

std::vector<std::string> readme_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

void readme_replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

constexpr const char* kReadmeExampleBegin = "<!-- example: the test ReadmeExample.OutputIsTheBinarys";
constexpr const char* kReadmeExampleEnd = "<!-- end of example -->";

// Runs the README's example commands as written (the unpacker's reader, the binary under test,
// the tree unpacked into a private directory standing in for the README's) and compares the
// output with the README's block. Only the directory's name is normalised.
TEST(ReadmeExample, OutputIsTheBinarys) {
  auto blocks = readme_blocks_between(readme_text(), kReadmeExampleBegin, kReadmeExampleEnd);
  ASSERT_EQ(blocks.size(), 2u) << "README: the example is a block of commands, then a block of output";
  std::vector<std::string> unpack, check;
  for (const auto& line : blocks[0]) {
    auto w = readme_words(line);
    if (!w.empty() && w[0] == "build-release/tools/perfgap-tree-unpack") unpack = w;
    if (!w.empty() && w[0] == "build-release/src/perfgap") check = w;
  }
  ASSERT_EQ(unpack.size(), 3u) << "README: expected 'build-release/tools/perfgap-tree-unpack TREE DIR'";
  ASSERT_GE(check.size(), 2u) << "README: expected 'build-release/src/perfgap ARGS...'";
  const std::string readme_dir = unpack[2];

  TempDir tmp;
  const std::string dir = (fs::path(tmp.path()) / fs::path(readme_dir).filename()).string();
  auto spec = perfgap::fixture::unpack_tree(perfgap::fixture::source_path(unpack[1]), dir);
  ASSERT_TRUE(spec) << spec.error();
  std::vector<std::string> args(check.begin() + 1, check.end());
  for (auto& a : args)
    if (a == readme_dir) a = dir;
  std::string shown;
  for (const auto& line : blocks[1]) shown += line + "\n";
  // The binary under test, and the README's own (the static release build) where it is built.
  std::vector<std::string> binaries = {PERFGAP_BINARY};
  if (const auto release = perfgap::fixture::source_path(check[0]); fs::exists(release)) binaries.push_back(release);
  for (const auto& binary : binaries) {
    auto r = run_binary(binary, args);
    ASSERT_TRUE(r.status == 0 || r.status == 1) << binary << ": " << r.status << ": " << r.err;
    std::string actual = r.out;
    readme_replace_all(actual, dir, readme_dir);
    EXPECT_EQ(shown, actual) << binary << ": the README's example output is stale: replace its block with the output above";
  }
}

// The fixture as it is stored, given to --root as is: exit 2, one line saying how to unpack it.
TEST(ReadmeExample, TreeFileAsRootSaysHowToUnpackIt) {
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", perfgap::fixture::fixture_path("golden/h100-c1-remote-numa.tree")});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(perfgap::fixture::one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("perfgap-tree-unpack"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// The README's checks table: id -> the "run by" cell.
std::vector<std::pair<std::string, std::string>> readme_table_rows() {
  const std::string readme = readme_text();
  const std::string begin = "<!-- checks table: written by tools/refresh-docs.sh from the registry -->\n";
  auto from = readme.find(begin);
  auto to = readme.find("<!-- end of checks table -->", from);
  std::vector<std::pair<std::string, std::string>> rows;
  if (from == std::string::npos || to == std::string::npos) return rows;
  std::istringstream in(readme.substr(from + begin.size(), to - from - begin.size()));
  std::string line;
  std::getline(in, line);  // header
  if (line.find("| run by |") == std::string::npos) return rows;
  std::getline(in, line);  // rule
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream cs(line);
    for (std::string cell; std::getline(cs, cell, '|');) {
      while (!cell.empty() && cell.front() == ' ') cell.erase(0, 1);
      while (!cell.empty() && cell.back() == ' ') cell.pop_back();
      cells.push_back(cell);
    }
    // "", id, layer, run by, what it decides
    if (cells.size() < 5 || cells[1].size() < 2) continue;
    rows.emplace_back(cells[1].substr(1, cells[1].size() - 2), cells[3]);
  }
  return rows;
}

TEST(ReadmeChecksTable, CheckRowsAreCheckList) {
  auto rows = readme_table_rows();
  ASSERT_FALSE(rows.empty()) << "README: no checks table with a 'run by' column";
  std::vector<std::string> table_check;
  for (const auto& [id, run_by] : rows)
    if (run_by == "`check`") table_check.push_back(id);

  // An empty config: an /etc/perfgap/config.yaml of this machine must not shorten the list.
  TempDir tmp;
  auto config = perfgap::fixture::write_in(tmp, "empty.yaml", "# nothing\n");
  auto r = run_binary(PERFGAP_BINARY, {"check", "--list", "--format", "json", "--config", config});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> listed;
  for (const auto& c : nlohmann::json::parse(r.out)) listed.push_back(c["id"].get<std::string>());
  EXPECT_EQ(table_check, listed) << "README's `check` rows and `perfgap check --list` differ: run tools/refresh-docs.sh";
}

// Every other row names a command that exists, and `check` indeed refuses its id (else the row
// would belong to check).
TEST(ReadmeChecksTable, OtherRowsNameTheirCommand) {
  auto rows = readme_table_rows();
  ASSERT_FALSE(rows.empty());
  TempDir tmp;
  auto config = perfgap::fixture::write_in(tmp, "empty.yaml", "# nothing\n");
  std::size_t others = 0;
  for (const auto& [id, run_by] : rows) {
    if (run_by == "`check`") continue;
    ++others;
    ASSERT_GE(run_by.size(), 3u) << id;
    // The first command named: `profile`, `probe`, ...
    const std::string command = readme_words(run_by.substr(1, run_by.find('`', 1) - 1))[0];
    auto help = run_binary(PERFGAP_BINARY, {command, "--help"});
    EXPECT_EQ(help.status, 0) << id << ": run by " << run_by << ": " << help.err;
    auto only = run_binary(PERFGAP_BINARY, {"check", "--list", "--only", id, "--config", config});
    EXPECT_EQ(only.status, 2) << id << " is selectable in check: its row should say `check`";
    EXPECT_NE(only.err.find("perfgap " + command), std::string::npos) << id << ": the refusal names its command: " << only.err;
  }
  EXPECT_GT(others, 0u);
}

}  // namespace
