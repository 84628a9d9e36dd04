// "did you mean": the closest of a command's names to what the user typed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace perfgap::cli {

// " (did you mean X?)" for the closest candidate within a typo's reach, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c"
std::string joined(const std::vector<std::string>& names);

}  // namespace perfgap::cli
