// The knowledge base (core/kb.hpp): the built-in files parse and cover the catalogue, every
// malformed file is an error naming the file and the line, later files win per id.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <map>
#include <set>
#include <sstream>

#include "core/check.hpp"
#include "core/kb.hpp"

namespace fs = std::filesystem;
using perfgap::core::KbImpact;

namespace {

std::string kb_error(const std::string& text) {
  auto f = perfgap::core::parse_kb(text, "site.yaml");
  EXPECT_FALSE(f) << text;
  return f ? "" : f.error();
}

// The analyzer, fleet, sweep and compare ids of the docs' finding tables: the catalogue beyond
// the check registry (docs/CHECKS.md).
std::set<std::string> documented_ids() {
  std::set<std::string> out;
  const std::regex row(R"(^\| `([a-z_]+\.[a-z_.]+)`)");
  const std::regex in_cell(R"(`((perf|perf_stat|turbostat|numastat|nccl_tests|nccl_log|nccl_inspector|nccl_ras|steps|profile|gpu|fleet|sweep|compare|gap)\.[a-z_]+(\.[a-z_]+)*)`)");
  for (const char* doc : {"docs/ANALYZE.md", "docs/FLEET.md", "docs/SWEEP.md", "docs/GPU.md", "docs/EXPLAIN.md"}) {
    std::ifstream in(fs::path(PERFGAP_SOURCE_DIR) / doc);
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (std::regex_search(line, m, row)) out.insert(m[1]);
      for (auto it = std::sregex_iterator(line.begin(), line.end(), in_cell); it != std::sregex_iterator(); ++it)
        if ((*it)[1] != "perf.data") out.insert((*it)[1]);  // the recording's file name, not an id
    }
  }
  return out;
}

}  // namespace

TEST(CoreKb, BuiltinParsesWithEstimatesSourcesAndSymbols) {
  const auto& kb = perfgap::core::builtin_kb();
  const auto* c = kb.find("cpu.cstate.deep_idle");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->kind, KbImpact::Kind::estimated);
  EXPECT_LE(c->low_pct, 4);
  EXPECT_GE(c->high_pct, 4) << "the public case's ~4% lies in the range";
  EXPECT_EQ(c->source.kind, "public-case");
  EXPECT_NE(c->file.find("builtin:data/kb/impact.yaml:"), std::string::npos) << c->file;
  EXPECT_EQ(kb.find("nccl.gdr")->kind, KbImpact::Kind::unestimated);
  EXPECT_EQ(kb.find("steps.gap")->kind, KbImpact::Kind::not_a_cause);
  EXPECT_FALSE(kb.symbols.empty()) << "the kernel-symbol list lives in the same knowledge base";
  EXPECT_FALSE(kb.measurements.empty());
  for (const auto& [id, e] : kb.impact)
    if (e.kind == KbImpact::Kind::estimated) {
      EXPECT_FALSE(e.source.cite.empty()) << id;
      EXPECT_LT(e.high_pct, 100) << id;
    }
}

// Every catalogue id has an entry: an estimate, or an explicit unestimated / not_a_cause, so
// that explain never meets a built-in id it cannot place.
TEST(CoreKb, EveryCatalogueIdHasAnEntry) {
  const auto& kb = perfgap::core::builtin_kb();
  std::set<std::string> ids = documented_ids();
  ASSERT_GT(ids.size(), 30u) << "the docs' finding tables were not found";
  EXPECT_TRUE(ids.count("turbostat.busy_mhz") && ids.count("fleet.drift") && ids.count("compare.regressed") && ids.count("gap.budget"));
  for (const auto& c : perfgap::core::builtin_registry().all()) ids.insert(std::string(c.id));
  for (const auto& id : ids) EXPECT_NE(kb.find(id), nullptr) << id << " has no entry in data/kb/";
}

