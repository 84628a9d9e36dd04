#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "analyzers/analyzers.hpp"

namespace perfgap::analyzers {
namespace {

using parsers::format_size;

// One rank's figures for one (communicator, collective, size), summed over the inputs.
struct InspRank {
  int rank = -1;
  std::string host, source;
  std::uint64_t pid = 0;
  int line = 0;
  std::size_t count = 0, bw_count = 0, cpu_timed = 0;
  double sum_exec_us = 0, sum_busbw = 0;
  double busbw() const { return bw_count ? sum_busbw / static_cast<double>(bw_count) : 0; }
  double exec_us() const { return count ? sum_exec_us / static_cast<double>(count) : 0; }
};

struct InspGroup {
  std::string comm_id, comm_name, coll;
  std::uint64_t bytes = 0, nnodes = 0;
  int n_ranks = 0;
  std::map<int, InspRank> ranks;
};

double insp_median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The median and the MAD scaled to a standard deviation (1.4826 x the median absolute deviation).
std::pair<double, double> insp_median_mad(const std::vector<double>& v) {
  const double med = insp_median(v);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - med));
  return {med, 1.4826 * insp_median(dev)};
}

// -1: below the peers, +1: above them, 0: one of them.
int insp_outlier(double x, double med, double mad) {
  if (med <= 0) return 0;
  const double d = x - med;
  if (std::fabs(d) < kInspectorOutlierShare * med || std::fabs(d) <= kInspectorMadK * mad) return 0;
  return d < 0 ? -1 : 1;
}

std::string insp_comm_label(const InspGroup& g) {
  return g.comm_name.empty() ? fmt::format("communicator {}", g.comm_id) : fmt::format("communicator '{}' ({})", g.comm_name, g.comm_id);
}

std::string insp_where(const InspRank& r) { return r.line > 0 ? fmt::format("{}:{}", r.source, r.line) : r.source; }

// A rank's worst group in one direction, and every group it was found in.
struct InspRankHit {
  const InspGroup* worst = nullptr;
  const InspRank* rank = nullptr;
  double ratio = 1, median = 0, median_exec_us = 0;
  std::size_t peers = 0;
  std::vector<std::string> groups;  // evidence lines
  std::vector<std::string> wheres;
  double wait_us = 0;               // late ranks: the others' extra time per operation, summed over groups x ops
  std::size_t ops = 0;
  std::map<std::string, std::pair<double, std::size_t>> wait_by_coll;  // collective -> (wait_us, ops), as above
};

// " (pid P)", or nothing where the input does not say (the Prometheus text has no pid).
std::string insp_pid(std::uint64_t pid) { return pid ? fmt::format(" (pid {})", pid) : ""; }

// The "nccl ranks" evidence item of one rank (parsers::kNcclRanksEvidence).
std::string insp_rank_item(const InspGroup& g, const InspRank& r) {
  return g.comm_name.empty() ? fmt::format("{}: rank {} of {}{}", r.host, r.rank, g.comm_id, insp_pid(r.pid))
                             : fmt::format("{}: rank {} of '{}'{}", r.host, r.rank, g.comm_name, insp_pid(r.pid));
}

// What the Inspector files hold: the records grouped by (communicator, collective, size) and
// summed over the files, and the counts the summary says.
struct InspGroups {
  std::map<std::tuple<std::string, std::string, std::uint64_t>, InspGroup> groups;  // (communicator, collective, size) -> its ranks
  std::size_t records = 0, p2p = 0, dropped = 0, cpu_timed = 0;
  std::string version;
  std::set<std::string> hosts, comms;
  std::set<std::pair<std::string, int>> comm_ranks;
};

