// What `perfgap version` and every command's --version print: version, git commit, build
// type, architecture and whether the executable is statically linked.
#pragma once

#include <string>

namespace perfgap::cli {

std::string version_text();

}  // namespace perfgap::cli
