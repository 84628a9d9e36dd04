// Every real capture of ../shared/fixtures/<kind>/ is read in place by its parser and
// analyzer, with concrete outcomes checked for several. Skips cleanly without the shared dir.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analyzers/analyzers.hpp"
#include "files.hpp"
#include "findings.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using fixture::find;
using fixture::metric;
using fixture::read_file;
using report::Status;

namespace {

fs::path shared(const char* kind) { return fs::path(PERFGAP_SHARED_DIR) / "fixtures" / kind; }

std::vector<fs::path> files(const char* kind) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(shared(kind), ec))
    if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

#define REQUIRE_SHARED_KIND(kind)                                                      \
  if (!fs::is_directory(shared(kind))) GTEST_SKIP() << "no shared fixtures at " << shared(kind)

std::vector<report::Finding> perf(const std::string& name) {
  auto p = parsers::parse_perf(read_file(shared("perf") / name));
  if (!p) throw std::runtime_error(name + ": " + p.error().describe());
  return analyzers::analyze_perf(*p, name);
}

}  // namespace

TEST(SharedFixtures, EveryPerfCaptureParses) {
  REQUIRE_SHARED_KIND("perf");
  for (const auto& f : files("perf")) {
    auto p = parsers::parse_perf(read_file(f));
    ASSERT_TRUE(p) << f << ": " << p.error().describe();
    EXPECT_FALSE(p->symbols.empty()) << f;
  }
  auto c0 = perf("perf-top-C0-arm-smmu-cmdq-75pct-iommu-list-2020-05.txt");
  EXPECT_EQ(find(c0, "perf.smmu_cmdq").status, Status::fail);
  EXPECT_DOUBLE_EQ(metric(find(c0, "perf.smmu_cmdq"), "smmu_cmdq_pct"), 75.91);
  // "perf top -C 0 *": a perf top of CPU 0 alone; its shares are of CPU 0's samples, said so.
  EXPECT_NE(find(c0, "perf.summary").title.find("(perf top, CPU 0 only)"), std::string::npos) << find(c0, "perf.summary").title;
  EXPECT_NE(find(c0, "perf.smmu_cmdq").title.find("75.91% of CPU 0's samples"), std::string::npos) << find(c0, "perf.smmu_cmdq").title;
  auto quoted = perf("perf-top-arm-smmu-v3-cmdq-nvme-quoted-iommu-list-2020-05.txt");
  EXPECT_EQ(find(quoted, "perf.smmu_cmdq").status, Status::fail);
  EXPECT_DOUBLE_EQ(metric(find(quoted, "perf.smmu_cmdq"), "smmu_cmdq_pct"), 27.43);
  auto zfs = perf("perf-top-g-children-self-callchain-native-queued-spin-lock-zfs-4834.txt");
  EXPECT_EQ(find(zfs, "perf.hot_kernel").status, Status::warn);
  EXPECT_DOUBLE_EQ(metric(find(zfs, "perf.hot_kernel"), "pct.native_queued_spin_lock_slowpath"), 29.36);
  auto liq = perf("perf-top-kernel-native-queued-spin-lock-two-frames-liquorix-56.txt");
  EXPECT_EQ(find(liq, "perf.hot_kernel").status, Status::pass);  // 1.62% in the last frame
  auto legacy = perf("perf-report-ancient-format-samples-pcnt-kernel-kallsyms-qat-engine-32.txt");
  EXPECT_EQ(find(legacy, "perf.hot_kernel").status, Status::warn);
  // 29.24% of the samples are a kernel address perf could not name: no pass over them.
  auto unnamed = find(perf("perf-report-stdio-unknown-kernel-addrs-tip-trailer-linux-commit-budankov.txt"), "perf.hot_kernel");
  EXPECT_EQ(unnamed.status, Status::skip) << unnamed.title;
  EXPECT_NE(unnamed.title.find("29.24% of samples are kernel addresses without names"), std::string::npos) << unnamed.title;
}

