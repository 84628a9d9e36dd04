// The streaming Kineto reader (parsers::read_kineto: RapidJSON SAX over blocks pulled from a
// file, a pipe or gunzip's output) against expectations: a second reading of the same trace
// with nlohmann's DOM, written from docs/ANALYZE.md's description of what is taken from a trace,
// field for field and in the findings; a hand-made trace whose fields come in odd orders, with
// its model spelled out; every cut of the input into blocks giving the same model; errors with
// their line and byte offset; gzip inflated block by block.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>
#include <rapidjson/reader.h>

#include "analyzers/analyzers.hpp"
#include "files.hpp"
#include "parsers/gunzip.hpp"
#include "parsers/profile.hpp"
#include "profile_gen.hpp"
#include "report/render.hpp"
#include "sys/named_file.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using parsers::ActKind;
using parsers::Coll;
using parsers::Profile;

namespace {

// ---- the expectation: the same trace read through nlohmann's DOM --------------------------

using json = nlohmann::json;

bool int_of(const json& v, std::int64_t& out) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return out = v.get<std::int64_t>(), true;
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) return false;
    return out = static_cast<std::int64_t>(u), true;
  }
  if (v.is_number_float() && std::isfinite(v.get<double>()) && std::fabs(v.get<double>()) < 9e18)
    return out = static_cast<std::int64_t>(v.get<double>()), true;
  return false;
}

// µs (integer or with a fraction) to ns, the fraction rounded to the nearest ns.
bool ns_of(const json* v, std::int64_t& out) {
  if (!v) return false;
  if ((v->is_number_integer() && !v->is_number_unsigned()) ||
      (v->is_number_unsigned() && v->get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX))) {
    std::int64_t i = v->is_number_unsigned() ? static_cast<std::int64_t>(v->get<std::uint64_t>()) : v->get<std::int64_t>();
    if (i > 9'000'000'000'000'000 || i < -9'000'000'000'000'000) return false;
    return out = i * 1000, true;
  }
  if (!v->is_number_float()) return false;
  double d = v->get<double>();
  if (!std::isfinite(d) || std::fabs(d) > 9e15) return false;
  double whole = std::floor(d);
  return out = static_cast<std::int64_t>(whole) * 1000 + std::llround((d - whole) * 1000.0), true;
}

std::uint64_t dtype_size(const std::string& t) {
  static const std::map<std::string, std::uint64_t> k{
      {"Float", 4}, {"float", 4}, {"Float32", 4}, {"Half", 2}, {"half", 2}, {"Float16", 2}, {"BFloat16", 2}, {"Double", 8}, {"double", 8}, {"Int", 4},
      {"Int32", 4}, {"Long", 8}, {"Int64", 8}, {"Short", 2}, {"Byte", 1}, {"Char", 1}, {"Int8", 1}, {"UInt8", 1}, {"Bool", 1}, {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}};
  auto it = k.find(t);
  return it == k.end() ? 0 : it->second;
}

