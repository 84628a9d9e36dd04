// report.node from facts: identity, and the settings that should match across a fleet.
#pragma once

#include "facts/facts.hpp"
#include "report/model.hpp"

namespace perfgap::core {

report::Node describe_node(facts::Facts& f);

// What describe_node reads, composed from the facts it uses (facts/reads.hpp): `perfgap
// snapshot` captures it beside the checks' reads so a replay names the node as the live run
// does, and tests/checks/test_declared_reads.cpp holds describe_node to it.
const std::vector<std::string_view>& node_reads();

}  // namespace perfgap::core