TEST(CoreKb, MalformedFilesNameFileAndLine) {
  auto e = kb_error("impact:\n  cpu.turbo: [\n");
  EXPECT_EQ(e.rfind("site.yaml:", 0), 0u) << e;
  EXPECT_NE(e.find(": not valid YAML: "), std::string::npos) << e;
  e = kb_error("impact:\n  cpu.turbo:\n    cost_pct: [5, 2]\n    source: {kind: measurement, cite: ours}\n");
  EXPECT_EQ(e.rfind("site.yaml:3:", 0), 0u) << e;
  EXPECT_NE(e.find("LOW <= HIGH"), std::string::npos) << e;
  e = kb_error("impact:\n  cpu.turbo:\n    cost_pct: [1, x]\n    source: {kind: measurement, cite: ours}\n");
  EXPECT_EQ(e.rfind("site.yaml:3:", 0), 0u) << e;
  e = kb_error("impact:\n  cpu.turbo:\n    cost_pct: [1, 2]\n");
  EXPECT_NE(e.find("needs a source"), std::string::npos) << e;
  e = kb_error("impact:\n  cpu.turbo:\n    cost_pct: [1, 2]\n    unestimated: both\n    source: {kind: measurement, cite: x}\n");
  EXPECT_NE(e.find("exactly one"), std::string::npos) << e;
  e = kb_error("impact:\n  cpu.turbo:\n    unestimated: x\n    costpct: [1, 2]\n");
  EXPECT_EQ(e.rfind("site.yaml:4: unknown key 'costpct'", 0), 0u) << e;
  e = kb_error("impact:\n  cpu.turbo: {unestimated: a}\n  cpu.turbo: {unestimated: b}\n");
  EXPECT_EQ(e, "site.yaml:3: cpu.turbo is given twice in this file");
  e = kb_error("impact:\n  Not An Id: {unestimated: a}\n");
  EXPECT_EQ(e.rfind("site.yaml:2:", 0), 0u) << e;
  e = kb_error("impact:\n  cpu.turbo: {unestimated: a, source: {kind: rumour, cite: x}}\n");
  EXPECT_NE(e.find("source.kind"), std::string::npos) << e;
  e = kb_error("measurements:\n  - name: x\n    take: y\n");
  EXPECT_NE(e.find("covered_by"), std::string::npos) << e;
  e = kb_error("- a list\n");
  EXPECT_NE(e.find("expected a mapping"), std::string::npos) << e;
  EXPECT_TRUE(perfgap::core::parse_kb("", "empty.yaml")) << "an empty file overrides nothing";
  EXPECT_TRUE(perfgap::core::parse_kb("# only a comment\n", "c.yaml"));
}

// A measurement's side (host, communication) orders explain's next measurement by what the
// reports show; the built-in host and communication measurements say theirs.
TEST(CoreKb, AMeasurementsSideIsHostOrCommunication) {
  auto f = perfgap::core::parse_kb("measurements:\n  - name: x\n    side: host\n    covered_by: [perf.*]\n    take: y\n", "site.yaml");
  ASSERT_TRUE(f) << f.error();
  ASSERT_EQ(f->measurements.size(), 1u);
  EXPECT_EQ(f->measurements[0].side, "host");
  const auto e = kb_error("measurements:\n  - name: x\n    side: gpu\n    covered_by: [perf.*]\n    take: y\n");
  EXPECT_EQ(e.rfind("site.yaml:3: x: side must be host or communication", 0), 0u) << e;
  std::map<std::string, std::string> side;
  for (const auto& m : perfgap::core::builtin_kb().measurements) side[m.name] = m.side;
  EXPECT_EQ(side["CPU kernel time"], "host");
  EXPECT_EQ(side["node configuration"], "host");
  EXPECT_EQ(side["collective bandwidth"], "communication");
  EXPECT_EQ(side["NCCL transport and topology"], "communication");
  EXPECT_EQ(side["exposed communication"], "");
}

TEST(CoreKb, LaterFilesWinPerIdAndKeepTheRest) {
  perfgap::core::Kb kb = perfgap::core::builtin_kb();
  auto f = perfgap::core::parse_kb(
      "impact:\n  cpu.cstate.deep_idle:\n    cost_pct: [7, 9]\n    source: {kind: measurement, cite: \"our cluster, 2026\"}\n"
      "  site.custom_check: {unestimated: ours}\n"
      "measurements:\n  - name: exposed communication\n    covered_by: [profile.*]\n    take: our profiler\n",
      "kb.d/site.yaml");
  ASSERT_TRUE(f) << f.error();
  const auto measurements = kb.measurements.size();
  kb.overlay(std::move(*f));
  EXPECT_EQ(kb.find("cpu.cstate.deep_idle")->low_pct, 7);
  EXPECT_EQ(kb.find("cpu.cstate.deep_idle")->file, "kb.d/site.yaml:2");
  EXPECT_EQ(kb.find("numa.remote_memory")->kind, KbImpact::Kind::estimated) << "ids the file does not name stay";
  EXPECT_NE(kb.find("site.custom_check"), nullptr);
  EXPECT_EQ(kb.measurements.size(), measurements) << "a measurement of the same name is replaced in place";
  bool replaced = false;
  for (const auto& m : kb.measurements) replaced |= m.name == "exposed communication" && m.take == "our profiler";
  EXPECT_TRUE(replaced);
}

