// PyTorch profiler / Kineto Chrome traces: traceEvents[] with ph "X" events of cat kernel,
// gpu_memcpy, gpu_memset (GPU side), cuda_runtime / cuda_driver (the host calls, joined by
// args.correlation) and user_annotation (ProfilerStep#N and record_function ranges).
// RapidJSON (header-only): the static release binary links no JSON library (docs/BUILDING.md).
//
// Streamed: json_scan's scanner (RapidJSON's SAX Reader's events and results, faster) walks the
// bytes a block at a time (json_pull::PullStream) and the handler keeps only what one event
// needs (its fields, which come in any order), building the model at the event's end. Memory
// is the model plus a block, whatever the trace's size. What is taken from each value follows
// what a DOM walk over the same document would see: the first root member of a name counts,
// inside an event the last field of a name.
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "parsers/json_pull.hpp"
#include "parsers/json_scan.hpp"
#include "parsers/profile.hpp"

namespace perfgap::parsers {

// File-local, but named: the release build compiles the parsers in unity batches, where
// another file's anonymous Handler or Ctx would collide.
namespace kineto_sax {

using json_pull::PullStream;
using json_pull::Utf8Scan;

// One JSON value as far as the reader uses it: RapidJSON's number events (an unsigned above
// int64's range is `big`, as the DOM's IsInt64 false), a string, or anything else.
struct Val {
  enum Kind : std::uint8_t { absent, other, i64, big, dbl, str } kind = absent;
  std::int64_t i = 0;
  double d = 0;
};

// A time in µs (integer or fractional) as integer ns; false when absent or out of range.
// Times are bounded to +-4e15 µs (year 2096 as µs since the epoch, which Kineto uses): in ns a
// start plus a duration, or the difference of two times, stays within int64.
constexpr std::int64_t kMaxMicros = 4'000'000'000'000'000;
[[gnu::always_inline]] inline bool micros_to_ns(const Val& e, std::int64_t& ns) {
  if (e.kind == Val::i64) {
    if (e.i > kMaxMicros || e.i < -kMaxMicros) return false;
    ns = e.i * 1000;
    return true;
  }
  if (e.kind != Val::dbl) return false;
  double d = e.d;
  if (!std::isfinite(d) || std::fabs(d) > static_cast<double>(kMaxMicros)) return false;
  // floor(d) * 1000 + llround((d - floor(d)) * 1000), without the library calls: |d| <= 4e15 <
  // 2^53, so the whole part is exact as an integer and as a double, d minus it is exact, and
  // x = that * 1000 is >= 0, where llround(x) is trunc(x) + (x - trunc(x) >= 0.5), x - trunc(x) exact.
  auto whole = static_cast<std::int64_t>(d);  // toward zero
  if (static_cast<double>(whole) > d) --whole;  // floor
  const double x = (d - static_cast<double>(whole)) * 1000.0;
  auto r = static_cast<std::int64_t>(x);
  if (x - static_cast<double>(r) >= 0.5) ++r;
  ns = whole * 1000 + r;
  return true;
}

bool integer(const Val& e, std::int64_t& v) {
  if (e.kind == Val::i64) {
    v = e.i;
    return true;
  }
  if (e.kind != Val::dbl) return false;
  if (std::isfinite(e.d) && std::fabs(e.d) < 9e18) {
    v = static_cast<std::int64_t>(e.d);
    return true;
  }
  return false;
}

std::uint64_t dtype_bytes(std::string_view t) {
  static const std::pair<const char*, std::uint64_t> k[] = {
      {"Float", 4},  {"float", 4},  {"Float32", 4}, {"Half", 2},  {"half", 2},  {"Float16", 2}, {"BFloat16", 2},
      {"Double", 8}, {"double", 8}, {"Int", 4},     {"Int32", 4}, {"Long", 8},  {"Int64", 8},   {"Short", 2},
      {"Byte", 1},   {"Char", 1},   {"Int8", 1},    {"UInt8", 1}, {"Bool", 1},  {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1},
  };
  for (const auto& [n, b] : k)
    if (t == n) return b;
  return 0;
}

// A copy's direction and host memory from Kineto's name for it, CUPTI's words: "Memcpy HtoD
// (Pageable -> Device)", "Memcpy DtoH (Device -> Pinned)", "Memcpy DtoD (Device -> Device)",
// "Memcpy PtoP (Device -> Device)"; what the name does not say stays unknown.
void copy_of_name(std::string_view n, CopyKind& kind, HostMem& mem) {
  if (n.starts_with("Memcpy ")) n.remove_prefix(7);
  const std::string_view dir = n.substr(0, n.find(' '));
  kind = dir == "HtoD"                     ? CopyKind::h2d
         : dir == "DtoH"                   ? CopyKind::d2h
         : dir == "DtoD"                   ? CopyKind::d2d
         : dir == "PtoP"                   ? CopyKind::p2p
         : dir.empty() || dir == "Unknown" ? CopyKind::unknown
                                           : CopyKind::other;
  const auto open = n.find('('), arrow = n.find("->"), close = n.find(')');
  if (kind == CopyKind::d2d || kind == CopyKind::p2p) {
    mem = HostMem::none;
    return;
  }
  if (open == std::string_view::npos || arrow == std::string_view::npos || close == std::string_view::npos ||
      !(open < arrow && arrow < close))
    return;
  auto word = [](std::string_view w) {
    while (!w.empty() && w.front() == ' ') w.remove_prefix(1);
    while (!w.empty() && w.back() == ' ') w.remove_suffix(1);
    return w == "Pageable"                 ? HostMem::pageable
           : w == "Pinned"                 ? HostMem::pinned
           : w == "Managed"                ? HostMem::managed
           : w == "Device" || w == "Array" ? HostMem::none
                                           : HostMem::unknown;
  };
  const HostMem src = word(n.substr(open + 1, arrow - open - 1)), dst = word(n.substr(arrow + 2, close - arrow - 2));
  if (kind == CopyKind::h2d) mem = src;
  else if (kind == CopyKind::d2h) mem = dst;
  else mem = src != HostMem::none ? src : dst;
}

// Nesting deeper than this is refused (RapidJSON's iterative parser would keep ~8 bytes per
// level: 1.25 GB for a 152 KB .gz of '['). Real traces nest 4-6 levels.
constexpr std::size_t kMaxDepth = 1000;
// Distinct GPU devices of one trace (args.device, else pid): one process drives a few GPUs; a
// trace claiming more is refused rather than kept as that many GPU entries.
constexpr std::size_t kMaxDevices = 1024;

// Where the handler is: the containers it reads into. Anything else is skipped by depth.
enum class Ctx : std::uint8_t { root, events, event, args, dist, props, prop };

// The member a value belongs to (set by Key, used by the value that follows).
enum class Slot : std::uint8_t {
  none,
  events,
  dist,
  props,  // root
  ph,
  cat,
  name,
  ts,
  dur,
  pid,
  tid,
  args,  // an event
  corr,
  device,
  stream,
  cname,
  in_nelems,
  out_nelems,
  group,
  dtype,
  bytes,
  p2p_peer,  // its args ("Src Rank" / "Dst Rank": a point-to-point kernel's peer)
  rank,
  world,
  backend,  // distributedInfo
  base_time,  // baseTimeNanoseconds (newer traces: ts is relative to it)
  prop_id,
  prop_name,  // a deviceProperties entry
};

// k is the literal, compared as two loads of a power-of-two width that overlap where its length
// is not one (whole loads: a word assembled from narrower pieces, or a memcpy of 3 bytes, goes
// through the stack and stalls its load), inlined into the scanner's loop with the handler.
template <class W>
[[gnu::always_inline]] inline W load_as(const char* p) {
  W w;
  std::memcpy(&w, p, sizeof w);
  return w;
}
template <class W, std::size_t N>
[[gnu::always_inline]] inline bool same_ends(const char* d, const char (&lit)[N]) {
  constexpr std::size_t n = N - 1, w = sizeof(W);
  return load_as<W>(d) == load_as<W>(lit) && load_as<W>(d + n - w) == load_as<W>(lit + n - w);
}
template <std::size_t N>
[[gnu::always_inline]] inline bool key_is(std::string_view k, const char (&lit)[N]) {
  constexpr std::size_t n = N - 1;
  if (k.size() != n) return false;
  const char* d = k.data();
  if constexpr (n == 0) return true;
  else if constexpr (n == 1) return d[0] == lit[0];
  else if constexpr (n < 4) return same_ends<std::uint16_t>(d, lit);
  else if constexpr (n < 8) return same_ends<std::uint32_t>(d, lit);
  else if constexpr (n <= 16) return same_ends<std::uint64_t>(d, lit);
  else return std::memcmp(d, lit, n) == 0;
}

struct Handler;
std::string no_gpu_activity(const Handler& h);

struct Handler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
  // What the trace holds, for the checks after the parse.
  bool events_seen = false, events_array = false;
  std::size_t n_events = 0, bad_times = 0;
  // Categories of other devices' or modes' traces, said when there is no GPU activity: MTIA's
  // (mtia_ccp_events, mtia_runtime) and CUPTI's profiler ranges (profiler_metrics: no timeline).
  bool mtia_seen = false, profiler_range_seen = false;
  // distributedInfo / deviceProperties: the first member of each name counts (as a DOM lookup).
  bool dist_seen = false, props_seen = false;
  bool rank_seen = false, world_seen = false, backend_seen = false, base_seen = false;
  std::int64_t rank = -1;
  std::optional<std::int64_t> base_time_ns;
  std::optional<std::int64_t> world_size;
  std::optional<std::string> backend;
  std::map<std::int64_t, std::string> dev_name;
  bool pid_seen = false, pname_seen = false;
  Val prop_id;
  bool prop_name_ok = false;
  std::string prop_name;

