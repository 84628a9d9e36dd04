// A JSON Schema (draft 2020-12) validator for the keywords docs/report.schema.json uses, so every
// report a test reads is checked against the published schema, not only against contract.cpp's
// hand-written rules. A keyword it does not implement is itself a violation: the schema cannot
// grow a rule that is silently ignored here.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfgap::fixture {

// What in `doc` breaks `schema`, each as "PATH: what"; empty when it validates.
std::vector<std::string> schema_violations(const nlohmann::json& schema, const nlohmann::json& doc);

// docs/report.schema.json of this checkout, read once.
const nlohmann::json& report_schema();

}  // namespace perfgap::fixture
