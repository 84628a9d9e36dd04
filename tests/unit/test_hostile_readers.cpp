// Issue 28: the profile readers (nsys, Kineto, perf.data) and the report renderers under hostile
// input. Every input is generated here; each case is an error or the right answer within a
// second, never a hang, a crash or memory that grows with the shape of the input.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "analyzers/analyzers.hpp"
#include "files.hpp"
#include "parsers/perf_data.hpp"
#include "parsers/profile.hpp"
#include "perf_data_gen.hpp"
#include "profile_gen.hpp"
#include "report/outgoing.hpp"
#include "report/redact.hpp"
#include "report/render.hpp"
#include "report/text_style.hpp"

using namespace perfgap;
using fixture::read_file;
using fixture::TempDir;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
// Each case takes well under a second; the bound only tells a hang or a quadratic path (minutes
// before the fixes) from a loaded CI machine.
constexpr double kSlow = 10.0;

// An SQLite file made by `sql` (and, with `wal`, left in WAL mode, checkpointed), as bytes.
std::string sqlite_bytes(const TempDir& t, const std::string& sql, bool wal = false) {
  static int n = 0;
  auto path = t.file("db" + std::to_string(n++) + ".sqlite");
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* e = nullptr;
  if (wal) {
    EXPECT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, &e), SQLITE_OK);
  }
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &e), SQLITE_OK) << (e ? e : "");
  sqlite3_free(e);
  sqlite3_close(db);
  return read_file(path);
}

std::string nsys_error(const std::string& bytes) {
  auto p = parsers::read_nsys_sqlite(bytes);
  return p ? std::string("(read)") : p.error().message;
}

constexpr const char* kStrings = "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL); INSERT INTO StringIds VALUES (1, 'gemm');";
constexpr const char* kKernelCols = "start INTEGER, end INTEGER, deviceId INTEGER, correlationId INTEGER, globalPid INTEGER, streamId INTEGER, shortName INTEGER";

}  // namespace

// ---- nsys: SQL stored in the file never runs -------------------------------------------------

TEST(HostileNsys, RecursiveViewAsTheKernelTableIsRefusedAtOnce) {
  TempDir t;
  auto bytes = sqlite_bytes(t, std::string(kStrings) +
                                   "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(start, end, deviceId, correlationId, globalPid, streamId, shortName) "
                                   "AS (SELECT 1, 2, 0, 1, 0, 7, 1 UNION ALL SELECT start + 1, end + 1, 0, 1, 0, 7, 1 FROM r) SELECT * FROM r;");
  auto t0 = Clock::now();
  auto e = nsys_error(bytes);
  EXPECT_LT(seconds_since(t0), kSlow);
  EXPECT_NE(e.find("CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table"), std::string::npos) << e;
  EXPECT_NE(e.find("runs no SQL stored in a profile"), std::string::npos) << e;
}

TEST(HostileNsys, StringIdsViewOfHugeStringsIsRefusedWithoutAllocatingThem) {
  TempDir t;
  auto bytes = sqlite_bytes(t, std::string("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (") + kKernelCols + "); INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 1, 0, 7, 1);" +
                                   "CREATE VIEW StringIds AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 40) "
                                   "SELECT x AS id, printf('%.*c', 50000000, 'a') AS value FROM c;");
  EXPECT_LT(bytes.size(), 20000u);
  auto t0 = Clock::now();
  auto e = nsys_error(bytes);
  EXPECT_LT(seconds_since(t0), kSlow);
  EXPECT_NE(e.find("StringIds is a view, not a table"), std::string::npos) << e;
}

