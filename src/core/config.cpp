#include "core/config.hpp"

#include <fnmatch.h>

#include <charconv>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sys/named_file.hpp"

namespace perfgap::core {
namespace {

std::string at(const std::string& file, const YAML::Node& n) {
  auto m = n.Mark();
  return m.line >= 0 ? file + ":" + std::to_string(m.line + 1) : file;
}

tl::expected<std::vector<std::string>, std::string> string_list(const std::string& file, const YAML::Node& n,
                                                                const std::string& key) {
  std::vector<std::string> out;
  if (n.IsScalar()) {
    std::stringstream ss(n.as<std::string>());
    std::string item;
    while (std::getline(ss, item, ',')) if (!item.empty()) out.push_back(item);
    return out;
  }
  if (!n.IsSequence()) return tl::unexpected(at(file, n) + ": '" + key + "' must be a list of check ids");
  for (const auto& item : n) {
    if (!item.IsScalar()) return tl::unexpected(at(file, item) + ": '" + key + "' entries must be check ids");
    out.push_back(item.as<std::string>());
  }
  return out;
}

}  // namespace

tl::expected<long, std::string> parse_sample_ms(std::string_view text) {
  long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < facts::kMinSampleWindow.count() ||
      v > facts::kMaxSampleWindow.count())
    return tl::unexpected(fmt::format("sample_ms must be a whole number of milliseconds from {} to {}",
                                      facts::kMinSampleWindow.count(), facts::kMaxSampleWindow.count()));
  return v;
}

static tl::expected<long, std::string> sample_ms_value(const YAML::Node& value) {
  if (!value.IsScalar()) return parse_sample_ms("");
  return parse_sample_ms(value.Scalar());
}

static tl::expected<Config, std::string> fill_config(const YAML::Node& root, const std::string& file,
                                                     const Registry& registry, Config cfg);

Thresholds Config::thresholds_for(const CheckInfo& info) const {
  std::map<std::string, double, std::less<>> values;
  for (const auto& p : info.params) values[std::string(p.name)] = p.default_value;
  if (auto it = thresholds.find(info.id); it != thresholds.end())
    for (const auto& [k, v] : it->second) values[k] = v;
  return Thresholds(std::move(values));
}

tl::expected<Config, std::string> parse_config(const std::string& text, const std::string& file,
                                               const Registry& registry) {
  Config cfg;
  cfg.source = file;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return tl::unexpected(file + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (root.IsNull()) return cfg;  // an empty file configures nothing
  if (!root.IsMap()) return tl::unexpected(file + ": expected a mapping of check ids to thresholds");
  try {
    return fill_config(root, file, registry, cfg);
  } catch (const YAML::Exception& e) {
    // A conversion this code did not foresee: still an error naming the place, never a throw.
    return tl::unexpected(file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

static tl::expected<Config, std::string> fill_config(const YAML::Node& root, const std::string& file,
                                              const Registry& registry, Config cfg) {
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) return tl::unexpected(at(file, kv.first) + ": keys must be check ids, 'only', 'skip', 'check_timeout_s', 'sample_ms' or 'history'");
    const auto key = kv.first.as<std::string>();
    const auto& value = kv.second;
    if (key == "only" || key == "skip") {
      auto list = string_list(file, value, key);
      if (!list) return tl::unexpected(list.error());
      (key == "only" ? cfg.only : cfg.skip) = *list;
      continue;
    }
    if (key == "check_timeout_s") {
      double v;
      try { v = value.as<double>(); } catch (const YAML::Exception&) { v = -1; }
      if (!(v > 0) || !std::isfinite(v)) return tl::unexpected(at(file, value) + ": check_timeout_s must be a positive number of seconds");
      cfg.check_timeout_s = v;
      continue;
    }
    if (key == "history") {
      if (!value.IsScalar() || value.Scalar().empty()) return tl::unexpected(at(file, value) + ": history must be a directory path");
      cfg.history = value.Scalar();
      continue;
    }
    if (key == "sample_ms") {
      auto ms = sample_ms_value(value);
      if (!ms) return tl::unexpected(at(file, value) + ": " + ms.error());
      cfg.sample_ms = *ms;
      continue;
    }
    const CheckInfo* info = registry.find(key);
    if (!info) return tl::unexpected(at(file, kv.first) + ": unknown check '" + key + "'");
    if (value.IsNull()) continue;
    if (!value.IsMap()) return tl::unexpected(at(file, value) + ": thresholds of '" + key + "' must be a mapping (name: number)");
    auto& dest = cfg.thresholds[key];
    for (const auto& p : value) {
      if (!p.first.IsScalar()) return tl::unexpected(at(file, p.first) + ": threshold names of '" + key + "' must be plain words");
      const auto name = p.first.as<std::string>();
      bool known = false;
      for (const auto& decl : info->params) known = known || decl.name == name;
      if (!known) {
        std::string names;
        for (const auto& decl : info->params) names += (names.empty() ? "" : ", ") + std::string(decl.name);
        return tl::unexpected(at(file, p.first) + ": '" + key + "' has no threshold '" + name + "'" +
                              (names.empty() ? " (it takes none)" : " (it takes: " + names + ")"));
      }
      double v;
      try {
        v = p.second.as<double>();
      } catch (const YAML::Exception&) {
        return tl::unexpected(at(file, p.second) + ": '" + key + "." + name + "' must be a number");
      }
      if (!std::isfinite(v) || v < 0) return tl::unexpected(at(file, p.second) + ": '" + key + "." + name + "' must be a non-negative number");
      dest[name] = v;
    }
  }
  return cfg;
}

tl::expected<Config, std::string> load_config(const std::string& path, const Registry& registry) {
  auto text = sys::read_config_file(path);
  if (!text) return tl::unexpected(path + ": " + text.error());
  return parse_config(*text, path, registry);
}

bool id_matches(std::string_view pattern, std::string_view id) {
  return fnmatch(std::string(pattern).c_str(), std::string(id).c_str(), 0) == 0;
}

tl::expected<std::vector<const CheckInfo*>, std::string> select_checks(
    const Registry& registry, const std::vector<std::string>& only, const std::vector<std::string>& skip) {
  auto matches = [](const std::string& pattern, std::string_view id) { return id_matches(pattern, id); };
  for (const auto* list : {&only, &skip})
    for (const auto& p : *list) {
      bool any = false;
      for (const auto& c : registry.all()) any = any || matches(p, c.id);
      if (!any) return tl::unexpected("'" + p + "' matches no check (see perfgap check --list)");
    }
  std::vector<const CheckInfo*> out;
  for (const auto& c : registry.all()) {
    bool in = only.empty();
    for (const auto& p : only) in = in || matches(p, c.id);
    for (const auto& p : skip) in = in && !matches(p, c.id);
    if (in) out.push_back(&c);
  }
  return out;
}

}  // namespace perfgap::core
