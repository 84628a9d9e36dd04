// Text parsers that can be fed a piece at a time: LineParser<Model> has
//   void feed(std::string_view lines);   // whole lines (the last piece may end without '\n')
//   Parsed<Model> finish();
// over a ParserState<Model> that the parser's .cpp defines (with the same two members) and
// instantiates (`template class LineParser<Model>;`, declared `extern` in its header). Its
// parse_X(text) is feed(text) + finish(), so the unit tests and fuzzers that give it strings
// test the streaming path too. The CLI feeds blocks as sys::stream_named_file reads them: a
// large input is parsed with the memory of one block plus the model.
#pragma once

#include <cstring>
#include <memory>
#include <string_view>

#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

// f(line) for every line of `text`, without its '\n' (a last line without one included).
template <class F>
void for_each_line(std::string_view text, F&& f) {
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    const char* e = nl ? static_cast<const char*>(nl) : end;
    f(std::string_view(p, static_cast<std::size_t>(e - p)));
    p = nl ? e + 1 : end;
  }
}

template <class Model>
struct ParserState;  // defined by each parser

// A state that reads one line at a time: derive from FeedsLines<State> and define line().
template <class State>
struct FeedsLines {
  void feed(std::string_view lines) {
    for_each_line(lines, [this](std::string_view raw) { static_cast<State*>(this)->line(raw); });
  }
};

template <class Model>
class LineParser {
 public:
  LineParser();
  ~LineParser();
  LineParser(LineParser&&) noexcept;
  LineParser& operator=(LineParser&&) noexcept;
  void feed(std::string_view lines);
  Parsed<Model> finish();

 private:
  std::unique_ptr<ParserState<Model>> s_;
};

// Instantiated in each parser's .cpp, where ParserState<Model> is complete.
template <class Model>
LineParser<Model>::LineParser() : s_(std::make_unique<ParserState<Model>>()) {}
template <class Model>
LineParser<Model>::~LineParser() = default;
template <class Model>
LineParser<Model>::LineParser(LineParser&&) noexcept = default;
template <class Model>
LineParser<Model>& LineParser<Model>::operator=(LineParser&&) noexcept = default;
template <class Model>
void LineParser<Model>::feed(std::string_view lines) {
  s_->feed(lines);
}
template <class Model>
Parsed<Model> LineParser<Model>::finish() {
  return s_->finish();
}

// parse_X(text) for a streaming parser P.
template <class P>
auto parse_whole(std::string_view text) {
  P p;
  p.feed(text);
  return p.finish();
}

}  // namespace perfgap::parsers
