#include <fmt/format.h>

#include <algorithm>

#include "report/outgoing.hpp"
#include "report/render.hpp"
#include "report/text_style.hpp"

namespace perfgap::report {
namespace {

// Data rows of a finding's table shown without -v.
constexpr std::size_t kTableRows = 40;

}  // namespace

std::string render_text(const Report& shown, const TextOptions& opts) {
  const Report r = outgoing(shown);
  std::string out;
  auto paint = [&](Status s, std::string_view text) {
    return report::paint(s, text, opts.color);
  };
  auto s = r.summary();
  std::string where;
  if (r.node) {
    where = fmt::format(" on {} ({}, {}", r.node->name.empty() ? "?" : printable(r.node->name), r.node->arch.empty() ? "?" : printable(r.node->arch),
                        r.node->kernel.empty() ? "?" : printable(r.node->kernel));
    if (r.node->virtualized) where += *r.node->virtualized ? ", virtualized" : ", bare metal";
    if (r.node->container != "none") where += ", container: " + printable(r.node->container);
    where += ")";
  }
  if (r.source.root) where += " from tree " + printable(*r.source.root);
  // A report that decided nothing (every finding a skip or an informational summary's pass, or a
  // command's own "could not") heads SKIP and why, never OK: missing is not healthy.
  const std::string undecided = r.undecided_why();
  std::string verdict = s.fail ? paint(Status::fail, "FAIL") : s.error ? paint(Status::error, "ERROR") : s.warn ? paint(Status::warn, "WARN") : !undecided.empty() ? paint(Status::skip, "SKIP") : paint(Status::pass, "OK");
  out += fmt::format("perfgap {}{}: {}  {} fail, {} warn, {} pass, {} skip, {} error{}\n", !r.source.command.empty() ? r.source.command : r.source.kind == "live" || r.source.kind == "root" ? "check" : r.source.kind,
                     where, verdict, s.fail, s.warn, s.pass, s.skip, s.error, undecided.empty() ? "" : "; " + printable(undecided));

  std::vector<std::string> layers(std::begin(report::kLayers), std::end(report::kLayers));
  for (const auto& f : r.findings)
    if (std::find(layers.begin(), layers.end(), f.layer) == layers.end()) layers.push_back(f.layer);
  for (const auto& layer : layers) {
    std::vector<const Finding*> items;
    for (const auto& f : r.findings)
      if (f.layer == layer) items.push_back(&f);
    if (items.empty()) continue;
    if (!opts.in_order) std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return action_rank(a->status) < action_rank(b->status); });
    out += fmt::format("\n{}\n", printable(layer));
    for (const auto* f : items) {
      std::string label = status_word(f->status);
      std::string id = printable(f->id) + (f->subject.empty() ? "" : " [" + printable(f->subject) + "]");
      out += fmt::format("  {} {}  {}\n", paint(f->status, fmt::format("{:<5}", label)), id, printable(f->title));
      bool actionable = f->status == Status::fail || f->status == Status::warn || f->status == Status::error;
      if (!actionable && !opts.verbose) {
        if (f->table_always) render_table(out, f->table, {"        ", kTableRows, false});
        continue;
      }
      render_table(out, f->table, {"        ", opts.verbose ? 0 : kTableRows, false});
      std::size_t limit = opts.verbose ? f->evidence.size() : std::min<std::size_t>(3, f->evidence.size());
      for (std::size_t i = 0; i < limit; ++i) {
        const auto& e = f->evidence[i];
        out += fmt::format("        {}: {}{}\n", printable(e.source), printable(e.observed), e.expected ? " (expected " + printable(*e.expected) + ")" : "");
      }
      if (limit < f->evidence.size()) out += fmt::format("        ... {} more (-v shows all)\n", f->evidence.size() - limit);
      if (!f->fix.empty() && actionable) out += fmt::format("        fix: {}\n", printable(f->fix));
      if (!f->impact.empty() && (actionable || opts.verbose) && f->status != Status::pass) out += fmt::format("        impact: {}\n", printable(f->impact));
      if (opts.verbose && !f->metrics.empty()) {
        std::string m;
        for (const auto& [k, v] : f->metrics) m += fmt::format("{}{}={}", m.empty() ? "" : " ", printable(k), number_text(v));
        out += fmt::format("        metrics: {}\n", m);
      }
    }
  }
  return out;
}

}  // namespace perfgap::report
