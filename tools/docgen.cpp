// Writes docs/CHECKS.md, and the README's checks table, from the check registry, so each
// check's doc entry (rule, evidence it reads, thresholds, fix) lives next to its code.
//   perfgap-docgen > docs/CHECKS.md               regenerate (tools/refresh-docs.sh)
//   perfgap-docgen --check docs/CHECKS.md         exit 1 when the file is out of date (a ctest)
//   perfgap-docgen --readme README.md             README.md with its checks table regenerated, on stdout
//   perfgap-docgen --check-readme README.md       exit 1 when that table is out of date (a ctest)
// The README's table sits between kTableBegin and kTableEnd; exit 2 when they are missing.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "checks/live/live.hpp"
#include "core/check.hpp"
#include "probe/probe.hpp"

namespace {

constexpr std::string_view kTableBegin = "<!-- checks table: written by tools/refresh-docs.sh from the registry -->\n";
constexpr std::string_view kTableEnd = "<!-- end of checks table -->\n";

// The "run by" column names the command that produces (and selects) each id: `check --list`
// and `--only/--skip` know the registry's ids only, so the table must say where the live and
// probe ids come from (ReadmeChecksTable.CheckRowsAreCheckList holds the two together).
constexpr std::string_view kRunByCheck = "`check`";
constexpr std::string_view kRunByProfile = "`profile`, `check --profile-seconds N`";
constexpr std::string_view kRunByProbe = "`probe`";

std::string readme_table() {
  std::string out = "| id | layer | run by | what it decides |\n| --- | --- | --- | --- |\n";
  auto rows = [&](const auto& infos, std::string_view run_by) {
    for (const auto& c : infos) out += fmt::format("| `{}` | {} | {} | {} |\n", c.id, c.layer, run_by, c.summary);
  };
  rows(perfgap::core::builtin_registry().all(), kRunByCheck);
  rows(perfgap::checks::live::catalogue(), kRunByProfile);
  rows(perfgap::probe::probe_catalogue(), kRunByProbe);
  return out;
}

bool slurp(const char* path, std::string& out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

// `readme` with the text between the markers replaced by the table; false without both markers.
bool with_table(const std::string& readme, std::string& out) {
  auto begin = readme.find(kTableBegin);
  if (begin == std::string::npos) return false;
  begin += kTableBegin.size();
  auto end = readme.find(kTableEnd, begin);
  if (end == std::string::npos) return false;
  out = readme.substr(0, begin) + readme_table() + readme.substr(end);
  return true;
}

void render_entry(std::string& out, const perfgap::core::CheckInfo& c) {
  out += fmt::format("\n## {}\n\nLayer: `{}`. {}\n\n**Rule.** {}\n\n**Reads.**\n", c.id, c.layer, c.summary, c.rule);
  for (auto r : c.reads) out += fmt::format("- `{}`\n", r);
  if (!c.params.empty()) {
    out += "\n**Thresholds.**\n";
    for (const auto& p : c.params) out += fmt::format("- `{}` = {} — {}\n", p.name, p.default_value, p.doc);
  }
  out += fmt::format("\n**Fix.** {}\n", c.fix);
}

std::string render() {
  const auto& reg = perfgap::core::builtin_registry();
  std::string out =
      "# perfgap checks\n\n"
      "Generated from the check registry by `tools/refresh-docs.sh`; do not edit by hand.\n"
      "Each entry: what the check decides, the files it reads (its evidence; `perfgap snapshot`\n"
      "captures exactly these), its thresholds (override them in the config file, e.g.\n"
      "`cpu.steal: {fail_pct: 3}`), and the fix.\n\n"
      "**When evidence is missing.** A file that is absent, unreadable or empty is never read as\n"
      "a healthy value. A check that cannot decide without it says `skip` and names the file and\n"
      "why; a check that could read part of what it judges (some CPUs, some ports) and found the\n"
      "rest fine says `warn` and names what it could not read; it never passes on absence. A\n"
      "captured tree that lacks a whole area (no `dev/`, no `/proc/driver/nvidia`, no audited\n"
      "environment in `proc/self/environ`) makes the checks that need it `skip`, as the rules\n"
      "below say; \"bare metal\" is claimed only when a hardware identity shows it. A root with\n"
      "no `proc/` or `sys/` content is not a node tree: `check --root` exits 2.\n\n"
      "| id | layer | one line |\n| --- | --- | --- |\n";
  for (const auto& c : reg.all()) out += fmt::format("| [`{}`](#{}) | {} | {} |\n", c.id, [&] {
    std::string a(c.id);
    std::string anchor;
    for (char ch : a) if (ch != '.') anchor.push_back(ch);
    return anchor;
  }(), c.layer, c.summary);
  for (const auto& c : perfgap::checks::live::catalogue()) {
    std::string anchor;
    for (char ch : c.id) if (ch != '.') anchor.push_back(ch);
    out += fmt::format("| [`{}`](#{}) | {} | {} |\n", c.id, anchor, c.layer, c.summary);
  }
  // The probes (`perfgap probe`, never `check`) follow, in the same form.
  for (const auto& c : perfgap::probe::probe_catalogue()) {
    std::string anchor;
    for (char ch : c.id) if (ch != '.') anchor.push_back(ch);
    out += fmt::format("| [`{}`](#{}) | {} | {} |\n", c.id, anchor, c.layer, c.summary);
  }
  for (const auto& c : reg.all()) render_entry(out, c);
  out += "\n# Live profile (perfgap profile, check --profile-seconds N)\n\n"
         "Judged over one live window (docs/PROFILE.md), not by `check`'s runner; the perf.* ids of the same\n"
         "window follow the analyzer's rules (docs/ANALYZE.md), and so does its dTLB count, `perf_stat.dtlb`\n"
         "(subject `live`), analyze perf-stat's.\n";
  for (const auto& c : perfgap::checks::live::catalogue()) render_entry(out, c);
  out += "\n# Probes (perfgap probe --cpu --memory --gpu)\n\n"
         "Opt-in, active and bounded (docs/PROBE.md); never part of `check`.\n";
  for (const auto& c : perfgap::probe::probe_catalogue()) render_entry(out, c);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && (std::strcmp(argv[1], "--readme") == 0 || std::strcmp(argv[1], "--check-readme") == 0)) {
    std::string readme, updated;
    if (!slurp(argv[2], readme)) {
      std::fprintf(stderr, "%s: cannot be read\n", argv[2]);
      return 2;
    }
    if (!with_table(readme, updated)) {
      std::fprintf(stderr, "%s: no checks table between '%.*s' and '%.*s'\n", argv[2], static_cast<int>(kTableBegin.size() - 1),
                   kTableBegin.data(), static_cast<int>(kTableEnd.size() - 1), kTableEnd.data());
      return 2;
    }
    if (std::strcmp(argv[1], "--readme") == 0) {
      std::fwrite(updated.data(), 1, updated.size(), stdout);
      return 0;
    }
    if (updated != readme) {
      std::fprintf(stderr, "%s: the checks table is out of date: run tools/refresh-docs.sh\n", argv[2]);
      return 1;
    }
    return 0;
  }
  std::string doc = render();
  if (argc == 3 && std::strcmp(argv[1], "--check") == 0) {
    std::ifstream in(argv[2]);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str() != doc) {
      std::fprintf(stderr, "%s is out of date: run tools/refresh-docs.sh\n", argv[2]);
      return 1;
    }
    return 0;
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--check FILE | --readme README | --check-readme README]\n", argv[0]);
    return 2;
  }
  std::fwrite(doc.data(), 1, doc.size(), stdout);
  return 0;
}
