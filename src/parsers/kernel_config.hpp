// The running kernel's build configuration as text: /boot/config-<release> or the gunzipped
// /proc/config.gz (parsers/gunzip). Text in, values out; facts/platform reads the files.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <tl/expected.hpp>

namespace perfgap::parsers {

// A kernel .config: "CONFIG_X=value" lines and "# CONFIG_X is not set" (value "n").
struct KernelConfig {
  std::string source;  // the path it was read from (set by the reader)
  std::map<std::string, std::string, std::less<>> values;
  // The value of CONFIG_<name> ("y", "m", "n", a string or number); nullopt when the config
  // does not mention it (its dependencies are not met: it is not built).
  std::optional<std::string> get(std::string_view name) const;
};
// Fails (with a reason) on text that holds no CONFIG_ line at all.
tl::expected<KernelConfig, std::string> parse_kernel_config(std::string_view text);

}  // namespace perfgap::parsers
