// Charts as inline SVG for the HTML report: no script, no external font, readable without
// colour (each series also has its own dash pattern and marker shape; each heatmap cell its
// status letter).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/html_escape.hpp"
#include "report/svg_chart.hpp"
#include "report/text_style.hpp"

namespace perfgap::report {
namespace {

constexpr double kWidth = 760, kHeight = 340;
constexpr double kLeft = 72, kRight = 190, kTop = 34, kBottom = 56;

constexpr const char* kPalette[] = {"#1f5fa8", "#c2410c", "#15803d", "#7e22ce", "#a16207", "#0e7490", "#be185d", "#4b5563"};
constexpr const char* kDashes[] = {"", "7 4", "2 3", "9 3 2 3"};

std::string coord(double v) { return fmt::format("{:.1f}", v); }

std::string size_label(double bytes) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T", "P"};
  double v = bytes;
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:g}{}", std::round(v * 100) / 100, kUnits[u]);
}

std::string value_label(double v) { return number_text(v); }

// "Nice" ticks (1, 2, 5 times a power of ten) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int wanted) {
  std::vector<double> out;
  double span = hi - lo;
  if (!(span > 0) || !std::isfinite(span)) return {lo};
  double raw = span / wanted;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9 && out.size() < 50; t += step) out.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  return out;
}

std::string clipped_label(std::string_view s, std::size_t cps) {
  std::string p = printable(s);
  if (display_width(p) <= cps) return p;
  std::string out;
  std::size_t i = 0, n = 0;
  while (i < p.size() && n + 1 < cps) {
    std::size_t start = i;
    next_code_point(p, i);
    out.append(p, start, i - start);
    ++n;
  }
  return out + "\u2026";
}

std::string open_svg(const Chart& c, double width, double height) {
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\">"
                     "<title>{}</title>",
                     coord(width), coord(height), coord(width), coord(height), html_escape(c.title), html_escape(c.title));
}

std::string marker_open(std::size_t series, double x, double y, const char* color) {
  switch (series % 4) {
    case 0: return fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3.2\" fill=\"{}\"", coord(x), coord(y), color);
    case 1: return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"6\" height=\"6\" fill=\"{}\"", coord(x - 3), coord(y - 3), color);
    case 2: return fmt::format("<path d=\"M{} {}l3.6 6.2h-7.2z\" fill=\"{}\"", coord(x), coord(y - 4), color);
    default: return fmt::format("<path d=\"M{} {}l4 4-4 4-4-4z\" fill=\"{}\"", coord(x), coord(y - 4), color);
  }
}

