#include <gtest/gtest.h>

#include <algorithm>
#include <pugixml.hpp>
#include <regex>
#include <sstream>
#include <tuple>

#include "fleet/aggregate.hpp"
#include "fleet/measured.hpp"
#include "fleet/reader.hpp"
#include "fleet/text_view.hpp"
#include "fleet_gen.hpp"
#include "report/render.hpp"

namespace perfgap::fleet {
namespace {

using report::Status;

NodeReport node(const fleetgen::NodeSpec& spec, bool details = false) {
  ReportReader r;
  auto n = r.parse(fleetgen::report_json(spec), {.findings = details, .details = details});
  EXPECT_TRUE(n) << n.error();
  n->file = spec.name + ".json";
  return std::move(*n);
}

std::vector<NodeReport> fleet_of(std::size_t count, const std::function<void(std::size_t, fleetgen::NodeSpec&)>& tweak = {}) {
  std::vector<NodeReport> v;
  for (std::size_t i = 1; i <= count; ++i) {
    fleetgen::NodeSpec s;
    s.name = fleetgen::node_name(i, 3, "n");
    s.seed = i;
    if (tweak) tweak(i, s);
    v.push_back(node(s));
  }
  return v;
}

TEST(FleetDrift, GroupsNodesByValueMajorityFirst) {
  auto nodes = fleet_of(20, [](std::size_t i, fleetgen::NodeSpec& s) {
    if (i == 3 || i == 4 || i == 9) s.kernel = "6.8.0-47-generic";
    if (i == 12) s.environment["NCCL_IB_QPS_PER_CONNECTION"] = "1";
    if (i == 13) s.nccl_conf["NCCL_IB_TIMEOUT"] = "";  // removed: unset on that node
  });
  auto d = drift(nodes);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].subject, "kernel");
  EXPECT_EQ(d[0].status, Status::warn);
  ASSERT_EQ(d[0].evidence.size(), 2u);
  EXPECT_EQ(d[0].evidence[0].observed, "6.8.0-45-generic on 17 nodes: n[001-002,005-008,010-020]");
  EXPECT_EQ(d[0].evidence[1].observed, "6.8.0-47-generic on 3 nodes: n[003-004,009]");
  EXPECT_EQ(d[0].evidence[1].expected, "6.8.0-45-generic");
  EXPECT_EQ(d[1].subject, "environment.NCCL_IB_QPS_PER_CONNECTION");
  EXPECT_EQ(d[1].evidence[1].observed, "1 on 1 node: n012");
  EXPECT_EQ(d[2].subject, "nccl_conf.NCCL_IB_TIMEOUT");
  EXPECT_EQ(d[2].evidence[1].observed, "(unset) on 1 node: n013");
}

TEST(FleetDrift, SettingNotReportedSomewhereIsNotDrift) {
  auto nodes = fleet_of(6, [](std::size_t i, fleetgen::NodeSpec& s) {
    if (i == 2) s.settings["governor"] = "";  // not readable there (a VM)
  });
  auto d = drift(nodes);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].status, Status::pass);
  auto one = drift({nodes[0]});
  EXPECT_EQ(one[0].status, Status::skip);
}

// A setting the fleet mostly gets wrong: the node check judging it (cpu.governor) warns on the
// most common value and passes on another, so the value to aim for is the passing one.
TEST(FleetDrift, TheValueItsCheckPassesIsExpectedNotTheMostCommonOne) {
  auto nodes = fleet_of(6, [](std::size_t i, fleetgen::NodeSpec& s) {
    if (i <= 4) {
      s.settings["governor"] = "powersave";
      s.status["cpu.governor"] = "warn";
    }
  });
  auto d = drift(nodes);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].subject, "settings.governor");
  EXPECT_NE(d[0].title.find("differ from performance, the value cpu.governor passes on 2 nodes"), std::string::npos) << d[0].title;
  ASSERT_EQ(d[0].evidence.size(), 2u);
  EXPECT_EQ(d[0].evidence[0].observed, "performance on 2 nodes: n[005-006] (cpu.governor passes there)");
  EXPECT_FALSE(d[0].evidence[0].expected);
  EXPECT_EQ(d[0].evidence[1].observed, "powersave on 4 nodes: n[001-004] (cpu.governor warns or fails there)");
  EXPECT_EQ(d[0].evidence[1].expected, "performance");
  EXPECT_NE(d[0].fix.find("Set settings.governor to performance"), std::string::npos) << d[0].fix;

  // Where the check passes both values, neither value's nodes are told to change: the machines
  // differ, and the finding passes naming both.
  auto agreed = fleet_of(6, [](std::size_t i, fleetgen::NodeSpec& s) {
    if (i <= 4) s.settings["governor"] = "powersave";
  });
  auto a = drift(agreed);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].status, Status::pass) << a[0].title;
  EXPECT_FALSE(a[0].evidence[0].expected);
  EXPECT_FALSE(a[0].evidence[1].expected);
  EXPECT_NE(a[0].title.find("cpu.governor passes with each where it ran (powersave, performance)"), std::string::npos) << a[0].title;

  // Where the check was run on no node, the most common value stays expected.
  auto unjudged = fleet_of(6, [](std::size_t i, fleetgen::NodeSpec& s) {
    if (i <= 4) s.settings["governor"] = "powersave";
    s.status["cpu.governor"] = "skip";
  });
  auto u = drift(unjudged);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].evidence[1].expected, "powersave");
  EXPECT_NE(u[0].title.find("most common value powersave"), std::string::npos) << u[0].title;
}