  Profile p;
  std::vector<std::int64_t> corr_of;  // per activity
  struct Call {
    std::int64_t corr, start, end;
    std::uint32_t thread;  // tid's low 32 bits
    bool graph;            // cudaGraphLaunch / cuGraphLaunch
  };
  std::vector<Call> api;  // host calls with a correlation, in file order
  std::vector<ProfileRange> comm_ops;  // cpu_op events named nccl:* (the op that launched a send/recv kernel)
  std::vector<std::int64_t> gpu_device;  // per Profile::gpus entry (labelled at the end, when rank and names are known)

  // The current event's fields.
  // The event's cat, sorted once as its value is read (not compared to each category at its end).
  enum class Cat : std::uint8_t { empty, kernel, memcpy, memset, host_call, user_annotation, op, other };
  static Cat cat_of(std::string_view c) {
    if (c.empty()) return Cat::empty;
    if (key_is(c, "kernel") || key_is(c, "Kernel")) return Cat::kernel;  // the common two first, without a call
    if (key_is(c, "cuda_runtime")) return Cat::host_call;
    if (c == "gpu_memcpy" || c == "Memcpy") return Cat::memcpy;
    if (c == "gpu_memset" || c == "Memset") return Cat::memset;
    if (c == "cuda_runtime" || c == "cuda_driver" || c == "Runtime" || c == "Driver") return Cat::host_call;
    if (c == "user_annotation") return Cat::user_annotation;
    if (c == "Operator" || c == "cpu_op") return Cat::op;
    return Cat::other;
  }
  bool ph_x = false;  // ph is "X"
  Cat cat = Cat::empty;
  std::string name, cname, dtype_s, pid_text;
  Val ts, dur, pid, tid;
  bool has_args = false, has_cname = false;
  std::int64_t corr = 0, dev = -1, stream_id = 0, in_n = 0, out_n = 0, group_n = 0, copy_bytes = 0, peer_n = -1;