std::string line_chart(const Chart& c) {
  struct Pt {
    double x, y;
    std::optional<double> low, high;
    double raw_x;
  };
  std::vector<std::vector<Pt>> series;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = 0, y_hi = -x_lo;
  for (const auto& s : c.series) {
    std::vector<Pt> pts;
    for (const auto& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y) || (c.log_x && p.x <= 0)) continue;
      Pt q{c.log_x ? std::log2(p.x) : p.x, p.y, p.low, p.high, p.x};
      if (q.low && !std::isfinite(*q.low)) q.low.reset();
      if (q.high && !std::isfinite(*q.high)) q.high.reset();
      x_lo = std::min(x_lo, q.x);
      x_hi = std::max(x_hi, q.x);
      for (double v : {q.y, q.low.value_or(q.y), q.high.value_or(q.y)}) {
        y_lo = std::min(y_lo, v);
        y_hi = std::max(y_hi, v);
      }
      pts.push_back(q);
    }
    std::sort(pts.begin(), pts.end(), [](const Pt& a, const Pt& b) { return a.x < b.x; });
    series.push_back(std::move(pts));
  }
  if (!std::isfinite(x_lo)) return {};
  if (c.reference_y && std::isfinite(*c.reference_y)) {
    y_lo = std::min(y_lo, *c.reference_y);
    y_hi = std::max(y_hi, *c.reference_y);
  }
  if (x_hi <= x_lo) {
    x_lo -= 1;
    x_hi += 1;
  }
  if (y_hi <= y_lo) y_hi = y_lo + 1;
  y_hi += (y_hi - y_lo) * 0.08;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto sx = [&](double x) { return kLeft + (x - x_lo) / (x_hi - x_lo) * pw; };
  auto sy = [&](double y) { return kTop + ph - (y - y_lo) / (y_hi - y_lo) * ph; };

  std::string out = open_svg(c, kWidth, kHeight);
  out += fmt::format("<text x=\"{}\" y=\"20\" class=\"ct\">{}</text>", coord(kLeft), html_escape(c.title));
  // Grid and axes.
  for (double t : nice_ticks(y_lo, y_hi, 5)) {
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"grid\"/>", coord(kLeft), coord(kLeft + pw), coord(sy(t)), coord(sy(t)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"yt\">{}</text>", coord(kLeft - 6), coord(sy(t) + 4), value_label(t));
  }
  std::vector<double> xt;
  if (c.log_x) {
    std::vector<double> all;
    for (double e = std::ceil(x_lo); e <= std::floor(x_hi); e += 1) all.push_back(e);
    std::size_t stride = std::max<std::size_t>(1, (all.size() + 7) / 8);
    for (std::size_t i = 0; i < all.size(); i += stride) xt.push_back(all[i]);
  } else {
    xt = nice_ticks(x_lo, x_hi, 7);
  }
  for (double t : xt) {
    double v = c.log_x ? std::exp2(t) : t;
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"grid\"/>", coord(sx(t)), coord(sx(t)), coord(kTop), coord(kTop + ph));
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"xt\">{}</text>", coord(sx(t)), coord(kTop + ph + 16), c.x_bytes ? size_label(v) : value_label(v));
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>", coord(kLeft), coord(kTop), coord(pw), coord(ph));
  out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"xl\">{}</text>", coord(kLeft + pw / 2), coord(kHeight - 10), html_escape(c.x_label));
  out += fmt::format("<text transform=\"translate(16 {}) rotate(-90)\" class=\"yl\">{}</text>", coord(kTop + ph / 2), html_escape(c.y_label));

  if (c.reference_y && std::isfinite(*c.reference_y)) {
    double y = sy(*c.reference_y);
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"ref\"><title>{} {}</title></line>", coord(kLeft), coord(kLeft + pw), coord(y), coord(y),
                       html_escape(c.reference_label), value_label(*c.reference_y));
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"rl\">{}</text>", coord(kLeft + pw - 4), coord(y - 5), html_escape(clipped_label(c.reference_label, 30)));
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& pts = series[i];
    const char* color = kPalette[i % std::size(kPalette)];
    // The min-max band first, under its line.
    std::string band_hi, band_lo;
    std::size_t banded = 0;
    for (const auto& p : pts)
      if (p.low && p.high) ++banded;
    if (banded == pts.size() && banded >= 2) {
      std::string d;
      for (const auto& p : pts) d += fmt::format("{}{} {}", d.empty() ? "M" : "L", coord(sx(p.x)), coord(sy(*p.high)));
      for (auto it = pts.rbegin(); it != pts.rend(); ++it) d += fmt::format("L{} {}", coord(sx(it->x)), coord(sy(*it->low)));
      out += fmt::format("<path d=\"{}Z\" fill=\"{}\" fill-opacity=\"0.16\" stroke=\"none\"/>", d, color);
    }
    if (pts.size() >= 2) {
      std::string line;
      for (const auto& p : pts) line += fmt::format("{}{},{}", line.empty() ? "" : " ", coord(sx(p.x)), coord(sy(p.y)));
      const char* dash = kDashes[i % std::size(kDashes)];
      out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{}/>", line, color,
                         *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "");
    }
    const std::string name = html_escape(c.series[i].name);
    for (const auto& p : pts) {
      std::string range = p.low && p.high ? fmt::format(" (min {}, max {})", value_label(*p.low), value_label(*p.high)) : "";
      out += marker_open(i, sx(p.x), sy(p.y), color) +
             fmt::format("><title>{}: {} {}{}</title></{}>", name, c.x_bytes ? size_label(p.raw_x) : value_label(p.raw_x), value_label(p.y), range,
                         i % 4 == 0 ? "circle" : i % 4 == 1 ? "rect" : "path");
    }
    // Legend entry.
    double ly = kTop + 8 + static_cast<double>(i) * 18;
    if (ly > kHeight - 20) continue;
    double lx = kLeft + pw + 14;
    const char* dash = kDashes[i % std::size(kDashes)];
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.8\"{}/>", coord(lx), coord(lx + 26), coord(ly), coord(ly), color,
                       *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "");
    out += marker_open(i, lx + 13, ly, color) + "/>";
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lg\">{}</text>", coord(lx + 32), coord(ly + 4), html_escape(clipped_label(c.series[i].name, 22)));
  }
  out += "</svg>";
  return out;
}