// Field review 5: over the field trees, C2 and C6 tie at 4 nodes each and cpu.cstate.deep_idle
// passes on both, yet "C6 ... (cpu.cstate.deep_idle passes there) (expected C2)" and the fix "Set
// settings.deepest_idle_state to C2 on the other nodes"; acpi_idle on AMD nodes where the check
// passes was told "(expected intel_idle)". A node its check passes on is never told to change;
// only the values it fails on are drift, and a tie is no expected value.
TEST(FleetDrift, ANodeItsCheckPassesOnIsNeverToldToChange) {
  auto nodes = fleet_of(9, [](std::size_t i, fleetgen::NodeSpec& s) {
    s.settings["deepest_idle_state"] = i <= 4 ? "C2" : i <= 8 ? "C6" : "C1";
    s.settings["idle_driver"] = i <= 4 ? "acpi_idle" : "intel_idle";
    if (i == 9) s.status["cpu.cstate.deep_idle"] = "fail";
  });
  auto d = drift(nodes);
  ASSERT_EQ(d.size(), 2u);
  const auto& state = d[0];
  EXPECT_EQ(state.subject, "settings.deepest_idle_state");
  EXPECT_EQ(state.status, Status::warn);
  EXPECT_EQ(state.title,
            "1 of 9 nodes has a value cpu.cstate.deep_idle warns or fails on (C1 on 1 node); it passes with C2, C6 (3 values)");
  ASSERT_EQ(state.evidence.size(), 3u);
  EXPECT_EQ(state.evidence[0].observed, "C2 on 4 nodes: n[001-004] (cpu.cstate.deep_idle passes there)");
  EXPECT_FALSE(state.evidence[0].expected);
  EXPECT_EQ(state.evidence[1].observed, "C6 on 4 nodes: n[005-008] (cpu.cstate.deep_idle passes there)");
  EXPECT_FALSE(state.evidence[1].expected);
  EXPECT_EQ(state.evidence[2].observed, "C1 on 1 node: n009 (cpu.cstate.deep_idle warns or fails there)");
  EXPECT_EQ(state.evidence[2].expected, "a value cpu.cstate.deep_idle passes with (here: C2, C6)");
  EXPECT_EQ(state.fix.find("Set settings.deepest_idle_state to"), std::string::npos) << state.fix;
  EXPECT_NE(state.fix.find("(n009)"), std::string::npos) << state.fix;
  EXPECT_EQ(state.metrics.at(1), (std::pair<std::string, double>{"nodes_off_majority", 1}));
  // The driver: intel_idle passes on 4 of its 5 nodes (n009 fails for its C-state), acpi_idle on
  // all of its: no value fails everywhere, nothing to change.
  const auto& driver = d[1];
  EXPECT_EQ(driver.subject, "settings.idle_driver");
  EXPECT_EQ(driver.status, Status::pass) << driver.title;
  for (const auto& e : driver.evidence) EXPECT_FALSE(e.expected) << e.observed;
  EXPECT_EQ(driver.evidence[0].observed,
            "intel_idle on 5 nodes: n[005-009] (cpu.cstate.deep_idle passes on 4 of them, warns or fails on n009)");

  // Without C1, the two passing values tie: drift passes, no node told to change.
  nodes.pop_back();
  auto tie = drift(nodes);
  ASSERT_FALSE(tie.empty());
  EXPECT_EQ(tie[0].subject, "settings.deepest_idle_state");
  EXPECT_EQ(tie[0].status, Status::pass) << tie[0].title;
  for (const auto& e : tie[0].evidence) EXPECT_FALSE(e.expected) << e.observed;
}

