// nccl_tests.busbw_collapse: busbw falling sharply, and staying down, as the sizes grow past the
// run's peak. A healthy sweep climbs to a plateau and holds it (a few percent either way at the
// largest sizes); a collapse (29.50 GB/s at 32 MiB, then 5.27 GB/s at 64 MiB and 4 to 5 GB/s up
// to 512 MiB) is the run's own evidence, no reference needed.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analyzers/analyzers.hpp"

namespace perfgap::analyzers {
namespace {

using parsers::format_size;

// Figures are printed to 0.01 GB/s: each may be off by half of that.
constexpr double kCollapseRounding = 0.005;
// A peak below this is too close to the print's resolution (and to the latency-bound sizes) to
// tell a fall from rounding.
constexpr double kCollapseMinPeak = 0.1;

struct CollapsePoint {
  std::uint64_t size = 0;
  const parsers::NcclTestsRow* row = nullptr;
  double oop = 0;
  std::optional<double> ip;  // in place, where printed and above zero
};

// b is below kNcclCollapseShare of a even with both figures rounded against the fall.
bool collapse_falls(double b, double a) { return b + kCollapseRounding < kNcclCollapseShare * (a - kCollapseRounding); }

// A size as nccl-tests' -b/-e take it: "32M", "256K", "1G", bytes otherwise.
std::string collapse_arg(std::uint64_t bytes) {
  for (const auto& [unit, suffix] : {std::pair<std::uint64_t, char>{1ull << 30, 'G'}, {1ull << 20, 'M'}, {1ull << 10, 'K'}})
    if (bytes >= unit && bytes % unit == 0) return fmt::format("{}{}", bytes / unit, suffix);
  return std::to_string(bytes);
}

std::string collapse_where(const std::string& source, const CollapsePoint& p) {
  return p.row->line > 0 ? fmt::format("{}:{}", source, p.row->line) : source;
}

std::string collapse_row_words(const CollapsePoint& p) {
  return fmt::format("{:>9}  busbw {:.2f} GB/s{}  algbw {:.2f} GB/s  time {:.1f} us", format_size(p.size), p.oop,
                     p.ip ? fmt::format(" (in place {:.2f})", *p.ip) : std::string(), p.row->out_of_place->algbw,
                     p.row->out_of_place->time_us);
}

// The first size from `from` on (past the peak) whose busbw falls below the share of the size
// before it (and so of the peak), out of place and in place alike where both are printed; npos
// when none.
std::size_t collapse_next_fall(const std::vector<CollapsePoint>& pts, std::size_t from, bool in_place_too) {
  for (std::size_t i = from; i < pts.size(); ++i) {
    const auto& a = pts[i - 1];
    const auto& b = pts[i];
    if (!collapse_falls(b.oop, a.oop)) continue;
    if (in_place_too && a.ip && b.ip && !collapse_falls(*b.ip, *a.ip)) continue;  // one measurement of two
    return i;
  }
  return std::string::npos;
}

// The first fall that lasts: it and every larger size (two at least) below the share of the
// peak; npos when none. A fall the next sizes recover from is a dip, not a collapse.
std::size_t collapse_lasting_fall(const std::vector<CollapsePoint>& pts, std::size_t peak, bool in_place_too) {
  for (std::size_t fall = collapse_next_fall(pts, peak + 1, in_place_too); fall != std::string::npos && fall + 1 < pts.size();
       fall = collapse_next_fall(pts, fall + 1, in_place_too)) {
    bool lasting = true;
    for (std::size_t i = fall; lasting && i < pts.size(); ++i) lasting = collapse_falls(pts[i].oop, pts[peak].oop);
    if (lasting) return fall;
  }
  return std::string::npos;
}

void collapse_warn(report::Finding& f, const std::vector<CollapsePoint>& pts, std::size_t peak, std::size_t fall, const std::string& source,
                   const std::string& what) {
  const auto& p = pts[peak];
  const auto& before = pts[fall - 1];
  const auto& c = pts[fall];
  double lo = c.oop, hi = c.oop;
  for (std::size_t i = fall; i < pts.size(); ++i) lo = std::min(lo, pts[i].oop), hi = std::max(hi, pts[i].oop);
  const double share = c.oop / p.oop;
  const double time_ratio = before.row->out_of_place->time_us > 0 ? c.row->out_of_place->time_us / before.row->out_of_place->time_us : 0;
  const double size_ratio = static_cast<double>(c.size) / static_cast<double>(std::max<std::uint64_t>(before.size, 1));
  f.status = report::Status::warn;
  f.title = fmt::format(
      "{}: busbw collapses past its peak: {:.2f} GB/s at {}, then {:.2f} GB/s at {} ({:.1f}% of the peak; {:.1f}x the time of {} for "
      "{:.3g}x the data) and {:.2f} to {:.2f} GB/s up to {}",
      what, p.oop, format_size(p.size), c.oop, format_size(c.size), 100 * share, time_ratio, format_size(before.size), size_ratio, lo, hi,
      format_size(pts.back().size));
  f.add(collapse_where(source, p), "peak " + collapse_row_words(p));
  if (fall - 1 != peak) f.add(collapse_where(source, before), "before the fall " + collapse_row_words(before));
  f.add(collapse_where(source, c),
        fmt::format("{}: {:.1f}% of the peak, {:.1f}x the time of {} for {:.3g}x the data", collapse_row_words(c), 100 * share, time_ratio,
                    format_size(before.size), size_ratio),
        fmt::format(">= {:.1f}% of the size before it and of the peak", 100 * kNcclCollapseShare));
  f.add(source,
        fmt::format("{} to {} ({} sizes): busbw {:.2f} to {:.2f} GB/s, {:.1f}% to {:.1f}% of the peak", format_size(c.size),
                    format_size(pts.back().size), pts.size() - fall, lo, hi, 100 * lo / p.oop, 100 * hi / p.oop),
        fmt::format("back above {:.1f}% of the peak at a larger size", 100 * kNcclCollapseShare));
  f.metric("peak_bytes", static_cast<double>(p.size));
  f.metric("peak_busbw_gbps", p.oop);
  f.metric("collapse_bytes", static_cast<double>(c.size));
  f.metric("collapse_busbw_gbps", c.oop);
  f.metric("collapse_share", share);
  f.metric("after_max_share", hi / p.oop);
  if (time_ratio > 0) f.metric("time_ratio", time_ratio);
  f.fix = fmt::format(
      "a fall at one size is where NCCL switches algorithm, protocol or channel count, or where a path stalls: rerun the sizes around it "
      "(-b {} -e {}) with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING to see what NCCL picks there; set NCCL_ALGO (Ring, Tree, NVLS) and "
      "NCCL_PROTO (Simple, LL128) one at a time to find a choice that holds (perfgap sweep --env NCCL_ALGO=Ring,Tree -- ...); if none holds, "
      "check the GPU-NIC path on the nodes (perfgap check: PCIe ACS and link width, GPU-NIC affinity, GPUDirect RDMA) and the NICs' counters for "
      "drops and congestion",
      collapse_arg(before.size), collapse_arg(pts.back().size));
  f.impact =
      fmt::format("collectives of {} and more run at {:.0f}% to {:.0f}% of the bandwidth the run reached at {}: up to {:.1f}x as long",
                  format_size(c.size), 100 * lo / p.oop, 100 * hi / p.oop, format_size(p.size), p.oop / std::max(lo, kCollapseRounding));
}

// No lasting collapse: what the curve did past its peak, in words.
void collapse_none(report::Finding& f, const std::vector<CollapsePoint>& pts, std::size_t peak, std::size_t fall, const std::string& source,
                   const std::string& what) {
  const auto& p = pts[peak];
  const auto& last = pts.back();
  f.add(collapse_where(source, p), "peak " + collapse_row_words(p));
  f.metric("peak_bytes", static_cast<double>(p.size));
  f.metric("peak_busbw_gbps", p.oop);
  if (fall == pts.size() - 1) {
    // One size, the largest: a hiccup of one measurement cannot be told from a collapse.
    f.status = report::Status::skip;
    f.add(collapse_where(source, last), collapse_row_words(last),
          fmt::format(">= {:.1f}% of the size before it", 100 * kNcclCollapseShare));
    f.title = fmt::format(
        "{}: busbw falls from {:.2f} GB/s to {:.2f} GB/s at {}, the largest size printed: one size cannot tell a collapse from a "
        "hiccup; rerun to larger sizes (-e) to see whether it stays down",
        what, pts[fall - 1].oop, last.oop, format_size(last.size));
    return;
  }
  f.status = report::Status::pass;
  if (peak + 1 == pts.size()) {
    f.title = fmt::format("{}: busbw rises to its peak {:.2f} GB/s at {}, the largest size printed: no fall past it", what, p.oop,
                          format_size(p.size));
    return;
  }
  f.add(collapse_where(source, last), collapse_row_words(last), fmt::format(">= {:.1f}% of the peak", 100 * kNcclCollapseShare));
  f.metric("last_share", last.oop / p.oop);
  if (fall != std::string::npos) {
    const auto& c = pts[fall];
    f.add(collapse_where(source, c), "a dip " + collapse_row_words(c), std::string("busbw staying down at larger sizes"));
    f.title =
        fmt::format("{}: busbw dips to {:.2f} GB/s at {} past its peak {:.2f} GB/s at {} and recovers ({:.2f} GB/s at {}): no lasting fall",
                    what, c.oop, format_size(c.size), p.oop, format_size(p.size), last.oop, format_size(last.size));
    return;
  }
  f.title =
      fmt::format("{}: no sharp fall of busbw past its peak {:.2f} GB/s at {} ({:.2f} GB/s, {:.1f}%, at {}, the largest size printed)",
                  what, p.oop, format_size(p.size), last.oop, 100 * last.oop / p.oop, format_size(last.size));
}

// A run that stopped short of its header's sizes (a capture cut, a job killed): no fall up to where
// it stopped is no pass, the larger sizes, where a collapse shows, were never measured.
void collapse_cut(report::Finding& f, const std::vector<CollapsePoint>& pts, std::size_t peak, const parsers::NcclTestsStop& st,
                  const std::string& what) {
  f.status = report::Status::skip;
  f.title = fmt::format("{}: the run ended at {} of the {} its header asked for (it stopped early or the capture is cut): the sizes that could "
                        "show a collapse were never measured (up to {}, busbw peaks at {:.2f} GB/s at {})",
                        what, format_size(st.reached), format_size(st.max_bytes), format_size(pts.back().size), pts[peak].oop,
                        format_size(pts[peak].size));
  f.add(st.last_line > 0 ? fmt::format("{}:{}", f.subject, st.last_line) : f.subject,
        fmt::format("the last size printed is {}; the header (line {}) asked for sizes up to {}", format_size(st.reached), st.header_line,
                    format_size(st.max_bytes)),
        fmt::format("sizes up to {}", format_size(st.max_bytes)));
  f.metric("stopped_at_bytes", static_cast<double>(st.reached));
}

}  // namespace

report::Finding nccl_tests_collapse(const std::map<std::uint64_t, const parsers::NcclTestsRow*>& rows, const std::string& source,
                                    const std::string& what, bool& fell, const parsers::NcclTestsStop* stop) {
  fell = false;
  report::Finding f;
  f.id = "nccl_tests.busbw_collapse";
  f.layer = "network";
  f.subject = source;
  std::vector<CollapsePoint> pts;
  pts.reserve(rows.size());
  for (const auto& [size, r] : rows) {
    CollapsePoint p{size, r, r->out_of_place->busbw, std::nullopt};
    if (r->in_place && r->in_place->busbw > 0) p.ip = r->in_place->busbw;
    pts.push_back(p);
  }
  if (pts.size() < 2) {
    f.title = fmt::format("{}: {} size printed: a fall of busbw past its peak needs the sizes after it", what, pts.size());
    return f;
  }
  std::size_t peak = 0;
  for (std::size_t i = 1; i < pts.size(); ++i)
    if (pts[i].oop > pts[peak].oop) peak = i;
  if (pts[peak].oop < kCollapseMinPeak) {
    f.title = fmt::format("{}: peak busbw {:.2f} GB/s at {}: too close to the print's 0.01 GB/s to tell a fall from rounding", what,
                          pts[peak].oop, format_size(pts[peak].size));
    return f;
  }
  if (const auto fall = collapse_lasting_fall(pts, peak, true); fall != std::string::npos) {
    fell = true;
    collapse_warn(f, pts, peak, fall, source, what);
    return f;
  }
  if (const auto fall = collapse_lasting_fall(pts, peak, false); fall != std::string::npos) {
    // Out of place collapses, in place does not: two measurements of one bandwidth disagree.
    fell = true;
    const auto& c = pts[fall];
    f.add(collapse_where(source, c), collapse_row_words(c), std::string("out of place and in place alike"));
    f.title = fmt::format(
        "{}: busbw out of place falls from {:.2f} GB/s to {:.2f} GB/s at {} and stays down, but in place holds ({:.2f} GB/s): the two "
        "measurements of one bandwidth disagree; rerun the sizes from {} on to see which one holds",
        what, pts[fall - 1].oop, c.oop, format_size(c.size), c.ip.value_or(0), format_size(pts[fall - 1].size));
    return f;
  }
  const auto first = collapse_next_fall(pts, peak + 1, true);
  fell = first != std::string::npos && first + 1 == pts.size();  // at the largest size alone: undecided, said
  collapse_none(f, pts, peak, first, source, what);
  if (stop && f.status == report::Status::pass) collapse_cut(f, pts, peak, *stop, what);
  return f;
}

}  // namespace perfgap::analyzers
