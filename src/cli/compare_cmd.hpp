#pragma once

#include "compare/compare.hpp"

namespace perfgap::cli {

// compare's options as compare and history --compare give them: the tolerance, and each
// finding's throughput impact from the built-in knowledge base (the middle of its cost range)
// to rank the headline's largest improvement and regression.
compare::Options compare_options(double tolerance_pct);

}  // namespace perfgap::cli
