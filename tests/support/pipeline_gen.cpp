// Pipeline-parallel jobs of send/recv (profile_gen.hpp gen::pipeline_job): the generator's own
// schedule model, simulated op by op, each send matched to its receive by microbatch; the trace
// is what the simulation ran and the answers are the simulation's step times.
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "profile_gen.hpp"

namespace perfgap::gen {

namespace {

constexpr std::int64_t kPipeT0 = 1'000'000'000;  // every timeline starts 1 s in

std::int64_t pipe_ns(double ms) { return static_cast<std::int64_t>(std::llround(ms * 1e6)); }

// F, B, the optimizer; sends and receives of activations (forward) and gradients (backward); the
// stage's gradient AllReduce across its data-parallel copies.
enum class Act : std::uint8_t { F, B, Opt, SendF, RecvF, SendB, RecvB, AllReduce };
struct Step {
  Act act;
  int mb = 0;
};

// One stage's schedule of one iteration.
std::vector<Step> stage_schedule(const PipelineSpec& p, int s) {
  const int S = p.stages, M = p.microbatches;
  const bool first = s == 0, last = s == S - 1, even = s % 2 == 0;
  std::vector<Step> out;
  auto add = [&](Act a, int mb) { out.push_back({a, mb}); };
  // Two ops with one neighbour at one point: even stages send first.
  auto pair = [&](Step send, Step recv) {
    if (even) out.push_back(send), out.push_back(recv);
    else out.push_back(recv), out.push_back(send);
  };
  if (!p.one_f_one_b) {
    for (int m = 0; m < M; ++m) {
      if (!first) add(Act::RecvF, m);
      add(Act::F, m);
      if (!last) add(Act::SendF, m);
    }
    for (int m = M - 1; m >= 0; --m) {
      if (!last) add(Act::RecvB, m);
      add(Act::B, m);
      if (!first) add(Act::SendB, m);
    }
  } else {
    const int W = std::min(S - s - 1, M), R = M - W;
    for (int i = 0; i < W; ++i) {
      if (!first) add(Act::RecvF, i);
      add(Act::F, i);
      if (!last) add(Act::SendF, i);
    }
    if (R > 0 && !first) add(Act::RecvF, W);
    for (int i = 0; i < R; ++i) {
      const int fm = W + i, bm = i;
      add(Act::F, fm);
      if (!last) pair({Act::SendF, fm}, {Act::RecvB, bm});
      add(Act::B, bm);
      if (first) continue;
      if (i == R - 1) add(Act::SendB, bm);
      else pair({Act::SendB, bm}, {Act::RecvF, fm + 1});
    }
    for (int i = 0; i < W; ++i) {
      const int bm = R + i;
      if (!last) add(Act::RecvB, bm);
      add(Act::B, bm);
      if (!first) add(Act::SendB, bm);
    }
  }
  if (p.dp_allreduce) add(Act::AllReduce, 0);
  add(Act::Opt, 0);
  return out;
}

struct Ran {
  std::int64_t start, end;
  Act act;
  int peer;  // for sends and receives: the peer's rank
};
struct Simulated {
  std::vector<std::vector<Ran>> ran;                // per rank
  std::vector<std::vector<std::int64_t>> starts;    // per rank: each iteration's start, then the last one's end
};

Simulated simulate(const PipelineSpec& p, bool balanced) {
  const int S = p.stages, n = S * p.replicas;
  Simulated out;
  out.ran.resize(static_cast<std::size_t>(n));
  out.starts.resize(static_cast<std::size_t>(n));
  std::vector<std::vector<Step>> seq(static_cast<std::size_t>(n));
  std::vector<std::size_t> per_iter(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    const auto one = stage_schedule(p, r % S);
    per_iter[static_cast<std::size_t>(r)] = one.size();
    for (int i = 0; i < p.iterations; ++i) seq[static_cast<std::size_t>(r)].insert(seq[static_cast<std::size_t>(r)].end(), one.begin(), one.end());
  }
  auto dur = [&](int r, Act a) {
    const bool slow_one = r % S == p.slow_stage || r == p.slow_rank || std::find(p.slow_ranks.begin(), p.slow_ranks.end(), r) != p.slow_ranks.end();
    const double slow = !balanced && slow_one ? p.slow_factor : 1.0;
    return a == Act::F ? pipe_ns(p.fwd_ms * slow) : a == Act::B ? pipe_ns(p.bwd_ms * slow) : pipe_ns(p.opt_ms);
  };
  std::vector<std::size_t> pos(static_cast<std::size_t>(n), 0);
  std::vector<std::int64_t> t(static_cast<std::size_t>(n), 0);
  // (iteration, microbatch, forward?, sender) -> (rank, posted at) of the side that posted first.
  std::map<std::tuple<int, int, bool, int>, std::pair<int, std::int64_t>> waiting;
  // (iteration, stage) -> the copies that have posted its AllReduce, and when.
  std::map<std::pair<int, int>, std::vector<std::pair<int, std::int64_t>>> posted;
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < n; ++r) {
      auto& q = pos[static_cast<std::size_t>(r)];
      auto& now = t[static_cast<std::size_t>(r)];
      const auto& sq = seq[static_cast<std::size_t>(r)];
      while (q < sq.size()) {
        const auto st = sq[q];
        const int it = static_cast<int>(q / per_iter[static_cast<std::size_t>(r)]);
        if (st.act == Act::F || st.act == Act::B || st.act == Act::Opt) {
          out.ran[static_cast<std::size_t>(r)].push_back({now, now + dur(r, st.act), st.act, -1});
          now += dur(r, st.act);
          ++q;
          progress = true;
          continue;
        }
        if (st.act == Act::AllReduce) {
          // Starts when the stage's last copy has posted it, ends on every copy together.
          auto& in = posted[{it, r % S}];
          if (std::any_of(in.begin(), in.end(), [&](const auto& x) { return x.first == r; })) break;
          in.emplace_back(r, now);
          if (static_cast<int>(in.size()) < p.replicas) break;
          std::int64_t last = 0;
          for (const auto& [q, at] : in) last = std::max(last, at);
          const std::int64_t end = last + pipe_ns(p.allreduce_ms);
          for (const auto& [q, at] : in) {
            const auto qu = static_cast<std::size_t>(q);
            out.ran[qu].push_back({at, end, Act::AllReduce, -1});
            t[qu] = end;
            ++pos[qu];
          }
          progress = true;
          continue;
        }
        const bool fwd = st.act == Act::SendF || st.act == Act::RecvF;
        const bool send = st.act == Act::SendF || st.act == Act::SendB;
        const int peer = send ? (fwd ? r + 1 : r - 1) : (fwd ? r - 1 : r + 1);
        const auto key = std::make_tuple(it, st.mb, fwd, send ? r : peer);
        auto w = waiting.find(key);
        if (w == waiting.end()) {
          waiting[key] = {r, now};
          break;
        }
        if (w->second.first == r) break;  // posted before, the peer not yet there
        const auto [other, at] = w->second;
        waiting.erase(w);
        const std::int64_t end = std::max(now, at) + pipe_ns(p.transfer_ms);
        out.ran[static_cast<std::size_t>(r)].push_back({now, end, st.act, peer});
        const auto& oq = seq[static_cast<std::size_t>(other)][pos[static_cast<std::size_t>(other)]];
        out.ran[static_cast<std::size_t>(other)].push_back({at, end, oq.act, r});
        now = end;
        t[static_cast<std::size_t>(other)] = end;
        ++pos[static_cast<std::size_t>(other)];
        ++q;
        progress = true;
      }
    }
  }
  for (int r = 0; r < n; ++r) {
    const auto ru = static_cast<std::size_t>(r);
    if (pos[ru] != seq[ru].size()) throw std::logic_error("pipeline schedule deadlocks");
    // The ops ran in their schedule's order: an iteration starts with its first op.
    for (int i = 0; i < p.iterations; ++i) out.starts[ru].push_back(out.ran[ru][static_cast<std::size_t>(i) * per_iter[ru]].start);
    out.starts[ru].push_back(t[ru]);
  }
  return out;
}