TEST(SharedFixtures, EveryTurbostatCaptureParses) {
  REQUIRE_SHARED_KIND("turbostat");
  for (const auto& f : files("turbostat")) {
    auto t = parsers::parse_turbostat(read_file(f));
    ASSERT_TRUE(t) << f << ": " << t.error().describe();
    EXPECT_FALSE(t->cpu_rows.empty()) << f;
    EXPECT_TRUE(t->damaged.empty()) << f << ": line " << t->damaged.front().line;
  }
  auto read = [](const char* name, std::optional<double> rated = std::nullopt) {
    return analyzers::analyze_turbostat(*parsers::parse_turbostat(read_file(shared("turbostat") / name)), name, {rated});
  };
  auto xeon = read("telegraf-intel-xeon-6126.txt");
  EXPECT_EQ(find(xeon, "turbostat.deep_idle").status, Status::fail);  // idle cores in C1E, CPU%c6 0.00
  // The kernel lists C6 (its count and % columns) and no idle core ever asked for it: the OS
  // holds the cores out (PM QoS, the state disabled), not the BIOS, which would hide the state.
  for (const char* listed : {"telegraf-intel-xeon-6126.txt", "telegraf-intel-unknown.txt"}) {
    const auto deep = find(read(listed), "turbostat.deep_idle");
    EXPECT_EQ(deep.status, Status::fail) << listed;
    EXPECT_NE(deep.fix.find("/dev/cpu_dma_latency"), std::string::npos) << deep.fix;
    EXPECT_NE(deep.fix.find("cpuidle/state*/disable"), std::string::npos) << deep.fix;
    EXPECT_EQ(deep.fix.find("BIOS"), std::string::npos) << deep.fix;
  }
  EXPECT_EQ(find(xeon, "turbostat.busy_mhz").status, Status::skip);   // idle machine
  auto mobile = read("intel-mobile-turbostat-jitter-tabs-netdata-2704.txt");
  EXPECT_EQ(find(mobile, "turbostat.deep_idle").status, Status::pass);
  auto ryzen = read("amd-ryzen-7950x-turbostat-21.05.04-mangohud-1390.txt");
  EXPECT_EQ(find(ryzen, "turbostat.busy_mhz").status, Status::skip);  // no rated maximum
  // No CPU%c1/CPU%c6 on these AMD captures: acpi_idle's C2/C3 residency is said (C3% ~93%).
  const auto r9700 = find(read("telegraf-amd-r7-9700x.txt"), "turbostat.deep_idle");
  EXPECT_EQ(r9700.status, Status::skip) << r9700.title;
  EXPECT_NE(r9700.title.find("the kernel asks for deep idle states"), std::string::npos) << r9700.title;
  EXPECT_GT(metric(r9700, "deep_pct"), 90);
  auto rated = read("amd-ryzen-7950x-turbostat-21.05.04-mangohud-1390.txt", 5700);
  EXPECT_EQ(find(rated, "turbostat.busy_mhz").status, Status::fail);  // ~4595 of 5700 MHz
  EXPECT_NEAR(metric(find(rated, "turbostat.busy_mhz"), "busy_mhz"), 4595, 5);
  EXPECT_EQ(find(read("amd-ryzen-7950x-turbostat-21.05.04-mangohud-1390.txt", 4800), "turbostat.busy_mhz").status, Status::pass);
}

