// --baseline HOST.json: the parts of a report taken on the host that a run inside a
// container is compared with.
#pragma once

#include <string>

#include <tl/expected.hpp>

#include "facts/facts.hpp"

namespace perfgap::core {

// Errors start with the path ("host.json: not a perfgap report ...").
tl::expected<facts::Baseline, std::string> load_baseline(const std::string& path);

}  // namespace perfgap::core