TEST(FleetOutliers, NamesNodeMetricValueAndMedian) {
  auto nodes = fleet_of(30, [](std::size_t i, fleetgen::NodeSpec& s) {
    if (i == 7) s.metrics["pcie.link.link_width@0000:3a:00.0"] = 8;  // MAD 0 path
    if (i == 7) s.status["pcie.link"] = "warn";
    if (i == 11) s.metrics["cpu.steal.steal_pct"] = 9.5;              // modified z path
    if (i == 11) s.status["cpu.steal"] = "warn";
  });
  auto o = outliers(nodes, {});
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].subject, "n007");
  EXPECT_EQ(o[0].evidence[0].source, "pcie.link.link_width@0000:3a:00.0");
  EXPECT_EQ(o[0].evidence[0].observed, "8");
  EXPECT_EQ(o[0].evidence[0].expected, "16 (median of 30 nodes; MAD 0)");
  EXPECT_EQ(o[1].subject, "n011");
  EXPECT_EQ(o[1].evidence[0].source, "cpu.steal.steal_pct");
  EXPECT_NE(o[1].evidence[0].observed.find("modified z"), std::string::npos);
  EXPECT_NE(o[1].title.find("fleet median"), std::string::npos);
}

// Field reports: one node's cpu.steal.steal_pct 0.006 among nodes at 0 (MAD 0) was flagged
// against a check limit of 2%; under one percentage point is no outlier.
TEST(FleetOutliers, NegligiblePercentOverZeroMedianIsNoOutlier) {
  auto nodes = fleet_of(12, [](std::size_t i, fleetgen::NodeSpec& s) {
    s.metrics["cpu.steal.steal_pct"] = i == 3 ? 0.006 : 0.0;
  });
  auto o = outliers(nodes, {});
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].status, Status::pass) << o[0].title;
}

// Field review 5: WARN fleet.outliers on healthy values: container.shm.shm_gib 251.3 (median 15.5),
// deepest_latency_us 8800 (median 133), cpu.steal.max_cpu_steal_pct where cpu.steal passes. Only
// the bad side of a metric whose direction is known is flagged (compare's table, which fleet.pace
// reads too), and a value whose own check passes is said as information, not a WARN.
TEST(FleetOutliers, OnlyTheBadSideOfAFailingCheckIsAnOutlier) {
  auto nodes = fleet_of(12, [](std::size_t i, fleetgen::NodeSpec& s) {
    s.metrics["cpu.steal.steal_pct"] = i == 3 || i == 4 ? 9.5 : 0.0;  // high steal: the bad side
    if (i == 4) s.status["cpu.steal"] = "warn";
    if (i == 5) s.metrics["pcie.link.link_width@0000:3a:00.0"] = 32;  // direction not known, check passes
    if (i == 6) s.metrics["net.ib.ports.rate_gbps@mlx5_0:1"] = 800;   // faster than the fleet: the good side
    if (i == 6) s.status["net.ib.ports"] = "warn";
  });
  auto o = outliers(nodes, {});
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].status, Status::warn);
  EXPECT_EQ(o[0].subject, "n004");
  ASSERT_EQ(o[0].evidence.size(), 1u);
  EXPECT_EQ(o[0].evidence[0].source, "cpu.steal.steal_pct");
  // n003's steal (cpu.steal passes there) and n005's link width: information.
  EXPECT_EQ(o[1].status, Status::pass);
  EXPECT_EQ(o[1].subject, "");
  ASSERT_EQ(o[1].evidence.size(), 2u) << o[1].title;
  EXPECT_EQ(o[1].evidence[0].source, "cpu.steal.steal_pct");
  EXPECT_NE(o[1].evidence[0].observed.find("n003: 9.5"), std::string::npos) << o[1].evidence[0].observed;
  EXPECT_NE(o[1].evidence[1].observed.find("n005: 32"), std::string::npos) << o[1].evidence[1].observed;
  EXPECT_NE(o[1].evidence[1].observed.find("pcie.link passes there"), std::string::npos) << o[1].evidence[1].observed;
}

