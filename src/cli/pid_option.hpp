// --pid's one rule for every command that takes it: a whole number from 1 to the kernel's
// PID_MAX_LIMIT (4194304). Checked on the text, before conversion, so 0, -1, 99999999999 and
// "abc" all get the same short usage error (exit 2).
#pragma once

#include <charconv>
#include <string>

#include <CLI/CLI.hpp>

namespace perfgap::cli {

inline constexpr long long kMaxPid = 4194304;

inline CLI::Validator process_id() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        long long v = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || p != s.data() + s.size() || s.empty() || v < 1 || v > kMaxPid)
          return "'" + s + "' is not a process id (1 to " + std::to_string(kMaxPid) + ")";
        return {};
      },
      "PID", "process_id");
}

}  // namespace perfgap::cli
