// Redaction as a property of the reports perfgap makes (issue 42): over every golden tree's
// checks, the golden reports, and every analyzer's findings over the real captures of ../shared
// (fixtures and field logs), redaction changes nothing (none of them holds a credential), and
// the credential shapes the rule covers, appended to any of those texts, are still cut at the
// credential and nowhere before it. The fixture cases get the same check in
// tests/checks/test_cases.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tool_outputs/registry.hpp"
#include "core/check.hpp"
#include "core/config.hpp"
#include "core/runner.hpp"
#include "facts/facts.hpp"
#include "files.hpp"
#include "findings.hpp"
#include "report/redact.hpp"
#include "sys/sysroot.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap;

namespace {

// One credential in each shape the rule set covers (docs/CONTRACT.md, "Redaction"), and the
// secret that must not survive.
struct RedactShape {
  std::string text, secret;
};
const std::vector<RedactShape>& credential_shapes() {
  static const std::vector<RedactShape> shapes = {
      {"password: hunter2secret", "hunter2secret"},
      {"Authorization: Bearer hunter2secret", "hunter2secret"},
      {"Bearer hunter2secret", "hunter2secret"},
      {"Basic aHVudGVyMnNlY3JldA==", "aHVudGVyMnNlY3JldA=="},
      {"token=hunter2secret", "hunter2secret"},
      {"--token hunter2secret", "hunter2secret"},
      {"--password=hunter2secret", "hunter2secret"},
      {"--api-key=hunter2secret", "hunter2secret"},
      {"X-Auth-Token: hunter2secret", "hunter2secret"},
      {"db_pass: hunter2secret", "hunter2secret"},
      {"SSHPASS=hunter2secret", "hunter2secret"},
      {"NCCL_NET_ARGS=--token hunter2secret", "hunter2secret"},
      {"https://user:hunter2secret@host/x", "hunter2secret"},
      {"https://host/x?access_token=hunter2secret&y=1", "hunter2secret"},
  };
  return shapes;
}

// Texts of reports without credentials: redaction leaves each byte for byte, and a credential
// appended to one is hidden from where it starts, the report's own words before it kept.
void expect_nothing_hidden_but_credentials(const std::vector<report::Finding>& findings, const std::string& what) {
  const auto changed = fixture::changed_by_redaction(findings);
  EXPECT_TRUE(changed.empty()) << what << ": redaction changed a report without credentials:\n" << ::testing::PrintToString(changed);
  for (const auto& f : findings)
    for (const auto& text : fixture::redactable_texts(f)) {
      if (text.find(report::kRedacted) != std::string::npos) continue;  // a value its check redacted by name
      for (const auto& shape : credential_shapes()) {
        const std::string with = text + " " + shape.text;
        const std::string out = report::redact_text(with);
        if (out.find(shape.secret) != std::string::npos || out.compare(0, text.size(), text) != 0) {
          ADD_FAILURE() << what << ": " << f.id << ": \"" << with << "\" -> \"" << out << "\"";
          return;
        }
      }
    }
}

std::vector<fs::path> redact_sorted_entries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(RedactReports, EveryGoldenTreesChecksComeOutUnchanged) {
  const auto& registry = core::builtin_registry();
  std::vector<const core::CheckInfo*> all;
  for (const auto& c : registry.all()) all.push_back(&c);
  int trees = 0;
  for (const auto& tree : redact_sorted_entries(fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/golden")) {
    if (tree.extension() != ".tree") continue;
    SCOPED_TRACE(tree.filename().string());
    fixture::TempDir tmp;
    auto spec = fixture::unpack_tree(tree.string(), tmp.path());
    ASSERT_TRUE(spec) << spec.error();
    auto root = sys::Sysroot::at(tmp.path());
    ASSERT_TRUE(root);
    auto findings = core::run_checks(all, std::make_shared<facts::Facts>(*root, facts::Options{}), core::Config{}, core::RunOptions{});
    ASSERT_FALSE(findings.empty());
    expect_nothing_hidden_but_credentials(findings, tree.filename().string());
    ++trees;
  }
  EXPECT_GE(trees, 5);
}

// The golden reports as the binary writes them: no finding shows "<redacted>" (healthy-x86's
// NVIDIA_API_KEY is redacted by name in node.environment, which no finding quotes).
TEST(RedactReports, NoGoldenReportFindingIsRedacted) {
  int reports = 0;
  for (const auto& golden : redact_sorted_entries(fs::path(PERFGAP_SOURCE_DIR) / "tests/golden")) {
    if (golden.extension() != ".json") continue;
    std::ifstream in(golden);
    auto j = nlohmann::json::parse(in);
    for (const auto& f : j["findings"]) {
      std::vector<std::string> texts{f.value("title", "")};
      for (const auto& e : f.value("evidence", nlohmann::json::array())) {
        texts.push_back(e.value("observed", ""));
        if (e.contains("expected") && e["expected"].is_string()) texts.push_back(e["expected"].get<std::string>());
      }
      for (const auto& t : texts) {
        EXPECT_EQ(t.find(report::kRedacted), std::string::npos) << golden.filename() << ": " << f.value("id", "") << ": " << t;
        EXPECT_EQ(report::redact_text(t), t) << golden.filename() << ": " << f.value("id", "");
      }
    }
    ++reports;
  }
  EXPECT_GE(reports, 5);
}

// Every analyzer over every real capture of ../shared/fixtures/<kind> and ../shared/field/logs.
TEST(RedactReports, EveryAnalyzerOverTheSharedCapturesComesOutUnchanged) {
  const fs::path shared = fs::path(PERFGAP_SHARED_DIR);
  if (!fs::is_directory(shared / "fixtures")) GTEST_SKIP() << "no shared fixtures at " << shared;
  int runs = 0;
  auto analyze = [&](const std::string& kind, const std::vector<std::string>& files, const std::string& reference = "") {
    const auto* a = tool_outputs::find(kind);
    ASSERT_NE(a, nullptr) << kind;
    tool_outputs::Request req;
    req.files = files;
    req.reference = reference;
    auto r = tool_outputs::run(*a, req);
    if (!r) return;  // a capture the kind refuses whole (its own tests say why): no report to redact
    expect_nothing_hidden_but_credentials(r->findings, kind + " " + files.front());
    ++runs;
  };
  for (const char* kind : {"nccl-log", "nccl-tests", "numastat", "nvidia-smi", "perf", "steps", "turbostat"})
    for (const auto& f : redact_sorted_entries(shared / "fixtures" / kind))
      if (fs::is_regular_file(f) && f.extension() != ".md") analyze(kind, {f.string()});
  for (const auto& f : redact_sorted_entries(shared / "fixtures" / "profiles")) {
    const std::string name = f.filename().string();
    if (name.find(".json") != std::string::npos) analyze("kineto", {f.string()});
    else if (f.extension() == ".sqlite") analyze("nsys", {f.string()});
    else if (name.find("perf") != std::string::npos && name.find(".data") != std::string::npos) analyze("perf", {f.string()});
  }
  for (const auto& dir : redact_sorted_entries(shared / "field" / "logs")) {
    const std::string name = dir.filename().string();
    const std::string kind = name.rfind("nt-", 0) == 0 ? "nccl-tests" : name.rfind("nl-", 0) == 0 ? "nccl-log" : name.rfind("st-", 0) == 0 ? "steps" : "";
    if (kind.empty() || !fs::exists(dir / "input.txt")) continue;
    analyze(kind, {(dir / "input.txt").string()}, fs::exists(dir / "reference.txt") ? (dir / "reference.txt").string() : "");
  }
  EXPECT_GE(runs, 40);
}