TEST(FleetOutliers, NoOutlierPassesAndTooFewNodesSkips) {
  auto nodes = fleet_of(10);
  auto o = outliers(nodes, {});
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].status, Status::pass) << o[0].title;
  auto few = outliers(fleet_of(4), {});
  EXPECT_EQ(few[0].status, Status::skip);
  // Per-process metrics (pid subjects) are never compared across nodes.
  NodeFinding f;
  f.id = "numa.remote_memory";
  f.subject = "pid:4242";
  EXPECT_EQ(metric_key(f, "remote_pct"), "");
  f.subject = "mlx5_0:1";
  EXPECT_EQ(metric_key(f, "rate_gbps"), "numa.remote_memory.rate_gbps@mlx5_0:1");
}

TEST(FleetFailures, GroupsByFailingIdsAndNewestDuplicateWins) {
  auto nodes = fleet_of(5, [](std::size_t i, fleetgen::NodeSpec& s) {
    if (i == 2 || i == 4) s.status["cpu.governor"] = "fail";
  });
  fleetgen::NodeSpec old;
  old.name = "n002";
  old.generated_at = "2026-11-29T12:00:00Z";
  nodes.push_back(node(old));  // older and passing: superseded by the failing, newer one
  nodes.back().file = "old/n002.json";
  auto fl = dedupe_nodes(std::move(nodes));
  ASSERT_EQ(fl.nodes.size(), 5u);
  ASSERT_EQ(fl.superseded.size(), 1u);
  EXPECT_EQ(fl.superseded[0].dropped_file, "old/n002.json");
  auto f = node_failures(fl);
  EXPECT_EQ(f.status, Status::fail);
  EXPECT_EQ(f.evidence[0].source, "n[002,004]");
  EXPECT_EQ(f.evidence[0].observed, "cpu.governor (2 nodes)");
  EXPECT_EQ(f.evidence.back().source, "old/n002.json");
  EXPECT_NE(f.evidence.back().observed.find("n002.json has the newer report"), std::string::npos) << f.evidence.back().observed;
}

// Found over 30 field trees: two trees named "fsroot" after their folder (a laptop and a
// 64-core server) were one node, one of them dropped with a line in fleet.node_failures.
// Different machines under one name stay two nodes, and fleet.node_names says so; another
// report of the same machine (or one that does not say its machine) is still deduplicated.
TEST(FleetNodeNames, DifferentMachinesSharingANameAreKeptApart) {
  std::vector<NodeReport> v = fleet_of(3);
  auto add = [&](const std::string& cpu, const std::string& at, const std::string& file) {
    fleetgen::NodeSpec s;
    s.name = "fsroot";
    s.generated_at = at;
    s.settings["cpu_model"] = cpu;
    v.push_back(node(s));
    v.back().file = file;
  };
  add("Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz", "2026-11-30T12:00:00Z", "laptop.json");
  add("AMD EPYC 7702P 64-Core Processor", "2026-11-29T12:00:00Z", "server.json");
  add("Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz", "2026-11-28T12:00:00Z", "laptop-old.json");
  add("unknown", "2026-11-27T12:00:00Z", "nameless.json");
  auto fl = dedupe_nodes(std::move(v));
  ASSERT_EQ(fl.nodes.size(), 5u);
  EXPECT_EQ(fl.nodes[0].name, "fsroot");
  EXPECT_EQ(fl.nodes[0].file, "laptop.json");
  EXPECT_EQ(fl.nodes[1].name, "fsroot#2");
  EXPECT_EQ(fl.nodes[1].file, "server.json");
  ASSERT_EQ(fl.superseded.size(), 2u);  // the laptop's older report and the one that says no machine
  ASSERT_EQ(fl.clashes.size(), 1u);
  auto f = node_names(fl);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].status, Status::warn);
  EXPECT_EQ(f[0].subject, "fsroot");
  EXPECT_EQ(f[0].title, "2 different machines report the node name fsroot: kept apart as fsroot, fsroot#2, not deduplicated");
  ASSERT_EQ(f[0].evidence.size(), 2u);
  EXPECT_EQ(f[0].evidence[1].source, "server.json");
  EXPECT_NE(f[0].evidence[1].observed.find("fsroot#2 (cpu_model AMD EPYC 7702P"), std::string::npos) << f[0].evidence[1].observed;
  auto all = aggregate(fl, {}, {});
  EXPECT_TRUE(std::any_of(all.begin(), all.end(), [](const report::Finding& x) { return x.id == "fleet.node_names"; }));
  // One machine's reports: no finding.
  EXPECT_TRUE(node_names(dedupe_nodes(fleet_of(3))).empty());
}

