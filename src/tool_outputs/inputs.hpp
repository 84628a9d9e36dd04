// The inputs of `perfgap analyze` and `gap`: files (or - for standard input) read into the
// parsers' models, block by block where the format allows, with the limits of sys/named_file.
// The only place the analyze path touches files; analyzers/ stays pure.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <tl/expected.hpp>

#include "parsers/perf.hpp"
#include "parsers/perf_data.hpp"
#include "parsers/profile.hpp"
#include "sys/named_file.hpp"

namespace perfgap::tool_outputs {

// A text input (a file, or - for standard input) parsed as it is read, block by block, so
// memory is one block plus the parser's model, whatever the input's size. A file named *.gz is
// inflated as it is read (max_bytes bounds both the file and its text). Unusable (unreadable,
// too large, empty, binary, corrupt gzip): why.
tl::expected<void, std::string> stream_text_input(const std::string& path, std::size_t max_bytes,
                                                  const std::function<void(std::string_view)>& feed);

// A text input through a LineParser: the model, or why the input is unusable (the parser's error
// included).
template <class Parser>
auto parse_input(const std::string& path, std::size_t max_bytes = sys::kMaxInputBytes)
    -> tl::expected<typename decltype(std::declval<Parser&>().finish())::value_type, std::string> {
  Parser parser;
  auto read = stream_text_input(path, max_bytes, [&](std::string_view block) { parser.feed(block); });
  if (!read) return tl::unexpected(read.error());
  auto model = parser.finish();
  if (!model) return tl::unexpected(model.error().describe());
  return std::move(*model);
}

// One profile of `kind` ("nsys": an SQLite export, or a .nsys-rep exported through `nsys export`
// when nsys is on PATH; "kineto": a Kineto trace, plain or gzip, streamed), or why it is unusable.
tl::expected<parsers::Profile, std::string> read_profile(std::string_view kind, const std::string& file);

// Kernel symbols for perf.data: --kallsyms, else the live /proc/kallsyms when it is of the same
// kernel release as the recording and readable with addresses; else none and why. One per run
// (the live file is read once, on first need).
struct KernelNames {
  std::string given_path;                  // --kallsyms FILE, when given
  std::optional<parsers::Kallsyms> given;
  std::optional<parsers::Kallsyms> live;
  bool live_read = false;
  std::string live_why;
  std::string running_release;
};
// --kallsyms FILE read and parsed, or why not.
tl::expected<void, std::string> load_given_kallsyms(KernelNames& kn, const std::string& path);

// A perf input: perf.data (file or pipe mode) or perf's text (perf report/script), told apart by
// the first block; the profile or why it is unusable.
tl::expected<parsers::PerfProfile, std::string> read_perf_input(const std::string& file, KernelNames& kn);

// --reference and --measured mean the same on every command: a number ("830", "830ms") is
// milliseconds per iteration, anything else a file.
bool looks_like_milliseconds(const std::string& arg);
// The milliseconds when `arg` is a number, nullopt when it is not (a file); an error naming `opt`
// when the number is not positive.
tl::expected<std::optional<double>, std::string> milliseconds_argument(const char* opt, const std::string& arg);

}  // namespace perfgap::tool_outputs
