#include "core/runner.hpp"

#include <exception>
#include <thread>

#include "sys/bounded.hpp"

namespace perfgap::core {

std::vector<report::Finding> run_checks(const std::vector<const CheckInfo*>& checks,
                                        std::shared_ptr<facts::Facts> facts, const Config& config,
                                        const RunOptions& options) {
  using Outcome = tl::expected<std::vector<report::Finding>, std::string>;
  // The sample window elapses while the other checks run: started first (live only; a tree's
  // counters need no wait), its checks run last, and the findings keep the registry order.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < checks.size(); ++i)
    if (!checks[i]->sampled) order.push_back(i);
  const std::size_t unsampled = order.size();
  for (std::size_t i = 0; i < checks.size(); ++i)
    if (checks[i]->sampled) order.push_back(i);
  if (unsampled < checks.size() && facts->root().is_live()) {
    // Holds the facts; call_once makes the sampled checks wait for this very window.
    std::thread([facts] { (void)facts->window(); }).detach();
  }
  std::vector<std::vector<report::Finding>> per_check(checks.size());
  // One worker runs the checks in turn; a check that hangs is left behind on it and the
  // next check gets a fresh one.
  sys::BoundedWorker worker;
  for (std::size_t index : order) {
    const CheckInfo* info = checks[index];
    auto& out = per_check[index];
    Thresholds th = config.thresholds_for(*info);
    // The worker owns copies of what it touches, so abandoning it leaves nothing dangling.
    CheckFn fn = info->run;
    auto outcome = worker.run<Outcome>(
        [fn, facts, th]() -> Outcome {
          try {
            return fn(*facts, th);
          } catch (const std::exception& e) {
            return tl::unexpected(std::string(e.what()));
          } catch (...) {
            return tl::unexpected(std::string("unknown exception"));
          }
        },
        options.check_timeout);
    auto broken = [&](std::string why) {
      auto f = finding(info->id, info->layer, report::Status::error, "check failed: " + why);
      f.fix = "report this with the output of `perfgap check -v --only " + std::string(info->id) + "`";
      out.push_back(std::move(f));
    };
    if (!outcome) {
      broken("did not finish within " + std::to_string(options.check_timeout.count() / 1000.0).substr(0, 4) +
             " s (a kernel read may be blocked)");
      continue;
    }
    if (!*outcome) {
      broken(outcome->error());
      continue;
    }
    if ((*outcome)->empty()) {
      broken("produced no finding");
      continue;
    }
    for (auto& f : **outcome) {
      f.id = std::string(info->id);
      f.layer = std::string(info->layer);
      out.push_back(std::move(f));
    }
  }
  std::vector<report::Finding> all;
  for (auto& found : per_check)
    for (auto& f : found) all.push_back(std::move(f));
  return all;
}

}  // namespace perfgap::core
