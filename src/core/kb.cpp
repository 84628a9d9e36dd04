#include "core/kb.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/config.hpp"
#include "parsers/profile.hpp"
#include "sys/named_file.hpp"
#include "sys/text.hpp"

namespace perfgap::core {

namespace {

// A problem at a node of the file: thrown inside the parser, caught once at its top.
struct KbFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void kb_fail(const std::string& file, const YAML::Node& n, const std::string& what) {
  auto m = n.Mark();
  throw KbFileError(m.line >= 0 ? fmt::format("{}:{}: {}", file, m.line + 1, what) : fmt::format("{}: {}", file, what));
}

std::string kb_scalar(const std::string& file, const YAML::Node& parent, const char* key, bool required) {
  auto v = parent[key];
  if (!v || v.IsNull()) {
    if (required) kb_fail(file, parent, fmt::format("'{}' is missing", key));
    return {};
  }
  if (!v.IsScalar()) kb_fail(file, v, fmt::format("'{}' must be a string", key));
  return v.Scalar();
}

void kb_only_keys(const std::string& file, const YAML::Node& map, std::initializer_list<std::string_view> keys, const char* what) {
  for (const auto& kv : map) {
    const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
    bool known = false;
    for (auto key : keys) known |= k == key;
    if (!known) {
      std::string list;
      for (auto key : keys) list += (list.empty() ? "" : ", ") + std::string(key);
      kb_fail(file, kv.first, fmt::format("unknown key '{}' in {} (known: {})", k, what, list));
    }
  }
}

// Finding ids as the catalogue writes them: dotted lowercase words.
bool kb_valid_id(std::string_view id) {
  if (id.empty() || id.front() == '.' || id.back() == '.' || id.find('.') == std::string_view::npos) return false;
  char prev = 0;
  for (char c : id) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) return false;
    if (c == '.' && prev == '.') return false;
    prev = c;
  }
  return true;
}

bool kb_valid_cause_id(std::string_view id) {
  if (id.empty() || id.front() == '.' || id.front() == '_') return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) return false;
  return true;
}

double kb_percent(const std::string& file, const YAML::Node& n) {
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v))
    kb_fail(file, n, "cost_pct: each bound must be a number (percent of training throughput)");
  return v;
}

KbImpact kb_impact(const std::string& file, const std::string& id, const YAML::Node& e) {
  KbImpact k;
  k.id = id;
  if (!e.IsMap()) kb_fail(file, e, fmt::format("{}: expected a mapping (cost_pct, unestimated or not_a_cause, ...)", id));
  kb_only_keys(file, e, {"cost_pct", "assumes", "unestimated", "not_a_cause", "conditions", "source"}, id.c_str());
  const bool has_cost = static_cast<bool>(e["cost_pct"]), has_un = static_cast<bool>(e["unestimated"]),
             has_not = static_cast<bool>(e["not_a_cause"]);
  if (has_cost + has_un + has_not != 1)
    kb_fail(file, e, fmt::format("{}: give exactly one of cost_pct: [LOW, HIGH], unestimated: WHY or not_a_cause: WHY", id));
  if (has_cost) {
    auto c = e["cost_pct"];
    if (!c.IsSequence() || c.size() != 2) kb_fail(file, c, fmt::format("{}: cost_pct must be [LOW, HIGH]", id));
    k.kind = KbImpact::Kind::estimated;
    k.low_pct = kb_percent(file, c[0]);
    k.high_pct = kb_percent(file, c[1]);
    if (k.low_pct < 0 || k.high_pct < k.low_pct || k.high_pct >= 100)
      kb_fail(file, c, fmt::format("{}: cost_pct must satisfy 0 <= LOW <= HIGH < 100 (got {:g}, {:g})", id, k.low_pct, k.high_pct));
    k.note = kb_scalar(file, e, "assumes", false);
  } else {
    k.kind = has_un ? KbImpact::Kind::unestimated : KbImpact::Kind::not_a_cause;
    k.note = kb_scalar(file, e, has_un ? "unestimated" : "not_a_cause", true);
    if (k.note.empty()) kb_fail(file, e, fmt::format("{}: say why ({} needs a reason)", id, has_un ? "unestimated" : "not_a_cause"));
  }
  if (auto c = e["conditions"]) {
    if (!c.IsMap()) kb_fail(file, c, fmt::format("{}: conditions must be a mapping (workload, layer, scale)", id));
    kb_only_keys(file, c, {"workload", "layer", "scale"}, "conditions");
    k.workload = kb_scalar(file, c, "workload", false);
    k.layer = kb_scalar(file, c, "layer", false);
    k.scale = kb_scalar(file, c, "scale", false);
  }
  if (auto s = e["source"]) {
    if (!s.IsMap()) kb_fail(file, s, fmt::format("{}: source must be a mapping (kind, cite, url)", id));
    kb_only_keys(file, s, {"kind", "cite", "url"}, "source");
    k.source.kind = kb_scalar(file, s, "kind", true);
    if (k.source.kind != "public-case" && k.source.kind != "vendor-guide" && k.source.kind != "measurement" && k.source.kind != "none")
      kb_fail(file, s["kind"], fmt::format("{}: source.kind must be public-case, vendor-guide, measurement or none", id));
    k.source.cite = kb_scalar(file, s, "cite", k.source.kind != "none");
    k.source.url = kb_scalar(file, s, "url", false);
  }
  // An estimate without a source is a guess; the format refuses it.
  if (k.kind == KbImpact::Kind::estimated && (k.source.kind.empty() || k.source.kind == "none"))
    kb_fail(file, e, fmt::format("{}: an estimate needs a source (public-case, vendor-guide or measurement, with cite)", id));
  return k;
}

