#include <gtest/gtest.h>

#include <fmt/format.h>

#include "analyzers/analyzers.hpp"
#include "findings.hpp"
#include "parsers/perf.hpp"

using namespace perfgap;
using fixture::metric;

TEST(ParsersPerf, ReportStdioSelfOnly) {
  auto p = parsers::parse_perf(
      "# Overhead  Command  Shared Object      Symbol\n"
      "# ........  .......  .................  ......\n"
      "    24.10%  python   [kernel.kallsyms]  [k] arm_smmu_cmdq_issue_cmdlist\n"
      "     8.00%  python   libc.so.6          [.] memcpy\n");
  ASSERT_TRUE(p) << p.error().describe();
  ASSERT_EQ(p->symbols.size(), 2u);
  EXPECT_DOUBLE_EQ(p->symbols[0].self_pct, 24.10);
  EXPECT_TRUE(p->symbols[0].kernel);
  EXPECT_FALSE(p->symbols[1].kernel);
  EXPECT_EQ(p->symbols[0].line, 3);
}

TEST(ParsersPerf, ChildrenAndSelfUsesSelfAndSkipsCallGraph) {
  auto p = parsers::parse_perf(
      "  Children      Self  Shared Object  Symbol\n"
      "-   40.00%     2.00%  [kernel]       [k] do_syscall_64\n"
      "   - 38.00% do_syscall_64\n"
      "        |--20.00%--native_queued_spin_lock_slowpath\n"
      "+   12.00%    12.00%  [kernel]       [k] native_queued_spin_lock_slowpath\n");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->children_column);
  ASSERT_EQ(p->symbols.size(), 2u);
  EXPECT_DOUBLE_EQ(p->symbols[0].self_pct, 2.0);
  EXPECT_DOUBLE_EQ(p->symbols[1].self_pct, 12.0);
}

TEST(ParsersPerf, MailQuotedAndWrappedSymbol) {
  auto p = parsers::parse_perf(
      "> >     30.00%  [kernel]  [k] arm_smmu_cmdq_issue_cmdlist\n"
      "> >      6.00%  [kernel]  [k] \n"
      "> > arm_smmu_atc_inv_domain.constprop.42\n");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->symbols.size(), 2u);
  EXPECT_EQ(p->symbols[1].symbol, "arm_smmu_atc_inv_domain.constprop.42");
}

