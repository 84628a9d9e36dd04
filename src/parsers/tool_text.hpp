// Helpers shared by the tool-output parsers (perf, turbostat, numastat, nccl-tests,
// NCCL logs, step logs): line cleanup for launcher prefixes, mail quotes and CR endings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace perfgap::parsers::tooltext {

// Without a trailing '\r'.
std::string_view chomp(std::string_view line);
// Without leading mail-quote marks ("> > >>>>> text" -> "text"); only when the line starts
// with '>' (after blanks).
std::string_view unquote_mail(std::string_view line);
// Launcher prefixes: Open MPI --tag-output "[1,0]<stdout>:", srun --label " 0: ", and every
// "[N]" rank tag anywhere in the line (some launchers repeat it inside a row). Returns a copy.
std::string strip_launcher_prefixes(std::string_view line);
// The same without a copy when the line has no "[N]" tag: returns a view into the line, or
// into `scratch` (overwritten) when tags had to be replaced.
std::string_view strip_launcher_prefixes(std::string_view line, std::string& scratch);
// A decimal number, strict (the whole token). number_into is the same without the optional:
// number() is inline over it, so the optional stays in registers at the call (returned from
// a call it goes through memory with a partial store, a forwarding stall in every table row).
bool number_into(std::string_view tok, double& out);
inline std::optional<double> number(std::string_view tok) {
  double d = 0;
  if (number_into(tok, d)) return d;
  return std::nullopt;
}
bool is_integer(std::string_view tok);
// Likely text: no NUL bytes and few control bytes in the first 64 KiB.
bool looks_binary(std::string_view text);

}  // namespace perfgap::parsers::tooltext