// causes: named groups of findings, each with its title, members and how its cost is estimated.
void kb_parse_causes(const YAML::Node& cs, const std::string& file, KbFile& out) {
  if (!cs.IsMap()) kb_fail(file, cs, "causes must be a mapping of cause ids to entries");
  std::set<std::string, std::less<>> seen;
  for (const auto& kv : cs) {
    const std::string id = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (!kb_valid_cause_id(id)) kb_fail(file, kv.first, fmt::format("'{}' is not a cause id (lowercase words joined by _ or .)", id));
    if (!seen.insert(id).second) kb_fail(file, kv.first, fmt::format("cause {} is given twice in this file", id));
    const auto& e = kv.second;
    if (!e.IsMap()) kb_fail(file, e, fmt::format("cause {}: expected a mapping (title, members, ...)", id));
    kb_only_keys(file, e, {"title", "members", "absorbs", "estimate", "case", "next", "host"}, id.c_str());
    KbCause c;
    c.id = id;
    c.title = kb_scalar(file, e, "title", true);
    c.absorbs = kb_scalar(file, e, "absorbs", false);
    c.estimate = kb_scalar(file, e, "estimate", false);
    c.next = kb_scalar(file, e, "next", false);
    if (const auto host = kb_scalar(file, e, "host", false); !host.empty()) {
      if (host != "true" && host != "false") kb_fail(file, e["host"], fmt::format("cause {}: host must be true or false", id));
      c.host = host == "true";
    }
    if (!c.estimate.empty() && c.estimate != "smmu_share" && c.estimate != "cpu_frequency" && c.estimate != "remote_numa" &&
        c.estimate != "collective" && c.estimate != "slowest_node" && c.estimate != "waiting")
      kb_fail(file, e["estimate"], fmt::format("cause {}: estimate must be smmu_share, cpu_frequency, remote_numa, collective, slowest_node or waiting", id));
    auto m = e["members"];
    if (!m || !m.IsSequence() || m.size() == 0) kb_fail(file, e, fmt::format("cause {}: members must be a list of finding ids or globs", id));
    for (const auto& p : m) {
      if (!p.IsScalar() || p.Scalar().empty()) kb_fail(file, p, fmt::format("cause {}: members must be finding ids or globs", id));
      c.members.push_back(p.Scalar());
    }
    if (auto cf = e["case"]) {
      if (!cf.IsMap()) kb_fail(file, cf, fmt::format("cause {}: case must be a mapping (measured, cost_pct)", id));
      kb_only_keys(file, cf, {"measured", "cost_pct"}, "case");
      if (!cf["measured"] || !cf["cost_pct"]) kb_fail(file, cf, fmt::format("cause {}: case needs measured and cost_pct", id));
      c.case_measured = kb_percent(file, cf["measured"]);
      c.case_cost = kb_percent(file, cf["cost_pct"]);
      if (c.case_measured <= 0 || c.case_cost < 0) kb_fail(file, cf, fmt::format("cause {}: case figures must be positive", id));
    }
    if ((c.estimate == "smmu_share" || c.estimate == "cpu_frequency" || c.estimate == "remote_numa") && c.case_measured <= 0)
      kb_fail(file, e, fmt::format("cause {}: estimate {} needs the case's figures (case: {{measured, cost_pct}})", id, c.estimate));
    c.file = fmt::format("{}:{}", file, kv.first.Mark().line + 1);
    out.causes.push_back(std::move(c));
  }
}