TEST(CoreKb, DirectoriesInOrderMissingSystemDirIsNoError) {
  auto tmp = fs::temp_directory_path() / ("perfgap-kb-" + std::to_string(::getpid()));
  fs::create_directories(tmp / "a");
  fs::create_directories(tmp / "b");
  std::ofstream(tmp / "a/10-site.yaml") << "impact:\n  cpu.turbo:\n    cost_pct: [1, 2]\n    source: {kind: measurement, cite: a}\n";
  std::ofstream(tmp / "a/20-later.yaml") << "impact:\n  cpu.turbo:\n    cost_pct: [3, 4]\n    source: {kind: measurement, cite: a2}\n";
  std::ofstream(tmp / "a/notes.txt") << "not yaml: [";
  std::ofstream(tmp / "b/site.yaml") << "impact:\n  cpu.turbo:\n    cost_pct: [5, 6]\n    source: {kind: measurement, cite: b}\n";
  auto kb = perfgap::core::load_kb({{(tmp / "none").string(), true}, {(tmp / "a").string(), false}});
  ASSERT_TRUE(kb) << kb.error();
  EXPECT_EQ(kb->find("cpu.turbo")->low_pct, 3) << "files of a directory in name order, the later wins";
  kb = perfgap::core::load_kb({{(tmp / "a").string(), false}, {(tmp / "b").string(), false}});
  ASSERT_TRUE(kb) << kb.error();
  EXPECT_EQ(kb->find("cpu.turbo")->source.cite, "b") << "a later directory wins";
  auto missing = perfgap::core::load_kb({{(tmp / "none").string(), false}});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("none: cannot open directory"), std::string::npos) << missing.error();
  std::ofstream(tmp / "b/zz-symbols.yaml") << "symbols:\n  - {match: x, group: g, finding: hot_kernel, cause: c, fix: f}\n";
  auto syms = perfgap::core::load_kb({{(tmp / "b").string(), false}});
  ASSERT_FALSE(syms);
  EXPECT_NE(syms.error().find("built-in knowledge base only"), std::string::npos) << syms.error();
  std::ofstream(tmp / "b/zz-symbols.yaml") << "sxids:\n  - {code: 12028, name: x, severity: ignore, action: none}\n";
  auto sxids = perfgap::core::load_kb({{(tmp / "b").string(), false}});
  ASSERT_FALSE(sxids);
  EXPECT_NE(sxids.error().find("sxids: the SXid table comes from the built-in knowledge base only"), std::string::npos) << sxids.error();
  std::ofstream(tmp / "b/zz-symbols.yaml") << "impact:\n  cpu.turbo:\n    cost_pct: [1]\n";
  auto bad = perfgap::core::load_kb({{(tmp / "b").string(), false}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().rfind((tmp / "b/zz-symbols.yaml").string() + ":3:", 0), 0u) << bad.error();
  fs::remove_all(tmp);
}

