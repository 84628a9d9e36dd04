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
    if (info == std::string_view::npos && warn == std::string_view::npos) {
      if (vpos != std::string_view::npos) {
        auto v = first_word(line.substr(vpos + 13));
        v = v.substr(0, v.find('+'));
        if (!v.empty() && v[0] >= '0' && v[0] <= '9') {
          ++out.nccl_lines;
          if (!out.versions.count("")) {
            out.versions[""] = v;
            out.version_lines.emplace_back(v, lineno);
          }
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
    if (is_warn) out.warnings.emplace_back(std::string(msg), lineno);

    if (auto p = msg.find("NCCL version "); p != std::string_view::npos) {
      auto v = first_word(msg.substr(p + 13));
      v = v.substr(0, v.find('+'));
      if (!out.versions.count(host)) {
        out.versions[host] = v;
        out.version_lines.emplace_back(host.empty() ? v : host + " " + v, lineno);
      }
      continue;
    }
    if (sys::starts_with(msg, "Using network ")) {
      out.using_network.emplace_back(std::string(sys::trim_ws(msg.substr(14))), lineno);
      continue;
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
