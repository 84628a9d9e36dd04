#include "parsers/nccl_log.hpp"

#include <cstdint>
#include <functional>
#include <unordered_set>

#include "parsers/line_feed.hpp"
#include "parsers/nccl_nodes.hpp"
#include "parsers/tool_text.hpp"
#include "sys/text.hpp"

namespace perfgap::parsers {
namespace {

// Blanks, or a launcher label only: srun's "0:", Open MPI's "[1,0]<stdout>:".
bool launcher_label_only(std::string_view s) {
  s = sys::trim_ws(s);
  if (s.empty()) return true;
  if (s.back() != ':') return false;
  s.remove_suffix(1);
  if (tooltext::is_integer(s)) return true;
  return s.size() > 2 && s.front() == '[' && s.find("]<") != std::string_view::npos && s.back() == '>';
}

// "init.cc:915 -> 2", "transport/net_ib.cc:1295 -> 6 [Proxy Thread]": a source line passing a
// non-zero ncclResult_t up (NCCL's error return chain, printed at INFO).
bool nccl_error_return(std::string_view msg) {
  const auto w = sys::split_ws(msg);
  if (w.size() < 3 || w[1] != "->") return false;
  const auto colon = w[0].rfind(':');
  if (colon == std::string_view::npos || colon == 0 || !tooltext::is_integer(w[0].substr(colon + 1))) return false;
  const auto file = w[0].substr(0, colon);
  if (!(file.ends_with(".cc") || file.ends_with(".cu") || file.ends_with(".c") || file.ends_with(".cpp") || file.ends_with(".h"))) return false;
  return tooltext::is_integer(w[2]) && w[2] != "0";
}

std::string first_word(std::string_view s) {
  auto w = sys::split_ws(s);
  return w.empty() ? std::string() : std::string(w[0]);
}

std::string strip_dot(std::string s) {
  while (!s.empty() && (s.back() == '.' || s.back() == ',')) s.pop_back();
  return s;
}

// The bytes a text holds, folded to their low 6 bits, as a 64-bit set: a needle with a
// byte the message lacks cannot be in it, so most of the dozen needles below are ruled out
// without a search (a log line is read once per rank and channel: the parser's hot loop).
// Folding makes it a superset (no needle is wrongly ruled out) kept in one register.
struct ByteSet {
  std::uint64_t bits = 0;
  constexpr explicit ByteSet(std::string_view s) {
    for (char c : s) bits |= std::uint64_t{1} << (static_cast<unsigned char>(c) & 63);
  }
  constexpr bool holds(const ByteSet& n) const { return (n.bits & ~bits) == 0; }
};

struct Needle {
  std::string_view text;
  ByteSet bytes;
  constexpr Needle(std::string_view t) : text(t), bytes(t) {}
};

// Where `n` first occurs in `msg` (whose bytes are `have`), as string_view::find.
std::size_t find_in(std::string_view msg, const ByteSet& have, const Needle& n) {
  return have.holds(n.bytes) ? sys::find(msg, n.text) : std::string_view::npos;
}

using SeenSet = std::unordered_set<std::string, sys::ViewHash, std::equal_to<>>;

// Adds (value, line) to `list` the first time `value` is seen.
void add_once(std::vector<std::pair<std::string, int>>& list, SeenSet& seen, std::string value, int line) {
  if (seen.count(value)) return;
  seen.insert(value);
  list.emplace_back(std::move(value), line);
}

}  // namespace

template <>
struct ParserState<NcclLog> : FeedsLines<ParserState<NcclLog>> {
  NcclLog out;
  int lineno = 0;
  std::string lead;  // a prefix-less "NCCL INFO ..." line with a blank in front
  // Hash sets of what was kept, for the lookup on every line; hosts mirrors out.hosts (an
  // ordered set for the report): a tree lookup per line costs a fifth of the parse.
  SeenSet versions, hosts, networks, rdma, sockets, env, gdr;
  std::string key;  // scratch: host NUL version
  void add_version(std::string_view host, const std::string& v, int at) {
    key.assign(host).push_back('\0');
    key += v;
    if (versions.count(key)) return;
    versions.insert(key);
    out.versions.push_back({std::string(host), v, at});
  }
  void add_channel(NcclChannel ch) {
    for (auto& c : out.channels)
      if (c.transport == ch.transport && c.net == ch.net && c.direction == ch.direction && c.gdrdma == ch.gdrdma) {
        ++c.count;
        if (c.lines.size() < NcclLog::kFirstLines) c.lines.push_back(ch.line);
        return;
      }
    ch.count = 1;
    ch.lines = {ch.line};
    out.channels.push_back(std::move(ch));
  }
  void line(std::string_view raw);
  void message(std::string_view msg, std::string_view host);
  Parsed<NcclLog> finish();
};

void ParserState<NcclLog>::line(std::string_view raw) {
  ++lineno;
  auto line = tooltext::chomp(raw);
  if (line.size() > 65536) line = line.substr(0, 65536);
  // A bare "NCCL version 2.18.5+cuda12.2" (printed by rank 0 in some versions). One walk
  // over the "NCCL " in the line finds the first " NCCL INFO " or " NCCL WARN " (the
  // earlier decides) and, without either, the first "NCCL version ".
  auto vpos = std::string_view::npos, info = std::string_view::npos, warn = std::string_view::npos;
  for (auto h = sys::find(line, "NCCL "); h != std::string_view::npos; h = sys::find(line, "NCCL ", h + 1)) {
    auto rest = line.substr(h + 5);
    if (vpos == std::string_view::npos && sys::starts_with(rest, "version ")) vpos = h;
    if (h > 0 && line[h - 1] == ' ') {
      if (sys::starts_with(rest, "INFO ")) info = h - 1;
      else if (sys::starts_with(rest, "WARN ")) warn = h - 1;
      if (info != std::string_view::npos || warn != std::string_view::npos) break;
    }
  }
  // Without the host:pid:tid prefix the line starts with "NCCL INFO " (after blanks and a
  // launcher label such as srun's "0: " or Open MPI's "[1,0]<stdout>:").
  if (info == std::string_view::npos && warn == std::string_view::npos) {
    for (const char* tag : {"NCCL INFO ", "NCCL WARN "}) {
      auto p = sys::find(line, tag);
      if (p == std::string_view::npos || !launcher_label_only(line.substr(0, p))) continue;
      lead = " ";
      lead.append(line.substr(p));
      line = lead;
      (tag[5] == 'I' ? info : warn) = 0;
      vpos = sys::find(line, "NCCL version ");
      break;
    }
  }
  if (info == std::string_view::npos && warn == std::string_view::npos) {
    if (vpos != std::string_view::npos) {
      auto v = first_word(line.substr(vpos + 13));
      v = v.substr(0, v.find('+'));
      if (!v.empty() && v[0] >= '0' && v[0] <= '9') {
        ++out.nccl_lines;
        add_version("", v, lineno);
      }
    }
    return;
  }
  ++out.nccl_lines;
  bool is_warn = info == std::string_view::npos || (warn != std::string_view::npos && warn < info);
  auto at = is_warn ? warn : info;
  auto prefix = line.substr(0, at);
  auto msg = sys::trim_ws(line.substr(at + 11));
  auto host = nccl_line_host(prefix);
  out.nodes.add_speaker(prefix);
  if (!host.empty() && hosts.find(host) == hosts.end()) {
    hosts.emplace(host);
    out.hosts.emplace(host);
    out.nodes.add_host(host);
  }
  if (is_warn) {
    ++out.warning_lines;
    if (out.warnings.size() < NcclLog::kMaxWarnings) out.warnings.emplace_back(std::string(msg), lineno);
    if (sys::starts_with(msg, "XML ")) {
      ++out.topo_xml_warning_lines;
      if (out.topo_xml_warnings.size() < NcclLog::kFirstLines) out.topo_xml_warnings.emplace_back(std::string(msg), lineno);
    }
  }
  if (!is_warn && nccl_error_return(msg)) {
    ++out.error_return_lines;
    if (out.error_returns.size() < NcclLog::kFirstLines) out.error_returns.emplace_back(std::string(msg), lineno);
  }
  message(msg, host);
}

// One INFO or WARN message (after its tag), from `host`: what it says, into out.
void ParserState<NcclLog>::message(std::string_view msg, std::string_view host) {
  const ByteSet have(msg);
  static constexpr Needle kVersion("NCCL version "), kAwsOfi("Initializing aws-ofi-nccl "), kP2pPlugin("P2P plugin "),
      kNetPlugin("Loaded net plugin "), kNoDevice("No device found"), kNoVerbs("Failed to open libibverbs"),
      kGdr("GPU Direct RDMA Enabled"), kGdrOff("GPU Direct RDMA Disabled"), kByEnv(" set by environment to "), kLoading("Loading topology file "),
      kCannotOpen("Could not open XML topology file "), kVia(" via "), kArrow(" -> "), kColl(" coll channels");

  if (auto p = find_in(msg, have, kVersion); p != std::string_view::npos) {
    auto v = first_word(msg.substr(p + 13));
    v = v.substr(0, v.find('+'));
    if (!v.empty() && v[0] >= '0' && v[0] <= '9') add_version(host, v, lineno);
    return;
  }
  // "comm 0x... rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0" (2.19+), the
  // ranks' hosts and bootstrap/OOB addresses: what the log says of the nodes.
  out.nodes.info(msg, host, lineno);
  if (sys::starts_with(msg, "Using network ")) {
    add_once(out.using_network, networks, std::string(sys::trim_ws(msg.substr(14))), lineno);
    return;
  }
  // NCCL 2.3-2.4: "Using internal Network Socket" (or IB), before net plugins had names.
  if (sys::starts_with(msg, "Using internal Network ")) {
    add_once(out.using_network, networks, std::string(sys::trim_ws(msg.substr(23))), lineno);
    return;
  }
  // The network plugin NCCL loaded: "NET/OFI Initializing aws-ofi-nccl 1.13.2-aws",
  // "P2P plugin IBext_v8", "NET/Plugin: Loaded net plugin NCCL RDMA Plugin v8 (v8)".
  if (!out.net_plugin) {
    for (const Needle* key : {&kAwsOfi, &kP2pPlugin, &kNetPlugin})
      if (auto p = find_in(msg, have, *key); p != std::string_view::npos) {
        auto name = sys::trim_ws(msg.substr(p + (key == &kAwsOfi ? 13 : key->text.size())));
        if (!name.empty()) out.net_plugin = std::make_pair(std::string(name), lineno);
        break;
      }
  }
  if (sys::starts_with(msg, "NET/IB") && find_in(msg, have, kNoDevice) != std::string_view::npos) {
    out.ib_no_device = out.ib_no_device.value_or(lineno);
    return;
  }
  if (find_in(msg, have, kNoVerbs) != std::string_view::npos) {
    out.ibverbs_missing = out.ibverbs_missing.value_or(lineno);
    return;
  }
  if (find_in(msg, have, kGdrOff) != std::string_view::npos) {
    ++out.gdr_disabled_lines;
    if (!out.gdr_disabled) out.gdr_disabled = std::make_pair(std::string(msg), lineno);
    return;
  }
  if (find_in(msg, have, kGdr) != std::string_view::npos) {
    ++out.gdr_enabled_lines;
    add_once(out.gdr_enabled, gdr, std::string(msg), lineno);
    return;
  }
  if (sys::starts_with(msg, "NET/")) {
    auto u = msg.find(": Using ");
    if (u == std::string_view::npos) u = msg.find(" Using [");
    if (u != std::string_view::npos) {
      bool socket = sys::starts_with(msg, "NET/Socket");
      auto rest = msg.substr(msg.find("Using ", u) + 6);
      auto semi = rest.find(';');
      if (semi != std::string_view::npos) rest = rest.substr(0, semi);  // "; OOB eth0:..."
      for (auto tok : sys::split_ws(rest)) {
        if (tok.empty() || tok[0] != '[') continue;
        auto close = tok.find(']');
        if (close == std::string_view::npos) continue;
        auto dev = std::string(tok.substr(close + 1));
        if (socket) add_once(out.socket_devices, sockets, std::move(dev), lineno);
        else add_once(out.rdma_devices, rdma, std::move(dev), lineno);
      }
      return;
    }
  }
  if (auto p = find_in(msg, have, kByEnv); p != std::string_view::npos) {
    auto name = first_word(msg.substr(0, p));
    auto value = strip_dot(std::string(sys::trim_ws(msg.substr(p + 23))));
    add_once(out.env_settings, env, name + "=" + value, lineno);
    if (name == "NCCL_TOPO_FILE" && !out.topo_file_env) out.topo_file_env = std::make_pair(value, lineno);
    return;
  }
  if (auto p = find_in(msg, have, kLoading); p != std::string_view::npos) {
    out.topo_loaded.emplace_back(first_word(msg.substr(p + 22)), lineno);
    return;
  }
  if (auto p = find_in(msg, have, kCannotOpen); p != std::string_view::npos) {
    out.topo_open_failed.emplace_back(first_word(msg.substr(p + 33)), lineno);
    return;
  }
  if (auto v = find_in(msg, have, kVia); v != std::string_view::npos &&
      (sys::starts_with(msg, "Channel ") || sys::starts_with(msg, "Ring ") || sys::starts_with(msg, "Tree ") ||
       find_in(msg, have, kArrow) != std::string_view::npos)) {
    NcclChannel ch;
    ch.line = lineno;
    auto head = msg.substr(0, v);
    if (head.find("[send]") != std::string_view::npos) ch.direction = "send";
    else if (head.find("[receive]") != std::string_view::npos) ch.direction = "receive";
    auto path = sys::trim_ws(msg.substr(v + 5));
    auto slash = path.find('/');  // "NET/IB/0/GDRDMA": transport, then the network
    ch.transport = std::string(sys::trim_ws(path.substr(0, slash)));
    if (ch.transport == "NET" && slash != std::string_view::npos) {
      auto net = path.substr(slash + 1);
      ch.net = std::string(net.substr(0, net.find('/')));
    }
    ch.gdrdma = path.find("GDRDMA") != std::string_view::npos;
    if (!ch.transport.empty()) add_channel(std::move(ch));
    return;
  }
  if (auto p = find_in(msg, have, kColl); p != std::string_view::npos) {
    auto n = sys::to_int<int>(msg.substr(0, p));
    if (n) out.coll_channels = *n;
    auto q = msg.find(" nvls channels");
    if (q != std::string_view::npos) {
      auto b = msg.rfind(' ', q - 1);
      if (auto m = sys::to_int<int>(msg.substr(b == std::string_view::npos ? 0 : b + 1, q - (b == std::string_view::npos ? 0 : b + 1)))) out.nvls_channels = *m;
    }
    auto r = msg.find(" p2p channels");
    if (r != std::string_view::npos) {
      auto b = msg.rfind(' ', r - 1);
      if (auto m = sys::to_int<int>(msg.substr(b == std::string_view::npos ? 0 : b + 1, r - (b == std::string_view::npos ? 0 : b + 1)))) out.p2p_channels = *m;
    }
    return;
  }
}

Parsed<NcclLog> ParserState<NcclLog>::finish() {
  if (out.nccl_lines == 0) return parse_fail("no NCCL log line (NCCL INFO/WARN or 'NCCL version')");
  if (out.nodes.n_nodes) {
    out.n_nodes = static_cast<int>(*out.nodes.n_nodes);
    out.n_nodes_line = out.nodes.n_nodes_line;
  }
  return std::move(out);
}

template class LineParser<NcclLog>;

Parsed<NcclLog> parse_nccl_log(std::string_view text) { return parse_whole<NcclLogParser>(text); }

}  // namespace perfgap::parsers
