// The error every text parser returns: what was wrong and where (1-based line, 0 if none).
#pragma once

#include <string>

#include <tl/expected.hpp>

namespace perfgap::parsers {

struct ParseError {
  std::string message;
  int line = 0;
  std::string describe() const {
    return line > 0 ? "line " + std::to_string(line) + ": " + message : message;
  }
};

template <class T>
using Parsed = tl::expected<T, ParseError>;

inline tl::unexpected<ParseError> parse_fail(std::string message, int line = 0) {
  return tl::unexpected(ParseError{std::move(message), line});
}

}  // namespace perfgap::parsers