TEST(ParsersPerf, PerfTopLastFrameCounts) {
  auto p = parsers::parse_perf(
      "   PerfTop: 100 irqs/sec\n     50.00%  [kernel]  [k] clear_page_erms\n"
      "   PerfTop: 100 irqs/sec\n      1.00%  [kernel]  [k] clear_page_erms\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->layout, parsers::PerfProfile::Layout::top);
  ASSERT_EQ(p->symbols.size(), 1u);
  EXPECT_DOUBLE_EQ(p->symbols[0].self_pct, 1.0);
}

TEST(ParsersPerf, ScriptLeafFramesAreCounted) {
  std::string text =
      "python3  4242 [002] 100.000001:     250000 cpu-clock:pppH: \n"
      "\tffffffff8108b1c5 arm_smmu_cmdq_issue_cmdlist+0x125 ([kernel.kallsyms])\n"
      "\tffffffff81a2c3f4 __iommu_unmap+0x24 ([kernel.kallsyms])\n\n"
      "python3  4242 [002] 100.000002:     250000 cpu-clock:pppH: \n"
      "\t    7f1c2b3e4d5c memcpy+0x10 (/usr/lib/libc.so.6)\n\n"
      "python3  4242 [002] 100.000003:     250000 cpu-clock:pppH:  ffffffff8108b1c5 arm_smmu_cmdq_issue_cmdlist+0x125 ([kernel.kallsyms])\n"
      "python3  4242 [002] 100.000004:     250000 cpu-clock:pppH:  7f1c2b3e4d5c memcpy+0x10 (/usr/lib/libc.so.6)\n";
  auto p = parsers::parse_perf(text);
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_EQ(p->layout, parsers::PerfProfile::Layout::script);
  EXPECT_DOUBLE_EQ(p->samples, 4);
  ASSERT_EQ(p->symbols.size(), 2u);
  EXPECT_EQ(p->symbols[0].symbol, "arm_smmu_cmdq_issue_cmdlist");
  EXPECT_DOUBLE_EQ(p->symbols[0].self_pct, 50.0);
  // Four samples are below the analyzer's minimum (a skip saying so); judged with a minimum of 1.
  auto f = analyzers::analyze_perf(*p, "x");
  EXPECT_EQ(f[0].status, report::Status::skip);
  EXPECT_NE(f[0].title.find("too few samples (4"), std::string::npos) << f[0].title;
  f = analyzers::analyze_perf(*p, "x", analyzers::kernel_symbols(), 1);
  EXPECT_EQ(f[0].id, "perf.smmu_cmdq");
  EXPECT_EQ(f[0].status, report::Status::fail);
}

TEST(AnalyzersPerf, UnnamedKernelFramesInTextAreNoPass) {
  // A system-wide perf script whose kernel frames perf could not name (kallsyms unreadable):
  // 3 of 4 samples are "[unknown] ([unknown])" at kernel addresses. No verdict over them.
  std::string text;
  for (int i = 0; i < 120; ++i) {
    text += fmt::format("swapper     0 [00{}] 200.{:06}:     250000 cycles: \n", i % 4, i);
    if (i % 4 == 3) text += "\t    7f1c2b3e4d5c memcpy+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n";
    else text += fmt::format("\tffffffff8{:07x} [unknown] ([unknown])\n\tffffffff81000000 [unknown] ([unknown])\n\n", 0x10a2c0 + i);
  }
  auto p = parsers::parse_perf(text);
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_DOUBLE_EQ(p->samples, 120);
  EXPECT_NEAR(p->unresolved_kernel_pct, 75.0, 1e-9);
  auto f = analyzers::analyze_perf(*p, "x");
  for (const auto& fnd : f) {
    if (fnd.id != "perf.hot_kernel" && fnd.id != "perf.smmu_cmdq") continue;
    EXPECT_EQ(fnd.status, report::Status::skip) << fnd.id << ": " << fnd.title;
    EXPECT_NE(fnd.title.find("75.00% of samples are kernel addresses without names"), std::string::npos) << fnd.title;
    EXPECT_NE(fnd.fix.find("kptr_restrict"), std::string::npos) << fnd.fix;
  }
  // A user-space "[unknown]" (a JIT, a stripped library) is not a kernel frame.
  std::string user;
  for (int i = 0; i < 120; ++i)
    user += fmt::format("python3  4242 [002] 100.{:06}:     250000 cycles: \n\t    7f1c2b3e{:04x} [unknown] ([unknown])\n\n", i, i);
  auto u = parsers::parse_perf(user);
  ASSERT_TRUE(u) << u.error().describe();
  EXPECT_DOUBLE_EQ(u->unresolved_kernel_pct, 0.0);
  auto g = analyzers::analyze_perf(*u, "x");
  EXPECT_EQ(g[1].id, "perf.hot_kernel");
  EXPECT_EQ(g[1].status, report::Status::pass) << g[1].title;
  // A perf report row of an unnamed kernel address ("[k] 0xffffffff...") counts the same.
  auto r = parsers::parse_perf(
      "# Overhead  Command  Shared Object  Symbol\n"
      "    60.00%  python   [unknown]      [k] 0xffffffffaea00a67\n"
      "    40.00%  python   libc.so.6      [.] memcpy\n");
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->unresolved_kernel_pct, 60.0);
}

