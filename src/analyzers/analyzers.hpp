// Analyzers: pure functions from parsed tool output (+ options) to findings. They never read
// files; `source` is the input's name as the user gave it (used in subjects and evidence).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/nccl_inspector.hpp"
#include "parsers/nccl_log.hpp"
#include "parsers/nccl_ras.hpp"
#include "parsers/nccl_tests.hpp"
#include "parsers/numastat.hpp"
#include "parsers/nvidia_smi.hpp"
#include "parsers/perf.hpp"
#include "parsers/perf_stat.hpp"
#include "parsers/profile.hpp"
#include "parsers/steps.hpp"
#include "parsers/turbostat.hpp"
#include "report/model.hpp"

namespace perfgap::core {
struct KbCommKernel;  // core/kb.hpp
}

namespace perfgap::analyzers {

using report::Finding;

// An `error` finding for an input of `kind` (tool_outputs/registry) that could not be used at all:
// the kind's main id and layer, so a fleet sees it where the kind's findings would be.
Finding unusable_input(std::string_view kind, std::string_view layer, std::string_view main_id, const std::string& source, const std::string& why);
// One `error` finding listing the lines of a usable input that could not be read (none when
// `damaged` is empty).
std::vector<Finding> damaged_lines(const char* id, const char* layer, const std::string& source,
                                   const std::vector<parsers::ParseError>& damaged);

// ---- perf ------------------------------------------------------------------------------
struct KernelSymbol {
  std::string match;    // exact base name, or a prefix ending in '*'
  std::string group, finding, cause, fix;
  bool matches(const std::string& base_symbol) const;
};
// The kernel symbols of the built-in knowledge base (data/kb/kernel_symbols.yaml, core/kb.hpp).
const std::vector<KernelSymbol>& kernel_symbols();
// Parses a knowledge-base text (the embedded one or a test's); error text on failure.
std::optional<std::vector<KernelSymbol>> parse_kernel_symbols(const std::string& yaml, std::string* error = nullptr);

// perf.smmu_cmdq, perf.hot_kernel and perf.summary (the last alone: perf_summary). With a
// known sample count below `min_samples`, perf.smmu_cmdq and perf.hot_kernel are `skip` (a 5%
// share of a handful of samples is noise); perf.summary still passes.
inline constexpr double kPerfMinSamples = 100;
std::vector<Finding> analyze_perf(const parsers::PerfProfile& p, const std::string& source,
                                  const std::vector<KernelSymbol>& kb = kernel_symbols(), double min_samples = kPerfMinSamples);
Finding perf_summary(const parsers::PerfProfile& p, const std::string& source);

// ---- perf-stat ---------------------------------------------------------------------------
// The TLB figures of one perf stat run: miss ratio of loads (%), misses per 1,000 instructions,
// store misses (data TLB), each where its events were counted; `missing` names what was not.
enum class TlbKind { data, instruction };
struct TlbFigures {
  std::optional<double> load_miss_pct, mpki, store_miss_pct, store_mpki;
  double min_running_pct = 100;  // the least share of time one of its events was counted
  std::vector<std::string> missing;
};
TlbFigures tlb_figures(const parsers::PerfStat& s, TlbKind kind);
struct PerfStatOptions {
  const parsers::PerfStat* reference = nullptr;  // a bare-metal or known-good run of the same workload
  std::string reference_source;
  struct Ratio {
    double pass_within = 1.2, fail_beyond = 1.5;  // x the reference (data/kb/reference_ratios.yaml)
  };
  Ratio dtlb, itlb;
  // How to get a verdict without a reference, in the words of the command that judges.
  std::string no_reference = "--reference a bare-metal or known-good perf stat of the same workload";
};
// Why a guest counts no hardware events, and what would give them: one wording for the perf
// stat files' <not supported> rows and the live profile's refused perf_event_open.
inline constexpr std::string_view kNoPmuAdvice =
    "a guest without a PMU counts no hardware events: give the VM the hypervisor's virtual PMU (vPMU: KVM/QEMU -cpu host,pmu=on, "
    "libvirt <pmu state='on'/>, a cloud instance type that exposes one)";
// perf_stat.events (what was read, scaled, unsupported), perf_stat.dtlb and perf_stat.itlb.
std::vector<Finding> analyze_perf_stat(const parsers::PerfStat& s, const std::string& source, const PerfStatOptions& o);

// ---- turbostat -------------------------------------------------------------------------
struct TurbostatOptions {
  std::optional<double> rated_mhz;
};
std::vector<Finding> analyze_turbostat(const parsers::Turbostat& t, const std::string& source, const TurbostatOptions& o);

// ---- numastat --------------------------------------------------------------------------
// numastat -p tables of processes smaller than this (MB on all nodes) are not judged.
inline constexpr double kNumastatMinProcessMb = 256;
std::vector<Finding> analyze_numastat(const parsers::Numastat& n, const std::string& source);

// ---- nccl-tests ------------------------------------------------------------------------
struct NcclTestsOptions {
  const parsers::NcclTestsRun* reference = nullptr;
  std::string reference_source;
  std::vector<std::uint64_t> sizes;  // empty: every size >= 1 MiB
  double threshold = 0.95;
  // Without a reference, the basis for judging busbw: the node's RDMA line rate, all NICs
  // together, in Gb/s (--nics x --link-gbps, or the ACTIVE ports of a node report), and what
  // it came from. A multi-node run's busbw is bounded by it (ring and tree collectives move
  // each rank's share through the node's NICs); 0: no basis.
  double nic_gbps_total = 0;
  std::string nic_basis;
  // The node whose report gave the basis (--node-report's node.name; empty: --nics, or not
  // said). A run whose Rank lines name its hosts and not this node is no run of that node's
  // NICs: the basis is refused for it, and the finding says why.
  std::string nic_basis_node;
  // --nodes: the nodes the run spanned, for a run whose output does not show them (an exact count
  // the output shows wins, and the finding says the two differ).
  std::optional<long> nodes;
};
// Below these shares of the line-rate expectation, busbw fails / warns (an expectation derived
// from the hardware, not a measured reference: protocol overhead keeps good fabrics near 80-95%).
inline constexpr double kNcclExpectedFail = 0.5, kNcclExpectedWarn = 0.8;
// A busbw this far above the line rate given shows that the rate does not bound the run
// (NVLink across nodes, SHARP, or a --link-gbps below the NICs'): no verdict on that basis.
inline constexpr double kNcclBasisExceeded = 1.05;
// The largest old-layout `error` (max absolute error) that is rounding for a data type:
// max(1e-3, 8 x the type's machine epsilon); 0 for integer types (exact).
double max_error_tolerance(const std::string& type);
std::vector<Finding> analyze_nccl_tests(const parsers::NcclTestsRun& run, const std::string& source, const NcclTestsOptions& o);
// nccl_tests.busbw_collapse: busbw falling sharply past the run's peak as the sizes grow, and
// staying down: a size whose busbw (out of place, and in place where printed) is below this share
// of the size before it, and it and every larger size (two at least) below this share of the peak.
// `rows`: the run's last row of each size (with out-of-place figures), as nccl_tests.busbw reads
// them; `what`: the run's collective and scale, as its title says them. `fell`: a fall was seen
// (a collapse; one out of place only, or at the largest size alone: undecided). `stop`: where the
// run stopped short of its header's sizes (nullptr: it ran to its end): no fall up to there is no
// pass, the sizes that could show one were never measured (skip, saying so).
inline constexpr double kNcclCollapseShare = 2.0 / 3;
Finding nccl_tests_collapse(const std::map<std::uint64_t, const parsers::NcclTestsRow*>& rows, const std::string& source,
                            const std::string& what, bool& fell, const parsers::NcclTestsStop* stop = nullptr);
// The run's rank count read from its busbw/algbw ratio where its output names no ranks (one
// collective's bus factor fits); nullopt where the output names them or no reading is sure.
std::optional<long> nccl_tests_inferred_ranks(const parsers::NcclTestsRun& run);
// What in a run contradicts the collective a user's label names for it (whatif --nccl-tests
// all_reduce=FILE), each in words: the collective its output names, a reducing collective's rows
// with redop none, a busbw/algbw that the collective's bus factor gives on no rank count
// (all_reduce's 2(n-1)/n is 1 or more from 2 ranks on, all_gather's (n-1)/n below 1). Empty where
// nothing it shows contradicts the label.
std::vector<std::string> nccl_tests_label_contradictions(const parsers::NcclTestsRun& run, parsers::Coll said);

// ---- nccl-log --------------------------------------------------------------------------
struct NcclLogOptions {
  std::optional<std::string> expect_topo_file;
  std::optional<std::string> expect_net;  // "IB" or "Socket"
  bool expect_gdr = false;
};
// Several files (one per rank) are read together: versions are compared across all of them.
struct NcclLogInput {
  std::string source;
  const parsers::NcclLog* log;
};
std::vector<Finding> analyze_nccl_logs(const std::vector<NcclLogInput>& logs, const NcclLogOptions& o);
// nccl_log.errors (nccl_log_errors.cpp): the logs' NCCL WARN lines and error return chains.
Finding nccl_log_errors_finding(const std::vector<NcclLogInput>& logs, const std::string& subject);

// ---- nccl-inspector --------------------------------------------------------------------
// One process's Inspector output (one file per process, as the plugin writes them); several
// are judged together: a rank is compared with the other ranks of its communicator.
struct NcclInspectorInput {
  std::string source;
  const parsers::NcclInspector* run;
};
struct NcclInspectorOptions {
  // The basis for the busbw of communicators across nodes, as for nccl-tests: the node's RDMA
  // line rate, all NICs together, in Gb/s (--nics x --link-gbps or --node-report); 0: none.
  double nic_gbps_total = 0;
  std::string nic_basis;
  std::uint64_t min_bytes = 1u << 20;  // smaller messages are latency-bound: not judged
};
// A rank (or communicator) is an outlier when its mean busbw is at least this share away from
// the median of its peers AND more than kInspectorMadK scaled MADs away (robust: one slow rank
// of eight does not move the median; equal ranks, MAD 0, need the share alone).
inline constexpr double kInspectorOutlierShare = 0.2, kInspectorMadK = 3.0;
// Peers needed for a median to mean anything.
inline constexpr std::size_t kInspectorMinPeers = 3;
// nccl_inspector.summary, .slow_rank, .late_rank, .slow_comm, .busbw.
std::vector<Finding> analyze_nccl_inspector(const std::vector<NcclInspectorInput>& in, const NcclInspectorOptions& o);

// ---- nccl-ras ----------------------------------------------------------------------------
// nccl_ras.dead, .missing, .comm_error, .mismatch.
std::vector<Finding> analyze_nccl_ras(const parsers::NcclRas& r, const std::string& source);

// ---- steps / gap -----------------------------------------------------------------------
// A step log's figures: times per step in ms, or a throughput (higher is better).
struct StepStats {
  std::size_t records = 0, used = 0, warmup = 0;
  std::size_t skipped = 0;    // Megatron skipped iterations left out (after the warm-up)
  bool all_skipped = false;   // every record after the warm-up is a skipped iteration: kept
  bool throughput = false;
  std::string unit = "ms";    // "ms", "samples/s", "tokens/s"
  std::string field;          // what the log's records are ("elapsed time per iteration (ms)", ...)
  std::string layout;         // "Megatron-LM", "throughput", ...
  long first_iteration = -1;  // of the records used, when the log numbers them
  bool warmup_default = true; // the warm-up is the default share (no --warmup given)
  double mean = 0, median = 0, min = 0, max = 0;
  double tail = 0;            // the slow end: p99 of step times, p1 of throughputs (nearest rank)
  // Every record in log order as (iteration, or record number when the log has none; value),
  // warm-up included (the first `warmup` of them): the HTML chart of the run.
  std::vector<std::pair<double, double>> series;
  // The default warm-up's records left in because none was slower than the median of the
  // records after them (warmup is then 0), and that median.
  std::size_t warmup_kept = 0;
  double warmup_rest_median = 0;
  // The job's global batch size over the records used, where the log says it (or its consumed
  // samples grow by one amount per iteration) and it is one size; nullopt otherwise.
  std::optional<double> global_batch;
  // The median rests on start-up records only: why ("its only record, iteration 1, is the
  // run's first step ..."); empty when not. A reference of start-up steps is no steady state.
  std::string startup_only;
};
// Drops `warmup` records (default: 10% of them, at least 1, never all, and none where none of
// them is slower than the median of the rest) and then Megatron's skipped iterations (unless
// nothing else is left); nullopt when no record is left.
std::optional<StepStats> step_stats(const parsers::StepLog& log, std::optional<std::size_t> warmup);
// A single figure: milliseconds per step (records == 0).
StepStats step_figure(double ms);
// A single throughput figure in `unit` ("samples/s", "tokens/s"; records == 0).
StepStats step_throughput_figure(double value, std::string unit);

struct StepsOptions {
  // The reference: a time per step in ms, or a throughput in `reference_unit`.
  std::optional<double> reference;
  bool reference_throughput = false;
  std::string reference_unit = "ms";
  std::string reference_source;      // where it came from ("--reference-ms" or a file)
  // A reference step log's global batch size and why its median rests on start-up records only
  // (StepStats); unset and empty for a figure.
  std::optional<double> reference_batch;
  std::string reference_startup_only;
  std::optional<std::size_t> warmup;
  double threshold = 0.95;
  void reference_ms(double ms) {
    reference = ms;
    reference_throughput = false;
    reference_unit = "ms";
  }
  // The reference as a step log's median (its unit, batch size and start-up state with it).
  void reference_log(const StepStats& s, std::string source) {
    reference = s.median;
    reference_throughput = s.throughput;
    reference_unit = s.unit;
    reference_source = std::move(source);
    reference_batch = s.global_batch;
    reference_startup_only = s.startup_only;
  }
};
// `stats` of a step log; `measured_source` names it. A measured figure given as a number has
// stats with records == 0 (steps.tail is then `skip`). Percent of reference is
// reference / median for times, median / reference for throughputs; a reference of another
// quantity or unit is `skip`.
std::vector<Finding> analyze_steps(const StepStats& stats, const std::string& measured_source, const StepsOptions& o);

// ---- profiles (nsys, kineto) ----------------------------------------------------------
// Communication is counted per slot: the NCCL collectives (parsers::Coll, 0 .. kCollCount - 1),
// then one slot per library of the communication-kernel table's other entries (DeepEP, NVSHMEM,
// ...: data/kb/comm_kernels.yaml), in the table's order; from the kCommLibraries-th library on
// they share the last slot ("other communication libraries").
inline constexpr int kCommLibraries = 16;
inline constexpr int kCommSlots = parsers::kCollCount + kCommLibraries;
// The per-iteration figures of a profile that --reference compares (means over GPUs).
struct ProfileFigures {
  bool iterations = false;
  double iteration_ms = 0;       // median window
  double iteration_ms_mean = 0;
  double compute_ms = 0, comm_all_ms = 0, exposed_all_ms = 0, idle_ms = 0;
  std::array<bool, kCommSlots> present{};
  std::array<double, kCommSlots> comm_ms{}, exposed_ms{};
  // What run it is: its GPUs' models (sorted, unique; where the trace names them) and the job's
  // world size (where recorded; -1 not), so that a reference of another job is said to be one.
  std::vector<std::string> gpu_models;
  std::int64_t world = -1;
};
struct ProfileOptions {
  std::string iteration_range;                 // --iteration-range NAME; empty: ProfilerStep#N, step-like ranges, the period
  const ProfileFigures* reference = nullptr;   // --reference OTHER_PROFILE
  std::string reference_source;
  double threshold = 0.95;
  // The kernels that are communication besides NCCL's (core::Kb::comm_kernels, with --kb); null:
  // the built-in table.
  const std::vector<core::KbCommKernel>* comm_kernels = nullptr;
};
ProfileFigures profile_figures(const parsers::Profile& p, const ProfileOptions& o);
// profile.summary, profile.iterations, profile.exposed_comm (per collective and `all`),
// profile.gpu_idle, profile.launch_bound, profile.env, and profile.compare with a reference.
std::vector<Finding> analyze_profile(const parsers::Profile& p, const std::string& source, const ProfileOptions& o);

// ---- nvidia-smi (gpu.* from captures) --------------------------------------------------
// The gpu.* rules over the GPU facts model, whoever filled it: per GPU (by UUID) of the
// snapshots, judged on its last one; a GPU in several snapshots also has the growth of its
// counters between the first and the last judged (replays, slowdown time, NVLink errors).
// `not_queried`: GPUs the source left alone on purpose (perfgap-gpu: uuid, else bus id -> "persistence
// mode off"); in the last snapshot of a GPU they make every rule but gpu.persistence skip with
// that reason and `not_queried_hint` (how to query it anyway), not "not in this capture".
struct GpuSnapshotInput {
  std::string source;
  const parsers::GpuSnapshot* snapshot;
  const std::map<std::string, std::string>* not_queried = nullptr;
  std::string not_queried_hint;
};
std::vector<Finding> judge_gpu_snapshots(const std::vector<GpuSnapshotInput>& in);
// -q -x captures through judge_gpu_snapshots (together); each topo -m capture: gpu.topology
// (GPU<->NIC affinity) and gpu.nvlink (bonded NVLinks per GPU against its peers).
struct NvidiaSmiInput {
  std::string source;
  const parsers::NvidiaSmi* capture;
};
std::vector<Finding> analyze_nvidia_smi(const std::vector<NvidiaSmiInput>& in);

}  // namespace perfgap::analyzers
