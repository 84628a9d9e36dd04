// What every text view (check, fleet, sweep) shares: status colours, the order that puts
// what needs action first, status words, and the display width of UTF-8 text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "report/model.hpp"

namespace perfgap::report {

const char* status_color(Status s);  // ANSI SGR sequence
// fail 0, error 1, warn 2, pass 3, skip 4: sort keys for "what needs action first".
int action_rank(Status s);
std::string status_word(Status s);   // FAIL, ERROR, WARN, PASS, SKIP
// `text` in the status colour when `color`, else unchanged.
std::string paint(Status s, std::string_view text, bool color);
// Code points, not bytes (continuation bytes do not count).
std::size_t display_width(std::string_view s);

}  // namespace perfgap::report
