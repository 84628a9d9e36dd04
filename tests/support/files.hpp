// Files and paths of the tests: whole-file reads and writes, and where the fixtures are
// (tests/fixtures of this checkout, ../shared beside it).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tree.hpp"

namespace perfgap::fixture {

// The whole file, bytes as they are; "" when it cannot be read.
std::string read_file(const std::filesystem::path& p);

// Replaces `p` with `content` (binary), creating its parent directories; an existing file
// keeps its mode. False when not everything could be written (throws when the directories
// cannot be made).
bool write_file(const std::filesystem::path& p, const std::string& content);

// write_file, then mode 0755: a stand-in command or script.
bool write_script(const std::filesystem::path& p, const std::string& content);

// Writes DIR/NAME (write_file) and returns its path.
std::string write_in(const TempDir& dir, const std::string& name, const std::string& content);

// PERFGAP_SOURCE_DIR/REL, tests/fixtures/REL and tests/fixtures/logs/REL of this checkout.
std::string source_path(const std::string& rel);
std::string fixture_path(const std::string& rel);
std::string log_fixture(const std::string& rel);

// Every fixture case (tests/fixtures/cases/**/*.tree but the base/ trees they include),
// relative to tests/fixtures/cases, sorted.
std::vector<std::string> case_tree_files();

// `s` as a gzip stream (one member), for the readers of .gz inputs.
std::string gzip_text(const std::string& s);

}  // namespace perfgap::fixture