TEST(HostileNsys, TwentyThousandStackedViewsAreAnErrorNotACrash) {
  TempDir t;
  // Written into sqlite_master directly, in one statement (CREATE VIEW checks each view: minutes for 20,000).
  std::string sql = std::string(kStrings) + "CREATE TABLE k0 (" + kKernelCols + "); PRAGMA writable_schema=ON; BEGIN;" +
                    "INSERT INTO sqlite_master VALUES ('view', 'v0', 'v0', 0, 'CREATE VIEW v0 AS SELECT * FROM k0');" +
                    "INSERT INTO sqlite_master SELECT 'view', 'v' || x, 'v' || x, 0, 'CREATE VIEW v' || x || ' AS SELECT * FROM v' || (x - 1) FROM "
                    "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 19999) SELECT x FROM c);" +
                    "INSERT INTO sqlite_master VALUES ('view', 'CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_KERNEL', 0, "
                    "'CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM v19999'); COMMIT;";
  auto bytes = sqlite_bytes(t, sql);
  auto t0 = Clock::now();
  auto e = nsys_error(bytes);
  EXPECT_LT(seconds_since(t0), kSlow);
  EXPECT_NE(e.find("is a view, not a table"), std::string::npos) << e;
}

TEST(HostileNsys, TriggersVirtualTablesAndComputedColumnsAreRefused) {
  TempDir t;
  std::string kernels = std::string("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (") + kKernelCols + "); INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 1, 0, 7, 1);";
  auto trigger = nsys_error(sqlite_bytes(t, std::string(kStrings) + kernels + "CREATE TRIGGER grow AFTER INSERT ON StringIds BEGIN SELECT 1; END;"));
  EXPECT_NE(trigger.find("a trigger (grow) on StringIds"), std::string::npos) << trigger;
  // A virtual generated column computes 50 MB per row from the schema's SQL.
  auto computed = nsys_error(sqlite_bytes(
      t, std::string(kStrings) + "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, shortName AS (printf('%.*c', 50000000, 'x')));"
                                 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end) VALUES (1, 2);"));
  EXPECT_NE(computed.find("CUPTI_ACTIVITY_KIND_KERNEL.shortName is a generated column"), std::string::npos) << computed;
  // A view under a name perfgap does not read is left alone.
  auto other = parsers::read_nsys_sqlite(sqlite_bytes(t, std::string(kStrings) + kernels + "CREATE VIEW mine AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x FROM r) SELECT * FROM r;"));
  ASSERT_TRUE(other) << other.error().describe();
  EXPECT_EQ(other->acts.size(), 1u);
}

TEST(HostileNsys, CheckpointedWalModeExportReadsLikeTheSameExport) {
  TempDir t;
  auto path = t.file("wal.sqlite");
  ASSERT_EQ(gen::write_nsys_sqlite(gen::exposed_comm(1, 3, 30, 15), path), "");
  auto plain = parsers::read_nsys_sqlite(read_file(path));
  ASSERT_TRUE(plain);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto bytes = read_file(path);
  ASSERT_EQ(bytes[18], 2);
  ASSERT_EQ(bytes[19], 2);
  auto wal = parsers::read_nsys_sqlite(bytes);
  ASSERT_TRUE(wal) << wal.error().describe();
  EXPECT_EQ(wal->acts.size(), plain->acts.size());
  EXPECT_EQ(wal->api_calls, plain->api_calls);
}

// ---- Kineto: bounded by a stated depth and device count ---------------------------------------

TEST(HostileKineto, DeepNestingIsRefusedPastTheStatedDepth) {
  std::string deep = R"({"traceEvents":[],"x":)" + std::string(5'000'000, '[');
  auto t0 = Clock::now();
  auto p = parsers::parse_kineto(deep);
  EXPECT_LT(seconds_since(t0), kSlow);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("nested deeper than 1000 levels"), std::string::npos) << p.error().message;
  // 999 levels inside an event's args are read as ever.
  std::string ok = R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"args":{"device":0,"deep":)" + std::string(990, '[') +
                   std::string(990, ']') + "}}]}";
  EXPECT_TRUE(parsers::parse_kineto(ok));
}