  std::vector<Ctx> ctx;
  std::size_t skip = 0;  // depth inside a container that is not read
  Slot slot = Slot::none;
  // Why the handler stopped the parse (RapidJSON then reports a termination): the error to give.
  std::string stop;
  bool bare_array = false;  // the root is the events array itself (Chrome's JSON Array Format)

  // Names are looked up without building a string (heterogeneous lookup); the last one is cached.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
  };
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> name_index;
  std::uint32_t last_index = 0;
  std::unordered_map<std::int64_t, std::uint32_t> gpu_index;
  std::int64_t last_device = 0;
  std::uint32_t last_gpu = 0;
  bool last_gpu_set = false;
  // The last host call's name and what it says (a trace's calls are mostly one name).
  std::string last_call;
  bool last_call_graph = false, last_call_sync = false, last_call_set = false;
  std::vector<std::int8_t> coll_by_name;  // per name index: its Coll, or -1 not yet known

  // Per name index, the name interned right after it the last time (0: none yet): a guess, tried
  // before the hash lookup (a trace's kernels come in the same order every iteration). A guess
  // is an index intern returned, so its name equal to s means the lookup would return it too.
  std::vector<std::uint32_t> next_name;

  std::uint32_t intern(std::string_view s) {
    if (last_index && s == p.names[last_index]) return last_index;
    if (next_name.size() < p.names.size()) next_name.resize(p.names.size(), 0);
    std::uint32_t i = next_name[last_index];
    if (i == 0 || s != p.names[i]) {
      auto it = name_index.find(s);
      if (it != name_index.end()) i = it->second;
      else {
        i = static_cast<std::uint32_t>(p.names.size());
        name_index.emplace(std::string(s), i);
        p.names.emplace_back(s);
      }
      next_name[last_index] = i;
    }
    last_index = i;
    return i;
  }
  bool gpu_of(std::int64_t device, std::uint32_t& index) {
    if (last_gpu_set && device == last_device) {
      index = last_gpu;
      return true;
    }
    auto it = gpu_index.find(device);
    if (it != gpu_index.end()) {
      index = last_gpu = it->second;
      last_device = device, last_gpu_set = true;
      return true;
    }
    if (gpu_index.size() >= kMaxDevices) {
      stop = "more than " + std::to_string(kMaxDevices) + " distinct GPU devices (args.device): not the trace of one process";
      return false;
    }
    index = static_cast<std::uint32_t>(p.gpus.size());
    gpu_index.emplace(device, index);
    last_device = device, last_gpu = index, last_gpu_set = true;
    {
      GpuInfo g;
      g.device = device;
      p.gpus.push_back(std::move(g));
    }
    return true;
  }

  void begin_event() {
    ph_x = false, cat = Cat::empty;
    name.clear(), cname.clear(), dtype_s.clear(), pid_text.clear();
    ts = dur = pid = tid = Val{};
    has_args = has_cname = false;
    corr = 0, dev = -1, stream_id = 0, in_n = 0, out_n = 0, group_n = 0, copy_bytes = 0, peer_n = -1;
  }
  void reset_args() {
    cname.clear(), dtype_s.clear();
    has_cname = false;
    corr = 0, dev = -1, stream_id = 0, in_n = 0, out_n = 0, group_n = 0, copy_bytes = 0, peer_n = -1;
  }

