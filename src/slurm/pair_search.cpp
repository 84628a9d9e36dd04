#include "slurm/pair_search.hpp"


#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <chrono>
#include <thread>

#include "parsers/nccl_tests.hpp"
#include "sys/process.hpp"
#include "sys/stop_signals.hpp"

namespace perfgap::slurm {
namespace {

using PairClock = std::chrono::steady_clock;

double pair_seconds_since(PairClock::time_point t) { return std::chrono::duration<double>(PairClock::now() - t).count(); }

std::string pairs_first_line(const std::string& s) {
  auto t = s.substr(0, s.find('\n'));
  return t.size() > 200 ? t.substr(0, 200) + "..." : t;
}

// One round: every pair's srun at once, each on its own thread (sys::run_command waits for its own
// child only).
std::vector<PairMeasurement> pairs_run_round(const PairSearchPlan& plan, const std::vector<NodePair>& pairs, int round, double timeout_s) {
  std::vector<PairMeasurement> out(pairs.size());
  std::vector<std::thread> threads;
  threads.reserve(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    threads.emplace_back([&, i] {
      auto& m = out[i];
      m.round = round;
      m.pair = pairs[i];
      sys::CommandOptions o;
      o.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
      o.term_grace = std::chrono::seconds(10);
      o.stop = sys::StopSignals::flag();
      const auto start = PairClock::now();
      auto r = sys::run_command(pair_srun_command(plan, pairs[i]), o);
      m.seconds = pair_seconds_since(start);
      if (!r.started) m.error = "srun could not run: " + r.error;
      else if (r.stopped) m.error = "stopped by a signal";
      else if (r.timed_out) m.error = fmt::format("stopped after {:.0f}s", timeout_s);
      else if (r.status != 0) {
        std::string why = pairs_first_line(r.err.empty() ? r.out : r.err);
        m.error = fmt::format("exit {}{}", r.status, why.empty() ? "" : ": " + why);
      } else if (auto b = pair_busbw(r.out)) {
        m.busbw = *b;
      } else {
        m.error = b.error();
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace

std::vector<std::string> pair_srun_command(const PairSearchPlan& plan, const NodePair& pair) {
  std::vector<std::string> cmd = {plan.srun,
                                  "--nodes=2",
                                  "--ntasks=2",
                                  "--ntasks-per-node=1",
                                  "--nodelist=" + pair.first + "," + pair.second,
                                  "--kill-on-bad-exit=1",
                                  "--job-name=perfgap-pairs"};
  cmd.insert(cmd.end(), plan.srun_args.begin(), plan.srun_args.end());
  cmd.insert(cmd.end(), plan.benchmark.begin(), plan.benchmark.end());
  return cmd;
}

tl::expected<double, std::string> pair_busbw(std::string_view output) {
  auto run = parsers::parse_nccl_tests(output);
  if (!run) return tl::unexpected("output not in nccl-tests format: " + run.error().describe());
  if (run->out_of_bounds && *run->out_of_bounds > 0)
    return tl::unexpected(fmt::format("{:.0f} wrong result elements", *run->out_of_bounds));
  if (auto ranks = run->ranks(); ranks && *ranks < 2)
    return tl::unexpected(std::string("the benchmark ran as 1 rank: srun needs the MPI plugin (--srun-arg=--mpi=pmix)"));
  const parsers::NcclTestsRow* largest = nullptr;
  for (const auto& r : run->rows)
    if (r.out_of_place && (!largest || r.size >= largest->size)) largest = &r;
  double busbw = largest ? largest->out_of_place->busbw : run->avg_busbw.value_or(0);
  // The busbw column has two decimals: a slow pair's 0.014 GB/s would print as 0.01. From the
  // time column and nccl-tests' bus factor instead, where the collective and ranks are known.
  if (auto ranks = run->ranks(); largest && ranks && *ranks >= 2 && largest->out_of_place->time_us > 0) {
    const double n = static_cast<double>(*ranks);
    std::optional<double> factor;
    const std::string& c = run->collective;
    if (c.starts_with("all_reduce")) factor = 2 * (n - 1) / n;
    else if (c.starts_with("all_gather") || c.starts_with("reduce_scatter") || c.starts_with("alltoall")) factor = (n - 1) / n;
    else if (c.starts_with("broadcast") || c.starts_with("reduce") || c.starts_with("sendrecv")) factor = 1;
    if (factor) busbw = static_cast<double>(largest->size) / (largest->out_of_place->time_us * 1e3) * *factor;
  }
  if (largest && largest->out_of_place->wrong && *largest->out_of_place->wrong > 0)
    return tl::unexpected(fmt::format("{:.0f} wrong elements at the largest size", *largest->out_of_place->wrong));
  if (!(busbw > 0))
    return tl::unexpected(std::string("busbw 0: the two tasks did not run as one job (srun needs the MPI plugin: --srun-arg=--mpi=pmix)"));
  return busbw;
}

PairSearchResult run_pair_search(const PairSearchPlan& plan, std::FILE* log) {
  PairSearchResult res;
  res.summary.benchmark = plan.benchmark;
  // SIGINT, SIGTERM and SIGHUP only set a flag: sys::run_command stops its srun's process group
  // (SIGTERM first: srun cancels its step), the search ends.
  sys::StopSignals signals;
  const auto start = PairClock::now();
  double longest_round = 0;
  int round = 0;
  // Whether another round fits: the budget left must hold the longest round so far.
  auto fits = [&] {
    double left = plan.budget_s - pair_seconds_since(start);
    if (left <= 0 || (round > 0 && left < longest_round)) {
      res.summary.budget_spent = true;
      return false;
    }
    return true;
  };
  auto run_one = [&](const std::vector<NodePair>& pairs, const char* kind) {
    ++round;
    const auto t = PairClock::now();
    double left = plan.budget_s - pair_seconds_since(start);
    auto got = pairs_run_round(plan, pairs, round, std::max(1.0, std::min(plan.pair_timeout_s, left)));
    longest_round = std::max(longest_round, pair_seconds_since(t));
    std::string line;
    for (const auto& m : got)
      line += fmt::format(" {}+{}={}", m.pair.first, m.pair.second, m.busbw ? fmt::format("{:.3g}", *m.busbw) : std::string("-"));
    if (log) std::fprintf(log, "perfgap fanout --pairs: round %d (%s, %zu pair%s, %.1fs):%s\n", round, kind, pairs.size(),
                          pairs.size() == 1 ? "" : "s", pair_seconds_since(t), line.c_str());
    for (auto& m : got) res.runs.push_back(std::move(m));
  };
  for (const auto& pairs : cover_rounds(plan.nodes)) {
    if (sys::StopSignals::pending() || !fits()) break;
    run_one(pairs, "cover");
  }
  for (int c = 0; c < plan.max_confirm_rounds && !sys::StopSignals::pending() && !res.summary.budget_spent; ++c) {
    auto pairs = confirm_round(plan.nodes, res.runs, plan.rule);
    if (pairs.empty() || !fits()) break;
    run_one(pairs, "confirm");
  }
  res.summary.rounds = round;
  res.summary.wall_s = pair_seconds_since(start);
  res.signal = sys::StopSignals::pending();
  res.summary.interrupted = res.signal != 0;
  return res;
}

}  // namespace perfgap::slurm