TEST(FleetHeatmap, OneRowPerFailingSetWithItsCountHealthyLast) {
  // 200 nodes, three failing sets: the map has four rows, not 200.
  auto fl = dedupe_nodes(fleet_of(200, [](std::size_t i, fleetgen::NodeSpec& s) {
    if (i % 10 == 0) s.status["cpu.governor"] = "fail";
    if (i % 25 == 0) s.status["net.ib.ports"] = "fail";
    if (i == 7) s.status["numa.balancing"] = "warn";
  }));
  auto c = status_heatmap(fl);
  ASSERT_GE(c.columns.size(), 2u);
  EXPECT_EQ(c.columns[0], "cpu.governor") << "the id failing on most nodes first";
  EXPECT_EQ(c.columns[1], "net.ib.ports");
  ASSERT_EQ(c.rows.size(), 4u);
  ASSERT_EQ(c.cells.size(), 4u);
  EXPECT_EQ(c.rows[0], "4 nodes: n[050,100,150,200]") << "both ids first";
  EXPECT_EQ(c.cells[0][0], Status::fail);
  EXPECT_EQ(c.cells[0][1], Status::fail);
  EXPECT_EQ(c.rows[1].substr(0, 9), "16 nodes:") << "then the larger one-id group";
  EXPECT_EQ(c.rows[2], "4 nodes: n[025,075,125,175]");
  EXPECT_EQ(c.rows[3].substr(0, 10), "176 nodes:") << "the healthy nodes last, one row";
  EXPECT_EQ(c.cells[3][0], Status::pass);
  // A warning inside a group shows as the group's worst status of that id.
  auto numa = std::find(c.columns.begin(), c.columns.end(), "numa.balancing") - c.columns.begin();
  EXPECT_EQ(c.cells[3][static_cast<std::size_t>(numa)], Status::warn);
  EXPECT_NE(c.title.find("200 nodes in 4 groups"), std::string::npos) << c.title;
}

TEST(FleetHeatmap, StandingsPutTheWorstNodesFirst) {
  auto fl = dedupe_nodes(fleet_of(8, [](std::size_t i, fleetgen::NodeSpec& s) {
    if (i == 3) s.status["numa.balancing"] = "warn";
    if (i == 5) s.status["cpu.governor"] = "fail";
    if (i == 6) s.status["cpu.governor"] = "fail", s.status["nccl.gdr"] = "error";
  }));
  auto st = node_standings(fl);
  ASSERT_EQ(st.size(), 8u);
  EXPECT_EQ(st[0].name, "n006");
  EXPECT_EQ(st[0].worst, Status::fail);
  EXPECT_EQ(st[0].failing, (std::vector<std::string>{"cpu.governor", "nccl.gdr"}));
  EXPECT_EQ(st[1].name, "n005");
  EXPECT_EQ(st[2].name, "n003");
  EXPECT_EQ(st[2].worst, Status::warn);
  EXPECT_EQ(st[2].warning, (std::vector<std::string>{"numa.balancing"}));
  EXPECT_EQ(st[3].worst, Status::pass);
  EXPECT_EQ(st[3].name, "n001") << "healthy nodes keep the fleet's order (by name)";
}

// A fleet of every kind of finding, rendered for the machines around it.
struct Rendered {
  Fleet fleet;
  std::vector<report::Finding> findings;
  std::vector<report::NodeSection> sections;
};

Rendered rendered() {
  Rendered r;
  std::vector<NodeReport> v;
  for (std::size_t i = 1; i <= 6; ++i) {
    fleetgen::NodeSpec s;
    s.name = fleetgen::node_name(i, 3, i == 6 ? "odd<&\"node" : "n");
    if (i == 2) s.status["cpu.governor"] = "fail", s.status["nccl.gdr"] = "error", s.status["numa.balancing"] = "warn";
    v.push_back(node(s, true));
  }
  r.fleet = dedupe_nodes(std::move(v));
  r.findings = aggregate(r.fleet, {{"bad.json", "truncated JSON"}}, {});
  for (const auto& n : r.fleet.nodes) r.sections.push_back({n.name, n.generated_at, n.generated_unix, &n.report_findings});
  r.sections.push_back({"fleet", "2026-11-30T12:00:00Z", 1796040000, &r.findings});
  return r;
}

