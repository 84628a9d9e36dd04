// Profiles (nsys, Kineto): the findings of a job's digest (profile_model.hpp) per GPU and per
// iteration: the summary, the iterations, GPU idle (host-bound or not), copies, launch overhead,
// the job's NCCL environment and the comparison with a reference. The communication findings
// (profile.straggler, profile.exposed_comm) are profile_comm_findings.cpp's.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_set>
#include <utility>

#include "analyzers/analyzers.hpp"
#include "analyzers/profile_job.hpp"
#include "analyzers/profile_ranks.hpp"
#include "core/kb.hpp"
#include "facts/nccl.hpp"
#include "report/redact.hpp"
#include "analyzers/profile_model.hpp"

namespace perfgap::analyzers {

using namespace profile_model;

namespace {

std::string fmt_ms(double ns) { return fmt::format("{:.2f}", ms(ns)); }

std::string every(const Analysis& an) { return an.iterations ? "every iteration" : "the profile"; }

}  // namespace

namespace {

// "rank 1 GPU 1 (Tesla V100-SXM2-32GB)" -> "Tesla V100-SXM2-32GB"; "" where the label names none.
std::string gpu_model_of(std::string_view label) {
  const auto open = label.find(" (");
  const auto close = open == std::string_view::npos ? open : label.find(')', open);
  return close == std::string_view::npos ? std::string() : std::string(label.substr(open + 2, close - open - 2));
}

// The run a digest is of: its GPU models and its world size (profile.compare's same-job test).
void run_identity(const Digest& d, std::vector<std::string>& models, std::int64_t& world) {
  std::set<std::string> seen;
  for (const auto& g : d.gpus)
    if (auto m = gpu_model_of(g.label); !m.empty()) seen.insert(m);
  models.assign(seen.begin(), seen.end());
  world = recorded_world(d);
}

}  // namespace

ProfileFigures profile_figures(const Profile& profile, const ProfileOptions& o) {
  auto d = digest(profile, o);
  auto an = analyze(d, o);
  ProfileFigures f;
  run_identity(d, f.gpu_models, f.world);
  f.iterations = an.iterations;
  f.iteration_ms = ms(an.per_iter.len);  // the one iteration of every report (profile.iterations)
  f.iteration_ms_mean = ms(an.per_iter.len);
  f.compute_ms = ms(an.per_iter.compute);
  f.comm_all_ms = ms(an.per_iter.comm_all);
  f.exposed_all_ms = ms(an.per_iter.exposed_all);
  f.idle_ms = ms(an.per_iter.idle);
  for (int c = 0; c < kCommSlots; ++c) {
    f.present[c] = false;
    for (const auto& gt : an.gpus) f.present[c] = f.present[c] || (c > 0 && !gt.comm[c].empty());
    f.comm_ms[c] = ms(an.per_iter.comm[c]);
    f.exposed_ms[c] = ms(an.per_iter.exposed[c]);
  }
  return f;
}

namespace {

// profile.summary: the kernels per GPU, NCCL's and other communication libraries' time.
Finding summary_finding(const DigestFindingInputs& in) {
  const Digest& p = in.p;
  const Analysis& an = in.an;
  const std::string& source = in.source;
  const CommLibraries& libs = in.libs;
  Finding f = started("profile.summary", "workload", source);
  f.status = report::Status::pass;
  std::size_t kernels = 0, devices = 0;
  double kernel_ns = 0, nccl_ns = 0, span = 0;
  for (const auto& gt : an.gpus) {
    if (gt.acts == 0) continue;
    ++devices;
    kernels += gt.kernels;
    kernel_ns += gt.kernel_ns;
    nccl_ns += gt.nccl_ns;
    span = std::max(span, static_cast<double>(gt.last - gt.first));
  }
  // The communication libraries besides NCCL whose kernels were found (comm_kernels table).
  std::string libraries;
  for (int c = parsers::kCollCount; c < kCommSlots; ++c) {
    if (an.coll_kernels[c] == 0) continue;
    const std::string name = libs.slot_name(c);
    libraries += fmt::format("{}{} {} kernel{} ({:.2f} ms)", libraries.empty() ? "" : ", ", an.coll_kernels[c], name,
                             an.coll_kernels[c] == 1 ? "" : "s", ms(an.coll_ns[c]));
    f.metric("kernels." + library_key(name), static_cast<double>(an.coll_kernels[c]));
    f.metric("kernel_ms." + library_key(name), ms(an.coll_ns[c]));
  }
  f.title = fmt::format("{}: {} kernels on {} GPU{}, {:.2f} ms of kernels ({:.2f} ms NCCL{}) over {:.2f} ms", p.format, kernels, devices,
                        devices == 1 ? "" : "s", ms(kernel_ns), ms(nccl_ns), libraries.empty() ? "" : "; communication besides NCCL: " + libraries,
                        ms(span));
  std::size_t shown = 0;
  for (std::size_t g = 0; g < an.gpus.size(); ++g) {
    const auto& gt = an.gpus[g];
    if (gt.acts == 0) continue;
    if (++shown > 16) {
      f.add(source, fmt::format("... {} more GPUs", devices - 16));
      break;
    }
    f.add(source, fmt::format("{}: {} kernels, {:.2f} ms of kernels, {:.2f} ms NCCL, {} copies/sets, span {:.2f} ms", p.gpus[g].label, gt.kernels,
                              ms(gt.kernel_ns), ms(gt.nccl_ns), gt.acts - gt.kernels, ms(static_cast<double>(gt.last - gt.first))));
  }
  for (const auto& n : p.notes) f.add(source, n);
  f.metric("kernels", static_cast<double>(kernels));
  f.metric("devices", static_cast<double>(devices));
  f.metric("gpu_kernel_ms", ms(kernel_ns));
  f.metric("nccl_kernel_ms", ms(nccl_ns));
  f.metric("span_ms", ms(span));
  // The job's world size where the trace records it: what compare tells one job from another by
  // (with the GPU models of the evidence lines).
  if (const auto world = recorded_world(p); world > 0) f.metric("world_size", static_cast<double>(world));
  f.metric("api_calls", static_cast<double>(p.api_calls));
  return f;
}

// The trace's own step number (ProfilerStep#N) of each row of the iteration table: the row j
// of every GPU that has one names the same step; empty when any row has none or GPUs disagree
// (the rows are then numbered 1..N).
std::vector<std::int64_t> iteration_step_numbers(const Analysis& an) {
  std::vector<std::int64_t> out(an.by_index.size(), -1);
  for (const auto& gt : an.gpus)
    for (std::size_t j = 0; j < gt.windows && j < gt.wins.size() && j < out.size(); ++j) {
      const std::int64_t n = gt.wins[j].step;
      if (n < 0 || (out[j] >= 0 && out[j] != n)) return {};
      out[j] = n;
    }
  if (std::any_of(out.begin(), out.end(), [](std::int64_t n) { return n < 0; })) return {};
  return out;
}

// profile.iterations: how iterations were found, the report's iteration and a row per iteration.
Finding iterations_finding(const DigestFindingInputs& in) {
  const Digest& p = in.p;
  const Analysis& an = in.an;
  const auto& it = an.per_iter;
  const std::string& source = in.source;
  const ProfileOptions& o = in.o;
  const CommLibraries& libs = in.libs;
  const auto& colls = in.colls;
  Finding f = started("profile.iterations", "workload", source);
  if (!an.iterations) {
    f.status = report::Status::skip;
    f.title = !o.iteration_range.empty()
                  ? fmt::format("no range named '{}' holds GPU work (--iteration-range); figures are over the whole profile", o.iteration_range)
                  : "no iterations found (no ProfilerStep#N or step-like NVTX range, no repeating kernel sequence): figures are over the whole profile";
    f.add(source, fmt::format("{} host ranges, {} GPUs", p.ranges, an.gpus_with_windows));
    f.fix = framework_fix(p.framework.framework, FixTopic::iterations);
    f.add(source, framework_evidence(p.framework));
    f.metric("iterations", 0);
  } else {
    f.status = report::Status::pass;
    // One iteration for the whole report: the mean window over the GPUs and their iterations,
    // the one every per-iteration figure (communication, exposed, idle, the straggler's
    // share) is a part of; the median window is said beside it.
    f.title = fmt::format("{} iterations found by {}; {:.2f} ms per iteration (mean; median window {:.2f} ms)", an.iteration_count, an.method, ms(it.len),
                          an.iteration_ms_median);
    f.metric("iterations", static_cast<double>(an.iteration_count));
    f.metric("iteration_ms", ms(it.len));
    f.metric("iteration_ms_mean", ms(it.len));
    f.metric("iteration_ms_median", an.iteration_ms_median);
    f.metric("compute_ms_per_iter", ms(it.compute));
    f.metric("memcpy_ms_per_iter", ms(it.copy));
    f.metric("gpus", static_cast<double>(an.gpus_with_windows));
    for (std::size_t g = 0; g < an.gpus.size(); ++g) {
      const auto& gt = an.gpus[g];
      if (gt.windows == 0) continue;
      const double l = gt.total.len, cpt = gt.total.compute;
      double k = static_cast<double>(gt.windows);
      f.metric("iterations." + p.gpus[g].key, k);
      f.metric("iteration_ms_mean." + p.gpus[g].key, ms(l / k));
      f.metric("compute_ms_per_iter." + p.gpus[g].key, ms(cpt / k));
    }
    const auto steps = iteration_step_numbers(an);
    std::vector<std::string> head = {steps.empty() ? "iter" : "step", "ms", "compute"};
    for (int c : colls) head.emplace_back(libs.slot_name(c));
    const bool waits = an.xr.present && ms(it.wait) >= 0.005;
    head.emplace_back("exposed");
    if (waits) head.emplace_back("waiting");
    for (const char* h : {"idle", "memcpy"}) head.emplace_back(h);
    f.table.push_back(head);
    f.table_always = true;
    for (std::size_t j = 0; j < an.by_index.size(); ++j) {
      const auto& s = an.by_index[j];
      std::vector<std::string> row = {steps.empty() ? std::to_string(j + 1) : "#" + std::to_string(steps[j]), fmt_ms(s.len), fmt_ms(s.compute)};
      for (int c : colls) row.push_back(fmt_ms(s.comm[c]));
      row.push_back(fmt_ms(s.exposed_all));
      if (waits) row.push_back(fmt_ms(s.wait));
      row.push_back(fmt_ms(s.idle));
      row.push_back(fmt_ms(s.copy));
      f.table.push_back(std::move(row));
    }
    f.add(source, fmt::format("the iteration of this report is the mean window over {} GPU{} and their iterations, {:.2f} ms: every per-iteration figure "
                              "(communication, exposed, idle, copies, the straggler's share) is over it; the median window is {:.2f} ms",
                              an.gpus_with_windows, an.gpus_with_windows == 1 ? "" : "s", ms(it.len), an.iteration_ms_median));
    f.add(source, fmt::format("per iteration, mean of {} GPU{}: {:.2f} ms, compute {:.2f} ms, communication {:.2f} ms ({:.2f} ms exposed), idle {:.2f} ms, memcpy/memset {:.2f} ms",
                              an.gpus_with_windows, an.gpus_with_windows == 1 ? "" : "s", ms(it.len), ms(it.compute), ms(it.comm_all),
                              ms(it.exposed_all), ms(it.idle), ms(it.copy)));
  }
  return f;
}

// Idle and launch shares of a handful of kernels (a startup-only capture) say nothing about
// the job: below the floor both findings skip instead of a host-bound verdict.
// A whole-graph execution (nsys --cuda-graph-trace=graph) holds an unknown number of kernels:
// such a profile is judged.
bool too_few_kernels_to_judge(Finding& f, const DigestFindingInputs& in) {
  std::size_t all_kernels = 0;
  for (const auto& gt : in.an.gpus) all_kernels += gt.kernels;
  if (all_kernels >= kMinKernelsToJudge || in.p.graphs) return false;
  f.status = report::Status::skip;
  f.title = fmt::format("too few kernels to judge: {} kernel{} in the profile (at least {}); profile steady-state iterations, not only the start",
                        all_kernels, all_kernels == 1 ? "" : "s", kMinKernelsToJudge);
  f.add(in.source, fmt::format("{} kernels, {} host API calls", all_kernels, in.p.api_calls), fmt::format(">= {} kernels", kMinKernelsToJudge));
  return true;
}

// A filtered or sampled trace (sampled_trace_evidence): profile.gpu_idle's and
// profile.launch_bound's figures are of what it holds, no verdict. True where it skipped `f`.
bool sampled_trace_skip(Finding& f, const DigestFindingInputs& in, const std::string& what) {
  double held = 0;
  const std::string why = sampled_trace_evidence(in.p, &held);
  if (why.empty()) return false;
  f.status = report::Status::skip;
  f.title = fmt::format("{} in what the trace holds, not judged: a filtered or sampled trace ({:.1f}% of the host calls its correlation ids "
                        "number are in it): left-out GPU work reads as idle, left-out host calls as host stalls",
                        what, held);
  f.add(in.source, why, "a complete trace (every host call and GPU activity of the capture)");
  f.fix = "profile a short window whole (torch.profiler's schedule(wait=, warmup=, active=) keeps a few steps complete) instead of filtering or "
          "sampling the trace's events";
  return true;
}

// profile.gpu_idle: the share of the iteration the GPU runs nothing, and how much of it waits on the host.
Finding gpu_idle_finding(const DigestFindingInputs& in) {
  const Digest& p = in.p;
  const Analysis& an = in.an;
  const auto& it = an.per_iter;
  const std::string& source = in.source;
  Finding f = started("profile.gpu_idle", "workload", source);
  if (too_few_kernels_to_judge(f, in)) return f;
  double idle = pct(it.idle, it.len), host = pct(it.host_idle, it.len);
  // Left-out kernels read as idle, left-out launches as host-bound: the figures are kept, no verdict.
  if (sampled_trace_skip(f, in, fmt::format("GPU idle {:.1f}% {} (host-bound {:.1f}%)", idle, iteration_words(an), host))) {
    f.metric("idle_pct", idle);
    f.metric("idle_ms_per_iter", ms(it.idle));
    return f;
  }
  f.metric("idle_pct", idle);
  f.metric("host_bound_pct", host);
  f.metric("idle_ms_per_iter", ms(it.idle));
  f.metric("memcpy_ms_per_iter", ms(it.copy));
  f.status = idle > 10 ? report::Status::warn : report::Status::pass;
  f.title = fmt::format("GPU idle {:.1f}% {} ({:.2f} ms: host-bound {:.1f}%, other {:.1f}%){}", idle, iteration_words(an), ms(it.idle), host,
                        std::max(0.0, idle - host), idle > 10 ? " (> 10%)" : "");
  if (p.api_calls == 0) f.add(source, "no host launch calls in the profile: idle cannot be split into host-bound and other (all counted as other)");
  for (std::size_t g = 0, shown = 0; g < an.gpus.size(); ++g) {
    const auto& gt = an.gpus[g];
    if (gt.windows == 0) continue;
    const double i = gt.total.idle, h = gt.total.host_idle, l = gt.total.len;
    f.metric("idle_pct." + p.gpus[g].key, pct(i, l));
    f.metric("host_bound_pct." + p.gpus[g].key, pct(h, l));
    if (++shown <= 8) f.add(source, fmt::format("{}: idle {:.1f}%, host-bound {:.1f}%", p.gpus[g].label, pct(i, l), pct(h, l)), "<= 10% idle");
  }
  if (f.status == report::Status::warn) {
    // Idle that is not host-bound ends with work launched before the gap began: the host (and its
    // data loader) was ahead, and the GPU waited on a dependency.
    f.fix = host > idle / 2 ? "the GPU waits for the host to launch work: see profile.launch_bound"
            : p.api_calls == 0
                ? "the GPU waits on something the trace does not show (no launch calls recorded: launches, synchronisation, copies, other "
                  "ranks): record the host's CUDA calls (Kineto's cuda_runtime, nsys --trace=cuda) to tell them apart"
                : "the GPU waits with its next work already launched: on a dependency, not on the host or its data loader (a stream or event "
                  "wait, a copy, a collective waiting for another rank: profile.straggler and profile.exposed_comm price those): look at "
                  "what the kernel after each gap waited for in the timeline";
    f.impact = fmt::format("{:.1f}% of {} the GPU does nothing", idle, every(an));
  }
  return f;
}

// profile.copies' fix for the class of copies that takes the most time, in the framework's words.
std::string copies_fix(int top, parsers::Framework fw) {
  switch (top) {
    case kH2dPageable:
    case kD2hPageable: return framework_fix(fw, FixTopic::copies_pageable);
    case kD2hPinned:
    case kD2hManaged:
    case kD2h: return framework_fix(fw, FixTopic::copies_d2h);
    case kD2d: return framework_fix(fw, FixTopic::copies_d2d);
    case kP2p:
      return framework_fix(fw, FixTopic::copies_p2p) +
             "check nvidia-smi topo -m / -p2p r for NVLink or P2P over PCIe, and perfgap check (pcie.link, iommu.dma_mode); between ranks use "
             "NCCL collectives instead of copies through the host";
    case kMemset: return framework_fix(fw, FixTopic::copies_memset);
    default: return framework_fix(fw, FixTopic::copies_overlap);
  }
}

// profile.copies: memory copies and memsets by class, and the time the GPU does nothing else.
Finding copies_finding(const DigestFindingInputs& in) {
  const Analysis& an = in.an;
  const auto& it = an.per_iter;
  const std::string& source = in.source;
  Finding f = started("profile.copies", "workload", source);
  if (too_few_kernels_to_judge(f, in)) return f;
  std::size_t count = 0;
  for (auto n : an.copy_count) count += n;
  const double share = pct(it.copy, it.len), bare = pct(it.copy_bare, it.len);
  f.metric("copies", static_cast<double>(count));
  f.metric("copy_ms_per_iter", ms(it.copy));
  f.metric("copy_pct_of_iter", share);
  f.metric("copy_no_kernel_pct_of_iter", bare);
  if (count == 0) {
    f.status = report::Status::pass;
    f.title = "no memory copies or memsets in the profile";
  } else {
    // The classes by time, most first (per iteration; over the profile without iterations).
    std::vector<int> order;
    for (int k = 0; k < kCopyClasses; ++k)
      if (an.copy_count[k]) order.push_back(k);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return it.copy_by[a] > it.copy_by[b]; });
    std::string most;
    for (std::size_t i = 0; i < order.size() && i < 3; ++i)
      most += fmt::format("{}{} {:.2f} ms", i ? ", " : "", kCopyClassName[order[i]], ms(it.copy_by[order[i]]));
    f.status = bare > 10 ? report::Status::warn : report::Status::pass;
    f.title = fmt::format("memory copies {:.1f}% {} ({:.2f} of {:.2f} ms), {:.1f}% with no kernel running{}: {}", share,
                          iteration_words(an), ms(it.copy), ms(it.len), bare, bare > 10 ? " (> 10%)" : "", most);
    for (int k : order) {
      const auto key = std::string(kCopyClassKey[k]);
      f.metric("copy_ms_per_iter." + key, ms(it.copy_by[k]));
      f.metric("copies." + key, static_cast<double>(an.copy_count[k]));
      std::string bytes;
      if (an.copy_bytes[k]) {
        bytes = fmt::format(", {} in all", size_text(static_cast<double>(an.copy_bytes[k])));
        f.metric("bytes." + key, static_cast<double>(an.copy_bytes[k]));
      }
      f.add(source,
            fmt::format("{}: {:.2f} ms {} ({:.1f}%), {} cop{} in the profile{}", kCopyClassName[k], ms(it.copy_by[k]),
                        iteration_words(an), pct(it.copy_by[k], it.len), an.copy_count[k], an.copy_count[k] == 1 ? "y" : "ies", bytes),
            "copies off the critical path");
    }
    bool host_unknown = false;
    for (int k : {kH2d, kD2h}) host_unknown = host_unknown || an.copy_count[k] > 0;
    if (host_unknown)
      f.add(
          source,
          "the profile does not say whether some host copies used pageable or pinned memory (nsys srcKind/dstKind, Kineto's memcpy names)");
    if (f.status == report::Status::warn) {
      f.fix = copies_fix(order.front(), in.p.framework.framework);
      f.add(source, framework_evidence(in.p.framework));
      f.impact = fmt::format("{:.1f}% of {} the GPU only copies memory, no kernel running", bare, every(an));
    }
  }
  return f;
}

