#include "parsers/nccl_topo.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <pugixml.hpp>

#include "sys/text.hpp"

namespace perfgap::parsers {

int TopoFile::gpus() const {
  return static_cast<int>(std::count_if(pci.begin(), pci.end(), [](const auto& p) { return p.kind == TopoPci::gpu; }));
}
int TopoFile::nics() const {
  return static_cast<int>(std::count_if(pci.begin(), pci.end(), [](const auto& p) { return p.kind == TopoPci::nic; }));
}

namespace {

std::optional<std::uint32_t> hex_attr(const pugi::xml_node& n, const char* name) {
  auto a = n.attribute(name);
  if (!a) return std::nullopt;
  std::string_view s = sys::trim_ws(a.value());
  if (sys::starts_with(s, "0x") || sys::starts_with(s, "0X")) s.remove_prefix(2);
  if (s.empty() || s.size() > 8) return std::nullopt;
  std::uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int> int_attr(const pugi::xml_node& n, const char* name) {
  auto a = n.attribute(name);
  if (!a) return std::nullopt;
  return sys::to_int<int>(a.value());
}

class LineIndex {
 public:
  explicit LineIndex(std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') nl_.push_back(i);
  }
  int line(std::ptrdiff_t offset) const {
    if (offset < 0) return 0;
    return 1 + static_cast<int>(std::lower_bound(nl_.begin(), nl_.end(), static_cast<std::size_t>(offset)) - nl_.begin());
  }

 private:
  std::vector<std::size_t> nl_;
};

// What NCCL's hand-written reader (src/graph/xml.cc) refuses although it is well-formed XML.
std::vector<std::string> nccl_reader_rejects(std::string_view t, const LineIndex& lines) {
  std::vector<std::string> out;
  auto reject = [&](std::size_t at, const std::string& what) {
    if (out.size() < 5) out.push_back("line " + std::to_string(lines.line(static_cast<std::ptrdiff_t>(at))) + ": " + what);
  };
  std::size_t i = 0, n = t.size();
  while (i < n && out.size() < 5) {
    while (i < n && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r')) ++i;
    if (i >= n) break;
    if (t[i] != '<') {
      reject(i, t[i] == '\t' ? std::string("a tab between elements (NCCL's reader only skips spaces and line breaks)")
                             : std::string("text between elements (NCCL's reader expects '<')"));
      auto next = t.find('<', i);
      if (next == std::string_view::npos) break;
      i = next;
      continue;
    }
    if (t.compare(i, 4, "<!--") == 0) {
      auto end = t.find("-->", i + 4);
      if (end == std::string_view::npos) break;
      i = end + 3;
      continue;
    }
    if (i + 1 < n && (t[i + 1] == '?' || t[i + 1] == '!')) {
      reject(i, t[i + 1] == '?' ? "an XML declaration or processing instruction (<?...?>): NCCL's reader stops at it"
                                : "a <!...> declaration other than a comment: NCCL's reader stops at it");
      auto end = t.find('>', i);
      if (end == std::string_view::npos) break;
      i = end + 1;
      continue;
    }
    std::size_t j = i + 1;
    char quote = 0;
    bool flagged = false;
    for (; j < n; ++j) {
      char c = t[j];
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') { quote = c; continue; }
      if (c == '>') break;
      if (!flagged && (c == '\t' || c == '\n' || c == '\r')) {
        reject(j, "attributes separated by a tab or line break (NCCL's reader expects single spaces within a tag)");
        flagged = true;
      }
      if (!flagged && c == '=' && ((j > 0 && t[j - 1] == ' ') || (j + 1 < n && t[j + 1] == ' '))) {
        reject(j, "a space around '=' in an attribute (NCCL's reader expects name=\"value\")");
        flagged = true;
      }
    }
    i = j + 1;
  }
  return out;
}

}  // namespace

tl::expected<TopoFile, std::string> parse_nccl_topo(std::string_view text) {
  if (text.size() > kMaxTopoBytes) return tl::unexpected("larger than " + std::to_string(kMaxTopoBytes >> 20) + " MiB: not read");
  pugi::xml_document doc;
  auto res = doc.load_buffer(text.data(), text.size(), pugi::parse_default, pugi::encoding_utf8);
  LineIndex lines(text);
  if (!res) return tl::unexpected("not well-formed XML (line " + std::to_string(lines.line(res.offset)) + ": " + res.description() + ")");
  auto root = doc.document_element();
  if (!root) return tl::unexpected(std::string("no root element"));
  std::string root_name = root.name();
  if (root_name != "system") {
    std::string why = "root element is <" + root_name + ">, not NCCL's <system>";
    if (root_name == "graphs") why += ": an NCCL graph file (NCCL_GRAPH_FILE), not a topology";
    return tl::unexpected(why);
  }
  auto version = root.attribute("version");
  if (!version) return tl::unexpected(std::string("<system> has no version attribute (NCCL requires version=\"1\")"));
  if (sys::to_int<int>(version.value()) != 1)
    return tl::unexpected(std::string("<system version=\"") + version.value() + "\">: NCCL reads version 1 only");

  TopoFile out;
  out.nccl_rejects = nccl_reader_rejects(text, lines);
  struct Ctx {
    pugi::xml_node node;
    std::optional<int> numaid;
    std::string affinity;
    int pci = -1;  // index of the enclosing <pci> in out.pci
    int cpu = -1;  // index of the enclosing <cpu>
  };
  // Iterative walk: a deeply nested file must not exhaust the stack.
  std::vector<Ctx> stack;
  for (auto c = root.last_child(); c; c = c.previous_sibling()) stack.push_back({c, std::nullopt, "", -1, -1});
  while (!stack.empty()) {
    Ctx ctx = stack.back();
    stack.pop_back();
    if (ctx.node.type() != pugi::node_element) continue;
    std::string_view name = ctx.node.name();
    Ctx child = ctx;
    int line = lines.line(ctx.node.offset_debug());
    if (name == "cpu") {
      child.cpu = out.cpus;
      ++out.cpus;
      child.numaid = int_attr(ctx.node, "numaid");
      child.affinity = ctx.node.attribute("affinity").value();
      child.pci = -1;
    } else if (name == "pci") {
      TopoPci p;
      p.busid = sys::lower(sys::trim_ws(ctx.node.attribute("busid").value()));
      p.class_code = hex_attr(ctx.node, "class");
      p.vendor = hex_attr(ctx.node, "vendor");
      p.device = hex_attr(ctx.node, "device");
      p.link_speed = std::string(sys::trim_ws(ctx.node.attribute("link_speed").value()));
      if (auto w = int_attr(ctx.node, "link_width"); w && *w > 0) p.link_width = w;
      p.numaid = ctx.numaid;
      p.affinity = ctx.affinity;
      p.parent = ctx.pci;
      p.cpu = ctx.cpu;
      p.line = line;
      bool has_gpu = false, has_nic = false, has_pci = false;
      for (auto c : ctx.node.children()) {
        std::string_view cn = c.name();
        if (cn == "gpu" && !has_gpu) p.gpu_dev = int_attr(c, "dev");
        has_gpu = has_gpu || cn == "gpu";
        has_nic = has_nic || cn == "nic";
        has_pci = has_pci || cn == "pci";
      }
      auto base = p.class_code ? (*p.class_code >> 16) : 0xffffu;
      bool nvidia_or_unstated = !p.vendor || *p.vendor == 0x10de;
      if (has_gpu || (base == 0x03 && nvidia_or_unstated)) p.kind = TopoPci::gpu;
      else if (has_nic || base == 0x02) p.kind = TopoPci::nic;
      else if (has_pci || p.is_virtual() || (p.class_code && (*p.class_code >> 8) == 0x0604)) p.kind = TopoPci::bridge;
      else p.kind = TopoPci::other;
      child.pci = static_cast<int>(out.pci.size());
      out.pci.push_back(std::move(p));
    } else if (name == "net") {
      TopoNet net;
      net.name = ctx.node.attribute("name").value();
      net.numaid = ctx.numaid;
      net.line = line;
      if (ctx.pci >= 0) {
        net.pci_busid = out.pci[static_cast<std::size_t>(ctx.pci)].busid;
        out.pci[static_cast<std::size_t>(ctx.pci)].nets.push_back(net.name);
      }
      out.nets.push_back(std::move(net));
    }
    for (auto c = ctx.node.last_child(); c; c = c.previous_sibling()) {
      Ctx next = child;
      next.node = c;
      stack.push_back(next);
    }
  }
  return out;
}

std::optional<double> parse_topo_link_speed(std::string_view text) {
  auto t = sys::trim_ws(text);
  std::size_t end = 0;
  while (end < t.size() && (std::isdigit(static_cast<unsigned char>(t[end])) || t[end] == '.')) ++end;
  if (end == 0) return std::nullopt;
  auto rest = sys::trim_ws(t.substr(end));
  if (!sys::starts_with(rest, "GT/s")) return std::nullopt;
  return sys::to_double(t.substr(0, end));
}

}  // namespace perfgap::parsers