// What docs/ANALYZE.md says a Kineto trace gives (for traces without repeated keys, which
// nlohmann would not keep): "" and the model, or the start of the error message.
std::pair<std::string, Profile> expected(const std::string& text) {
  Profile p;
  json j = json::parse(text);
  if (!j.contains("traceEvents") || !j["traceEvents"].is_array()) return {"JSON without a traceEvents array", p};
  p.format = "Kineto trace";
  p.framework = {parsers::Framework::pytorch, "a PyTorch profiler (Kineto) trace"};  // PyTorch's by construction
  std::int64_t rank = -1;
  std::map<std::int64_t, std::string> names;
  if (j.contains("distributedInfo") && j["distributedInfo"].is_object()) {
    const auto& di = j["distributedInfo"];
    std::int64_t v;
    if (di.contains("rank") && int_of(di["rank"], v)) rank = v;
    if (di.contains("world_size") && int_of(di["world_size"], v)) p.system.emplace_back("world_size", std::to_string(v));
    if (di.contains("backend") && di["backend"].is_string()) p.system.emplace_back("backend", di["backend"].get<std::string>());
  }
  {
    std::int64_t base;
    if (j.contains("baseTimeNanoseconds") && int_of(j["baseTimeNanoseconds"], base)) p.system.emplace_back("base_time_ns", std::to_string(base));
  }
  if (j.contains("deviceProperties") && j["deviceProperties"].is_array())
    for (const auto& d : j["deviceProperties"]) {
      std::int64_t id;
      if (d.is_object() && d.contains("id") && int_of(d["id"], id) && d.contains("name") && d["name"].is_string()) names[id] = d["name"].get<std::string>();
    }
  for (const auto& [id, n] : names) p.system.emplace_back("GPU " + std::to_string(id), n);
  if (rank >= 0) p.system.emplace_back("rank", std::to_string(rank));
  // Names in the order first met; an empty name too gets its own entry (index 0 is "no name").
  std::map<std::string, std::uint32_t> name_ix;
  auto intern = [&](const std::string& s) {
    auto [it, fresh] = name_ix.emplace(s, static_cast<std::uint32_t>(p.names.size()));
    if (fresh) p.names.push_back(s);
    return it->second;
  };
  std::map<std::int64_t, std::uint32_t> gpu_ix;
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> calls;
  std::unordered_set<std::int64_t> graph_calls;  // correlations of cudaGraphLaunch / cuGraphLaunch calls
  std::vector<std::int64_t> corr_of;
  std::vector<parsers::ProfileRange> comm_ops;  // cpu_op nccl:* events
  std::size_t bad = 0;
  for (const auto& ev : j["traceEvents"]) {
    if (!ev.is_object()) continue;
    auto str = [&](const char* k) { return ev.contains(k) && ev[k].is_string() ? ev[k].get<std::string>() : std::string(); };
    if (str("ph") != "X") continue;
    std::string cat = str("cat");
    bool gpu = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "Kernel" || cat == "Memcpy" || cat == "Memset";
    bool host = cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime" || cat == "Driver";
    const bool comm_op = (cat == "cpu_op" || cat == "Operator") && str("name").rfind("nccl:", 0) == 0;
    if (!gpu && !host && cat != "user_annotation" && !comm_op) continue;
    std::int64_t ts, dur;
    if (!ns_of(ev.contains("ts") ? &ev["ts"] : nullptr, ts) || !ns_of(ev.contains("dur") ? &ev["dur"] : nullptr, dur) || dur < 0) {
      ++bad;
      continue;
    }
    const json none = json::object();
    const json& args = ev.contains("args") && ev["args"].is_object() ? ev["args"] : none;
    auto arg_int = [&](const char* k, std::int64_t dflt) {
      std::int64_t v = dflt;
      if (args.contains(k)) int_of(args[k], v);
      return v;
    };
    std::int64_t corr = arg_int("correlation", 0);
    if (host) {
      if (corr && calls.emplace(corr, std::make_pair(ts, ts + dur)).second) {
        const std::string n = str("name");
        if (n.rfind("cudaGraphLaunch", 0) == 0 || n.rfind("cuGraphLaunch", 0) == 0) graph_calls.insert(corr);
      }
      ++p.api_calls;
      if (parsers::is_sync_call(str("name"))) ++p.sync_calls, p.sync_ns += dur;
      if (dur >= parsers::kSlowHostCallNs) {  // kept by name: where host stalls went
        const std::string n = str("name");
        auto at = std::find(p.call_names.begin(), p.call_names.end(), n);
        if (at == p.call_names.end()) at = p.call_names.insert(p.call_names.end(), n);
        p.slow_calls.push_back({.start = ts, .end = ts + dur, .name = static_cast<std::uint32_t>(at - p.call_names.begin()), .thread = 0, .file = 0});
      }
      continue;
    }
    if (!gpu) {
      parsers::ProfileRange r;
      r.start = ts, r.end = ts + dur, r.name = intern(str("name"));
      (comm_op ? comm_ops : p.ranges).push_back(r);
      continue;
    }
    parsers::GpuActivity a;
    a.start = ts, a.end = ts + dur;
    std::int64_t dev = arg_int("device", -1);
    if (dev < 0 && ev.contains("pid")) int_of(ev["pid"], dev);
    if (dev < 0) dev = 0;
    auto [g, fresh] = gpu_ix.emplace(dev, static_cast<std::uint32_t>(p.gpus.size()));
    if (fresh) {
      parsers::GpuInfo info;
      info.device = dev;
      std::string r = rank >= 0 ? std::to_string(rank) : "";
      info.key = (rank >= 0 ? "rank" + r + "." : "") + "gpu" + std::to_string(dev);
      info.label = (rank >= 0 ? "rank " + r + " " : "") + "GPU " + std::to_string(dev) + (names.count(dev) ? " (" + names[dev] + ")" : "");
      p.gpus.push_back(info);
    }
    a.gpu = g->second;
    a.stream = static_cast<std::uint32_t>(arg_int("stream", 0));
    a.kind = cat == "kernel" || cat == "Kernel" ? ActKind::kernel : cat == "gpu_memcpy" || cat == "Memcpy" ? ActKind::memcpy : ActKind::memset;
    if (a.kind == ActKind::kernel) {
      std::string name = str("name");
      a.name = intern(name);
      a.coll = parsers::nccl_collective(name);
      if (args.contains("Collective name") && args["Collective name"].is_string()) {
        const Coll named = parsers::collective_from_arg(args["Collective name"].get<std::string>());
        if (a.coll == Coll::none || a.coll == Coll::other) a.coll = named;
        else if (a.coll == Coll::SendRecv && named != Coll::SendRecv && named != Coll::other && named != Coll::none) a.coll = named;
        std::uint64_t size = dtype_size(args.contains("dtype") && args["dtype"].is_string() ? args["dtype"].get<std::string>() : "");
        std::int64_t in = arg_int("In msg nelems", 0), out = arg_int("Out msg nelems", 0), group = arg_int("Group size", 0);
        if (size && (in > 0 || out > 0)) a.msg_bytes = static_cast<std::uint64_t>(std::max(in, out)) * size;
        if (group > 0 && group < (1 << 30)) a.group_size = static_cast<std::uint32_t>(group);
      }
    }
    if (a.kind == ActKind::memcpy) {
      // "Memcpy HtoD (Pageable -> Device)": the direction word, then the host side's memory.
      const std::string n = str("name");
      using parsers::CopyKind;
      using parsers::HostMem;
      a.copy = n.find("HtoD") != std::string::npos   ? CopyKind::h2d
               : n.find("DtoH") != std::string::npos ? CopyKind::d2h
               : n.find("DtoD") != std::string::npos ? CopyKind::d2d
               : n.find("PtoP") != std::string::npos ? CopyKind::p2p
                                                     : CopyKind::other;
      a.host_mem = a.copy == CopyKind::d2d || a.copy == CopyKind::p2p ? HostMem::none
                   : n.find("Pageable") != std::string::npos          ? HostMem::pageable
                   : n.find("Pinned") != std::string::npos            ? HostMem::pinned
                                                                      : HostMem::unknown;
      if (arg_int("bytes", 0) > 0) a.msg_bytes = static_cast<std::uint64_t>(arg_int("bytes", 0));
    }
    p.acts.push_back(a);
    corr_of.push_back(corr);
  }
  if (p.acts.empty()) return {j["traceEvents"].empty() ? "a trace with no events" : "trace events but no GPU activity", p};
  if (std::none_of(p.acts.begin(), p.acts.end(), [](const auto& a) { return a.kind == ActKind::kernel; })) return {"a trace with GPU memory copies but no kernels", p};
  for (std::size_t i = 0; i < p.acts.size(); ++i) {
    auto it = corr_of[i] ? calls.find(corr_of[i]) : calls.end();
    if (it == calls.end()) continue;
    p.acts[i].api_start = it->second.first;
    p.acts[i].api_end = it->second.second;
    p.acts[i].graph_launch = graph_calls.count(corr_of[i]) > 0;
  }
  if (const std::size_t named = parsers::name_sendrecv_collectives(p, comm_ops))
    p.notes.push_back(std::to_string(named) + " SendRecv kernels counted as the collective of the nccl:* op that launched them (NCCL runs all-to-all as send/recv)");
  if (p.api_calls == 0) p.notes.push_back("no cuda_runtime/cuda_driver events: launch overhead and host-bound idle unknown");
  if (bad) p.notes.push_back(std::to_string(bad) + " events without a usable ts/dur were left out");
  return {"", p};
}

