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

}  // namespace perfgap::report