TEST(FleetRender, JunitIsWellFormedWithASuitePerNode) {
  auto r = rendered();
  auto xml = report::render_junit(r.sections);
  pugi::xml_document doc;
  auto ok = doc.load_string(xml.c_str());
  ASSERT_TRUE(ok) << ok.description() << " at " << ok.offset;
  auto suites = doc.child("testsuites");
  std::size_t n = 0, failures = 0, errors = 0, cases = 0;
  for (auto s : suites.children("testsuite")) {
    ++n;
    for (auto c : s.children("testcase")) {
      ++cases;
      EXPECT_FALSE(std::string(c.attribute("classname").value()).empty());
      failures += !c.child("failure").empty();
      errors += !c.child("error").empty();
    }
    EXPECT_EQ(std::to_string(std::distance(s.children("testcase").begin(), s.children("testcase").end())),
              s.attribute("tests").value());
  }
  EXPECT_EQ(n, 7u);  // 6 nodes and the fleet
  EXPECT_EQ(failures, 2u);  // n002's cpu.governor and fleet.node_failures
  EXPECT_EQ(errors, 2u);    // n002's nccl.gdr and fleet.unreadable
  auto odd = suites.find_child_by_attribute("testsuite", "name", "perfgap odd<&\"node006");
  ASSERT_FALSE(odd.empty());
  EXPECT_STREQ(odd.child("testcase").attribute("classname").value(), "odd<&\"node006");
  auto fleet = suites.find_child_by_attribute("testsuite", "name", "perfgap fleet");
  ASSERT_FALSE(fleet.empty());
  EXPECT_FALSE(fleet.find_child_by_attribute("testcase", "name", "fleet.unreadable bad.json").child("error").empty());
}