// ---- comparing models ------------------------------------------------------------------------

void expect_same(const Profile& got, const Profile& want) {
  EXPECT_EQ(got.format, want.format);
  EXPECT_EQ(got.names, want.names);
  ASSERT_EQ(got.gpus.size(), want.gpus.size());
  for (std::size_t i = 0; i < got.gpus.size(); ++i) {
    EXPECT_EQ(got.gpus[i].device, want.gpus[i].device);
    EXPECT_EQ(got.gpus[i].key, want.gpus[i].key);
    EXPECT_EQ(got.gpus[i].label, want.gpus[i].label);
  }
  ASSERT_EQ(got.acts.size(), want.acts.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < got.acts.size(); ++i) {
    const auto &a = got.acts[i], &b = want.acts[i];
    bool same = a.start == b.start && a.end == b.end && a.api_start == b.api_start && a.api_end == b.api_end && a.gpu == b.gpu &&
                a.name == b.name && a.stream == b.stream && a.group_size == b.group_size && a.msg_bytes == b.msg_bytes &&
                a.kind == b.kind && a.coll == b.coll && a.copy == b.copy && a.host_mem == b.host_mem && a.graph_launch == b.graph_launch;
    if (!same && differ++ < 3) ADD_FAILURE() << "activity " << i << " differs: start " << a.start << "/" << b.start << " api " << a.api_start << "/" << b.api_start;
  }
  EXPECT_EQ(differ, 0u);
  ASSERT_EQ(got.ranges.size(), want.ranges.size());
  for (std::size_t i = 0; i < got.ranges.size(); ++i)
    EXPECT_TRUE(got.ranges[i].start == want.ranges[i].start && got.ranges[i].end == want.ranges[i].end && got.ranges[i].name == want.ranges[i].name) << i;
  EXPECT_EQ(got.api_calls, want.api_calls);
  // The slow host calls: the same calls by start, end and name.
  auto slow = [](const Profile& p) {
    std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> v;
    for (const auto& c : p.slow_calls) v.emplace_back(c.start, c.end, p.call_names.at(c.name));
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(slow(got), slow(want));
  EXPECT_EQ(got.sync_calls, want.sync_calls);
  EXPECT_EQ(got.sync_ns, want.sync_ns);
  EXPECT_EQ(got.system, want.system);
  EXPECT_EQ(got.notes, want.notes);
  EXPECT_EQ(got.framework.framework, want.framework.framework);
}

std::string findings_json(const Profile& p) {
  report::Report r;
  r.findings = analyzers::analyze_profile(p, "trace", {});
  return report::render_json(r);
}

// Reads `text` against the expectation, whole and in blocks of several sizes (one byte a block
// for the generated traces; the real ones, ~100 MB together, in 7-byte blocks, which cut every
// kind of token at every offset too, in a tenth of the time).
// Returns the expectation's findings (empty where the text is refused), for a caller reading
// the same text another way: the oracle's parse is most of the real traces' time.
std::string check_against_expectation(const std::string& text, std::initializer_list<std::size_t> blocks = {1u, 7u, 4096u}) {
  auto [why, want] = expected(text);
  auto got = parsers::parse_kineto(text);
  if (!why.empty()) {
    EXPECT_FALSE(got);
    if (!got) {
      EXPECT_NE(got.error().message.find(why), std::string::npos) << got.error().message;
    }
    return {};
  }
  EXPECT_TRUE(got) << got.error().describe();
  if (!got) return {};
  expect_same(*got, want);
  std::string want_findings = findings_json(want);
  EXPECT_EQ(findings_json(*got), want_findings);
  for (std::size_t block : blocks) {
    SCOPED_TRACE("blocks of " + std::to_string(block));
    auto cut = parsers::read_kineto(parsers::blocks_of(text, block));
    EXPECT_TRUE(cut) << cut.error().describe();
    if (cut) expect_same(*cut, want);
  }
  return want_findings;
}

fs::path shared_profiles() { return fs::path(PERFGAP_SHARED_DIR) / "fixtures" / "profiles"; }

}  // namespace

