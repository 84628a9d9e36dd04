// report.node from facts: identity, and the settings that should match across a fleet.
#pragma once

#include "facts/facts.hpp"
#include "report/model.hpp"

namespace perfgap::core {

report::Node describe_node(facts::Facts& f);

}  // namespace perfgap::core
