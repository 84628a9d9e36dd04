#include <fmt/format.h>

#include "analyzers/analyzers.hpp"
#include "parsers/profile.hpp"

namespace perfgap::analyzers {

Finding unusable_input(std::string_view kind, std::string_view layer, std::string_view main_id, const std::string& source, const std::string& why) {
  Finding f;
  f.id = std::string(main_id);
  f.layer = std::string(layer);
  f.status = report::Status::error;
  f.subject = source;
  f.title = fmt::format("unusable input {}: {}", source, why);
  f.add(source, why);
  // A file cut short is the right kind: what it needs is a whole copy, not another format.
  const bool cut = why.find("truncated") != std::string::npos || why.find("cut short") != std::string::npos;
  if (cut)
    f.fix = "the file is cut short (written by a job that was stopped, or copied while written or in part): copy it again whole, or capture again";
  else if (why.find(parsers::kNotAGpuTraceWords) != std::string::npos)
    f.fix = "nothing for perfgap's profile analysis here: it reads NVIDIA GPU traces";
  else if (why.find("no GPU activity") != std::string::npos)
    f.fix = "capture again as the title says: the trace is the right format, but holds no GPU activity";
  else
    f.fix = fmt::format("pass the {} output itself (see docs/ANALYZE.md for the formats read)", kind);
  return f;
}

std::vector<Finding> damaged_lines(const char* id, const char* layer, const std::string& source,
                                   const std::vector<parsers::ParseError>& damaged) {
  if (damaged.empty()) return {};
  Finding f;
  f.id = id;
  f.layer = layer;
  f.status = report::Status::error;
  f.subject = source + " (unreadable lines)";
  f.title = damaged.size() == 1 ? fmt::format("{}: line {} could not be read: {}", source, damaged[0].line, damaged[0].message)
                                : fmt::format("{}: {} lines could not be read (first: line {}: {})", source, damaged.size(),
                                              damaged[0].line, damaged[0].message);
  std::size_t n = 0;
  for (const auto& d : damaged) {
    if (++n > 20) {
      f.add(source, fmt::format("... {} more", damaged.size() - 20));
      break;
    }
    f.add(d.line > 0 ? fmt::format("{}:{}", source, d.line) : source, d.message);
  }
  f.metric("unreadable_lines", static_cast<double>(damaged.size()));
  return {f};
}

}  // namespace perfgap::analyzers
