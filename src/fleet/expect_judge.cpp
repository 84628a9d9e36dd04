// Learning expectations from a fleet's facts, and judging one node against them (expect.hpp).
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "fleet/expect.hpp"
#include "sys/text.hpp"

namespace perfgap::fleet {

namespace {

using report::Finding;
using report::Status;

// The key's value on each node of a kind ("" when the node has no such key), and the vote.
Entry vote(const std::vector<const NodeFacts*>& nodes, Aspect a, const std::string& key) {
  std::map<std::string, std::size_t> tally;
  std::vector<std::pair<std::string, std::string>> held;
  for (const auto* n : nodes) {
    auto fa = n->facts.find(a);
    std::string v;
    if (fa != n->facts.end())
      if (auto it = fa->second.find(key); it != fa->second.end()) v = it->second;
    ++tally[v];
    held.emplace_back(n->node, v);
  }
  auto best = std::max_element(tally.begin(), tally.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  Entry e;
  e.value = best->first;
  e.agreed = best->second;
  e.nodes = nodes.size();
  for (auto& [node, v] : held)
    if (v != e.value) e.others.emplace_back(node, v);
  return e;
}

std::string tally_text(const Entry& e) {
  std::map<std::string, std::size_t> counts;
  for (const auto& o : e.others) ++counts[o.second];
  std::string out = fmt::format("{} on {}", e.value.empty() ? "absent" : e.value, e.agreed);
  for (const auto& [v, n] : counts) out += fmt::format(", {} on {}", v.empty() ? "absent" : v, n);
  return out + fmt::format(" of {} nodes", e.nodes);
}

// A key of a measurement given beside the reports: voted (versions) or a floor learned
// (measured) among the nodes measured, which must be more than half of the kind.
void learn_measured(KindExpectation& k, const std::vector<const NodeFacts*>& nodes, Aspect a, const std::string& key, double agree_pct) {
  std::vector<const NodeFacts*> measured;
  std::vector<std::pair<std::string, double>> figures;
  for (const auto* n : nodes)
    if (auto fa = n->facts.find(a); fa != n->facts.end())
      if (auto it = fa->second.find(key); it != fa->second.end()) {
        measured.push_back(n);
        if (auto v = sys::to_double(it->second)) figures.emplace_back(n->node, *v);
      }
  const auto left_out = [&](const std::string& why) {
    k.left_out.push_back(fmt::format("{}: {}: {}", aspect_name(a), key, why));
  };
  if (measured.size() * 2 <= nodes.size()) {
    left_out(fmt::format("measured on {} of {} nodes (more than half needed)", measured.size(), nodes.size()));
    return;
  }
  if (a != Aspect::measured) {
    auto e = vote(measured, a, key);
    const bool clear = static_cast<double>(e.agreed) * 100.0 >= agree_pct * static_cast<double>(e.nodes) && e.agreed * 2 > e.nodes;
    if (clear) k.entries[a][key] = std::move(e);
    else left_out(tally_text(e));
    return;
  }
  auto e = learn_floor(figures, nodes.size());
  if (!e) {
    left_out(fmt::format("measured on {} of {} nodes (at least 3 needed)", figures.size(), nodes.size()));
  } else if (static_cast<double>(e->agreed) * 100.0 < agree_pct * static_cast<double>(e->nodes)) {
    left_out(fmt::format("{} of {} measured nodes below {} ({})", e->others.size(), e->nodes, e->value, e->note));
  } else {
    k.entries[a][key] = std::move(*e);
  }
}

KindExpectation learn_kind(const std::string& kind, const std::vector<const NodeFacts*>& nodes, double agree_pct) {
  KindExpectation k;
  k.kind = kind;
  k.nodes = nodes.size();
  for (auto a : kAspects) {
    std::set<std::string> keys;
    for (const auto* n : nodes)
      if (auto fa = n->facts.find(a); fa != n->facts.end())
        for (const auto& [key, v] : fa->second) keys.insert(key);
    for (const auto& key : keys) {
      if (from_measurement(key)) {
        learn_measured(k, nodes, a, key, agree_pct);
        continue;
      }
      auto e = vote(nodes, a, key);
      // A clear majority: the share asked for, and always more than half (never a minority).
      const bool clear = static_cast<double>(e.agreed) * 100.0 >= agree_pct * static_cast<double>(e.nodes) && e.agreed * 2 > e.nodes;
      if (clear && !e.value.empty()) k.entries[a][key] = std::move(e);
      else k.left_out.push_back(fmt::format("{}: {}: {}", aspect_name(a), key, tally_text(e)));
    }
  }
  return k;
}

// "port mlx5_1:1 rate_gbps" -> "port mlx5_1:1"; a node-wide key ("gpus") has no device.
std::string device_of(const std::string& key) {
  auto sp = key.rfind(' ');
  return sp == std::string::npos ? std::string() : key.substr(0, sp);
}

// How much a difference weighs: missing or degraded hardware fails, other differences warn.
Status weigh(Aspect a, const std::string& key, const std::string& expected, const std::string& found) {
  if (a == Aspect::versions || a == Aspect::settings) return Status::warn;
  if (a == Aspect::placement) return Status::fail;
  if (key.ends_with(" state")) return expected == "ACTIVE" ? Status::fail : Status::warn;
  if (key == "nic_models") {
    // A model of the kind's NICs gone fails; another model fitted beside them warns.
    for (auto model : sys::split(expected, '+'))
      if (found.find(sys::trim_ws(model)) == std::string::npos) return Status::fail;
    return Status::warn;
  }
  auto e = sys::to_double(expected), f = sys::to_double(found);
  if (e && f) return *f < *e ? Status::fail : Status::warn;
  return Status::warn;
}

// The differences of one aspect, devices missing altogether said once ("port mlx5_1:1 missing").
std::vector<ExpectDifference> differences(Aspect a, const std::map<std::string, Entry>& expected, const NodeFacts& node,
                                    const std::string& where, std::size_t& not_judged) {
  static const std::map<std::string, std::string> kNone;
  auto fa = node.facts.find(a);
  const auto& facts = fa == node.facts.end() ? kNone : fa->second;
  const auto read = [&](const std::string& key) {
    auto src = source_of(a, key);
    return std::find(node.sources_read.begin(), node.sources_read.end(), src) != node.sources_read.end();
  };
  // A device whose every key is absent though its source was read: missing.
  std::map<std::string, bool> device_gone;
  for (const auto& [key, e] : expected) {
    auto dev = device_of(key);
    if (dev.empty() || from_measurement(key)) continue;
    const bool absent = !facts.count(key) && read(key);
    auto [it, fresh] = device_gone.emplace(dev, absent);
    if (!fresh) it->second = it->second && absent;
  }
  std::vector<ExpectDifference> out;
  std::set<std::string> said;
  for (const auto& [key, e] : expected) {
    auto it = facts.find(key);
    const std::string src = where + ": " + std::string(aspect_name(a)) + ": " + key;
    // A measurement not given for this node says nothing of it: not judged.
    if (from_measurement(key) && it == facts.end()) {
      ++not_judged;
      continue;
    }
    if (it != facts.end() && a == Aspect::measured) {
      auto floor = floor_of(e.value);
      auto found = sys::to_double(it->second);
      // Below the kind's floor: slower than the kind's own noise explains. A run over one node is
      // that node's; a run over several names each of its nodes, and which one is slow it
      // cannot tell (perfgap pairs can): a warning, not a failure of this node.
      const bool own = from_probe(key) || key.find(" 1 node ") != std::string::npos;
      if (floor && found && *found < *floor)
        out.push_back({a, own ? Status::fail : Status::warn,
                       fmt::format("{} {} (kind: {}){}", key, it->second, e.value, own ? "" : ", in a run over several nodes"),
                       {src, it->second, e.value}});
      continue;
    }
    if (it != facts.end()) {
      if (it->second != e.value)
        out.push_back({a, weigh(a, key, e.value, it->second), fmt::format("{} {} (kind: {})", key, it->second, e.value), {src, it->second, e.value}});
      continue;
    }
    const auto dev = device_of(key);
    if (!read(key)) {
      out.push_back({a, Status::warn, key + " not read on this node", {src, "not read (" + std::string(source_of(a, key)) + ")", e.value}});
    } else if (!dev.empty() && device_gone[dev]) {
      // A device gone is missing hardware, said by counts and links; its firmware is no
      // version that differs.
      if (a == Aspect::versions || a == Aspect::settings) continue;
      if (said.insert(dev).second) out.push_back({a, Status::fail, dev + " missing", {where + ": " + dev, "absent", "present"}});
    } else {
      out.push_back({a, a == Aspect::versions || a == Aspect::settings ? Status::warn : Status::fail, key + " absent", {src, "absent", e.value}});
    }
  }
  return out;
}

std::string fix_for(Aspect a) {
  switch (a) {
    case Aspect::versions:
    case Aspect::settings:
      return "Bring the node to its kind's versions and settings (the image, the driver, the boot parameters), or if the "
             "difference is meant, review the expectation file (perfgap expect learn --update keeps reviewed entries).";
    case Aspect::measured:
      return "Run nccl-tests on this node alone and with a node of its kind that meets the floor (perfgap pairs finds the slow "
             "node of a run over several); the node's own findings (net.ib.*, pcie.link, gpu.*, nccl.*) and fleet.pace "
             "name the usual causes. A probe figure below its kind's: run perfgap probe again on the idle node, then compare "
             "its DIMMs (dmidecode -t memory; memory triad), the GPU's link and socket (pcie.link, gpu.inventory; h2d/d2h) or "
             "its BIOS power settings (cpu.*; busy MHz) with a node that meets the floor. If the kind's figures changed for "
             "good (a new NCCL, another fabric, new firmware), relearn.";
    default:
      return "Find what changed against the node's kind (a NIC or GPU gone from PCI, a link trained narrow or slow, a port down "
             "or at a lower rate, a device on the other socket): reseat or replace it, or drain the node; if the difference "
             "is by design, review the expectation file.";
  }
}

// "(2 not judged: no nccl-tests or probe measurement of this node was given)", or "".
std::string not_judged_text(std::size_t n) {
  return n ? fmt::format(" ({} not judged: no nccl-tests or probe measurement of this node was given)", n) : std::string();
}

Finding judge_aspect(Aspect a, const KindExpectation& k, std::vector<ExpectDifference> diffs, std::size_t not_judged,
                     const std::string& file) {
  Finding f;
  f.id = std::string(aspect_id(a));
  f.layer = "fleet";
  auto ex = k.entries.find(a);
  if (ex == k.entries.end() || ex->second.empty()) {
    f.status = Status::skip;
    f.title = fmt::format("{} expects no {} of kind {}", file, aspect_name(a), k.kind);
    return f;
  }
  const std::size_t judged = ex->second.size() - not_judged;
  f.metric("entries", static_cast<double>(ex->second.size())).metric("differences", static_cast<double>(diffs.size()));
  if (judged == 0) {
    f.status = Status::skip;
    f.title = fmt::format("no measurement of this node was given for the {} {} entries of its kind ({}): perfgap fleet "
                          "--expect with the node's analyze nccl-tests and probe reports judges them",
                          ex->second.size(), aspect_name(a), k.kind);
    return f;
  }
  if (diffs.empty()) {
    f.status = Status::pass;
    f.title = fmt::format("the node matches the {} {} entries of its kind ({}){}", judged, aspect_name(a), k.kind, not_judged_text(not_judged));
    f.add(fmt::format("{}: {}: {}", file, k.kind, aspect_name(a)), fmt::format("{} entries as expected{}", judged, not_judged_text(not_judged)));
    return f;
  }
  f.status = Status::warn;
  std::vector<std::string> lines;
  for (auto& d : diffs) {
    if (d.status == Status::fail) f.status = Status::fail;
    lines.push_back(d.line);
    f.evidence.push_back(std::move(d.evidence));
  }
  f.title = fmt::format("{}", fmt::join(lines, "; "));
  f.fix = fix_for(a);
  return f;
}

}  // namespace

std::vector<ExpectDifference> expect_differences(const KindExpectation& k, const NodeFacts& node, const std::string& file) {
  std::vector<ExpectDifference> out;
  for (const auto& [a, entries] : k.entries) {
    std::size_t not_judged = 0;
    auto d = differences(a, entries, node, file + ": " + k.kind, not_judged);
    out.insert(out.end(), std::make_move_iterator(d.begin()), std::make_move_iterator(d.end()));
  }
  return out;
}

Expectations learn(std::span<const NodeFacts> nodes, double agree_pct) {
  std::map<std::string, std::vector<const NodeFacts*>> by_kind;
  for (const auto& n : nodes) by_kind[n.kind].push_back(&n);
  Expectations out;
  for (const auto& [kind, members] : by_kind) out.kinds.push_back(learn_kind(kind, members, agree_pct));
  return out;
}

void keep_reviewed(Expectations& learned, const Expectations& reviewed) {
  for (const auto& r : reviewed.kinds) {
    auto it = std::find_if(learned.kinds.begin(), learned.kinds.end(), [&](const KindExpectation& k) { return k.kind == r.kind; });
    if (it == learned.kinds.end()) {
      learned.kinds.push_back(r);
      continue;
    }
    for (const auto& [a, entries] : r.entries)
      for (const auto& [key, e] : entries) {
        auto kept = e;
        kept.kept = true;
        it->entries[a][key] = std::move(kept);
        // (a plain string: clang 14 lambdas cannot capture structured bindings)
        const std::string said = fmt::format("{}: {}: ", aspect_name(a), key);
        std::erase_if(it->left_out, [&said](const std::string& l) { return sys::starts_with(l, said); });
      }
  }
  std::sort(learned.kinds.begin(), learned.kinds.end(), [](const auto& x, const auto& y) { return x.kind < y.kind; });
}

std::vector<report::Finding> judge_expectations(const Expectations& e, const NodeFacts& node) {
  std::vector<Finding> out;
  const auto* k = find_kind(e, node);
  if (!k) {
    std::vector<std::string> kinds;
    for (const auto& x : e.kinds) kinds.push_back(x.kind);
    for (auto a : kAspects) {
      if (a == Aspect::measured) continue;  // said only where the file has measured entries (below)
      Finding f;
      f.id = std::string(aspect_id(a));
      f.layer = "fleet";
      f.status = Status::skip;
      f.title = fmt::format("the node's kind ({}) is not in {} (it has: {})", node.kind, e.file,
                            kinds.empty() ? std::string("none") : fmt::format("{}", fmt::join(kinds, "; ")));
      out.push_back(std::move(f));
    }
    return out;
  }
  static const std::map<std::string, Entry> kNone;
  for (auto a : kAspects) {
    auto ex = k->entries.find(a);
    // The measured aspect holds figures given beside the reports, never in a check report: a
    // file without any says nothing of it (no finding), rather than a skip on every node.
    if (a == Aspect::measured && (ex == k->entries.end() || ex->second.empty())) continue;
    std::size_t not_judged = 0;
    auto mine = differences(a, ex == k->entries.end() ? kNone : ex->second, node, e.file + ": " + k->kind, not_judged);
    out.push_back(judge_aspect(a, *k, std::move(mine), not_judged, e.file));
  }
  return out;
}

}  // namespace perfgap::fleet