  // False when the trace is refused (`stop` says why).
  bool end_event() {
    if (!ph_x) return true;
    // PyTorch's autograd profiler (2020) wrote kernels without a category, on the pseudo-process
    // "CUDA functions" with the device as tid.
    bool legacy_kernel = cat == Cat::empty && pid.kind == Val::str && pid_text == "CUDA functions";
    bool gpu = cat == Cat::kernel || cat == Cat::memcpy || cat == Cat::memset || legacy_kernel;
    bool host_call = cat == Cat::host_call;
    // Kineto of 2021 recorded ProfilerStep#N as an operator (cat Operator or cpu_op), later as a user_annotation.
    bool annotation = cat == Cat::user_annotation || (cat == Cat::op && name.starts_with("ProfilerStep#"));
    const bool comm_op = cat == Cat::op && name.starts_with("nccl:");
    if (!gpu && !host_call && !annotation && !comm_op) return true;
    std::int64_t t0, d;
    if (!micros_to_ns(ts, t0) || !micros_to_ns(dur, d) || d < 0) {
      ++bad_times;
      return true;
    }
    // Only the correlation of args is read for host calls and annotations.
    std::int64_t c = has_args ? corr : 0;
    if (host_call) {
      if (!last_call_set || name != last_call) {
        last_call.assign(name);
        last_call_graph = name.starts_with("cudaGraphLaunch") || name.starts_with("cuGraphLaunch");
        last_call_sync = is_sync_call(name);
        last_call_set = true;
      }
      std::int64_t thread = 0;
      if (!integer(tid, thread)) thread = 0;
      const auto th = static_cast<std::uint32_t>(static_cast<std::uint64_t>(thread));
      if (c) api.push_back({c, t0, t0 + d, th, last_call_graph});
      // The long ones are kept by name: where a host stall's time went (cudaMalloc, a first launch).
      if (d >= kSlowHostCallNs) p.slow_calls.push_back({.start = t0, .end = t0 + d, .name = p.call_name_index(name), .thread = th, .file = 0});
      ++p.api_calls;
      if (last_call_sync) ++p.sync_calls, p.sync_ns += d;
      return true;
    }
    if (annotation || comm_op) {
      ProfileRange r;
      r.start = t0;
      r.end = t0 + d;
      r.name = intern(name);
      (annotation ? p.ranges : comm_ops).push_back(r);
      return true;
    }
    std::int64_t device = has_args ? dev : -1;
    GpuActivity a;
    a.start = t0;
    a.end = t0 + d;
    if (device < 0) integer(legacy_kernel ? tid : pid, device);
    if (!gpu_of(device < 0 ? 0 : device, a.gpu)) return false;
    a.stream = has_args ? static_cast<std::uint32_t>(stream_id) : 0;
    a.kind = cat == Cat::kernel || legacy_kernel ? ActKind::kernel : cat == Cat::memcpy ? ActKind::memcpy : ActKind::memset;
    if (a.kind == ActKind::kernel) {
      a.name = intern(name);
      if (a.name >= coll_by_name.size()) coll_by_name.resize(a.name + 1, -1);
      if (coll_by_name[a.name] < 0) coll_by_name[a.name] = static_cast<std::int8_t>(nccl_collective(name));
      a.coll = static_cast<Coll>(coll_by_name[a.name]);
      if (has_args && has_cname) {
        if (a.coll == Coll::none || a.coll == Coll::other) a.coll = collective_from_arg(cname);
        // PyTorch's all_to_all runs as grouped ncclSend/ncclRecv (and some NCCL builds run other
        // collectives so): a SendRecv kernel the arg names a collective is one (not a pipeline's transfer).
        else if (const Coll named = collective_from_arg(cname);
                 a.coll == Coll::SendRecv && named != Coll::SendRecv && named != Coll::other && named != Coll::none)
          a.coll = named;
        std::uint64_t size = dtype_bytes(dtype_s);
        if (size && (in_n > 0 || out_n > 0)) a.msg_bytes = static_cast<std::uint64_t>(std::max(in_n, out_n)) * size;
        if (group_n > 0 && group_n < (1 << 30)) a.group_size = static_cast<std::uint32_t>(group_n);
        if (a.coll == Coll::SendRecv) {
          a.p2p = cname == "send" ? P2pDir::send : cname == "recv" ? P2pDir::recv : P2pDir::unknown;
          if (peer_n >= 0 && peer_n < (1 << 30)) a.peer = static_cast<std::int32_t>(peer_n);
        }
      }
    }
    if (a.kind == ActKind::memcpy) {
      copy_of_name(name, a.copy, a.host_mem);
      if (has_args && copy_bytes > 0) a.msg_bytes = static_cast<std::uint64_t>(copy_bytes);
    }
    p.acts.push_back(a);
    corr_of.push_back(c);
    return true;
  }

