// PyTorch profiler / Kineto Chrome traces: traceEvents[] with ph "X" events of cat kernel,
// gpu_memcpy, gpu_memset (GPU side), cuda_runtime / cuda_driver (the host calls, joined by
// args.correlation) and user_annotation (ProfilerStep#N and record_function ranges).
// RapidJSON (header-only): the static release binary links no JSON library (README).
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "parsers/profile.hpp"

namespace perfgap::parsers {

namespace {

using element = const rapidjson::Value&;

ParseError json_error(std::string_view json, const rapidjson::Document& doc) {
  const auto code = doc.GetParseError();
  const std::size_t at = std::min(doc.GetErrorOffset(), json.size());
  const int line = 1 + static_cast<int>(std::count(json.begin(), json.begin() + static_cast<long>(at), '\n'));
  if (code == rapidjson::kParseErrorDocumentEmpty) return ParseError{"empty", 0};
  if (code == rapidjson::kParseErrorStringInvalidEncoding) return ParseError{"not valid UTF-8", line};
  if (doc.GetErrorOffset() >= json.size() && code != rapidjson::kParseErrorDocumentRootNotSingular)
    return ParseError{"truncated JSON (it ends inside an object, array or string)", line};
  return ParseError{std::string("not valid JSON (") + rapidjson::GetParseError_En(code) + ")", line};
}

std::string_view string_of(element e) { return {e.GetString(), e.GetStringLength()}; }
bool get_string(element e, std::string_view& out) {
  if (!e.IsString()) return false;
  out = string_of(e);
  return true;
}
const rapidjson::Value* member(element o, const char* key) {
  auto it = o.FindMember(key);
  return it == o.MemberEnd() ? nullptr : &it->value;
}

// A time in µs (integer or fractional) as integer ns; false when absent or out of range.
bool micros_to_ns(element e, std::int64_t& ns) {
  if (e.IsInt64()) {
    std::int64_t i = e.GetInt64();
    if (i > 9'000'000'000'000'000 || i < -9'000'000'000'000'000) return false;  // µs: x1000 stays within int64
    ns = i * 1000;
    return true;
  }
  if (!e.IsNumber() || e.IsUint64()) return false;  // a uint64 above int64's range is out of range too
  double d = e.GetDouble();
  if (!std::isfinite(d) || std::fabs(d) > 9e15) return false;
  double whole = std::floor(d);
  ns = static_cast<std::int64_t>(whole) * 1000 + std::llround((d - whole) * 1000.0);
  return true;
}

bool integer(element e, std::int64_t& v) {
  if (e.IsInt64()) {
    v = e.GetInt64();
    return true;
  }
  if (!e.IsDouble()) return false;
  double d = e.GetDouble();
  if (std::isfinite(d) && std::fabs(d) < 9e18) {
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
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseFullPrecisionFlag;
  rapidjson::Document doc;
  doc.Parse<kFlags>(json.data(), json.size());
  if (doc.HasParseError()) return tl::unexpected(json_error(json, doc));
  if (!doc.IsObject()) return parse_fail("not a JSON object: a Kineto trace is {\"traceEvents\": [...]}");
  const rapidjson::Value* events_v = member(doc, "traceEvents");
  if (!events_v || !events_v->IsArray())
    return parse_fail("JSON without a traceEvents array: not a Chrome/Kineto trace (PyTorch profiler export_chrome_trace)");
  auto events = events_v->GetArray();

  Profile p;
  p.format = "Kineto trace";
  std::int64_t rank = -1;
  if (const auto* di = member(doc, "distributedInfo"); di && di->IsObject()) {
    std::int64_t v;
    if (const auto* e = member(*di, "rank"); e && integer(*e, v)) rank = v;
    if (const auto* e = member(*di, "world_size"); e && integer(*e, v)) p.system.emplace_back("world_size", std::to_string(v));
    if (const auto* e = member(*di, "backend"); e && e->IsString()) p.system.emplace_back("backend", std::string(string_of(*e)));
  }
  std::map<std::int64_t, std::string> dev_name;
  if (const auto* props = member(doc, "deviceProperties"); props && props->IsArray())
    for (element d : props->GetArray()) {
      if (!d.IsObject()) continue;
      std::int64_t id;
      const auto* e = member(d, "id");
      const auto* n = member(d, "name");
      if (e && integer(*e, id) && n && n->IsString()) dev_name[id] = std::string(string_of(*n));
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
  api.reserve(events.Size() / 4);
  std::vector<std::int64_t> corr_of;  // per activity
  std::size_t bad_times = 0, x_events = 0;
  std::unordered_map<std::uint32_t, Coll> coll_by_name;

  for (element ev : events) {
    if (!ev.IsObject()) continue;
    // One pass over the event's fields (a lookup per field would rescan the object each time).
    std::string_view ph, cat, name;
    const rapidjson::Value *te = nullptr, *de = nullptr, *pe = nullptr, *ae = nullptr;
    for (const auto& field : ev.GetObject()) {
      std::string_view k = string_of(field.name);
      if (k == "ph") get_string(field.value, ph);
      else if (k == "cat") get_string(field.value, cat);
      else if (k == "name") get_string(field.value, name);
      else if (k == "ts") te = &field.value;
      else if (k == "dur") de = &field.value;
      else if (k == "pid") pe = &field.value;
      else if (k == "args") ae = &field.value;
    }
    if (ph != "X") continue;
    ++x_events;
    bool gpu = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "Kernel" || cat == "Memcpy" || cat == "Memset";
    bool host_call = cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime" || cat == "Driver";
    bool annotation = cat == "user_annotation";
    if (!gpu && !host_call && !annotation) continue;
    std::int64_t ts, dur;
    if (!te || !de || !micros_to_ns(*te, ts) || !micros_to_ns(*de, dur) || dur < 0) {
      ++bad_times;
      continue;
    }
    bool has_args = ae && ae->IsObject();
    std::int64_t corr = 0, dev = -1, stream = 0, in = 0, out = 0, group = 0;
    std::string_view cname, dt;
    bool has_cname = false;
    if (has_args)
      for (const auto& field : ae->GetObject()) {
        std::string_view k = string_of(field.name);
        if (k == "correlation") integer(field.value, corr);
        else if (!gpu) continue;
        else if (k == "device") integer(field.value, dev);
        else if (k == "stream") integer(field.value, stream);
        else if (k == "Collective name") has_cname = get_string(field.value, cname);
        else if (k == "In msg nelems") integer(field.value, in);
        else if (k == "Out msg nelems") integer(field.value, out);
        else if (k == "Group size") integer(field.value, group);
        else if (k == "dtype") get_string(field.value, dt);
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
    if (dev < 0 && pe) integer(*pe, dev);
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
    return parse_fail(events.Size() == 0 ? "a trace with no events (traceEvents is empty)"
                                         : std::to_string(events.Size()) + " trace events but no GPU activity (no cat kernel/gpu_memcpy/gpu_memset events): profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]");
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
