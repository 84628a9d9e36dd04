// The native perf.data reader (parsers/perf_data.hpp) on recordings written by
// tests/support/perf_data_gen in every variant, on damaged bytes, and on the real recordings of
// ../shared/fixtures/profiles (skipped where absent).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analyzers/analyzers.hpp"
#include "parsers/perf_data.hpp"
#include "perf_data_gen.hpp"

using namespace perfgap;
using gen::PerfDataSpec;

namespace {

const std::vector<std::pair<std::string, int>> kSmmu = {{"arm_smmu_cmdq_issue_cmdlist", 30}, {"do_syscall_64", 10}};

double share(const parsers::PerfProfile& p, const std::string& sym) {
  double s = 0;
  for (const auto& r : p.symbols)
    if (r.symbol == sym) s += r.self_pct;
  return s;
}

const report::Finding* by_id(const std::vector<report::Finding>& v, const std::string& id) {
  for (const auto& f : v)
    if (f.id == id) return &f;
  return nullptr;
}

parsers::PerfProfile profile_of(const std::string& bytes, const std::string& kallsyms) {
  auto d = parsers::parse_perf_data(bytes);
  EXPECT_TRUE(d) << (d ? "" : d.error().describe());
  if (!d) return {};
  auto ks = parsers::parse_kallsyms(kallsyms);
  EXPECT_TRUE(ks);
  return parsers::perf_data_profile(*d, ks ? &*ks : nullptr, "test kallsyms");
}

}  // namespace

TEST(ParsersPerfData, EveryVariantGivesTheSameShares) {
  // 30 of 80 samples in arm_smmu_cmdq_issue_cmdlist: 37.5%; 10 in do_syscall_64: 12.5%.
  struct V {
    const char* name;
    void (*set)(PerfDataSpec&);
  };
  const V variants[] = {
      {"plain", [](PerfDataSpec&) {}},
      {"big-endian", [](PerfDataSpec& s) { s.big_endian = true; }},
      {"pipe", [](PerfDataSpec& s) { s.pipe = true; }},
      {"pipe big-endian", [](PerfDataSpec& s) { s.pipe = s.big_endian = true; }},
      {"attr v0 (64 bytes)", [](PerfDataSpec& s) { s.attr_size = 64; }},
      {"attr 96 bytes", [](PerfDataSpec& s) { s.attr_size = 96; }},
      {"compressed 81", [](PerfDataSpec& s) { s.compressed = 81; s.compress_chunk = 100; }},
      {"compressed2 83", [](PerfDataSpec& s) { s.compressed = 83; s.compress_chunk = 333; }},
      {"pipe compressed2 big-endian", [](PerfDataSpec& s) { s.pipe = s.big_endian = true; s.compressed = 83; }},
      {"two events by identifier", [](PerfDataSpec& s) { s.two_events = true; }},
      {"read group", [](PerfDataSpec& s) { s.read = true; }},
      {"raw", [](PerfDataSpec& s) { s.raw = true; }},
      {"no call chains", [](PerfDataSpec& s) { s.callchains = false; }},
  };
  for (const auto& v : variants) {
    SCOPED_TRACE(v.name);
    PerfDataSpec s = gen::demo_spec(kSmmu, 40);
    s.callchains = true;
    v.set(s);
    auto bytes = gen::write_perf_data(s);
    ASSERT_TRUE(parsers::looks_perf_data(bytes));
    auto d = parsers::parse_perf_data(bytes);
    ASSERT_TRUE(d) << d.error().describe();
    EXPECT_EQ(d->samples, 80u);
    EXPECT_EQ(d->unmatched_samples, 0u);
    EXPECT_EQ(d->pipe, s.pipe);
    EXPECT_EQ(d->big_endian, s.big_endian);
    EXPECT_EQ(d->compressed, s.compressed != 0);
    EXPECT_EQ(d->hostname, "gen-node");
    EXPECT_EQ(d->osrelease, "6.1.0-gen");
    EXPECT_EQ(d->arch, "x86_64");
    EXPECT_EQ(d->nr_cpus_online, 4u);
    EXPECT_EQ(d->cmdline, "perf record");
    EXPECT_EQ(d->attr_size, s.attr_size);
    ASSERT_TRUE(d->kernel_text);
    EXPECT_EQ(*d->kernel_text, s.kernel_text);
    if (s.callchains) {
      EXPECT_EQ(d->callchain_frames, 40u * 4 + 40u * 3);
    }
    auto p = parsers::perf_data_profile(*d, nullptr, "none");
    EXPECT_NEAR(p.unresolved_kernel_pct, 50.0, 1e-9);
    auto ks = parsers::parse_kallsyms(gen::demo_kallsyms(kSmmu));
    ASSERT_TRUE(ks);
    p = parsers::perf_data_profile(*d, &*ks, "test");
    EXPECT_NEAR(share(p, "arm_smmu_cmdq_issue_cmdlist"), 37.5, 1e-9);
    EXPECT_NEAR(share(p, "do_syscall_64"), 12.5, 1e-9);
    EXPECT_NEAR(share(p, "libc.so.6"), 25.0, 1e-9);
    EXPECT_NEAR(share(p, "python3.11"), 25.0, 1e-9);
    EXPECT_EQ(p.unresolved_kernel_pct, 0);
  }
}

