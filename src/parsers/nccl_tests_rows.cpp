#include "parsers/nccl_tests_rows.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "sys/text.hpp"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace perfgap::parsers::nccl_tests_detail {

#if defined(__SSE2__)
namespace {

__extension__ typedef unsigned __int128 Bits;  // bit i: byte i of a line's first kRowShapeReach

Bits bits_of(const std::uint64_t (&w)[2]) { return static_cast<Bits>(w[1]) << 64 | w[0]; }
void store_bits(Bits b, std::uint64_t (&w)[2]) {
  w[0] = static_cast<std::uint64_t>(b);
  w[1] = static_cast<std::uint64_t>(b >> 64);
}
Bits low_bits(std::size_t n) { return (static_cast<Bits>(1) << n) - 1; }  // n < 128
unsigned lowest(Bits x) {
  const auto lo = static_cast<std::uint64_t>(x);
  return lo != 0 ? static_cast<unsigned>(__builtin_ctzll(lo)) : 64 + static_cast<unsigned>(__builtin_ctzll(static_cast<std::uint64_t>(x >> 64)));
}

// A line's bytes by class, up to its '\n' (bits past it are left as the bytes there made them).
struct LineMasks {
  Bits blank = 0, digit = 0, dot = 0;
  std::size_t length = 0;  // bytes before the '\n'
};

// The masks of the line at p, 16 bytes at a time up to its '\n'. False when a byte below 0x20
// other than that '\n' (a tab, a CR, a control byte) or above 0x7f comes first, or no '\n'
// within kRowShapeReach bytes.
bool classify_line(const char* p, LineMasks& m) {
  const __m128i space = _mm_set1_epi8(' '), dot = _mm_set1_epi8('.'), control = _mm_set1_epi8(0x20);
  // '0'..'9' moved to -128..-119: the digits are the bytes then below -118, signed.
  const __m128i to_digit = _mm_set1_epi8(static_cast<char>(0x80 - '0')), digit_top = _mm_set1_epi8(-118);
  std::uint64_t blank[2] = {}, digit[2] = {}, dots[2] = {};
  for (std::size_t k = 0; k < kRowShapeReach; k += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k));
    auto mask = [](__m128i b) { return static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(b))); };
    blank[k / 64] |= mask(_mm_cmpeq_epi8(v, space)) << (k % 64);
    digit[k / 64] |= mask(_mm_cmplt_epi8(_mm_add_epi8(v, to_digit), digit_top)) << (k % 64);
    dots[k / 64] |= mask(_mm_cmpeq_epi8(v, dot)) << (k % 64);
    // Signed: the bytes above 0x7f are below 0x20 too.
    const auto low = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmplt_epi8(v, control)));
    if (low != 0) {
      m.length = k + static_cast<std::size_t>(__builtin_ctz(low));
      m.blank = bits_of(blank);
      m.digit = bits_of(digit);
      m.dot = bits_of(dots);
      return p[m.length] == '\n';
    }
  }
  return false;
}

// A line's bytes against a kept row's: which are blanks, which digits, which the same as the
// kept row's, over kRowShapeReach bytes (the caller masks off what is past the line's end).
// One pass, the row of the layout matched last compared in it: it is mostly the next row's.
struct RowMasks {
  Bits blank = 0, digit = 0, same = 0;
};

RowMasks row_masks_sse2(const char* p, const char* kept) {
  const __m128i space = _mm_set1_epi8(' ');
  const __m128i to_digit = _mm_set1_epi8(static_cast<char>(0x80 - '0')), digit_top = _mm_set1_epi8(-118);
  std::uint64_t blank[2] = {}, digit[2] = {}, same[2] = {};
#pragma GCC unroll 8
  for (std::size_t k = 0; k < kRowShapeReach; k += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k));
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kept + k));
    auto mask = [](__m128i b) { return static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(b))); };
    blank[k / 64] |= mask(_mm_cmpeq_epi8(v, space)) << (k % 64);
    digit[k / 64] |= mask(_mm_cmplt_epi8(_mm_add_epi8(v, to_digit), digit_top)) << (k % 64);
    same[k / 64] |= mask(_mm_cmpeq_epi8(v, w)) << (k % 64);
  }
  return {bits_of(blank), bits_of(digit), bits_of(same)};
}

#if defined(__x86_64__)
// The same 32 bytes at a time, compiled for AVX2 and called only where the CPU has it (the
// release binary is built for any x86-64). A lambda would not inherit the target: no helper.
__attribute__((target("avx2"))) RowMasks row_masks_avx2(const char* p, const char* kept) {
  const __m256i space = _mm256_set1_epi8(' ');
  const __m256i to_digit = _mm256_set1_epi8(static_cast<char>(0x80 - '0')), digit_top = _mm256_set1_epi8(-118);
  std::uint64_t blank[2] = {}, digit[2] = {}, same[2] = {};
  for (std::size_t k = 0; k < kRowShapeReach; k += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + k));
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kept + k));
    const auto b = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, space)));
    const auto d = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpgt_epi8(digit_top, _mm256_add_epi8(v, to_digit))));
    const auto e = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, w)));
    blank[k / 64] |= static_cast<std::uint64_t>(b) << (k % 64);
    digit[k / 64] |= static_cast<std::uint64_t>(d) << (k % 64);
    same[k / 64] |= static_cast<std::uint64_t>(e) << (k % 64);
  }
  return {bits_of(blank), bits_of(digit), bits_of(same)};
}
#endif

