// The facts::Options a fixture case's "== options" lines give, as the check command would:
// pid=N (--pid), dmesg=REL and baseline=REL (--dmesg, --baseline with a file of the unpacked
// tree, e.g. one written at .perfgap/host.json). Shared by the fixture-case runners.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <tl/expected.hpp>

#include "core/baseline.hpp"
#include "facts/facts.hpp"

namespace perfgap::fixture {

inline tl::expected<facts::Options, std::string> case_options(const std::vector<std::pair<std::string, std::string>>& options,
                                                              const std::string& root) {
  facts::Options opts;
  for (const auto& [k, v] : options) {
    if (k == "pid") {
      opts.pids.push_back(std::stoi(v));
    } else if (k == "dmesg") {
      opts.dmesg_path = root + "/" + v;
    } else if (k == "baseline") {
      auto b = core::load_baseline(root + "/" + v);
      if (!b) return tl::unexpected(b.error());
      opts.baseline = std::move(*b);
    } else {
      return tl::unexpected("unknown option " + k);
    }
  }
  return opts;
}

}  // namespace perfgap::fixture
