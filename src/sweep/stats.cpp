// The sweep's statistics and findings: pure functions of the judged runs.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "parsers/nccl_tests.hpp"
#include "sweep/sweep.hpp"

namespace perfgap::sweep {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::vector<const RunOutcome*> ok_runs(const SettingRuns& s) {
  std::vector<const RunOutcome*> v;
  for (const auto& r : s.runs)
    if (r.ok) v.push_back(&r);
  return v;
}

// The score of one run over the sizes compared: mean of busbw / the baseline's median at each
// size (the baseline's own runs score about 1). nullopt when the run lacks one of the sizes.
std::optional<double> run_score(const RunOutcome& r, const std::vector<std::uint64_t>& sizes,
                                const std::map<std::uint64_t, SizeStats>& base) {
  double sum = 0;
  for (auto s : sizes) {
    auto it = r.busbw.find(s);
    if (it == r.busbw.end()) return std::nullopt;
    sum += it->second / base.at(s).median;
  }
  return sum / static_cast<double>(sizes.size());
}

std::string size_range(const std::vector<std::uint64_t>& sizes) {
  if (sizes.empty()) return "no size";
  if (sizes.size() == 1) return parsers::format_size(sizes[0]);
  if (sizes.size() <= 4) {
    std::string s;
    for (auto x : sizes) s += (s.empty() ? "" : ", ") + parsers::format_size(x);
    return s;
  }
  return fmt::format("{} sizes {}..{}", sizes.size(), parsers::format_size(sizes.front()), parsers::format_size(sizes.back()));
}

}  // namespace

std::map<std::uint64_t, SizeStats> size_stats(const std::vector<RunOutcome>& runs) {
  std::map<std::uint64_t, std::vector<double>> by_size;
  for (const auto& r : runs)
    if (r.ok)
      for (const auto& [s, b] : r.busbw) by_size[s].push_back(b);
  std::map<std::uint64_t, SizeStats> out;
  for (auto& [s, v] : by_size) {
    SizeStats st;
    st.n = v.size();
    st.min = *std::min_element(v.begin(), v.end());
    st.max = *std::max_element(v.begin(), v.end());
    st.median = median_of(v);
    out[s] = st;
  }
  return out;
}