TEST(ParsersPerfData, PeriodWeighsLikePerfReportAndCommandsAreKept) {
  PerfDataSpec s = gen::demo_spec(kSmmu, 40);
  for (auto& g : s.samples) g.period = g.kernel ? 3 : 1;  // kernel 40 x 3 = 120 of 160
  auto p = profile_of(gen::write_perf_data(s), gen::demo_kallsyms(kSmmu));
  EXPECT_NEAR(share(p, "arm_smmu_cmdq_issue_cmdlist"), 100.0 * 90 / 160, 1e-9);
  // Samples 0, 3, 6, ... of each symbol are the pt_data_worker thread (tid 101).
  bool worker = false, python = false;
  for (const auto& r : p.symbols) {
    if (r.symbol != "arm_smmu_cmdq_issue_cmdlist") continue;
    worker = worker || (r.comm == "pt_data_worker" && std::abs(r.self_pct - 100.0 * 30 / 160) < 1e-9);
    python = python || (r.comm == "python" && std::abs(r.self_pct - 100.0 * 60 / 160) < 1e-9);
  }
  EXPECT_TRUE(worker);
  EXPECT_TRUE(python);
  // Without PERF_SAMPLE_PERIOD every sample weighs attr.sample_period: the shares of counts.
  s.with_period = false;
  s.sample_period = 4000;
  p = profile_of(gen::write_perf_data(s), gen::demo_kallsyms(kSmmu));
  EXPECT_NEAR(share(p, "arm_smmu_cmdq_issue_cmdlist"), 37.5, 1e-9);
}

TEST(ParsersPerfData, KernelRelocatedByTheRecordingsTextMmap) {
  // KASLR: the recording's _text is 0x2e00000 above the kallsyms'.
  PerfDataSpec s = gen::demo_spec(kSmmu, 40);
  const std::uint64_t shift = 0x2e00000;
  s.kernel_text += shift;
  for (auto& g : s.samples)
    if (g.kernel) g.ip += shift;
  auto p = profile_of(gen::write_perf_data(s), gen::demo_kallsyms(kSmmu));
  EXPECT_NEAR(share(p, "arm_smmu_cmdq_issue_cmdlist"), 37.5, 1e-9);
}

TEST(ParsersPerfData, LostRecordsCounted) {
  PerfDataSpec s = gen::demo_spec(kSmmu, 40);
  s.lost = 7;
  auto d = parsers::parse_perf_data(gen::write_perf_data(s));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->lost, 8u);  // LOST of 7 and LOST_SAMPLES of 1
}

