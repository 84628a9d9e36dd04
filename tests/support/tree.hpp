// Fixture trees as text (.tree files), so that git keeps what sysfs is made of: empty
// directories, symbolic links (relative, absolute, cycles), NUL-separated and binary files.
// Format (docs/FIXTURES.md):
//   == file PATH [noeol] [esc] [mode=0NNN]   then the content lines, up to the next "== "
//   == dir PATH
//   == link PATH -> TARGET
//   == include OTHER.tree                    (relative to this file; later entries win)
//   == remove PATH                           (drops what an included tree made)
//   == expect ID[@SUBJECT] STATUS [TITLE TEXT]   expectation of the case runner
//   == option NAME=VALUE                     (pid=4242)
//   ==# comment
// PATH may hold {0-3} and {a,b} expansions. Trailing blank lines of a file are dropped.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <tl/expected.hpp>

namespace perfgap::fixture {

struct Expectation {
  std::string id, subject, status, title_contains;
  int line = 0;
};

struct TreeSpec {
  std::vector<Expectation> expect;
  std::vector<std::pair<std::string, std::string>> options;
};

// Writes the tree described by `tree_file` under `dest` (created). Errors name file:line.
tl::expected<TreeSpec, std::string> unpack_tree(const std::string& tree_file, const std::string& dest);

// A fresh directory under $TMPDIR, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }  // path of NAME in it

 private:
  std::string path_;
};

std::vector<std::string> expand_braces(const std::string& pattern);

}  // namespace perfgap::fixture