TEST(ParsersPerf, LegacyLayout) {
  auto p = parsers::parse_perf("  samples  pcnt function  DSO\n   120.00 74.6% do_raw_spin_lock [kernel.kallsyms]\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->layout, parsers::PerfProfile::Layout::legacy);
  EXPECT_TRUE(p->symbols[0].kernel);
}

TEST(ParsersPerf, NotPerfIsAnError) {
  EXPECT_FALSE(parsers::parse_perf(""));
  EXPECT_FALSE(parsers::parse_perf("numa_hit 1\nnuma_miss 0\n"));
  EXPECT_FALSE(parsers::parse_perf(std::string(100000, 'x')));
}

TEST(ParsersPerf, BaseSymbol) {
  EXPECT_EQ(parsers::perf_base_symbol("arm_smmu_atc_inv_domain.constprop.49"), "arm_smmu_atc_inv_domain");
  EXPECT_EQ(parsers::perf_base_symbol("bio_release_pages.part.42"), "bio_release_pages");
  EXPECT_EQ(parsers::perf_base_symbol("mod_zone_state.llvm.8525150236079521930"), "mod_zone_state");
  EXPECT_EQ(parsers::perf_base_symbol("foo+0x12"), "foo");
}

TEST(AnalyzersPerf, StatusesAndKnowledgeBase) {
  ASSERT_FALSE(analyzers::kernel_symbols().empty());
  auto judge = [](const char* text) { return analyzers::analyze_perf(*parsers::parse_perf(text), "t"); };
  auto f = judge("  4.00%  [kernel]  [k] arm_smmu_cmdq_issue_cmdlist\n  6.00%  [kernel]  [k] smp_call_function_many_cond\n");
  EXPECT_EQ(f[0].status, report::Status::pass);  // 4% <= 5%
  EXPECT_EQ(f[1].id, "perf.hot_kernel");
  EXPECT_EQ(f[1].status, report::Status::warn);
  EXPECT_FALSE(f[1].fix.empty());
  f = judge("  4.00%  [kernel]  [k] clear_page_erms\n");
  EXPECT_EQ(f[1].status, report::Status::pass);
  // A user-space frame of the same name is not the kernel's.
  f = judge("  40.00%  libfoo.so  [.] clear_page_erms\n");
  EXPECT_EQ(f[1].status, report::Status::pass);
}

TEST(AnalyzersPerf, KnowledgeBaseFileErrors) {
  std::string err;
  EXPECT_FALSE(analyzers::parse_kernel_symbols("symbols: [{match: x}]", &err));
  EXPECT_NE(err.find("group"), std::string::npos);
  EXPECT_FALSE(analyzers::parse_kernel_symbols("symbols: [{match: x, group: g, finding: other, cause: c, fix: f}]"));
  EXPECT_TRUE(analyzers::parse_kernel_symbols("symbols: [{match: x*, group: g, finding: hot_kernel, cause: c, fix: f}]"));
}

// perf report --sort comm,sym: one row per command for the same symbol. The rows are kept
// with their command; the analyzer sums them (self time of the symbol) and names it once.
TEST(ParsersPerf, CommandColumnRowsOfOneSymbol) {
  auto p = parsers::parse_perf(
      "# Overhead  Command          Symbol\n"
      "     4.00%  python           [k] native_queued_spin_lock_slowpath\n"
      "     3.00%  pt_data_worker   [k] native_queued_spin_lock_slowpath\n");
  ASSERT_TRUE(p) << p.error().describe();
  ASSERT_EQ(p->symbols.size(), 2u);
  EXPECT_TRUE(p->command_column);
  EXPECT_EQ(p->symbols[0].comm, "python");
  EXPECT_EQ(p->symbols[1].comm, "pt_data_worker");
  EXPECT_TRUE(p->symbols[1].dso.empty());
  // Without a header: one cell that is not an object is the command; two are command, object.
  auto q = parsers::parse_perf("  4.00%  python  [k] x\n  3.00%  python  [kernel.kallsyms]  [k] y\n  2.00%  [kernel]  [k] z\n");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->symbols[0].comm, "python");
  EXPECT_EQ(q->symbols[1].comm, "python");
  EXPECT_EQ(q->symbols[1].dso, "[kernel.kallsyms]");
  EXPECT_EQ(q->symbols[2].dso, "[kernel]");
  EXPECT_TRUE(q->symbols[2].comm.empty());
}