// xids: the XID catalogue's entries, each with its resolution bucket (which sets the severity).
void kb_parse_xids(const YAML::Node& xs, const std::string& file, KbFile& out) {
  if (!xs.IsSequence()) kb_fail(file, xs, "xids must be a list");
  std::set<long> seen;
  for (const auto& e : xs) {
    if (!e.IsMap()) kb_fail(file, e, "an xid must be a mapping (code, name, resolution, meaning, action)");
    kb_only_keys(file, e, {"code", "name", "resolution", "meaning", "action"}, "an xid");
    KbXid x;
    auto code = kb_scalar(file, e, "code", true);
    auto n = sys::to_int<long>(code);
    if (!n || *n <= 0) kb_fail(file, e["code"], fmt::format("xid code '{}' is not a positive number", code));
    x.code = *n;
    if (!seen.insert(x.code).second) kb_fail(file, e["code"], fmt::format("xid {} is given twice in this file", x.code));
    x.name = kb_scalar(file, e, "name", true);
    x.resolution = kb_scalar(file, e, "resolution", true);
    if (xid_resolution_action(x.resolution).empty())
      kb_fail(file, e["resolution"], fmt::format("xid {}: resolution '{}' is not one of the catalogue's buckets", x.code, x.resolution));
    x.severity = xid_resolution_fails(x.resolution) ? "fail" : "warn";
    x.meaning = kb_scalar(file, e, "meaning", false);
    x.action = kb_scalar(file, e, "action", false);
    out.xids.push_back(std::move(x));
  }
}

// sxids: NVSwitch SXids whose severity the guide settles (fail, warn or ignore).
void kb_parse_sxids(const YAML::Node& xs, const std::string& file, KbFile& out) {
  if (!xs.IsSequence()) kb_fail(file, xs, "sxids must be a list");
  std::set<long> seen;
  for (const auto& e : xs) {
    if (!e.IsMap()) kb_fail(file, e, "an sxid must be a mapping (code, name, severity, meaning, action)");
    kb_only_keys(file, e, {"code", "name", "severity", "meaning", "action"}, "an sxid");
    KbSxid x;
    auto code = kb_scalar(file, e, "code", true);
    auto n = sys::to_int<long>(code);
    if (!n || *n <= 0) kb_fail(file, e["code"], fmt::format("sxid code '{}' is not a positive number", code));
    x.code = *n;
    if (!seen.insert(x.code).second) kb_fail(file, e["code"], fmt::format("sxid {} is given twice in this file", x.code));
    x.name = kb_scalar(file, e, "name", true);
    x.severity = kb_scalar(file, e, "severity", true);
    if (x.severity != "fail" && x.severity != "warn" && x.severity != "ignore")
      kb_fail(file, e["severity"], fmt::format("sxid {}: severity '{}' must be fail, warn or ignore", x.code, x.severity));
    x.meaning = kb_scalar(file, e, "meaning", false);
    x.action = kb_scalar(file, e, "action", true);
    out.sxids.push_back(std::move(x));
  }
}