TEST(ParsersPerfData, DamagedInputIsAnErrorWithAnOffsetNeverACrash) {
  PerfDataSpec s = gen::demo_spec(kSmmu, 40);
  s.callchains = true;
  for (int comp : {0, 83}) {
    s.compressed = comp;
    const std::string good = gen::write_perf_data(s);
    // Every cut: an error (or, for a cut inside the feature sections, the data with fewer features).
    for (std::size_t n = 0; n < good.size(); n += (n < 200 ? 1 : 7)) {
      auto d = parsers::parse_perf_data(std::string_view(good).substr(0, n));
      if (!d) {
        EXPECT_FALSE(d.error().message.empty());
      }
    }
    // Flipped bytes anywhere: no crash, no hang.
    for (std::size_t at = 0; at < good.size(); at += 5) {
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] ^ 0x5a);
      (void)parsers::parse_perf_data(bad);
    }
  }
  s.compressed = 0;
  std::string good = gen::write_perf_data(s);
  // The first data record (the kernel MMAP) with size 0: an error naming its offset.
  const std::size_t data_off = 104 + (s.attr_size + 16) + 8;
  std::string zero = good;
  zero[data_off + 6] = zero[data_off + 7] = 0;
  auto d = parsers::parse_perf_data(zero);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find(fmt::format("offset {}", data_off)), std::string::npos) << d.error().message;
  EXPECT_NE(d.error().message.find("size 0"), std::string::npos) << d.error().message;
  // A record claiming more than the data section holds.
  std::string big = good;
  big[data_off + 6] = static_cast<char>(0xf8);
  big[data_off + 7] = static_cast<char>(0xff);
  d = parsers::parse_perf_data(big);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find("claims 65528 bytes"), std::string::npos) << d.error().message;
  // A data section past the end of the file.
  std::string past = good;
  past[48 + 4] = 0x10;
  d = parsers::parse_perf_data(past);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find("data section"), std::string::npos) << d.error().message;
  // Truncated header.
  d = parsers::parse_perf_data(good.substr(0, 50));
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find("offset 0"), std::string::npos);
  EXPECT_FALSE(parsers::parse_perf_data("not perf data at all"));
}

TEST(ParsersPerfData, ZstdBombIsAnErrorNotAHang) {
  // 96 MiB of FINISHED_ROUND records (valid, 8 bytes each) compress to a few KiB.
  std::string plain(96u << 20, '\0');
  for (std::size_t i = 0; i < plain.size(); i += 8) plain[i] = 68;  // type 68, misc 0, size 8 (LE)
  for (std::size_t i = 0; i < plain.size(); i += 8) plain[i + 6] = 8;
  std::string z(ZSTD_compressBound(plain.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), plain.data(), plain.size(), 1));
  ASSERT_LT(z.size(), 60000u);
  PerfDataSpec s = gen::demo_spec(kSmmu, 0);
  s.pipe = true;
  std::string bytes = gen::write_perf_data(s);
  std::string rec(8, '\0');
  rec[0] = 83;
  std::uint64_t n = z.size();
  rec.append(reinterpret_cast<const char*>(&n), 8);
  rec += z;
  while (rec.size() % 8) rec.push_back('\0');
  rec[6] = static_cast<char>(rec.size() & 0xff);
  rec[7] = static_cast<char>(rec.size() >> 8);
  std::size_t at = bytes.size();
  bytes += rec;
  parsers::PerfDataOptions o;
  o.max_inflate_ratio = 1;
  auto d = parsers::parse_perf_data(bytes, o);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find(fmt::format("offset {}", at)), std::string::npos) << d.error().message;
  EXPECT_NE(d.error().message.find("zstd bomb"), std::string::npos) << d.error().message;
}

TEST(ParsersPerfData, Kallsyms) {
  auto k = parsers::parse_kallsyms("ffffffff81000000 T _text\nffffffff81001000 t foo\nffffffff81002000 D data_sym\nffffffffc0001000 t modfn\t[nvidia]\n");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->symbols.size(), 3u);
  ASSERT_TRUE(k->text);
  EXPECT_EQ(*k->text, 0xffffffff81000000ULL);
  EXPECT_EQ(k->symbols.back().second, "modfn");
  EXPECT_FALSE(k->zero_addresses);
  auto z = parsers::parse_kallsyms("0000000000000000 T _text\n0000000000000000 t foo\n");
  ASSERT_TRUE(z);
  EXPECT_TRUE(z->zero_addresses);
  auto bad = parsers::parse_kallsyms("ffffffff81000000 T _text\nhello world\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().line, 2);
  EXPECT_FALSE(parsers::parse_kallsyms(""));
}