// The host's synchronising calls beside the launches (profile.launch_bound): the share of
// launches they follow, their evidence and metrics; the words for the title when about one
// follows every other launch or more (the GPU then waits on the host's syncs, not on slow
// launches); empty otherwise.
std::string launch_bound_sync_words(Finding& f, const DigestFindingInputs& in, std::size_t kernels) {
  const Digest& p = in.p;
  const Analysis& an = in.an;
  if (p.sync_calls == 0) return {};
  const double per_launch = static_cast<double>(p.sync_calls) / static_cast<double>(std::max<std::size_t>(1, an.launches));
  double kernel_ns = 0;
  for (const auto& gt : an.gpus) kernel_ns += gt.kernel_ns;
  const double mean_kernel_ms = kernels ? kernel_ns / static_cast<double>(kernels) / 1e6 : 0;
  f.metric("sync_calls", static_cast<double>(p.sync_calls));
  f.metric("sync_ms", ms(static_cast<double>(p.sync_ns)));
  f.metric("syncs_per_launch", per_launch);
  f.add(in.source, fmt::format("{} host calls that wait for the GPU (cudaStreamSynchronize/cuStreamSynchronize, cudaDeviceSynchronize/cuCtxSynchronize, "
                               "cudaEventSynchronize, synchronous cudaMemcpy) took {:.1f} ms: {:.2f} per kernel launch; kernels average {:.3f} ms",
                               p.sync_calls, ms(static_cast<double>(p.sync_ns)), per_launch, mean_kernel_ms),
        "well under one per launch");
  if (per_launch < 0.5) return {};
  return fmt::format("the host synchronises with the GPU after {} ({} synchronising calls, {:.1f} ms, for {} kernel launches; kernels average {:.3f} ms)",
                     per_launch >= 0.8 ? "(nearly) every kernel" : "most kernels", p.sync_calls, ms(static_cast<double>(p.sync_ns)), an.launches,
                     mean_kernel_ms);
}