TEST(SharedFixtures, EveryNumastatCaptureParses) {
  REQUIRE_SHARED_KIND("numastat");
  for (const auto& f : files("numastat")) {
    auto n = parsers::parse_numastat(read_file(f));
    ASSERT_TRUE(n) << f << ": " << n.error().describe();
    EXPECT_TRUE(n->damaged.empty()) << f << ": line " << n->damaged.front().line;
  }
  auto read = [](const char* name) { return analyzers::analyze_numastat(*parsers::parse_numastat(read_file(shared("numastat") / name)), name); };
  auto bash = read("numastat-p-bash-2node-complete-numactl-45.txt");
  ASSERT_EQ(bash.size(), 1u);
  EXPECT_EQ(bash[0].subject, "pid:98621");
  // A 1.3 MB shell at 13.6% remote costs nothing: below the floor, not judged (it failed).
  EXPECT_EQ(bash[0].status, Status::skip) << bash[0].title;
  EXPECT_NE(bash[0].title.find("1.32 MB in all, below the 256 MB"), std::string::npos) << bash[0].title;
  auto qemu = read("numastat-p-qemu-kvm-2node-repeated-kubevirt-8762.txt");
  ASSERT_EQ(qemu.size(), 1u);  // two runs of one pid: the last counts
  EXPECT_EQ(qemu[0].status, Status::fail);
  EXPECT_EQ(read("numastat-default-rhel7.8-2node-insights-core.txt")[0].status, Status::pass);
  EXPECT_EQ(read("numastat-m-rhel7.8-2node-hugepages-insights-core.txt")[0].status, Status::skip);
  EXPECT_EQ(read("numastat-cm-2node-hugepages-token-not-in-hash-numactl-115.txt")[0].status, Status::skip);
  EXPECT_EQ(read("sysfs-node0-numastat-raw-node-exporter-248.txt")[0].status, Status::pass);
  // 5120.00 / 5120.00 MB of huge pages: no main node (node 1 led by 0.01 MB), the memory is
  // interleaved; and whole GiB per node is numastat's huge-page miscount (numactl issue 147) or
  // real 1 GiB pages, said so.
  auto huge = read("numastat-p-hugepages-2node-numactl-147.txt");
  ASSERT_EQ(huge.size(), 1u);
  EXPECT_EQ(huge[0].status, Status::fail);
  EXPECT_NE(huge[0].title.find("spread evenly over nodes 0, 1 (interleaved)"), std::string::npos) << huge[0].title;
  EXPECT_EQ(huge[0].title.find("main node"), std::string::npos) << huge[0].title;
  EXPECT_NE(huge[0].fix.find("not --interleave"), std::string::npos) << huge[0].fix;
  ASSERT_EQ(huge[0].evidence.size(), 2u);
  EXPECT_NE(huge[0].evidence[1].observed.find("numactl issue 147"), std::string::npos) << huge[0].evidence[1].observed;
  // A process with a clear main node keeps it (qemu above).
  EXPECT_NE(qemu[0].title.find("outside its main node"), std::string::npos) << qemu[0].title;
}