InspGroups insp_group_records(const std::vector<NcclInspectorInput>& in) {
  InspGroups s;
  auto& groups = s.groups;
  for (const auto& input : in) {
    s.records += input.run->coll_records;
    s.p2p += input.run->p2p_records;
    s.dropped += input.run->dropped;
    if (s.version.empty()) s.version = input.run->version;
    for (const auto& c : input.run->colls) {
      auto& g = groups[{c.comm_id, c.coll, c.msg_bytes}];
      if (g.comm_id.empty()) {
        g.comm_id = c.comm_id;
        g.comm_name = c.comm_name;
        g.coll = c.coll;
        g.bytes = c.msg_bytes;
        g.nnodes = c.nnodes;
        g.n_ranks = c.n_ranks;
      }
      auto& r = g.ranks[c.rank];
      if (r.count == 0) {
        r.rank = c.rank;
        r.host = c.host;
        r.pid = c.pid;
        r.source = input.source;
        r.line = c.first_line;
      }
      r.count += c.count;
      r.bw_count += c.bw_count;
      r.cpu_timed += c.cpu_timed;
      r.sum_exec_us += c.sum_exec_us;
      r.sum_busbw += c.sum_busbw_gbs;
      s.cpu_timed += c.cpu_timed;
      s.hosts.insert(c.host);
      s.comms.insert(c.comm_id);
      s.comm_ranks.insert({c.comm_id, c.rank});
    }
  }
  return s;
}

// nccl_inspector.summary: the records, ranks, communicators and hosts read, per file.
Finding insp_summary_finding(const std::vector<NcclInspectorInput>& in, const InspGroups& s, const std::string& source) {
  const auto records = s.records, p2p = s.p2p, dropped = s.dropped, cpu_timed = s.cpu_timed;
  const auto& version = s.version;
  const auto& hosts = s.hosts;
  const auto& comms = s.comms;
  const auto& comm_ranks = s.comm_ranks;
  Finding f;
  f.id = "nccl_inspector.summary";
  f.layer = "network";
  f.subject = source;
  f.status = report::Status::pass;
  f.title = fmt::format("{} collective record{} of {} rank{} in {} communicator{} on {} host{} (Inspector {})", records, records == 1 ? "" : "s",
                        comm_ranks.size(), comm_ranks.size() == 1 ? "" : "s", comms.size(), comms.size() == 1 ? "" : "s", hosts.size(),
                        hosts.size() == 1 ? "" : "s", version.empty() ? "output" : version);
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (i == 16) {
      f.add(source, fmt::format("... {} more files", in.size() - 16));
      break;
    }
    f.add(in[i].source, fmt::format("{} collective and {} point-to-point records ({})", in[i].run->coll_records, in[i].run->p2p_records,
                                    in[i].run->form.empty() ? "JSON lines" : in[i].run->form));
  }
  if (cpu_timed > 0)
    f.add(source, fmt::format("{} record{} timed on the CPU, not by the GPU kernel (NCCL_INSPECTOR_REQUIRE_KERNEL_TIMING=0): their times include launch overhead",
                              cpu_timed, cpu_timed == 1 ? "" : "s"));
  if (dropped > 0)
    f.add(source, fmt::format("{} records beyond {} distinct (communicator, rank, collective, size) groups per file were not kept", dropped,
                              parsers::kMaxInspectorGroups));
  f.metric("coll_records", static_cast<double>(records));
  f.metric("p2p_records", static_cast<double>(p2p));
  f.metric("ranks", static_cast<double>(comm_ranks.size()));
  f.metric("communicators", static_cast<double>(comms.size()));
  f.metric("hosts", static_cast<double>(hosts.size()));
  return f;
}

// Each rank against the other ranks of its communicator, per (collective, size): the ranks
// below their peers' busbw (slow) and above it (late: the others wait inside the collective).
struct InspRankOutliers {
  std::map<std::pair<std::string, int>, InspRankHit> slow, late;
  std::size_t judged = 0, judged_ranks = 0;
};