// Root causes (data/kb/causes.yaml): every estimated id belongs to one, the ids of one cause
// resolve to it, and a new id with no membership is left to be its own cause.
TEST(CoreKb, CausesGroupEveryEstimatedId) {
  const auto& kb = perfgap::core::builtin_kb();
  ASSERT_FALSE(kb.causes.empty());
  for (const auto& [id, e] : kb.impact) {
    if (e.kind == KbImpact::Kind::estimated) {
      EXPECT_NE(kb.cause_of(id), nullptr) << id << " (estimated) belongs to no cause";
    }
  }
  for (const char* id : {"smmu.cmdqv", "perf.smmu_cmdq"}) EXPECT_EQ(kb.cause_of(id)->id, "smmu_command_queue") << id;
  for (const char* id : {"cpu.cstate.deep_idle", "turbostat.deep_idle", "turbostat.busy_mhz", "live.busy_mhz", "probe.cpu_busy_mhz"})
    EXPECT_EQ(kb.cause_of(id)->id, "cpu_cstates_turbo") << id;
  for (const char* id : {"numa.remote_memory", "numastat.remote"}) EXPECT_EQ(kb.cause_of(id)->id, "remote_numa") << id;
  for (const char* id : {"nccl.ib.qps", "nccl_tests.busbw", "profile.exposed_comm"}) EXPECT_EQ(kb.cause_of(id)->id, "collective_bandwidth") << id;
  for (const char* id : {"nccl.topo_file", "container.env_drift", "container.launcher_config", "nccl_log.topo_file"})
    EXPECT_EQ(kb.cause_of(id)->id, "topology_not_in_job") << id;
  EXPECT_EQ(kb.cause("topology_not_in_job")->absorbs, "collective_bandwidth");
  for (const char* id : {"profile.straggler", "nccl_inspector.late_rank"}) EXPECT_EQ(kb.cause_of(id)->id, "straggler_rank") << id;
  EXPECT_EQ(kb.cause_of("kernel.some_new_check"), nullptr) << "an id no cause names is its own cause";
  for (const auto& c : kb.causes) {
    EXPECT_FALSE(c.title.empty()) << c.id;
    if (!c.absorbs.empty()) {
      EXPECT_NE(kb.cause(c.absorbs), nullptr) << c.id << " absorbs an unknown cause";
    }
    // Each member in one cause only.
    for (const auto& m : c.members) EXPECT_EQ(kb.cause_of(m), &c) << m << " is in " << c.id << " and " << kb.cause_of(m)->id;
  }
}

TEST(CoreKb, CausesOverlayAndRefuseMalformedEntries) {
  auto ok = perfgap::core::parse_kb("causes:\n  site_cause:\n    title: t\n    members: [site.*]\n", "s.yaml");
  ASSERT_TRUE(ok) << ok.error();
  perfgap::core::Kb kb = perfgap::core::builtin_kb();
  kb.overlay(std::move(*ok));
  ASSERT_NE(kb.cause_of("site.own_check"), nullptr);
  EXPECT_EQ(kb.cause_of("site.own_check")->id, "site_cause");
  EXPECT_EQ(kb.cause_of("smmu.cmdqv")->id, "smmu_command_queue") << "the built-in causes stay";
  auto err = [](const std::string& y) {
    auto r = perfgap::core::parse_kb(y, "c.yaml");
    return r ? std::string() : r.error();
  };
  EXPECT_NE(err("causes:\n  x:\n    members: [a.b]\n").find("c.yaml:3: 'title' is missing"), std::string::npos) << err("causes:\n  x:\n    members: [a.b]\n");
  EXPECT_NE(err("causes:\n  x:\n    title: t\n").find("members must be a list"), std::string::npos);
  EXPECT_NE(err("causes:\n  x:\n    title: t\n    members: [a.b]\n    estimate: magic\n").find("estimate must be"), std::string::npos);
  EXPECT_NE(err("causes:\n  x:\n    title: t\n    members: [a.b]\n    estimate: remote_numa\n").find("needs the case's figures"), std::string::npos);
  EXPECT_NE(err("causes:\n  Bad:\n    title: t\n    members: [a.b]\n").find("not a cause id"), std::string::npos);
  EXPECT_NE(err("causes:\n  x:\n    title: t\n    members: [a.b]\n    colour: red\n").find("unknown key 'colour'"), std::string::npos);
  EXPECT_NE(err("causes:\n  x:\n    title: t\n    members: [a.b]\n    host: maybe\n").find("c.yaml:5: cause x: host must be true or false"), std::string::npos)
      << err("causes:\n  x:\n    title: t\n    members: [a.b]\n    host: maybe\n");
  // The host's causes, which whatif.launch bounds together (docs/EXPLAIN.md), and no other.
  std::set<std::string> host;
  for (const auto& c : perfgap::core::builtin_kb().causes)
    if (c.host) host.insert(c.id);
  EXPECT_EQ(host, (std::set<std::string>{"cpu_cstates_turbo", "housekeeping_on_training_cores", "remote_numa", "smmu_command_queue"}));
}

