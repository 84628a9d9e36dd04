// A check: its id, layer, documentation, the paths it reads, its tunable thresholds, and a
// pure function from facts to findings. Checks are registered explicitly per layer (checks/
// <layer>/register.cpp) and ordered in one list (checks/all.cpp); the linker keeps them all.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "facts/facts.hpp"
#include "report/model.hpp"

namespace perfgap::core {

struct Param {
  std::string_view name;
  double default_value;
  std::string_view doc;
};

// Thresholds of one check: the built-in defaults, overridden by the config file.
class Thresholds {
 public:
  Thresholds() = default;
  explicit Thresholds(std::map<std::string, double, std::less<>> values) : values_(std::move(values)) {}
  double get(std::string_view name) const;  // throws std::out_of_range for an undeclared name
 private:
  std::map<std::string, double, std::less<>> values_;
};

using CheckFn = std::function<std::vector<report::Finding>(facts::Facts&, const Thresholds&)>;

struct CheckInfo {
  std::string_view id;
  std::string_view layer;
  std::string_view summary;  // one line, for --list
  std::string_view rule;     // when it passes, warns, fails, skips (docs)
  std::string_view fix;      // what to change (docs; findings carry their own)
  std::vector<std::string_view> reads;  // real paths, '*' for any name (snapshot follows these)
  std::vector<Param> params;
  CheckFn run;
  // Reads the live sample window (Facts::window): the runner starts the window before any
  // check and runs these last, so the other checks' work fills the wait.
  bool sampled = false;
};

// Starts a finding.
report::Finding finding(std::string_view id, std::string_view layer, report::Status status,
                        std::string title);

class Registry {
 public:
  void add(CheckInfo info);
  const std::vector<CheckInfo>& all() const { return checks_; }
  const CheckInfo* find(std::string_view id) const;

 private:
  std::vector<CheckInfo> checks_;
};

// Every built-in check, in report order (checks/all.cpp).
const Registry& builtin_registry();

}  // namespace perfgap::core