// The host stalls of the GPUs with iterations: their share of the iteration (mean over GPUs, as
// per_iter's host_idle), how many in the whole profile, the longest (ns).
// Over the whole profile, where the stalls' time went (StallTime).
struct HostStalls : StallTime {
  double pct = 0;
  std::size_t count = 0;
  std::int64_t longest = 0;
};
HostStalls host_stalls(const Analysis& an) {
  HostStalls s;
  static_cast<StallTime&>(s) = stall_time(an);
  s.pct = pct(an.per_iter.host_stall, an.per_iter.len);
  for (const auto& gt : an.gpus) s.count += gt.host_stalls, s.longest = std::max(s.longest, gt.host_stall_longest);
  return s;
}

// A duration in seconds from 1 s up, else in milliseconds: "6.53 s", "561.2 ms".
std::string span_text(double ns) { return ns >= 1e9 ? fmt::format("{:.2f} s", ns / 1e9) : fmt::format("{:.1f} ms", ms(ns)); }

// Where the host stalls' time went (profile.launch_bound): an evidence line and metrics for the
// host runtime/driver calls the launching thread sat in during them, and the title's words
// ("; the host sat in cudaFree 6.53 s, ... (92% of the stalls' 12.85 s)"); "" where calls hold
// under a millisecond of them.
std::string stall_call_words(Finding& f, const std::string& source, const HostStalls& st) {
  if (st.ns <= 0 || st.in_calls < kHostStallNs || st.calls.empty()) return {};
  const double share = pct(static_cast<double>(st.in_calls), static_cast<double>(st.ns));
  f.metric("host_stall_in_calls_pct", share);
  std::string all, top;
  for (std::size_t i = 0; i < st.calls.size(); ++i) {
    const auto& [n, t] = st.calls[i];
    all += fmt::format("{}{} {}", i ? ", " : "", n, span_text(static_cast<double>(t)));
    if (i < 3) top += fmt::format("{}{} {}", i ? ", " : "", n, span_text(static_cast<double>(t)));
  }
  f.add(source, fmt::format("of the host stalls' {} in the profile, the launching thread spent {} ({:.1f}%) inside CUDA runtime/driver calls of {:.1f} ms or "
                            "longer: {}",
                            span_text(static_cast<double>(st.ns)), span_text(static_cast<double>(st.in_calls)), share,
                            ms(static_cast<double>(parsers::kSlowHostCallNs)), all),
        "host stalls outside CUDA calls (input, Python)");
  return fmt::format("; the host sat in {} ({:.0f}% of the stalls' {})", top, share, span_text(static_cast<double>(st.ns)));
}

