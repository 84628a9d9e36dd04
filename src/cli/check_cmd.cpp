#include "cli/check_cmd.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <fstream>
#include <sstream>

#include "cli/errors.hpp"
#include "cli/output.hpp"
#include "core/baseline.hpp"
#include "core/config.hpp"
#include "core/node.hpp"
#include "core/runner.hpp"
#include "report/render.hpp"

#ifndef PERFGAP_VERSION
#define PERFGAP_VERSION "0.0.0"
#endif

namespace perfgap::cli {
namespace {

constexpr const char* kDefaultConfig = "/etc/perfgap/config.yaml";

std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ','))
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::string rfc3339(std::time_t t) {
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string render_list(const std::vector<const core::CheckInfo*>& checks, const std::string& format) {
  if (format == "json") {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto* c : checks) {
      nlohmann::ordered_json params = nlohmann::ordered_json::object();
      for (const auto& p : c->params) params[std::string(p.name)] = p.default_value;
      std::vector<std::string> reads(c->reads.begin(), c->reads.end());
      arr.push_back({{"id", c->id}, {"layer", c->layer}, {"summary", c->summary}, {"reads", reads}, {"thresholds", params}});
    }
    return arr.dump(2) + "\n";
  }
  std::size_t w = 0;
  for (const auto* c : checks) w = std::max(w, c->id.size());
  std::string out;
  for (const auto* c : checks) out += fmt::format("{:<{}}  {:<16}  {}\n", c->id, w, c->layer, c->summary);
  return out;
}

}  // namespace

void add_check_command(CLI::App& app, CheckArgs& a) {
  auto* cmd = app.add_subcommand("check", "Run the node checks on this machine (or on a captured tree with --root)");
  cmd->add_option("--root", a.root, "Check a captured node tree (sysroot directory) instead of the live system");
  cmd->add_option("--pid", a.pids, "Training process to examine (repeatable); default: auto-detect")->check(CLI::PositiveNumber);
  cmd->add_option("--only", a.only, "Run only these checks: comma list of ids or globs (cpu.*)");
  cmd->add_option("--skip", a.skip, "Skip these checks: comma list of ids or globs");
  cmd->add_flag("--list", a.list, "List every check id with its layer and one line, then exit");
  cmd->add_option("--config", a.config, std::string("Thresholds and only/skip lists (YAML); default ") + kDefaultConfig + " when present");
  cmd->add_flag("-v,--verbose", a.verbose, "Show all evidence, metrics and passing details");
  cmd->add_option("--format", a.format, "Output format: text (default), json, junit or prometheus (node_exporter textfile)")
      ->check(CLI::IsMember({"text", "json", "junit", "prometheus"}));
  cmd->add_option("--output", a.output, "Write the report to FILE atomically instead of stdout");
  cmd->add_option("--dmesg", a.dmesg, "A saved kernel log to read instead of the live one (or the tree's .perfgap/dmesg.txt)");
  cmd->add_option("--baseline", a.baseline, "A JSON report taken on the host: compare this environment (e.g. a container) with it");
}

int run_check(const CheckArgs& a) {
  const auto& registry = core::builtin_registry();

  core::Config config;
  std::string config_path = a.config;
  if (config_path.empty() && ::access(kDefaultConfig, F_OK) == 0) config_path = kDefaultConfig;
  if (!config_path.empty()) {
    auto loaded = core::load_config(config_path, registry);
    if (!loaded) throw UsageError(loaded.error());
    config = std::move(*loaded);
  }
  // Command-line lists win over the file's.
  auto only = a.only.empty() ? config.only : split_list(a.only);
  auto skip = a.skip.empty() ? config.skip : split_list(a.skip);
  auto selected = core::select_checks(registry, only, skip);
  if (!selected) throw UsageError(std::string(a.only.empty() && a.skip.empty() ? config_path + ": " : "--only/--skip: ") + selected.error());

  const std::string format = a.format.empty() ? "text" : a.format;
  if (a.list) {
    if (format != "text" && format != "json") throw UsageError("--list takes --format text or json");
    auto text = render_list(*selected, format);
    auto w = a.output.empty() ? write_stdout(text) : write_atomically(a.output, text);
    if (!w) throw UsageError(w.error());
    return 0;
  }

  auto root = sys::Sysroot::live();
  if (!a.root.empty()) {
    auto r = sys::Sysroot::at(a.root);
    if (!r) throw UsageError("--root " + r.error());
    root = std::move(*r);
  }
  facts::Options opts;
  opts.pids = a.pids;
  if (!a.dmesg.empty()) {
    std::ifstream probe(a.dmesg, std::ios::binary);
    if (!probe) throw UsageError("--dmesg " + a.dmesg + ": cannot open");
    opts.dmesg_path = a.dmesg;
  }
  if (!a.baseline.empty()) {
    auto b = core::load_baseline(a.baseline);
    if (!b) throw UsageError("--baseline " + b.error());
    opts.baseline = std::move(*b);
  }
  auto facts = std::make_shared<facts::Facts>(root, opts);

  report::Report rep;
  rep.tool_version = PERFGAP_VERSION;
  const std::time_t started = std::time(nullptr);
  rep.generated_at = rfc3339(started);
  rep.source.kind = root.is_live() ? "live" : "root";
  if (!root.is_live()) rep.source.root = a.root;
  if (!a.baseline.empty()) rep.source.inputs.push_back(a.baseline);
  if (!a.dmesg.empty()) rep.source.inputs.push_back(a.dmesg);
  core::RunOptions run_opts;
  if (config.check_timeout_s) run_opts.check_timeout = std::chrono::milliseconds(static_cast<long>(*config.check_timeout_s * 1000));
  rep.findings = core::run_checks(*selected, facts, config, run_opts);
  rep.node = core::describe_node(*facts);

  std::string text;
  if (format == "json") text = report::render_json(rep);
  else if (format == "junit") text = report::render_junit(rep);
  else if (format == "prometheus") text = report::render_prometheus(rep, static_cast<long long>(started));
  else text = report::render_text(rep, {a.verbose, a.output.empty() && color_wanted()});
  auto w = a.output.empty() ? write_stdout(text) : write_atomically(a.output, text);
  if (!w) throw UsageError(w.error());
  return rep.has_fail() ? 1 : 0;
}

}  // namespace perfgap::cli
