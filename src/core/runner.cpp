#include "core/runner.hpp"

#include <exception>

#include "sys/bounded.hpp"

namespace perfgap::core {

std::vector<report::Finding> run_checks(const std::vector<const CheckInfo*>& checks,
                                        std::shared_ptr<facts::Facts> facts, const Config& config,
                                        const RunOptions& options) {
  using Outcome = tl::expected<std::vector<report::Finding>, std::string>;
  std::vector<report::Finding> out;
  for (const CheckInfo* info : checks) {
    Thresholds th = config.thresholds_for(*info);
    // The worker owns copies of what it touches, so abandoning it leaves nothing dangling.
    CheckFn fn = info->run;
    auto outcome = sys::run_bounded<Outcome>(
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
  return out;
}

}  // namespace perfgap::core
