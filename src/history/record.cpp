// check --history DIR's step after the checks: judge against the kept runs, then keep this one.
#include "history/history.hpp"

#include <chrono>

#include "compare/compare.hpp"
#include "report/render.hpp"
#include "sys/dir_lock.hpp"

namespace perfgap::history {

void record_run(const std::string& dir, report::Report& rep) {
  sys::DirLock lock(dir, kLockName, std::chrono::seconds(5));
  if (!lock.held()) {
    auto why = lock.busy() ? "another perfgap run holds its lock (" + dir + "/" + kLockName + ")" : lock.error();
    for (auto& f : unusable(dir, why)) rep.findings.push_back(std::move(f));
    return;
  }
  auto now = compare::read_report(report::render_json(rep));
  if (!now) {
    for (auto& f : unusable(dir, "this run's report could not be read back: " + now.error())) rep.findings.push_back(std::move(f));
    return;
  }
  auto past = load(dir, now->node);
  for (auto& f : judge(*now, past)) rep.findings.push_back(std::move(f));
  auto kept = keep(dir, report::render_json(rep), rep.generated_at, Limits{});
  if (!kept) {
    for (auto& f : rep.findings)
      if (f.id == "history.changed") f.add(dir, "this run was not kept: " + kept.error());
  }
}

}  // namespace perfgap::history
