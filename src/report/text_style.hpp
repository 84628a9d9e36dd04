// What every text view (check, fleet, sweep) shares: status colours, the order that puts
// what needs action first, status words, and the display width of UTF-8 text.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/model.hpp"

namespace perfgap::report {

const char* status_color(Status s);  // ANSI SGR sequence
// fail 0, error 1, warn 2, pass 3, skip 4: sort keys for "what needs action first".
int action_rank(Status s);
std::string status_word(Status s);   // FAIL, ERROR, WARN, PASS, SKIP
// `text` in the status colour when `color`, else unchanged.
std::string paint(Status s, std::string_view text, bool color);
// Code points, not bytes (continuation bytes do not count).
std::size_t display_width(std::string_view s);

// The code point of the UTF-8 sequence at s[i], advancing i past it; -1 (and one byte) for
// a byte that does not start a valid sequence (overlong, surrogate, beyond U+10FFFF, cut).
long next_code_point(std::string_view s, std::size_t& i);
// Appends the UTF-8 encoding of `cp`.
void append_utf8(std::string& out, long cp);
// Text from outside perfgap (process and node names, environment values, titles quoting
// them) as a terminal may show it: invalid UTF-8 bytes become U+FFFD, and control characters
// (C0 but tab, DEL, C1: ESC, BEL, CSI, even newline) become visible escapes such as \x1b or
// \u009b, so nothing of the data can move the cursor, clear the screen or set a title.
std::string printable(std::string_view s);

// A measured number as people read it, for every text and HTML view (the JSON report keeps
// every digit): integral values whole, others to four significant digits but never fewer
// decimals than one, never rounding the integer part away (3.09658 -> 3.097, 35.900000000000006
// -> 35.9, 161.986913 -> 162, 1234.56 -> 1234.6, 0.0123456 -> 0.01235); beyond 1e15 or below
// 1e-4 in exponent form.
std::string number_text(double v);

// A bandwidth keyed by message size, as nccl-tests and sweep name it (NAME_gbps.BYTES, then
// optionally .more): NAME, BYTES and the rest (".before"; may be empty). None for other keys.
struct SizedMetric {
  std::string_view name;
  double bytes = 0;
  std::string_view rest;
};
std::optional<SizedMetric> sized_metric(std::string_view key);
// A metric key as a label people read: a bandwidth keyed by message size ("busbw_gbps.1073741824")
// becomes "busbw 1 GiB"; other keys are unchanged.
std::string metric_label(std::string_view key);
// Bytes as a binary size: 8 B, 512 KiB, 1 GiB, 1.5 MiB.
std::string size_text(double bytes);

struct TableStyle {
  std::string_view indent;
  std::size_t max_rows = 0;           // data rows shown (0: all); the rest are counted
  bool short_row_note_spans = false;  // a short row's last cell spans the missing columns
};
// An aligned table: the first column to the left, the others (numbers) to the right, a rule
// under the header row (the first row). Cells are shown printable().
void render_table(std::string& out, const std::vector<std::vector<std::string>>& table, const TableStyle& style);

}  // namespace perfgap::report
