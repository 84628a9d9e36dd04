#include "cli/output.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace perfgap::cli {

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

bool color_wanted() {
  const char* no = std::getenv("NO_COLOR");
  if (no != nullptr && *no != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return stdout_is_terminal();
}

}  // namespace perfgap::cli
