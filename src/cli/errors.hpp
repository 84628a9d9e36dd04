#pragma once

#include <stdexcept>
#include <string>

namespace perfgap::cli {

// A fatal problem with what the user asked for: main prints it on one line and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace perfgap::cli