// comm_kernels: the communication libraries' kernels, by base name or glob.
void kb_parse_comm_kernels(const YAML::Node& ck, const std::string& file, KbFile& out) {
  if (!ck.IsSequence()) kb_fail(file, ck, "comm_kernels must be a list of {match, kind, library, note}");
  std::set<std::string, std::less<>> seen;
  for (const auto& e : ck) {
    if (!e.IsMap()) kb_fail(file, e, "a comm_kernels entry must be a mapping (match, kind, library, note)");
    kb_only_keys(file, e, {"match", "kind", "library", "note"}, "a comm_kernels entry");
    KbCommKernel k;
    k.match = kb_scalar(file, e, "match", true);
    // A kernel's base name has no blanks at its ends and no lone `*` that matches everything.
    if (k.match.empty() || k.match.find_first_not_of('*') == std::string::npos || k.match.front() == ' ' || k.match.back() == ' ')
      kb_fail(file, e["match"], fmt::format("comm_kernels: match '{}' must name a kernel or a glob with some characters besides '*'", k.match));
    if (!seen.insert(k.match).second) kb_fail(file, e["match"], fmt::format("comm_kernels: match '{}' is given twice in this file", k.match));
    k.kind = kb_scalar(file, e, "kind", true);
    bool known = false;
    for (auto kind : kCommKinds) known |= kind == k.kind;
    if (!known)
      kb_fail(file, e["kind"], fmt::format("comm_kernels: {}: kind '{}' must be collective, sendrecv, expert_parallel, one_sided or copy", k.match, k.kind));
    k.library = kb_scalar(file, e, "library", true);
    if (k.library.empty()) kb_fail(file, e, fmt::format("comm_kernels: {}: library must name the library", k.match));
    k.note = kb_scalar(file, e, "note", false);
    k.file = fmt::format("{}:{}", file, e.Mark().line + 1);
    out.comm_kernels.push_back(std::move(k));
  }
}