TEST(KinetoStream, GeneratedTracesMatchTheExpectationWholeAndInBlocks) {
  std::vector<std::pair<std::string, gen::Scenario>> cases{{"exposed_comm", gen::exposed_comm(2, 3, 30, 15)},
                                                           {"exposed_comm no ranges", gen::exposed_comm(1, 3, 30, 15, false)},
                                                           {"launch_bound", gen::launch_bound(1, 3, 50)},
                                                           {"overlapped", gen::overlapped(2, 3)},
                                                           {"large with steps", gen::large(1, 5000, 500, true)}};
  for (const auto& [what, s] : cases)
    for (int rank : {-1, 1}) {
      SCOPED_TRACE(what + " rank " + std::to_string(rank));
      check_against_expectation(gen::kineto_json(s, s.gpus.size() - 1, rank));
    }
}

TEST(KinetoStream, EveryRealTraceMatchesTheExpectationAndStreamsFromGzip) {
  if (!fs::is_directory(shared_profiles())) GTEST_SKIP() << "no shared fixtures at " << shared_profiles();
  int n = 0;
  for (const auto& e : fs::directory_iterator(shared_profiles())) {
    auto name = e.path().filename().string();
    if (name.rfind("kineto_", 0) != 0) continue;
    SCOPED_TRACE(name);
    ++n;
    auto bytes = fixture::read_file(e.path());
    auto text = parsers::gunzip(bytes, 1u << 30);
    ASSERT_TRUE(text) << text.error();
    const std::string want = check_against_expectation(*text, {7u, 4096u});
    ASSERT_FALSE(want.empty());
    // The .gz inflated a block at a time from small compressed blocks, as the CLI reads it.
    parsers::GunzipSource z(parsers::blocks_of(bytes, 1000), 1u << 30, 4096);
    auto streamed = parsers::read_kineto([&] { return z.next(); });
    ASSERT_TRUE(streamed) << streamed.error().describe();
    EXPECT_EQ(findings_json(*streamed), want);
  }
  EXPECT_EQ(n, 5);
}

