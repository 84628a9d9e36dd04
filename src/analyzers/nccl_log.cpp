#include <algorithm>

#include <fmt/format.h>

#include <map>
#include <set>

#include "analyzers/analyzers.hpp"
#include "analyzers/nccl_env.hpp"

namespace perfgap::analyzers {
namespace {

std::string at(const std::string& src, int line) { return line > 0 ? fmt::format("{}:{}", src, line) : src; }

double version_number(const std::string& v) {
  unsigned a = 0, b = 0, c = 0;
  if (std::sscanf(v.c_str(), "%u.%u.%u", &a, &b, &c) >= 2) return a * 10000.0 + b * 100.0 + c;
  return 0;
}


// What the logs say of NCCL's topology file: loaded, not opened, rejected, and the variables
// that name it.
struct NcclTopoSeen {
  std::vector<std::pair<std::string, std::string>> loaded, failed, rejected;  // (where, path or WARN text)
  std::optional<std::pair<std::string, std::string>> env, graph_env;
  int rejected_lines = 0;
};

NcclTopoSeen nccl_topo_seen(const std::vector<NcclLogInput>& logs) {
  NcclTopoSeen s;
  auto& loaded = s.loaded;
  auto& failed = s.failed;
  auto& rejected = s.rejected;
  auto& env = s.env;
  auto& graph_env = s.graph_env;
  for (const auto& in : logs) {
    for (const auto& [p, l] : in.log->topo_loaded) loaded.emplace_back(at(in.source, l), p);
    for (const auto& [p, l] : in.log->topo_open_failed) failed.emplace_back(at(in.source, l), p);
    for (const auto& [m, l] : in.log->topo_xml_warnings) rejected.emplace_back(at(in.source, l), m);
    s.rejected_lines += in.log->topo_xml_warning_lines;
    if (in.log->topo_file_env && !env) env = std::make_pair(at(in.source, in.log->topo_file_env->second), in.log->topo_file_env->first);
    for (const auto& [kv, l] : in.log->env_settings)
      if (!graph_env && kv.rfind("NCCL_GRAPH_FILE=", 0) == 0) graph_env = std::make_pair(at(in.source, l), kv.substr(16));
  }
  return s;
}

// nccl_log.topo_file: whether the topology file NCCL_TOPO_FILE names (or --expect-topo-file) reached NCCL.
Finding nccl_topo_file_finding(const std::vector<NcclLogInput>& logs, const std::string& subject, const NcclLogOptions& o) {
  const NcclTopoSeen s = nccl_topo_seen(logs);
  const auto& loaded = s.loaded;
  const auto& failed = s.failed;
  const auto& rejected = s.rejected;
  const auto& env = s.env;
  const auto& graph_env = s.graph_env;
  const int rejected_lines = s.rejected_lines;
  Finding f;
  f.id = "nccl_log.topo_file";
  f.layer = "network";
  f.subject = subject;
  std::optional<std::string> expected = o.expect_topo_file;
  if (!expected && env) expected = env->second;
  auto loaded_expected = [&] {
    if (!o.expect_topo_file) return !loaded.empty();
    for (const auto& [w, p] : loaded)
      if (p == *o.expect_topo_file) return true;
    return false;
  };
  if (env) f.add(env->first, "NCCL_TOPO_FILE set by environment to " + env->second);
  if (graph_env) f.add(graph_env->first, "NCCL_GRAPH_FILE set by environment to " + graph_env->second);
  for (const auto& [w, p] : failed) f.add(w, "could not open XML topology file " + p);
  for (std::size_t i = 0; i < rejected.size() && i < 4; ++i) f.add(rejected[i].first, "NCCL WARN " + rejected[i].second);
  if (rejected_lines > static_cast<int>(std::min<std::size_t>(rejected.size(), 4)))
    f.add(subject, fmt::format("{} NCCL WARN lines from NCCL's XML topology/graph reader in all", rejected_lines));
  for (std::size_t i = 0; i < loaded.size() && i < 4; ++i) f.add(loaded[i].first, "loading topology file " + loaded[i].second);
  const std::string fix = "make the file reach the job: mount it into the container at the path NCCL_TOPO_FILE names (enroot mounts.d / pyxis --container-mounts) and pass the variable (enroot environ.d, srun --export); check with perfgap check (nccl.topo_file)";
  const std::string impact = "without the topology file NCCL falls back to auto-detection: AllGather/ReduceScatter 2-4x slower on virtualized nodes (13-53% below reference)";
  if (!failed.empty()) {
    f.status = report::Status::fail;
    f.title = fmt::format("NCCL could not open the topology file {}: it fell back to auto-detection", failed.front().second);
    f.fix = fix;
    f.impact = impact;
  } else if (!rejected.empty()) {
    // NCCL read the file but could not use it: a file made for another machine (devices or
    // NICs it names are not on this node) or a damaged one. Init fails or NCCL falls back.
    const bool graph = graph_env && (!env || rejected.front().second.find("Channel") != std::string::npos);
    f.status = report::Status::fail;
    f.title = fmt::format("NCCL rejected the {} file{}: {}", graph ? "graph" : "topology",
                          graph ? " " + graph_env->second : env ? " " + env->second : std::string(), rejected.front().second);
    f.fix = "the file does not match this machine (it names devices or NICs the node does not have, or is damaged): use the file "
            "made for this node type, or regenerate it on the node (NCCL_TOPO_DUMP_FILE / NCCL_GRAPH_DUMP_FILE), or unset "
            "NCCL_GRAPH_FILE and let NCCL search; then check with perfgap analyze nvidia-smi (gpu.topology_file)";
    f.impact = "NCCL cannot build its rings/trees from the file: communicator init fails or falls back to a slower search";
  } else if (loaded_expected()) {
    f.status = report::Status::pass;
    f.title = fmt::format("NCCL loaded the topology file {}", loaded.front().second);
  } else if (!loaded.empty() && o.expect_topo_file) {
    f.status = report::Status::fail;
    f.title = fmt::format("NCCL loaded {} instead of the expected {}", loaded.front().second, *o.expect_topo_file);
    f.fix = fix;
    f.impact = impact;
    f.add("--expect-topo-file", *o.expect_topo_file);
  } else if (o.expect_topo_file && env && env->second != *o.expect_topo_file) {
    f.status = report::Status::fail;
    f.title = fmt::format("NCCL_TOPO_FILE is {} in the job, not the expected {}", env->second, *o.expect_topo_file);
    f.fix = fix;
    f.impact = impact;
  } else if (o.expect_topo_file && !env) {
    f.status = report::Status::fail;
    f.title = fmt::format("the log never mentions the expected topology file {}: NCCL_TOPO_FILE did not reach the job", *o.expect_topo_file);
    f.fix = fix;
    f.impact = impact;
    f.add("--expect-topo-file", *o.expect_topo_file, "NCCL_TOPO_FILE set by environment / Loading topology file");
  } else if (env) {
    // Set, no open failure logged. "Loading topology file" is only printed with
    // NCCL_DEBUG_SUBSYS including GRAPH; the open failure is printed by default (WARN up to
    // 2.26, INFO ENV since 2.27.3).
    f.status = report::Status::pass;
    f.title = fmt::format("NCCL_TOPO_FILE={} reached NCCL and no open failure is logged (NCCL_DEBUG_SUBSYS=GRAPH shows the load itself)", env->second);
  } else {
    f.status = report::Status::skip;
    f.title = "the log never mentions a topology file and none was expected (--expect-topo-file)";
  }
  (void)expected;
  return f;
}

// Each distinct (where, version): "host" or the file for lines without a host.
struct NcclVersionSeen {
  std::string who, version, where, shown;  // host or file; "2.21.5"; file:line; host or file:line
};

// What the logs say of NCCL's network: the networks and transports chosen, the channels over
// sockets or without GPUDirect RDMA, the signs of a fallback, versions, hosts and nodes.
struct NcclNetSeen {
  std::map<std::string, int> transports;  // "NET/IB", "P2P", ...
  std::map<std::string, std::pair<int, int>> gdr_by_dir;  // direction -> (net channels, with GDRDMA)
  std::vector<std::pair<std::string, std::string>> socket_channels, net_non_gdr;
  std::optional<std::pair<std::string, std::string>> using_socket, rdma_shown, fallback_sign, forced, plugin;
  std::set<std::string> nets;
  std::vector<NcclVersionSeen> version_where;
  std::set<std::string> hosts;
  std::optional<std::pair<int, std::string>> n_nodes;  // largest nNodes, where
  int gdr_enabled = 0;
  std::optional<int> coll, nvls, p2p;
  parsers::NcclNodeSigns node_signs;  // every log's, together
};

NcclNetSeen nccl_net_seen(const std::vector<NcclLogInput>& logs) {
  NcclNetSeen s;
  auto& [transports, gdr_by_dir, socket_channels, net_non_gdr, using_socket, rdma_shown, fallback_sign, forced, plugin, nets, version_where,
         hosts, n_nodes, gdr_enabled, coll, nvls, p2p, node_signs] = s;
  for (const auto& in : logs) {
    const auto& L = *in.log;
    for (const auto& [n, l] : L.using_network) {
      nets.insert(n);
      if (n == "Socket" && !using_socket) using_socket = std::make_pair(at(in.source, l), "Using network Socket");
    }
    if (!L.rdma_devices.empty() && !rdma_shown)
      rdma_shown = std::make_pair(at(in.source, L.rdma_devices.front().second), "RDMA device " + L.rdma_devices.front().first);
    if (L.net_plugin && !plugin) plugin = std::make_pair(at(in.source, L.net_plugin->second), L.net_plugin->first);
    if (L.ib_no_device && !fallback_sign) fallback_sign = std::make_pair(at(in.source, *L.ib_no_device), "NET/IB : No device found");
    if (L.ibverbs_missing && !fallback_sign) fallback_sign = std::make_pair(at(in.source, *L.ibverbs_missing), "Failed to open libibverbs (RDMA library missing in this environment)");
    for (const auto& [kv, l] : L.env_settings)
      if ((kv == "NCCL_IB_DISABLE=1" || kv == "NCCL_NET=Socket") && !forced) forced = std::make_pair(at(in.source, l), kv + " set by environment");
    // Channels come counted by kind, with their first lines: the first three lines of a
    // kind over all kinds are the log's first three, in file order.
    std::vector<std::pair<int, std::string>> socket_lines, non_gdr_lines;  // (line, evidence) of this file
    for (const auto& ch : L.channels) {
      std::string t = ch.transport == "NET" ? "NET/" + ch.net : ch.transport;
      transports[t] += ch.count;
      if (ch.transport == "NET") {
        if (ch.net == "Socket") {
          for (int l : ch.lines) socket_lines.emplace_back(l, "channel via NET/Socket");
          continue;
        }
        auto& g = gdr_by_dir[ch.direction];
        g.first += ch.count;
        if (ch.gdrdma) g.second += ch.count;
        else
          for (int l : ch.lines)
            non_gdr_lines.emplace_back(l, fmt::format("{}channel via NET/{} without GDRDMA", ch.direction.empty() ? "" : "[" + ch.direction + "] ", ch.net));
      }
    }
    std::sort(socket_lines.begin(), socket_lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::stable_sort(non_gdr_lines.begin(), non_gdr_lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [l, what] : socket_lines)
      if (socket_channels.size() < 3) socket_channels.emplace_back(at(in.source, l), what);
    for (const auto& [l, what] : non_gdr_lines)
      if (net_non_gdr.size() < 3) net_non_gdr.emplace_back(at(in.source, l), what);
    gdr_enabled += L.gdr_enabled_lines;
    for (const auto& v : L.versions) {
      std::string who = v.host.empty() ? in.source : v.host;
      bool seen = false;
      for (const auto& x : version_where) seen = seen || (x.who == who && x.version == v.version);
      if (!seen) version_where.push_back({who, v.version, at(in.source, v.line), v.host.empty() ? at(in.source, v.line) : v.host});
    }
    hosts.insert(L.hosts.begin(), L.hosts.end());
    node_signs.merge(L.nodes);
    if (L.n_nodes && (!n_nodes || *L.n_nodes > n_nodes->first)) n_nodes = std::make_pair(*L.n_nodes, at(in.source, L.n_nodes_line.value_or(0)));
    if (L.coll_channels) coll = L.coll_channels;
    if (L.nvls_channels) nvls = L.nvls_channels;
    if (L.p2p_channels) p2p = L.p2p_channels;
  }
  return s;
}

// How many nodes the logs show and how they were counted (NCCL's nNodes at `where`, the ranks'
// hostnames, their bootstrap/OOB addresses), or what was seen where nothing tells.
// `judged`: what the verdict took instead where the lines do not count them.
void nccl_nodes_evidence(Finding& f, const parsers::NcclNodes& n, const std::string& where, const std::string& judged) {
  if (n.count > 0)
    f.add("nodes", fmt::format("{} by {}{}", parsers::nccl_nodes_count_words(n), n.basis,
                               !where.empty()     ? " (" + where + ")"
                               : n.detail.empty() ? ""
                                                  : ": " + n.detail));
  else
    f.add("nodes",
          "not shown: " +
              (n.detail.empty() ? std::string("no nNodes, no hostname of every rank, no bootstrap or OOB address in the log") : n.detail) +
              (judged.empty() ? "" : "; " + judged));
}

// nccl_log.net's metrics: channels per transport and kind, the NCCL version where one, the
// nodes where counted exactly. Returns the distinct versions seen.
std::set<std::string> nccl_net_metrics(Finding& f, const NcclNetSeen& s, const parsers::NcclNodes& nodes) {
  for (const auto& [t, n] : s.transports) f.metric("channels." + t, n);
  if (s.coll) f.metric("coll_channels", *s.coll);
  if (s.nvls) f.metric("nvls_channels", *s.nvls);
  if (s.p2p) f.metric("p2p_channels", *s.p2p);
  std::set<std::string> distinct;
  for (const auto& v : s.version_where) distinct.insert(v.version);
  if (distinct.size() == 1) f.metric("nccl_version", version_number(*distinct.begin()));
  if (s.n_nodes) f.metric("nodes", s.n_nodes->first);
  else if (nodes.count > 0 && !nodes.at_least) f.metric("nodes", static_cast<double>(nodes.count));
  return distinct;
}

// Whether the log shows one node: NCCL's nNodes; else the nodes the ranks' hostnames or
// addresses show, where they show every one; else one host named and no NET channel, but not
// one host's lines of a job of more ranks whose other ranks' lines are not in the log (an
// excerpt), nor one rank's own file (NCCL_DEBUG_FILE per rank, a "[155]"-tagged excerpt: one
// process naming other ranks in its channels), whose peers' hosts the log does not show.
struct SingleNode {
  bool single = false, shown = false, exact = false;
  std::string why;
};
SingleNode nccl_single_node(const NcclNetSeen& s, const parsers::NcclNodes& nodes, bool net_channels) {
  SingleNode o;
  const auto& n_nodes = s.n_nodes;
  const auto& signs = s.node_signs;
  o.exact = !n_nodes && nodes.count > 0 && !nodes.at_least;
  const bool one_rank_of_many = signs.speakers.size() == 1 && signs.max_channel_rank >= 1;
  const bool one_host_of_many = nodes.count == 0 && ((signs.n_ranks && *signs.n_ranks > 1) || one_rank_of_many);
  o.single = n_nodes ? n_nodes->first == 1 : o.exact ? nodes.count == 1 : (s.hosts.size() == 1 && !net_channels && !one_host_of_many);
  o.shown = n_nodes ? n_nodes->first == 1 : o.exact && nodes.count == 1;
  o.why = n_nodes                                    ? fmt::format("nNodes 1 ({})", n_nodes->second)
          : o.exact                                  ? fmt::format("1 node by {}", nodes.basis)
          : s.hosts.size() == 1 && !one_host_of_many ? fmt::format("one host, {}, and no inter-node channel", *s.hosts.begin())
                                                     : "";
  return o;
}

// Sockets between nodes with no RDMA device shown, beside a failure: said, not one of its causes.
void nccl_sockets_beside(Finding& f, const std::optional<std::pair<std::string, std::string>>& fallback_sign) {
  f.add("also", fallback_sign ? "NCCL uses TCP sockets; NCCL found no RDMA device (" + fallback_sign->second +
                                    "): if the nodes have RDMA NICs the job cannot see them (--expect-net IB or Socket says which)"
                              : "NCCL uses TCP sockets; no RDMA device in the log (--expect-net IB or Socket says which)");
  if (fallback_sign) f.add(fallback_sign->first, fallback_sign->second);
}

// NCCL saying GPUDirect RDMA is off for its NICs ("GPU Direct RDMA Disabled for HCA 1 'mlx5_1'
// (no module)": nvidia-peermem not loaded, no dma-buf) while no channel uses GDRDMA: a network
// that otherwise passes warns (NVIDIA/nccl#899 passed); a failure or a skip keeps its verdict.
void nccl_gdr_disabled(Finding& f, const std::vector<NcclLogInput>& logs) {
  const NcclLogInput* in = nullptr;
  bool gdr_channel = false;
  for (const auto& l : logs) {
    if (!in && l.log->gdr_disabled) in = &l;
    for (const auto& c : l.log->channels) gdr_channel = gdr_channel || c.gdrdma;
  }
  if (!in || gdr_channel) return;
  const auto& [msg, line] = *in->log->gdr_disabled;
  f.add(at(in->source, line), msg, "GPU Direct RDMA Enabled");
  if (f.status != report::Status::pass) return;
  const bool no_module = msg.find("no module") != std::string::npos;
  f.status = report::Status::warn;
  f.title += fmt::format("; but NCCL says GPUDirect RDMA is disabled for its NICs{} ({} line{}): inter-node data is staged through host memory",
                         no_module ? " (no module: nvidia-peermem not loaded)" : "", in->log->gdr_disabled_lines,
                         in->log->gdr_disabled_lines == 1 ? "" : "s");
  f.fix = "load nvidia_peermem on every node (modprobe nvidia-peermem; or the open driver's dma-buf path with a recent kernel and NCCL), then "
          "check that the log says 'GPU Direct RDMA Enabled' and the channels 'via NET/IB/N/GDRDMA' (perfgap check: nccl.gdr on the node)";
  f.impact = "without GPUDirect RDMA every inter-node transfer is copied through host memory: lower bandwidth and more CPU and PCIe load";
}

// nccl_log.net: the network NCCL uses against what the job needs (RDMA, GPUDirect RDMA, one NCCL version).
Finding nccl_net_finding(const std::vector<NcclLogInput>& logs, const std::string& subject, const NcclLogOptions& o) {
  const NcclNetSeen s = nccl_net_seen(logs);
  const auto& [transports, gdr_by_dir, socket_channels, net_non_gdr, using_socket, rdma_shown, fallback_sign, forced, plugin, nets,
               version_where, hosts, n_nodes, gdr_enabled, coll, nvls, p2p, node_signs] = s;
  const auto nodes = parsers::nccl_nodes(node_signs);
  Finding f;
  f.id = "nccl_log.net";
  f.layer = "network";
  f.subject = subject;
  const std::set<std::string> distinct = nccl_net_metrics(f, s, nodes);

  // Inter-node traffic: NET channels, or more than one node. NCCL probes IB and picks a
  // network in every job, single-node ones included, where nothing goes over it: one node
  // ("nNodes 1", or one host named and no NET channel) has no inter-node traffic to judge.
  bool net_channels = !socket_channels.empty() || !gdr_by_dir.empty();
  const auto [single_node, one_node_shown, nodes_exact, single_why] = nccl_single_node(s, nodes, net_channels);
  // Socket carries traffic when channels run over it; a "Using network Socket" alone does
  // only when the job spans nodes.
  bool socket_used = !socket_channels.empty() || (using_socket && !single_node);
  // RDMA is expected when asked, when the log shows RDMA devices NCCL then did not use, or
  // sockets forced by the environment. NCCL finding no device ("NET/IB : No device found",
  // libibverbs missing) or channels over sockets alone do not tell a job that cannot see its
  // nodes' RDMA NICs from nodes that have none (Ethernet-only clusters: nccl#398, #226): a
  // warning that says both, never a failure that sends the user after devices they lack.
  bool ib_expected = o.expect_net ? *o.expect_net == "IB" : (rdma_shown || forced);
  std::vector<std::string> problems;
  if (socket_used && ib_expected) {
    problems.push_back(forced ? "NCCL uses NET/Socket (" + forced->second + ") where RDMA is expected"
                       : fallback_sign || rdma_shown || o.expect_net ? "NCCL fell back to NET/Socket where RDMA is expected"
                                                                     : "inter-node channels run over NET/Socket (TCP) instead of RDMA");
    if (using_socket) f.add(using_socket->first, using_socket->second, "Using network IB");
    for (const auto& [w, s] : socket_channels) f.add(w, s, "NET/IB");
    if (fallback_sign) f.add(fallback_sign->first, fallback_sign->second);
    if (rdma_shown) f.add(rdma_shown->first, rdma_shown->second);
    if (forced) f.add(forced->first, forced->second);
    if (o.expect_net) f.add("--expect-net", *o.expect_net);
  }
  // GDRDMA: expected, or mixed within one direction of the same run. With --expect-gdr, send
  // channels without it beside receive channels with it are NCCL's default GDR-read policy
  // ("GPU Direct RDMA Enabled ..., read 0"): the receive side shows GPUDirect RDMA works.
  const auto recv = gdr_by_dir.find("receive");
  const bool recv_gdr = recv != gdr_by_dir.end() && recv->second.second > 0;
  bool gdr_problem = false;
  for (const auto& [dir, g] : gdr_by_dir) {
    if (g.first == 0) continue;
    const bool read_policy = dir == "send" && recv_gdr;
    if ((o.expect_gdr && g.second < g.first && !read_policy) || (g.second > 0 && g.second < g.first)) gdr_problem = true;
    f.metric(fmt::format("net_channels{}", dir.empty() ? "" : "." + dir), g.first);
    f.metric(fmt::format("gdrdma_channels{}", dir.empty() ? "" : "." + dir), g.second);
  }
  if (const auto send = gdr_by_dir.find("send");
      !gdr_problem && recv_gdr && send != gdr_by_dir.end() && send->second.second < send->second.first)
    f.add("GDRDMA", "send channels without GDRDMA beside receive channels with it: NCCL's default GPUDirect RDMA read policy ('read 0'), not a failure");
  if (gdr_problem) {
    problems.push_back(o.expect_gdr ? "inter-node channels run without GPUDirect RDMA (--expect-gdr)"
                                    : "some inter-node channels use GDRDMA and others do not");
    for (const auto& [w, s] : net_non_gdr) f.add(w, s, "GDRDMA");
  }
  // Last: the title leads with the problem whose fix the finding gives (the network's first).
  if (distinct.size() > 1) {
    std::string list;
    for (const auto& v : version_where) list += (list.empty() ? "" : ", ") + v.shown + " " + v.version;
    problems.push_back("ranks report different NCCL versions: " + list);
    for (const auto& v : version_where) f.add(v.where, "NCCL version " + v.version + (v.shown == v.where ? "" : " on " + v.shown));
  }
  std::string tlist;
  for (const auto& [t, n] : transports) tlist += fmt::format("{}{} {}", tlist.empty() ? "" : ", ", t, n);
  std::string netlist;
  for (const auto& n : nets) netlist += (netlist.empty() ? "" : ",") + n;
  if (netlist.empty())
    for (const auto& [t, n] : transports)
      if (t.rfind("NET/", 0) == 0) netlist += (netlist.empty() ? "" : ",") + t.substr(4) + " (from channel lines)";
  if (!problems.empty()) {
    f.status = report::Status::fail;
    f.title = problems.front() + (problems.size() > 1 ? fmt::format(" (+{} more)", problems.size() - 1) : "");
    for (std::size_t i = 1; i < problems.size(); ++i) f.add("also", problems[i]);
    if (socket_used && !ib_expected && !(o.expect_net && *o.expect_net == "Socket")) nccl_sockets_beside(f, fallback_sign);
    if (socket_used && ib_expected)
      f.fix = "make the RDMA devices usable inside the job: /dev/infiniband/uverbs* and libibverbs/rdma-core in the container, no NCCL_IB_DISABLE/NCCL_NET=Socket; verify 'Using network IB' and 'via NET/IB/.../GDRDMA' in the log";
    else if (gdr_problem)
      f.fix = "load nvidia_peermem (or use the dma-buf path of the open driver) on every node, and keep the GPU and NIC under the same PCIe switch (NCCL_NET_GDR_LEVEL)";
    constexpr const char* kSameBuild = "run the same NCCL build on every rank (one container image, no host LD_LIBRARY_PATH overrides)";
    if (f.fix.empty()) f.fix = kSameBuild;
    else if (distinct.size() > 1) f.fix += std::string("; and ") + kSameBuild;
    f.impact = socket_used && ib_expected ? "TCP sockets instead of RDMA: inter-node bandwidth a fraction of the fabric's" : "collectives slower than the fabric allows";
  } else if (socket_used && !ib_expected) {
    bool asked = o.expect_net && *o.expect_net == "Socket";
    f.status = asked ? report::Status::pass : report::Status::warn;
    const std::string none_seen = fallback_sign ? fmt::format("NCCL found no RDMA device ({})", fallback_sign->second) : "no RDMA device in the log";
    f.title = asked ? "NCCL uses NET/Socket, as --expect-net Socket asked"
              : forced ? fmt::format("NCCL uses TCP sockets because {}; {} (--expect-net IB if this node has RDMA NICs, --expect-net Socket if intended)",
                                     forced->second, none_seen)
                       : fmt::format("NCCL uses TCP sockets{}; {}: if the nodes have RDMA NICs the job cannot see them, if not TCP is their network "
                                     "(--expect-net IB or --expect-net Socket says which)",
                                     socket_channels.empty() ? "" : " between nodes", none_seen);
    if (forced) f.add(forced->first, forced->second);
    if (fallback_sign) f.add(fallback_sign->first, fallback_sign->second);
    if (using_socket) f.add(using_socket->first, using_socket->second);
    if (!asked) {
      f.fix = forced ? "drop " + forced->second.substr(0, forced->second.find(' ')) + " if the node has RDMA NICs" : "if the nodes have RDMA NICs, make them visible to the job (devices, libibverbs)";
      f.impact = "TCP sockets: inter-node bandwidth a fraction of an RDMA fabric's";
    }
  } else if (single_node && !net_channels && (using_socket || nets.empty() || one_node_shown)) {
    // Whichever network NCCL picked: on one node it carries nothing. An RDMA network counts only
    // where the log shows one node exactly (nNodes 1, or every rank's host or address): one host
    // named in an excerpt of a larger job's log is no proof.
    f.status = report::Status::skip;
    f.title = fmt::format("single node ({}): no inter-node traffic, so the network NCCL picked{} carries nothing to judge",
                          single_why, netlist.empty() ? "" : " (" + netlist + ")");
    if (using_socket) f.add(using_socket->first, using_socket->second + " (no inter-node peer)");
    if (fallback_sign) f.add(fallback_sign->first, fallback_sign->second + " (NCCL probes IB in every job)");
    if (rdma_shown) f.add(rdma_shown->first, rdma_shown->second);
    if (forced) f.add(forced->first, forced->second + " (matters once the job spans nodes)");
    if (!tlist.empty()) f.add("channels", tlist);
  } else if (o.expect_net && *o.expect_net == "Socket" && !socket_used && !nets.empty()) {
    f.status = report::Status::pass;
    f.title = fmt::format("NCCL uses network {} (--expect-net Socket asked for sockets)", netlist);
  } else if (o.expect_gdr && !net_channels && !nets.empty() && !single_node) {
    // --expect-gdr asks what only channel lines show; a network chosen says nothing of it.
    f.status = report::Status::skip;
    f.title = fmt::format("NCCL uses network {}, but whether its channels use GPUDirect RDMA (--expect-gdr) is not in the log: "
                          "no channel lines ('via NET/...': NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS including INIT)",
                          netlist);
  } else if (!nets.empty() || transports.count("NET/IB") || !gdr_by_dir.empty()) {
    // GPUDirect RDMA in use: NET/IB's "GPU Direct RDMA Enabled" lines, or channels of any RDMA
    // network saying GDRDMA ("via NET/IBext_v8/7/GDRDMA": net plugins print no such line).
    int gdr_channels = 0;
    for (const auto& [dir, g] : gdr_by_dir) gdr_channels += g.second;
    f.status = report::Status::pass;
    f.title = fmt::format("NCCL uses network {}{}{}", netlist, tlist.empty() ? "" : "; channels: " + tlist,
                          gdr_enabled || gdr_channels > 0 ? ", GPUDirect RDMA enabled" : "");
  } else if (!transports.empty()) {
    f.status = report::Status::skip;
    f.title = "no inter-node transport in the log (intra-node channels only: " + tlist + ")";
  } else {
    f.status = report::Status::skip;
    f.title = "the log shows no network selection ('Using network ...') and no channel lines";
    if (plugin) f.add(plugin->first, "network plugin " + plugin->second + " initialized (which network NCCL then used is not in the log)");
  }
  if (f.status == report::Status::pass || f.status == report::Status::skip)
    for (const auto& v : version_where) f.add(v.where, "NCCL version " + v.version + (v.shown == v.where ? "" : " on " + v.shown));
  nccl_nodes_evidence(f, nodes, n_nodes ? n_nodes->second : "",
                      single_node && !n_nodes && !nodes_exact ? "judged one node: one host named and no inter-node channel" : "");
  return f;
}

}  // namespace

std::vector<Finding> analyze_nccl_logs(const std::vector<NcclLogInput>& logs, const NcclLogOptions& o) {
  std::vector<Finding> out;
  std::string subject = logs.size() == 1 ? logs[0].source : fmt::format("{} logs", logs.size());
  out.push_back(nccl_topo_file_finding(logs, subject, o));
  out.push_back(nccl_net_finding(logs, subject, o));
  nccl_gdr_disabled(out.back(), logs);
  out.push_back(nccl_log_errors_finding(logs, subject));
  // The job's own NCCL environment, as the log's "X set by environment to Y" lines show it,
  // judged as the node check judges the node's (nccl.env.forced). Said only where something is
  // forced: a log at WARN level, or with another subsystem mask, prints none of these lines.
  facts::NcclConfig env;
  for (const auto& in : logs)
    for (const auto& [kv, line] : in.log->env_settings)
      if (auto eq = kv.find('='); eq != std::string::npos)
        env.env.emplace(kv.substr(0, eq), facts::NcclSetting{kv.substr(eq + 1), at(in.source, line), true});
  if (auto forced = judge_nccl_forced(env, subject, ""); forced.status != report::Status::pass) {
    forced.subject = subject;
    out.push_back(std::move(forced));
  }
  return out;
}

}  // namespace perfgap::analyzers
