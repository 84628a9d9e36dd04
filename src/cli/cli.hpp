#pragma once

namespace perfgap::cli {

// Parses argv and runs the command; returns the exit status of the contract (0, 1, 2).
int run(int argc, char** argv);

}  // namespace perfgap::cli