// Fields in any order and repeated, metadata after the events, values of unexpected types:
// the model spelled out by hand.
TEST(KinetoStream, FieldOrderRepeatsAndLateMetadataGiveTheModelSpelledOut) {
  const std::string trace = R"({"traceEvents": [
    7, "x", [1, {"ph": "X"}], null,
    {"args": {"stream": 9, "device": 3, "correlation": 11, "extra": {"deep": [[{"device": 99}]]}}, "dur": 2.5, "name": "gemm\u00e9", "ts": 100, "cat": "kernel", "ph": "X"},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 90, "dur": 4, "args": {"correlation": 11}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 50, "dur": 1, "args": {"correlation": 11}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic_4", "ts": 200, "dur": 10, "pid": 5,
     "args": {"Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 512, "Group size": 8, "dtype": "BFloat16", "correlation": 12}},
    {"ph": "X", "cat": "kernel", "name": "k2", "ts": 300, "dur": 1, "args": {"device": 1, "stream": 4}, "args": 5},
    {"ph": "i", "cat": "kernel", "name": "instant", "ts": 1, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "k3", "ts": {"v": 1}, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "k4", "ts": 18446744073709551615, "dur": 1},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy", "ts": 400.0004, "dur": 0.002, "args": {"device": 3}},
    {"ph": "X", "ph": 5, "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 80, "dur": 400},
    {"ph": "X", "cat": "kernel", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 1}
  ],
  "deviceProperties": [{"name": "GPU three", "id": 3}, {"id": 1}, 4],
  "distributedInfo": {"world_size": 8, "rank": 2, "backend": "nccl"},
  "traceEvents": []})";
  auto p = parsers::parse_kineto(trace);
  ASSERT_TRUE(p) << p.error().describe();
  ASSERT_EQ(p->acts.size(), 4u);
  // gemmé on device 3 (args before cat), launched by the first call of correlation 11.
  const auto& a = p->acts[0];
  EXPECT_EQ(a.start, 100'000);
  EXPECT_EQ(a.end, 102'500);
  EXPECT_EQ(a.stream, 9u);
  EXPECT_EQ(a.api_start, 90'000);
  EXPECT_EQ(a.api_end, 94'000);
  EXPECT_EQ(p->names[a.name], "gemm\xc3\xa9");
  EXPECT_EQ(p->gpus[a.gpu].device, 3);
  EXPECT_EQ(p->gpus[a.gpu].key, "rank2.gpu3");
  EXPECT_EQ(p->gpus[a.gpu].label, "rank 2 GPU 3 (GPU three)");
  // The NCCL kernel of NCCL 2.19+ naming: its collective from the args, 1024 bf16, on pid 5.
  const auto& n = p->acts[1];
  EXPECT_EQ(n.coll, Coll::AllReduce);
  EXPECT_EQ(n.msg_bytes, 2048u);
  EXPECT_EQ(n.group_size, 8u);
  EXPECT_EQ(p->gpus[n.gpu].device, 5);
  EXPECT_EQ(p->gpus[n.gpu].label, "rank 2 GPU 5");
  EXPECT_EQ(n.api_start, -1);  // no call of correlation 12
  // k2: its last args is no object, so no device (GPU 0: no pid either) and no stream.
  const auto& k2 = p->acts[2];
  EXPECT_EQ(p->gpus[k2.gpu].device, 0);
  EXPECT_EQ(k2.stream, 0u);
  // The memcpy: µs fractions to the nearest ns.
  const auto& m = p->acts[3];
  EXPECT_EQ(m.kind, ActKind::memcpy);
  EXPECT_EQ(m.start, 400'000);
  EXPECT_EQ(m.end, 400'002);
  EXPECT_EQ(m.name, 0u);
  // The annotation keeps its "X" (a later ph that is no string does not count); cat's last value counts.
  ASSERT_EQ(p->ranges.size(), 1u);
  EXPECT_EQ(p->names[p->ranges[0].name], "ProfilerStep#1");
  EXPECT_EQ(p->api_calls, 2u);
  std::vector<std::pair<std::string, std::string>> sys{{"world_size", "8"}, {"backend", "nccl"}, {"GPU 3", "GPU three"}, {"rank", "2"}};
  EXPECT_EQ(p->system, sys);
  ASSERT_EQ(p->notes.size(), 1u);
  EXPECT_EQ(p->notes[0], "2 events without a usable ts/dur were left out");  // k3 and k4
  for (std::size_t block : {1u, 3u, 64u}) {
    auto cut = parsers::read_kineto(parsers::blocks_of(trace, block));
    ASSERT_TRUE(cut) << cut.error().describe();
    expect_same(*cut, *p);
  }
  // The first traceEvents counts: one that is no array is an error, even with a later array.
  auto second = parsers::parse_kineto(R"({"traceEvents": 1, "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}]})");
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("without a traceEvents array"), std::string::npos);
}

TEST(KinetoStream, ErrorsNameTheLineAndByteAtEveryCut) {
  auto text = gen::kineto_json(gen::exposed_comm(1, 1, 30, 15), 0, 0);
  for (std::size_t cut = 1; cut + 1 < text.size(); cut += 97) {  // the last byte is a newline after the root
    auto part = text.substr(0, cut);
    auto whole = parsers::parse_kineto(part);
    ASSERT_FALSE(whole) << cut;
    auto blocks = parsers::read_kineto(parsers::blocks_of(part, 5));
    ASSERT_FALSE(blocks) << cut;
    EXPECT_EQ(whole.error().describe(), blocks.error().describe()) << cut;
    EXPECT_NE(whole.error().message.find("truncated JSON"), std::string::npos) << cut << ": " << whole.error().message;
    EXPECT_NE(whole.error().message.find("at byte " + std::to_string(cut)), std::string::npos) << whole.error().message;
    EXPECT_EQ(whole.error().line, 1 + std::count(part.begin(), part.end(), '\n')) << cut;
  }
  // Bad JSON in the middle of a later block: its byte and line.
  std::string bad = "{\"traceEvents\": [\n" + std::string(10000, ' ') + "\n{\"ph\": \"X\",\n \"cat\": kernel}]}";
  auto at = bad.find("kernel}");
  for (std::size_t block : {0u, 1u, 333u}) {
    auto r = parsers::read_kineto(parsers::blocks_of(bad, block));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().line, 4);
    EXPECT_NE(r.error().message.find("not valid JSON (Invalid value.) at byte " + std::to_string(at)), std::string::npos) << r.error().message;
  }
  // A number too big, started in an earlier block: the line of its start.
  std::string big = "{\"traceEvents\": [\n{\"ts\": 1e" + std::string(400, '9') + "}]}";
  auto r = parsers::read_kineto(parsers::blocks_of(big, 16));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().line, 2);
  EXPECT_EQ(r.error().describe(), parsers::parse_kineto(big).error().describe());
  // Invalid UTF-8 and what follows the root.
  auto utf = parsers::parse_kineto("{\"traceEvents\": [{\"name\": \"\xff\"}]}");
  ASSERT_FALSE(utf);
  EXPECT_NE(utf.error().message.find("not valid UTF-8"), std::string::npos);
  auto two = parsers::parse_kineto("{\"traceEvents\": []} {}");
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().message.find("not valid JSON"), std::string::npos) << two.error().message;
  EXPECT_EQ(parsers::parse_kineto("  \n ").error().message, "empty");
  EXPECT_EQ(parsers::parse_kineto("\n42").error().line, 1);  // "\n[1]" is a bare array (the format of 2020) of one non-event
}