  // A value for the current slot: a scalar (`s` set for a string), or a container (kind other)
  // that is then skipped unless `entered` says it is read.
  [[gnu::always_inline]] void value(const Val& v, std::string_view s = {}) {
    Slot at = slot;
    slot = Slot::none;
    switch (at) {
      case Slot::ph: if (v.kind == Val::str) ph_x = s.size() == 1 && s[0] == 'X'; break;
      case Slot::cat:
        if (v.kind == Val::str && (cat = cat_of(s)) == Cat::other) {
          mtia_seen = mtia_seen || s.starts_with("mtia_");
          profiler_range_seen = profiler_range_seen || s == "cuda_profiler_range";
        }
        break;
      case Slot::name: if (v.kind == Val::str) name.assign(s); break;
      case Slot::ts: ts = v; break;
      case Slot::dur: dur = v; break;
      case Slot::pid:
        pid = v;
        if (v.kind == Val::str) pid_text.assign(s.substr(0, 32));
        break;
      case Slot::tid: tid = v; break;
      case Slot::args:  // not an object: the event has no args (a later args field replaces an earlier one)
        reset_args();
        has_args = false;
        break;
      case Slot::corr: integer(v, corr); break;
      case Slot::device: integer(v, dev); break;
      case Slot::stream: integer(v, stream_id); break;
      case Slot::in_nelems: integer(v, in_n); break;
      case Slot::out_nelems: integer(v, out_n); break;
      case Slot::group: integer(v, group_n); break;
      case Slot::p2p_peer:  // a number, or the number as a string
        if (!integer(v, peer_n) && v.kind == Val::str && !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
          peer_n = std::stoll(std::string(s));
        break;
      case Slot::bytes: integer(v, copy_bytes); break;
      case Slot::cname:
        has_cname = v.kind == Val::str;
        if (has_cname) cname.assign(s);
        break;
      case Slot::dtype: if (v.kind == Val::str) dtype_s.assign(s); break;
      case Slot::rank: integer(v, rank); break;
      case Slot::world: {
        std::int64_t w;
        if (integer(v, w)) world_size = w;
        break;
      }
      case Slot::backend: if (v.kind == Val::str) backend = std::string(s); break;
      case Slot::base_time: {
        std::int64_t b;
        if (integer(v, b)) base_time_ns = b;
        break;
      }
      case Slot::prop_id: prop_id = v; break;
      case Slot::prop_name:
        prop_name_ok = v.kind == Val::str;
        if (prop_name_ok) prop_name.assign(s);
        break;
      default: break;
    }
  }
  // An element of an array the handler is in (events counted; non-objects skipped).
  [[gnu::always_inline]] void element() {
    if (!ctx.empty() && ctx.back() == Ctx::events) ++n_events;
  }

  [[gnu::always_inline]] bool scalar(const Val& v, std::string_view s = {}) {
    if (skip) return true;
    element();
    value(v, s);
    return true;
  }
  [[gnu::always_inline]] bool Null() { return scalar(Val{Val::other}); }
  [[gnu::always_inline]] bool Bool(bool) { return scalar(Val{Val::other}); }
  [[gnu::always_inline]] bool Int(int i) { return scalar(Val{Val::i64, i}); }
  [[gnu::always_inline]] bool Uint(unsigned u) { return scalar(Val{Val::i64, static_cast<std::int64_t>(u)}); }
  [[gnu::always_inline]] bool Int64(std::int64_t i) { return scalar(Val{Val::i64, i}); }
  [[gnu::always_inline]] bool Uint64(std::uint64_t u) {
    return u <= static_cast<std::uint64_t>(INT64_MAX) ? scalar(Val{Val::i64, static_cast<std::int64_t>(u)}) : scalar(Val{Val::big});
  }
  [[gnu::always_inline]] bool Double(double d) { return scalar(Val{Val::dbl, 0, d}); }
  [[gnu::always_inline]] bool String(const char* str, rapidjson::SizeType len, bool) { return scalar(Val{Val::str}, std::string_view(str, len)); }

  bool start(bool object) {
    if (ctx.size() + skip >= kMaxDepth) {
      stop = "nested deeper than " + std::to_string(kMaxDepth) + " levels: not a Chrome/Kineto trace";
      return false;
    }
    if (skip) {
      ++skip;
      return true;
    }
    if (ctx.empty()) {  // the root: an object, or the events array itself (checked before the parse)
      if (!object) {
        bare_array = events_seen = events_array = true;
        ctx.push_back(Ctx::events);
        return true;
      }
      ctx.push_back(Ctx::root);
      return true;
    }
    Ctx in = ctx.back();
    if (in == Ctx::events || in == Ctx::props) {
      element();
      if (object) {
        ctx.push_back(in == Ctx::events ? Ctx::event : Ctx::prop);
        if (in == Ctx::events) {
          begin_event();
        } else {
          pid_seen = pname_seen = prop_name_ok = false;
          prop_id = Val{};
        }
      } else {
        skip = 1;
      }
      return true;
    }
    Slot at = slot;
    Ctx into = Ctx::root;
    bool enter = false;
    if (at == Slot::events) events_array = !object, enter = !object, into = Ctx::events;
    else if (at == Slot::dist) enter = object, into = Ctx::dist;
    else if (at == Slot::props) enter = !object, into = Ctx::props;
    else if (at == Slot::args) {
      reset_args();
      has_args = object;
      enter = object, into = Ctx::args;
    }
    if (enter) {
      slot = Slot::none;
      ctx.push_back(into);
    } else {
      value(Val{Val::other});  // a container where a scalar was wanted: as a DOM walk's type test fails
      skip = 1;
    }
    return true;
  }
  bool StartObject() { return start(true); }
  bool StartArray() { return start(false); }
  bool end() {
    if (skip) {
      --skip;
      return true;
    }
    Ctx was = ctx.back();
    ctx.pop_back();
    if (was == Ctx::event) return end_event();
    if (was == Ctx::prop) {
      std::int64_t id;
      // Names of at most kMaxDevices devices (the cap on devices the trace may use).
      if (integer(prop_id, id) && prop_name_ok && (dev_name.size() < kMaxDevices || dev_name.count(id))) dev_name[id] = prop_name;
    }
    return true;
  }
  bool EndObject(rapidjson::SizeType) { return end(); }
  bool EndArray(rapidjson::SizeType) { return end(); }

  [[gnu::always_inline]] bool Key(const char* str, rapidjson::SizeType len, bool) {
    if (skip) return true;
    std::string_view k(str, len);
    Slot s = Slot::none;
    switch (ctx.back()) {
      case Ctx::event:  // by length, then the bytes
        switch (len) {
          case 2:
            if (key_is(k, "ph")) s = Slot::ph;
            else if (key_is(k, "ts")) s = Slot::ts;
            break;
          case 3:
            if (key_is(k, "cat")) s = Slot::cat;
            else if (key_is(k, "dur")) s = Slot::dur;
            else if (key_is(k, "pid")) s = Slot::pid;
            else if (key_is(k, "tid")) s = Slot::tid;
            break;
          case 4:
            if (key_is(k, "name")) s = Slot::name;
            else if (key_is(k, "args")) s = Slot::args;
            break;
          default: break;
        }
        break;
      case Ctx::args:
        if (len < 5 || len > 15) break;  // none of these
        if (key_is(k, "correlation")) s = Slot::corr;
        else if (key_is(k, "device")) s = Slot::device;
        else if (key_is(k, "stream")) s = Slot::stream;
        else if (key_is(k, "Collective name")) s = Slot::cname;
        else if (key_is(k, "In msg nelems")) s = Slot::in_nelems;
        else if (key_is(k, "Out msg nelems")) s = Slot::out_nelems;
        else if (key_is(k, "Group size")) s = Slot::group;
        else if (key_is(k, "dtype")) s = Slot::dtype;
        else if (key_is(k, "bytes")) s = Slot::bytes;
        else if (key_is(k, "Src Rank") || key_is(k, "Dst Rank")) s = Slot::p2p_peer;
        break;
      case Ctx::root:
        if (key_is(k, "traceEvents") && !std::exchange(events_seen, true)) s = Slot::events;
        else if (key_is(k, "distributedInfo") && !std::exchange(dist_seen, true)) s = Slot::dist;
        else if (key_is(k, "deviceProperties") && !std::exchange(props_seen, true)) s = Slot::props;
        else if (key_is(k, "baseTimeNanoseconds") && !std::exchange(base_seen, true)) s = Slot::base_time;
        break;
      case Ctx::dist:
        if (key_is(k, "rank") && !std::exchange(rank_seen, true)) s = Slot::rank;
        else if (key_is(k, "world_size") && !std::exchange(world_seen, true)) s = Slot::world;
        else if (key_is(k, "backend") && !std::exchange(backend_seen, true)) s = Slot::backend;
        break;
      case Ctx::prop:
        if (key_is(k, "id") && !std::exchange(pid_seen, true)) s = Slot::prop_id;
        else if (key_is(k, "name") && !std::exchange(pname_seen, true)) s = Slot::prop_name;
        break;
      default: break;
    }
    slot = s;
    return true;
  }
};


ParseError json_error(const rapidjson::ParseResult& r, const PullStream& in) {
  const auto code = r.Code();
  const std::size_t at = r.Offset();
  const int line = in.line_of(at);
  std::string where = " at byte " + std::to_string(at);
  if (code == rapidjson::kParseErrorDocumentEmpty) return ParseError{"empty", 0};
  if (code == rapidjson::kParseErrorStringInvalidEncoding) return ParseError{"not valid UTF-8" + where, line};
  if (in.at_end() && at >= in.Tell() && code != rapidjson::kParseErrorDocumentRootNotSingular)
    return ParseError{"truncated JSON (it ends inside an object, array or string)" + where, line};
  return ParseError{std::string("not valid JSON (") + rapidjson::GetParseError_En(code) + ")" + where, line};
}

// Why a trace with events holds no GPU activity, as far as it says: another device's trace (MTIA),
// CUPTI's counter replay (no timeline), a CPU-only profile, or GPU activity not captured.
std::string no_gpu_activity(const Handler& h) {
  if (h.n_events == 0) return "a trace with no events (traceEvents is empty)";
  const std::string n = std::to_string(h.n_events) + " trace events but no GPU activity (no cat kernel/gpu_memcpy/gpu_memset events)";
  const std::string backend = h.backend ? ", backend " + *h.backend : std::string();
  if (h.mtia_seen || (h.backend && h.backend->starts_with("mtia")))
    return n + ": an MTIA device's trace (mtia_* events" + backend + "); " + std::string(kNotAGpuTraceWords);
  if (h.profiler_range_seen)
    return n + ": CUPTI profiler ranges instead (cuda_profiler_range: torch.profiler's experimental_config with profiler_metrics), whose "
               "kernels were replayed for hardware counters, so the trace has no timeline; capture again without profiler_metrics";
  if (h.api.empty() && h.dev_name.empty())
    return n + ", no CUDA runtime call and no GPU in deviceProperties" + backend +
           ": a CPU-only profile (a job on CPUs, or activities=[ProfilerActivity.CPU]); a GPU job's needs activities=[ProfilerActivity.CPU, "
           "ProfilerActivity.CUDA]";
  return n + ": profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]";
}

// What the host calls' correlation ids say of how complete the trace is (GpuInfo::corr_gap_median):
// `api` sorted by correlation; `launching` of them joined to a GPU activity. On every GPU of the
// trace (one process). Sorts its slow calls by start.
void note_call_coverage(Profile& p, const std::vector<Handler::Call>& api, std::uint64_t launching) {
  std::sort(p.slow_calls.begin(), p.slow_calls.end(), [](const SlowHostCall& a, const SlowHostCall& b) { return a.start < b.start; });
  if (api.size() < 2) return;
  // Gaps under 64 counted (a complete trace's), longer ones kept: no array of a value per call.
  std::array<std::uint64_t, 64> small{};
  std::vector<std::int64_t> large;
  std::uint64_t n = 0;
  for (std::size_t i = 1; i < api.size(); ++i) {
    const std::int64_t gap = api[i].corr - api[i - 1].corr;
    if (gap <= 0) continue;
    ++n;
    if (gap < 64) ++small[static_cast<std::size_t>(gap)];
    else large.push_back(gap);
  }
  if (n == 0) return;
  std::int64_t median = 0;
  std::uint64_t below = 0, half = n / 2;  // the value at sorted position n / 2
  for (std::size_t v = 0; v < small.size() && median == 0; ++v)
    if ((below += small[v]) > half) median = static_cast<std::int64_t>(v);
  if (median == 0) {
    const auto mid = large.begin() + static_cast<std::ptrdiff_t>(half - below);
    std::nth_element(large.begin(), mid, large.end());
    median = *mid;
  }
  for (auto& g : p.gpus) {
    g.host_calls = api.size();
    g.launching_calls = launching;
    g.corr_span = api.back().corr - api.front().corr + 1;
    g.corr_gap_median = median;
  }
}

}  // namespace kineto_sax

