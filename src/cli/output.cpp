#include "cli/output.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

#include "cli/errors.hpp"
#include "sys/text.hpp"

namespace perfgap::cli {

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

bool color_wanted() {
  const char* no = std::getenv("NO_COLOR");
  if (no != nullptr && *no != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return stdout_is_terminal();
}

report::RenderOptions render_options(const std::string& output, bool verbose, long long unix_time) {
  report::RenderOptions o;
  o.text = {verbose, output_is_stdout(output) && color_wanted()};
  o.unix_time = unix_time;
  return o;
}

int emit_report(const std::string& kind, const std::vector<std::string>& inputs, std::vector<report::Finding> findings,
                report::Format format, const std::string& output, bool verbose, bool in_order, const std::string& undecided,
                std::optional<report::Node> node) {
  report::Report rep;
  rep.tool_version = PERFGAP_VERSION;
  const auto now = std::time(nullptr);
  rep.generated_at = sys::rfc3339_utc(now);
  rep.source.kind = kind;
  rep.source.inputs = inputs;
  rep.node = std::move(node);
  rep.findings = std::move(findings);
  rep.undecided = undecided;
  auto options = render_options(output, verbose, static_cast<long long>(now));
  options.text.in_order = options.html.in_order = in_order;
  auto w = write_output(output, report::render(rep, format, options));
  if (!w) throw UsageError(w.error());
  return rep.has_fail() ? 1 : 0;
}

}  // namespace perfgap::cli