Decision decide(const std::vector<SettingRuns>& data, const std::vector<std::uint64_t>& wanted_sizes) {
  Decision d;
  if (data.empty()) {
    d.reason = "no setting";
    return d;
  }
  const auto base_ok = ok_runs(data[0]);
  if (base_ok.empty()) {
    d.reason = data[0].runs.empty() ? "the baseline never ran" : "every run of the baseline failed: nothing to compare with";
    return d;
  }
  const auto base = size_stats(data[0].runs);
  // The sizes that matter: --sizes, else every size of 1 MiB or more the baseline measured;
  // a size whose baseline median is 0 cannot be compared as a ratio.
  if (!wanted_sizes.empty()) {
    std::set<std::uint64_t> uniq(wanted_sizes.begin(), wanted_sizes.end());
    for (auto s : uniq) {
      auto it = base.find(s);
      (it != base.end() && it->second.median > 0 ? d.sizes : d.sizes_missing).push_back(s);
    }
  } else {
    for (const auto& [s, st] : base)
      if (s >= kMiB && st.median > 0) d.sizes.push_back(s);
  }
  if (d.sizes.empty()) {
    d.reason = wanted_sizes.empty() ? "the baseline measured no size of 1 MiB or more: give the sizes that matter with --sizes"
                                    : "the baseline measured none of the --sizes";
    return d;
  }

  std::vector<double> base_scores;
  for (const auto* r : base_ok)
    if (auto sc = run_score(*r, d.sizes, base)) base_scores.push_back(*sc);
  const double base_hi = base_scores.empty() ? 0 : *std::max_element(base_scores.begin(), base_scores.end());

  for (std::size_t i = 1; i < data.size(); ++i) {
    CandidateVerdict v;
    v.setting = i;
    const auto runs = ok_runs(data[i]);
    if (runs.empty()) {
      v.why = data[i].runs.empty() ? "not run" : "every run failed";
      d.candidates.push_back(v);
      continue;
    }
    const auto st = size_stats(data[i].runs);
    std::vector<std::uint64_t> absent, slower;
    double ratio_sum = 0;
    for (auto s : d.sizes) {
      auto it = st.find(s);
      if (it == st.end()) {
        absent.push_back(s);
        continue;
      }
      ratio_sum += it->second.median / base.at(s).median;
      if (it->second.max < base.at(s).min) slower.push_back(s);
    }
    if (!absent.empty()) {
      v.why = fmt::format("no result at {}", size_range(absent));
      d.candidates.push_back(v);
      continue;
    }
    v.gain_pct = 100 * (ratio_sum / static_cast<double>(d.sizes.size()) - 1);
    v.has_gain = true;
    std::vector<double> scores;
    for (const auto* r : runs)
      if (auto sc = run_score(*r, d.sizes, base)) scores.push_back(*sc);
    if (scores.size() < 2 || base_scores.size() < 2) {
      d.noise_unjudged = true;
      v.why = fmt::format("{:+.1f}% on medians, but noise cannot be judged: {} complete run(s) of it, {} of the baseline (2 each needed)",
                          v.gain_pct, scores.size(), base_scores.size());
      d.candidates.push_back(v);
      continue;
    }
    v.judged = true;
    const double lo = *std::min_element(scores.begin(), scores.end());
    const double hi = *std::max_element(scores.begin(), scores.end());
    const double base_lo = *std::min_element(base_scores.begin(), base_scores.end());
    if (!slower.empty()) {
      v.why = fmt::format("{:+.1f}% on medians, but slower beyond noise at {}", v.gain_pct, size_range(slower));
    } else if (lo > base_hi && v.gain_pct > 0) {
      v.significant = true;
      v.why = fmt::format("{:+.1f}% on medians; its worst run scores {:.3f}, the baseline's best {:.3f}", v.gain_pct, lo, base_hi);
    } else if (hi < base_lo) {
      v.why = fmt::format("{:+.1f}% on medians: slower beyond noise (its best run scores {:.3f}, the baseline's worst {:.3f})", v.gain_pct, hi, base_lo);
    } else {
      v.why = fmt::format("{:+.1f}% on medians, within noise (its runs score {:.3f}..{:.3f}, the baseline's {:.3f}..{:.3f})", v.gain_pct, lo, hi,
                          base_lo, base_hi);
    }
    d.candidates.push_back(v);
  }

  if (std::none_of(d.candidates.begin(), d.candidates.end(), [](const auto& v) { return v.has_gain || v.judged; }) &&
      std::none_of(data.begin() + 1, data.end(), [](const auto& s) { return !ok_runs(s).empty(); })) {
    d.reason = "no other setting has a successful run: nothing to compare with the baseline";
    return d;
  }
  for (const auto& v : d.candidates)
    if (v.significant && (!d.winner || v.gain_pct > d.gain_pct)) {
      d.winner = v.setting;
      d.gain_pct = v.gain_pct;
    }
  d.kind = d.winner ? Decision::Kind::winner : Decision::Kind::no_difference;
  return d;
}