KbFile kb_parse_root(const YAML::Node& root, const std::string& file) {
  KbFile out;
  if (root.IsNull()) return out;  // an empty file overrides nothing
  if (!root.IsMap()) kb_fail(file, root, "expected a mapping with impact, measurements, symbols, causes, xids, sxids, reference_ratios or comm_kernels");
  kb_only_keys(file, root,
               {"impact", "measurements", "symbols", "causes", "xids", "xid_catalogue", "sxids", "sxid_guide", "reference_ratios", "comm_kernels"},
               "the file");
  if (auto cat = root["xid_catalogue"]; cat && !cat.IsNull()) {
    if (!cat.IsScalar() || cat.Scalar().empty()) kb_fail(file, cat, "xid_catalogue must name the catalogue and its version");
    out.xid_catalogue = cat.Scalar();
  }
  if (auto guide = root["sxid_guide"]; guide && !guide.IsNull()) {
    if (!guide.IsScalar() || guide.Scalar().empty()) kb_fail(file, guide, "sxid_guide must name the guide and its version");
    out.sxid_guide = guide.Scalar();
  }
  if (auto imp = root["impact"]; imp && !imp.IsNull()) {
    if (!imp.IsMap()) kb_fail(file, imp, "impact must be a mapping of finding ids to entries");
    std::set<std::string, std::less<>> seen;
    for (const auto& kv : imp) {
      if (!kv.first.IsScalar() || !kb_valid_id(kv.first.Scalar()))
        kb_fail(file, kv.first, fmt::format("'{}' is not a finding id (dotted lowercase words)", kv.first.IsScalar() ? kv.first.Scalar() : "?"));
      const std::string id = kv.first.Scalar();
      if (!seen.insert(id).second) kb_fail(file, kv.first, fmt::format("{} is given twice in this file", id));
      out.impact.push_back(kb_impact(file, id, kv.second));
      out.impact.back().file = fmt::format("{}:{}", file, kv.first.Mark().line + 1);  // the id's line, not its value's
    }
  }
  if (auto ms = root["measurements"]; ms && !ms.IsNull()) {
    if (!ms.IsSequence()) kb_fail(file, ms, "measurements must be a list");
    for (const auto& e : ms) {
      if (!e.IsMap()) kb_fail(file, e, "a measurement must be a mapping (name, covered_by, take)");
      kb_only_keys(file, e, {"name", "covered_by", "take", "side"}, "a measurement");
      KbMeasurement m;
      m.name = kb_scalar(file, e, "name", true);
      m.take = kb_scalar(file, e, "take", true);
      m.side = kb_scalar(file, e, "side", false);
      if (!m.side.empty() && m.side != "host" && m.side != "communication")
        kb_fail(file, e["side"], fmt::format("{}: side must be host or communication", m.name));
      m.file = fmt::format("{}:{}", file, e.Mark().line + 1);
      auto c = e["covered_by"];
      if (!c || !c.IsSequence() || c.size() == 0) kb_fail(file, e, fmt::format("{}: covered_by must be a list of finding ids or globs", m.name));
      for (const auto& p : c) {
        if (!p.IsScalar() || p.Scalar().empty()) kb_fail(file, p, "covered_by entries must be finding ids or globs");
        m.covered_by.push_back(p.Scalar());
      }
      out.measurements.push_back(std::move(m));
    }
  }
  if (auto cs = root["causes"]; cs && !cs.IsNull()) kb_parse_causes(cs, file, out);
  if (auto syms = root["symbols"]; syms && !syms.IsNull()) {
    if (!syms.IsSequence()) kb_fail(file, syms, "symbols must be a list");
    for (std::size_t i = 0; i < syms.size(); ++i) {
      auto e = syms[i];
      if (!e.IsMap()) kb_fail(file, e, fmt::format("symbols[{}]: expected a mapping", i));
      auto get = [&](const char* key) {
        if (!e[key] || !e[key].IsScalar()) kb_fail(file, e, fmt::format("symbols[{}]: missing '{}'", i, key));
        return e[key].Scalar();
      };
      KbSymbol s{get("match"), get("group"), get("finding"), get("cause"), get("fix")};
      if (s.finding != "smmu_cmdq" && s.finding != "hot_kernel") kb_fail(file, e, fmt::format("symbols[{}]: finding must be smmu_cmdq or hot_kernel", i));
      out.symbols.push_back(std::move(s));
    }
  }
  if (auto xs = root["xids"]; xs && !xs.IsNull()) kb_parse_xids(xs, file, out);
  if (auto xs = root["sxids"]; xs && !xs.IsNull()) kb_parse_sxids(xs, file, out);
  if (auto rs = root["reference_ratios"]; rs && !rs.IsNull()) {
    if (!rs.IsMap()) kb_fail(file, rs, "reference_ratios must be a mapping of finding ids to {pass_within, fail_beyond, why}");
    for (const auto& kv : rs) {
      if (!kv.first.IsScalar() || !kb_valid_id(kv.first.Scalar()))
        kb_fail(file, kv.first, fmt::format("'{}' is not a finding id (dotted lowercase words)", kv.first.IsScalar() ? kv.first.Scalar() : "?"));
      const auto& e = kv.second;
      KbRatio r;
      r.id = kv.first.Scalar();
      if (!e.IsMap()) kb_fail(file, e, fmt::format("{}: expected a mapping (pass_within, fail_beyond, why)", r.id));
      kb_only_keys(file, e, {"pass_within", "fail_beyond", "why"}, r.id.c_str());
      auto num = [&](const char* key) {
        auto v = sys::to_double(kb_scalar(file, e, key, true));
        if (!v || !(*v >= 1) || *v > 1000) kb_fail(file, e[key], fmt::format("{}: {} must be a multiple of the reference, 1 or more", r.id, key));
        return *v;
      };
      r.pass_within = num("pass_within");
      r.fail_beyond = num("fail_beyond");
      if (r.fail_beyond < r.pass_within) kb_fail(file, e, fmt::format("{}: fail_beyond must be at least pass_within", r.id));
      r.why = kb_scalar(file, e, "why", true);
      r.file = fmt::format("{}:{}", file, kv.first.Mark().line + 1);
      out.ratios.push_back(std::move(r));
    }
  }
  if (auto ck = root["comm_kernels"]; ck && !ck.IsNull()) kb_parse_comm_kernels(ck, file, out);
  return out;
}

