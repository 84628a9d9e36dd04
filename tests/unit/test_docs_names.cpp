// Issue 46 item 6: the docs a newcomer reads first name what exists. Every path in backticks in
// docs/ARCHITECTURE.md and CONTRIBUTING.md that starts at a folder of the repository (or of
// src/) names a file or folder that is there (with or without its .hpp/.cpp), and every symbol
// written as code (`name()`, `ns::name`) is defined or used somewhere in the sources.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kDocsRoot = PERFGAP_SOURCE_DIR;

std::string docs_slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> docs_code_spans(const std::string& text) {
  std::vector<std::string> out;
  static const std::regex span("`([^`\n]+)`");
  for (std::sregex_iterator it(text.begin(), text.end(), span), end; it != end; ++it) out.push_back((*it)[1].str());
  return out;
}

// A path as the docs write it: from the repository root or from src/, the extension optional.
bool docs_path_exists(const fs::path& root, const std::string& p) {
  for (const fs::path& base : {root, root / "src"})
    for (const char* ext : {"", ".hpp", ".cpp", ".md", ".sh"})
      if (fs::exists(base / (p + ext))) return true;
  return false;
}

// Whether `p` starts at a folder of the repository or of src/ (so it is meant as a path here,
// not a report name such as perfgap.report/1 or an example like reports/node1.json).
bool docs_is_repo_path(const fs::path& root, const std::string& p) {
  // Absolute paths and ../ (the shared data beside the checkout, absent in a user's clone) are
  // not the repository's.
  if (p.empty() || p[0] == '/' || p.starts_with("../") || p.find('/') == std::string::npos) return false;
  if (p.find_first_of(" *<>{}$:") != std::string::npos) return false;
  const std::string first = p.substr(0, p.find('/'));
  return fs::is_directory(root / first) || fs::is_directory(root / "src" / first);
}

const std::string& docs_all_sources() {
  static const std::string all = [] {
    std::string s;
    for (const char* dir : {"src", "tests", "tools", "fuzz", "bench"})
      for (const auto& e : fs::recursive_directory_iterator(kDocsRoot / dir)) {
        const auto ext = e.path().extension();
        if (e.is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".sh" || ext == ".txt")) s += docs_slurp(e.path()) + "\n";
      }
    return s;
  }();
  return all;
}

bool docs_word_in_sources(const std::string& word) {
  const auto& s = docs_all_sources();
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (auto at = s.find(word); at != std::string::npos; at = s.find(word, at + 1)) {
    const bool left = at == 0 || !ident(s[at - 1]);
    const bool right = at + word.size() >= s.size() || !ident(s[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

}  // namespace

TEST(DocsNames, EveryPathAndSymbolInArchitectureAndContributingExists) {
  static const std::regex symbol(R"(^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*(\(\))?$)");
  std::size_t paths = 0, symbols = 0;
  for (const char* doc : {"docs/ARCHITECTURE.md", "CONTRIBUTING.md"}) {
    const auto text = docs_slurp(kDocsRoot / doc);
    ASSERT_FALSE(text.empty()) << doc;
    for (const auto& span : docs_code_spans(text)) {
      if (docs_is_repo_path(kDocsRoot, span)) {
        ++paths;
        EXPECT_TRUE(docs_path_exists(kDocsRoot, span)) << doc << " names " << span << ", which is not in the repository";
      } else if (std::regex_match(span, symbol) && (span.find("::") != std::string::npos || span.ends_with("()"))) {
        ++symbols;
        std::string name = span.ends_with("()") ? span.substr(0, span.size() - 2) : span;
        if (auto c = name.rfind("::"); c != std::string::npos) name = name.substr(c + 2);
        EXPECT_TRUE(docs_word_in_sources(name)) << doc << " names " << span << ", which no source defines or uses";
      }
    }
  }
  // The docs do name code: a parse that found nothing would pass whatever they say.
  EXPECT_GT(paths, 80u);
  EXPECT_GT(symbols, 30u);
  // And a name that is not there is caught.
  EXPECT_FALSE(docs_path_exists(kDocsRoot, "analyzers/no_such_file.cpp"));
  EXPECT_TRUE(docs_is_repo_path(kDocsRoot, "analyzers/no_such_file.cpp"));
  EXPECT_FALSE(docs_is_repo_path(kDocsRoot, "perfgap.report/1"));
  EXPECT_FALSE(docs_is_repo_path(kDocsRoot, "../shared/field/trees"));
  EXPECT_FALSE(docs_word_in_sources(std::string("no_function_named_") + "like_this_anywhere"));  // (split: this file is a source too)
}
