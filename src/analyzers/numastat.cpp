#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>
#include <vector>

#include "analyzers/analyzers.hpp"

namespace perfgap::analyzers {

namespace {
Finding remote_finding(std::string subject) {
  Finding f;
  f.id = "numastat.remote";
  f.layer = "placement";
  f.subject = std::move(subject);
  return f;
}
}  // namespace

std::vector<Finding> analyze_numastat(const parsers::Numastat& n, const std::string& source) {
  std::vector<Finding> out;
  auto judge = [](Finding& f, double share) {
    if (share > 0.10) f.status = report::Status::fail;
    else if (share > 0.05) f.status = report::Status::warn;
    else f.status = report::Status::pass;
  };
  switch (n.layout) {
    case parsers::Numastat::Layout::meminfo: {
      Finding f = remote_finding(source);
      f.status = report::Status::skip;
      f.title = "numastat -m is system-wide memory per node: it says nothing about a process's remote share (use numastat -p PID)";
      out.push_back(std::move(f));
      break;
    }
    case parsers::Numastat::Layout::process: {
      // Repeated runs repeat a pid: the last table of each pid counts.
      std::map<std::string, const parsers::NumastatProcess*> last;
      std::vector<std::string> order;
      for (const auto& p : n.processes) {
        std::string key = p.pid.empty() ? p.name : p.pid;
        if (!last.count(key)) order.push_back(key);
        last[key] = &p;
      }
      for (const auto& key : order) {
        const auto& p = *last[key];
        Finding f = remote_finding(p.pid.empty() ? source : "pid:" + p.pid);
        double total = 0, main = 0;
        std::size_t main_i = 0;
        for (std::size_t i = 0; i < p.per_node.size(); ++i) {
          total += p.per_node[i];
          if (p.per_node[i] > main) {
            main = p.per_node[i];
            main_i = i;
          }
        }
        std::string who = p.pid.empty() ? "process" : fmt::format("pid {}{}", p.pid, p.name.empty() ? "" : " (" + p.name + ")");
        if (total <= 0) {
          f.status = report::Status::skip;
          f.title = who + ": no memory in the table";
          out.push_back(std::move(f));
          continue;
        }
        // A shell or a launcher with a few MB: its placement costs the job nothing, and one
        // page off-node moves its share by whole percents.
        if (total < kNumastatMinProcessMb) {
          f.status = report::Status::skip;
          f.title = fmt::format("{}: {:.2f} MB in all, below the {:.0f} MB worth judging (a training process holds GBs)", who, total,
                                kNumastatMinProcessMb);
          f.metric("total_mb", total);
          out.push_back(std::move(f));
          continue;
        }
        double share = 1.0 - main / total;
        auto node_of = [&](std::size_t i) { return i < p.nodes.size() ? p.nodes[i] : static_cast<int>(i); };
        int main_node = node_of(main_i);
        // Nodes holding as much as the largest, within 1%: no node is the process's own, its memory
        // is spread (numactl --interleave, or pages placed wherever they were first touched).
        std::vector<int> even;
        for (std::size_t i = 0; i < p.per_node.size(); ++i)
          if (p.per_node[i] >= 0.99 * main) even.push_back(node_of(i));
        const bool spread = even.size() >= 2;
        judge(f, share);
        std::string per;
        for (std::size_t i = 0; i < p.per_node.size(); ++i) per += fmt::format("{}node {}: {:.2f} MB", i ? ", " : "", node_of(i), p.per_node[i]);
        f.add(fmt::format("{}:{}", source, p.line), per, "<= 5% off the main node");
        f.metric("remote_pct", 100 * share);
        f.metric("total_mb", total);
        if (spread) {
          f.metric("even_nodes", static_cast<double>(even.size()));
          f.title = fmt::format("{}: {:.2f} MB spread evenly over nodes {} (interleaved): {:.1f}% is off any one node it runs on", who, total,
                                fmt::join(even, ", "), 100 * share);
        } else {
          f.metric("main_node", main_node);
          f.title = fmt::format("{}: {:.1f}% of {:.2f} MB outside its main node {}", who, 100 * share, total, main_node);
        }
        // numastat -p before numactl's fix for its issue 147 (December 2022) counted every huge
        // page at the system's default huge-page size: 2 MiB pages under a 1 GiB default read 512
        // times too large, in whole GiB per node. The split between nodes is right either way.
        double huge = 0;
        bool whole_gib = !p.huge.empty();
        for (double v : p.huge) {
          huge += v;
          whole_gib = whole_gib && std::abs(v / 1024 - std::round(v / 1024)) < 1e-6;
        }
        if (whole_gib && huge > 0 && huge >= 0.5 * total)
          f.add(fmt::format("{}:{}", source, p.line),
                fmt::format("the Huge row is whole GiB on every node ({:.2f} MB of the {:.2f}): 1 GiB pages, or numastat counting 2 MiB pages at "
                            "a 1 GiB default size, 512 times too large (numactl issue 147, fixed in December 2022); /proc/{}/numa_maps "
                            "(kernelpagesize_kB and N<node>= pages) gives the true amounts, the split between nodes holds either way",
                            huge, total, p.pid.empty() ? std::string("PID") : p.pid));
        if (f.status != report::Status::pass) {
          f.fix = spread ? "its memory is interleaved over the nodes, so most accesses are remote whichever node runs it: bind each rank's CPUs "
                           "and memory to its GPU's NUMA node instead (numactl --cpunodebind=N --membind=N, not --interleave; or the "
                           "launcher's binding), and disable automatic NUMA balancing"
                         : "bind each rank's CPUs and memory to its GPU's NUMA node (numactl --cpunodebind=N --membind=N, or the launcher's binding), and disable automatic NUMA balancing";
          f.impact = "remote memory accesses cost bandwidth and latency on the loader and host-side paths (18% remote in the reference case)";
        }
        out.push_back(std::move(f));
      }
      break;
    }
    case parsers::Numastat::Layout::counters: {
      const auto& c = *n.counters;
      auto row = [&](const char* k) -> const std::vector<double>* {
        auto it = c.rows.find(k);
        return it == c.rows.end() ? nullptr : &it->second;
      };
      auto local = row("local_node"), other = row("other_node");
      if (!local || !other) {
        Finding f = remote_finding(source);
        f.status = report::Status::skip;
        f.title = "numastat counters without local_node/other_node rows";
        out.push_back(std::move(f));
        break;
      }
      for (std::size_t i = 0; i < c.nodes.size() && i < local->size() && i < other->size(); ++i) {
        Finding f = remote_finding(fmt::format("node{}", c.nodes[i]));
        double l = (*local)[i], o = (*other)[i];
        if (l + o <= 0) {
          f.status = report::Status::skip;
          f.title = fmt::format("node {}: no allocations counted", c.nodes[i]);
          out.push_back(std::move(f));
          continue;
        }
        double share = o / (l + o);
        judge(f, share);
        f.add(fmt::format("{}:{}", source, c.line), fmt::format("local_node {:.0f}, other_node {:.0f}", l, o), "other_node <= 5%");
        f.metric("other_node_pct", 100 * share);
        f.title = fmt::format("node {}: {:.2f}% of allocations here were made by processes running on other nodes (other_node)", c.nodes[i], 100 * share);
        if (f.status != report::Status::pass) {
          f.fix = "bind processes and their memory to the same node (numactl --cpunodebind/--membind); disable automatic NUMA balancing";
          f.impact = "remote memory traffic";
        }
        out.push_back(std::move(f));
      }
      break;
    }
  }
  for (auto& d : damaged_lines("numastat.remote", "placement", source, n.damaged)) out.push_back(std::move(d));
  return out;
}

}  // namespace perfgap::analyzers