// `*` is any run of characters (none too); every other character stands for itself.
bool kb_glob(std::string_view pattern, std::string_view name) {
  std::size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p, ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

const KbCommKernel* match_comm_kernel(const std::vector<KbCommKernel>& table, std::string_view kernel_name) {
  const auto base = parsers::kernel_base_name(kernel_name);
  const KbCommKernel* best = nullptr;
  std::size_t best_literal = 0;
  for (const auto& e : table) {
    if (!kb_glob(e.match, base)) continue;
    const auto literal = static_cast<std::size_t>(std::count_if(e.match.begin(), e.match.end(), [](char c) { return c != '*'; }));
    if (!best || literal >= best_literal) best = &e, best_literal = literal;
  }
  return best;
}

std::string_view to_string(KbImpact::Kind k) {
  switch (k) {
    case KbImpact::Kind::estimated: return "estimated";
    case KbImpact::Kind::unestimated: return "unestimated";
    case KbImpact::Kind::not_a_cause: return "not_a_cause";
  }
  return "unestimated";
}

tl::expected<KbFile, std::string> parse_kb(std::string_view text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return tl::unexpected(fmt::format("{}:{}: not valid YAML: {}", file, e.mark.line + 1, e.msg));
  }
  try {
    return kb_parse_root(root, file);
  } catch (const KbFileError& e) {
    return tl::unexpected(std::string(e.what()));
  } catch (const YAML::Exception& e) {
    // A conversion this code did not foresee: still an error naming the place, never a throw.
    return tl::unexpected(fmt::format("{}:{}: {}", file, e.mark.line + 1, e.msg));
  }
}

const KbImpact* Kb::find(std::string_view id) const {
  auto it = impact.find(id);
  return it == impact.end() ? nullptr : &it->second;
}

void Kb::overlay(KbFile file) {
  for (auto& e : file.impact) impact.insert_or_assign(e.id, std::move(e));
  for (auto& m : file.measurements) {
    bool replaced = false;
    for (auto& have : measurements)
      if (have.name == m.name) {
        have = m;
        replaced = true;
      }
    if (!replaced) measurements.push_back(std::move(m));
  }
  for (auto& s : file.symbols) symbols.push_back(std::move(s));
  for (auto& c : file.causes) {
    bool replaced = false;
    for (auto& have : causes)
      if (have.id == c.id) {
        have = c;
        replaced = true;
      }
    if (!replaced) causes.push_back(std::move(c));
  }
  for (auto& x : file.xids) xids.insert_or_assign(x.code, std::move(x));
  for (auto& x : file.sxids) sxids.insert_or_assign(x.code, std::move(x));
  if (!file.sxid_guide.empty()) sxid_guide = std::move(file.sxid_guide);
  for (auto& r : file.ratios) ratios.insert_or_assign(r.id, std::move(r));
  for (auto& k : file.comm_kernels) {
    auto have = std::find_if(comm_kernels.begin(), comm_kernels.end(), [&](const KbCommKernel& e) { return e.match == k.match; });
    if (have != comm_kernels.end()) *have = std::move(k);
    else comm_kernels.push_back(std::move(k));
  }
  if (!file.xid_catalogue.empty()) xid_catalogue = std::move(file.xid_catalogue);
}

std::string_view xid_resolution_action(std::string_view resolution) {
  // NVIDIA's buckets (the catalogue's "Resolution Bucket (Immediate Action)"), in our words.
  static constexpr std::pair<std::string_view, std::string_view> actions[] = {
      {"RESTART_APP", "Restart the application; when different applications hit it on this GPU only, run the GPU diagnostics (dcgmi diag)."},
      {"RESET_GPU", "Drain the node and reset the GPU (nvidia-smi -r, or reboot the node); contact NVIDIA support when it recurs."},
      {"RESTART_BM", "Drain the node and reboot it: a GPU reset does not bring the GPU back."},
      {"RESTART_VM", "Restart the virtual machine the GPU is passed through to."},
      {"IGNORE", "Nothing to do for this Xid alone: the catalogue marks it informational."},
      {"CHECK_MECHANICALS", "Check the GPU's power and cooling (power cables and supply, fans, airflow, inlet temperature)."},
      {"CHECK_UVM", "Look at the application's Unified Memory use and the driver's UVM messages around the line."},
      {"UPDATE_SWFW", "Update the driver and the GPU firmware to a matching, supported release."},
      {"CONTACT_SUPPORT", "The catalogue lists no field action (it is not expected on current GPUs): collect nvidia-bug-report.sh and contact NVIDIA support."},
      {"WORKFLOW_XID_45", "Look at the Xid logged before it: Xid 45 is the driver cleaning up a channel another error (or a killed process) stopped."},
      {"WORKFLOW_XID_48", "Drain the node and reset the GPU so that the page is retired or the row remapped; replace the GPU when remapping fails (Xid 64) or it recurs."},
      {"WORKFLOW_NVLINK_ERR", "Drain the node and reset the GPUs of the link (or reboot); when it recurs check the NVLink connections and the NVSwitches (SXid) and contact support."},
      {"WORKFLOW_NVLINK5_ERR", "A fatal one: drain the node and reset the GPU; a non-fatal one is corrected: watch its rate. When it recurs check the NVLink fabric (NVSwitch SXids, trays, cables)."},
      {"XID_154", "Do the recovery the line names (none, a GPU reset, a node reboot, a drain)."},
  };
  for (const auto& [name, action] : actions)
    if (name == resolution) return action;
  return {};
}

