// perfgap's JSON reports as the CLI tests read them: running the binary for one, finding
// findings in it, masking what changes from run to run.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfgap::fixture {

// Runs `binary` with `args` and --format json: expects exit status `want_status` and a report
// that keeps the contract (contract_violations), each a test failure when not. The report,
// or null when stdout is not JSON.
nlohmann::json json_report(const std::string& binary, std::vector<std::string> args, int want_status,
                           const std::vector<std::pair<std::string, std::string>>& extra_env = {});

// The first finding `id` (of `subject`, when given) of a report; nullptr when there is none.
const nlohmann::json* finding(const nlohmann::json& report, const std::string& id, const std::string& subject = "");

// The first finding `id` of a report; when there is none, a test failure naming it and an
// empty object.
const nlohmann::json& required_finding(const nlohmann::json& report, const std::string& id);

// The report with generated_at, tool.version and source.root masked, for comparing reports
// of different runs and builds.
nlohmann::json masked_report(nlohmann::json report);

// What differs between two reports, finding by finding, for a test failure a reader can act
// on (instead of two whole documents): findings added (+), removed (-) and changed (~, field
// by field, metrics by name), keyed by id and subject, then any other field that differs, by
// its path. Empty when the reports are equal.
std::string report_diff(const nlohmann::json& expected, const nlohmann::json& actual);

}  // namespace perfgap::fixture