TEST(HostileKineto, MoreDevicesThanTheCapAreRefused) {
  std::string trace = R"({"traceEvents":[)";
  for (int d = 0; d < 1025; ++d)
    trace += (d ? "," : "") + std::string(R"({"ph":"X","cat":"kernel","name":"k","ts":)") + std::to_string(d) + R"(,"dur":1,"args":{"device":)" + std::to_string(d) + "}}";
  trace += "]}";
  auto p = parsers::parse_kineto(trace);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("more than 1024 distinct GPU devices"), std::string::npos) << p.error().message;
  // 1024 are read.
  auto cut = trace.substr(0, trace.rfind(R"(,{"ph")")) + "]}";
  auto ok = parsers::parse_kineto(cut);
  ASSERT_TRUE(ok) << ok.error().describe();
  EXPECT_EQ(ok->gpus.size(), 1024u);
}

TEST(HostileKineto, TimesNearTheInt64LimitAreLeftOutNotWrapped) {
  std::string trace = R"({"traceEvents":[
    {"ph":"X","cat":"kernel","name":"a","ts":100,"dur":10,"args":{"device":0}},
    {"ph":"X","cat":"kernel","name":"b","ts":9000000000000000,"dur":5,"args":{"device":0}},
    {"ph":"X","cat":"kernel","name":"c","ts":-8999999999999999,"dur":5,"args":{"device":0}},
    {"ph":"X","cat":"kernel","name":"d","ts":200,"dur":9000000000000000.0,"args":{"device":0}}]})";
  auto p = parsers::parse_kineto(trace);
  ASSERT_TRUE(p) << p.error().describe();
  ASSERT_EQ(p->acts.size(), 1u);
  EXPECT_EQ(p->acts[0].end - p->acts[0].start, 10'000);
  bool noted = false;
  for (const auto& n : p->notes) noted = noted || n.find("3 events without a usable ts/dur") != std::string::npos;
  EXPECT_TRUE(noted);
}

// PyTorch's autograd profiler (2020): a bare array; kernels on "CUDA functions", tid the device.
TEST(HostileKineto, BareArrayTraceOf2020IsRead) {
  std::string trace = R"([{"name": "aten::mm", "ph": "X", "ts": 10.0, "dur": 50.0, "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "aten::mm", "ph": "s", "ts": 10.0, "tid": 1, "pid": "CPU functions", "id": 1, "cat": "cpu_to_cuda", "args": {}},
    {"name": "volta_sgemm_128x64_nn", "ph": "X", "ts": 20.0, "dur": 30.0, "tid": 0, "pid": "CUDA functions", "args": {}},
    {"name": "volta_sgemm_128x64_nn", "ph": "X", "ts": 60.0, "dur": 30.0, "tid": 1, "pid": "CUDA functions", "args": {}}])";
  auto p = parsers::parse_kineto(trace);
  ASSERT_TRUE(p) << p.error().describe();
  ASSERT_EQ(p->acts.size(), 2u);
  ASSERT_EQ(p->gpus.size(), 2u);
  EXPECT_EQ(p->gpus[p->acts[1].gpu].device, 1);
  EXPECT_EQ(p->names[p->acts[0].name], "volta_sgemm_128x64_nn");
  // Kineto's 2021 categories in a bare array.
  auto k = parsers::parse_kineto(R"([{"ph":"X","cat":"Kernel","name":"k","ts":1,"dur":2,"args":{"device":3}}])");
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->gpus.at(0).device, 3);
  auto scalar = parsers::parse_kineto("42");
  ASSERT_FALSE(scalar);
  EXPECT_NE(scalar.error().message.find("not a JSON object or array"), std::string::npos);
}