bool xid_resolution_fails(std::string_view resolution) {
  return resolution == "RESET_GPU" || resolution == "RESTART_BM" || resolution == "RESTART_VM" || resolution == "WORKFLOW_XID_48" ||
         resolution == "WORKFLOW_NVLINK_ERR" || resolution == "WORKFLOW_NVLINK5_ERR";
}

const KbCause* Kb::cause_of(std::string_view id) const {
  for (const auto& c : causes)
    for (const auto& m : c.members)
      if (m == id) return &c;
  for (const auto& c : causes)
    for (const auto& m : c.members)
      if (m.find('*') != std::string::npos && id_matches(m, id)) return &c;
  return nullptr;
}

const KbCause* Kb::cause(std::string_view cause_id) const {
  for (const auto& c : causes)
    if (c.id == cause_id) return &c;
  return nullptr;
}

const Kb& builtin_kb() {
  static const Kb kb = [] {
    Kb k;
    for (std::size_t i = 0; i < kKbEmbeddedFileCount; ++i) {
      const std::string name = std::string("builtin:data/kb/") + kKbEmbeddedFiles[i].name;
      auto f = parse_kb(kKbEmbeddedFiles[i].text, name);
      if (!f) throw std::runtime_error("embedded knowledge base " + f.error());
      k.overlay(std::move(*f));
    }
    return k;
  }();
  return kb;
}

tl::expected<Kb, std::string> load_kb(const std::vector<KbDir>& dirs) {
  Kb kb = builtin_kb();
  for (const auto& d : dirs) {
    bool missing = false;
    auto files = sys::named_dir_files(d.path, ".yaml", &missing);
    if (!files) {
      if (d.optional && missing) continue;
      return tl::unexpected(fmt::format("{}: {}", d.path, files.error()));
    }
    for (const auto& path : *files) {
      auto text = sys::read_named_file(path, sys::kMaxConfigBytes);
      if (!text) return tl::unexpected(fmt::format("{}: {}", path, text.error()));
      auto f = parse_kb(*text, path);
      if (!f) return tl::unexpected(f.error());
      // analyze perf reads the built-in symbol list only; a symbols list here would be ignored
      // silently, so it is refused.
      if (!f->symbols.empty())
        return tl::unexpected(fmt::format("{}: symbols: the kernel-symbol list comes from the built-in knowledge base only (data/kb/kernel_symbols.yaml; rebuild to change it)", path));
      // gpu.xid reads the built-in Xid table only; a kb.d table would be ignored silently.
      if (!f->xids.empty() || !f->xid_catalogue.empty())
        return tl::unexpected(fmt::format("{}: xids: the Xid table comes from the built-in knowledge base only (data/kb/xid.yaml; rebuild to change it)", path));
      if (!f->sxids.empty() || !f->sxid_guide.empty())
        return tl::unexpected(fmt::format("{}: sxids: the SXid table comes from the built-in knowledge base only (data/kb/sxid.yaml; rebuild to change it)", path));
      kb.overlay(std::move(*f));
    }
  }
  return kb;
}

}  // namespace perfgap::core
