// The sweep's text report: the comparison table first (it is the evidence), then the
// recommendation and whatever failed.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "parsers/nccl_tests.hpp"
#include "report/text_style.hpp"
#include "sweep/sweep.hpp"

namespace perfgap::sweep {
namespace {

constexpr std::size_t kColumns = 6;  // sizes shown without -v

// At most `n` sizes, the first and the last always among them, the rest evenly spread.
std::vector<std::uint64_t> pick(const std::vector<std::uint64_t>& all, std::size_t n) {
  if (all.size() <= n) return all;
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(all[i * (all.size() - 1) / (n - 1)]);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}


}  // namespace

report::Chart busbw_chart(const std::vector<SettingRuns>& data) {
  report::Chart c;
  c.title = "bus bandwidth by message size, per setting (median; band: min to max over the runs)";
  c.x_label = "message size";
  c.y_label = "busbw GB/s (out of place)";
  c.log_x = c.x_bytes = true;
  for (const auto& sr : data) {
    report::ChartSeries s{sr.setting.label(), {}};
    for (const auto& [size, st] : size_stats(sr.runs)) {
      if (st.n == 0) continue;
      s.points.push_back({static_cast<double>(size), st.median, st.min, st.max});
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

std::string render_text(const report::Report& rep, const std::vector<SettingRuns>& data, const Decision& d, const TextContext& ctx) {
  using report::Status;
  auto paint = [&](Status s, std::string_view text) {
    return report::paint(s, text, ctx.color);
  };
  std::string out;
  auto s = rep.summary();
  std::string where;
  if (rep.node) where = fmt::format(" on {} ({}, {})", rep.node->name.empty() ? "?" : report::printable(rep.node->name),
                                    rep.node->arch.empty() ? "?" : report::printable(rep.node->arch),
                                    rep.node->kernel.empty() ? "?" : report::printable(rep.node->kernel));
  // Runs measured (sweep.result) but no recommendation decided: SKIP and why, as every report's headline.
  const std::string undecided = rep.undecided_why();
  std::string verdict = s.fail ? paint(Status::fail, "FAIL") : s.error ? paint(Status::error, "ERROR") : s.warn ? paint(Status::warn, "WARN") : !undecided.empty() ? paint(Status::skip, "SKIP") : paint(Status::pass, "OK");
  out += fmt::format("perfgap sweep{}: {}  {} fail, {} warn, {} pass, {} skip, {} error{}\n", where, verdict, s.fail, s.warn, s.pass, s.skip, s.error,
                     undecided.empty() ? "" : "; " + report::printable(undecided));
  std::size_t runs = 0;
  for (const auto& sr : data) runs += sr.runs.size();
  out += fmt::format("command: {}\n", report::printable(ctx.command));
  out += fmt::format("runs: {} finished, raw output and manifest.json in {}\n", runs, report::printable(ctx.run_dir));

  // Columns: the sizes that matter; when none could be chosen, what was measured.
  std::vector<std::uint64_t> sizes = d.sizes;
  if (sizes.empty()) {
    std::set<std::uint64_t> seen;
    for (const auto& sr : data)
      for (const auto& r : sr.runs)
        for (const auto& [sz, b] : r.busbw) seen.insert(sz);
    sizes.assign(seen.begin(), seen.end());
  }
  auto shown = ctx.verbose ? sizes : pick(sizes, kColumns);
  std::vector<std::vector<std::string>> t;
  std::vector<std::string> head{"setting", "runs ok"};
  for (auto sz : shown) head.push_back(parsers::format_size(sz));
  head.push_back("vs baseline");
  t.push_back(head);
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto& sr = data[i];
    std::size_t ok = 0;
    const RunOutcome* first_failed = nullptr;
    for (const auto& r : sr.runs) {
      ok += r.ok ? 1 : 0;
      if (!r.ok && !first_failed) first_failed = &r;
    }
    std::vector<std::string> row{sr.setting.label() + (i == 0 ? " (baseline)" : ""), fmt::format("{}/{}", ok, sr.runs.size())};
    if (sr.runs.empty()) {
      row.push_back("not run");
    } else if (ok == 0) {
      row.push_back("all runs failed: " + first_failed->problem);
    } else {
      auto st = size_stats(sr.runs);
      for (auto sz : shown) {
        auto it = st.find(sz);
        row.push_back(it == st.end() ? "-"
                                     : fmt::format("{:.2f} [{:.2f}-{:.2f}]", it->second.median, it->second.min, it->second.max));
      }
      std::string gain;  // the baseline's column stays empty
      for (const auto& v : d.candidates)
        if (v.setting == i && v.has_gain) gain = fmt::format("{:+.1f}%", v.gain_pct);
      if (d.winner && *d.winner == i) gain += " *";
      row.push_back(gain);
    }
    t.push_back(std::move(row));
  }
  out += "\nbusbw GB/s (out-of-place): median [min-max] over the runs";
  if (shown.size() < sizes.size()) out += fmt::format("; {} of {} sizes shown (-v: all)", shown.size(), sizes.size());
  out += "\n";
  report::render_table(out, t, {"  ", 0, true});

  // The recommendation first, then what failed, then (with -v) the rest.
  std::vector<const report::Finding*> order;
  for (const auto& f : rep.findings)
    if (f.id == "sweep.recommendation") order.push_back(&f);
  for (const auto& f : rep.findings)
    if (f.id != "sweep.recommendation" && (ctx.verbose || f.status == Status::error || f.status == Status::fail || f.status == Status::warn))
      order.push_back(&f);
  out += "\n";
  for (const auto* f : order) {
    std::string id = report::printable(f->id) + (f->subject.empty() ? "" : " [" + report::printable(f->subject) + "]");
    out += fmt::format("{} {}  {}\n", paint(f->status, fmt::format("{:<5}", report::status_word(f->status))), id, report::printable(f->title));
    std::size_t limit = ctx.verbose ? f->evidence.size() : std::min<std::size_t>(f->id == "sweep.recommendation" ? 8 : 3, f->evidence.size());
    for (std::size_t i = 0; i < limit; ++i) {
      const auto& e = f->evidence[i];
      out += fmt::format("      {}: {}{}\n", report::printable(e.source), report::printable(e.observed),
                         e.expected ? " (expected " + report::printable(*e.expected) + ")" : "");
    }
    if (limit < f->evidence.size()) out += fmt::format("      ... {} more (-v shows all)\n", f->evidence.size() - limit);
    if (!f->fix.empty() && f->status != Status::skip) out += fmt::format("      fix: {}\n", report::printable(f->fix));
  }
  return out;
}

}  // namespace perfgap::sweep