// Kineto of 2021: ProfilerStep#N as an operator; every step is an iteration.
TEST(HostileKineto, OperatorCategoryProfilerStepsAreIterations) {
  auto s = gen::exposed_comm(1, 4, 30, 15);
  std::string json = gen::kineto_json(s, 0);
  std::size_t steps = 0;
  const std::string annotation = R"("cat": "user_annotation")";
  for (std::size_t at = json.find(annotation); at != std::string::npos; at = json.find(annotation, at)) {
    json.replace(at, annotation.size(), R"("cat": "Operator")");
    ++steps;
  }
  ASSERT_EQ(steps, 4u) << json.substr(0, 400);
  auto p = parsers::parse_kineto(json);
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_EQ(p->ranges.size(), 4u);
  auto findings = analyzers::analyze_profile(*p, "t", {});
  bool four = false;
  for (const auto& f : findings)
    for (const auto& [k, v] : f.metrics)
      if (f.id == "profile.iterations" && k == "iterations") four = v == 4;
  EXPECT_TRUE(four);
}

TEST(HostileProfile, TooFewKernelsAreNotJudgedHostBound) {
  // A startup-only capture: 33 kernels, each launched long before it runs after a gap.
  gen::Scenario s = gen::launch_bound(1, 1, 33);
  auto p = parsers::parse_kineto(gen::kineto_json(s, 0));
  ASSERT_TRUE(p) << p.error().describe();
  for (const auto& f : analyzers::analyze_profile(*p, "t", {}))
    if (f.id == "profile.gpu_idle" || f.id == "profile.launch_bound") {
      EXPECT_EQ(f.status, report::Status::skip) << f.id << ": " << f.title;
      EXPECT_NE(f.title.find("too few kernels to judge: 33 kernels in the profile (at least 50)"), std::string::npos) << f.title;
    }
  // 50 are judged.
  auto judged = parsers::parse_kineto(gen::kineto_json(gen::launch_bound(1, 1, 50), 0));
  ASSERT_TRUE(judged);
  for (const auto& f : analyzers::analyze_profile(*judged, "t", {}))
    if (f.id == "profile.launch_bound") {
      EXPECT_NE(f.status, report::Status::skip) << f.title;
    }
}

// ---- perf.data ------------------------------------------------------------------------------

namespace {

// A file-mode perf.data of `attrs` attrs whose id sections each cover the whole file.
std::string overlapping_ids(std::size_t attrs) {
  const std::size_t attr_size = 136 + 16;
  const std::size_t total = 104 + attrs * attr_size;
  std::string b(total, '\0');
  auto put64 = [&](std::size_t at, std::uint64_t v) { std::memcpy(b.data() + at, &v, 8); };
  auto put32 = [&](std::size_t at, std::uint32_t v) { std::memcpy(b.data() + at, &v, 4); };
  std::memcpy(b.data(), "PERFILE2", 8);
  put64(8, 104);
  put64(16, attr_size);
  put64(24, 104);  // attrs
  put64(32, attrs * attr_size);
  put64(40, total);  // data: empty
  put64(48, 0);
  for (std::size_t i = 0; i < attrs; ++i) {
    std::size_t at = 104 + i * attr_size;
    put32(at + 4, 136);
    put64(at + 24, 0x10007);  // IP | TID | TIME | IDENTIFIER
    put64(at + 136, 0);       // ids: the whole file
    put64(at + 144, total);
  }
  return b;
}

}  // namespace

TEST(HostilePerfData, OverlappingIdSectionsAreRefusedInLinearTime) {
  auto b = overlapping_ids(4000);  // 608 KB: 4000 x 76,000 ids before
  auto t0 = Clock::now();
  auto d = parsers::parse_perf_data(b);
  EXPECT_LT(seconds_since(t0), kSlow);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find("id sections hold"), std::string::npos) << d.error().message;
  // One attr whose ids are the whole file is still read (ids a real recording never overlaps).
  auto one = parsers::parse_perf_data(overlapping_ids(1));
  if (!one) {
    EXPECT_EQ(one.error().message.find("id sections"), std::string::npos) << one.error().message;
  }
}

