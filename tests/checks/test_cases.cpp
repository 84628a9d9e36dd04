// Runs every fixture case (tests/fixtures/cases/**/*.tree, except base/): unpacks the tree,
// runs the checks its expectations name, and compares statuses (and title text); redaction
// must leave its findings as they are.
#include <gtest/gtest.h>

#include "case_options.hpp"

#include <filesystem>

#include "core/baseline.hpp"
#include "core/config.hpp"
#include "core/runner.hpp"
#include "files.hpp"
#include "findings.hpp"
#include "sys/sysroot.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap;

namespace {

class FixtureCase : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureCase, GivesExpectedStatuses) {
  fs::path file = fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/cases" / GetParam();
  fixture::TempDir tmp;
  auto spec = fixture::unpack_tree(file.string(), tmp.path());
  ASSERT_TRUE(spec) << spec.error();
  ASSERT_FALSE(spec->expect.empty()) << file << ": no '== expect' line";

  auto opts = fixture::case_options(spec->options, tmp.path());
  ASSERT_TRUE(opts) << file << ": " << opts.error();
  auto root = sys::Sysroot::at(tmp.path());
  ASSERT_TRUE(root);
  const auto& registry = core::builtin_registry();
  std::vector<const core::CheckInfo*> selected;
  for (const auto& e : spec->expect) {
    const auto* info = registry.find(e.id);
    ASSERT_NE(info, nullptr) << file << ":" << e.line << ": unknown check " << e.id;
    if (std::find(selected.begin(), selected.end(), info) == selected.end()) selected.push_back(info);
  }
  auto findings = core::run_checks(selected, std::make_shared<facts::Facts>(*root, *opts), core::Config{}, core::RunOptions{});
  // Where openat2 is refused (seccomp, old kernels) the tree is walked by hand: the same
  // case must give the same findings, word for word.
  sys::force_no_openat2_for_tests(true);
  auto walked = core::run_checks(selected, std::make_shared<facts::Facts>(*root, *opts), core::Config{}, core::RunOptions{});
  sys::force_no_openat2_for_tests(false);
  EXPECT_EQ(fixture::describe_findings(walked), fixture::describe_findings(findings)) << file << ": different findings when openat2 is refused";
  // Redaction on the way out changes nothing in a report without credentials (issue 42: "pass:"
  // was taken for a password header); checks show a credential of the tree as <redacted> already.
  EXPECT_TRUE(fixture::changed_by_redaction(findings).empty()) << file << ": redaction changed the report:\n"
                                                              << ::testing::PrintToString(fixture::changed_by_redaction(findings));
  for (const auto& e : spec->expect) {
    std::vector<const report::Finding*> match;
    for (const auto& f : findings)
      if (f.id == e.id && (e.subject.empty() || f.subject == e.subject)) match.push_back(&f);
    ASSERT_FALSE(match.empty()) << file << ":" << e.line << ": no finding for " << e.id << "@" << e.subject;
    // Without a subject, the id's merged status: the most severe of its findings.
    const report::Finding* worst = match.front();
    for (const auto* f : match)
      if (report::severity(f->status) > report::severity(worst->status)) worst = f;
    std::string all_titles;
    for (const auto* f : match) all_titles += "\n  [" + std::string(report::to_string(f->status)) + "] " + f->title;
    EXPECT_EQ(std::string(report::to_string(worst->status)), e.status)
        << file << ":" << e.line << ": " << e.id << all_titles;
    if (!e.title_contains.empty()) {
      EXPECT_NE(worst->title.find(e.title_contains), std::string::npos)
          << file << ":" << e.line << ": title lacks '" << e.title_contains << "'" << all_titles;
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (auto& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Cases, FixtureCase, ::testing::ValuesIn(fixture::case_tree_files()), case_name);

}  // namespace