// The longest launch call, where it is far beyond the median (a first launch loading its module
// takes seconds; p50 hides it): 10 ms or more and 1,000 times the p50 or more (the public
// traces' longest run 1.1 to 7 ms beside p50s of 4 to 6 us: not said). The title's words, ""
// otherwise.
std::string longest_launch_words(Finding& f, const Analysis& an, double api50_us) {
  if (an.api_ns.empty()) return {};
  const auto longest = static_cast<double>(an.api_ns.back().first);
  if (longest < 10e6 || longest < 1000 * api50_us * 1e3) return {};
  f.metric("launch_api_ms_max", ms(longest));
  return fmt::format(" (the longest {})", span_text(longest));
}


// profile.launch_bound: launch calls and delays, and the share of the iteration the GPU waits on launches.
Finding launch_bound_finding(const DigestFindingInputs& in) {
  const Digest& p = in.p;
  const Analysis& an = in.an;
  const auto& it = an.per_iter;
  const std::string& source = in.source;
  Finding f = started("profile.launch_bound", "workload", source);
  if (too_few_kernels_to_judge(f, in)) {
    // skipped: title and evidence say why
  } else if (an.launches == 0) {
    f.status = report::Status::skip;
    f.title =
        an.graph_kernels > 0
            ? fmt::format(
                  "all {} kernels joined to a launch call ran under CUDA graphs (cudaGraphLaunch): no kernel launched on its own to time",
                  an.graph_kernels)
        : p.api_calls == 0 ? "no host launch calls in the profile (nsys --trace=cuda records them; Kineto cuda_runtime events)"
                           : "no kernel could be joined to its launch call by correlation id";
    f.add(source, fmt::format("{} host API calls, {} kernels joined to their own launch call, {} to a CUDA graph launch", p.api_calls,
                              an.launches, an.graph_kernels));
  } else if (sampled_trace_skip(f, in, fmt::format("GPU waits on the host {:.1f}% {}", pct(it.host_idle, it.len), iteration_words(an)))) {
    f.metric("host_bound_pct", pct(it.host_idle, it.len));
  } else {
    std::size_t kernels = 0;
    for (const auto& gt : an.gpus) kernels += gt.kernels;
    double api50 = hist_percentile_us(an.api_ns, 0.5);
    double d50 = hist_percentile_us(an.delay_ns, 0.5), d99 = hist_percentile_us(an.delay_ns, 0.99);
    double short_pct = pct(static_cast<double>(an.short_kernels), static_cast<double>(an.launches));
    double host = pct(it.host_idle, it.len);
    const double graph_pct = pct(static_cast<double>(an.graph_kernels), static_cast<double>(kernels));
    f.metric("launch_api_us_p50", api50);
    f.metric("launch_delay_us_p50", d50);
    f.metric("launch_delay_us_p99", d99);
    f.metric("short_kernel_pct", short_pct);
    f.metric("host_bound_pct", host);
    f.metric("graph_kernel_pct", graph_pct);
    f.metric("kernels_per_iter", an.iterations ? static_cast<double>(kernels) / static_cast<double>(std::max<std::size_t>(1, an.gpus_with_windows)) /
                                                     static_cast<double>(std::max<std::size_t>(1, an.iteration_count))
                                               : static_cast<double>(kernels));
    f.status = host > 10 ? report::Status::warn : report::Status::pass;
    const std::string sync = launch_bound_sync_words(f, in, kernels);
    // Host stalls (host-bound gaps of a millisecond or more): the host busy elsewhere, not
    // launching slowly. Said apart so that a profile of one long stall (a JIT compile, a data
    // load) is not read as launch overhead with CUDA graphs for its fix.
    const HostStalls st = host_stalls(an);
    const bool stalls = st.count > 0 && st.pct >= 0.05;
    const bool mostly_stalls = stalls && st.pct >= host / 2;
    if (stalls) {
      f.metric("host_stall_pct", st.pct);
      f.metric("host_stalls", static_cast<double>(st.count));
      f.metric("host_stall_longest_ms", ms(static_cast<double>(st.longest)));
    }
    const std::string in_calls = stalls ? stall_call_words(f, source, st) : "";
    // The stalls held mostly inside CUDA calls (allocation, module loading): their fix, not the data loader's.
    const bool calls_hold = st.calls_hold();
    const std::string split =
        stalls ? fmt::format(": {:.1f}% in host stalls of {:.0f} ms or more ({} in the profile, the longest {:.2f} ms{}), {:.1f}% between launches",
                             st.pct, ms(static_cast<double>(kHostStallNs)), st.count, ms(static_cast<double>(st.longest)), in_calls, std::max(0.0, host - st.pct))
               : "";
    // A long launch delay where the GPU hardly waits is the host queueing work ahead of it (a
    // GPU-bound job), not slow launches: said where it is read.
    const std::string queued = d50 >= 1000 && host < 5 ? " (the host launches this far ahead of the GPU: a GPU-bound job, not slow launches)" : "";
    f.title = fmt::format(
        "GPU waits on {} {:.1f}% {}{}{}{}; launch call p50 {:.1f} us{}, launch delay p50 {:.1f} us / p99 {:.1f} us{}, {:.1f}% of kernels shorter than their "
        "launch call{}",
        stalls ? "the host" : "kernel launches", host, iteration_words(an), host > 10 ? " (> 10%)" : "", split, sync.empty() ? "" : ": " + sync, api50,
        longest_launch_words(f, an, api50), d50, d99, queued, short_pct,
        an.graph_kernels ? fmt::format("; {:.1f}% of kernels ran under CUDA graphs (not in these launch figures)", graph_pct) : "");
    f.add(source, fmt::format("{} of {} kernels joined to their launch call by correlation id", an.launches, kernels));
    if (stalls)
      f.add(source,
            fmt::format("a host-bound gap (the GPU idle until the host launched its next work) of {:.0f} ms or more is a host stall: the host did "
                        "something else that long (input, compilation, Python between steps); shorter ones are the launch overhead of a "
                        "framework's dispatch and launch calls",
                        ms(static_cast<double>(kHostStallNs))));
    if (an.graph_kernels)
      f.add(
          source,
          fmt::format(
              "{} kernels joined to a CUDA graph launch (cudaGraphLaunch) are counted apart: one launch call starts all of a graph's kernels",
              an.graph_kernels));
    if (f.status == report::Status::warn && mostly_stalls && calls_hold) {
      f.fix = host_call_stall_fix(p.framework.framework, st.call_names());
      f.add(source, framework_evidence(p.framework));
      f.impact = fmt::format("{:.1f}% of {} the GPU waits for the host: {:.1f}% in host stalls ({:.0f}% of their time inside CUDA calls), {:.1f}% for the next launch",
                             host, every(an), st.pct, pct(static_cast<double>(st.in_calls), static_cast<double>(st.ns)), std::max(0.0, host - st.pct));
    } else if (f.status == report::Status::warn && mostly_stalls) {
      f.fix = framework_fix(p.framework.framework, FixTopic::host_stall);
      f.add(source, framework_evidence(p.framework));
      f.impact = fmt::format("{:.1f}% of {} the GPU waits for the host: {:.1f}% in host stalls, {:.1f}% for the next launch", host, every(an), st.pct,
                             std::max(0.0, host - st.pct));
    } else if (f.status == report::Status::warn && !sync.empty()) {
      f.fix = framework_fix(p.framework.framework, FixTopic::launch_sync);
      f.add(source, framework_evidence(p.framework));
      f.impact = fmt::format("{:.1f}% of {} the GPU waits for the host, which waits on the GPU", host, every(an));
    } else if (f.status == report::Status::warn) {
      f.fix = framework_fix(p.framework.framework, FixTopic::launch_overhead);
      f.add(source, framework_evidence(p.framework));
      f.impact = fmt::format("{:.1f}% of {} the GPU waits for the next launch", host, every(an));
    }
  }
  return f;
}