TEST(HostilePerfData, CompressedRecordsOfExactlyTheOutputBufferAreRead) {
  // 8,192 samples of 32 bytes fill 256 KiB; records of 256 KiB (and around it) decompress.
  for (std::size_t chunk : {std::size_t{256} << 10, (std::size_t{256} << 10) - 8, (std::size_t{256} << 10) + 8, std::size_t{512} << 10}) {
    for (int kind : {81, 83}) {
      auto spec = gen::demo_spec({{"do_syscall_64", 60}}, 40);
      spec.compressed = kind;
      spec.compress_chunk = chunk;
      spec.repeat = 200;
      auto d = parsers::parse_perf_data(gen::write_perf_data(spec));
      ASSERT_TRUE(d) << chunk << " " << kind << ": " << d.error().describe();
      std::uint64_t samples = 0;
      for (const auto& l : d->leaves) samples += l.samples;
      EXPECT_EQ(samples, 200u * 100u) << chunk;
    }
  }
}

TEST(HostilePerfData, MappingNamesAreCapped) {
  auto spec = gen::demo_spec({{"do_syscall_64", 60}}, 40);
  spec.pipe = true;
  spec.compressed = 81;
  spec.compress_chunk = 1 << 20;
  spec.mmaps.push_back({7000, 0x400000, 0x1000, 0, "/x/" + std::string(60000, 'a'), true});  // one of 60 KB (a record is at most 64 KiB)
  for (std::uint32_t i = 0; i < 5000; ++i)  // 5,000 distinct names of 4,500 bytes: 22 MB
    spec.mmaps.push_back({7001 + i, 0x400000, 0x1000, 0, "/" + std::to_string(i) + std::string(4500, 'a'), true});
  auto d = parsers::parse_perf_data(gen::write_perf_data(spec));
  ASSERT_TRUE(d) << d.error().describe();
  std::size_t bytes = 0;
  for (const auto& n : d->dsos) bytes += n.size();
  EXPECT_LE(bytes, (16u << 20) + 4096u);
  bool capped = false;
  for (const auto& n : d->dsos) {
    EXPECT_LE(n.size(), 4096u);
    capped = capped || n.find("mapping names past 16 MiB") != std::string::npos;
  }
  EXPECT_TRUE(capped);
}

// ---- renderers ------------------------------------------------------------------------------

namespace {

report::Report report_with(report::Finding f) {
  report::Report r;
  r.tool_version = "t";
  r.generated_at = "2026-01-01T00:00:00Z";
  r.source.kind = "analyze";
  r.findings.push_back(std::move(f));
  return r;
}

}  // namespace

TEST(HostileRender, JsonIsLinearInMetricsAndCapsThem) {
  report::Finding f;
  f.id = "profile.gpu_idle";
  f.layer = "workload";
  f.status = report::Status::warn;
  for (int i = 0; i < 200000; ++i) f.metric("idle_pct.gpu" + std::to_string(i), i);
  f.metric("idle_pct.gpu7", -1);  // a repeated name: its first place, its last value
  auto t0 = Clock::now();
  auto text = report::render_json(report_with(f));
  EXPECT_LT(seconds_since(t0), kSlow);
  auto j = nlohmann::ordered_json::parse(text);
  const auto& m = j["findings"][0]["metrics"];
  EXPECT_EQ(m.size(), report::kMaxMetricsPerFinding + 1);
  EXPECT_EQ(m["metrics_left_out"], 190001);
  EXPECT_EQ(m["idle_pct.gpu7"], 7);  // the repeat is past the cap
  EXPECT_NE(text.find("190001 more metrics left out"), std::string::npos);
  // Under the cap a repeated name keeps its first place and takes its last value.
  report::Finding g = f;
  g.metrics = {{"a", 1}, {"b", 2}, {"a", 3}};
  auto jg = nlohmann::ordered_json::parse(report::render_json(report_with(g)))["findings"][0]["metrics"];
  EXPECT_EQ(jg.dump(), R"({"a":3.0,"b":2.0})");
}