double mean_step_ms(const Simulated& sim) {
  double sum = 0;
  for (const auto& st : sim.starts) sum += static_cast<double>(st.back() - st.front()) / static_cast<double>(st.size() - 1);
  return sum / static_cast<double>(sim.starts.size()) / 1e6;
}

}  // namespace

Scenario pipeline_job(const PipelineSpec& p, PipelineAnswer* answer) {
  const auto sim = simulate(p, false);
  if (answer) {
    answer->step_ms = mean_step_ms(sim);
    answer->balanced_step_ms = mean_step_ms(simulate(p, true));
  }
  Scenario s;
  const int n = p.stages * p.replicas;
  for (int r = 0; r < n; ++r) {
    const auto ru = static_cast<std::size_t>(r);
    const std::int64_t off = kPipeT0 + (ru < p.clock_offset_ms.size() ? pipe_ns(p.clock_offset_ms[ru]) : 0);
    Gpu gpu;
    gpu.device = r % 8;
    gpu.pid = 7100 + static_cast<std::uint32_t>(r);
    for (const auto& a : sim.ran[ru]) {
      Kernel k;
      k.start = a.start + off, k.end = a.end + off;
      if (a.act == Act::F || a.act == Act::B || a.act == Act::Opt) {
        k.name = a.act == Act::F ? "sm90_xmma_gemm_bf16_fwd_stage" : a.act == Act::B ? "sm90_xmma_gemm_bf16_bwd_stage" : "multi_tensor_apply_kernel";
      } else if (a.act == Act::AllReduce) {
        k.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
        k.stream = 21;
        k.collective = "allreduce";
        k.nelems = 1 << 24;
        k.group = p.replicas;  // the stage's data-parallel group
      } else {
        k.name = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
        k.stream = 20;
        k.collective = a.act == Act::SendF || a.act == Act::SendB ? "send" : "recv";
        k.nelems = 1 << 22;
        if (p.peers) k.peer = a.peer;
      }
      gpu.kernels.push_back(std::move(k));
    }
    std::stable_sort(gpu.kernels.begin(), gpu.kernels.end(), [](const Kernel& a, const Kernel& b) { return a.start < b.start; });
    const auto& st = sim.starts[ru];
    for (std::size_t i = 0; i + 1 < st.size(); ++i)
      s.ranges.push_back({st[i] + off, st[i + 1] + off, "ProfilerStep#" + std::to_string(i + 1), gpu.pid});
    s.gpus.push_back(std::move(gpu));
  }
  return s;
}

}  // namespace perfgap::gen
