// Expected state learned from a fleet (docs/EXPECT.md): what the nodes of one kind have in
// common, and a node held against it. Three steps, each a pure function:
//   gather  a node's check report (node settings, kernel, findings) ─► NodeFacts
//   learn   the NodeFacts of a fleet ─► Expectations (per kind, what a clear majority agrees on)
//   judge   Expectations + one node's NodeFacts ─► expect.<aspect> findings
// The facts are read from the report (the same findings a fleet reads), so `check --expect`
// on the node and `fleet --expect` over its saved report judge the same thing.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "fleet/reader.hpp"
#include "report/model.hpp"

namespace perfgap::fleet {

inline constexpr std::string_view kExpectSchema = "perfgap.expect/1";

// The aspects, in report order: each is one finding id, expect.<aspect>. `measured` holds the
// figures of analyze reports given beside the check reports (nccl-tests bus bandwidth): a
// floor learned from the kind's own spread, judged where a measurement of the node is given.
enum class Aspect { counts, links, placement, versions, settings, measured };
inline constexpr Aspect kAspects[] = {Aspect::counts, Aspect::links, Aspect::placement, Aspect::versions, Aspect::settings, Aspect::measured};
std::string_view aspect_name(Aspect a);  // "counts", ...
std::optional<Aspect> aspect_from(std::string_view name);
// "expect.counts", ...: static storage (the fleet pools ids as views).
std::string_view aspect_id(Aspect a);

// What one node's report shows, as "device attribute" keys ("port mlx5_0:1 rate_gbps",
// "gpu 0000:18:00.0 pcie_width", "gpus") to values ("400", "16", "8").
struct NodeFacts {
  std::string node;
  std::string kind;  // "NVIDIA H100 80GB HBM3 / Intel(R) Xeon(R) Platinum 8480+ / ConnectX-7 (pci 15b3:1021)"
  std::map<Aspect, std::map<std::string, std::string>> facts;
  // Finding ids the report ran with a result (not only skipped): an expected key whose source
  // was read and is absent is a device missing; one whose source was not read is unknown.
  std::vector<std::string> sources_read;
};

// A finding's metric by name (the facts are read from findings' metrics).
std::optional<double> metric_of(const report::Finding& f, std::string_view name);

// The node's facts from its report's parts. `kernel` and `settings` are node.kernel and node.settings.
NodeFacts gather_facts(std::string_view node, std::string_view kernel, const report::StringMap& settings,
                       std::span<const report::Finding> findings);
// The finding id a key is read from ("net.ib.ports" for "port mlx5_0:1 rate_gbps"; "nccl-tests"
// for a figure of an analyze nccl-tests report, "probe" for one of a probe report).
std::string_view source_of(Aspect a, std::string_view key);
// A key read from a measurement given beside the node's report (not from the report itself):
// where no measurement of the node was given it is not judged, neither absent nor unread.
bool from_measurement(std::string_view key);
// ... of a probe report: the node's own figure ("probe memory cpu 0 mem 0 triad_gbps").
bool from_probe(std::string_view key);

// The figures of analyze nccl-tests reports ("nccl-tests all_reduce_perf 16 ranks 2 nodes
// busbw_gbps 1073741824" -> "371.2", the collective where the log names it, sizes of 1 MiB and
// more; "nccl-tests nccl_version" -> "2.21.5") added to the facts of
// the nodes each run shows in its log (a run over several hosts counts for each; a node's
// figure is the median of its runs), and the figures of probe reports ("probe memory cpu 0 mem 1
// triad_gbps", "probe gpu BDF node N h2d_gbps" and d2h_gbps, "probe cpu busy_mhz") to the node
// each names. Reports of other kinds, and measurements of none of
// `nodes`, are left alone; returns the indices in `measured` of the reports that gave none.
std::vector<std::size_t> add_measurements(std::span<const NodeReport> measured, std::vector<NodeFacts>& nodes);

// One learned entry with how the fleet voted.
struct Entry {
  std::string value;
  std::size_t agreed = 0, nodes = 0;                  // nodes holding the value, of nodes of the kind
  std::vector<std::pair<std::string, std::string>> others;  // nodes that did not: name, their value ("" = absent)
  bool kept = false;                                  // from the file --update kept (reviewed)
  std::string note;  // the file's comment where a vote is not the whole story (a floor's median and spread)
};

// The measured aspect's entries are floors: ">= 356.2" (the figure of a node may be higher).
// Learned per kind from at least three nodes and more than half of the kind: the median less
// the larger of 5% and four times the fleet's spread (1.4826 x MAD, a standard deviation's
// worth), so that a node below it is slower than its kind's own noise explains.
inline constexpr double kMeasuredFloorPct = 5.0, kMeasuredSpreads = 4.0;
std::optional<Entry> learn_floor(const std::vector<std::pair<std::string, double>>& node_values, std::size_t kind_nodes);
std::optional<double> floor_of(std::string_view value);  // ">= 356.2" -> 356.2

struct KindExpectation {
  std::string kind;
  std::size_t nodes = 0;
  std::map<Aspect, std::map<std::string, Entry>> entries;
  std::vector<std::string> left_out;  // "links: gpu 0000:18:00.0 pcie_width: 16 on 6, 8 on 4 of 10 nodes"
};
struct Expectations {
  std::string file;  // where it was read from (for findings' evidence)
  std::vector<KindExpectation> kinds;
  const KindExpectation* find(std::string_view kind) const;
};
// The node's kind in `e`: its own, else the only kind of the same GPUs and CPU (a node that lost
// every NIC of a model; a file learned before NIC models made part of the kind); null if none.
const KindExpectation* find_kind(const Expectations& e, const NodeFacts& n);

// Learns per kind what at least `agree_pct` percent of its nodes hold (and more than half, so
// never a minority); what no value reaches is left out and said so.
Expectations learn(std::span<const NodeFacts> nodes, double agree_pct);
// --update: the entries (and kinds) of `reviewed` win over the learned ones.
void keep_reviewed(Expectations& learned, const Expectations& reviewed);

// The expectations as reviewable YAML: a comment on each entry says how many nodes agreed and which did not.
std::string write_expectations(const Expectations& e, double agree_pct);
// Reads the file's text; errors are one line "FILE:LINE: why".
tl::expected<Expectations, std::string> read_expectations(std::string_view text, const std::string& file);
tl::expected<Expectations, std::string> load_expectations(const std::string& file);

// One difference of a node from its kind: "port mlx5_1:1 missing", "gpu 0000:18:00.0 pcie_width 8 (kind: 16)".
struct ExpectDifference {
  Aspect aspect = Aspect::counts;
  report::Status status = report::Status::warn;  // fail: missing or degraded hardware; warn: the rest
  std::string line;
  report::Evidence evidence;  // source "FILE: KIND: aspect: key", observed, expected
};
std::vector<ExpectDifference> expect_differences(const KindExpectation& kind, const NodeFacts& node, const std::string& file);

// One expect.<aspect> finding per aspect for the node: fail for missing or degraded hardware,
// warn for versions and settings that differ, pass when it matches, skip when its kind is not
// in the expectations. expect.measured only where the kind has measured entries.
std::vector<report::Finding> judge_expectations(const Expectations& e, const NodeFacts& node);

// fleet --expect: every node report judged as check --expect judges the node (its expect.*
// findings replaced by these, so fleet.node_failures and fleet.drain see them), and
// fleet.expect: the nodes grouped by what differs ("gpu[0004,0011]: port mlx5_1:1 missing").
// `measured`: the analyze reports given beside them (the measured aspect).
report::Finding judge_fleet(const Expectations& e, std::vector<NodeReport>& nodes, std::span<const NodeReport> measured = {});

}  // namespace perfgap::fleet
