// Where a rendered report goes: stdout, or a file written atomically (temp file + rename).
#pragma once

#include <string>

#include <tl/expected.hpp>

namespace perfgap::cli {

tl::expected<void, std::string> write_atomically(const std::string& path, const std::string& content);
tl::expected<void, std::string> write_stdout(const std::string& content);
bool stdout_is_terminal();
bool color_wanted();  // a terminal and no NO_COLOR

}  // namespace perfgap::cli