// The reader checks UTF-8 outside RapidJSON (a block at a time) and parses without its
// validation: the error must be the one of RapidJSON's validating parse, at every cut.
TEST(KinetoStream, InvalidUtf8IsFoundWhereAValidatingParseStops) {
  using namespace std::string_literals;
  const std::string head = "{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"dur\": 2, \"name\": \"";
  const std::string tail = "\"}\n]}\n";
  std::vector<std::string> texts = {
      head + "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" + tail,  // valid: 2, 3 and 4 bytes
      head + "\xff" + tail,
      head + "ab\xc3" + tail,                      // a lead whose tail is the closing quote
      head + "\xe2\x82" + tail,
      head + "\xc3\n\n" + tail,                     // tail bytes that are newlines
      head + "\xed\xa0\x80" + tail,                  // a surrogate
      head + "\xc0\xaf" + tail,                      // overlong
      head + "\xf4\x90\x80\x80" + tail,              // beyond U+10FFFF
      head + "ok\\u00e9 \xc3\xa9\x80" + tail,         // a stray continuation after a valid one
      head + "x\\q\xff" + tail,                     // a bad escape before it: that error first
      head + "x\xff\\q" + tail,                     // a bad escape after it: the UTF-8 first
      head + "x\xff\x01" + tail,                     // a control character after it
      "{\"traceEvents\": [\n\xc3\xa9]}",              // non-ASCII outside a string, valid UTF-8
      "{\"traceEvents\": [\n\xff]}",                  // ... and invalid
      "{\"traceEvents\": []}\n\xff",                  // after the root
      "{\"traceEvents\": [{\"name\": 12\xff}]}",       // after a number
      head + "\xe2\x82",                           // cut inside the sequence
      head + "\xc3\xa9\xe2",                        // ... after a valid one
  };
  // The whole document through RapidJSON's own validating reader.
  auto reference = [](const std::string& text) {
    rapidjson::Reader reader;
    rapidjson::StringStream in(text.c_str());
    rapidjson::BaseReaderHandler<> h;
    auto r = reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag | rapidjson::kParseFullPrecisionFlag>(in, h);
    return r;
  };
  for (std::size_t t = 0; t < texts.size(); ++t) {
    const std::string& text = texts[t];
    SCOPED_TRACE("text " + std::to_string(t));
    auto ref = reference(text);
    auto whole = parsers::parse_kineto(text);
    if (ref.Code() == rapidjson::kParseErrorStringInvalidEncoding) {
      ASSERT_FALSE(whole);
      EXPECT_EQ(whole.error().message, "not valid UTF-8 at byte " + std::to_string(ref.Offset()));
      EXPECT_EQ(whole.error().line, 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(ref.Offset()), '\n'));
    } else if (ref.IsError()) {
      ASSERT_FALSE(whole);
      EXPECT_EQ(whole.error().message.find("not valid UTF-8"), std::string::npos) << whole.error().message;
      EXPECT_NE(whole.error().message.find("at byte " + std::to_string(ref.Offset())), std::string::npos) << whole.error().message;
    } else {
      ASSERT_TRUE(whole) << whole.error().describe();
    }
    for (std::size_t block = 1; block <= 9; ++block) {
      auto cut = parsers::read_kineto(parsers::blocks_of(text, block));
      ASSERT_EQ(static_cast<bool>(cut), static_cast<bool>(whole)) << block;
      if (!whole) {
        EXPECT_EQ(cut.error().describe(), whole.error().describe()) << block;
      }
    }
  }
}