TEST(AnalyzersPerf, RowsOfOneSymbolAreSummed) {
  auto p = parsers::parse_perf(
      "# Overhead  Command          Symbol\n"
      "     4.00%  python           [k] native_queued_spin_lock_slowpath\n"
      "     3.00%  pt_data_worker   [k] native_queued_spin_lock_slowpath\n"
      "     2.00%  python           [k] arm_smmu_cmdq_issue_cmdlist\n"
      "     4.00%  pt_data_worker   [k] arm_smmu_cmdq_issue_cmdlist\n");
  ASSERT_TRUE(p);
  auto f = analyzers::analyze_perf(*p, "t");
  ASSERT_EQ(f[1].id, "perf.hot_kernel");
  EXPECT_EQ(f[1].status, report::Status::warn);  // 4% + 3% = 7% > 5%
  EXPECT_EQ(f[1].title, "known-costly kernel frames above 5% of samples: native_queued_spin_lock_slowpath 7.00%");
  EXPECT_DOUBLE_EQ(metric(f[1], "pct.native_queued_spin_lock_slowpath"), 7.0);
  ASSERT_EQ(f[1].evidence.size(), 1u);
  EXPECT_NE(f[1].evidence[0].observed.find("4.00% python, 3.00% pt_data_worker"), std::string::npos) << f[1].evidence[0].observed;
  EXPECT_EQ(f[0].status, report::Status::fail);  // SMMU: 2% + 4% = 6% > 5%
  EXPECT_DOUBLE_EQ(metric(f[0], "smmu_cmdq_pct"), 6.0);
  // Suffixed copies of one function are one frame.
  auto q = parsers::parse_perf("  3.00%  [kernel]  [k] clear_page_erms.constprop.1\n  3.00%  [kernel]  [k] clear_page_erms.constprop.2\n");
  auto g = analyzers::analyze_perf(*q, "t");
  EXPECT_EQ(g[1].status, report::Status::warn);
  EXPECT_NE(g[1].title.find("clear_page_erms 6.00%"), std::string::npos) << g[1].title;
}

// perf script of two events (perf record -e cycles,instructions): the samples of different events
// are not added up; cycles is counted, instructions named and left out.
TEST(ParsersPerf, ScriptOfSeveralEventsCountsCyclesAlone) {
  std::string text;
  for (int i = 0; i < 3; ++i)
    text += fmt::format("python3  4242 [002] 100.00000{}:     250000 cycles:pp:  ffffffff8108b1c5 arm_smmu_cmdq_issue_cmdlist+0x125 ([kernel.kallsyms])\n", i);
  text += "python3  4242 [002] 100.000004:     250000 cycles:pp:  7f1c2b3e4d5c memcpy+0x10 (/usr/lib/libc.so.6)\n";
  for (int i = 0; i < 6; ++i) text += fmt::format("python3  4242 [002] 100.10000{}:     100000 instructions:pp:  7f1c2b3e4d5c memcpy+0x10 (/usr/lib/libc.so.6)\n", i);
  auto p = parsers::parse_perf(text);
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_DOUBLE_EQ(p->samples, 4);
  EXPECT_EQ(p->event, "cycles:pp");
  ASSERT_EQ(p->other_events.size(), 1u);
  EXPECT_EQ(p->other_events[0].first, "instructions:pp");
  EXPECT_DOUBLE_EQ(p->other_events[0].second, 6);
  ASSERT_EQ(p->symbols.size(), 2u);
  EXPECT_EQ(p->symbols[0].symbol, "arm_smmu_cmdq_issue_cmdlist");
  EXPECT_DOUBLE_EQ(p->symbols[0].self_pct, 75.0);
  auto f = analyzers::analyze_perf(*p, "x", analyzers::kernel_symbols(), 1);
  const report::Finding* summary = nullptr;
  for (const auto& x : f)
    if (x.id == "perf.summary") summary = &x;
  ASSERT_TRUE(summary);
  EXPECT_NE(summary->title.find("4 samples of cycles:pp (instructions:pp 6 left out)"), std::string::npos) << summary->title;
  // The choice: cycles, then cpu-clock, then task-clock, else the event with most samples.
  EXPECT_EQ(parsers::perf_pick_event({{"instructions", 9}, {"cpu_core/cycles/u", 1}}), 1u);
  EXPECT_EQ(parsers::perf_pick_event({{"instructions", 9}, {"task-clock", 1}, {"cpu-clock", 2}}), 2u);
  EXPECT_EQ(parsers::perf_pick_event({{"instructions", 3}, {"branch-misses", 9}}), 1u);
}

