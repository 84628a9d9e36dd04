// PyTorch profiler / Kineto Chrome traces: traceEvents[] with ph "X" events of cat kernel,
// gpu_memcpy, gpu_memset (GPU side), cuda_runtime / cuda_driver (the host calls, joined by
// args.correlation) and user_annotation (ProfilerStep#N and record_function ranges).
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "parsers/profile.hpp"

namespace perfgap::parsers {

namespace {

using simdjson::dom::element;

// The byte offset where nlohmann's parser stops on invalid JSON (only run after simdjson failed).
struct FindError : nlohmann::json_sax<nlohmann::json> {
  std::size_t at = 0;
  std::string what;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    at = position;
    what = ex.what();
    return false;
  }
};

ParseError json_error(std::string_view json, simdjson::error_code err) {
  FindError h;
  nlohmann::json::sax_parse(json.begin(), json.end(), &h);
  int line = 0;
  if (h.at > 0) {
    std::size_t upto = std::min(h.at, json.size());
    line = 1 + static_cast<int>(std::count(json.begin(), json.begin() + static_cast<long>(upto > 0 ? upto - 1 : 0), '\n'));
  }
  std::string why;
  if (h.at >= json.size() && !h.what.empty()) return ParseError{"truncated JSON (it ends inside an object, array or string)", line};
  switch (err) {
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
    case simdjson::UNCLOSED_STRING: why = "truncated JSON (it ends inside an object, array or string)"; break;
    case simdjson::UTF8_ERROR: why = "not valid UTF-8"; break;
    case simdjson::EMPTY: why = "empty"; break;
    default: why = std::string("not valid JSON (") + simdjson::error_message(err) + ")";
  }
  return ParseError{why, line};
}

// A time in µs (integer or fractional) as integer ns; false when absent or out of range.
bool micros_to_ns(element e, std::int64_t& ns) {
  std::int64_t i;
  if (e.get_int64().get(i) == simdjson::SUCCESS) {
    if (i > 9'000'000'000'000'000 || i < -9'000'000'000'000'000) return false;  // µs: x1000 stays within int64
    ns = i * 1000;
    return true;
  }
  double d;
  if (e.get_double().get(d) != simdjson::SUCCESS || !std::isfinite(d) || std::fabs(d) > 9e15) return false;
  double whole = std::floor(d);
  ns = static_cast<std::int64_t>(whole) * 1000 + std::llround((d - whole) * 1000.0);
  return true;
}

bool integer(element e, std::int64_t& v) {
  if (e.get_int64().get(v) == simdjson::SUCCESS) return true;
  double d;
  if (e.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && std::fabs(d) < 9e18) {
    v = static_cast<std::int64_t>(d);
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

}  // namespace

Parsed<Profile> parse_kineto(std::string_view json) {
  std::size_t first = 0;
  while (first < json.size() && (json[first] == ' ' || json[first] == '\n' || json[first] == '\r' || json[first] == '\t')) ++first;
  if (first == json.size()) return parse_fail("empty");
  if (json[first] != '{') return parse_fail("not a JSON object: a Kineto trace is {\"traceEvents\": [...]}", 1);
  simdjson::dom::parser parser;
  element doc;
  if (auto err = parser.parse(json.data(), json.size(), true).get(doc)) return tl::unexpected(json_error(json, err));
  simdjson::dom::object top;
  if (doc.get_object().get(top)) return parse_fail("not a JSON object: a Kineto trace is {\"traceEvents\": [...]}");
  simdjson::dom::array events;
  if (top["traceEvents"].get_array().get(events))
    return parse_fail("JSON without a traceEvents array: not a Chrome/Kineto trace (PyTorch profiler export_chrome_trace)");

  Profile p;
  p.format = "Kineto trace";
  std::int64_t rank = -1;
  if (simdjson::dom::object di; !top["distributedInfo"].get_object().get(di)) {
    std::int64_t v;
    if (element e; !di["rank"].get(e) && integer(e, v)) rank = v;
    if (element e; !di["world_size"].get(e) && integer(e, v)) p.system.emplace_back("world_size", std::to_string(v));
    if (std::string_view b; !di["backend"].get_string().get(b)) p.system.emplace_back("backend", std::string(b));
  }
  std::map<std::int64_t, std::string> dev_name;
  if (simdjson::dom::array props; !top["deviceProperties"].get_array().get(props))
    for (element d : props) {
      std::int64_t id;
      std::string_view n;
      if (element e; !d["id"].get(e) && integer(e, id) && !d["name"].get_string().get(n)) dev_name[id] = std::string(n);
    }
  for (const auto& [id, n] : dev_name) p.system.emplace_back("GPU " + std::to_string(id), n);
  if (rank >= 0) p.system.emplace_back("rank", std::to_string(rank));

  // Names are looked up without building a string (heterogeneous lookup); the last one is cached.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
  };
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> name_index;
  std::string_view last_name;
  std::uint32_t last_index = 0;
  auto intern = [&](std::string_view s) {
    if (last_index && s == last_name) return last_index;
    auto it = name_index.find(s);
    std::uint32_t i;
    if (it != name_index.end()) i = it->second;
    else {
      i = static_cast<std::uint32_t>(p.names.size());
      name_index.emplace(std::string(s), i);
      p.names.emplace_back(s);
    }
    last_name = s, last_index = i;
    return i;
  };
  std::unordered_map<std::int64_t, std::uint32_t> gpu_index;
  auto gpu_of = [&](std::int64_t dev) {
    auto [it, fresh] = gpu_index.emplace(dev, static_cast<std::uint32_t>(p.gpus.size()));
    if (fresh) {
      GpuInfo g;
      g.device = dev;
      auto n = dev_name.find(dev);
      g.key = (rank >= 0 ? "rank" + std::to_string(rank) + "." : std::string()) + "gpu" + std::to_string(dev);
      g.label = (rank >= 0 ? "rank " + std::to_string(rank) + " " : std::string()) + "GPU " + std::to_string(dev) +
                (n != dev_name.end() ? " (" + n->second + ")" : "");
      p.gpus.push_back(std::move(g));
    }
    return it->second;
  };
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> api;  // correlation -> call
  api.reserve(events.size() / 4);
  std::vector<std::int64_t> corr_of;  // per activity
  std::size_t bad_times = 0, x_events = 0;
  std::unordered_map<std::uint32_t, Coll> coll_by_name;

  for (element ev : events) {
    simdjson::dom::object o;
    if (ev.get_object().get(o)) continue;
    // One pass over the event's fields (a lookup per field would rescan the object each time).
    std::string_view ph, cat, name;
    element te, de, pe, ae;
    bool has_ts = false, has_dur = false, has_pid = false, has_args_el = false;
    for (auto field : o) {
      std::string_view k = field.key;
      if (k == "ph") (void)!field.value.get_string().get(ph);
      else if (k == "cat") (void)!field.value.get_string().get(cat);
      else if (k == "name") (void)!field.value.get_string().get(name);
      else if (k == "ts") te = field.value, has_ts = true;
      else if (k == "dur") de = field.value, has_dur = true;
      else if (k == "pid") pe = field.value, has_pid = true;
      else if (k == "args") ae = field.value, has_args_el = true;
    }
    if (ph != "X") continue;
    ++x_events;
    bool gpu = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "Kernel" || cat == "Memcpy" || cat == "Memset";
    bool host_call = cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime" || cat == "Driver";
    bool annotation = cat == "user_annotation";
    if (!gpu && !host_call && !annotation) continue;
    std::int64_t ts, dur;
    if (!has_ts || !has_dur || !micros_to_ns(te, ts) || !micros_to_ns(de, dur) || dur < 0) {
      ++bad_times;
      continue;
    }
    simdjson::dom::object args;
    bool has_args = has_args_el && !ae.get_object().get(args);
    std::int64_t corr = 0, dev = -1, stream = 0, in = 0, out = 0, group = 0;
    std::string_view cname, dt;
    bool has_cname = false;
    if (has_args)
      for (auto field : args) {
        std::string_view k = field.key;
        if (k == "correlation") integer(field.value, corr);
        else if (!gpu) continue;
        else if (k == "device") integer(field.value, dev);
        else if (k == "stream") integer(field.value, stream);
        else if (k == "Collective name") has_cname = !field.value.get_string().get(cname);
        else if (k == "In msg nelems") integer(field.value, in);
        else if (k == "Out msg nelems") integer(field.value, out);
        else if (k == "Group size") integer(field.value, group);
        else if (k == "dtype") (void)!field.value.get_string().get(dt);
      }
    if (host_call) {
      if (corr) api.emplace(corr, std::make_pair(ts, ts + dur));
      ++p.api_calls;
      continue;
    }
    if (annotation) {
      ProfileRange r;
      r.start = ts;
      r.end = ts + dur;
      r.name = intern(name);
      p.ranges.push_back(r);
      continue;
    }
    GpuActivity a;
    a.start = ts;
    a.end = ts + dur;
    if (dev < 0 && has_pid) integer(pe, dev);
    a.gpu = gpu_of(dev < 0 ? 0 : dev);
    a.stream = static_cast<std::uint32_t>(stream);
    a.kind = cat == "kernel" || cat == "Kernel" ? ActKind::kernel : cat == "gpu_memcpy" || cat == "Memcpy" ? ActKind::memcpy : ActKind::memset;
    if (a.kind == ActKind::kernel) {
      a.name = intern(name);
      auto [it, fresh] = coll_by_name.emplace(a.name, Coll::none);
      if (fresh) it->second = nccl_collective(name);
      a.coll = it->second;
      if (has_cname) {
        if (a.coll == Coll::none || a.coll == Coll::other) a.coll = collective_from_arg(cname);
        std::uint64_t size = dtype_bytes(dt);
        if (size && (in > 0 || out > 0)) a.msg_bytes = static_cast<std::uint64_t>(std::max(in, out)) * size;
        if (group > 0 && group < (1 << 30)) a.group_size = static_cast<std::uint32_t>(group);
      }
    }
    p.acts.push_back(a);
    corr_of.push_back(corr);
  }
  if (p.acts.empty()) {
    return parse_fail(events.size() == 0 ? "a trace with no events (traceEvents is empty)"
                                         : std::to_string(events.size()) + " trace events but no GPU activity (no cat kernel/gpu_memcpy/gpu_memset events): profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]");
  }
  bool kernels = false;
  for (const auto& a : p.acts) kernels = kernels || a.kind == ActKind::kernel;
  if (!kernels) return parse_fail("a trace with GPU memory copies but no kernels (no cat kernel events)");
  for (std::size_t i = 0; i < p.acts.size(); ++i) {
    if (!corr_of[i]) continue;
    auto it = api.find(corr_of[i]);
    if (it == api.end()) continue;
    p.acts[i].api_start = it->second.first;
    p.acts[i].api_end = it->second.second;
  }
  if (p.api_calls == 0) p.notes.push_back("no cuda_runtime/cuda_driver events: launch overhead and host-bound idle unknown");
  if (bad_times) p.notes.push_back(std::to_string(bad_times) + " events without a usable ts/dur were left out");
  (void)x_events;
  return p;
}

}  // namespace perfgap::parsers
