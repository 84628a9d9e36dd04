// --baseline HOST.json: the parts of a report taken on the host that a run inside a
// container is compared with.
#pragma once

#include <string>
#include <string_view>

#include <tl/expected.hpp>

#include "facts/facts.hpp"

namespace perfgap::core {

// Errors start with the path ("host.json: schema is not perfgap.report/1 ...": report::Reader's words).
tl::expected<facts::Baseline, std::string> load_baseline(const std::string& path);
// The same from the report's text, read from `path`.
tl::expected<facts::Baseline, std::string> read_baseline(std::string_view text, const std::string& path);

}  // namespace perfgap::core