InspRankOutliers insp_rank_outliers(const InspGroups& s, const NcclInspectorOptions& o) {
  InspRankOutliers x;
  auto& slow = x.slow;
  auto& late = x.late;
  for (const auto& [key, g] : s.groups) {
    if (g.bytes < o.min_bytes) continue;
    std::vector<double> bw;
    for (const auto& [rank, r] : g.ranks)
      if (r.bw_count > 0) bw.push_back(r.busbw());
    if (bw.size() < kInspectorMinPeers) continue;
    ++x.judged;
    x.judged_ranks += bw.size();
    auto [med, mad] = insp_median_mad(bw);
    std::vector<double> exec;
    for (const auto& [rank, r] : g.ranks) exec.push_back(r.exec_us());
    const double med_exec = insp_median(exec);
    for (const auto& [rank, r] : g.ranks) {
      if (r.bw_count == 0) continue;
      const int side = insp_outlier(r.busbw(), med, mad);
      if (side == 0) continue;
      auto& hit = (side < 0 ? slow : late)[{g.comm_id, rank}];
      const double ratio = r.busbw() / med;
      const bool worse = !hit.worst || (side < 0 ? ratio < hit.ratio : ratio > hit.ratio);
      if (worse) {
        hit.worst = &g;
        hit.rank = &r;
        hit.ratio = ratio;
        hit.median = med;
        hit.median_exec_us = med_exec;
        hit.peers = bw.size();
      }
      if (side > 0 && med_exec > r.exec_us()) {
        hit.wait_us += (med_exec - r.exec_us()) * static_cast<double>(r.count);
        hit.ops += r.count;
        auto& by = hit.wait_by_coll[g.coll];
        by.first += (med_exec - r.exec_us()) * static_cast<double>(r.count);
        by.second += r.count;
      }
      if (hit.groups.size() < 12) {
        hit.groups.push_back(fmt::format("{} {}: busbw {:.1f} GB/s ({:.0f}% of the median {:.1f} GB/s of {} ranks), {:.0f} us per operation against "
                                         "the median {:.0f} us, {} operation{}",
                                         g.coll, format_size(g.bytes), r.busbw(), 100 * ratio, med, bw.size(), r.exec_us(), med_exec, r.count,
                                         r.count == 1 ? "" : "s"));
        hit.wheres.push_back(insp_where(r));
      }
    }
  }
  return x;
}

// nccl_inspector.slow_rank or late_rank of one rank, at its worst group.
Finding insp_rank_finding(const char* id, const InspRankHit& h, bool is_late) {
  const auto& g = *h.worst;
  const auto& r = *h.rank;
  Finding f;
  f.id = id;
  f.layer = "network";
  f.subject = fmt::format("{} rank {}", g.comm_id, r.rank);
  const std::string who = fmt::format("rank {} of {} on {}{}", r.rank, insp_comm_label(g), r.host, insp_pid(r.pid));
  if (!is_late) {
    f.status = h.ratio < 0.5 ? report::Status::fail : report::Status::warn;
    f.title = fmt::format("{}: {} {} at {:.1f} GB/s busbw, {:.0f}% of the median {:.1f} GB/s of its {} ranks", who, g.coll, format_size(g.bytes),
                          r.busbw(), 100 * h.ratio, h.median, h.peers);
    f.fix = fmt::format("this rank spends longer inside the collective than its peers: check its node {} (perfgap check there: net.ib.ports, "
                        "pcie.link, gpu.clocks, gpu.nvlink, placement.gpu_affinity) and the path from its GPU to its NIC; a rank that reaches "
                        "the collective before the others also waits longer inside it, so read it with nccl_inspector.late_rank",
                        r.host);
    f.impact = "in a collective every rank waits for the slowest: one slow rank sets the pace of the whole job";
  } else {
    f.status = report::Status::warn;
    const double wait_ms = h.ops ? h.wait_us / 1000 : 0;
    f.title = fmt::format("{}: its {} {} takes {:.0f} us against the median {:.0f} us of its {} ranks: the others wait inside the collective for "
                          "it (it arrives late)",
                          who, g.coll, format_size(g.bytes), r.exec_us(), h.median_exec_us, h.peers);
    f.fix = fmt::format("find what delays rank {} before its collectives on {}: its GPU's clocks and throttling (gpu.clocks), its CPU placement and "
                        "data loading (placement.*, cpu.*); a profile of that rank (perfgap analyze kineto) shows the time before the collective",
                        r.rank, r.host);
    f.impact = "the job runs at the pace of its latest rank: the others' waiting is lost time on every GPU";
    f.metric("wait_ms_total", wait_ms);
    f.metric("wait_us_per_op", h.ops ? h.wait_us / static_cast<double>(h.ops) : 0);
    f.metric("wait_share_of_collective", h.median_exec_us > 0 ? std::max(0.0, 1 - r.exec_us() / h.median_exec_us) : 0);
    // Per collective: explain multiplies it by the collectives per step a profile counts.
    for (const auto& [coll, w] : h.wait_by_coll)
      if (w.second > 0) f.metric("wait_us_per_op." + coll, w.first / static_cast<double>(w.second));
  }
  for (std::size_t i = 0; i < h.groups.size(); ++i) f.add(h.wheres[i], h.groups[i]);
  f.add(std::string(parsers::kNcclRanksEvidence), insp_rank_item(g, r));
  f.metric("rank", r.rank);
  f.metric("busbw_gbps", r.busbw());
  f.metric("median_busbw_gbps", h.median);
  f.metric("busbw_ratio", h.ratio);
  f.metric("exec_us", r.exec_us());
  f.metric("median_exec_us", h.median_exec_us);
  return f;
}