std::string waterfall_chart(const Chart& c) {
  std::vector<const WaterfallStep*> steps;
  // A total (a bar from 0) would squash the steps near the top: the axis starts below the
  // lowest level instead, and totals rise from the axis (its first tick says where it starts).
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& s : c.steps) {
    if (!std::isfinite(s.from) || !std::isfinite(s.to)) continue;
    steps.push_back(&s);
    for (double v : {s.from, s.to})
      if (v != 0) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  }
  if (steps.empty()) return {};
  if (!std::isfinite(lo)) lo = hi = 0;
  if (c.reference_y && std::isfinite(*c.reference_y)) {
    lo = std::min(lo, *c.reference_y);
    hi = std::max(hi, *c.reference_y);
  }
  if (hi <= lo) hi = lo + 1;
  const double span = hi - lo;
  lo = lo > 0 ? std::max(0.0, lo - span * 0.6) : lo - span * 0.1;
  if (lo > 0) {
    const auto t = nice_ticks(lo, hi, 5);
    double step = t.size() >= 2 ? t[1] - t[0] : 1;
    lo = std::max(0.0, std::floor(lo / step) * step);
  }
  hi += (hi - lo) * 0.1;
  const double width = std::max(kWidth, kLeft + 40 + 78.0 * static_cast<double>(steps.size()));
  const double height = kHeight + 40;
  const double pw = width - kLeft - 30, ph = height - kTop - kBottom - 50;
  auto sy = [&](double y) { return kTop + ph - (y - lo) / (hi - lo) * ph; };
  const double slot = pw / static_cast<double>(steps.size());
  std::string out = open_svg(c, width, height);
  out += fmt::format("<text x=\"{}\" y=\"20\" class=\"ct\">{}</text>", coord(kLeft), html_escape(c.title));
  for (double t : nice_ticks(lo, hi, 5)) {
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"grid\"/>", coord(kLeft), coord(kLeft + pw), coord(sy(t)), coord(sy(t)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"yt\">{}</text>", coord(kLeft - 6), coord(sy(t) + 4), value_label(t));
  }
  out += fmt::format("<text transform=\"translate(16 {}) rotate(-90)\" class=\"yl\">{}</text>", coord(kTop + ph / 2), html_escape(c.y_label));
  if (c.reference_y && std::isfinite(*c.reference_y) && *c.reference_y >= lo && *c.reference_y <= hi) {
    double y = sy(*c.reference_y);
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"ref\"/>", coord(kLeft), coord(kLeft + pw), coord(y), coord(y));
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"rl\">{}</text>", coord(kLeft + pw - 4), coord(y - 5), html_escape(clipped_label(c.reference_label, 30)));
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = *steps[i];
    double x = kLeft + slot * static_cast<double>(i) + slot * 0.18, w = slot * 0.64;
    double top = sy(std::max(s.from, s.to)), bottom = sy(std::max(lo, std::min(s.from, s.to)));
    const char* cls = s.from == 0 || s.to == 0 ? "total" : s.residual ? "rest" : s.to < s.from ? "down" : "up";
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"wf {}\"><title>{}: {} to {}</title></rect>", coord(x), coord(top), coord(w),
                       coord(std::max(bottom - top, 1.0)), cls, html_escape(s.label), value_label(s.from), value_label(s.to));
    std::string delta = std::string(cls) == "total" ? value_label(std::max(s.from, s.to)) : fmt::format("{:+.3g}", s.to - s.from);
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"bv\">{}</text>", coord(x + w / 2), coord(top - 4), delta);
    if (i + 1 < steps.size()) {
      double nx = kLeft + slot * static_cast<double>(i + 1) + slot * 0.18;
      out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"conn\"/>", coord(x + w), coord(nx), coord(sy(s.to)), coord(sy(s.to)));
    }
    out += fmt::format("<text transform=\"translate({} {}) rotate(-35)\" class=\"cat\">{}</text>", coord(x + w / 2), coord(kTop + ph + 14),
                       html_escape(clipped_label(s.label, 24)));
  }
  out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"axis\"/>", coord(kLeft), coord(kLeft + pw), coord(sy(lo)), coord(sy(lo)));
  out += "</svg>";
  return out;
}

