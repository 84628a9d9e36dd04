// A captured tree must look like a node's root: proc/ or sys/ with something in them. An
// empty directory, the directory above a tree, or an archive whose tree is nested would
// otherwise "pass" every check that reads nothing.
#pragma once

#include <string>

#include <tl/expected.hpp>

#include "sys/sysroot.hpp"

namespace perfgap::sys {

// `shown` is the path as the user gave it (the archive, not its unpacked copy).
tl::expected<void, std::string> check_tree_content(const Sysroot& root, const std::string& shown);

}  // namespace perfgap::sys
