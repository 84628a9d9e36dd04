#include "parsers/kernel_config.hpp"

#include "sys/text.hpp"

namespace perfgap::parsers {

std::optional<std::string> KernelConfig::get(std::string_view name) const {
  std::string key = sys::starts_with(name, "CONFIG_") ? std::string(name) : "CONFIG_" + std::string(name);
  auto it = values.find(key);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

tl::expected<KernelConfig, std::string> parse_kernel_config(std::string_view text) {
  KernelConfig c;
  for (auto line : sys::split_lines(text)) {
    line = sys::trim_ws(line);
    if (sys::starts_with(line, "# CONFIG_")) {
      constexpr std::string_view tail = " is not set";
      if (line.size() > tail.size() && line.substr(line.size() - tail.size()) == tail) {
        auto name = line.substr(2, line.size() - 2 - tail.size());
        if (name.size() > 7 && name.find_first_of(" \t=") == std::string_view::npos) c.values[std::string(name)] = "n";
      }
      continue;
    }
    if (!sys::starts_with(line, "CONFIG_")) continue;
    auto eq = line.find('=');
    if (eq == std::string_view::npos || eq == 7) continue;
    auto name = line.substr(0, eq);
    if (name.find_first_of(" \t") != std::string_view::npos) continue;
    c.values[std::string(name)] = std::string(line.substr(eq + 1));
  }
  if (c.values.empty()) return tl::unexpected(std::string("no CONFIG_ lines: not a kernel configuration"));
  return c;
}

}  // namespace perfgap::parsers