const char* status_letter(Status s) {
  switch (s) {
    case Status::fail: return "F";
    case Status::warn: return "W";
    case Status::pass: return "P";
    case Status::skip: return "S";
    case Status::error: return "E";
  }
  return "?";
}

}  // namespace

std::string render_svg(const Chart& c) {
  switch (c.kind) {
    case Chart::Kind::line: return line_chart(c);
    case Chart::Kind::waterfall: return waterfall_chart(c);
    case Chart::Kind::heatmap: return render_heatmap_svg(c, kHeatmapMaxRows, kHeatmapMaxColumns);
  }
  return {};
}

std::string render_heatmap_svg(const Chart& c, std::size_t max_rows, std::size_t max_columns) {
  const std::size_t rows = std::min(c.rows.size(), max_rows), cols = std::min(c.columns.size(), max_columns);
  if (rows == 0 || cols == 0) return {};
  // Row labels are a node or a group of nodes ("37 nodes: gpu[0331,0662]"): wide enough for both.
  constexpr double kCell = 18, kRowLabel = 230, kColLabel = 130;
  const double width = kRowLabel + kCell * static_cast<double>(cols) + 90, height = kTop + kColLabel + kCell * static_cast<double>(rows) + 10;
  std::string out = open_svg(c, width, height);
  out += fmt::format("<text x=\"4\" y=\"20\" class=\"ct\">{}</text>", html_escape(c.title));
  const double y0 = kTop + kColLabel;
  for (std::size_t j = 0; j < cols; ++j) {
    double x = kRowLabel + kCell * static_cast<double>(j) + kCell / 2;
    out += fmt::format("<text transform=\"translate({} {}) rotate(-60)\" class=\"hc\">{}</text>", coord(x + 4), coord(y0 - 4), html_escape(clipped_label(c.columns[j], 22)));
  }
  for (std::size_t i = 0; i < rows; ++i) {
    double y = y0 + kCell * static_cast<double>(i);
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"hr\">{}</text>", coord(kRowLabel - 6), coord(y + 13), html_escape(clipped_label(c.rows[i], 36)));
    for (std::size_t j = 0; j < cols; ++j) {
      const auto& cell = i < c.cells.size() && j < c.cells[i].size() ? c.cells[i][j] : std::optional<Status>{};
      if (!cell) continue;
      double x = kRowLabel + kCell * static_cast<double>(j);
      out += fmt::format("<g><title>{} {}: {}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"hm st-{}\"/>"
                         "<text x=\"{}\" y=\"{}\" class=\"hl\">{}</text></g>",
                         html_escape(c.rows[i]), html_escape(c.columns[j]), to_string(*cell), coord(x + 1), coord(y + 1), coord(kCell - 2), coord(kCell - 2),
                         to_string(*cell), coord(x + kCell / 2), coord(y + 13), status_letter(*cell));
    }
  }
  out += "</svg>";
  return out;
}

}  // namespace perfgap::report