RowMasks row_masks(const char* p, const char* kept, bool avx2) {
#if defined(__x86_64__)
  if (avx2) return row_masks_avx2(p, kept);
#endif
  return row_masks_sse2(p, kept);
}

// The bytes of p and `kept` are the same wherever `fixed` has a bit.
bool same_fixed_bytes(const char* p, const char* kept, Bits fixed) {
  for (std::size_t k = 0; fixed != 0; k += 16, fixed >>= 16) {
    const auto want = static_cast<unsigned>(fixed & 0xFFFF);
    if (want == 0) continue;
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kept + k));
    if ((static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b))) & want) != want) return false;
  }
  return true;
}

// The value of a row's first cell, its digits the line's bytes [0, end) less the blanks before
// them, end at most 15. A blank's low nibble is 0, as a digit's is its value: the 16 bytes
// that end at `end` (zeros before the line) read as one 16-digit decimal with leading zeros,
// 8 digits at a time by the multiply-and-shift pairing of digits.
std::uint64_t first_cell_value(const char* p, std::size_t end) {
  std::uint64_t w[2];
  std::memcpy(w, p, sizeof w);
  const Bits digits = bits_of(w) << ((16 - end) * 8);  // the cell's last byte becomes byte 15
  auto eight = [](std::uint64_t v) {  // 8 digits, the first in the lowest byte
    v &= 0x0F0F0F0F0F0F0F0FULL;
    v = (v * 10 + (v >> 8)) & 0x00FF00FF00FF00FFULL;
    v = (v * 100 + (v >> 16)) & 0x0000FFFF0000FFFFULL;
    return (v * 10000 + (v >> 32)) & 0xFFFFFFFFULL;
  };
  return eight(static_cast<std::uint64_t>(digits)) * 100000000ULL + eight(static_cast<std::uint64_t>(digits >> 64));
}

// Whether the line at p, whose masks against `s`'s bytes are `m`, has `s`'s layout.
bool fits(const char* p, const RowShape& s, const RowMasks& m) {
  if (p[s.length] != '\n') return false;  // a '\n' before it is a byte that differs from s's
  const Bits word = ~m.blank & low_bits(s.length), fixed = bits_of(s.fixed);
  // Its cells end where s's end; every byte not fixed by s is a blank or a digit; the fixed
  // bytes (s's words, #wrong cells and dots) are s's.
  return (~word & (word << 1)) == bits_of(s.ends) && (word & ~m.digit & ~fixed) == 0 && (m.same & fixed) == fixed;
}

}  // namespace

// Why a later row with this layout is read as this one was (the exact reader's tests, in the
// order quick_plain_row and fast_row make them): its cells end where these end, so there are
// as many and each is in the same column, and the k-th is read as the k-th here. A cell here
// with a byte other than a digit or a dot (type, redop, a signed root, N/A), and the two
// #wrong cells, are fixed: the later row has the same bytes there, blanks before them
// included, so the same cell. Every other cell is digits with the dots here: size, count and an
// unsigned root stay digits (uint_tok, is_integer), a figure stays a decimal_cell (its last
// byte is a digit here, so it has one; its column holds at most 15 bytes) with no more dots
// than here. No byte of it is a '[' or ends "NCCL" or "_perf". So: the same verdict, plain,
// with the same `checked`, under the same header.
void RowShapes::learn(std::string_view line, std::size_t figures_at, bool checked, const Header& hdr) {
  if (line.size() >= kRowShapeReach) return;
  char buf[kRowShapeReach] = {};
  std::memcpy(buf, line.data(), line.size());
  buf[line.size()] = '\n';
  LineMasks m;
  if (!classify_line(buf, m) || m.length != line.size()) return;  // a tab, a CR, a byte outside ASCII
  const Bits in_line = low_bits(m.length);
  const Bits word = ~m.blank & in_line, ends = ~word & (word << 1);
  Bits starts = word & ~(word << 1), left = ends, fixed = 0;
  const std::size_t in_place_wrong = figures_at + (hdr.per_iter ? 8 : 4) + 3;
  std::size_t region = 0;  // where the cell's column starts: the blank ending the cell before
  for (std::size_t k = 0; starts != 0; ++k, starts &= starts - 1, left &= left - 1) {
    const std::size_t start = lowest(starts), end = lowest(left);
    const Bits cell = low_bits(end) & ~low_bits(start);
    if (k == figures_at + 3 || k == in_place_wrong || (cell & ~(m.digit | m.dot)) != 0) {
      fixed |= low_bits(end) & ~low_bits(region);
    } else {
      // A figure of digits: its last byte a digit, its column at most 15 bytes wide.
      if (!((m.digit >> (end - 1)) & 1) || end - region - (k > 0 ? 1 : 0) > 15) return;
    }
    region = end;
  }
  RowShape& s = shapes_[next_];
  store_bits(ends, s.ends);
  store_bits(fixed | (m.dot & in_line), s.fixed);
  s.length = m.length;
  s.checked = checked;
  s.hdr = hdr;
  std::memcpy(s.bytes.data(), buf, sizeof buf);
  last_ = next_;
  next_ = (next_ + 1) % kShapes;
  if (count_ < kShapes) ++count_;
}

