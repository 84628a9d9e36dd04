// Text from outside perfgap as HTML character data or an attribute value.
#pragma once

#include <string>
#include <string_view>

namespace perfgap::report {

// printable() (invalid UTF-8 as U+FFFD, control characters as visible escapes), then & < > " '
// as entities: nothing of the data can open a tag, end an attribute or start a script.
std::string html_escape(std::string_view s);

}  // namespace perfgap::report