// profile.env: the NCCL settings the profiled job ran with (nsys keeps its environment).
Finding env_finding(const DigestFindingInputs& in) {
  const Digest& p = in.p;
  const std::string& source = in.source;
  Finding f = started("profile.env", "network", source);
  if (!p.env_present) {
    f.status = report::Status::skip;
    f.title = "the profile holds no environment of the profiled job (nsys exports keep it in TARGET_INFO_SYSTEM_ENV; Kineto traces do not record it)";
  } else {
    std::map<std::string, std::string> nccl;
    for (const auto& [k, v] : p.env)
      if (k.rfind("NCCL_", 0) == 0 && k != "NCCL_VERSION" && !nccl.count(k)) nccl[k] = v;  // NCCL_VERSION: the image's label, not a setting
    auto get = [&](const char* k) -> std::optional<std::string> {
      auto i = nccl.find(k);
      if (i == nccl.end() || i->second.empty()) return std::nullopt;
      return i->second;
    };
    // The switches and their values as nccl.env.disabled_paths reads them (one table); the
    // profile cannot tell whether RDMA devices or NVSwitches were there, so each counts.
    std::vector<std::string> off, forced;
    for (const auto& sw : facts::nccl_fast_path_switches()) {
      const std::string name(sw.name);
      if (auto v = get(name.c_str()); v && sw.switches_off(*v)) off.push_back(name + "=" + report::redact(name, *v));
    }
    for (const char* k : {"NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_BUFFSIZE"})
      if (auto v = get(k)) forced.push_back(std::string(k) + "=" + *v);
    for (const auto& [k, v] : nccl) f.add(source + " TARGET_INFO_SYSTEM_ENV", k + "=" + report::redact(k, v));
    std::string driver, sockets;
    for (const auto& [k, v] : p.system) {
      if (k == "NvDriverVersion" && driver.empty()) driver = v;
      if (k == "CpuSockets" && sockets.empty()) sockets = v;
      f.add(source + " TARGET_INFO_SYSTEM_ENV", k + "=" + v);
    }
    f.metric("nccl_settings", static_cast<double>(nccl.size()));
    if (!sockets.empty()) f.metric("cpu_sockets", std::atof(sockets.c_str()));
    std::string sys = fmt::format("driver {}, {} CPU socket{}", driver.empty() ? "unknown" : driver, sockets.empty() ? "?" : sockets,
                                  sockets == "1" ? "" : "s");
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
      return s;
    };
    if (!off.empty()) {
      f.status = report::Status::warn;
      f.title = fmt::format("the profiled job ran with NCCL fast paths switched off: {} ({})", join(off), sys);
      f.fix = "remove these debugging switches from the job environment (they move traffic off NVLink, shared memory or RDMA); see nccl.env.disabled_paths";
      f.impact = "collectives over slower transports: more exposed communication";
    } else {
      f.status = report::Status::pass;
      f.title = nccl.empty() ? fmt::format("the profiled job set no NCCL_* variable ({})", sys)
                             : fmt::format("the profiled job's {} NCCL_* setting{} switch{} off no fast path{} ({})", nccl.size(), nccl.size() == 1 ? "" : "s",
                                           nccl.size() == 1 ? "es" : "", forced.empty() ? "" : "; forced tuning: " + join(forced), sys);
    }
  }
  return f;
}

