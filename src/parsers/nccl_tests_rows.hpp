// The shortest way through nccl-tests' plain result rows (parsers/nccl_tests.cpp). Most lines
// of a long output are result rows that a later row of their size supersedes, so what decides
// the parser's speed is telling that a line is such a row, and its size, in few instructions.
//
// nccl-tests prints its columns right-aligned at fixed widths, so the rows of one table share
// a layout: where each cell ends, where the dots of the figures are, and the bytes of the
// cells that are not figures (type, redop, root, #wrong). RowShapes keeps the layouts of the
// last plain rows the parser read the exact way; a later row with the same layout, whose
// other bytes are all digits, is a plain row of the same kind. A line is checked against them
// 16 bytes at a time (SSE2 on x86-64), 32 where the CPU has AVX2; elsewhere nothing is learnt
// and every row goes the exact way.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace perfgap::parsers::nccl_tests_detail {

// The result table's header in force: which cells its rows have.
struct Header {
  bool seen = false, root = true, per_iter = false;
  bool error_column = false;  // old layout: `error` (a max error) instead of `#wrong` (a count)
  bool in_place = false;      // the table has in-place columns (a second `time`): a row without them is cut short
  bool operator==(const Header&) const = default;
};

// The bytes RowShapes::match reads from the start of a line, whatever the line's length.
inline constexpr std::size_t kRowShapeReach = 128;

struct ShapedRow {
  std::uint64_t size = 0;
  std::size_t length = 0;  // the line's bytes before its '\n'
  bool checked = false;    // the out-of-place #wrong (or error) cell is not N/A
};

// One kept layout.
struct RowShape {
  // Bit i for byte i: where a cell ends (the blank or '\n' after it), and the bytes that must be
  // the learnt row's own (the non-figure cells with the blanks before them, the dots).
  std::uint64_t ends[2] = {}, fixed[2] = {};
  std::size_t length = 0;
  bool checked = false;
  Header hdr;  // the header it was read under (a table of the same layout repeats it)
  std::array<char, kRowShapeReach> bytes{};
};

class RowShapes {
 public:
  // `avx2`: compare 32 bytes at a time instead of 16 (the answers are the same; the unit test
  // holds the two equal); by default where the CPU has AVX2.
  RowShapes() : avx2_(cpu_has_avx2()) {}
  explicit RowShapes(bool avx2) : avx2_(avx2 && cpu_has_avx2()) {}
  // Keeps the layout of `line` (without its '\n'), a row that the exact reader found plain
  // under the header in force, its first figure cell the `figures_at`-th (as split_ws_into
  // counts cells). Not kept when it has a tab, a CR or a byte outside ASCII, is
  // kRowShapeReach bytes long or more, or a figure cell could grow past 15 digits in its column.
  void learn(std::string_view line, std::size_t figures_at, bool checked, const Header& hdr);
  // True when the line at `p` (kRowShapeReach bytes readable there, past its end too) ends in
  // '\n' and has a layout kept under the same header: then it is a plain row, of `out.size`, as
  // the exact reader would say (tests/unit/test_parsers_nccl_tests_fast.cpp and the
  // nccl_tests fuzzer hold them equal).
  bool match(const char* p, const Header& hdr, ShapedRow& out);
  static bool cpu_has_avx2();

 private:
  static constexpr std::size_t kShapes = 8;
  bool avx2_ = false;
  std::array<RowShape, kShapes> shapes_{};
  std::size_t count_ = 0, next_ = 0, last_ = 0;  // kept; where the next is kept; the last matched
};

}  // namespace perfgap::parsers::nccl_tests_detail