void insp_rank_findings(std::vector<Finding>& out, const InspRankOutliers& x, const std::string& source, const NcclInspectorOptions& o) {
  const auto judged = x.judged, judged_ranks = x.judged_ranks;
  const auto* slow = &x.slow;
  const auto* late = &x.late;
  for (const auto& [id, hits] : {std::pair<const char*, decltype(slow)>{"nccl_inspector.slow_rank", slow}, {"nccl_inspector.late_rank", late}}) {
    const bool is_late = hits == late;
    if (hits->empty()) {
      Finding f;
      f.id = id;
      f.layer = "network";
      f.subject = source;
      if (judged == 0) {
        f.status = report::Status::skip;
        f.title = fmt::format("no collective of {} or more with {} ranks or more of one communicator in the input: give the files of every rank",
                              format_size(o.min_bytes), kInspectorMinPeers);
      } else {
        f.status = report::Status::pass;
        f.title = fmt::format("no rank {} than its peers in {} group{} (communicator, collective, size) of {} rank figures", is_late ? "faster" : "slower",
                              judged, judged == 1 ? "" : "s", judged_ranks);
      }
      out.push_back(std::move(f));
      continue;
    }
    for (const auto& [k, h] : *hits) out.push_back(insp_rank_finding(id, h, is_late));
  }
}

// A communicator's figure among those of its shape: the median busbw of its ranks.
struct InspCommFig {
  const InspGroup* g;
  double busbw;
};