TEST(SharedFixtures, EveryNcclTestsCaptureParses) {
  REQUIRE_SHARED_KIND("nccl-tests");
  std::map<std::string, parsers::NcclTestsRun> runs;
  for (const auto& f : files("nccl-tests")) {
    auto r = parsers::parse_nccl_tests(read_file(f));
    ASSERT_TRUE(r) << f << ": " << r.error().describe();
    EXPECT_FALSE(r->rows.empty()) << f;
    runs[f.filename().string()] = std::move(*r);
  }
  auto busbw = [&](const std::string& name, std::uint64_t size) {
    for (const auto& r : runs.at(name).rows)
      if (r.size == size) return r.out_of_place->busbw;
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(busbw("all-reduce-h100-8gpu-dgxc-benchmarking-readme.txt", 1048576), 67.04);
  EXPECT_DOUBLE_EQ(busbw("all-reduce-h100-8gpu-dgxc-benchmarking-readme.txt", 17179869184ull), 479.90);
  EXPECT_EQ(runs.at("all-reduce-h100-8gpu-dgxc-benchmarking-readme.txt").rows.size(), 32u);
  EXPECT_DOUBLE_EQ(busbw("all-gather-mi250x-srun-label-prefix-rccl-1490.txt", 1048576), 0.70);
  EXPECT_DOUBLE_EQ(busbw("all-reduce-p5-mpirun-tag-output-prefix-aws-k8s-tester-503.txt", 8), 0.00);
  EXPECT_DOUBLE_EQ(busbw("all-reduce-bracket-rank-prefix-interleaved-nccl-1453.txt", 67108864), 5.27);
  EXPECT_DOUBLE_EQ(busbw("all-reduce-256gpu-nccl-2.8.4-old-format-NA-errors-nccl-tests-78.txt", 268435456), 67.29);
  EXPECT_DOUBLE_EQ(busbw("old-format-no-redop-root-error-column-rows-nccl-644.txt", 268435456), 7.32);
  EXPECT_DOUBLE_EQ(busbw("all-reduce-tail-interleaved-nccl-info-destroy-nccl-tests-319.txt", 17179869184ull), 44.27);
  EXPECT_DOUBLE_EQ(busbw("all-reduce-gb200-20racks-1440gpu-coreweave-readme.txt", 536870912), 150.95);
  EXPECT_EQ(runs.at("all-reduce-gb10-2node-nccl-tests-2.20.0-dgx-spark-playbooks-103.txt").collective, "all_reduce_perf");
  EXPECT_EQ(runs.at("all-reduce-256gpu-nccl-2.8.4-old-format-NA-errors-nccl-tests-78.txt").nccl_version, "2.8.4");

  auto judge = [&](const std::string& name, const analyzers::NcclTestsOptions& o = {}) {
    return analyzers::analyze_nccl_tests(runs.at(name), name, o)[0];
  };
  // Old layout, in-place `error` 1e+00 (a max error, not a count: alltoall in-place), and the
  // run's own "Out of bounds values : 0 OK": no wrong results, the overruled rows in evidence.
  auto a2a = judge("alltoall-8node-v100-old-format-nccl-tests-78.txt");
  EXPECT_EQ(a2a.status, Status::skip) << "no wrong results, and no basis for the bandwidth: " << a2a.title;
  EXPECT_NE(a2a.evidence.at(1).observed.find("above the float tolerance"), std::string::npos) << a2a.evidence.at(1).observed;
  // 8 ranks on one node: NVLink-bound, no NIC basis: skip, saying what would decide.
  const auto dgx = judge("all-reduce-h100-8gpu-dgxc-benchmarking-readme.txt");
  EXPECT_EQ(dgx.status, Status::skip);
  EXPECT_NE(dgx.title.find("on 8 ranks, 1 node"), std::string::npos) << dgx.title;
  EXPECT_NE(dgx.title.find("single node"), std::string::npos) << dgx.title;
  // The 20-rack run (1440 ranks: its excerpt shows one Rank line, and busbw/algbw says 1404 to
  // 1472) against the single rack (72): another job shape, so no verdict, the ratios kept
  // (150.95/586.06 at 512 MiB).
  analyzers::NcclTestsOptions o;
  o.reference = &runs.at("all-reduce-gb200-nvl72-1rack-72gpu-coreweave-readme.txt");
  o.reference_source = "1rack";
  auto vs = judge("all-reduce-gb200-20racks-1440gpu-coreweave-readme.txt", o);
  EXPECT_EQ(vs.status, Status::skip) << vs.title;
  EXPECT_NE(vs.title.find("(1404 to 1472 ranks here, 72 in the reference)"), std::string::npos) << vs.title;
  EXPECT_NEAR(metric(vs, "ratio.536870912"), 150.95 / 586.06, 1e-9);
  // Against a run of its own shape it is judged (here itself: a pass).
  o.reference = &runs.at("all-reduce-gb200-20racks-1440gpu-coreweave-readme.txt");
  EXPECT_EQ(judge("all-reduce-gb200-20racks-1440gpu-coreweave-readme.txt", o).status, Status::pass);
  // Against itself: pass.
  o.reference = &runs.at("all-reduce-h100-8gpu-dgxc-benchmarking-readme.txt");
  EXPECT_EQ(judge("all-reduce-h100-8gpu-dgxc-benchmarking-readme.txt", o).status, Status::pass);
}

TEST(SharedFixtures, EveryNcclLogParses) {
  REQUIRE_SHARED_KIND("nccl-log");
  std::map<std::string, parsers::NcclLog> logs;
  for (const auto& f : files("nccl-log")) {
    auto l = parsers::parse_nccl_log(read_file(f));
    ASSERT_TRUE(l) << f << ": " << l.error().describe();
    logs[f.filename().string()] = std::move(*l);
  }
  auto judge = [&](const std::string& name, const analyzers::NcclLogOptions& o = {}) {
    return analyzers::analyze_nccl_logs({{name, &logs.at(name)}}, o);
  };
  // One workstation (one host, no NET channel): NCCL's Socket choice carries nothing.
  auto ws = find(judge("socket-fallback-no-libibverbs-nccl-2.25.1-nccl-tests-287.txt"), "nccl_log.net");
  EXPECT_EQ(ws.status, Status::skip) << ws.title;
  EXPECT_NE(ws.title.find("single node (one host, GENOA-06"), std::string::npos) << ws.title;
  // Channels over sockets between nodes and no RDMA device in the excerpt: Ethernet-only
  // clusters (nccl#398, #226) look the same, so it warns saying both readings.
  const auto sock952 = find(judge("socket-fallback-ib-no-device-channels-p2p-ipc-and-net-socket-nccl-952.txt"), "nccl_log.net");
  EXPECT_EQ(sock952.status, Status::warn) << sock952.title;
  EXPECT_NE(sock952.title.find("NCCL uses TCP sockets between nodes; no RDMA device in the log: if the nodes have RDMA NICs the job cannot see them"),
            std::string::npos)
      << sock952.title;
  analyzers::NcclLogOptions want_ib;
  want_ib.expect_net = "IB";
  EXPECT_EQ(find(judge("socket-fallback-ib-no-device-channels-p2p-ipc-and-net-socket-nccl-952.txt", want_ib), "nccl_log.net").status,
            Status::fail);
  EXPECT_EQ(find(judge("etc-nccl-conf-topo-file-loaded-nccl-2.18.5-nccl-1008.txt"), "nccl_log.topo_file").status, Status::pass);
  EXPECT_EQ(find(judge("ib-gdrdma-rings-old-nccl-azure-nc24rsv3-nccl-tests-36.txt"), "nccl_log.net").status, Status::pass);
  // IB picked on one node (every rank's host is cs-project; one rank of nranks 1): it carries
  // nothing, as Socket on one node does. Before: pass "NCCL uses network IB".
  for (const char* one : {"topo-file-set-roce-tqdm-noise-nccl-2.18.6-nccl-1101.txt", "topo-and-graph-file-set-xml-import-dev-not-found-azhpc-images-327.txt"}) {
    auto net = find(judge(one), "nccl_log.net");
    EXPECT_EQ(net.status, Status::skip) << one << ": " << net.title;
    EXPECT_NE(net.title.find("single node (1 node by "), std::string::npos) << net.title;
    EXPECT_NE(net.title.find("(IB) carries nothing to judge"), std::string::npos) << net.title;
  }
  // One host named and channels over the net plugin IBext_v8 (an excerpt of a larger job):
  // traffic, judged; every channel GDRDMA is GPUDirect RDMA in use, as with NET/IB.
  analyzers::NcclLogOptions gdr;
  gdr.expect_gdr = true;
  for (const auto& opts : {analyzers::NcclLogOptions{}, gdr}) {
    auto ext = find(judge("nvls-comm-ibext-gdrdma-interleaved-with-nccl-tests-rows-nccl-1453.txt", opts), "nccl_log.net");
    EXPECT_EQ(ext.status, Status::pass) << ext.title;
    EXPECT_NE(ext.title.find("NET/IBext_v8 5, GPUDirect RDMA enabled"), std::string::npos) << ext.title;
  }
  // Sockets on lo with NCCL_IB_DISABLE=1, one host: a single-node job, nothing to judge.
  EXPECT_EQ(find(judge("socket-on-lo-ib-disabled-graph-topology-dump-nccl-1053.txt"), "nccl_log.net").status, Status::skip);
  EXPECT_EQ(find(judge("gb200-mnnvl-fabric-healthmask-nvls-nccl-1769.txt"), "nccl_log.topo_file").status, Status::skip);
  // NCCL read the graph file and could not use it ("XML Import Channel : dev 1 not found."):
  // a file that does not match the machine fails, it does not pass as "reached NCCL".
  auto rejected = find(judge("topo-and-graph-file-set-xml-import-dev-not-found-azhpc-images-327.txt"), "nccl_log.topo_file");
  EXPECT_EQ(rejected.status, Status::fail) << rejected.title;
  EXPECT_NE(rejected.title.find("XML Import Channel : dev 1 not found"), std::string::npos) << rejected.title;
  EXPECT_NE(rejected.title.find("/opt/microsoft/ncv4/graph.xml"), std::string::npos) << rejected.title;
  analyzers::NcclLogOptions o;
  o.expect_topo_file = "/etc/nccl/topo.xml";
  EXPECT_EQ(find(judge("etc-nccl-conf-topo-file-loaded-nccl-2.18.5-nccl-1008.txt", o), "nccl_log.topo_file").status, Status::fail);
  o.expect_topo_file = "/opt/microsoft/ncv4/topo.xml";
  EXPECT_EQ(find(judge("etc-nccl-conf-topo-file-loaded-nccl-2.18.5-nccl-1008.txt", o), "nccl_log.topo_file").status, Status::pass);
  // NCCL_ALGO forced in the job's environment, as the log's own lines show it: the node check's rule.
  const auto algo = find(judge("nvls-zero-channels-h800-p2p-direct-pointer-nccl-892.txt"), "nccl.env.forced");
  EXPECT_EQ(algo.status, Status::warn);
  EXPECT_NE(algo.title.find("NCCL_ALGO=Tree,Ring,,CollnetDirect,CollnetChain,NVLS"), std::string::npos) << algo.title;
  EXPECT_EQ(algo.evidence.at(0).source, "nvls-zero-channels-h800-p2p-direct-pointer-nccl-892.txt:5");
  for (const auto& f : judge("ib-gdrdma-rings-old-nccl-azure-nc24rsv3-nccl-tests-36.txt")) EXPECT_NE(f.id, "nccl.env.forced");
  auto ib = find(judge("ib-gdrdma-rings-old-nccl-azure-nc24rsv3-nccl-tests-36.txt"), "nccl_log.net");
  EXPECT_EQ(metric(ib, "channels.NET/IB"), 3);
  // Two logs of different NCCL versions read together.
  auto both = analyzers::analyze_nccl_logs({{"a", &logs.at("topo-file-set-roce-tqdm-noise-nccl-2.18.6-nccl-1101.txt")},
                                            {"b", &logs.at("etc-nccl-conf-topo-file-loaded-nccl-2.18.5-nccl-1008.txt")}},
                                           {});
  EXPECT_EQ(find(both, "nccl_log.net").status, Status::fail);
  EXPECT_NE(find(both, "nccl_log.net").fix.find("same NCCL build"), std::string::npos);
  // Versions differ and one rank (libibverbs missing) uses sockets: the versions fail; the
  // sockets, with no RDMA device shown, are said beside them, not as a cause.
  auto mixed = find(analyzers::analyze_nccl_logs({{"a", &logs.at("socket-fallback-no-libibverbs-nccl-2.25.1-nccl-tests-287.txt")},
                                                  {"b", &logs.at("etc-nccl-conf-topo-file-loaded-nccl-2.18.5-nccl-1008.txt")}},
                                                 {}),
                    "nccl_log.net");
  EXPECT_EQ(mixed.status, Status::fail);
  EXPECT_EQ(mixed.title.find("ranks report different NCCL versions"), 0u) << mixed.title;
  EXPECT_NE(mixed.fix.find("same NCCL build"), std::string::npos) << mixed.fix;
  bool said = false;
  for (const auto& e : mixed.evidence) said = said || (e.source == "also" && e.observed.find("NCCL uses TCP sockets; NCCL found no RDMA device") == 0);
  EXPECT_TRUE(said);
}

TEST(SharedFixtures, EveryStepLogParses) {
  REQUIRE_SHARED_KIND("steps");
  for (const auto& f : files("steps")) {
    auto s = parsers::parse_steps(read_file(f));
    ASSERT_TRUE(s) << f << ": " << s.error().describe();
    EXPECT_FALSE(s->records.empty()) << f;
  }
  auto read = [](const char* name) { return *parsers::parse_steps(read_file(shared("steps") / name)); };
  auto slow = read("megatron-llm-slow-86s-iterations-no-timestamp-epfllm-11.txt");
  ASSERT_EQ(slow.records.size(), 4u);
  EXPECT_DOUBLE_EQ(slow.records[0].value, 86545.2);
  EXPECT_EQ(slow.records[0].iteration, 122);
  auto st = analyzers::step_stats(slow, std::nullopt);
  ASSERT_TRUE(st);
  // Iteration 122 of 250,000 and the fastest record: no start-up in it, so the default warm-up
  // keeps it (the median of all four).
  EXPECT_EQ(st->warmup, 0u);
  EXPECT_EQ(st->warmup_kept, 1u);
  EXPECT_DOUBLE_EQ(st->median, (87871.6 + 89075.2) / 2);
  EXPECT_DOUBLE_EQ(analyzers::step_stats(slow, 1)->median, 89075.2);  // --warmup 1 drops it
  analyzers::StepsOptions o;
  o.reference_ms(86545.2);  // the first record: 97.8% of it
  EXPECT_EQ(analyzers::analyze_steps(*st, "slow", o)[0].status, Status::pass);
  o.reference_ms(80000);
  EXPECT_EQ(analyzers::analyze_steps(*st, "slow", o)[0].status, Status::fail);
  auto old = read("megatron-lm-2020-gpt2-v100-memory-and-timers-megatron-60.txt");
  ASSERT_EQ(old.records.size(), 2u);
  EXPECT_DOUBLE_EQ(analyzers::step_stats(old, std::nullopt)->median, 1993.9);  // 16.5 s warm-up dropped
}
