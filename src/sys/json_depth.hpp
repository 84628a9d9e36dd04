// How deep a JSON text nests, before any parser keeps a frame per level: the report readers
// (compare, explain, check --baseline, fleet) refuse a text nested deeper than a report can be.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace perfgap::sys {

// Reports nest four levels: a JSON text nested deeper than `max_depth` arrays and objects is not
// one. The byte offset of the first '[' or '{' past the depth, or nullopt (strings are skipped,
// escapes included).
inline std::optional<std::size_t> json_too_deep(std::string_view text, int max_depth = 64) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

}  // namespace perfgap::sys
