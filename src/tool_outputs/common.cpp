// What the kinds share: collecting findings and unusable inputs, the busbw basis, --reference checks.
#include <fmt/format.h>

#include "tool_outputs/inputs.hpp"
#include "tool_outputs/kinds.hpp"
#include "analyzers/analyzers.hpp"
#include "compare/compare.hpp"
#include "sys/paths.hpp"

namespace perfgap::tool_outputs::detail {

namespace {
// A check report is a few hundred KiB; a fleet-sized one is not a node report.
constexpr std::size_t kMaxNodeReportBytes = 64u << 20;
}  // namespace

void Collected::bad(const std::string& file, const std::string& why) {
  findings.push_back(analyzers::unusable_input(analyzer.kind, analyzer.layer, analyzer.main_id, file, why));
  unusable.push_back(file + ": " + why);
}

void Collected::append(std::vector<report::Finding> v) {
  for (auto& f : v) findings.push_back(std::move(f));
}

std::string Collected::no_usable_input() const {
  std::string msg = fmt::format("analyze {}: no usable input: ", analyzer.kind);
  for (std::size_t i = 0; i < unusable.size(); ++i) msg += (i ? "; " : "") + unusable[i];
  return msg;
}

tl::expected<Result, std::string> Collected::finish(std::vector<std::string> inputs) {
  if (usable == 0) return tl::unexpected(no_usable_input());
  return Result{std::move(findings), std::move(inputs)};
}

tl::expected<NicBasis, std::string> nic_basis(const Request& r) {
  NicBasis b;
  if (r.nics) {
    b.gbps_total = *r.nics * *r.link_gbps;
    b.basis = fmt::format("--nics {} --link-gbps {:g}", *r.nics, *r.link_gbps);
    return b;
  }
  if (r.node_report.empty()) return b;
  auto text = sys::read_named_file(r.node_report, kMaxNodeReportBytes);
  if (!text) return tl::unexpected("--node-report " + r.node_report + ": " + text.error());
  auto rep = compare::read_report(*text);
  if (!rep) return tl::unexpected("--node-report " + r.node_report + ": " + rep.error());
  // Every ACTIVE, LinkUp RDMA port (net.ib.ports pass, or fail for a rate below its peers':
  // it still carries traffic at its rate).
  std::size_t ports = 0;
  double total = 0;
  for (const auto& x : rep->findings)
    if (x.id == "net.ib.ports" && (x.status == report::Status::pass || x.status == report::Status::fail))
      for (const auto& [name, v] : x.metrics)
        if (name == "rate_gbps" && v > 0 && (x.status == report::Status::pass || x.title.find("while its") != std::string::npos)) {
          ++ports;
          total += v;
        }
  if (ports == 0)
    return tl::unexpected(fmt::format("--node-report {}: no ACTIVE RDMA port with a rate in it (net.ib.ports): give --nics and --link-gbps", r.node_report));
  b.gbps_total = total;
  b.node = rep->node;
  b.basis = fmt::format("{}: {} ACTIVE RDMA port{}, {:g} Gb/s together{}", r.node_report, ports, ports == 1 ? "" : "s", total,
                        rep->node.empty() ? "" : " on " + rep->node);
  return b;
}

tl::expected<void, std::string> reference_is_a_file(const Analyzer& an, const Request& r, const char* what) {
  if (!r.reference.empty() && looks_like_milliseconds(r.reference) && r.reference != "-" && !sys::exists(r.reference))
    return tl::unexpected(fmt::format("--reference {}: analyze {} takes a reference {} file, not a number (milliseconds per iteration are a "
                                      "reference for analyze steps, gap and explain)",
                                      r.reference, an.kind, what));
  return {};
}

}  // namespace perfgap::tool_outputs::detail
