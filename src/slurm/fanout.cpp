#include "slurm/fanout.hpp"

namespace perfgap::slurm {

tl::expected<void, std::string> validate_check_args(const std::vector<std::string>& check_args) {
  for (const auto& a : check_args) {
    auto name = a.substr(0, a.find('='));
    if (name == "--format" || name == "--output" || name == "--list")
      return tl::unexpected("fanout sets " + name + " of check itself; give --format/--output to fanout (they apply to the fleet report)");
  }
  return {};
}

std::string report_path(const std::string& report_dir, const std::string& node) {
  return report_dir + (report_dir.empty() || report_dir.back() == '/' ? "" : "/") + node + ".json";
}

std::vector<std::string> build_srun_command(const FanoutPlan& plan) {
  const auto n = std::to_string(plan.nodes.size());
  std::vector<std::string> cmd = {plan.srun,
                                  "--nodes=" + n,
                                  "--ntasks=" + n,
                                  "--ntasks-per-node=1",
                                  "--nodelist=" + plan.nodelist,
                                  // A failing node (check exits 1) must not cancel the others.
                                  "--kill-on-bad-exit=0",
                                  "--job-name=perfgap-fanout"};
  std::string perfgap = plan.perfgap;
  if (!plan.container_image.empty()) {
    cmd.push_back("--container-image=" + plan.container_image);
    std::string mounts;
    if (plan.container_perfgap.empty()) mounts = plan.perfgap + ":" + plan.perfgap + ":ro";
    else perfgap = plan.container_perfgap;
    mounts += (mounts.empty() ? "" : ",") + plan.report_dir + ":" + plan.report_dir;
    if (!plan.container_mounts.empty()) mounts += "," + plan.container_mounts;
    cmd.push_back("--container-mounts=" + mounts);
  }
  cmd.insert(cmd.end(), plan.srun_args.begin(), plan.srun_args.end());
  cmd.insert(cmd.end(), {perfgap, "fanout", "--node-task", "--report-dir", plan.report_dir, "--"});
  cmd.insert(cmd.end(), plan.check_args.begin(), plan.check_args.end());
  return cmd;
}

}  // namespace perfgap::slurm
