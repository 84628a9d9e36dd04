#include "fleet/inputs.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>
#include <variant>

#include <fmt/format.h>

#include "sys/named_file.hpp"

namespace perfgap::fleet {
namespace {

bool ends_with_json(std::string_view name) { return name.size() > 5 && name.ends_with(".json"); }

}  // namespace

ExpandedInputs expand_inputs(const std::vector<std::string>& args) { return expand_inputs(args, ends_with_json, ".json report"); }

namespace {

// Reads a whole file into `buf` followed by the parser's padding; the problem otherwise.
std::optional<std::string> read_padded(const std::string& path, std::string& buf, std::size_t& size) {
  return sys::read_padded_file(path, kMaxReportBytes, required_padding(), buf, size, [](std::optional<std::uint64_t> bytes) {
    if (bytes) return fmt::format("{} bytes: larger than any node report ({} MiB at most)", *bytes, kMaxReportBytes >> 20);
    return fmt::format("larger than any node report ({} MiB at most)", kMaxReportBytes >> 20);
  });
}

// "reports/gpu017.json" -> "gpu017": the name of a node report that records none.
std::string node_name_from_file(std::string_view path) {
  if (auto slash = path.rfind('/'); slash != std::string_view::npos) path.remove_prefix(slash + 1);
  for (std::string_view suffix : {".json", ".JSON"})
    if (path.size() > suffix.size() && path.substr(path.size() - suffix.size()) == suffix) {
      path.remove_suffix(suffix.size());
      break;
    }
  return std::string(path);
}

}  // namespace

LoadedReports load_reports(const std::vector<std::string>& files, const ReadOptions& opts, unsigned threads) {
  using Result = std::variant<NodeReport, std::string>;
  std::vector<Result> results(files.size());
  if (threads == 0) {
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    // A thread pays off only with enough reports to share (about 1 ms of work each 64).
    threads = static_cast<unsigned>(std::clamp<std::size_t>(files.size() / 64, 1, std::min(cores, 8u)));
  }
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    ReportReader reader;
    std::string buf;
    for (std::size_t i = next++; i < files.size(); i = next++) {
      try {
        std::size_t size = 0;
        if (auto problem = read_padded(files[i], buf, size)) {
          results[i] = std::move(*problem);
          continue;
        }
        auto r = reader.parse_padded(buf.data(), size, opts);
        if (r) {
          r->file = files[i];
          if (r->name.empty() && r->kind != "analyze" && r->kind != "probe") {
            r->name = node_name_from_file(files[i]);
            r->name_from_file = true;
          }
          results[i] = std::move(*r);
        } else {
          results[i] = std::move(r.error());
        }
      } catch (const std::exception& e) {  // out of memory on a huge report: that report only
        results[i] = fmt::format("cannot read: {}", e.what());
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();

  LoadedReports out;
  out.nodes.reserve(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (auto* n = std::get_if<NodeReport>(&results[i])) out.nodes.push_back(std::move(*n));
    else out.unreadable.push_back({files[i], std::move(std::get<std::string>(results[i]))});
  }
  return out;
}

}  // namespace perfgap::fleet