// nccl_inspector.slow_comm of one communicator, at its worst shape.
Finding insp_slow_comm_finding(const InspCommFig& worst_fig, double worst_ratio, double med, std::size_t n) {
  const auto& g = *worst_fig.g;
  Finding f;
  f.id = "nccl_inspector.slow_comm";
  f.layer = "network";
  f.subject = g.comm_id;
  f.status = worst_ratio < 0.5 ? report::Status::fail : report::Status::warn;
  std::set<std::string> on;
  for (const auto& [rank, r] : g.ranks) on.insert(r.host);
  std::string host_list;
  for (const auto& h : on) host_list += (host_list.empty() ? "" : ", ") + h;
  f.title = fmt::format("{} ({} ranks on {}): {} {} at {:.1f} GB/s busbw, {:.0f}% of the median {:.1f} GB/s of the {} communicators of its shape",
                        insp_comm_label(g), g.n_ranks, host_list, g.coll, format_size(g.bytes), worst_fig.busbw, 100 * worst_ratio, med, n);
  std::string items;
  for (const auto& [rank, r] : g.ranks) {
    if (f.evidence.size() < 16) f.add(insp_where(r), fmt::format("rank {} on {}{}: busbw {:.1f} GB/s", rank, r.host, insp_pid(r.pid), r.busbw()));
    items += (items.empty() ? "" : "; ") + insp_rank_item(g, r);
  }
  f.add(std::string(parsers::kNcclRanksEvidence), items);
  f.fix = fmt::format("the hosts of this communicator ({}) move its data slower than their peers move theirs: compare their nodes (perfgap check on "
                      "each, then perfgap fleet: net.ib.ports, gpu.nvlink, pcie.link) and run nccl-tests on them alone",
                      host_list);
  f.impact = "the ranks of the other communicators wait for this one at the next collective that spans them";
  f.metric("busbw_gbps", worst_fig.busbw);
  f.metric("median_busbw_gbps", med);
  f.metric("busbw_ratio", worst_ratio);
  return f;
}

// Communicators against communicators of the same shape.
void insp_comm_findings(std::vector<Finding>& out, const InspGroups& s, const std::string& source, const NcclInspectorOptions& o) {
  // Shape: ranks, nodes, collective, size (names differ per group: "TP Group 0", "TP Group 1");
  // a communicator's figure is the median busbw of its ranks.
  std::map<std::tuple<int, std::uint64_t, std::string, std::uint64_t>, std::vector<InspCommFig>> shapes;
  for (const auto& [key, g] : s.groups) {
    if (g.bytes < o.min_bytes) continue;
    std::vector<double> bw;
    for (const auto& [rank, r] : g.ranks)
      if (r.bw_count > 0) bw.push_back(r.busbw());
    if (bw.empty()) continue;
    shapes[{g.n_ranks, g.nnodes, g.coll, g.bytes}].push_back({&g, insp_median(bw)});
  }
  std::map<std::string, std::pair<const InspCommFig*, double>> slow_comms;  // comm id -> worst (figure, ratio)
  std::map<std::string, std::pair<double, std::size_t>> slow_comm_median;
  std::size_t shapes_judged = 0;
  for (const auto& [shape, figs] : shapes) {
    if (figs.size() < kInspectorMinPeers) continue;
    ++shapes_judged;
    std::vector<double> bw;
    for (const auto& c : figs) bw.push_back(c.busbw);
    auto [med, mad] = insp_median_mad(bw);
    for (const auto& c : figs) {
      if (insp_outlier(c.busbw, med, mad) >= 0) continue;
      const double ratio = c.busbw / med;
      auto it = slow_comms.find(c.g->comm_id);
      if (it == slow_comms.end() || ratio < it->second.second) {
        slow_comms[c.g->comm_id] = {&c, ratio};
        slow_comm_median[c.g->comm_id] = {med, figs.size()};
      }
    }
  }
  if (slow_comms.empty()) {
    Finding f;
    f.id = "nccl_inspector.slow_comm";
    f.layer = "network";
    f.subject = source;
    f.status = shapes_judged ? report::Status::pass : report::Status::skip;
    f.title = shapes_judged ? fmt::format("no communicator slower than the others of its shape ({} shape{} of {} or more communicators)", shapes_judged,
                                          shapes_judged == 1 ? "" : "s", kInspectorMinPeers)
                            : fmt::format("fewer than {} communicators of one shape (ranks, nodes, collective, size): nothing to compare",
                                          kInspectorMinPeers);
    out.push_back(std::move(f));
  }
  for (const auto& [id, worst] : slow_comms) {
    const auto [med, n] = slow_comm_median[id];
    out.push_back(insp_slow_comm_finding(*worst.first, worst.second, med, n));
  }
}

