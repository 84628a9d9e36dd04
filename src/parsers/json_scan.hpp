// A JSON scanner over json_pull's blocks in place that calls a RapidJSON SAX handler with
// exactly the events, values and result (error code and byte offset) of RapidJSON's iterative
// Reader with kParseIterativeFlag | kParseFullPrecisionFlag over the same stream, about twice as
// fast (bench/README.md, issue 45): whitespace and string bodies are skipped 16 bytes a step
// (SSE2; 8-byte SWAR and a byte loop elsewhere), and the common tokens are read in the block
// without a call per byte.
//
// It is RapidJSON's state machine (reader.h: Predict, Transit, HandleError), step for step:
// - the structure (braces, brackets, commas, colons, whitespace) is read here, and an
//   unexpected byte gives the error RapidJSON's HandleError gives in that state, at its offset;
// - a string, number or literal that lies whole in the block and is of the plain kinds (a
//   string without a control character, with escapes other than a surrogate pair; an integer
//   of at most 19 digits; a double of at most 19 digits m x 10^p with m < 2^53 and |p| <= 22,
//   the case both RapidJSON's StrtodFast and a correctly rounding parse compute as the one
//   operation m * 10^p or m / 10^-p) is read here;
// - any other value token (one the block cuts, a bigger number, a surrogate pair, anything
//   invalid) is read by RapidJSON's own ParseValue over the same stream from the token's first
//   byte (a Reader with kParseStopWhenDoneFlag), so its value, its error and the blocks it
//   pulls are RapidJSON's by construction.
// Blocks are pulled at the same points as RapidJSON's Take would pull them (after a block's last
// byte is consumed, before the handler hears of a string or literal ending there), so a source
// that fails is seen, or not, exactly as before. EndObject/EndArray carry RapidJSON's counts.
#pragma once

#include <rapidjson/reader.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "parsers/json_pull.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace perfgap::parsers::json_scan {

using json_pull::PullStream;

// ' ', '\n', '\r', '\t': bits 32, 10, 13 and 9 of one mask.
inline bool is_ws(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u <= ' ' && ((0x100002600ULL >> u) & 1);
}

// The first byte of [p, e) that is not JSON whitespace, or e: skip_ws's longer runs.
[[gnu::noinline]] inline const char* skip_ws_run(const char* p, const char* e) {
#if defined(__SSE2__)
  const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'), tab = _mm_set1_epi8('\t');
  for (; e - p >= 16; p += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, sp), _mm_cmpeq_epi8(x, nl)),
                                    _mm_or_si128(_mm_cmpeq_epi8(x, cr), _mm_cmpeq_epi8(x, tab)));
    const unsigned other = ~static_cast<unsigned>(_mm_movemask_epi8(ws)) & 0xffffu;
    if (other) return p + __builtin_ctz(other);
  }
#endif
  while (p < e && is_ws(*p)) ++p;
  return p;
}

// The first byte of [p, e) that is not JSON whitespace, or e. None or one blank (after ": " and
// ", ") is the common case, tested here; a longer run is scanned out of line (the vector
// constants then are not loaded at each place the scanner skips whitespace).
[[gnu::always_inline]] inline const char* skip_ws(const char* p, const char* e) {
  if (p < e && !is_ws(*p)) return p;
  if (e - p >= 2 && !is_ws(p[1])) return p + 1;
  return skip_ws_run(p, e);
}

// A byte that ends a string's plain run: its closing quote, an escape, or a control character
// (RapidJSON's test: static_cast<unsigned>(c) < 0x20, so bytes >= 0x80 are plain).
inline bool string_stop_byte(char c) {
  return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
}

// The first byte of [p, e) that ends a string's plain run, or e.
[[gnu::always_inline]] inline const char* string_stop(const char* p, const char* e) {
#if defined(__SSE2__)
  const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
  for (; e - p >= 16; p += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, bs)),
                                      _mm_cmpeq_epi8(_mm_min_epu8(x, ctl), x));  // x <= 0x1f, unsigned
    const unsigned bits = static_cast<unsigned>(_mm_movemask_epi8(stop));
    if (bits) return p + __builtin_ctz(bits);
  }
