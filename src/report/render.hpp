// Renderers: a Report in, text out. They only render.
#pragma once

#include <string>

#include "report/model.hpp"

namespace perfgap::report {

struct TextOptions {
  bool verbose = false;  // every evidence item, pass/skip details
  bool color = false;
};

std::string render_text(const Report& r, const TextOptions& opts);
std::string render_json(const Report& r);
std::string render_junit(const Report& r);
// node_exporter textfile collector format; `unix_time` is the run's time.
std::string render_prometheus(const Report& r, long long unix_time);

}  // namespace perfgap::report