Parsed<Profile> read_kineto(const ByteSource& next) {
  using kineto_sax::Handler;
  json_pull::PullStream in(next);
  auto source_failed = [&]() -> tl::unexpected<ParseError> { return parse_fail(in.error()); };
  while (in.Peek() == ' ' || in.Peek() == '\n' || in.Peek() == '\r' || in.Peek() == '\t') in.Take();
  if (!in.error().empty()) return source_failed();
  if (in.Peek() == '\0' && in.at_end()) return parse_fail("empty");
  if (in.Peek() != '{' && in.Peek() != '[')
    return parse_fail(std::string(kKinetoNotJsonContainer), 1);

  // No kParseValidateEncodingFlag: the stream checks the UTF-8 (Utf8Scan) and the result is
  // the validating parse's. That parse stops at the first invalid sequence when it reaches it
  // inside a string; outside one, any non-ASCII byte stops both parses where it is. So an
  // invalid sequence the parse went past (it ended beyond it, or without error) was in a string,
  // where the validating parse would have said "not valid UTF-8" at its first byte, unless the
  // source failed while Validate took the sequence's bytes (it pulls a block after a block's last
  // byte).
  Handler h;
  h.p.format = "Kineto trace";
  h.p.framework = {Framework::pytorch, "a PyTorch profiler (Kineto) trace"};
  // A job's ranks are read one after another on each thread, and are alike: the last trace's
  // counts reserve this one's arrays, which then are not grown by doubling (a copy of each and
  // the old and new array held together). Capacity never written takes no memory.
  thread_local std::size_t last_acts = 0, last_calls = 0;
  h.p.acts.reserve(last_acts);
  h.corr_of.reserve(last_acts);
  h.api.reserve(last_calls);
  // json_scan's scanner: RapidJSON's Reader::Parse<kParseIterativeFlag | kParseFullPrecisionFlag>
  // (in, h), the same events and result (tests/unit/test_parsers_json_scan.cpp holds them equal,
  // fuzz/fuzz_kineto.cpp too), about twice as fast (bench/README.md, issue 45).
  rapidjson::ParseResult r = json_scan::scan(in, h);
  if (r.IsError()) in.settle_utf8(r.Offset());
  if (const std::size_t bad = in.utf8().bad(); bad != json_pull::Utf8Scan::kNone && (!r.IsError() || r.Offset() > bad) &&
                                               (in.error().empty() || in.failed_at() > bad + in.utf8().bad_length()))
    return parse_fail("not valid UTF-8 at byte " + std::to_string(bad), 1 + static_cast<int>(std::min<std::size_t>(in.utf8().bad_newlines(), 2'000'000'000)));
  // A source that failed (a read error, a corrupt or cut gzip stream) looks like the end to
  // RapidJSON: its reason is the one to give.
  if (!in.error().empty()) return source_failed();
  if (r.IsError() && !h.stop.empty()) return parse_fail(h.stop + " (at byte " + std::to_string(r.Offset()) + ")", in.line_of(r.Offset()));
  if (r.IsError()) return tl::unexpected(kineto_sax::json_error(r, in));
  if (!h.events_array)
    return parse_fail(std::string(kKinetoNoTraceEvents));

  last_acts = h.p.acts.size(), last_calls = h.api.size();
  Profile p = std::move(h.p);
  if (h.world_size) p.system.emplace_back("world_size", std::to_string(*h.world_size));
  if (h.backend) p.system.emplace_back("backend", *h.backend);
  if (h.base_time_ns) p.system.emplace_back("base_time_ns", std::to_string(*h.base_time_ns));
  for (const auto& [id, n] : h.dev_name) p.system.emplace_back("GPU " + std::to_string(id), n);
  const std::int64_t rank = h.rank;
  if (rank >= 0) p.system.emplace_back("rank", std::to_string(rank));
  for (auto& g : p.gpus) {
    auto n = h.dev_name.find(g.device);
    g.key = (rank >= 0 ? "rank" + std::to_string(rank) + "." : std::string()) + "gpu" + std::to_string(g.device);
    g.label = (rank >= 0 ? "rank " + std::to_string(rank) + " " : std::string()) + "GPU " + std::to_string(g.device) +
              (n != h.dev_name.end() ? " (" + n->second + ")" : "");
  }

  if (p.acts.empty() && h.bad_times)
    return parse_fail(std::to_string(h.bad_times) + " GPU, launch or annotation events without a usable ts/dur (absent, negative, or beyond +-4e15 us) and no GPU activity with one");
  if (p.acts.empty()) return parse_fail(no_gpu_activity(h));
  bool kernels = false;
  for (const auto& a : p.acts) kernels = kernels || a.kind == ActKind::kernel;
  if (!kernels) return parse_fail("a trace with GPU memory copies but no kernels (no cat kernel events)");

  // The launch call of each activity by correlation; of calls sharing one, the first in the file.
  auto& api = h.api;
  auto by_corr = [](const Handler::Call& a, const Handler::Call& b) { return a.corr < b.corr; };
  if (!std::is_sorted(api.begin(), api.end(), by_corr)) std::stable_sort(api.begin(), api.end(), by_corr);
  // Correlations mostly rise through the file: the call after the last one found is tried
  // first (each position tried is the first of its correlation, as lower_bound's).
  auto at = api.begin();
  std::vector<bool> launched(api.size(), false);  // per call: some activity joined it
  std::uint64_t launching = 0;
  for (std::size_t i = 0; i < p.acts.size(); ++i) {
    std::int64_t c = h.corr_of[i];
    if (!c) continue;
    auto it = at;
    if (it != api.end() && it->corr != c) {
      if (it->corr < c && it + 1 != api.end() && (it + 1)->corr == c) ++it;
      else it = std::lower_bound(api.begin(), api.end(), c, [](const Handler::Call& a, std::int64_t v) { return a.corr < v; });
    } else if (it == api.end()) {
      it = std::lower_bound(api.begin(), api.end(), c, [](const Handler::Call& a, std::int64_t v) { return a.corr < v; });
    }
    if (it == api.end() || it->corr != c) continue;
    at = it;
    p.acts[i].api_start = it->start;
    p.acts[i].api_end = it->end;
    p.acts[i].graph_launch = it->graph;
    p.acts[i].api_thread = it->thread;
    if (!launched[static_cast<std::size_t>(it - api.begin())]) launched[static_cast<std::size_t>(it - api.begin())] = true, ++launching;
  }
  kineto_sax::note_call_coverage(p, api, launching);
  if (const std::size_t named = name_sendrecv_collectives(p, h.comm_ops))
    p.notes.push_back(std::to_string(named) + " SendRecv kernels counted as the collective of the nccl:* op that launched them (NCCL runs all-to-all as send/recv)");
  if (p.api_calls == 0) p.notes.push_back("no cuda_runtime/cuda_driver events: launch overhead and host-bound idle unknown");
  if (h.bad_times) p.notes.push_back(std::to_string(h.bad_times) + " events without a usable ts/dur were left out");
  return p;
}

Parsed<Profile> parse_kineto(std::string_view json) { return read_kineto(blocks_of(json)); }

bool is_not_a_kineto_trace(std::string_view why) {
  return why.find(kKinetoNoTraceEvents) != std::string_view::npos || why.find(kKinetoNotJsonContainer) != std::string_view::npos;
}

std::string kineto_trace_host(std::string_view path) {
  std::string_view name = path.substr(path.rfind('/') + 1);  // npos + 1: the whole path
  bool traced = false;
  for (std::string_view suffix : {".pt.trace.json.gz", ".pt.trace.json"})
    if (!traced && name.ends_with(suffix)) name.remove_suffix(suffix.size()), traced = true;
  auto digits = [](std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }); };
  const auto dot = name.rfind('.');
  if (!traced || dot == std::string_view::npos || !digits(name.substr(dot + 1))) return {};
  const std::string_view worker = name.substr(0, dot);
  const auto under = worker.rfind('_');
  if (under == std::string_view::npos || under == 0 || !digits(worker.substr(under + 1))) return {};
  return std::string(worker.substr(0, under));
}

}  // namespace perfgap::parsers
