#include "slurm/health_config.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/config.hpp"
#include "facts/rdma_counters.hpp"
#include "sys/named_file.hpp"

namespace perfgap::slurm {
namespace {

using Error = tl::unexpected<std::string>;

std::string at(const std::string& file, const YAML::Node& n) {
  auto m = n.Mark();
  return m.line >= 0 ? file + ":" + std::to_string(m.line + 1) : file;
}

tl::expected<std::vector<std::string>, std::string> id_list(const std::string& file, const YAML::Node& n,
                                                            const std::string& key, const core::Registry& registry) {
  std::vector<std::string> out;
  if (n.IsScalar()) {
    std::stringstream ss(n.as<std::string>());
    std::string item;
    while (std::getline(ss, item, ','))
      if (!item.empty()) out.push_back(item);
  } else if (n.IsSequence()) {
    for (const auto& item : n) {
      if (!item.IsScalar()) return Error(at(file, item) + ": '" + key + "' entries must be check ids or globs");
      out.push_back(item.as<std::string>());
    }
  } else {
    return Error(at(file, n) + ": '" + key + "' must be a list of check ids or globs");
  }
  // A pattern that matches nothing is a typo: say so here, with the line.
  for (const auto& p : out)
    if (auto sel = core::select_checks(registry, {p}, {}); !sel) return Error(at(file, n) + ": " + key + ": " + sel.error());
  return out;
}

tl::expected<std::string, std::string> absolute_path(const std::string& file, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar() || n.as<std::string>().empty()) return Error(at(file, n) + ": '" + key + "' must be a path");
  auto path = n.as<std::string>();
  // slurmd starts the health check in a directory of its own choosing: relative paths would
  // point somewhere different on every node.
  if (path.front() != '/') return Error(at(file, n) + ": '" + key + "' must be an absolute path (got '" + path + "')");
  return path;
}

// The metric names net.ib.counters gives a port: each counter's short name, and its rates.
bool known_counter_metric(std::string_view name) {
  if (name == "link_errors_per_hour" || name == "xmit_wait_share") return true;
  for (const auto& c : facts::rdma_counter_catalogue())
    if (c.name.substr(c.name.find('/') + 1) == name) return true;
  return false;
}

tl::expected<HealthConfig, std::string> fill(const YAML::Node& root, const std::string& file, const core::Registry& registry) {
  HealthConfig cfg;
  cfg.source = file;
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) return Error(at(file, kv.first) + ": keys must be plain words");
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    if (key == "checks" || key == "skip" || key == "drain_on") {
      auto list = id_list(file, v, key, registry);
      if (!list) return Error(list.error());
      (key == "checks" ? cfg.checks : key == "skip" ? cfg.skip : cfg.drain_on) = std::move(*list);
    } else if (key == "drain_on_xids") {
      if (!v.IsSequence()) return Error(at(file, v) + ": drain_on_xids must be a list of Xid numbers");
      for (const auto& item : v) {
        long x = 0;
        try { x = item.as<long>(); } catch (const YAML::Exception&) { x = 0; }
        if (x <= 0) return Error(at(file, item) + ": drain_on_xids: '" + (item.IsScalar() ? item.Scalar() : std::string("?")) + "' is not an Xid number");
        cfg.drain_on_xids.push_back(x);
      }
    } else if (key == "drain_on_counters") {
      if (!v.IsMap()) return Error(at(file, v) + ": drain_on_counters must map RDMA counter names to thresholds");
      for (const auto& c : v) {
        const auto name = c.first.IsScalar() ? c.first.Scalar() : std::string();
        if (!known_counter_metric(name))
          return Error(at(file, c.first) + ": drain_on_counters: unknown counter '" + name + "' (a net.ib.counters metric: symbol_error, link_downed, ..., link_errors_per_hour, xmit_wait_share)");
        double t = -1;
        try { t = c.second.as<double>(); } catch (const YAML::Exception&) {}
        if (!(t > 0) || !std::isfinite(t)) return Error(at(file, c.second) + ": drain_on_counters: " + name + " needs a threshold above 0");
        cfg.drain_on_counters.emplace_back(name, t);
      }
    } else if (key == "time_limit_s") {
      double s = -1;
      try { s = v.as<double>(); } catch (const YAML::Exception&) {}
      if (!(s > 0) || !std::isfinite(s) || s > kMaxHealthTimeLimit)
        return Error(at(file, v) + ": time_limit_s must be a number of seconds above 0 and at most " +
                     std::to_string(static_cast<int>(kMaxHealthTimeLimit)));
      cfg.time_limit_s = s;
    } else if (key == "sample_ms") {
      auto ms = core::parse_sample_ms(v.IsScalar() ? v.Scalar() : std::string());
      if (!ms) return Error(at(file, v) + ": " + ms.error());
      cfg.sample_ms = *ms;
    } else if (key == "drain_on_timeout") {
      bool b;
      try { b = v.as<bool>(); } catch (const YAML::Exception&) {
        return Error(at(file, v) + ": drain_on_timeout must be true or false");
      }
      cfg.drain_on_timeout = b;
    } else if (key == "log_file" || key == "state_dir" || key == "slurm_conf" || key == "scontrol") {
      auto p = absolute_path(file, v, key);
      if (!p) return Error(p.error());
      (key == "log_file" ? cfg.log_file : key == "state_dir" ? cfg.state_dir : key == "slurm_conf" ? cfg.slurm_conf : cfg.scontrol) = *p;
    } else if (key == "check") {
      if (!v.IsMap()) return Error(at(file, v) + ": 'check' must be a mapping of check options (root, config, dmesg, baseline, expect)");
      for (const auto& o : v) {
        if (!o.first.IsScalar()) return Error(at(file, o.first) + ": check options are plain words");
        const auto name = o.first.as<std::string>();
        std::string* dest = name == "root" ? &cfg.check.root : name == "config" ? &cfg.check.config
                          : name == "dmesg" ? &cfg.check.dmesg : name == "baseline" ? &cfg.check.baseline
                          : name == "expect" ? &cfg.check.expect : nullptr;
        if (!dest) return Error(at(file, o.first) + ": unknown check option '" + name + "' (root, config, dmesg, baseline, expect)");
        auto p = absolute_path(file, o.second, "check." + name);
        if (!p) return Error(p.error());
        *dest = *p;
      }
    } else {
      return Error(at(file, kv.first) + ": unknown key '" + key +
                   "' (checks, skip, drain_on, drain_on_xids, drain_on_counters, drain_on_timeout, time_limit_s, sample_ms, log_file, state_dir, slurm_conf, scontrol, check)");
    }
  }
  return cfg;
}

}  // namespace

