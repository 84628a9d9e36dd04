// The fleet findings of shared/spec/checks.md: pure functions from node reports to findings.
#pragma once

#include <string>
#include <vector>

#include "fleet/inputs.hpp"
#include "fleet/reader.hpp"
#include "fleet/stats.hpp"
#include "report/model.hpp"
#include "report/render.hpp"

namespace perfgap::fleet {

// A report left out because another report of the same node is newer.
struct Superseded {
  std::string node;
  std::string kept_file, kept_generated_at;
  std::string dropped_file, dropped_generated_at;
};

// A node name that reports of different machines share (a fallback name: a tree without a
// hostname is named after its folder, "fsroot"): each machine kept, the later ones renamed.
struct NameClash {
  std::string name;      // the name the reports share
  std::string kept_as;   // "fsroot#2" (the first machine keeps "fsroot")
  std::string file;      // the report kept under kept_as
  std::string machine;   // what tells it apart: "cpu_model Intel(R) Core(TM) i7-8650U, arch x86_64"
  std::string first_file, first_machine;  // the report kept under `name`, and its machine
};

struct Fleet {
  std::vector<NodeReport> nodes;  // one per node.name, sorted by name
  std::vector<Superseded> superseded;
  std::vector<NameClash> clashes;
};

// The machine a report describes, as far as it tells: settings.cpu_model and node.arch
// ("cpu_model X, arch Y"; "" when it says neither). Two reports of one name are two machines
// when a field both say differs.
std::string machine_of(const NodeReport& r);

// One report per node: the newest generated_at wins (a time that does not parse counts as
// oldest); with equal times the later input wins. Reports of one node.name that describe
// different machines (a field of machine_of that both say differs) are not one node: the first machine in input
// order keeps the name, the others become NAME#2, NAME#3, ... (each still deduplicated),
// listed in `clashes` for fleet.node_names.
Fleet dedupe_nodes(std::vector<NodeReport> reports);

// fleet.node_names: one warn per name that different machines' reports share (subject: the
// name), naming each machine's report and the name it was kept under; none when no name clashes.
std::vector<report::Finding> node_names(const Fleet& fleet);

// fleet.node_failures: fail when a node has a fail finding; evidence groups the nodes by their
// set of failing ids (hostlist + ids), and names superseded duplicate reports.
report::Finding node_failures(const Fleet& fleet);
// fleet.drift: one warn per setting whose value differs across nodes (subject: kernel,
// settings.NAME, environment.NAME, nccl_conf.NAME); evidence: a group per value, the majority
// first. One pass when everything matches; skip for a single node.
std::vector<report::Finding> drift(const std::vector<NodeReport>& nodes);
// fleet.outliers: one warn per node (subject: node.name) with a metric far from the fleet's.
// Metric key: finding id + "." + metric name, + "@" + subject when the finding has one that
// names the same thing on every node (a PCI function, a port, a variable; not a pid).
std::vector<report::Finding> outliers(const std::vector<NodeReport>& nodes, const OutlierRule& rule);
// The node checks of hardware events (kernel log) and RDMA counters that fleet.hardware groups.
const std::vector<std::string_view>& hardware_ids();
// fleet.hardware: one finding per hardware id that warns or fails on some node (subject: the
// id): `fail` when a node fails it, else `warn`; evidence groups the nodes by status and the
// devices (subjects) concerned. One pass when none does; skip when no report holds these ids.
std::vector<report::Finding> hardware(const std::vector<NodeReport>& nodes);
// fleet.drain: the nodes to drain: those failing a hardware id (an Xid needing service, a GPU
// off the bus, NVLink/NVSwitch errors, uncorrected PCIe or memory errors, a flapping link,
// link errors growing on an RDMA port). `fail` naming them as a hostlist, with each node's
// reasons; `pass` when none; skip as fleet.hardware.
report::Finding drain(const std::vector<NodeReport>& nodes);
// fleet.unreadable: one error per unusable input (subject: the file).
std::vector<report::Finding> unreadable(const std::vector<Unreadable>& inputs);

// For the HTML report: groups of nodes x check ids. A row is the nodes failing the same set
// of ids (a hostlist and a count), the most failing ids first and the healthy nodes last; a
// cell is the worst status of that id over the row's nodes (fail, error, warn, pass, skip);
// ids in catalogue-free order: the most failing first.
report::Chart status_heatmap(const Fleet& fleet);
// For the HTML report: each node's worst status and failing/warning ids, the worst first.
std::vector<report::NodeStanding> node_standings(const Fleet& fleet);

// All of the above, in that order.
std::vector<report::Finding> aggregate(const Fleet& fleet, const std::vector<Unreadable>& bad, const OutlierRule& rule);

// The metric key fleet.outliers compares; empty when the finding's subject is node-specific.
std::string metric_key(const NodeFinding& f, std::string_view metric);

}  // namespace perfgap::fleet
