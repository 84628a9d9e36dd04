// The expectation file (docs/EXPECT.md): written for a person to review, read back with the
// project's one YAML library, every problem one line naming the file and line.
#include <yaml-cpp/yaml.h>

#include <cmath>

#include <fmt/format.h>

#include "fleet/expect.hpp"
#include "sys/named_file.hpp"
#include "sys/text.hpp"

namespace perfgap::fleet {

namespace {

// "9 of 10 nodes; not: gpu0004 (8)": who agreed, and who held what instead.
std::string vote_comment(const Entry& e) {
  if (e.kept) return "reviewed: kept by --update";
  std::string out = e.note.empty() ? fmt::format("{} of {} nodes", e.agreed, e.nodes) : e.note;
  if (e.others.empty()) return out;
  out += "; not:";
  constexpr std::size_t kNamed = 8;
  for (std::size_t i = 0; i < e.others.size() && i < kNamed; ++i)
    out += fmt::format(" {} ({})", e.others[i].first, e.others[i].second.empty() ? "absent" : e.others[i].second);
  if (e.others.size() > kNamed) out += fmt::format(" and {} more", e.others.size() - kNamed);
  return out;
}

void write_kind(YAML::Emitter& y, const KindExpectation& k) {
  y << YAML::BeginMap << YAML::Key << "kind" << YAML::Value << k.kind;
  y << YAML::Key << "nodes" << YAML::Value << k.nodes << YAML::Comment("reports of this kind learned from");
  for (auto a : kAspects) {
    auto it = k.entries.find(a);
    if (it == k.entries.end() || it->second.empty()) continue;
    y << YAML::Key << std::string(aspect_name(a)) << YAML::Value << YAML::BeginMap;
    for (const auto& [key, e] : it->second) y << YAML::Key << key << YAML::Value << e.value << YAML::Comment(vote_comment(e));
    y << YAML::EndMap;
  }
  if (!k.left_out.empty()) {
    y << YAML::Key << "left_out" << YAML::Comment("no clear majority: not judged") << YAML::Value << YAML::BeginSeq;
    for (const auto& l : k.left_out) y << l;
    y << YAML::EndSeq;
  }
  y << YAML::EndMap;
}

// Entries whose value is a figure: judged as numbers (a lower one fails), so written as one.
bool numeric_entry(Aspect a, std::string_view key) {
  if (a == Aspect::counts) return key == "gpus" || key == "rdma_ports" || key == "rdma_ports_active" || key.ends_with(" nvlinks_up");
  if (a == Aspect::links)
    return key.ends_with(" pcie_width") || key.ends_with(" pcie_gts") || key.ends_with(" rate_gbps") || key.ends_with(" nvlink_gbps");
  if (a == Aspect::placement) return key.ends_with(" numa_node");
  return false;
}
bool is_plain_number(std::string_view v) {
  auto d = sys::to_double(sys::trim_ws(v));
  return d && std::isfinite(*d);
}

std::string at(const std::string& file, const YAML::Node& n) {
  auto m = n.Mark();
  return m.is_null() ? file : fmt::format("{}:{}", file, m.line + 1);
}

tl::expected<KindExpectation, std::string> read_kind(const YAML::Node& n, const std::string& file) {
  if (!n.IsMap()) return tl::unexpected(at(file, n) + ": each entry of kinds is a mapping (kind, nodes, counts, links, ...)");
  KindExpectation k;
  for (const auto& kv : n) {
    const auto key = kv.first.as<std::string>();
    const auto& v = kv.second;
    if (key == "kind") {
      if (!v.IsScalar()) return tl::unexpected(at(file, v) + ": kind is a string");
      k.kind = v.as<std::string>();
    } else if (key == "nodes") {
      k.nodes = v.as<std::size_t>();
    } else if (key == "left_out") {
      continue;  // what the last learning could not decide: rewritten by each learn
    } else if (auto a = aspect_from(key)) {
      if (!v.IsMap()) return tl::unexpected(at(file, v) + ": " + key + " is a mapping of entries to values");
      for (const auto& e : v) {
        if (!e.second.IsScalar()) return tl::unexpected(at(file, e.second) + ": the value of " + e.first.as<std::string>() + " is not a single value");
        Entry entry;
        entry.value = e.second.as<std::string>();
        if (*a == Aspect::measured && !floor_of(entry.value))
          return tl::unexpected(at(file, e.second) + ": the value of " + e.first.as<std::string>() + " is not a floor ('>= 356.2')");
        // A count, a width or a rate compared as text would turn a degraded link into a mere
        // difference ("4 ports" vs 2 warns where 4 vs 2 fails): a number or nothing.
        if (numeric_entry(*a, e.first.as<std::string>()) && !is_plain_number(entry.value))
          return tl::unexpected(at(file, e.second) + ": the value of " + e.first.as<std::string>() + " is not a number ('" +
                                entry.value.substr(0, 40) + "'; write it as the fleet's figure, e.g. 16)");
        entry.kept = true;
        k.entries[*a][e.first.as<std::string>()] = std::move(entry);
      }
    } else {
      return tl::unexpected(at(file, kv.first) + ": unknown key '" + key + "' (kind, nodes, counts, links, placement, versions, settings, measured, left_out)");
    }
  }
  if (k.kind.empty()) return tl::unexpected(at(file, n) + ": an entry of kinds without kind");
  return k;
}

tl::expected<Expectations, std::string> read_root(const YAML::Node& root, const std::string& file) {
  const std::string schema = root["schema"] && root["schema"].IsScalar() ? root["schema"].as<std::string>() : "";
  if (schema != kExpectSchema)
    return tl::unexpected(fmt::format("{}: schema is {}, not {} (write it with perfgap expect learn)", at(file, root["schema"] ? root["schema"] : root),
                                      schema.empty() ? "missing" : "'" + schema.substr(0, 60) + "'", kExpectSchema));
  Expectations out;
  out.file = file;
  const auto kinds = root["kinds"];
  if (!kinds || !kinds.IsSequence()) return tl::unexpected(at(file, kinds ? kinds : root) + ": kinds is not a list of kinds");
  for (const auto& n : kinds) {
    auto k = read_kind(n, file);
    if (!k) return tl::unexpected(k.error());
    if (out.find(k->kind)) return tl::unexpected(at(file, n) + ": kind '" + k->kind + "' given twice");
    out.kinds.push_back(std::move(*k));
  }
  return out;
}

}  // namespace

std::string write_expectations(const Expectations& e, double agree_pct) {
  YAML::Emitter y;
  y << YAML::Comment(fmt::format(
           "perfgap expect learn: what at least {}% of each kind's nodes agree on. Review it: a value here is what\n"
           "perfgap check --expect holds every node of the kind to; delete an entry to stop judging it (a relearn\n"
           "brings it back when the fleet agrees on it). A comment says how many nodes agreed and which did not;\n"
           "--update keeps the values of a reviewed file.",
           agree_pct))
    << YAML::Newline;
  y << YAML::BeginMap << YAML::Key << "schema" << YAML::Value << std::string(kExpectSchema);
  y << YAML::Key << "kinds" << YAML::Value << YAML::BeginSeq;
  for (const auto& k : e.kinds) write_kind(y, k);
  y << YAML::EndSeq << YAML::EndMap;
  return std::string(y.c_str()) + "\n";
}

tl::expected<Expectations, std::string> read_expectations(std::string_view text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return tl::unexpected(fmt::format("{}:{}: not valid YAML: {}", file, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) return tl::unexpected(file + ": not an expectation file (a mapping with schema " + std::string(kExpectSchema) + ")");
  try {
    return read_root(root, file);
  } catch (const YAML::Exception& e) {
    // A conversion not foreseen above (nodes: ten): still one line naming the place.
    return tl::unexpected(fmt::format("{}:{}: {}", file, e.mark.line + 1, e.msg));
  }
}

tl::expected<Expectations, std::string> load_expectations(const std::string& file) {
  auto text = sys::read_config_file(file);
  if (!text) return tl::unexpected(file + ": " + text.error());
  return read_expectations(*text, file);
}

}  // namespace perfgap::fleet