TEST(FleetRender, PrometheusLinesFollowTheTextfileFormat) {
  auto r = rendered();
  r.sections.back().name = "";
  auto text = report::render_prometheus(r.sections);
  std::istringstream in(text);
  std::string line;
  const std::regex sample(R"(^perfgap_(finding|findings|metric|last_run_timestamp_seconds)\{([a-z_]+="([^"\\]|\\.)*",?)+\} ([-+]?[0-9.e+-]+|NaN|[-+]Inf)$)");
  std::map<std::string, int> help, type;
  std::size_t samples = 0;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) ++help[line.substr(7, line.find(' ', 7) - 7)];
    else if (line.rfind("# TYPE ", 0) == 0) ++type[line.substr(7, line.find(' ', 7) - 7)];
    else {
      EXPECT_TRUE(std::regex_match(line, sample)) << line;
      ++samples;
    }
  }
  for (auto name : {"perfgap_finding", "perfgap_findings", "perfgap_metric", "perfgap_last_run_timestamp_seconds"}) {
    EXPECT_EQ(help[name], 1) << name;
    EXPECT_EQ(type[name], 1) << name;
  }
  EXPECT_NE(text.find("perfgap_finding{node=\"n002\",id=\"cpu.governor\",layer=\"cpu-power\",subject=\"\",status=\"fail\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("perfgap_findings{node=\"odd<&\\\"node006\",status=\"pass\"}"), std::string::npos);
  EXPECT_NE(text.find("perfgap_finding{node=\"\",id=\"fleet.node_failures\",layer=\"fleet\",subject=\"\",status=\"fail\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("perfgap_last_run_timestamp_seconds{node=\"n001\"} 1796040000\n"), std::string::npos);
  EXPECT_NE(text.find("perfgap_metric{node=\"\",id=\"fleet.node_failures\",subject=\"\",metric=\"failing_nodes\"} 1\n"), std::string::npos);
  // Each family's samples are contiguous (the format requires it).
  EXPECT_LT(text.rfind("perfgap_finding{"), text.find("# HELP perfgap_findings "));
}

TEST(FleetRender, TextFitsAndNamesFailingNodes) {
  auto r = rendered();
  TextViewOptions o;
  o.width = 80;
  auto text = render_fleet_text(r.fleet, {.unreadable = 1}, r.findings, o);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) EXPECT_LE(line.size(), 80u) << line;
  EXPECT_NE(text.find("perfgap fleet: FAIL  6 nodes from 7 reports (1 unreadable)"), std::string::npos) << text;
  EXPECT_NE(text.find("  n002 (1)  cpu.governor\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("\x1b["), std::string::npos);
  o.color = true;
  EXPECT_NE(render_fleet_text(r.fleet, {.unreadable = 1}, r.findings, o).find("\x1b[1;31m"), std::string::npos);
}

}  // namespace
}  // namespace perfgap::fleet

namespace perfgap::fleet {
namespace {

NodeReport hw_node(std::string name, std::vector<std::tuple<std::string_view, Status, std::string>> findings) {
  NodeReport n;
  n.name = std::move(name);
  for (auto& [id, st, subject] : findings) n.findings.push_back({id, "gpu", st, subject, 0, 0});
  return n;
}

TEST(FleetHardware, GroupsNodesByEventAndNamesTheNodesToDrain) {
  std::vector<NodeReport> nodes = {
      hw_node("gpu001", {{"gpu.xid", Status::pass, ""}, {"net.link_flaps", Status::pass, ""}}),
      hw_node("gpu002", {{"gpu.xid", Status::fail, "0000:af:00.0"}, {"net.link_flaps", Status::pass, ""}}),
      hw_node("gpu003", {{"gpu.xid", Status::fail, "0000:af:00.0"}, {"net.link_flaps", Status::fail, "0000:ae:00.0"}}),
      hw_node("gpu004", {{"gpu.xid", Status::warn, "0000:18:00.0"}, {"net.ib.counters", Status::warn, "mlx5_1:1"}}),
  };
  auto hw = hardware(nodes);
  ASSERT_EQ(hw.size(), 3u);
  EXPECT_EQ(hw[0].subject, "gpu.xid");
  EXPECT_EQ(hw[0].status, Status::fail);
  EXPECT_EQ(hw[0].title, "gpu.xid: 3 nodes (2 failing, 1 warning)");
  ASSERT_EQ(hw[0].evidence.size(), 2u);
  EXPECT_EQ(hw[0].evidence[0].source, "gpu[002-003]");
  EXPECT_EQ(hw[0].evidence[0].observed, "fail: 0000:af:00.0");
  EXPECT_EQ(hw[0].evidence[1].source, "gpu004");
  EXPECT_EQ(hw[1].subject, "net.link_flaps");
  EXPECT_EQ(hw[2].subject, "net.ib.counters");
  EXPECT_EQ(hw[2].status, Status::warn);

  auto d = drain(nodes);
  EXPECT_EQ(d.status, Status::fail);
  EXPECT_EQ(d.title, "drain 2 nodes: gpu[002-003]");
  ASSERT_EQ(d.evidence.size(), 2u);
  EXPECT_EQ(d.evidence[0].source, "gpu002");
  EXPECT_EQ(d.evidence[0].observed, "gpu.xid@0000:af:00.0");
  EXPECT_EQ(d.evidence[1].observed, "gpu.xid@0000:af:00.0, net.link_flaps@0000:ae:00.0");
  EXPECT_NE(d.fix.find("scontrol update nodename=gpu[002-003] state=drain"), std::string::npos) << d.fix;

  std::vector<NodeReport> clean = {nodes[0]};
  EXPECT_EQ(hardware(clean).at(0).status, Status::pass);
  EXPECT_EQ(drain(clean).status, Status::pass);
  std::vector<NodeReport> old = {hw_node("gpu009", {{"cpu.governor", Status::fail, ""}})};
  EXPECT_EQ(hardware(old).at(0).status, Status::skip);
  EXPECT_EQ(drain(old).status, Status::skip);
}

// Checked without root (dmesg_restrict, no RDMA device readable): every hardware check skipped.
// The fleet says it read nothing rather than "no node reports hardware events"; where only some
// nodes read nothing, the pass names them and says it speaks for the others.
TEST(FleetHardware, NodesThatReadNoHardwareSourceAreNotCalledClean) {
  const auto skipped = [](std::string name) {
    return hw_node(std::move(name), {{"gpu.xid", Status::skip, ""}, {"kernel.edac", Status::skip, ""}, {"net.ib.counters", Status::skip, ""}});
  };
  std::vector<NodeReport> blind = {skipped("gpu001"), skipped("gpu002")};
  auto hw = hardware(blind);
  ASSERT_EQ(hw.size(), 1u);
  EXPECT_EQ(hw[0].status, Status::skip);
  EXPECT_NE(hw[0].title.find("no node read the hardware sources"), std::string::npos) << hw[0].title;
  EXPECT_EQ(drain(blind).status, Status::skip);

  std::vector<NodeReport> mixed = {hw_node("gpu001", {{"gpu.xid", Status::pass, ""}, {"net.ib.counters", Status::skip, ""}}), skipped("gpu002"),
                                   skipped("gpu003")};
  hw = hardware(mixed);
  ASSERT_EQ(hw.size(), 1u);
  EXPECT_EQ(hw[0].status, Status::pass);
  EXPECT_EQ(hw[0].title, "no hardware events or RDMA port errors on the 1 node that read them; 2 nodes read none: gpu[002-003]");
  bool xid_named = false;
  for (const auto& e : hw[0].evidence) xid_named = xid_named || (e.source == "gpu.xid" && e.observed == "not read on 2 nodes (skipped there): gpu[002-003]");
  EXPECT_TRUE(xid_named);
  EXPECT_EQ(drain(mixed).title, "no node to drain for hardware among the 1 node judged; 2 nodes read no hardware source (not judged): gpu[002-003]");
}

// Reports whose kernel was not read and whose environment held no NCCL_/UCX_ variable: drift
// names what it compared, not a kernel nobody reported.
TEST(FleetDrift, PassNamesOnlyWhatWasCompared) {
  auto nodes = fleet_of(4, [](std::size_t, fleetgen::NodeSpec& s) {
    s.kernel = "";
    s.environment["NCCL_IB_QPS_PER_CONNECTION"] = "";
    s.environment["NCCL_DEBUG"] = "";
  });
  for (auto& n : nodes) n.environment.clear(), n.nccl_conf.clear();
  auto d = drift(nodes);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].status, Status::pass);
  EXPECT_EQ(d[0].title.find("the kernel"), std::string::npos) << d[0].title;
  EXPECT_NE(d[0].title.find("settings match on all 4 nodes"), std::string::npos) << d[0].title;
  ASSERT_FALSE(d[0].evidence.empty());
  EXPECT_EQ(d[0].evidence.back().observed, "the kernel, NCCL_/UCX_ variables: no node reported them (not read there, or none set in the environment checked)");
}

}  // namespace
}  // namespace perfgap::fleet