// perf report --stdio of two events: one section per event, each its own 100%; cycles' section
// is read, the other named.
TEST(ParsersPerf, ReportOfSeveralEventsReadsOneSection) {
  const char* text =
      "# Samples: 80  of event 'instructions:pp'\n"
      "# Event count (approx.): 123456\n"
      "#\n"
      "# Overhead  Command  Shared Object      Symbol\n"
      "    90.00%  python   libc.so.6          [.] memcpy\n"
      "    10.00%  python   [kernel.kallsyms]  [k] arm_smmu_cmdq_issue_cmdlist\n"
      "\n"
      "# Samples: 3K  of event 'cycles:pp'\n"
      "# Event count (approx.): 999999\n"
      "#\n"
      "# Overhead  Command  Shared Object      Symbol\n"
      "    60.00%  python   [kernel.kallsyms]  [k] arm_smmu_cmdq_issue_cmdlist\n"
      "    40.00%  python   libc.so.6          [.] memcpy\n";
  auto p = parsers::parse_perf(text);
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_EQ(p->event, "cycles:pp");
  ASSERT_EQ(p->other_events.size(), 1u);
  EXPECT_EQ(p->other_events[0], (std::pair<std::string, double>{"instructions:pp", 80}));
  ASSERT_EQ(p->symbols.size(), 2u);
  EXPECT_EQ(p->symbols[0].symbol, "arm_smmu_cmdq_issue_cmdlist");
  EXPECT_DOUBLE_EQ(p->symbols[0].self_pct, 60.0);
  EXPECT_DOUBLE_EQ(p->symbols[1].self_pct, 40.0);
}

// The command line a capture starts with says which CPUs it sampled: its shares are of those.
TEST(ParsersPerf, CommandLineLimitsTheCpusSampled) {
  const std::string rows = "Samples: 808 of event 'cycles:ppp', Event count (approx.): 469909024\nOverhead Shared Object Symbol\n"
                           "75.91% [kernel] [k] arm_smmu_cmdq_issue_cmdlist\n3.28% [kernel] [k] arm_smmu_tlb_inv_range\n";
  struct Case {
    std::string first;
    std::string cpus;
    bool top;
  };
  for (const Case& c : {Case{"perf top -C 0 *", "0", true}, Case{"$ perf top --cpu=0-3", "0-3", true},
                        Case{"$ perf record -C2,5 -g -- sleep 10", "2,5", false}, Case{"perf top -a", "", true},
                        Case{"perf top -C $CPU", "", true}}) {
    auto p = parsers::parse_perf(c.first + "\n" + rows);
    ASSERT_TRUE(p) << c.first << ": " << p.error().describe();
    EXPECT_EQ(p->cpu_list, c.cpus) << c.first;
    EXPECT_EQ(p->layout == parsers::PerfProfile::Layout::top, c.top) << c.first;
    EXPECT_EQ(p->symbols.size(), 2u) << c.first;
  }
  // A line naming perf top after the rows started is no command line of this capture.
  auto later = parsers::parse_perf(rows + "perf top -C 7\n");
  ASSERT_TRUE(later);
  EXPECT_EQ(later->cpu_list, "");
}
