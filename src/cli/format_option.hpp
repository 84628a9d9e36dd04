// --format on every command: each command declares the formats it accepts, and this one place
// spells the option, its help, its "did you mean" and the choice that report::render renders.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "report/render.hpp"

namespace perfgap::cli {

// A value from a fixed set, refused with the closest one ("did you mean json?") and the set.
CLI::Validator one_of(const std::vector<std::string>& values);

// Adds --format FORMAT to `cmd`, accepting `accepted` (text is the default). `notes` follows the
// list in the help, e.g. "html: one self-contained page with charts".
CLI::Option* add_format_option(CLI::App* cmd, std::string& value, const std::vector<report::Format>& accepted, const std::string& notes = "");

// What add_format_option stored: "" is text.
report::Format chosen_format(const std::string& value);

}  // namespace perfgap::cli
