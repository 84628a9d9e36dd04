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

// The aspects, in report order: each is one finding id, expect.<aspect>.
enum class Aspect { counts, links, placement, versions, settings };
inline constexpr Aspect kAspects[] = {Aspect::counts, Aspect::links, Aspect::placement, Aspect::versions, Aspect::settings};
std::string_view aspect_name(Aspect a);  // "counts", ...
std::optional<Aspect> aspect_from(std::string_view name);
// "expect.counts", ...: static storage (the fleet pools ids as views).
std::string_view aspect_id(Aspect a);

// What one node's report shows, as "device attribute" keys ("port mlx5_0:1 rate_gbps",
// "gpu 0000:18:00.0 pcie_width", "gpus") to values ("400", "16", "8").
struct NodeFacts {
  std::string node;
  std::string kind;  // "NVIDIA H100 80GB HBM3 / Intel(R) Xeon(R) Platinum 8480+"
  std::map<Aspect, std::map<std::string, std::string>> facts;
  // Finding ids the report ran with a result (not only skipped): an expected key whose source
  // was read and is absent is a device missing; one whose source was not read is unknown.
  std::vector<std::string> sources_read;
};

// The node's facts from its report's parts. `kernel` and `settings` are node.kernel and node.settings.
NodeFacts gather_facts(std::string_view node, std::string_view kernel, const report::StringMap& settings,
                       std::span<const report::Finding> findings);
// The finding id a key is read from ("net.ib.ports" for "port mlx5_0:1 rate_gbps").
std::string_view source_of(Aspect a, std::string_view key);

// One learned entry with how the fleet voted.
struct Entry {
  std::string value;
  std::size_t agreed = 0, nodes = 0;                  // nodes holding the value, of nodes of the kind
  std::vector<std::pair<std::string, std::string>> others;  // nodes that did not: name, their value ("" = absent)
  bool kept = false;                                  // from the file --update kept (reviewed)
};
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
// in the expectations.
std::vector<report::Finding> judge_expectations(const Expectations& e, const NodeFacts& node);

// fleet --expect: every node report judged as check --expect judges the node (its expect.*
// findings replaced by these, so fleet.node_failures and fleet.drain see them), and
// fleet.expect: the nodes grouped by what differs ("gpu[0004,0011]: port mlx5_1:1 missing").
report::Finding judge_fleet(const Expectations& e, std::vector<NodeReport>& nodes);

}  // namespace perfgap::fleet