// The communication-kernel table (data/kb/comm_kernels.yaml): built in, with a note per entry.
TEST(CoreKb, CommKernelsBuiltinNameDeepEpAndNvshmem) {
  const auto& table = perfgap::core::builtin_kb().comm_kernels;
  ASSERT_FALSE(table.empty());
  std::set<std::string> libraries;
  for (const auto& e : table) {
    libraries.insert(e.library);
    EXPECT_FALSE(e.note.empty()) << e.match;
    EXPECT_EQ(e.file.rfind("builtin:data/kb/comm_kernels.yaml:", 0), 0u) << e.file;
  }
  for (const char* l : {"NCCL", "RCCL", "DeepEP", "NVSHMEM", "MSCCL++"}) EXPECT_TRUE(libraries.count(l)) << l;
}

TEST(CoreKb, CommKernelsParseAndMalformedEntriesNameTheLine) {
  auto f = perfgap::core::parse_kb("comm_kernels:\n  - match: \"my_ep::*\"\n    kind: expert_parallel\n    library: MyEP\n    note: ours\n", "site.yaml");
  ASSERT_TRUE(f) << f.error();
  ASSERT_EQ(f->comm_kernels.size(), 1u);
  EXPECT_EQ(f->comm_kernels[0].match, "my_ep::*");
  EXPECT_EQ(f->comm_kernels[0].kind, "expert_parallel");
  EXPECT_EQ(f->comm_kernels[0].library, "MyEP");
  EXPECT_EQ(f->comm_kernels[0].file, "site.yaml:2");
  auto e = kb_error("comm_kernels:\n  - match: x\n    kind: collective\n    library: L\n  - match: y\n    kind: broadcast\n    library: L\n");
  EXPECT_EQ(e.rfind("site.yaml:6:", 0), 0u) << e;
  EXPECT_NE(e.find("kind 'broadcast'"), std::string::npos) << e;
  e = kb_error("comm_kernels:\n  - match: x\n    kind: collective\n");
  EXPECT_EQ(e.rfind("site.yaml:2:", 0), 0u) << e;
  EXPECT_NE(e.find("'library' is missing"), std::string::npos) << e;
  e = kb_error("comm_kernels:\n  - match: \"**\"\n    kind: collective\n    library: L\n");
  EXPECT_EQ(e.rfind("site.yaml:2:", 0), 0u) << e;
  e = kb_error("comm_kernels:\n  - {match: x, kind: copy, library: L}\n  - {match: x, kind: copy, library: M}\n");
  EXPECT_EQ(e, "site.yaml:3: comm_kernels: match 'x' is given twice in this file");
  e = kb_error("comm_kernels:\n  - {match: x, kind: copy, library: L, group: g}\n");
  EXPECT_EQ(e.rfind("site.yaml:2: unknown key 'group'", 0), 0u) << e;
  e = kb_error("comm_kernels: {match: x}\n");
  EXPECT_NE(e.find("must be a list"), std::string::npos) << e;
}

// Unlike the kernel symbols, a kb.d or --kb file may add communication kernels; an entry of the
// same match replaces the earlier one where it stood.
TEST(CoreKb, CommKernelsLaterFileReplacesTheSameMatchInPlaceAndAdds) {
  perfgap::core::Kb kb = perfgap::core::builtin_kb();
  const auto before = kb.comm_kernels;
  std::size_t at = before.size();
  for (std::size_t i = 0; i < before.size(); ++i)
    if (before[i].match == "deep_ep::*dispatch") at = i;
  ASSERT_LT(at, before.size());
  auto f = perfgap::core::parse_kb(
      "comm_kernels:\n  - {match: \"deep_ep::*dispatch\", kind: expert_parallel, library: DeepEP dispatch}\n"
      "  - {match: \"my_ep::*\", kind: expert_parallel, library: MyEP}\n",
      "kb.d/ep.yaml");
  ASSERT_TRUE(f) << f.error();
  kb.overlay(std::move(*f));
  ASSERT_EQ(kb.comm_kernels.size(), before.size() + 1);
  EXPECT_EQ(kb.comm_kernels[at].library, "DeepEP dispatch");
  EXPECT_EQ(kb.comm_kernels[at].file, "kb.d/ep.yaml:2");
  EXPECT_EQ(kb.comm_kernels.back().match, "my_ep::*");
  const auto* e = perfgap::core::match_comm_kernel(kb.comm_kernels, "void my_ep::a2a<8>(int*)");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->library, "MyEP");
  // The more specific pattern wins over the broader one, whatever their order.
  e = perfgap::core::match_comm_kernel(kb.comm_kernels, "void deep_ep::internode::dispatch<false, 8>(int4*)");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->library, "DeepEP dispatch");
}