namespace perfgap::fleet {
namespace {

NodeReport informational_node(std::string name, std::vector<std::tuple<std::string_view, std::string_view, Status>> findings) {
  NodeReport n;
  n.name = std::move(name);
  n.kind = "root";
  for (auto& [id, layer, st] : findings) n.findings.push_back({id, layer, st, "", 0, 0});
  return n;
}

// A node whose checks all skipped but for the informational summaries (virt.hypervisor names the
// hypervisor, container.detect the runtime: they judge nothing) was not examined: it decided
// nothing, and its layers show skip, not ok.
TEST(FleetHeatmap, InformationalPassesAloneLeaveANodeNotExamined) {
  std::vector<NodeReport> v;
  v.push_back(informational_node("n001", {{"virt.hypervisor", "virtualization", Status::pass},
                                          {"smmu.cmdqv", "virtualization", Status::pass},
                                          {"container.detect", "runtime-topology", Status::pass},
                                          {"container.shm", "runtime-topology", Status::pass}}));
  v.push_back(informational_node("n002", {{"virt.hypervisor", "virtualization", Status::pass},
                                          {"smmu.cmdqv", "virtualization", Status::skip},
                                          {"container.detect", "runtime-topology", Status::pass},
                                          {"container.shm", "runtime-topology", Status::skip}}));
  auto fl = dedupe_nodes(std::move(v));
  const auto st = node_standings(fl);
  ASSERT_EQ(st.size(), 2u);
  for (const auto& s : st) {
    EXPECT_EQ(s.worst, Status::pass) << s.name;
    EXPECT_EQ(s.decided, s.name == "n001" ? 2u : 0u) << s.name;
    EXPECT_EQ(s.barely_examined(), s.name == "n002") << s.name;
  }
  TextViewOptions o;
  o.width = 200;
  const auto text = render_fleet_text(fl, {}, aggregate(fl, {}, {}), o);
  std::istringstream in(text);
  std::string line, n001, n002;
  while (std::getline(in, line)) {
    if (line.ends_with("n001")) n001 = line;
    if (line.ends_with("n002")) n002 = line;
  }
  EXPECT_NE(n001.find("ok"), std::string::npos) << text;
  EXPECT_EQ(n002.find("ok"), std::string::npos) << text;
  EXPECT_NE(n002.find("skip"), std::string::npos) << text;
}

// profile.iterations says how iterations were found and judges nothing: its pass is no verdict
// for fleet.measured to count ("passes in 1 of 1 measurement reports"); steps.gap's is.
TEST(FleetMeasured, AnInformationalPassIsNoVerdictToCount) {
  auto profile = informational_node("", {{"profile.summary", "workload", Status::pass}, {"profile.iterations", "workload", Status::pass}});
  auto steps = informational_node("", {{"steps.gap", "workload", Status::pass}});
  profile.kind = steps.kind = "analyze";
  profile.file = "rank0.json";
  steps.file = "steps.json";
  const auto v = measurement_verdicts({profile, steps});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].subject, "steps.gap");
  EXPECT_EQ(v[0].status, Status::pass);
}

}  // namespace
}  // namespace perfgap::fleet
