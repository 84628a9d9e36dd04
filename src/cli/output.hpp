// Where a rendered report goes: sys/output.hpp (one writer for every --output), plus what
// only the CLI needs to know about its terminal.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/render.hpp"
#include "sys/output.hpp"

namespace perfgap::cli {

using sys::check_output;
using sys::output_is_stdout;
using sys::write_atomically;
using sys::write_output;
using sys::write_stdout;

bool stdout_is_terminal();
bool color_wanted();  // a terminal and no NO_COLOR

// How a report is rendered for `output`: colour only on a terminal; `unix_time` is the run's
// time (prometheus).
report::RenderOptions render_options(const std::string& output, bool verbose, long long unix_time);

// A report of `kind` (analyze, gap, compare, explain, probe, history, fleet) for these inputs,
// rendered by report::render to stdout or --output; returns the exit status (1 with a fail
// finding). A bad --output throws UsageError. in_order: the findings are a listing shown in
// their order (report::TextOptions::in_order). undecided: the command could not decide what it was
// asked, and why (report::Report::undecided: the headline says it instead of OK). node: the machine
// the report is of (probe measures this one), else null.
int emit_report(const std::string& kind, const std::vector<std::string>& inputs, std::vector<report::Finding> findings,
                report::Format format, const std::string& output, bool verbose, bool in_order = false, const std::string& undecided = {},
                std::optional<report::Node> node = std::nullopt);

}  // namespace perfgap::cli
