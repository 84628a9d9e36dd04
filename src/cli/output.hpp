// Where a rendered report goes: sys/output.hpp (one writer for every --output), plus what
// only the CLI needs to know about its terminal.
#pragma once

#include "sys/output.hpp"

namespace perfgap::cli {

using sys::check_output;
using sys::output_is_stdout;
using sys::write_atomically;
using sys::write_output;
using sys::write_stdout;

bool stdout_is_terminal();
bool color_wanted();  // a terminal and no NO_COLOR

}  // namespace perfgap::cli