// nccl_inspector.busbw: each communicator across nodes, its best median busbw against the node's line rate.
void insp_busbw_findings(std::vector<Finding>& out, const InspGroups& s, const std::string& source, const NcclInspectorOptions& o) {
  std::map<std::string, std::tuple<double, const InspGroup*>> peak;  // multi-node comm -> best median busbw
  for (const auto& [key, g] : s.groups) {
    if (g.bytes < o.min_bytes || g.nnodes < 2) continue;
    std::vector<double> bw;
    for (const auto& [rank, r] : g.ranks)
      if (r.bw_count > 0) bw.push_back(r.busbw());
    if (bw.empty()) continue;
    const double m = insp_median(bw);
    auto it = peak.find(g.comm_id);
    if (it == peak.end() || m > std::get<0>(it->second)) peak[g.comm_id] = {m, &g};
  }
  if (peak.empty() || o.nic_gbps_total <= 0) {
    Finding f;
    f.id = "nccl_inspector.busbw";
    f.layer = "network";
    f.subject = source;
    f.status = report::Status::skip;
    f.title = peak.empty() ? fmt::format("no communicator across nodes with collectives of {} or more: the NICs' rate is no basis within a node",
                                         format_size(o.min_bytes))
                           : "no basis for the busbw of communicators across nodes: give --nics N --link-gbps G or --node-report FILE";
    out.push_back(std::move(f));
  } else {
    const double expected = o.nic_gbps_total / 8;  // GB/s
    for (const auto& [id, pk] : peak) {
      const auto& [bw, g] = pk;
      const double r = bw / expected;
      Finding f;
      f.id = "nccl_inspector.busbw";
      f.layer = "network";
      f.subject = id;
      f.status = r < kNcclExpectedFail ? report::Status::fail : r < kNcclExpectedWarn ? report::Status::warn : report::Status::pass;
      f.title = fmt::format("{} across {} nodes: best busbw {:.1f} GB/s ({} {}), {:.0f}% of the {:.1f} GB/s the node's NICs give", insp_comm_label(*g),
                            g->nnodes, bw, g->coll, format_size(g->bytes), 100 * r, expected);
      f.add(source, fmt::format("median busbw of its ranks {:.1f} GB/s", bw), fmt::format("{:.1f} GB/s ({})", expected, o.nic_basis));
      if (auto c = parsers::collective_named(g->coll); c != parsers::Coll::none)
        f.add(std::string(parsers::kCollectiveMeasuredEvidence), std::string(parsers::coll_name(c)));
      if (f.status != report::Status::pass)
        f.fix = "collectives across nodes below the NICs' rate: check the RDMA ports of the nodes (net.ib.ports), NCCL's transport in its log "
                "(perfgap analyze nccl-log: nccl_log.net), and sweep NCCL_IB_QPS_PER_CONNECTION with nccl-tests at the job's scale";
      f.metric("peak_ratio", r);
      f.metric("max_busbw_gbps", bw);
      f.metric("expected_busbw_gbps", expected);
      out.push_back(std::move(f));
    }
  }
}

}  // namespace

std::vector<Finding> analyze_nccl_inspector(const std::vector<NcclInspectorInput>& in, const NcclInspectorOptions& o) {
  std::vector<Finding> out;
  std::string source = in.size() == 1 ? in[0].source : fmt::format("{} Inspector files", in.size());
  const InspGroups s = insp_group_records(in);
  out.push_back(insp_summary_finding(in, s, source));
  // ---- ranks against the other ranks of their communicator -----------------------------
  insp_rank_findings(out, insp_rank_outliers(s, o), source, o);
  // ---- communicators against communicators of the same shape ---------------------------
  insp_comm_findings(out, s, source, o);
  // ---- bandwidth against the node's line rate -----------------------------------------
  insp_busbw_findings(out, s, source, o);
  for (const auto& input : in) {
    auto d = damaged_lines("nccl_inspector.summary", "network", input.source, input.run->damaged);
    for (auto& f : d) out.push_back(std::move(f));
  }
  return out;
}

}  // namespace perfgap::analyzers