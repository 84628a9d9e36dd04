#include "parsers/nccl_nodes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "parsers/tool_text.hpp"
#include "sys/text.hpp"

namespace perfgap::parsers {

namespace {

// A hostname worth counting: one with a letter or digit (not the "" or ":" of a prefix whose
// host was left out or masked).
bool nccl_named_host(std::string_view h) {
  return std::any_of(h.begin(), h.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

// "eth0:10.0.0.1<0>", "[0]eth0:10.0.0.1<0>", "enp1s0:fe80::1%enp1s0<0>": (interface, address);
// empty address when the token is not one.
std::pair<std::string_view, std::string_view> nccl_address_of(std::string_view tok) {
  if (!tok.empty() && tok.front() == '[') {
    auto close = tok.find(']');
    if (close == std::string_view::npos) return {};
    tok.remove_prefix(close + 1);
  }
  auto colon = tok.find(':');
  if (colon == std::string_view::npos || colon == 0) return {};
  auto addr = tok.substr(colon + 1);
  addr = addr.substr(0, addr.find('<'));
  return {tok.substr(0, colon), addr};
}

// The integer right after the word `name` among the message's words.
std::optional<long> nccl_word_value(const std::vector<std::string_view>& w, std::string_view name) {
  for (std::size_t i = 0; i + 1 < w.size(); ++i)
    if (w[i] == name)
      if (auto v = sys::to_int<long>(w[i + 1]); v && *v >= 0 && *v < (1L << 24)) return v;
  return std::nullopt;
}

std::string nccl_first_names(const std::set<std::string, std::less<>>& names, std::size_t most) {
  std::string out;
  std::size_t n = 0;
  for (const auto& x : names) {
    if (n++ == most) return out + fmt::format(", ... ({} in all)", names.size());
    out += (out.empty() ? "" : ", ") + x;
  }
  return out;
}

}  // namespace

namespace {

// An ISO 8601 stamp at the start of `s` ("2025-05-16T16:39:51.208-07:00", "...Z"): its length, 0 if none.
std::size_t iso_stamp_length(std::string_view s) {
  auto digits = [&](std::size_t at, std::size_t n) {
    if (at + n > s.size()) return false;
    for (std::size_t k = at; k < at + n; ++k)
      if (s[k] < '0' || s[k] > '9') return false;
    return true;
  };
  if (!digits(0, 4) || s.size() < 19 || s[4] != '-' || !digits(5, 2) || s[7] != '-' || !digits(8, 2) || s[10] != 'T' || !digits(11, 2) ||
      s[13] != ':' || !digits(14, 2) || s[16] != ':' || !digits(17, 2))
    return 0;
  std::size_t i = 19;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  }
  if (i < s.size() && s[i] == 'Z') return i + 1;
  if (i < s.size() && (s[i] == '+' || s[i] == '-') && digits(i + 1, 2) && i + 3 < s.size() && s[i + 3] == ':' && digits(i + 4, 2)) return i + 6;
  return i;
}

// The "host:pid:tid" token of a prefix and where it ends in it; empty when none.
std::string_view nccl_host_token(std::string_view prefix, std::size_t* end = nullptr) {
  for (std::size_t i = 0; i < prefix.size();) {
    while (i < prefix.size() && (prefix[i] == ' ' || prefix[i] == '\t')) ++i;
    std::size_t b = i;
    while (i < prefix.size() && prefix[i] != ' ' && prefix[i] != '\t') ++i;
    if (i == b) break;
    auto t = prefix.substr(b, i - b);
    // Open MPI's --tag-output label glued on: "[1,0]<stdout>:host:pid:tid".
    if (t.front() == '[')
      if (auto g = t.find(">:"); g != std::string_view::npos) t.remove_prefix(g + 2);
    if (auto n = iso_stamp_length(t); n > 0 && n < t.size()) t.remove_prefix(n);
    auto c2 = t.rfind(':');
    if (c2 == std::string_view::npos || c2 == 0) continue;
    auto c1 = t.rfind(':', c2 - 1);
    if (c1 == std::string_view::npos || c1 == 0) continue;
    auto pid = t.substr(c1 + 1, c2 - c1 - 1), tid = t.substr(c2 + 1);
    if (tooltext::is_integer(pid) && tooltext::is_integer(tid)) {
      if (end) *end = i;
      return t;
    }
  }
  return {};
}

}  // namespace

std::string_view nccl_line_host(std::string_view prefix) {
  auto t = nccl_host_token(prefix);
  if (t.empty()) return {};
  return t.substr(0, t.rfind(':', t.rfind(':') - 1));
}

void NcclNodeSigns::add_speaker(std::string_view prefix) {
  if (speakers.size() >= 8) return;  // one or more is all that matters
  std::size_t end = 0;
  auto t = nccl_host_token(prefix, &end);
  if (t.empty()) return;
  std::string key(t.substr(0, t.rfind(':')));
  auto dev = sys::trim_ws(prefix.substr(end));
  if (dev.starts_with('[')) key += " " + std::string(dev.substr(0, dev.find(']') + 1));
  speakers.insert(std::move(key));
}

void NcclNodeSigns::add_host(std::string_view host) {
  if (hosts.size() < kMaxKept && nccl_named_host(host) && hosts.find(host) == hosts.end()) hosts.emplace(host);
}

void NcclNodeSigns::info(std::string_view msg, std::string_view host, int line) {
  // "Ring 00 : 155[3d000] -> 157[b2000] via P2P/IPC", "Channel 00/0 : 0[0] -> 1[1] via ...": the ranks it names.
  if ((msg.starts_with("Ring ") || msg.starts_with("Channel ")) && sys::find(msg, " -> ") != std::string_view::npos) {
    const auto w = sys::split_ws(msg);
    for (std::size_t i = 1; i + 1 < w.size(); ++i)
      if (w[i] == "->")
        for (auto t : {w[i - 1], w[i + 1]})
          if (auto v = sys::to_int<long>(t.substr(0, t.find('['))); v && *v >= 0 && *v < (1L << 24)) max_channel_rank = std::max(max_channel_rank, *v);
  }
  // "comm 0x.. rank 0 nRanks 16 nNodes 2 localRanks 8" (2.19+), "comm 0x.. rank 3 nranks 16
  // cudaDev 3 busId .. - Init COMPLETE" (every version's init and destroy lines).
  if (auto p = sys::find(msg, " nNodes "); p != std::string_view::npos) {
    auto w = sys::split_ws(msg.substr(p + 8));
    if (!w.empty())
      if (auto v = sys::to_int<long>(w[0]); v && *v > 0 && *v < (1L << 24) && (!n_nodes || *v > *n_nodes)) {
        n_nodes = *v;
        n_nodes_line = line;
      }
  }
  if (sys::find(msg, "anks ") != std::string_view::npos) {
    const auto w = sys::split_ws(msg);
    auto n = nccl_word_value(w, "nranks");
    if (!n) n = nccl_word_value(w, "nRanks");
    if (n && *n > 0) {
      if (!n_ranks || *n > *n_ranks) n_ranks = *n;
      if (auto r = nccl_word_value(w, "rank"); r && *r < *n && nccl_named_host(host)) {
        auto& ranks = rank_hosts[*n];
        if (ranks.size() < kMaxKept && !ranks.count(*r)) ranks.emplace(*r, std::string(host));
      }
    }
    return;
  }
  auto keep = [&](std::set<std::string, std::less<>>& into, std::string_view tok) {
    auto [iface, addr] = nccl_address_of(tok);
    if (addr.empty()) return;
    const bool lo = iface == "lo" || sys::starts_with(addr, "127.") || addr == "::1";
    (lo ? loopback : non_loopback) = true;
    if (into.size() < kMaxKept && into.find(addr) == into.end()) into.emplace(addr);
  };
  // "Bootstrap : Using eth0:10.0.0.1<0>" (2.11-2.2x), "Bootstrap: Using ..." (later).
  if (sys::starts_with(msg, "Bootstrap")) {
    if (auto u = msg.find("Using "); u != std::string_view::npos) {
      auto w = sys::split_ws(msg.substr(u + 6));
      if (!w.empty()) keep(bootstrap, w[0]);
    }
    return;
  }
  if (!sys::starts_with(msg, "NET/")) return;
  if (auto p = msg.find("; OOB "); p != std::string_view::npos) {
    auto w = sys::split_ws(msg.substr(p + 6));
    if (!w.empty()) keep(oob, w[0]);
  }
  if (sys::starts_with(msg, "NET/Socket"))
    if (auto u = msg.find("Using ["); u != std::string_view::npos) {
      auto w = sys::split_ws(msg.substr(u + 6));
      if (!w.empty() && sys::starts_with(w[0], "[0]")) keep(socket, w[0]);
    }
}

void NcclNodeSigns::merge(const NcclNodeSigns& o) {
  if (o.n_nodes && (!n_nodes || *o.n_nodes > *n_nodes)) n_nodes = o.n_nodes, n_nodes_line = o.n_nodes_line;
  if (o.n_ranks && (!n_ranks || *o.n_ranks > *n_ranks)) n_ranks = o.n_ranks;
  for (const auto& [n, ranks] : o.rank_hosts) {
    auto& mine = rank_hosts[n];
    for (const auto& [r, h] : ranks)
      if (mine.size() < kMaxKept) mine.emplace(r, h);
  }
  for (const auto& h : o.hosts) add_host(h);
  for (const auto& sp : o.speakers)
    if (speakers.size() < 8) speakers.insert(sp);
  max_channel_rank = std::max(max_channel_rank, o.max_channel_rank);
  for (auto [into, from] : {std::pair{&bootstrap, &o.bootstrap}, {&oob, &o.oob}, {&socket, &o.socket}})
    for (const auto& a : *from)
      if (into->size() < kMaxKept) into->insert(a);
  loopback = loopback || o.loopback;
  non_loopback = non_loopback || o.non_loopback;
}

namespace {

// Every rank of the job (the largest communicator) named with its host: its distinct hosts;
// `detail` which rank on which. 0 where not every rank's line names its host.
long nccl_nodes_by_rank_hosts(const NcclNodeSigns& s, std::string& detail) {
  if (!s.n_ranks) return 0;
  auto it = s.rank_hosts.find(*s.n_ranks);
  if (it == s.rank_hosts.end() || static_cast<long>(it->second.size()) != *s.n_ranks) return 0;
  std::set<std::string, std::less<>> hosts;
  for (const auto& [r, h] : it->second) hosts.insert(h);
  if (it->second.size() <= 4) {
    for (const auto& [r, h] : it->second) detail += fmt::format("{}rank {} on {}", detail.empty() ? "" : ", ", r, h);
  } else {
    detail = fmt::format("{} ranks on {}", it->second.size(), nccl_first_names(hosts, 8));
  }
  return static_cast<long>(hosts.size());
}

}  // namespace

NcclNodes nccl_nodes(const NcclNodeSigns& s) {
  NcclNodes out;
  const auto n = s.n_ranks;
  if (s.n_nodes) {
    out.count = *s.n_nodes;
    out.basis = "NCCL's nNodes";
    out.detail = fmt::format("nNodes {}", *s.n_nodes);
    return out;
  }
  if (n && *n == 1) {
    out.count = 1;
    out.basis = "one rank (nranks 1)";
    return out;
  }
  if (s.loopback && !s.non_loopback) {
    out.count = 1;
    out.basis = "the ranks' addresses, all on the loopback interface, which reaches no other node";
    return out;
  }
  // The kind of address line that names the most: each names one address per process, and
  // two addresses of one kind are two nodes (the ranks of a node bootstrap on one interface).
  const std::set<std::string, std::less<>>* addrs = &s.bootstrap;
  const char* kind = "bootstrap";
  if (s.oob.size() > addrs->size()) addrs = &s.oob, kind = "OOB";
  if (s.socket.size() > addrs->size()) addrs = &s.socket, kind = "NET/Socket";
  const long addresses = static_cast<long>(addrs->size());
  // Hostnames fewer than the addresses are masked (a poster's "<cluster_name>") or shared by
  // several nodes: no count.
  std::string rank_detail;
  const long by_ranks = nccl_nodes_by_rank_hosts(s, rank_detail);
  const long hosts = static_cast<long>(s.hosts.size());
  std::string distrust;
  if ((by_ranks > 0 && by_ranks < addresses) || (by_ranks == 0 && hosts > 0 && hosts < addresses))
    distrust =
        fmt::format("the line prefixes name {} host{} ({}), fewer than the {} addresses: masked, or one name on several nodes",
                    by_ranks > 0 ? by_ranks : hosts, (by_ranks > 0 ? by_ranks : hosts) == 1 ? "" : "s", nccl_first_names(s.hosts, 8), kind);
  if (by_ranks > 0 && distrust.empty()) {
    out.count = by_ranks;
    out.basis = "the hostnames of every rank's NCCL INFO lines";
    out.detail = rank_detail;
    return out;
  }
  const bool hosts_fit = distrust.empty() && hosts > 0 && (!n || hosts <= *n), addresses_fit = addresses > 0 && (!n || addresses <= *n);
  if (hosts > 0 && n && hosts > *n)
    distrust = fmt::format("the line prefixes name {} hosts ({}) for {} ranks: not one per node", hosts, nccl_first_names(s.hosts, 8), *n);
  if (hosts_fit) {
    out.count = hosts;
    out.basis = "the hostnames of the NCCL INFO lines";
    out.detail = nccl_first_names(s.hosts, 8);
  } else if (addresses_fit) {
    out.count = addresses;
    out.basis = fmt::format("the ranks' {} addresses", kind);
    out.detail = nccl_first_names(*addrs, 8);
    if (!distrust.empty()) out.detail += "; " + distrust;
  } else {
    out.detail = distrust;
    return out;
  }
  // No more nodes than ranks: as many as the ranks is every one of them.
  out.at_least = !(n && out.count == *n);
  if (out.at_least && out.count == 1) {
    // One host among lines that may not show every rank: how many others ran is not shown.
    out.detail = fmt::format("the lines name one {} ({}){}", hosts_fit ? "host" : "address", out.detail,
                             n ? fmt::format(" for {} ranks, and not every rank's line is in the log", *n) : ", and no rank count");
    out.count = 0;
    out.basis.clear();
  }
  return out;
}

std::string nccl_nodes_count_words(const NcclNodes& n) {
  if (n.count <= 0) return {};
  return fmt::format("{}{} node{}", n.at_least ? "at least " : "", n.count, n.count == 1 ? "" : "s");
}

}  // namespace perfgap::parsers
