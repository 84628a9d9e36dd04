#include "slurm/pairs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "fleet/stats.hpp"
#include "parsers/hostlist.hpp"
#include "parsers/nccl_tests.hpp"
#include "parsers/profile.hpp"

namespace perfgap::slurm {
namespace {

std::string pairs_name(const NodePair& p) { return p.first + "+" + p.second; }

bool pairs_same(const NodePair& a, const NodePair& b) {
  return (a.first == b.first && a.second == b.second) || (a.first == b.second && a.second == b.first);
}

const std::string* pairs_partner_of(const PairMeasurement& m, const std::string& node) {
  if (m.pair.first == node) return &m.pair.second;
  if (m.pair.second == node) return &m.pair.first;
  return nullptr;
}

constexpr int kConfirmRuns = 3;

// What judge_pairs and confirm_round share: the threshold, who is healthy, and per suspect
// its runs against healthy partners.
struct PairsState {
  PairJudgement j;
  double threshold = 0;
  std::set<std::string> healthy;
  std::map<std::string, int> healthy_runs;  // suspect -> runs with a healthy partner
  // Slow runs between two healthy nodes, per pair (in first-seen order), with their run count.
  std::vector<std::pair<NodePair, int>> healthy_pairs_slow;
};

PairsState pairs_assess(const std::vector<std::string>& nodes, const std::vector<PairMeasurement>& runs, const PairRule& rule) {
  PairsState s;
  std::vector<double> bests;
  for (const auto& n : nodes) {
    std::optional<double> best;
    for (const auto& m : runs)
      if (pairs_partner_of(m, n) && m.busbw) best = std::max(best.value_or(*m.busbw), *m.busbw);
    if (best) {
      s.j.best.emplace_back(n, *best);
      bests.push_back(*best);
    } else {
      s.j.unmeasured.push_back(n);
    }
  }
  if (bests.size() < 3) {
    s.j.undecided = fmt::format("{} node{} measured: at least 3 are needed to tell a slow node from a slow pair", bests.size(),
                                bests.size() == 1 ? "" : "s");
    return s;
  }
  s.j.reference = fleet::median(bests);
  if (!(*s.j.reference > 0)) {
    s.j.undecided = "the median of the nodes' best pairs is 0 GB/s: nothing to compare with";
    return s;
  }
  s.threshold = rule.ratio * *s.j.reference;
  for (const auto& [n, b] : s.j.best) {
    if (b < s.threshold) s.j.suspects.push_back(n);
    else s.healthy.insert(n);
  }
  for (const auto& sus : s.j.suspects) {
    int k = 0;
    for (const auto& m : runs)
      if (const auto* p = pairs_partner_of(m, sus); p && m.busbw && s.healthy.count(*p)) ++k;
    s.healthy_runs[sus] = k;
    // Below three times against healthy partners (every run of a suspect is below: its best
    // is): the cover's two and a confirm run, so one busy moment on a loaded node names nothing.
    if (k >= kConfirmRuns) s.j.slow_nodes.push_back(sus);
    else s.j.unconfirmed.push_back(sus);
  }
  for (const auto& m : runs) {
    if (!m.busbw || !s.healthy.count(m.pair.first) || !s.healthy.count(m.pair.second)) continue;
    auto it = std::find_if(s.healthy_pairs_slow.begin(), s.healthy_pairs_slow.end(),
                           [&](const auto& e) { return pairs_same(e.first, m.pair); });
    if (it == s.healthy_pairs_slow.end()) it = s.healthy_pairs_slow.insert(s.healthy_pairs_slow.end(), {m.pair, 0});
    ++it->second;
  }
  // Keep the pairs of healthy nodes with a slow run; a link is slow when every run of it is.
  std::vector<std::pair<NodePair, int>> slow;
  for (const auto& [pair, count] : s.healthy_pairs_slow) {
    int below = 0;
    for (const auto& m : runs)
      if (pairs_same(m.pair, pair) && m.busbw && *m.busbw < s.threshold) ++below;
    if (below == 0) continue;
    slow.emplace_back(pair, count);
    if (below == count && count >= 2) s.j.slow_links.push_back(pair);
  }
  s.healthy_pairs_slow = std::move(slow);
  return s;
}

}  // namespace

std::vector<std::vector<NodePair>> cover_rounds(const std::vector<std::string>& nodes) {
  const std::size_t n = nodes.size();
  if (n < 2) return {};
  if (n == 2) return {{{nodes[0], nodes[1]}}};
  std::vector<std::vector<NodePair>> rounds(n % 2 == 0 ? 2 : 3);
  for (std::size_t i = 0; i < n; ++i) {
    NodePair edge{nodes[i], nodes[(i + 1) % n]};
    // Even N: even edges, then odd ones (the wrap edge is odd). Odd N: the wrap edge would meet
    // node 0 twice in round 1, so it has a round of its own.
    if (n % 2 == 1 && i == n - 1) rounds[2].push_back(edge);
    else rounds[i % 2].push_back(edge);
  }
  return rounds;
}

PairJudgement judge_pairs(const std::vector<std::string>& nodes, const std::vector<PairMeasurement>& runs, const PairRule& rule) {
  return pairs_assess(nodes, runs, rule).j;
}

std::vector<NodePair> confirm_round(const std::vector<std::string>& nodes, const std::vector<PairMeasurement>& runs,
                                    const PairRule& rule) {
  auto s = pairs_assess(nodes, runs, rule);
  std::vector<NodePair> out;
  if (!s.j.undecided.empty()) return out;
  std::set<std::string> busy;
  for (const auto& sus : s.j.unconfirmed) {
    // A healthy partner it has not met, else any free healthy node (a second run is evidence too).
    const std::string* pick = nullptr;
    for (int pass = 0; pass < 2 && !pick; ++pass)
      for (const auto& entry : s.j.best) {
        const std::string& node = entry.first;  // a plain reference: lambdas capture it (clang 14 cannot capture a binding)
        if (!s.healthy.count(node) || busy.count(node)) continue;
        bool met = std::any_of(runs.begin(), runs.end(), [&](const PairMeasurement& m) {
          const auto* p = pairs_partner_of(m, sus);
          return p && *p == node;
        });
        if (pass == 0 && met) continue;
        pick = &node;
        break;
      }
    if (!pick) continue;
    busy.insert(sus);
    busy.insert(*pick);
    out.emplace_back(sus, *pick);
  }
  for (const auto& [pair, count] : s.healthy_pairs_slow) {
    if (count >= 2 || busy.count(pair.first) || busy.count(pair.second)) continue;
    busy.insert(pair.first);
    busy.insert(pair.second);
    out.push_back(pair);
  }
  // A pair whose benchmark gave no figure (a launcher hiccup, a step that hung) once, again.
  for (const auto& m : runs) {
    if (m.busbw || busy.count(m.pair.first) || busy.count(m.pair.second)) continue;
    int tries = 0;
    bool measured = false;
    for (const auto& o : runs)
      if (pairs_same(o.pair, m.pair)) {
        ++tries;
        measured = measured || o.busbw.has_value();
      }
    if (measured || tries >= 2) continue;
    busy.insert(m.pair.first);
    busy.insert(m.pair.second);
    out.push_back(m.pair);
  }
  // The other healthy nodes run too, paired among themselves: the round loads the fabric (and,
  // on shared hosts, the CPUs) as the cover rounds did, and gives fresh healthy figures.
  if (!out.empty()) {
    const std::string* waiting = nullptr;
    for (const auto& [node, best] : s.j.best) {
      if (!s.healthy.count(node) || busy.count(node)) continue;
      if (!waiting) {
        waiting = &node;
        continue;
      }
      out.emplace_back(*waiting, node);
      waiting = nullptr;
    }
  }
  return out;
}

report::Finding pairs_finding(const std::vector<std::string>& nodes, const std::vector<PairMeasurement>& runs,
                              const PairRule& rule, const PairSearchSummary& summary) {
  const auto j = judge_pairs(nodes, runs, rule);
  report::Finding f;
  f.id = "fanout.pairs";
  f.layer = "network";
  std::string bench = summary.benchmark.empty() ? std::string("the benchmark") : summary.benchmark.front();
  if (auto slash = bench.rfind('/'); slash != std::string::npos) bench.erase(0, slash + 1);
  const double threshold = j.reference ? rule.ratio * *j.reference : 0;
  auto gbps = [](double v) { return v < 1 ? fmt::format("{:.3g}", v) : fmt::format("{:.2f}", v); };

  std::vector<std::string> named;
  for (const auto& n : j.slow_nodes) named.push_back(n);
  for (const auto& l : j.slow_links) named.push_back(pairs_name(l));
  const std::string note = summary.interrupted ? " (interrupted: the rounds before it)"
                           : summary.budget_spent ? " (time budget spent: the rounds that fit)"
                                                  : "";
  if (!j.undecided.empty()) {
    f.status = report::Status::skip;
    f.title = fmt::format("pair search over {} nodes cannot decide: {}{}", nodes.size(), j.undecided, note);
  } else if (!named.empty()) {
    f.status = report::Status::fail;
    std::vector<std::string_view> views(j.slow_nodes.begin(), j.slow_nodes.end());
    std::string what;
    if (!j.slow_nodes.empty())
      what = fmt::format("node{} {} below the others with every healthy partner", j.slow_nodes.size() == 1 ? "" : "s",
                         parsers::compress_hostlist(views));
    if (!j.slow_links.empty()) {
      std::vector<std::string> links;
      for (const auto& l : j.slow_links) links.push_back(pairs_name(l));
      what += fmt::format("{}link{} {} slow between healthy nodes", what.empty() ? "" : "; ", links.size() == 1 ? "" : "s",
                          fmt::join(links, ","));
    }
    f.title = fmt::format("{} ({} busbw below {:.0f}% of the fleet's {} GB/s){}", what, bench, 100 * rule.ratio, gbps(*j.reference), note);
    f.subject = fmt::format("{}", fmt::join(named, ","));
    f.fix = "take the named nodes out of the job (scontrol update nodename=... state=drain reason=\"perfgap: fanout.pairs\"), "
            "then check them alone (perfgap check; their NIC, GPU and CPU placement) and their links (net.ib.counters)";
  } else if (!j.unconfirmed.empty() || !j.unmeasured.empty()) {
    f.status = report::Status::warn;
    std::vector<std::string_view> u(j.unconfirmed.begin(), j.unconfirmed.end());
    std::vector<std::string_view> m(j.unmeasured.begin(), j.unmeasured.end());
    f.title = fmt::format("{}{}{}{}", u.empty() ? "" : fmt::format("suspect{} {} not confirmed against a healthy partner", u.size() == 1 ? "" : "s", parsers::compress_hostlist(u)),
                          !u.empty() && !m.empty() ? "; " : "",
                          m.empty() ? "" : fmt::format("no successful run on {}", parsers::compress_hostlist(m)), note);
  } else {
    f.status = report::Status::pass;
    f.title = fmt::format("no node of {} below {:.0f}% of the fleet's {} GB/s: each has a pair at the others' level{}", nodes.size(),
                          100 * rule.ratio, gbps(*j.reference), note);
  }

  f.table.push_back({"round", "pair", "busbw GB/s", "of reference"});
  for (const auto& m : runs) {
    const std::string source = fmt::format("round {}", m.round);
    if (!m.busbw) {
      f.add(source, fmt::format("{}: no figure: {}", pairs_name(m.pair), m.error));
      // The whole reason (one line already): a cut at 40 bytes lost the words that said why.
      f.table.push_back({std::to_string(m.round), pairs_name(m.pair), "-", m.error});
      continue;
    }
    std::string ratio = j.reference ? fmt::format("{:.0f}%", 100 * *m.busbw / *j.reference) : "-";
    if (j.reference)
      f.add(source, fmt::format("{}: busbw {} GB/s ({}) in {:.1f}s", pairs_name(m.pair), gbps(*m.busbw), ratio, m.seconds),
            fmt::format(">= {} GB/s", gbps(threshold)));
    else
      f.add(source, fmt::format("{}: busbw {} GB/s in {:.1f}s", pairs_name(m.pair), gbps(*m.busbw), m.seconds));
    f.table.push_back({std::to_string(m.round), pairs_name(m.pair), gbps(*m.busbw), ratio});
    f.metric(fmt::format("busbw_gbps.r{}.{}", m.round, pairs_name(m.pair)), *m.busbw);
  }
  if (!summary.benchmark.empty()) {
    const std::string command = fmt::format("{}", fmt::join(summary.benchmark, " "));
    f.add("benchmark", command);
    // What the pairs' busbw measured: explain prices only that collective's exposed time with it.
    if (const auto coll = parsers::collective_of_command(command); coll != parsers::Coll::none)
      f.add(std::string(parsers::kCollectiveMeasuredEvidence), fmt::format("{} (by the benchmark's command)", parsers::coll_name(coll)));
  }
  f.table_always = true;
  f.metric("nodes", static_cast<double>(nodes.size()));
  f.metric("rounds", summary.rounds);
  f.metric("pairs_run", static_cast<double>(runs.size()));
  f.metric("wall_s", summary.wall_s);
  if (j.reference) f.metric("reference_busbw_gbps", *j.reference);
  f.metric("slow_nodes", static_cast<double>(j.slow_nodes.size()));
  f.metric("slow_links", static_cast<double>(j.slow_links.size()));
  for (const auto& [n, b] : j.best) f.metric("best_busbw_gbps." + n, b);
  return f;
}

}  // namespace perfgap::slurm
