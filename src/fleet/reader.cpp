#include "fleet/reader.hpp"

#include <fmt/format.h>

#include <mutex>
#include <unordered_set>

#include "compare/run_shape.hpp"
#include "compare/same_job.hpp"
#include "parsers/nccl_inspector.hpp"
#include "parsers/nccl_tests.hpp"
#include "parsers/steps.hpp"
#include "report/reader.hpp"

namespace perfgap::fleet {

// Named, not anonymous: ReportReader::Impl holds one (a unity build would warn otherwise).
namespace detail {

// Ids, layers and metric names, each stored once for the whole process: a view of it stays
// valid for as long as the process runs, whichever thread read it. Each reader keeps its own
// cache, so the lock is taken once per distinct name and thread.
class Interner {
 public:
  std::string_view get(std::string_view s) {
    if (auto it = cache_.find(s); it != cache_.end()) return *it;
    std::string_view stable;
    {
      std::lock_guard lock(mutex());
      stable = *pool().emplace(s).first;
    }
    cache_.insert(stable);
    return stable;
  }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::unordered_set<std::string>& pool() {  // node-based: its strings never move
    static auto* p = new std::unordered_set<std::string>();  // never destroyed: views outlive any reader
    return *p;
  }
  std::unordered_set<std::string_view> cache_;
};

}  // namespace detail

namespace {

using detail::Interner;

bool fleet_compared(std::string_view name) { return name.starts_with("NCCL_") || name.starts_with("UCX_"); }

void keep_entries(std::span<const report::ReadEntry> entries, report::StringMap& out, bool only_compared) {
  for (const auto& e : entries)
    if (!only_compared || fleet_compared(e.key)) out.emplace(std::string(e.key), std::string(e.value));
}

// A profile's GPU models as its profile.summary's per-GPU lines name them, " + "-joined; a
// few at most (a job's GPUs are of one or two models).
void read_profile_gpu(std::string_view observed, std::string& gpus) {
  constexpr std::size_t kMaxProfileGpuModels = 4;
  const std::string model = compare::gpu_model_of_profile_line(observed);
  if (model.empty()) return;
  std::size_t count = gpus.empty() ? 0 : 1;
  for (std::size_t at = gpus.find(" + "); at != std::string::npos; at = gpus.find(" + ", at + 3)) ++count;
  if (count >= kMaxProfileGpuModels) return;
  for (std::string_view rest = gpus; !rest.empty();) {
    const auto plus = rest.find(" + ");
    if (rest.substr(0, plus) == model) return;
    rest = plus == std::string_view::npos ? std::string_view() : rest.substr(plus + 3);
  }
  gpus += (gpus.empty() ? "" : " + ") + model;
}

// An analyze nccl-tests report names the hosts its log shows in one evidence line; the NCCL
// Inspector and RAS findings name their ranks in one (`finding`: its index).
void read_measured_evidence(const report::ReadFinding& f, std::uint32_t finding, NodeReport& out) {
  for (const auto& ev : f.evidence) {
    if (ev.source == parsers::kCollectiveMeasuredEvidence && out.collective.empty()) {
      out.collective = std::string(compare::collective_measured(ev.observed));
      continue;
    }
    if (ev.source == parsers::kNcclTestsGpusEvidence && out.gpus.empty()) {
      out.gpus = std::string(ev.observed);
      continue;
    }
    if (ev.source == parsers::kThroughputUnitEvidence && out.throughput_unit.empty()) {
      out.throughput_unit = std::string(ev.observed);
      continue;
    }
    if (ev.source == parsers::kStartupOnlyEvidence && out.startup_only.empty()) {
      out.startup_only = std::string(ev.observed);
      continue;
    }
    if (f.id == "profile.summary") {
      read_profile_gpu(ev.observed, out.gpus);
      continue;
    }
    const bool host_list = ev.source == parsers::kNcclTestsHostsEvidence;
    const bool rank_list = ev.source == parsers::kNcclRanksEvidence;
    if (!host_list && !rank_list) continue;
    const std::string_view sep = host_list ? "," : "; ";
    std::string_view list = ev.observed;
    while (!list.empty()) {
      auto end = list.find(sep);
      auto item = list.substr(0, end);
      if (host_list && !item.empty()) out.hosts.emplace_back(item);
      // "HOST: rank R ..." (an item without a host names no node: left out)
      if (auto colon = item.find(": "); rank_list && colon != std::string_view::npos && colon > 0)
        out.ranks.push_back({finding, std::string(item.substr(0, colon)), std::string(item.substr(colon + 2))});
      list = end == std::string_view::npos ? std::string_view() : list.substr(end + sep.size());
    }
  }
}

// What the fleet keeps of a checked report (report::Reader checked its schema), or why it is
// not a report the fleet reads: a node report (live, root) with a named node, or a measurement.
tl::expected<NodeReport, std::string> node_report(const report::ReadReport& r, const ReadOptions& opts, Interner& names) {
  NodeReport out;
  if (r.kind != "live" && r.kind != "root" && r.kind != "analyze" && r.kind != "probe")
    return tl::unexpected(fmt::format("source.kind is '{}': neither a node report (`perfgap check --format json`) nor a measurement "
                                      "(`perfgap analyze nccl-tests|steps|nsys|kineto|nccl-inspector|nccl-ras --format json`, "
                                      "`perfgap probe --format json`)",
                                      report::shown_in_error(r.kind)));
  out.kind = r.kind;
  if (!r.has_node) return tl::unexpected(std::string("no \"node\" field: not a node report"));
  // An analyze report's node is null: the node is the one its measurement names. A probe report
  // is a measurement of the node it names.
  const bool measured = out.kind == "analyze" || out.kind == "probe";
  if (out.kind == "probe" && (!r.node || !r.node->name || r.node->name->empty()))
    return tl::unexpected(std::string("a probe report that names no node (written before perfgap probe named it): run the probe again"));
  if (r.node) {
    // A report without a name (a captured tree that recorded no hostname) is still a node:
    // the loader names it from its file.
    out.name = r.node->name.value_or("");
    out.kernel = r.node->kernel.value_or("");
    out.arch = r.node->arch.value_or("");
    keep_entries(r.node->settings, out.settings, false);
    keep_entries(r.node->environment, out.environment, true);
    keep_entries(r.node->nccl_conf, out.nccl_conf, true);
  } else if (!measured) {
    return tl::unexpected(std::string("node is null: not a node report (fleet reads `perfgap check --format json` reports)"));
  }
  if (r.generated_at) {
    out.generated_at = *r.generated_at;
    out.generated_unix = parse_rfc3339(out.generated_at);
  }
  out.findings.reserve(r.findings.size());
  const bool keep_findings = opts.findings || opts.details;
  if (keep_findings) out.report_findings.reserve(r.findings.size());
  for (const auto& rf : r.findings) {
    NodeFinding f;
    f.id = names.get(rf.id);
    f.layer = names.get(rf.layer);
    f.status = rf.status;
    f.subject = rf.subject;
    f.metrics_begin = static_cast<std::uint32_t>(out.metrics.size());
    for (const auto& m : rf.metrics) out.metrics.push_back({names.get(m.name), m.value});
    f.metrics_count = static_cast<std::uint32_t>(rf.metrics.size());
    if (measured) {
      read_measured_evidence(rf, static_cast<std::uint32_t>(out.findings.size()), out);
      if (rf.status == report::Status::fail || rf.status == report::Status::warn)
        out.verdicts.push_back({static_cast<std::uint32_t>(out.findings.size()), std::string(rf.title), std::string(rf.fix)});
    }
    if (keep_findings) {
      report::Finding& full = out.report_findings.emplace_back();
      full.id = f.id;
      full.layer = f.layer;
      full.status = f.status;
      full.subject = f.subject;
      if (opts.details) {
        full.title = rf.title;
        full.fix = rf.fix;
        full.impact = rf.impact;
        for (const auto& ev : rf.evidence) {
          report::Evidence item;
          item.source = ev.source;
          item.observed = ev.observed;
          if (ev.expected) item.expected = std::string(*ev.expected);
          full.evidence.push_back(std::move(item));
        }
      }
      if (opts.metrics)
        for (const auto& m : rf.metrics) full.metrics.emplace_back(std::string(m.name), m.value);
    }
    out.findings.push_back(std::move(f));
  }
  return out;
}

}  // namespace

// The text is read as given; no padding is needed (kept for the loader's interface).
std::size_t required_padding() { return 0; }

struct ReportReader::Impl {
  report::Reader reader;
  Interner names;
};

ReportReader::ReportReader() : impl_(std::make_unique<Impl>()) {}
ReportReader::~ReportReader() = default;

tl::expected<NodeReport, std::string> ReportReader::parse(std::string_view text, const ReadOptions& opts) {
  return parse_padded(text.data(), text.size(), opts);
}

tl::expected<NodeReport, std::string> ReportReader::parse_padded(const char* data, std::size_t size, const ReadOptions& opts) {
  auto r = impl_->reader.read(std::string_view(data, size));
  if (!r) return tl::unexpected(std::move(r.error()));
  return node_report(*r, opts, impl_->names);
}

std::optional<long long> parse_rfc3339(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  auto num = [&](std::size_t pos, std::size_t len) -> std::optional<int> {
    if (pos + len > s.size()) return std::nullopt;
    int v = 0;
    for (std::size_t i = pos; i < pos + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), se = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !se || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *se > 60)
    return std::nullopt;
  std::size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    std::size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    if (pos == start) return std::nullopt;
  }
  long long offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    auto oh = num(pos + 1, 2), om = num(pos + 4, 2);
    if (!oh || !om || pos + 3 >= s.size() || s[pos + 3] != ':') return std::nullopt;
    offset = (s[pos] == '+' ? 1 : -1) * (*oh * 3600LL + *om * 60LL);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  // Days from the civil date (Howard Hinnant's algorithm), so no time zone database is needed.
  int yy = *y - (*mo <= 2 ? 1 : 0);
  long long era = (yy >= 0 ? yy : yy - 399) / 400;
  long long yoe = yy - era * 400;
  long long doy = (153LL * (*mo + (*mo > 2 ? -3 : 9)) + 2) / 5 + *d - 1;
  long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  long long days = era * 146097 + doe - 719468;
  return days * 86400 + *h * 3600LL + *mi * 60LL + *se - offset;
}

}  // namespace perfgap::fleet
