// Validates a JSON report against shared/spec/contract.md; returns what is wrong.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfgap::fixture {

std::vector<std::string> contract_violations(const nlohmann::json& report);

}  // namespace perfgap::fixture