TEST(KinetoStream, ASourceThatFailsGivesItsReason) {
  auto text = gen::kineto_json(gen::exposed_comm(1, 1, 30, 15), 0);
  int calls = 0;
  auto r = parsers::read_kineto([&]() -> tl::expected<std::string_view, std::string> {
    if (++calls == 3) return tl::unexpected(std::string("read error: Input/output error"));
    return std::string_view(text).substr(static_cast<std::size_t>(calls - 1) * 100, 100);
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().describe(), "read error: Input/output error");
  // Even after the JSON is complete: the end of the input was not reached cleanly.
  calls = 0;
  auto late = parsers::read_kineto([&]() -> tl::expected<std::string_view, std::string> {
    if (++calls == 1) return std::string_view(text);
    return tl::unexpected(std::string("gzip: truncated gzip data"));
  });
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().describe(), "gzip: truncated gzip data");
}

TEST(KinetoStream, GunzipSourceInflatesInBlocksAndSaysWhatIsWrong) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i * 7919 % 10007) + "\n";
  auto z = perfgap::fixture::gzip_text(text);
  for (std::size_t in_block : {1u, 100u, 1u << 20}) {
    parsers::GunzipSource src(parsers::blocks_of(z, in_block), 1u << 30, 1000);
    std::string out;
    std::size_t blocks = 0;
    for (;;) {
      auto b = src.next();
      ASSERT_TRUE(b) << b.error();
      if (b->empty()) break;
      EXPECT_LE(b->size(), 1000u);
      out.append(*b);
      ++blocks;
    }
    EXPECT_EQ(out, text);
    EXPECT_EQ(blocks, (text.size() + 999) / 1000);  // every block full but the last
    EXPECT_TRUE(src.next() && src.next()->empty());
  }
  for (std::size_t cut : {std::size_t{5}, z.size() / 2, z.size() - 1}) {
    parsers::GunzipSource src(parsers::blocks_of(std::string_view(z).substr(0, cut), 64), 1u << 30, 4096);
    tl::expected<std::string_view, std::string> b;
    while ((b = src.next()) && !b->empty()) {
    }
    ASSERT_FALSE(b) << cut;
    EXPECT_NE(b.error().find("truncated gzip data"), std::string::npos) << b.error();
    EXPECT_EQ(src.next().error(), b.error());  // it stays failed
  }
  std::string corrupt = z;
  corrupt[20] = static_cast<char>(corrupt[20] ^ 0x55);
  corrupt[21] = static_cast<char>(corrupt[21] ^ 0x55);
  auto c = parsers::gunzip(corrupt, 1u << 30);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("corrupt gzip data"), std::string::npos) << c.error();
  parsers::GunzipSource small(parsers::blocks_of(z), 5000, 1000);
  tl::expected<std::string_view, std::string> b;
  while ((b = small.next()) && !b->empty()) {
  }
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error(), "decompressed data larger than the limit");
}

TEST(KinetoStream, BlockReaderHandsOutWholeBlocksOfAFile) {
  fixture::TempDir t;
  std::string bytes;
  for (int i = 0; i < 1000; ++i) bytes += static_cast<char>(i * 31);
  auto path = fixture::write_in(t, "f", bytes);
  auto r = sys::BlockReader::open(path, 1u << 20, 300);
  ASSERT_TRUE(r) << r.error();
  std::string got;
  std::vector<std::size_t> sizes;
  for (;;) {
    auto b = r->next();
    ASSERT_TRUE(b) << b.error();
    if (b->empty()) break;
    sizes.push_back(b->size());
    got.append(*b);
  }
  EXPECT_EQ(got, bytes);
  EXPECT_EQ(sizes, (std::vector<std::size_t>{300, 300, 300, 100}));
  auto small = sys::BlockReader::open(path, 999, 300);
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error(), "larger than 999 bytes");
  EXPECT_FALSE(sys::BlockReader::open(t.path(), 1u << 20));  // a directory
  EXPECT_FALSE(sys::BlockReader::open(t.file("none"), 1u << 20));
}
