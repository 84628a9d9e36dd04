#include "parsers/nccl_log.hpp"

#include "parsers/tool_text.hpp"
#include "sys/text.hpp"

namespace perfgap::parsers {
namespace {

// The host of "host:pid:tid [dev] NCCL ..." (the token before the last two ':'-fields).
std::string host_of(std::string_view prefix) {
  for (std::size_t i = 0; i < prefix.size();) {
    while (i < prefix.size() && (prefix[i] == ' ' || prefix[i] == '\t')) ++i;
    std::size_t b = i;
    while (i < prefix.size() && prefix[i] != ' ' && prefix[i] != '\t') ++i;
    if (i == b) break;
    auto t = prefix.substr(b, i - b);
    auto c2 = t.rfind(':');
    if (c2 == std::string_view::npos || c2 == 0) continue;
    auto c1 = t.rfind(':', c2 - 1);
    if (c1 == std::string_view::npos) continue;
    auto pid = t.substr(c1 + 1, c2 - c1 - 1), tid = t.substr(c2 + 1);
    if (tooltext::is_integer(pid) && tooltext::is_integer(tid)) return std::string(t.substr(0, c1));
  }
  return "";
}

// Blanks, or a launcher label only: srun's "0:", Open MPI's "[1,0]<stdout>:".
bool launcher_label_only(std::string_view s) {
  s = sys::trim_ws(s);
  if (s.empty()) return true;
  if (s.back() != ':') return false;
  s.remove_suffix(1);
  if (tooltext::is_integer(s)) return true;
  return s.size() > 2 && s.front() == '[' && s.find("]<") != std::string_view::npos && s.back() == '>';
}

std::string first_word(std::string_view s) {
  auto w = sys::split_ws(s);
  return w.empty() ? std::string() : std::string(w[0]);
}

std::string strip_dot(std::string s) {
  while (!s.empty() && (s.back() == '.' || s.back() == ',')) s.pop_back();
  return s;
}

}  // namespace

Parsed<NcclLog> parse_nccl_log(std::string_view text) {
  NcclLog out;
  int lineno = 0;
  std::string lead;  // a prefix-less "NCCL INFO ..." line with a blank in front
  auto add_version = [&](const std::string& host, const std::string& v, int at) {
    for (const auto& x : out.versions)
      if (x.host == host && x.version == v) return;
    out.versions.push_back({host, v, at});
  };
  for (std::size_t pos = 0, nl = 0; pos < text.size(); pos = nl + 1) {
    nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    auto raw = text.substr(pos, nl - pos);
    ++lineno;
    auto line = tooltext::chomp(raw);
    if (line.size() > 65536) line = line.substr(0, 65536);
    // A bare "NCCL version 2.18.5+cuda12.2" (printed by rank 0 in some versions).
    auto vpos = line.find("NCCL version ");
    auto info = line.find(" NCCL INFO ");
    auto warn = line.find(" NCCL WARN ");
    // Without the host:pid:tid prefix the line starts with "NCCL INFO " (after blanks and a
    // launcher label such as srun's "0: " or Open MPI's "[1,0]<stdout>:").
    if (info == std::string_view::npos && warn == std::string_view::npos) {
      for (const char* tag : {"NCCL INFO ", "NCCL WARN "}) {
        auto p = line.find(tag);
        if (p == std::string_view::npos || !launcher_label_only(line.substr(0, p))) continue;
        lead = " ";
        lead.append(line.substr(p));
        line = lead;
        (tag[5] == 'I' ? info : warn) = 0;
        vpos = line.find("NCCL version ");
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
      continue;
    }
    ++out.nccl_lines;
    bool is_warn = info == std::string_view::npos || (warn != std::string_view::npos && warn < info);
    auto at = is_warn ? warn : info;
    auto prefix = line.substr(0, at);
    auto msg = sys::trim_ws(line.substr(at + 11));
    auto host = host_of(prefix);
    if (!host.empty()) out.hosts.insert(host);
    if (is_warn) out.warnings.emplace_back(std::string(msg), lineno);

    if (auto p = msg.find("NCCL version "); p != std::string_view::npos) {
      auto v = first_word(msg.substr(p + 13));
      v = v.substr(0, v.find('+'));
      if (!v.empty() && v[0] >= '0' && v[0] <= '9') add_version(host, v, lineno);
      continue;
    }
    // "comm 0x... rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0" (2.19+).
    if (auto p = msg.find(" nNodes "); p != std::string_view::npos) {
      auto w = sys::split_ws(msg.substr(p + 8));
      if (!w.empty())
        if (auto n = sys::to_int<int>(w[0]); n && *n > 0 && (!out.n_nodes || *n > *out.n_nodes)) {
          out.n_nodes = *n;
          out.n_nodes_line = lineno;
        }
    }
    if (sys::starts_with(msg, "Using network ")) {
      out.using_network.emplace_back(std::string(sys::trim_ws(msg.substr(14))), lineno);
      continue;
    }
    // The network plugin NCCL loaded: "NET/OFI Initializing aws-ofi-nccl 1.13.2-aws",
    // "P2P plugin IBext_v8", "NET/Plugin: Loaded net plugin NCCL RDMA Plugin v8 (v8)".
    if (!out.net_plugin) {
      for (std::string_view key : {std::string_view("Initializing aws-ofi-nccl "), std::string_view("P2P plugin "), std::string_view("Loaded net plugin ")})
        if (auto p = msg.find(key); p != std::string_view::npos) {
          auto name = sys::trim_ws(msg.substr(p + (key == "Initializing aws-ofi-nccl " ? 13 : key.size())));
          if (!name.empty()) out.net_plugin = std::make_pair(std::string(name), lineno);
          break;
        }
    }
    if (sys::starts_with(msg, "NET/IB") && msg.find("No device found") != std::string_view::npos) {
      out.ib_no_device = out.ib_no_device.value_or(lineno);
      continue;
    }
    if (msg.find("Failed to open libibverbs") != std::string_view::npos) {
      out.ibverbs_missing = out.ibverbs_missing.value_or(lineno);
      continue;
    }
    if (msg.find("GPU Direct RDMA Enabled") != std::string_view::npos) {
      out.gdr_enabled.emplace_back(std::string(msg), lineno);
      continue;
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
          (socket ? out.socket_devices : out.rdma_devices).emplace_back(dev, lineno);
        }
        continue;
      }
    }
    if (auto p = msg.find(" set by environment to "); p != std::string_view::npos) {
      auto name = first_word(msg.substr(0, p));
      auto value = strip_dot(std::string(sys::trim_ws(msg.substr(p + 23))));
      out.env_settings.emplace_back(name + "=" + value, lineno);
      if (name == "NCCL_TOPO_FILE" && !out.topo_file_env) out.topo_file_env = std::make_pair(value, lineno);
      continue;
    }
    if (auto p = msg.find("Loading topology file "); p != std::string_view::npos) {
      out.topo_loaded.emplace_back(first_word(msg.substr(p + 22)), lineno);
      continue;
    }
    if (auto p = msg.find("Could not open XML topology file "); p != std::string_view::npos) {
      out.topo_open_failed.emplace_back(first_word(msg.substr(p + 33)), lineno);
      continue;
    }
    if (auto v = msg.find(" via "); v != std::string_view::npos &&
        (sys::starts_with(msg, "Channel ") || sys::starts_with(msg, "Ring ") || sys::starts_with(msg, "Tree ") ||
         msg.find(" -> ") != std::string_view::npos)) {
      NcclChannel ch;
      ch.host = host;
      ch.line = lineno;
      auto head = msg.substr(0, v);
      if (head.find("[send]") != std::string_view::npos) ch.direction = "send";
      else if (head.find("[receive]") != std::string_view::npos) ch.direction = "receive";
      auto path = sys::trim_ws(msg.substr(v + 5));
      auto parts = sys::split(path, '/');
      ch.transport = parts.empty() ? std::string() : std::string(sys::trim_ws(parts[0]));
      if (ch.transport == "NET" && parts.size() > 1) ch.net = std::string(parts[1]);
      ch.gdrdma = path.find("GDRDMA") != std::string_view::npos;
      if (!ch.transport.empty()) out.channels.push_back(std::move(ch));
      continue;
    }
    if (auto p = msg.find(" coll channels"); p != std::string_view::npos) {
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
      continue;
    }
  }
  if (out.nccl_lines == 0) return parse_fail("no NCCL log line (NCCL INFO/WARN or 'NCCL version')");
  return out;
}

}  // namespace perfgap::parsers
