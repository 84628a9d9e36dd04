// gap.budget (perfgap explain): the measured shortfall against the reference, and the fail/warn
// findings of the reports given, each with its estimated cost from the knowledge base
// (core/kb.hpp), combined as throughput factors: the run keeps prod(1 - c_i) of the reference,
// so what the findings explain is 1 - prod(1 - c_i), never their sum. The rest is the
// unexplained residual, with the next measurement to take for it. A pure function: the
// reports are read by the caller (compare::read_report), the knowledge base loaded by it.
#pragma once

#include <string>
#include <vector>

#include "compare/compare.hpp"
#include "core/kb.hpp"
#include "report/model.hpp"

namespace perfgap::analyzers {

struct BudgetInput {
  std::string name;  // the report's file as given
  compare::ReportView report;
};

struct BudgetOptions {
  double measured_pct = 100;  // percent of the reference throughput (steps.gap's percent_of_reference)
  double threshold = 0.95;    // the pass bar, as steps.gap's
  std::vector<report::Evidence> measured_evidence;  // what the figure came from (steps.gap's evidence)
  // The --measured log as steps.gap names it (its subject): a report's steps.gap of another log
  // is another run's gap, said and not used; empty: every steps.gap is this run's.
  std::string measured_source;
};

report::Finding explain_budget(const std::vector<BudgetInput>& reports, const core::Kb& kb, const BudgetOptions& options);

}  // namespace perfgap::analyzers
