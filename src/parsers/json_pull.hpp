// The byte stream the Kineto reader parses: a ByteSource pulled a block at a time, its UTF-8
// checked per block (Utf8Scan), newlines counted per block for an error's line. RapidJSON's
// Reader takes it as its input stream; json_scan.hpp's scanner walks its blocks in place.
#pragma once

#include <rapidjson/reader.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "parsers/byte_source.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace perfgap::parsers::json_pull {

// UTF-8 checked a block at a time, eight ASCII bytes per step, instead of in RapidJSON's loop
// over each character of each string (kParseValidateEncodingFlag cost a sixth of the parse).
// It finds the first invalid sequence as RapidJSON's own UTF8::Validate steps through them
// (the same function judges each non-ASCII sequence), so its offset is the one RapidJSON
// would give when the parse reaches it inside a string; read_kineto decides afterwards whether
// the validating parse would have stopped there (docs: the comment at the parse).
class Utf8Scan {
 public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  // Scans the block [p, end) that starts at byte `base`; `newlines` are those before it.
  void feed(const char* p, const char* end, std::size_t base, std::size_t newlines) {
    if (bad_ != kNone) return;
    const char* const begin = p;
    if (carry_n_) {  // a sequence begun in an earlier block
      while (carry_n_ < need_ && p < end) carry_[carry_n_++] = *p++;
      if (carry_n_ < need_) return;
      judge(carry_, carry_at_, carry_newlines_);
      carry_n_ = 0;
      if (bad_ != kNone) return;
    }
    while (p < end) {
      p = first_non_ascii(p, end);
      if (p == end) return;
      const std::size_t len = length(*p);
      const std::size_t at = base + static_cast<std::size_t>(p - begin);
      if (static_cast<std::size_t>(end - p) < len) {  // completed by the next block(s)
        carry_n_ = static_cast<std::size_t>(end - p);
        std::memcpy(carry_, p, carry_n_);
        need_ = len, carry_at_ = at;
        carry_newlines_ = newlines + count_newlines(begin, p);
        return;
      }
      if (!judge(p, at, 0)) {
        bad_newlines_ = newlines + count_newlines(begin, p);
        return;
      }
      p += len;
    }
  }
  // The end of the input: a sequence it cuts reads '\0' for its missing bytes, as RapidJSON's stream.
  void finish() {
    if (!carry_n_ || bad_ != kNone) return;
    while (carry_n_ < need_) carry_[carry_n_++] = '\0';
    judge(carry_, carry_at_, carry_newlines_);
    carry_n_ = 0;
  }
  bool pending_before(std::size_t offset) const { return carry_n_ && bad_ == kNone && carry_at_ < offset; }
  std::size_t bad() const { return bad_; }           // the first invalid sequence's first byte, or kNone
  std::size_t bad_length() const { return bad_len_; }  // the bytes RapidJSON's Validate takes there
  std::size_t bad_newlines() const { return bad_newlines_; }

  // The first byte of [p, end) with its high bit set, or end: 64 bytes a step (SSE2), else 8.
  static const char* first_non_ascii(const char* p, const char* end) {
#if defined(__SSE2__)
    for (; end - p >= 64; p += 64) {
      const auto* v = reinterpret_cast<const __m128i*>(p);
      const __m128i any = _mm_or_si128(_mm_or_si128(_mm_loadu_si128(v), _mm_loadu_si128(v + 1)), _mm_or_si128(_mm_loadu_si128(v + 2), _mm_loadu_si128(v + 3)));
      if (_mm_movemask_epi8(any)) break;
    }
#endif
    for (std::uint64_t w = 0; end - p >= 8; p += 8) {
      std::memcpy(&w, p, 8);
      if (w & 0x8080808080808080ULL) break;
    }
    while (p < end && !(static_cast<unsigned char>(*p) & 0x80)) ++p;
    return p;
  }

  static std::size_t count_newlines(const char* p, const char* end) {
    std::size_t n = 0;
#if defined(__SSE2__)
    // 64 bytes a step: each '\n' adds 1 to its lane of a byte counter (cmpeq gives -1; four
    // vectors summed first), summed into n before a lane could pass 255 (63 steps add <= 252).
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (end - p >= 16) {
      __m128i acc = zero;
      for (int k = 0; k < 63 && end - p >= 64; ++k, p += 64) {
        const auto* v = reinterpret_cast<const __m128i*>(p);
        const __m128i a = _mm_add_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v), nl), _mm_cmpeq_epi8(_mm_loadu_si128(v + 1), nl));
        const __m128i b = _mm_add_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v + 2), nl), _mm_cmpeq_epi8(_mm_loadu_si128(v + 3), nl));
        acc = _mm_sub_epi8(acc, _mm_add_epi8(a, b));
      }
      if (end - p < 64)  // the last 16-byte steps (at most 3, and acc <= 252 before them: 255 at most)
        for (int k = 0; k < 3 && end - p >= 16; ++k, p += 16)
          acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), nl));
      const __m128i sums = _mm_sad_epu8(acc, zero);  // two 64-bit lanes
      n += static_cast<std::size_t>(_mm_cvtsi128_si32(sums)) + static_cast<std::size_t>(_mm_cvtsi128_si32(_mm_srli_si128(sums, 8)));
    }