TEST(AnalyzersPerfData, EachStatusOfEachFinding) {
  // Each count doubled: 160 samples, above the analyzer's minimum of 100, same shares.
  auto run = [](std::vector<std::pair<std::string, int>> k, int user, bool with_symbols) {
    for (auto& [name, n] : k) n *= 2;
    PerfDataSpec s = gen::demo_spec(k, user * 2);
    auto d = parsers::parse_perf_data(gen::write_perf_data(s));
    EXPECT_TRUE(d);
    auto ks = parsers::parse_kallsyms(gen::demo_kallsyms(k));
    auto p = parsers::perf_data_profile(*d, with_symbols ? &*ks : nullptr,
                                        with_symbols ? "test" : "no kernel symbols: pass --kallsyms FILE captured on the node");
    return analyzers::analyze_perf(p, "rec.data");
  };
  auto f = run(kSmmu, 40, true);
  ASSERT_TRUE(by_id(f, "perf.smmu_cmdq"));
  EXPECT_EQ(by_id(f, "perf.smmu_cmdq")->status, report::Status::fail);
  EXPECT_EQ(by_id(f, "perf.hot_kernel")->status, report::Status::pass);
  const auto* sum = by_id(f, "perf.summary");
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->status, report::Status::pass);
  auto metric = [](const report::Finding* x, const std::string& m) {
    for (const auto& [k, v] : x->metrics)
      if (k == m) return v;
    return -1.0;
  };
  EXPECT_EQ(metric(sum, "samples"), 160);
  EXPECT_EQ(metric(sum, "lost"), 0);
  EXPECT_NEAR(metric(sum, "kernel_pct"), 50, 1e-9);
  EXPECT_NEAR(metric(sum, "top.arm_smmu_cmdq_issue_cmdlist"), 37.5, 1e-9);
  EXPECT_NEAR(metric(sum, "top.libc.so.6"), 25, 1e-9);

  f = run({{"native_queued_spin_lock_slowpath", 20}, {"do_syscall_64", 10}}, 40, true);
  EXPECT_EQ(by_id(f, "perf.smmu_cmdq")->status, report::Status::pass);
  EXPECT_EQ(by_id(f, "perf.hot_kernel")->status, report::Status::warn);
  // The top commands of a hot symbol are in its evidence.
  bool named = false;
  for (const auto& e : by_id(f, "perf.hot_kernel")->evidence) named = named || e.observed.find("pt_data_worker") != std::string::npos;
  EXPECT_TRUE(named);

  f = run({{"do_syscall_64", 10}, {"schedule", 5}}, 40, true);
  EXPECT_EQ(by_id(f, "perf.smmu_cmdq")->status, report::Status::pass);
  EXPECT_EQ(by_id(f, "perf.hot_kernel")->status, report::Status::pass);

  // No kernel symbols: the findings that need names cannot pass.
  f = run({{"do_syscall_64", 10}, {"schedule", 5}}, 40, false);
  EXPECT_EQ(by_id(f, "perf.smmu_cmdq")->status, report::Status::skip);
  EXPECT_EQ(by_id(f, "perf.hot_kernel")->status, report::Status::skip);
  EXPECT_NE(by_id(f, "perf.smmu_cmdq")->title.find("--kallsyms"), std::string::npos);
  EXPECT_EQ(by_id(f, "perf.summary")->status, report::Status::pass);
  // A user-only recording needs no kernel names.
  f = run({}, 60, false);  // 120 user samples
  EXPECT_EQ(by_id(f, "perf.smmu_cmdq")->status, report::Status::pass);

  // Below the minimum sample count (80 samples, 37.5% SMMU): no verdict on a 5% share.
  PerfDataSpec few = gen::demo_spec(kSmmu, 40);
  auto d = parsers::parse_perf_data(gen::write_perf_data(few));
  ASSERT_TRUE(d);
  auto ks = parsers::parse_kallsyms(gen::demo_kallsyms(kSmmu));
  f = analyzers::analyze_perf(parsers::perf_data_profile(*d, &*ks, "test"), "few.data");
  EXPECT_EQ(by_id(f, "perf.smmu_cmdq")->status, report::Status::skip);
  EXPECT_EQ(by_id(f, "perf.hot_kernel")->status, report::Status::skip);
  EXPECT_NE(by_id(f, "perf.smmu_cmdq")->title.find("too few samples (80; at least 100"), std::string::npos);
  EXPECT_EQ(by_id(f, "perf.summary")->status, report::Status::pass);
  // The minimum is a parameter: 50 judges them again.
  f = analyzers::analyze_perf(parsers::perf_data_profile(*d, &*ks, "test"), "few.data", analyzers::kernel_symbols(), 50);
  EXPECT_EQ(by_id(f, "perf.smmu_cmdq")->status, report::Status::fail);
}

