#include "parsers/sysfs_values.hpp"

#include "sys/text.hpp"

namespace perfgap::parsers {

std::optional<double> parse_link_speed(std::string_view text) {
  auto fields = sys::split_ws(sys::trim_ws(text));
  if (fields.size() < 2 || fields[1] != "GT/s") return std::nullopt;
  auto v = sys::to_double(fields[0]);
  if (!v || !(*v > 0) || *v > 1000) return std::nullopt;
  return v;
}

std::optional<int> parse_link_width(std::string_view text) {
  auto t = sys::trim_ws(text);
  if (!t.empty() && (t.front() == 'x' || t.front() == 'X')) t.remove_prefix(1);
  auto v = sys::to_int<int>(t);
  if (!v || *v < 0 || *v > 32) return std::nullopt;
  return v;
}

std::optional<double> parse_ib_rate(std::string_view text) {
  auto t = sys::trim_ws(text);
  auto fields = sys::split_ws(t);
  if (fields.size() < 2 || fields[1] != "Gb/sec") return std::nullopt;
  auto v = sys::to_double(fields[0]);
  if (!v || *v < 0) return std::nullopt;
  return v;
}

std::string strip_state_number(std::string_view text) {
  auto t = sys::trim_ws(text);
  auto colon = t.find(':');
  if (colon != std::string_view::npos && sys::to_int<int>(t.substr(0, colon))) return std::string(sys::trim_ws(t.substr(colon + 1)));
  return std::string(t);
}

}  // namespace perfgap::parsers
