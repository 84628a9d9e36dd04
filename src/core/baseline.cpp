#include "core/baseline.hpp"

#include "report/reader.hpp"
#include "sys/named_file.hpp"

namespace perfgap::core {

tl::expected<facts::Baseline, std::string> read_baseline(std::string_view text, const std::string& path) {
  report::Reader reader;
  auto r = reader.read(text);
  if (!r) return tl::unexpected(path + ": " + r.error());
  if (!r->node) return tl::unexpected(path + ": the report has no node (take it with perfgap check --format json)");
  facts::Baseline b;
  b.file = path;
  b.node_name = r->node->name.value_or("");
  for (auto [entries, dest] : {std::pair{r->node->environment, &b.environment}, {r->node->nccl_conf, &b.nccl_conf}, {r->node->settings, &b.settings}})
    for (const auto& e : entries) (*dest)[std::string(e.key)] = e.value;
  // A report writes settings.nccl_topo_file `unset` only where it read the audited environment:
  // `unknown` beside an empty environment is one that was never read (docs/CONTRACT.md).
  const auto topo = b.settings.find("nccl_topo_file");
  b.environment_unread = b.environment.empty() && topo != b.settings.end() && topo->second == report::kSettingUnknown;
  return b;
}

tl::expected<facts::Baseline, std::string> load_baseline(const std::string& path) {
  auto text = sys::read_named_file(path, sys::kMaxReportFileBytes);
  if (!text) return tl::unexpected(path + ": " + text.error());
  return read_baseline(*text, path);
}

}  // namespace perfgap::core