tl::expected<HealthConfig, std::string> parse_health_config(const std::string& text, const std::string& file,
                                                            const core::Registry& registry) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Error(file + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (root.IsNull()) {
    HealthConfig cfg;  // an empty file: every check, built-in limits
    cfg.source = file;
    return cfg;
  }
  if (!root.IsMap()) return Error(file + ": expected a mapping (checks, drain_on, time_limit_s, ...)");
  try {
    return fill(root, file, registry);
  } catch (const YAML::Exception& e) {
    return Error(file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

std::vector<std::string> hardware_drain_reasons(const HealthConfig& cfg, const std::vector<report::Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    const std::string where = f.subject.empty() ? f.id : f.id + "@" + f.subject;
    if (f.id == "gpu.xid" || f.id == "gpu.nvlink_xid" || f.id == "gpu.fallen_off_bus")
      for (long x : cfg.drain_on_xids)
        for (const auto& [name, value] : f.metrics)
          if (name == "xid_" + std::to_string(x) && value > 0) out.push_back(where + ":" + name);
    if (f.id == "net.ib.counters")
      for (const auto& [counter, threshold] : cfg.drain_on_counters)
        for (const auto& [name, value] : f.metrics)
          if (name == counter && value >= threshold) out.push_back(fmt::format("{}:{}>={:g}", where, counter, threshold));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

tl::expected<HealthConfig, std::string> load_health_config(const std::string& path, const core::Registry& registry) {
  auto text = sys::read_config_file(path);
  if (!text) return Error(path + ": " + text.error());
  return parse_health_config(*text, path, registry);
}

}  // namespace perfgap::slurm
