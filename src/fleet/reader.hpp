// Reads one node report (`perfgap check --format json`) for the fleet. Text in, a NodeReport
// or the reason it is unusable out; the fleet command turns that reason into fleet.unreadable.
// The text is parsed and its schema checked by the one report reader (report/reader.hpp, its
// words for a bad report); what the fleet asks beyond the schema is checked here.
#pragma once

#include <memory>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "report/model.hpp"

namespace perfgap::fleet {

// A finding as the fleet compares it: ids, layers and metric names are views into a
// process-wide pool (a fleet has ~100 distinct ones), so 10,000 nodes x 40 findings cost no
// allocation beyond the subject and the node's metric list.
struct NodeMetric {
  std::string_view name;
  double value = 0;
};
struct NodeFinding {
  std::string_view id, layer;
  report::Status status = report::Status::skip;
  std::string subject;
  std::uint32_t metrics_begin = 0, metrics_count = 0;  // in NodeReport::metrics
};

// What the fleet keeps of a node report.
struct NodeReport {
  std::string file;          // where it was read from (set by the loader)
  std::string name;          // node.name: the fleet's key (empty for an analyze report)
  bool name_from_file = false;  // the report had no node.name: `name` is its file's (the loader's)
  // "live" or "root" (a node report), or "analyze": a measurement (analyze nccl-tests, steps,
  // nsys/kineto) that fleet/measured aggregates per node; its `node` is null. Or "probe": the
  // figures `perfgap probe` measured on the node `name` (read for expect's floors only).
  std::string kind;
  std::vector<std::string> hosts;  // analyze nccl-tests: the hosts its ranks ran on, as the log shows
  // analyze nccl-tests|nccl-inspector: the collective its busbw measured ("AllReduce", its
  // "collective measured" evidence); empty where it does not say.
  std::string collective;
  // analyze nccl-tests: the GPU models its Rank lines show (" + "-joined; "nccl-tests GPUs");
  // analyze nsys|kineto: those its profile.summary's per-GPU lines name (" + "-joined).
  std::string gpus;
  // analyze steps: the unit of its throughput ("samples/s", "tokens/s"; steps.gap's "throughput
  // unit" evidence); empty for a log of step times or a report that does not say.
  std::string throughput_unit;
  // analyze steps: why its steps.gap median rests on start-up records only (its "start-up only"
  // evidence: a single first step, skipped iterations only); empty for a steady-state log.
  std::string startup_only;
  // analyze nccl-inspector|nccl-ras: the ranks each finding names (its "nccl ranks" evidence
  // line), one per rank: the finding (index in `findings`), its host, the rest of the item.
  struct RankRef {
    std::uint32_t finding = 0;
    std::string host, what;  // "gpu-node-03", "rank 5 of 'DP Group 0' (pid 41005)"
  };
  std::vector<RankRef> ranks;
  // An analyze report's own verdicts: the title and fix of each of its warn and fail findings
  // (index in `findings`), which fleet.measured carries into the fleet's verdict.
  struct Verdict {
    std::uint32_t finding = 0;
    std::string title, fix;
  };
  std::vector<Verdict> verdicts;
  std::string generated_at;  // as written
  std::optional<long long> generated_unix;  // generated_at in seconds, when it parses
  std::string kernel;
  std::string arch;  // node.arch: with settings.cpu_model, which machine the report is of
  report::StringMap settings;
  report::StringMap environment;  // NCCL_ and UCX_ entries only: what fleet.drift compares
  report::StringMap nccl_conf;    // same
  std::vector<NodeFinding> findings;
  std::vector<NodeMetric> metrics;
  // The findings as the report model has them, for the JUnit and Prometheus renderers; only
  // with ReadOptions::findings (with title, evidence, fix and impact: ReadOptions::details).
  // Their metrics stay in `metrics` above: neither renderer shows them.
  std::vector<report::Finding> report_findings;

  // The metrics of one of its findings.
  std::span<const NodeMetric> metrics_of(const NodeFinding& f) const {
    return std::span<const NodeMetric>(metrics).subspan(f.metrics_begin, f.metrics_count);
  }
};

struct ReadOptions {
  bool findings = false;  // also fill NodeReport::report_findings
  bool details = false;   // ... with their titles, evidence, fixes and impacts
  bool metrics = false;   // ... with their metrics (Prometheus' perfgap_metric)
};

// Extra bytes a buffer passed to ReportReader::parse_padded must have after the text.
std::size_t required_padding();

// Holds the JSON parser (and its buffers) between reports; one per thread.
class ReportReader {
 public:
  ReportReader();
  ~ReportReader();
  ReportReader(const ReportReader&) = delete;
  ReportReader& operator=(const ReportReader&) = delete;

  // `text` is copied into a padded buffer first.
  tl::expected<NodeReport, std::string> parse(std::string_view text, const ReadOptions& opts);
  // `data` holds `size` bytes of text followed by required_padding() readable bytes.
  tl::expected<NodeReport, std::string> parse_padded(const char* data, std::size_t size, const ReadOptions& opts);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// RFC 3339 date-time ("2026-11-30T12:00:00Z", fractions and offsets allowed) to Unix seconds.
std::optional<long long> parse_rfc3339(std::string_view s);

}  // namespace perfgap::fleet