// A recording of two events (cycles and cpu-clock): each sample counts for its own event, the
// shares are of cycles' samples and periods alone, and cpu-clock is named, left out.
TEST(ParsersPerfData, SeveralEventsAreNotAddedUp) {
  PerfDataSpec s = gen::demo_spec(kSmmu, 40);
  s.two_events = true;
  for (auto& g : s.samples)
    if (!g.kernel) {
      g.event = 1;
      g.period = 1000;  // cpu-clock's period is nanoseconds, not cycles
    }
  auto p = profile_of(gen::write_perf_data(s), gen::demo_kallsyms(kSmmu));
  EXPECT_EQ(p.event, "cycles");
  EXPECT_DOUBLE_EQ(p.samples, 40);
  ASSERT_EQ(p.other_events.size(), 1u);
  EXPECT_EQ(p.other_events[0].first, "cpu-clock");
  EXPECT_DOUBLE_EQ(p.other_events[0].second, 40);
  EXPECT_NEAR(share(p, "arm_smmu_cmdq_issue_cmdlist"), 75.0, 1e-9);
  EXPECT_NEAR(share(p, "do_syscall_64"), 25.0, 1e-9);
  EXPECT_EQ(share(p, "libc.so.6"), 0);
  auto f = analyzers::analyze_perf(p, "two.data", analyzers::kernel_symbols(), 1);
  ASSERT_TRUE(by_id(f, "perf.summary"));
  EXPECT_NE(by_id(f, "perf.summary")->title.find("40 samples of cycles (cpu-clock 40 left out)"), std::string::npos) << by_id(f, "perf.summary")->title;
}

// The real group of cycles:pp (97 samples), instructions:pp (80) and branch-instructions:pp (14):
// perf report gives ld-2.23.so 22.68% of cycles.
TEST(ParsersPerfData, SharedGroupOfThreeEventsCountsCycles) {
  const auto path = std::filesystem::path(PERFGAP_SHARED_DIR) / "fixtures/profiles/quipper_perf.data.lost_samples-4.4";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  auto d = parsers::parse_perf_data(ss.str());
  ASSERT_TRUE(d) << d.error().describe();
  auto p = parsers::perf_data_profile(*d, nullptr, "none");
  EXPECT_EQ(p.event, "cycles");
  EXPECT_DOUBLE_EQ(p.samples, 97);
  ASSERT_EQ(p.other_events.size(), 2u);
  EXPECT_EQ(p.other_events[0], (std::pair<std::string, double>{"instructions", 80}));
  EXPECT_EQ(p.other_events[1], (std::pair<std::string, double>{"branch-instructions", 14}));
  EXPECT_NEAR(share(p, "ld-2.23.so"), 22.68, 0.005);
}

TEST(ParsersPerfData, SharedRealRecordingsAllParse) {
  const std::filesystem::path dir = std::filesystem::path(PERFGAP_SHARED_DIR) / "fixtures/profiles";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " absent";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    auto name = e.path().filename().string();
    if (name.rfind("quipper_perf.data.", 0) != 0 && name.rfind("linuxperfdata_", 0) != 0) continue;
    SCOPED_TRACE(name);
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    auto d = parsers::parse_perf_data(ss.str());
    ASSERT_TRUE(d) << d.error().describe();
    EXPECT_GT(d->samples, 0u);
    EXPECT_EQ(d->unmatched_samples, 0u);
    EXPECT_FALSE(d->events.empty());
    if (name.find("compressed") != std::string::npos) {
      EXPECT_TRUE(d->compressed);
    }
    if (name.find("pipe") != std::string::npos) {
      EXPECT_TRUE(d->pipe);
    }
    if (name.find("lost_samples") != std::string::npos) {
      EXPECT_GT(d->lost, 0u);
    }
    if (name.find("callgraph") != std::string::npos) {
      EXPECT_GT(d->callchain_frames, 0u);
    }
    if (name.find("numatopology") != std::string::npos) {
      EXPECT_EQ(d->numa_nodes, 2u);
    }
    if (name.find("6.12") == std::string::npos) {
      EXPECT_FALSE(d->osrelease.empty());
    }
    auto p = parsers::perf_data_profile(*d, nullptr, "none");
    auto f = analyzers::analyze_perf(p, name);
    EXPECT_TRUE(by_id(f, "perf.summary"));
    ++n;
  }
  EXPECT_EQ(n, 11);
}
