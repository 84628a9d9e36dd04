// Charts of the report model drawn as inline SVG (for render_html).
#pragma once

#include <cstddef>
#include <string>

#include "report/model.hpp"

namespace perfgap::report {

// Beyond these a heatmap is cut (the page says how much); its findings are still all listed.
inline constexpr std::size_t kHeatmapMaxRows = 400, kHeatmapMaxColumns = 80;

// One <svg> element; empty when the chart has nothing finite to draw.
std::string render_svg(const Chart& c);
std::string render_heatmap_svg(const Chart& c, std::size_t max_rows, std::size_t max_columns);

}  // namespace perfgap::report