bool RowShapes::match(const char* p, const Header& hdr, ShapedRow& out) {
  if (count_ == 0) return false;
  // The layout of the last row matched first, compared in the same pass; the others after.
  RowMasks m = row_masks(p, shapes_[last_].bytes.data(), avx2_);
  std::size_t at = last_;
  if (!(shapes_[last_].hdr == hdr && fits(p, shapes_[last_], m))) {
    at = kShapes;
    for (std::size_t i = 0; i < count_ && at == kShapes; ++i) {
      const RowShape& s = shapes_[i];
      if (i == last_ || !(s.hdr == hdr)) continue;
      m.same = ~static_cast<Bits>(0);  // the fixed bytes compared apart, below
      if (fits(p, s, m) && same_fixed_bytes(p, s.bytes.data(), bits_of(s.fixed))) at = i;
    }
    if (at == kShapes) return false;
    last_ = at;
  }
  const RowShape& s = shapes_[at];
  out.size = first_cell_value(p, lowest(bits_of(s.ends)));
  out.length = s.length;
  out.checked = s.checked;
  return true;
}

bool RowShapes::cpu_has_avx2() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
#else
  return false;
#endif
}

#else

// Without SSE2 the masks would be built a byte at a time: slower than the exact way.
bool RowShapes::cpu_has_avx2() { return false; }
void RowShapes::learn(std::string_view, std::size_t, bool, const Header&) {}
bool RowShapes::match(const char*, const Header&, ShapedRow&) { return false; }

#endif

bool hashless_comment(const std::vector<std::string_view>& f) {
  if (f.size() < 3) return false;
  auto has = [&](std::string_view w) { return std::find(f.begin(), f.end(), w) != f.end(); };
  auto integer = [](std::string_view t) { return !t.empty() && t.find_first_not_of("0123456789") == std::string_view::npos; };
  if (f[0] == "size") return f[1] == "count" && has("busbw") && has("algbw");
  if (f[0] == "nThread") return integer(f[1]) && has("minBytes") && has("maxBytes");
  if (f[0] == "Rank") return integer(f[1]) && has("on") && has("device") && (has("Pid") || has("Group"));
  if (f[0] == "Avg") return f[1] == "bus" && f[2] == "bandwidth" && has(":");
  return f[0] == "Out" && f.size() >= 4 && f[1] == "of" && f[2] == "bounds" && f[3] == "values";
}

void RunsTracker::found(int line, std::string why) {
  if (line_ != 0) return;
  line_ = line;
  why_ = std::move(why);
}

void RunsTracker::row_slow(std::uint64_t size, std::string_view text, int line, bool root) {
  sys::split_ws_into(text, cells_);
  std::string key;
  for (std::size_t i = 2; i < cells_.size() && i < (root ? 5u : 4u); ++i) (key += key.empty() ? "" : " ") += cells_[i];
  if (!open_ || key != key_) {  // a table's first row, or the next type or op (-d all, -o all)
    open_ = true;
    if (kinds_.size() < 16 && std::find(kinds_.begin(), kinds_.end(), key) == kinds_.end()) kinds_.push_back(key);
    key_ = std::move(key);
    first_ = prev_ = size;
    return;
  }
  if (size <= first_) {  // the sweep again from its start (-N cycles)
    first_ = prev_ = size;
    return;
  }
  found(line, fmt::format("size {} printed again after size {}, not as a new sweep from its first size {}", size, prev_, first_));
  prev_ = size;
}

void RunsTracker::rank(long r, int line) {
  if (r < 0 || r >= 4096) return;
  if (!ranks_open_) {
    std::fill(rank_times_.begin(), rank_times_.end(), 0);
    ranks_open_ = true;
  }
  const auto at = static_cast<std::size_t>(r);
  if (at >= rank_times_.size()) rank_times_.resize(at + 1);
  if (rank_times_[at] < 255) ++rank_times_[at];
  if (rank_times_[at] == 2) found(line, fmt::format("rank {}'s '# Rank' line printed again, by another process", r));
}

void RunsTracker::closing(int line) {
  restart();
  if (++closings_ == 2) found(line, "'# Avg bus bandwidth' printed again, with no header since the last one");
}

std::string RunsTracker::message() const {
  return fmt::format("separate nccl-tests runs interleaved in one output ({}): each process ran the test alone, on its own GPUs, as "
                     "nccl-tests does when built without MPI=1 or started without MPI; rebuild it with make MPI=1 MPI_HOME=... and launch it "
                     "with mpirun (or srun --mpi=pmix), then analyze that run's output",
                     why_);
}

}  // namespace perfgap::parsers::nccl_tests_detail