#endif
    while (p < end && (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p))))) ++n, ++p;
    return n;
  }

 private:
  // The bytes UTF8::Validate takes for a sequence led by `c` (1 for a byte that leads none).
  static std::size_t length(char c) {
    switch (rapidjson::UTF8<>::GetRange(static_cast<unsigned char>(c))) {
      case 2: return 2;
      case 3: case 4: case 10: return 3;
      case 5: case 6: case 11: return 4;
      default: return 1;
    }
  }
  struct In {  // the sequence's bytes, all present
    using Ch = char;
    const char* p;
    Ch Take() { return *p++; }
  };
  struct Out {
    void Put(char) {}
  };
  // False (and the first bad sequence noted) when the `length` bytes at `p` are not valid UTF-8.
  bool judge(const char* p, std::size_t at, std::size_t newlines) {
    In in{p};
    Out out;
    if (rapidjson::UTF8<>::Validate(in, out)) return true;
    bad_ = at, bad_len_ = length(*p), bad_newlines_ = newlines;
    return false;
  }

  std::size_t bad_ = kNone, bad_len_ = 0, bad_newlines_ = 0;
  char carry_[4] = {};
  std::size_t carry_n_ = 0, need_ = 0, carry_at_ = 0, carry_newlines_ = 0;
};

// RapidJSON's input stream over a ByteSource: Peek/Take read the current block, the next one
// is pulled when it is used up. At the end (or when the source fails) Peek gives '\0', which
// RapidJSON takes as the end of the input. Newlines are counted per block as it is left, so an
// error's line is known without keeping what was read. Each block's UTF-8 is checked as it is
// pulled (Utf8Scan).
class PullStream {
 public:
  using Ch = char;
  explicit PullStream(const ByteSource& next) : next_(next) { pull(); }
  PullStream(const PullStream&) = delete;
  PullStream& operator=(const PullStream&) = delete;
  Ch Peek() const { return *cur_; }
  // Inlined into RapidJSON's loops: one compare per byte; the refill is out of line.
  RAPIDJSON_FORCEINLINE Ch Take() {
    Ch c = *cur_;
    if (RAPIDJSON_LIKELY(cur_ + 1 < end_)) ++cur_;
    else pull();
    return c;
  }
  std::size_t Tell() const { return base_ + static_cast<std::size_t>(cur_ - begin_); }
  // Output members of the stream concept: only in-situ parsing uses them (never here).
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch*) { return 0; }

  bool at_end() const { return end_of_input_; }
  // RapidJSON's whitespace skip for this stream (SkipWhitespace below): the block scanned in
  // place, not a Peek and a Take per byte. The current byte is always in the block (Take pulls
  // the next after the last), and the end's '\0' is no whitespace.
  void skip_whitespace() {
    auto ws = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
    for (;;) {
      while (cur_ + 1 < end_ && ws(*cur_)) ++cur_;
      if (cur_ + 1 < end_ || !ws(*cur_)) return;
      pull();
    }
  }
  // The block in place, for json_scan's scanner: the current byte, the block's end (the current
  // byte is always before it), and a move to `p` in the block, pulling the next block when `p` is
  // its end (as Take does after a block's last byte). At the end of the input the block is one '\0'.
  const char* pos() const { return cur_; }
  const char* limit() const { return end_; }
  void seek(const char* p) {
    cur_ = p;
    if (p == end_) pull();
  }
  std::size_t offset_of(const char* p) const { return base_ + static_cast<std::size_t>(p - begin_); }

  const std::string& error() const { return error_; }
  std::size_t failed_at() const { return failed_at_; }
  const Utf8Scan& utf8() const { return utf8_; }
  // Reads on until a sequence begun before `offset` is judged (as RapidJSON's Validate, taking
  // its bytes, would have pulled the blocks they are in).
  void settle_utf8(std::size_t offset) {
    while (utf8_.pending_before(offset) && !end_of_input_) pull();
  }
  // The 1-based line of byte `offset`. An offset before the current block is that of a string or
  // number RapidJSON started there (an escape, a number too big): no newline lies in such a
  // token, so the newlines before it are those before this block.
  int line_of(std::size_t offset) const {
    std::size_t nl = newlines_;
    if (offset > base_ && begin_ != &nul_) nl += Utf8Scan::count_newlines(begin_, begin_ + std::min<std::size_t>(offset - base_, static_cast<std::size_t>(end_ - begin_)));
    return 1 + static_cast<int>(std::min<std::size_t>(nl, 2'000'000'000));
  }

 private:
  [[gnu::noinline]] void pull() {
    if (end_of_input_) return;
    if (begin_ != &nul_) {
      base_ += static_cast<std::size_t>(end_ - begin_);
      newlines_ += Utf8Scan::count_newlines(begin_, end_);
    }
    for (;;) {
      auto b = next_();
      if (!b) {
        error_ = b.error();
        break;
      }
      if (b->empty()) break;
      begin_ = cur_ = b->data();
      end_ = begin_ + b->size();
      utf8_.feed(begin_, end_, base_, newlines_);
      return;
    }
    if (!error_.empty()) failed_at_ = base_;
    utf8_.finish();
    end_of_input_ = true;
    begin_ = cur_ = &nul_;
    end_ = &nul_ + 1;
  }

  Utf8Scan utf8_;
  std::size_t failed_at_ = 0;  // the bytes read before the source failed
  const ByteSource& next_;
  const char nul_ = '\0';
  const char* begin_ = &nul_;
  const char* cur_ = &nul_;
  const char* end_ = &nul_ + 1;
  std::size_t base_ = 0, newlines_ = 0;
  bool end_of_input_ = false;
  std::string error_;
};

// Found by argument-dependent lookup from RapidJSON's reader, before its generic template.
inline void SkipWhitespace(PullStream& in) { in.skip_whitespace(); }

}  // namespace perfgap::parsers::json_pull
