#include <cstdio>
#include <unistd.h>

#include "cli/cli.hpp"
#include "sys/bounded.hpp"

int main(int argc, char** argv) {
  int rc = perfgap::cli::run(argc, argv);
  // A worker abandoned on a blocked kernel read must not meet destructors: leave at once.
  if (perfgap::sys::abandoned_workers() > 0) {
    std::fflush(nullptr);
    ::_exit(rc);
  }
  return rc;
}
