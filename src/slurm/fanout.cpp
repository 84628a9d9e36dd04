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
  cmd.insert(cmd.end(), plan.container_wrap.begin(), plan.container_wrap.end());
  cmd.insert(cmd.end(), {perfgap, "fanout", "--node-task", "--report-dir", plan.report_dir, "--"});
  cmd.insert(cmd.end(), plan.check_args.begin(), plan.check_args.end());
  return cmd;
}

tl::expected<std::vector<std::string>, std::string> split_command_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 == text.size()) return tl::unexpected(std::string("ends with a lone backslash"));
      word.push_back(text[++i]);
    } else if (c == '\'') {
      const auto end = text.find('\'', i + 1);
      if (end == std::string_view::npos) return tl::unexpected(std::string("unterminated single quote"));
      word.append(text.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size() && std::string_view("\\\"$`").find(text[j + 1]) != std::string_view::npos) ++j;
        word.push_back(text[j]);
      }
      if (j == text.size()) return tl::unexpected(std::string("unterminated double quote"));
      i = j;
    } else {
      word.push_back(c);
    }
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return tl::unexpected(std::string("no command"));
  return words;
}

}  // namespace perfgap::slurm