SweepFindings make_findings(const std::vector<SettingRuns>& data, const Decision& d, const std::string& run_dir,
                            const std::string& interrupted) {
  SweepFindings out;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto& sr = data[i];
    report::Finding f;
    f.id = "sweep.result";
    f.layer = "sweep";
    f.subject = sr.setting.label();
    const auto st = size_stats(sr.runs);
    std::size_t ok = 0;
    for (const auto& r : sr.runs) ok += r.ok ? 1 : 0;
    if (sr.runs.empty()) {
      f.status = report::Status::skip;
      f.title = fmt::format("{}not run{}", i == 0 ? "baseline: " : "", interrupted.empty() ? "" : " (" + interrupted + ")");
    } else if (ok == 0) {
      f.status = report::Status::error;
      f.title = fmt::format("{}all {} run(s) failed (first: {})", i == 0 ? "baseline: " : "", sr.runs.size(), sr.runs[0].problem);
      f.fix = fmt::format("read the runs' raw output in {}; a setting that makes the benchmark fail cannot be recommended", run_dir);
    } else {
      f.status = report::Status::pass;
      double peak = 0;
      for (const auto& [s, x] : st) peak = std::max(peak, x.median);
      f.title = fmt::format("{}{} of {} run(s) ok, {} sizes, peak median busbw {:.2f} GB/s", i == 0 ? "baseline: " : "", ok, sr.runs.size(),
                            st.size(), peak);
    }
    for (const auto& r : sr.runs)
      f.add(run_dir + "/" + r.file, r.ok ? (r.unreadable_rows ? fmt::format("ok ({} unreadable row(s))", r.unreadable_rows) : "ok") : r.problem);
    for (const auto& [s, x] : st) {
      f.metric(fmt::format("busbw_gbps.{}.median", s), x.median);
      f.metric(fmt::format("busbw_gbps.{}.min", s), x.min);
      f.metric(fmt::format("busbw_gbps.{}.max", s), x.max);
    }
    f.metric("runs", static_cast<double>(sr.runs.size()));
    f.metric("runs_ok", static_cast<double>(ok));
    out.findings.push_back(std::move(f));
  }

  report::Finding rec;
  rec.id = "sweep.recommendation";
  rec.layer = "sweep";
  const std::string base_label = data.empty() ? "" : data[0].setting.label();
  const std::string stopped = interrupted.empty() ? "" : " (" + interrupted + ": partial data)";
  for (const auto& v : d.candidates) rec.add(data[v.setting].setting.label(), v.why);
  for (auto s : d.sizes_missing) rec.add("--sizes", fmt::format("{}: not measured by the baseline", parsers::format_size(s)));
  switch (d.kind) {
    case Decision::Kind::winner: {
      const auto& w = data[*d.winner].setting;
      rec.status = report::Status::pass;
      rec.title = fmt::format("{} beats the baseline {} by {:.1f}% at {} (every run above every baseline run){}", w.label(), base_label,
                              d.gain_pct, size_range(d.sizes), stopped);
      rec.fix = fmt::format("set {} for this workload on this fabric (the launcher must pass it to every rank)", w.label());
      rec.impact = fmt::format("{:+.1f}% bus bandwidth on medians at the sizes that matter", d.gain_pct);
      out.recommendation = report::Recommendation{w.as_map(), std::round(d.gain_pct * 100) / 100};
      break;
    }
    case Decision::Kind::no_difference:
      rec.status = report::Status::warn;
      rec.title = d.noise_unjudged && std::none_of(d.candidates.begin(), d.candidates.end(), [](const auto& v) { return v.judged; })
                      ? fmt::format("no significant difference: keep the baseline {} (too few runs to judge noise: use --repeat 3 or more){}",
                                    base_label, stopped)
                      : fmt::format("no significant difference: keep the baseline {}{}", base_label, stopped);
      rec.fix = "keep the baseline; a setting is worth changing only when it wins beyond run-to-run noise";
      out.recommendation = report::Recommendation{data[0].setting.as_map(), 0.0};
      break;
    case Decision::Kind::cannot_judge:
      rec.status = report::Status::skip;
      rec.title = fmt::format("cannot recommend: {}{}", d.reason, stopped);
      break;
  }
  rec.metric("sizes_compared", static_cast<double>(d.sizes.size()));
  if (d.kind == Decision::Kind::winner) rec.metric("gain_pct", d.gain_pct);
  out.findings.push_back(std::move(rec));
  return out;
}

}  // namespace perfgap::sweep
