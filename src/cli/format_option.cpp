#include "cli/format_option.hpp"

#include <algorithm>

#include "cli/suggest.hpp"

namespace perfgap::cli {

CLI::Validator one_of(const std::vector<std::string>& values) {
  return CLI::Validator(
      [values](std::string& v) -> std::string {
        if (std::find(values.begin(), values.end(), v) != values.end()) return "";
        return "unknown value '" + v + "'" + did_you_mean(v, values) + "; one of: " + joined(values);
      },
      "");
}

CLI::Option* add_format_option(CLI::App* cmd, std::string& value, const std::vector<report::Format>& accepted, const std::string& notes) {
  std::vector<std::string> names;
  names.reserve(accepted.size());
  for (report::Format f : accepted) names.emplace_back(report::format_name(f));
  std::string help = "Output format: ";
  for (std::size_t i = 0; i < names.size(); ++i)
    help += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i] + (names[i] == "text" ? " (default)" : "");
  if (!notes.empty()) help += "; " + notes;
  return cmd->add_option("--format", value, help)->type_name("FORMAT")->check(one_of(names));
}

report::Format chosen_format(const std::string& value) { return report::parse_format(value).value_or(report::Format::text); }

}  // namespace perfgap::cli