TEST(HostileRender, PrometheusSeriesPerNodeAreCapped) {
  report::Finding f;
  f.id = "fleet.outlier";
  f.layer = "workload";
  f.status = report::Status::warn;
  for (int i = 0; i < 5; ++i) f.metric("m" + std::to_string(i), i);
  std::vector<report::Finding> many(3000, f);  // 3,000 finding and 15,000 metric series asked for
  for (std::size_t i = 0; i < many.size(); ++i) many[i].subject = "s" + std::to_string(i);
  std::vector<report::NodeSection> sections{{"node-a", "2026-01-01T00:00:00Z", 1, &many}};
  auto t0 = Clock::now();
  auto text = report::render_prometheus(sections);
  EXPECT_LT(seconds_since(t0), kSlow);
  std::size_t finding_lines = 0, metric_lines = 0;
  for (std::size_t at = 0; (at = text.find("\nperfgap_finding{", at)) != std::string::npos; ++at) ++finding_lines;
  for (std::size_t at = 0; (at = text.find("\nperfgap_metric{", at)) != std::string::npos; ++at) ++metric_lines;
  EXPECT_EQ(finding_lines, report::kMaxPrometheusSeriesPerNode);
  EXPECT_EQ(metric_lines, report::kMaxPrometheusSeriesPerNode);
  EXPECT_NE(text.find("perfgap_series_left_out{node=\"node-a\"} "), std::string::npos);
  EXPECT_LT(text.size(), 2u << 20);
}

TEST(HostileRender, CredentialsInAnyTitleOrEvidenceAreRedactedInEveryFormat) {
  for (const std::string value : {"--token SECRETX", "Bearer SECRETX", "https://u:SECRETX@h/x", "eth0,--password=SECRETX"}) {
    report::Finding f;
    f.id = "nccl.env.devices";
    f.layer = "network";
    f.status = report::Status::fail;
    f.subject = "NCCL_SOCKET_IFNAME";
    f.title = "NCCL_SOCKET_IFNAME=" + value + " selects by name prefix; no interface here matches " + value;
    f.add("environ", "NCCL_SOCKET_IFNAME=" + value, "an interface of " + value);
    f.table = {{"name", "value"}, {"NCCL_SOCKET_IFNAME", value}};
    auto r = report_with(f);
    for (const auto& out : {report::render_json(r), report::render_text(r, {true, false}), report::render_junit(r), report::render_html(r),
                            report::render_prometheus(r, 1)}) {
      EXPECT_EQ(out.find("SECRETX"), std::string::npos) << value << "\n" << out;
    }
    EXPECT_NE(report::render_json(r).find("NCCL_SOCKET_IFNAME="), std::string::npos);
  }
  EXPECT_EQ(report::redact_text("NCCL_SOCKET_IFNAME=--token X selects"), "NCCL_SOCKET_IFNAME=--token <redacted>");
  EXPECT_EQ(report::redact_text("NCCL_IB_HCA=https://u:X@h/x selects"), "NCCL_IB_HCA=https://<redacted>");
  EXPECT_EQ(report::redact_text("NCCL_IB_HCA=mlx5_0,mlx5_1 selects by name prefix"), "NCCL_IB_HCA=mlx5_0,mlx5_1 selects by name prefix");
}

TEST(HostileRender, BidiOverridesAreEscapedInTerminalText) {
  EXPECT_EQ(report::printable("gpu\u202Eexe.txt"), "gpu\\u202eexe.txt");
  EXPECT_EQ(report::printable("a\u2066b\u2069c\u200Fd\u061Ce"), "a\\u2066b\\u2069c\\u200fd\\u061ce");
  EXPECT_EQ(report::printable("H100 \u00e9t\u00e9 \u2014 ok"), "H100 \u00e9t\u00e9 \u2014 ok");
}