// profile.compare: the iteration's parts against a reference profile's (--reference).
Finding compare_finding(const DigestFindingInputs& in) {
  const Analysis& an = in.an;
  const auto& it = an.per_iter;
  const std::string& source = in.source;
  const ProfileOptions& o = in.o;
  const CommLibraries& libs = in.libs;
  const auto& colls = in.colls;
  const auto& r = *o.reference;
  Finding f = started("profile.compare", "workload", source);
  if (!r.iterations || !an.iterations) {
    f.status = report::Status::skip;
    f.title = fmt::format("no iterations in {}: per-iteration figures cannot be compared", !an.iterations ? source : o.reference_source);
  } else {
    f.table.push_back({"", "reference ms", "measured ms", "difference ms"});
    auto line = [&](const std::string& what, double ref, double mea) {
      f.table.push_back({what, fmt::format("{:.2f}", ref), fmt::format("{:.2f}", mea), fmt::format("{:+.2f}", mea - ref)});
      f.add(source, fmt::format("{} {:.2f} -> {:.2f} ms per iteration ({:+.2f} ms{})", what, ref, mea, mea - ref,
                                ref > 0 ? fmt::format(", {:+.1f}%", 100.0 * (mea - ref) / ref) : ""));
    };
    double mea_iter = ms(it.len);
    line("iteration", r.iteration_ms, mea_iter);
    line("compute", r.compute_ms, ms(it.compute));
    for (int c = 1; c < kCommSlots; ++c) {
      bool here = std::find(colls.begin(), colls.end(), c) != colls.end();
      if (!here && !r.present[c]) continue;
      line(libs.slot_name(c), r.comm_ms[c], ms(it.comm[c]));
    }
    line("exposed communication", r.exposed_all_ms, ms(it.exposed_all));
    line("idle", r.idle_ms, ms(it.idle));
    double ratio = mea_iter > 0 ? r.iteration_ms / mea_iter : 0;
    f.metric("reference_iteration_ms", r.iteration_ms);
    f.metric("iteration_ms", mea_iter);
    f.metric("pct_of_reference", 100 * ratio);
    for (int c = 1; c < kCommSlots; ++c)
      if (r.present[c] || std::find(colls.begin(), colls.end(), c) != colls.end()) {
        std::string n = libs.slot_name(c);
        f.metric("reference_ms." + n, r.comm_ms[c]);
        f.metric("measured_ms." + n, ms(it.comm[c]));
      }
    f.status = ratio < o.threshold ? report::Status::fail : report::Status::pass;
    f.title = fmt::format("iteration {:.2f} ms against {:.2f} ms in {} ({:.1f}% of the reference pace{})", mea_iter, r.iteration_ms, o.reference_source,
                          100 * ratio, ratio < o.threshold ? fmt::format(", below {:.0f}%", 100 * o.threshold) : "");
    // A reference of another job (other GPUs, another world size) says how two runs differ,
    // not that this one regressed: no verdict, the rows kept.
    std::vector<std::string> models;
    std::int64_t world = -1;
    run_identity(in.p, models, world);
    std::vector<std::string> other;
    if (!models.empty() && !r.gpu_models.empty() && models != r.gpu_models)
      other.push_back(fmt::format("GPUs {} here, {} in the reference", fmt::join(models, " + "), fmt::join(r.gpu_models, " + ")));
    if (world > 0 && r.world > 0 && world != r.world) other.push_back(fmt::format("world size {} here, {} in the reference", world, r.world));
    if (!other.empty()) {
      f.status = report::Status::skip;
      f.title = fmt::format("the reference is another job ({}): iteration {:.2f} ms against {:.2f} ms in {} compares two setups, not a regression",
                            fmt::join(other, "; "), mea_iter, r.iteration_ms, o.reference_source);
      for (const auto& w : other) f.add(o.reference_source, w, "the same GPUs and world size");
    }
    if (f.status == report::Status::fail) {
      f.fix = "the rows above say where the time went: a collective that grew points to the network (profile.exposed_comm, perfgap sweep), compute that grew to the GPUs or clocks, idle that grew to the host (profile.launch_bound)";
      f.impact = fmt::format("{:.2f} ms more per iteration than the reference", mea_iter - r.iteration_ms);
    }
  }
  return f;
}
// The findings of a profile's digest (one profile, or a job's ranks absorbed in order).
std::vector<Finding> digest_findings(Digest& p, const std::string& source, const ProfileOptions& o) {
  auto an = analyze(p, o);
  const CommLibraries libs(o);
  DigestFindingInputs in{p, an, source, o, libs, {}, false};
  for (int c = 1; c < kCommSlots; ++c)
    for (const auto& gt : an.gpus)
      if (!gt.comm[c].empty()) {
        in.colls.push_back(c);
        break;
      }
  const auto& colls = in.colls;
  in.pipeline = std::find(colls.begin(), colls.end(), static_cast<int>(Coll::SendRecv)) != colls.end() &&
                std::none_of(colls.begin(), colls.end(), [](int c) { return c < parsers::kCollCount && c != static_cast<int>(Coll::SendRecv); });
  std::vector<Finding> out;
  out.push_back(summary_finding(in));
  out.push_back(iterations_finding(in));
  if (p.job.several) out.push_back(ranks_finding(p.job, source, p.framework.framework));  // a job of several files
  if (an.xr.present) out.push_back(straggler_finding(p, an, source));  // several ranks
  for (auto& f : exposed_comm_findings(in)) out.push_back(std::move(f));
  out.push_back(gpu_idle_finding(in));
  out.push_back(copies_finding(in));
  out.push_back(launch_bound_finding(in));
  out.push_back(env_finding(in));
  if (o.reference) out.push_back(compare_finding(in));
  rocm_fix_words(p, out);
  return out;
}

}  // namespace

std::vector<Finding> analyze_profile(const Profile& p, const std::string& source, const ProfileOptions& o) {
  auto d = digest(p, o);
  return digest_findings(d, source, o);
}

ProfileJob analyze_profile_job(const std::vector<std::string>& files, const RankReader& read, const ProfileOptions& o, std::size_t threads) {
  auto jd = read_profile_job(files, read, o, threads);
  if (!jd.job.used.empty()) jd.job.findings = digest_findings(jd.all, jd.source, o);
  return std::move(jd.job);
}

}  // namespace perfgap::analyzers
