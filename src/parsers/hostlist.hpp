// Slurm hostlist notation, both ways. Expanding reads SLURM_JOB_NODELIST ("gpu[001-003,007],login1"
// -> gpu001 gpu002 gpu003 gpu007 login1; zero padding kept; several bracket groups in one name
// multiply out). Compressing writes fleet evidence that names thousands of nodes in a line an
// operator can paste into scontrol/srun.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

namespace perfgap::parsers {

inline constexpr std::size_t kMaxHostlistNames = 100000;

// Errors name the problem ("unclosed '[' in 'n[1-4'"); more than kMaxHostlistNames names is one.
tl::expected<std::vector<std::string>, std::string> expand_hostlist(std::string_view list);

// Compresses names (any order, duplicates ignored) into Slurm's bracket notation. Names
// ending in digits are grouped by the text before the digits; consecutive numbers become
// ranges that keep each name's zero padding (n[08-10]; n8,n9,n10 -> n[8-10]). Other names
// are listed as they are. Groups come in order of their prefix.
std::string compress_hostlist(const std::vector<std::string_view>& names);

// The hostlist of as many of the sorted `names` as fit in `width` characters, followed by
// ",... (+N more)" when some were left out. Always names at least one node.
std::string compress_hostlist_fit(const std::vector<std::string_view>& names, std::size_t width);

}  // namespace perfgap::parsers
