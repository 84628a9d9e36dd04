// The one format dispatch: a report and a format in, the rendered text out.
#include "report/render.hpp"

namespace perfgap::report {

std::string_view format_name(Format f) {
  switch (f) {
    case Format::text: return "text";
    case Format::json: return "json";
    case Format::html: return "html";
    case Format::junit: return "junit";
    case Format::prometheus: return "prometheus";
  }
  return "text";
}

std::optional<Format> parse_format(std::string_view name) {
  for (Format f : kFormats)
    if (format_name(f) == name) return f;
  return std::nullopt;
}

std::string render(const Report& r, Format f, const RenderOptions& opts) {
  switch (f) {
    case Format::json: return render_json(r);
    case Format::html: return render_html(r, opts.html);
    case Format::junit: return opts.sections ? render_junit(*opts.sections) : render_junit(r);
    case Format::prometheus: return opts.sections ? render_prometheus(*opts.sections) : render_prometheus(r, opts.unix_time);
    case Format::text: break;
  }
  return render_text(r, opts.text);
}

}  // namespace perfgap::report
