#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "analyzers/analyzers.hpp"

namespace perfgap::analyzers {
namespace {

std::string ras_where(const std::string& source, int line) { return line > 0 ? fmt::format("{}:{}", source, line) : source; }

std::string ras_peer(const parsers::RasPeer& p) {
  std::string s = p.rank >= 0 ? fmt::format("rank {}", p.rank) : std::string();
  if (!p.detail.empty()) s += " " + p.detail;
  if (p.pid < 0) return s + (s.empty() ? "" : " ") + "(process not known to RAS)";
  return s + (s.empty() ? "" : ": ") + fmt::format("process {} on node {}{}", p.pid, p.node, p.gpus.empty() ? "" : ", GPU " + p.gpus);
}

// The "nccl ranks" evidence line (parsers::kNcclRanksEvidence) of the processes and ranks a
// finding names; those RAS could not place on a node are left out.
void ras_ranks_line(Finding& f, const std::vector<const parsers::RasPeer*>& ps) {
  std::string items;
  for (const auto* p : ps) {
    if (p->pid < 0 || p->node.empty()) continue;
    std::string gpu = p->gpus.empty() ? "" : ", GPU " + p->gpus;
    std::string item = p->rank >= 0 ? fmt::format("{}: rank {} (pid {}{})", p->node, p->rank, p->pid, gpu)
                                     : fmt::format("{}: pid {}{}", p->node, p->pid, gpu.empty() ? "" : " (" + gpu.substr(2) + ")");
    if (items.find(item) == std::string::npos) items += (items.empty() ? "" : "; ") + item;
  }
  if (!items.empty()) f.add(std::string(parsers::kNcclRanksEvidence), items);
}

Finding ras_base(const char* id, const std::string& subject) {
  Finding f;
  f.id = id;
  f.layer = "network";
  f.subject = subject;
  return f;
}

// A list of up to four peers for a title.
std::string ras_peers_title(const std::vector<parsers::RasPeer>& ps) {
  std::string s;
  for (std::size_t i = 0; i < ps.size() && i < 4; ++i) s += (i ? "; " : "") + ras_peer(ps[i]);
  if (ps.size() > 4) s += fmt::format("; {} more", ps.size() - 4);
  return s;
}

// Which side of a MISMATCH the ranks RAS names are on: RAS prints the operation counts, the most
// ranks first, and names the ranks of the smaller groups, whether they are behind or ahead.
struct MismatchSide {
  bool known = false, ahead = false;
  long majority_ranks = 0, majority_op = -1, named_op = -1;
};
MismatchSide mismatch_side(const parsers::RasCommIssue& is) {
  MismatchSide m;
  if (is.launched.size() < 2 || is.ranks.empty()) return m;
  auto most = std::max_element(is.launched.begin(), is.launched.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  m.majority_ranks = most->first, m.majority_op = most->second;
  long lo = -1, hi = -1;
  for (const auto& p : is.ranks) {
    if (p.launched < 0) continue;  // named for its status, not its count
    if (p.launched == m.majority_op) return MismatchSide{};
    lo = lo < 0 ? p.launched : std::min(lo, p.launched);
    hi = std::max(hi, p.launched);
  }
  // No named rank with a count, or named ranks on both sides of the majority: no one direction.
  if (lo < 0 || (lo < m.majority_op && hi > m.majority_op)) return MismatchSide{};
  m.known = true;
  m.ahead = lo > m.majority_op;
  m.named_op = m.ahead ? lo : hi;
  return m;
}

std::string ras_rank_list(const std::vector<parsers::RasPeer>& ps) {
  std::set<long> ranks;
  for (const auto& p : ps)
    if (p.rank >= 0) ranks.insert(p.rank);
  std::vector<std::string> r;
  for (long x : ranks)
    if (r.size() < 16) r.push_back(std::to_string(x));
  return fmt::format("{}{}", fmt::join(r, ", "), ranks.size() > r.size() ? ", ..." : "");
}

// The communicators of one kind (ERROR, MISMATCH) the status's blocks name, a finding each; else
// one finding for all: pass, or skip where the status cannot tell.
void ras_comm_issues(std::vector<Finding>& out, const parsers::NcclRas& r, const std::string& source, bool complete, const std::string& cut,
                     const char* id, const char* kind, report::Status status, const char* what, const char* fix, const char* impact) {
  bool any = false;
  for (const auto& is : r.issues) {
    if (is.kind != kind) continue;
    any = true;
    auto f = ras_base(id, is.hash);
    f.status = status;
    std::string detail;
    for (const auto& d : is.details) detail += (detail.empty() ? "" : "; ") + d;
    f.title = fmt::format("communicator {} ({}) {}{}{}", is.id, is.hash, what, detail.empty() ? "" : ": ", detail);
    f.add(ras_where(source, is.line), fmt::format("{} {}", is.id, is.kind));
    for (const auto& p : is.ranks) f.add(ras_where(source, p.line), ras_peer(p));
    const auto side = is.kind == "MISMATCH" ? mismatch_side(is) : MismatchSide{};
    std::vector<const parsers::RasPeer*> named;
    for (const auto& p : is.ranks) named.push_back(&p);
    // The ranks ahead are not where the job waits: they are not named as its stragglers.
    if (!side.ahead) ras_ranks_line(f, named);
    f.fix = fix;
    f.impact = impact;
    if (side.known && side.ahead) {
      f.title += fmt::format("; the ranks RAS names ({}) are ahead, at operation {}: the job waits on the other {} ranks at operation {}, "
                             "which RAS does not name",
                             ras_rank_list(is.ranks), side.named_op, side.majority_ranks, side.majority_op);
      f.fix = fmt::format("the {} ranks at operation {} are behind: RAS names the smaller group, here the ranks ahead (leave those be). Find "
                          "the ranks behind among the communicator's others (py-spy dump of every training process, each rank's log: stuck in "
                          "its code before the collective, or slow) and look at their nodes; query ncclras again: counts that move on with "
                          "a small spread are a healthy job sampled mid-step",
                          side.majority_ranks, side.majority_op);
      f.metric("ranks_behind", static_cast<double>(side.majority_ranks));
      f.impact = "the ranks ahead wait for the ranks behind at their next collective";
    } else if (side.known) {
      f.title += fmt::format("; the ranks named ({}) are behind, at operation {} (the other {} at {})", ras_rank_list(is.ranks), side.named_op,
                             side.majority_ranks, side.majority_op);
      f.metric("ranks_behind", static_cast<double>(is.ranks.size()));
    }
    f.impact = impact;
    f.metric("ranks_named", static_cast<double>(is.ranks.size()));
    out.push_back(std::move(f));
  }
  if (any) return;
  auto f = ras_base(id, source);
  // Communicators the table's Errors column marks with this kind, whose block the status does
  // not hold (cut before its Warnings section): undecided, not a pass (NVIDIA/nccl#1762).
  long marked = 0;
  for (const auto& g : r.groups)
    if (g.errors.find(kind) != std::string::npos) marked += g.comms;
  if (marked > 0) {
    f.status = report::Status::skip;
    f.title = fmt::format("the communicators table marks {} communicator{} {}, but the status holds no {} block for {} (cut short): "
                          "run ncclras again, with -t SECONDS",
                          marked, marked == 1 ? "" : "s", kind, kind, marked == 1 ? "it" : "them");
    for (const auto& g : r.groups)
      if (g.errors.find(kind) != std::string::npos) f.add(ras_where(source, g.line), fmt::format("group {}: {} {}", g.group, g.status, g.errors));
    out.push_back(std::move(f));
    return;
  }
  if (!r.comms_section || r.no_comm_data) {
    f.status = report::Status::skip;
    f.title = r.comms_section ? "RAS collected no communicator data" : "the status has no Communicators section";
  } else if (!complete) {
    f.status = report::Status::skip;
    f.title = cut;
  } else {
    f.status = report::Status::pass;
    std::size_t comms = 0;
    for (const auto& g : r.groups) comms += static_cast<std::size_t>(g.comms);
    f.title = fmt::format("no communicator {} ({} communicator{})", kind == std::string("ERROR") ? "in error" : "with ranks out of step", comms,
                          comms == 1 ? "" : "s");
  }
  out.push_back(std::move(f));
}
}  // namespace

std::vector<Finding> analyze_nccl_ras(const parsers::NcclRas& r, const std::string& source) {
  std::vector<Finding> out;
  const std::string jobs = r.processes >= 0 ? fmt::format(" of {} job process{}", r.processes, r.processes == 1 ? "" : "es") : std::string();
  // A status cut off before its Errors section (ncclras timed out, the output truncated)
  // decides nothing about errors.
  const bool complete = r.errors_section;
  const std::string cut = "the status ends before its Errors section (ncclras cut short or timed out): run ncclras again, with -t SECONDS";

  {
    auto f = ras_base("nccl_ras.dead", source);
    if (r.dead_processes > 0) {
      f.status = report::Status::fail;
      f.title = fmt::format("{} process{}{} dead (unreachable over the RAS network){}{}", r.dead_processes, r.dead_processes == 1 ? "" : "es", jobs,
                            r.dead.empty() ? "" : ": ", ras_peers_title(r.dead));
      for (const auto& p : r.dead) f.add(ras_where(source, p.line), ras_peer(p));
      if (r.unnamed_dead > 0) f.add(source, fmt::format("{} more the status could not name", r.unnamed_dead));
      std::vector<const parsers::RasPeer*> named;
      for (const auto& p : r.dead) named.push_back(&p);
      ras_ranks_line(f, named);
      f.fix = "a dead rank stops the job at its next collective: find why the process ended on its node (its own log, dmesg for Xid or the OOM "
              "killer, perfgap check there), drain the node if its hardware is at fault, and restart from the last checkpoint";
      f.impact = "the whole job stalls: no step completes until it is restarted";
      f.metric("dead_processes", static_cast<double>(r.dead_processes));
    } else if (!complete) {
      f.status = report::Status::skip;
      f.title = cut;
    } else {
      f.status = report::Status::pass;
      f.title = fmt::format("no dead process{}", jobs);
    }
    out.push_back(std::move(f));
  }

  {
    auto f = ras_base("nccl_ras.missing", source);
    std::size_t incomplete_comms = 0;
    for (const auto& is : r.issues)
      if (is.kind == "INCOMPLETE") ++incomplete_comms;
    if (r.missing_processes > 0 || incomplete_comms > 0) {
      f.status = report::Status::fail;
      std::vector<std::string> parts;
      if (r.missing_processes > 0)
        parts.push_back(fmt::format("{} process{}{} sent no communicator data{}{}", r.missing_processes, r.missing_processes == 1 ? "" : "es", jobs,
                                    r.missing.empty() ? "" : ": ", ras_peers_title(r.missing)));
      if (incomplete_comms > 0)
        parts.push_back(fmt::format("{} communicator{} incomplete", incomplete_comms, incomplete_comms == 1 ? "" : "s"));
      f.title = parts.size() == 1 ? parts[0] : parts[0] + "; " + parts[1];
      for (const auto& p : r.missing) f.add(ras_where(source, p.line), ras_peer(p));
      if (r.unnamed_missing > 0) f.add(source, fmt::format("{} more the status could not name", r.unnamed_missing));
      for (const auto& is : r.issues) {
        if (is.kind != "INCOMPLETE") continue;
        f.add(ras_where(source, is.line), fmt::format("communicator {} ({}): {}", is.id, is.hash, is.details.empty() ? "incomplete" : is.details[0]));
        for (const auto& p : is.ranks) f.add(ras_where(source, p.line), fmt::format("communicator {}: {}", is.id, ras_peer(p)));
      }
      std::vector<const parsers::RasPeer*> named;
      for (const auto& p : r.missing) named.push_back(&p);
      for (const auto& is : r.issues)
        if (is.kind == "INCOMPLETE")
          for (const auto& p : is.ranks) named.push_back(&p);
      ras_ranks_line(f, named);
      f.fix = "a process that does not answer is hung or stopped (a CUDA call that does not return, a wedged GPU, a host under memory pressure): "
              "look at it on its node (py-spy dump --pid, nvidia-smi, dmesg) and run ncclras again; if it stays missing, treat it as dead";
      f.impact = "the job waits for the missing ranks at their communicators' next collective";
      f.metric("missing_processes", static_cast<double>(r.missing_processes));
      f.metric("incomplete_communicators", static_cast<double>(incomplete_comms));
    } else if (!complete) {
      f.status = report::Status::skip;
      f.title = cut;
    } else if (r.timeouts > 0) {
      f.status = report::Status::warn;
      f.title = fmt::format("{} communication timeout{} while RAS gathered the data: some ranks answered late", r.timeouts, r.timeouts == 1 ? "" : "s");
      f.fix = "run ncclras again with a longer timeout (-t SECONDS); timeouts that persist point at a node or link that answers slowly";
    } else {
      f.status = report::Status::pass;
      f.title = fmt::format("every process{} sent its communicator data", jobs);
    }
    if (r.timeouts > 0) f.metric("timeouts", static_cast<double>(r.timeouts));
    out.push_back(std::move(f));
  }

  auto comm_issues = [&](const char* id, const char* kind, report::Status status, const char* what, const char* fix, const char* impact) {
    ras_comm_issues(out, r, source, complete, cut, id, kind, status, what, fix, impact);
  };
  comm_issues("nccl_ras.comm_error", "ERROR", report::Status::fail, "in error",
              "the ranks named report the error: 'Remote process error' is a peer that died or a link that dropped (look at the peers' nodes); "
              "'System error' a socket or RDMA failure on that rank's node (net.ib.ports, the NIC's error counters); 'Unhandled CUDA error' "
              "its GPU (dmesg Xid, nvidia-smi -q). Fix the node, then restart the job from its checkpoint",
              "a communicator in error cannot complete collectives: the job is stopped or will be");
  comm_issues("nccl_ras.mismatch", "MISMATCH", report::Status::warn, "has ranks out of step",
              "ranks of one communicator with different status or operation counts: the rank behind the others is where the job waits (stuck in "
              "its code before the collective, or slow); look at that rank's process (py-spy dump, its log) and its node",
              "the other ranks wait for the one behind at its next collective");

  auto d = damaged_lines("nccl_ras.dead", "network", source, r.damaged);
  for (auto& f : d) out.push_back(std::move(f));
  return out;
}

}  // namespace perfgap::analyzers
