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
#include <string>
#include <string_view>
#include <vector>

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


// A line of nccl-tests' own '#' lines whose '#' was lost (markdown takes a leading '#' for a
// heading, and a paste keeps the rest): the sweep header ("nThread 1 nGpus 2 minBytes ...
// maxBytes ..."), a Rank line ("Rank 0 Pid P on HOST device D ..."), the table header ("size
// count type ... busbw"), "Avg bus bandwidth : X", "Out of bounds values : N OK". Told by its
// words, strictly, so no other text is read as one. `f`: its cells.
bool hashless_comment(const std::vector<std::string_view>& f);

// Separate runs printed into one output, each process alone: nccl-tests built without MPI=1 (or
// started by mpirun/srun without MPI support) runs a whole job in every process, and their lines
// interleave (nccl-tests#182, #107). One run never prints so: a sweep's sizes only grow (the same
// sizes again from the start with -N cycles, or for the next type or op of -d/-o all), rank r's
// '# Rank' line comes once, and '# Avg bus bandwidth' once, at the end. Told by:
//  - a size at or below the last one, of the same type and op, that is no restart from the
//    sweep's first size (8, 16, ... 256, 8, 512, 16: the 16 is another run's);
//  - a rank's '# Rank' line twice with no result row or header between them;
//  - '# Avg bus bandwidth' twice with no header between them.
// A header (the sweep's "# nThread ...", the table's "# size count ..."), a closing line or a
// '...' starts the reading of sizes afresh.
class RunsTracker {
 public:
  // A result row of `size` at `line`, its cells split from `text` when it has to be (a size at or
  // below the last); `root`: the table has a root column.
  void row(std::uint64_t size, std::string_view text, int line, bool root) {
    ranks_open_ = false;
    if (open_ && size > prev_) {
      prev_ = size;
      return;
    }
    row_slow(size, text, line, root);
  }
  void rank(long r, int line);
  void header() {
    restart();
    closings_ = 0;
    ranks_open_ = false;
  }
  void restart() { open_ = false; }  // a '...'
  void closing(int line);            // '# Avg bus bandwidth'
  // The first sign seen (line 0: none) and what it was, in words.
  int line() const { return line_; }
  std::string message() const;
  // The rows' kinds (type and op, and root where the table has the column), distinct, in the
  // order seen, capped: more than one where -d all or -o all ran several.
  const std::vector<std::string>& kinds() const { return kinds_; }

 private:
  void row_slow(std::uint64_t size, std::string_view text, int line, bool root);
  void found(int line, std::string why);
  bool open_ = false;
  std::uint64_t prev_ = 0, first_ = 0;
  std::string key_;  // the rows' type and op (and root)
  std::vector<std::string_view> cells_;
  bool ranks_open_ = false;
  std::vector<unsigned char> rank_times_;  // since the last row or sweep header, by rank (below 4096)
  std::vector<std::string> kinds_;
  int closings_ = 0;
  int line_ = 0;
  std::string why_;
};

}  // namespace perfgap::parsers::nccl_tests_detail
