// Configuration: YAML with thresholds keyed by check id (`cpu.steal: {fail_pct: 2}`), plus
// `only`/`skip` lists, `check_timeout_s`, `sample_ms` and `history` (check --history DIR). Command-line options win over the file; the file
// wins over the built-in defaults declared by each check.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "core/check.hpp"

namespace perfgap::core {

struct Config {
  std::map<std::string, std::map<std::string, double, std::less<>>, std::less<>> thresholds;
  std::vector<std::string> only, skip;
  std::optional<double> check_timeout_s;
  std::optional<long> sample_ms;  // the live sample window (facts::Options::sample)
  std::optional<std::string> history;  // check --history DIR
  std::string source;  // the file it came from, "" for built-in

  // The check's defaults with this config's overrides applied.
  Thresholds thresholds_for(const CheckInfo& info) const;
};

// Parses config text; errors name `file` and the line ("config.yaml:4: unknown check 'x'").
tl::expected<Config, std::string> parse_config(const std::string& text, const std::string& file,
                                               const Registry& registry);
tl::expected<Config, std::string> load_config(const std::string& path, const Registry& registry);

// A sample window in milliseconds (config `sample_ms`, `--sample-ms`): a whole number from
// facts::kMinSampleWindow to facts::kMaxSampleWindow, or an error saying so.
tl::expected<long, std::string> parse_sample_ms(std::string_view text);

// A check id against an only/skip pattern: an id or a glob such as `cpu.*`.
bool id_matches(std::string_view pattern, std::string_view id);

// The checks selected by only/skip patterns (ids or globs such as `cpu.*`), in registry
// order. A pattern that matches no check is an error naming it.
tl::expected<std::vector<const CheckInfo*>, std::string> select_checks(
    const Registry& registry, const std::vector<std::string>& only, const std::vector<std::string>& skip);

}  // namespace perfgap::core