#else
  // Eight bytes a step (SWAR): a byte that is '"', '\\' or < 0x20 sets its high bit in `hit`.
  constexpr std::uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  auto zero_byte = [](std::uint64_t v) { return (v - ones) & ~v & high; };
  for (; e - p >= 8; p += 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    const std::uint64_t hit = zero_byte(w ^ (ones * '"')) | zero_byte(w ^ (ones * '\\')) | ((w - ones * 0x20) & ~w & high);
    if (hit) break;  // the byte loop below finds which
  }
#endif
  while (p < e && !string_stop_byte(*p)) ++p;
  return p;
}

// A number in the plain kinds the scanner reads itself (see the top): what RapidJSON's
// ParseNumber would call, or false when RapidJSON must read it.
struct Number {
  enum Kind : std::uint8_t { i32, u32, i64, u64, dbl } kind = u32;
  std::int32_t i = 0;
  std::uint32_t u = 0;
  std::int64_t i64v = 0;
  std::uint64_t u64v = 0;
  double d = 0;
};

inline bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// Eight digit bytes at once (SWAR, little-endian: the first byte is the lowest): how many of
// the eight bytes at q lead as digits (0-8), and with `value` their number.
inline std::uint64_t load8(const char* q) {
  std::uint64_t w;
  std::memcpy(&w, q, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  w = __builtin_bswap64(w);
#endif
  return w;
}
inline int leading_digits(std::uint64_t w) {
  // A byte is a digit when its high nibble is 3 and adding 6 keeps it so. A carry out of a byte
  // (only from one >= 0xfa, never a digit) can only spoil the bytes after the first non-digit.
  constexpr std::uint64_t hi = 0xF0F0F0F0F0F0F0F0ULL, threes = 0x3030303030303030ULL, sixes = 0x0606060606060606ULL;
  const std::uint64_t bad = ((w & hi) ^ threes) | (((w + sixes) & hi) ^ threes);
  return bad ? __builtin_ctzll(bad) >> 3 : 8;
}
// The number of the first n (1-8) digit bytes of w.
inline std::uint64_t digits_value(std::uint64_t w, int n) {
  std::uint64_t v = w - 0x3030303030303030ULL;
  if (n < 8) v <<= (8 - n) * 8;  // the digits to the top bytes; the zero bytes below lead as zeros
  v = v * 10 + (v >> 8);         // bytes 0, 2, 4, 6: two digits each
  return (((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) + (((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
}
inline constexpr std::uint64_t kPow10u[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

// A run of digits at q (at least one), eight a step, added to m; false when the number's digits
// would pass 19 (RapidJSON reads it). At most 24 bytes from q are read.
[[gnu::always_inline]] inline bool digit_run(const char*& q, std::uint64_t& m, int& digits) {
  for (;;) {
    const std::uint64_t w = load8(q);
    const int n = leading_digits(w);
    if (n == 0) return true;
    if (digits + n > 19) return false;
    m = m * kPow10u[n] + digits_value(w, n);
    digits += n, q += n;
    if (n < 8) return true;
  }
}

// The number at p ([-]int[.frac][e[+-]exp]) when it ends before e; `p` is moved past it.
// Where at least 64 bytes of the block are left (`Unchecked`), digits are read eight at a time
// and the block's end is not tested: a number the scanner reads is at most 1 + 19 + 1 + 5 bytes
// long, and a longer one is left to RapidJSON within 24 + 1 + 24 bytes.
template <bool Unchecked = false>
[[gnu::always_inline]] inline bool plain_number(const char*& p, const char* e, Number& n) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char* q = p;
  const bool minus = *q == '-';
  if (minus) ++q;
  if (!Unchecked && q == e) return false;
  std::uint64_t m = 0;
  int digits = 0;
  if (*q == '0') ++q, digits = 1;
  else if (is_digit(*q)) {
    if constexpr (Unchecked) {
      if (!digit_run(q, m, digits)) return false;
    } else {
      for (; q < e && is_digit(*q); ++q, ++digits) {
        if (digits == 19) return false;
        m = m * 10 + static_cast<unsigned>(*q - '0');
      }
    }
  } else {
    return false;
  }
  if (!Unchecked && q == e) return false;
  int frac = 0, exp = 0;
  bool dbl = false;
  if (*q == '.') {
    ++q;
    if ((!Unchecked && q == e) || !is_digit(*q)) return false;
    if constexpr (Unchecked) {
      const int before = digits;
      if (!digit_run(q, m, digits)) return false;
      frac = digits - before;
    } else {
      for (; q < e && is_digit(*q); ++q, ++digits, ++frac) {
        if (digits == 19) return false;
        m = m * 10 + static_cast<unsigned>(*q - '0');
      }
      if (q == e) return false;
    }
    dbl = true;
  }
  if (*q == 'e' || *q == 'E') {
    ++q;
    bool exp_minus = false;
    if ((Unchecked || q < e) && (*q == '+' || *q == '-')) exp_minus = *q++ == '-';
    if ((!Unchecked && q == e) || !is_digit(*q)) return false;
    for (int nx = 0; (Unchecked || q < e) && is_digit(*q); ++q) {
      if (++nx > 4) return false;
      exp = exp * 10 + (*q - '0');
    }
    if (!Unchecked && q == e) return false;
    if (exp_minus) exp = -exp;
    dbl = true;
  }
  if (dbl) {
    const int p10 = exp - frac;
    if (m > 9007199254740991ULL || p10 < -22 || p10 > 22) return false;
    const double d = p10 < 0 ? static_cast<double>(m) / kPow10[-p10] : static_cast<double>(m) * kPow10[p10];
    n.kind = Number::dbl, n.d = minus ? -d : d;
  } else if (minus) {
    if (m <= 2147483648ULL) n.kind = Number::i32, n.i = static_cast<std::int32_t>(~static_cast<std::uint32_t>(m) + 1);
    else if (m <= 9223372036854775808ULL) n.kind = Number::i64, n.i64v = static_cast<std::int64_t>(~m + 1);
    else return false;
  } else {
    if (m <= 4294967295ULL) n.kind = Number::u32, n.u = static_cast<std::uint32_t>(m);
    else n.kind = Number::u64, n.u64v = m;
  }
  p = q;
  return true;
}

// The value of a hex digit, or -1 (RapidJSON's ParseHex4 takes 0-9, A-F, a-f).
inline int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The byte a one-letter escape stands for (RapidJSON's escape table), or 0.
inline char unescape(char c) {
  switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return 0;
  }
}

// RapidJSON's iterative parser over a PullStream, its plain tokens read in the block.
template <class Handler>
class Scanner {
 public:
  Scanner(PullStream& in, Handler& h) : in_(in), h_(h) {}
  rapidjson::ParseResult run();

 private:
  // reader.h's IterativeParsingState, as far as they are states between tokens.
  enum St : std::uint8_t { start, finish, obj_init, member_key, kv_delim, member_value, member_delim, arr_init, element, elem_delim };

  // RapidJSON's HandleError: the error an unexpected byte (or the end) gives in state `st`.
  static rapidjson::ParseErrorCode error_in(St st) {
    switch (st) {
      case start: return rapidjson::kParseErrorDocumentEmpty;
      case finish: return rapidjson::kParseErrorDocumentRootNotSingular;
      case obj_init: case member_delim: return rapidjson::kParseErrorObjectMissName;
      case member_key: return rapidjson::kParseErrorObjectMissColon;
      case member_value: return rapidjson::kParseErrorObjectMissCommaOrCurlyBracket;
      case element: return rapidjson::kParseErrorArrayMissCommaOrSquareBracket;
      default: return rapidjson::kParseErrorValueInvalid;  // kv_delim, arr_init, elem_delim
    }
  }
  // The handler's events for a plain string (or key) and number.
  [[gnu::always_inline]] bool emit_string(bool key, const char* s, std::size_t n) {
    const auto len = static_cast<rapidjson::SizeType>(n);
    return key ? h_.Key(s, len, true) : h_.String(s, len, true);
  }
  [[gnu::always_inline]] bool emit_number(const Number& n) {
    switch (n.kind) {
      case Number::i32: return h_.Int(n.i);
      case Number::u32: return h_.Uint(n.u);
      case Number::i64: return h_.Int64(n.i64v);
      case Number::u64: return h_.Uint64(n.u64v);
      default: return h_.Double(n.d);
    }
  }
  [[gnu::always_inline]] bool plain_string(const char*& p, const char* e, const char*& s, std::size_t& n);
  [[gnu::noinline]] const char* escaped_string(const char* p, const char* e, const char* stop);
  // A value (or key) at p, which is in the block: read here, or by RapidJSON. False when the
  // parse ends there (res_ says how); p and e are the position after it.
  [[gnu::always_inline]] bool value(const char*& p, const char*& e, bool key);
  [[gnu::noinline]] bool by_rapidjson(const char*& p, const char*& e, bool key);

  // Forwards RapidJSON's scalar events to the handler (a string as a key when `key`).
  struct Forward : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Forward> {
    Handler* h = nullptr;
    bool key = false;
    bool Null() { return h->Null(); }
    bool Bool(bool b) { return h->Bool(b); }
    bool Int(int i) { return h->Int(i); }
    bool Uint(unsigned u) { return h->Uint(u); }
    bool Int64(std::int64_t i) { return h->Int64(i); }
    bool Uint64(std::uint64_t u) { return h->Uint64(u); }
    bool Double(double d) { return h->Double(d); }
    bool String(const char* s, rapidjson::SizeType n, bool copy) { return key ? h->Key(s, n, copy) : h->String(s, n, copy); }
  };

  PullStream& in_;
  Handler& h_;
  std::vector<char> stack_;  // '{' or '[' per open container
  std::vector<rapidjson::SizeType> counts_;  // RapidJSON's member/element count per container (commas seen)
  std::string buf_;  // a string's bytes with its escapes decoded
  rapidjson::ParseResult res_;
  rapidjson::Reader token_reader_;
};

// A string at p (its opening quote) read in the block: its bytes at s (in the block, or in
// buf_ when it had escapes). False when RapidJSON must read it: the block ends first, a control
// character, a surrogate pair or a malformed escape.
template <class Handler>
inline bool Scanner<Handler>::plain_string(const char*& p, const char* e, const char*& s, std::size_t& n) {
  const char* q = p + 1;
  const char* stop = string_stop(q, e);
  if (stop == e) return false;
  if (*stop == '"') {
    s = q, n = static_cast<std::size_t>(stop - q), p = stop + 1;
    return true;
  }
  const char* t = escaped_string(p, e, stop);
  if (t == nullptr) return false;
  s = buf_.data(), n = buf_.size(), p = t;
  return true;
}

// The rest of plain_string: a string with an escape at `stop`, decoded into buf_; the byte after
// its closing quote, or nullptr when RapidJSON must read it. (Its results returned, not written
// through references: the caller's pointers then stay in registers.)
template <class Handler>
const char* Scanner<Handler>::escaped_string(const char* p, const char* e, const char* stop) {
  buf_.assign(p + 1, stop);
  for (;;) {
    if (*stop != '\\' || e - stop < 2) return nullptr;
    if (const char c = unescape(stop[1])) {
      buf_ += c;
      stop += 2;
    } else if (stop[1] == 'u') {
      if (e - stop < 6) return nullptr;
      unsigned cp = 0;
      for (int k = 2; k < 6; ++k) {
        const int v = hex_digit(stop[k]);
        if (v < 0) return nullptr;
        cp = cp << 4 | static_cast<unsigned>(v);
      }
      if (cp >= 0xD800 && cp <= 0xDBFF) return nullptr;  // a surrogate pair: RapidJSON's
      struct Out {
        std::string& b;
        void Put(char c) { b += c; }
      } out{buf_};
      rapidjson::UTF8<>::Encode(out, cp);
      stop += 6;
    } else {
      return nullptr;
    }
    const char* t = string_stop(stop, e);
    if (t == e) return nullptr;
    buf_.append(stop, t);
    stop = t;
    if (*t == '"') return t + 1;
  }
}

template <class Handler>
bool Scanner<Handler>::by_rapidjson(const char*& p, const char*& e, bool key) {
  in_.seek(p);  // p is before e: nothing is pulled
  Forward f;
  f.h = &h_, f.key = key;
  res_ = token_reader_.Parse<rapidjson::kParseStopWhenDoneFlag | rapidjson::kParseFullPrecisionFlag>(in_, f);
  p = in_.pos(), e = in_.limit();
  return !res_.IsError();
}

template <class Handler>
inline bool Scanner<Handler>::value(const char*& p, const char*& e, bool key) {
  const char* q = p;
  if (*q == '"') {
    const char* s = nullptr;
    std::size_t n = 0;
    if (!plain_string(q, e, s, n)) return by_rapidjson(p, e, key);
    if (q == e) {  // the string ends the block: the next is pulled first, as RapidJSON's Take does
      if (s != buf_.data()) buf_.assign(s, n), s = buf_.data();  // its bytes copied: the block goes
      in_.seek(q);
      p = in_.pos(), e = in_.limit();
    } else {
      p = q;  // the stream's own position is set only where the scan leaves the block or stops
    }
    if (!emit_string(key, s, n)) return in_.seek(p), res_.Set(rapidjson::kParseErrorTermination, in_.offset_of(p)), false;
    return true;
  }
  if (key) return by_rapidjson(p, e, key);
  Number num;
  if ((*q == '-' || is_digit(*q)) && (e - q >= 64 ? plain_number<true>(q, e, num) : plain_number<false>(q, e, num))) {
    const char* const start = p;
    p = q;  // before e: a number's end is seen in the block
    if (!emit_number(num)) return res_.Set(rapidjson::kParseErrorTermination, in_.offset_of(start)), in_.seek(q), false;
    return true;
  }
  static constexpr std::string_view kLit[] = {"null", "true", "false"};
  const int lit = *q == 'n' ? 0 : *q == 't' ? 1 : *q == 'f' ? 2 : -1;
  if (lit < 0 || static_cast<std::size_t>(e - q) < kLit[lit].size() || std::memcmp(q, kLit[lit].data(), kLit[lit].size()) != 0)
    return by_rapidjson(p, e, key);
  q += kLit[lit].size();
  if (q == e) {
    in_.seek(q);
    p = in_.pos(), e = in_.limit();
  } else {
    p = q;
  }
  if (!(lit == 0 ? h_.Null() : h_.Bool(lit == 1))) return in_.seek(p), res_.Set(rapidjson::kParseErrorTermination, in_.offset_of(p)), false;
  return true;
}

// The state loop of RapidJSON's iterative parser with each state a place in the code (a label)
// rather than a value switched on per token: a key is always followed by the code that expects
// its colon, a member's value by the code that expects a comma or the end of the object, so
// each of those branches is predicted on its own.
template <class Handler>
rapidjson::ParseResult Scanner<Handler>::run() {
  St st = start;
  const char* p = in_.pos();
  const char* e = in_.limit();
  char c;
  // The next byte that is not whitespace, into c, pulling blocks as needed (at the end of the
  // input the block is one '\0').
#define PERFGAP_SCAN_NEXT()                       \
  for (;;) {                                      \
    p = skip_ws(p, e);                            \
    if (p != e) break;                            \
    in_.seek(p);                                  \
    p = in_.pos(), e = in_.limit();               \
  }                                               \
  c = *p
  // The error of state `s` at the current byte (RapidJSON's HandleError).
#define PERFGAP_SCAN_FAIL(s) return in_.seek(p), res_.Set(error_in(s), in_.offset_of(p)), res_
  rapidjson::SizeType extra = 0;  // 1 when the container ends after a value, 0 when empty

value:  // st is start, kv_delim, arr_init or elem_delim: a value comes
  PERFGAP_SCAN_NEXT();
value_at_c:
  if (c == '"' || c == '-' || is_digit(c)) {
    if (!value(p, e, false)) return res_;
    goto after_value;
  }
  if (c == '{' || c == '[') {
    // RapidJSON calls the handler before it takes the bracket: a stop leaves the stream there.
    if (!(c == '{' ? h_.StartObject() : h_.StartArray())) return in_.seek(p), res_.Set(rapidjson::kParseErrorTermination, in_.offset_of(p)), res_;
    stack_.push_back(c);
    counts_.push_back(0);
    ++p;
    if (c == '{') goto object_first;
    goto array_first;
  }
  if (c == '\0' || c == ',' || c == ':' || c == ']' || c == '}') PERFGAP_SCAN_FAIL(st);
  if (!value(p, e, false)) return res_;

after_value:
  if (st == start) goto finish;
  PERFGAP_SCAN_NEXT();
  if (st == kv_delim) {  // a member's value: a comma or the object's end
    if (c == ',') {
      ++p, ++counts_.back(), st = member_delim;
      goto member;
    }
    if (c == '}') {
      extra = 1;
      goto end_container;
    }
    PERFGAP_SCAN_FAIL(member_value);
  }
  if (c == ',') {  // an element: a comma or the array's end
    ++p, ++counts_.back(), st = elem_delim;
    goto value;
  }
  if (c == ']') {
    extra = 1;
    goto end_container;
  }
  PERFGAP_SCAN_FAIL(element);

object_first:  // after '{'
  PERFGAP_SCAN_NEXT();
  if (c == '}') {
    extra = 0;
    goto end_container;
  }
  st = obj_init;
  goto member_at_c;
member:  // after a member's comma (st member_delim)
  PERFGAP_SCAN_NEXT();
member_at_c:
  if (c != '"') PERFGAP_SCAN_FAIL(st);
  if (!value(p, e, true)) return res_;
  if (*p != ':') {  // the colon right after the key is the common case
    PERFGAP_SCAN_NEXT();
    if (c != ':') PERFGAP_SCAN_FAIL(member_key);
  }
  ++p, st = kv_delim;
  goto value;

array_first:  // after '['
  PERFGAP_SCAN_NEXT();
  if (c == ']') {
    extra = 0;
    goto end_container;
  }
  st = arr_init;
  goto value_at_c;

end_container:  // c closes the container at p
  {
    // The handler hears of it before the bracket is taken: a stop leaves the stream there.
    const rapidjson::SizeType n = counts_.back() + extra;
    const bool ok = stack_.back() == '{' ? h_.EndObject(n) : h_.EndArray(n);
    if (!ok) return in_.seek(p), res_.Set(rapidjson::kParseErrorTermination, in_.offset_of(p)), res_;
    stack_.pop_back(), counts_.pop_back();
    ++p;
    if (stack_.empty()) goto finish;
    st = stack_.back() == '{' ? kv_delim : elem_delim;  // as after a value in the container
    goto after_value;
  }

finish:  // the root value read: only whitespace may follow
  PERFGAP_SCAN_NEXT();
  if (c != '\0') PERFGAP_SCAN_FAIL(finish);
  in_.seek(p);
  return res_;
#undef PERFGAP_SCAN_NEXT
#undef PERFGAP_SCAN_FAIL
}

// The scan of the whole stream into `h`: RapidJSON's Reader::Parse<kParseIterativeFlag |
// kParseFullPrecisionFlag>(in, h), its events and result, faster.
template <class Handler>
rapidjson::ParseResult scan(PullStream& in, Handler& h) {
  Scanner<Handler> s(in, h);
  return s.run();
}

}  // namespace perfgap::parsers::json_scan
