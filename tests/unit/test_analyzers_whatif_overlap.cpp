// perfgap whatif's overlap change (whatif.overlap, analyzers/whatif.cpp, profile_ranks.cpp
// CollectiveReplay::overlap): the expected step with the compute running on under its
// collectives comes from the generator's own schedule (profile_gen.hpp gen::ddp_overlap,
// simulated bucket by bucket), never from perfgap.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "analyzers/profile_job.hpp"
#include "files.hpp"
#include "findings.hpp"
#include "parsers/gunzip.hpp"
#include "parsers/profile.hpp"
#include "profile_gen.hpp"
#include "profile_read.hpp"
#include "tree.hpp"

namespace perfgap {
namespace {

using report::Status;

// The bounds on generated jobs: the replay within 2% of the measured step, the saving
// within 2% of the step of the generator's.
constexpr double kOverlapReplayPct = 2;
constexpr double kOverlapSavingPct = 2;

struct OverlapRun {
  std::vector<report::Finding> whatif, analyze;
};

OverlapRun overlap_run(const gen::Scenario& s) {
  const auto t = fixture::kinetos_of_ranks(s);
  return {analyzers::whatif_profile_job(t.files, t.reader(), {}, {}, 2).findings, analyzers::analyze_profile_job(t.files, t.reader(), {}, 2).findings};
}

const report::Finding* overlap_of(const std::vector<report::Finding>& fs) {
  for (const auto& f : fs)
    if (f.id == "whatif.overlap") return &f;
  return nullptr;
}

// The overlap finding against the generator's answer: the replay reproduces the step, the
// saving is the generator's, never negative nor above the step, and what it says is exposed is
// profile.exposed_comm's figure.
void expect_generators_saving(const gen::DdpOverlapSpec& spec) {
  gen::DdpOverlapAnswer answer;
  const auto run = overlap_run(gen::ddp_overlap(spec, &answer));
  const auto& replay = fixture::find(run.whatif, "whatif.replay");
  ASSERT_EQ(replay.status, Status::pass) << replay.title;
  EXPECT_LE(std::abs(fixture::metric(replay, "replay_error_pct")), kOverlapReplayPct) << replay.title;
  EXPECT_NEAR(fixture::metric(replay, "measured_ms_per_iter"), answer.step_ms, 0.005 * answer.step_ms) << replay.title;
  const auto* f = overlap_of(run.whatif);
  ASSERT_NE(f, nullptr);
  const double step = fixture::metric(*f, "step_ms_per_iter"), saved = fixture::metric(*f, "saved_ms_per_iter");
  EXPECT_GE(saved, 0) << f->title;
  EXPECT_LE(saved, step) << f->title;
  EXPECT_NEAR(saved, answer.step_ms - answer.overlapped_step_ms, kOverlapSavingPct / 100 * answer.step_ms)
      << f->title << " (ranks " << spec.ranks << ", buckets " << spec.buckets << ", overlapped " << spec.overlapped << ")";
  EXPECT_EQ(f->status, 100 * saved / step >= 5 ? Status::warn : Status::pass) << f->title;
  const auto& exposed = fixture::find(run.analyze, "profile.exposed_comm", "all");
  EXPECT_NEAR(fixture::metric(*f, "exposed_ms_per_iter"), fixture::metric(exposed, "exposed_ms_per_iter"), 0.005) << exposed.title;
}

// The same job as nsys exports (one per rank, its node named; ProfilerStep#N as NVTX ranges):
// the same saving as from the Kineto traces, the generator's.
TEST(WhatifOverlap, NsysExportsGiveTheGeneratorsSaving) {
  gen::DdpOverlapSpec spec;
  gen::DdpOverlapAnswer answer;
  const auto s = gen::ddp_overlap(spec, &answer);
  fixture::TempDir d;
  const auto files = fixture::nsys_rank_files(s, d);
  const auto fs = analyzers::whatif_profile_job(files, fixture::nsys_file_reader(), {}, {}, 2).findings;
  ASSERT_EQ(fixture::find(fs, "whatif.replay").status, Status::pass) << fixture::find(fs, "whatif.replay").title;
  const auto* f = overlap_of(fs);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(fixture::metric(*f, "saved_ms_per_iter"), answer.step_ms - answer.overlapped_step_ms, kOverlapSavingPct / 100 * answer.step_ms) << f->title;
}

// A job whose compute waits for each bucket's AllReduce: overlapping saves what the generator's
// overlapped schedule saves, said as an upper bound, with what is exposed today.
TEST(WhatifOverlap, ExposedBucketsSaveWhatTheOverlappedScheduleSaves) {
  gen::DdpOverlapSpec spec;
  gen::DdpOverlapAnswer answer;
  const auto run = overlap_run(gen::ddp_overlap(spec, &answer));
  EXPECT_GT(answer.step_ms - answer.overlapped_step_ms, 0.1 * answer.step_ms);  // the generated job has something to hide
  expect_generators_saving(spec);
  const auto* f = overlap_of(run.whatif);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->status, Status::warn) << f->title;
  EXPECT_NE(f->title.find("only where the step's end needs it"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("upper bound"), std::string::npos) << f->title;
  EXPECT_FALSE(f->fix.empty());
  std::string ev;
  for (const auto& e : f->evidence) ev += e.observed + "\n";
  EXPECT_NE(ev.find("profile.exposed_comm"), std::string::npos) << ev;
  EXPECT_NE(ev.find("not modelled"), std::string::npos) << ev;
  // Over whole iterations the generator's saving to the microsecond, and the held time with it.
  EXPECT_NEAR(fixture::metric(*f, "saved_ms_per_iter"), answer.step_ms - answer.overlapped_step_ms, 0.01) << f->title;
  EXPECT_GE(fixture::metric(*f, "held_ms_per_iter") + 0.01, fixture::metric(*f, "saved_ms_per_iter"));
  // It is the change that saves most here, sorted with the others.
  double previous = INFINITY;
  for (const auto& g : run.whatif) {
    if (!g.id.starts_with("whatif.") || g.id == "whatif.replay" || g.status == Status::skip) continue;
    EXPECT_LE(fixture::metric(g, "saved_ms_per_iter"), previous + 1e-9) << g.id;
    previous = fixture::metric(g, "saved_ms_per_iter");
  }
}

// The same job already overlapped: nothing left to hide, ~0 saved, a pass.
TEST(WhatifOverlap, AnOverlappedJobSavesNothing) {
  gen::DdpOverlapSpec spec;
  spec.overlapped = true;
  gen::DdpOverlapAnswer answer;
  const auto run = overlap_run(gen::ddp_overlap(spec, &answer));
  EXPECT_DOUBLE_EQ(answer.step_ms, answer.overlapped_step_ms);
  const auto* f = overlap_of(run.whatif);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->status, Status::pass) << f->title;
  EXPECT_LE(fixture::metric(*f, "saved_pct_of_step"), 0.5) << f->title;
  expect_generators_saving(spec);
}

// Over jobs of other shapes (ranks, buckets, transfer against compute), exposed and overlapped:
// the saving is the generator's within 2% of the step, never negative nor above it.
TEST(WhatifOverlap, SavingIsTheGeneratorsOverShapes) {
  for (int ranks : {2, 3, 8})
    for (int buckets : {1, 2, 6})
      for (double allreduce : {1.0, 5.0, 12.0})
        for (bool overlapped : {false, true}) {
          gen::DdpOverlapSpec spec;
          spec.ranks = ranks, spec.buckets = buckets, spec.allreduce_ms = allreduce, spec.overlapped = overlapped;
          spec.iterations = 5;
          expect_generators_saving(spec);
        }
}

// One AllReduce per iteration (the step's end needs it, and its compute makes what it sends):
// nothing to overlap, 0 saved, and the evidence says why.
TEST(WhatifOverlap, OneCollectivePerIterationHasNothingToOverlap) {
  gen::JobSpec spec;
  spec.ranks = 4;
  const auto run = overlap_run(gen::job(spec));
  const auto* f = overlap_of(run.whatif);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->status, Status::pass) << f->title;
  EXPECT_EQ(fixture::metric(*f, "saved_ms_per_iter"), 0) << f->title;
  bool said = false;
  for (const auto& e : f->evidence) said = said || e.observed.find("nothing is left to overlap") != std::string::npos;
  EXPECT_TRUE(said);
}

// Where it cannot be decided it skips with why, never a guessed pass: a pipeline's send/recv, and
// iterations found only from the timeline's period (no step annotations: where a step ends is
// not known).
TEST(WhatifOverlap, SkipsWhereTheTracesCannotDecide) {
  gen::PipelineSpec pipe;
  const auto p = overlap_run(gen::pipeline_job(pipe));
  const auto* f = overlap_of(p.whatif);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->status, Status::skip) << f->title;
  EXPECT_NE(f->title.find("pipeline"), std::string::npos) << f->title;
  gen::DdpOverlapSpec spec;
  spec.steps = false;
  const auto q = overlap_run(gen::ddp_overlap(spec));
  ASSERT_EQ(fixture::find(q.whatif, "whatif.replay").status, Status::pass);
  const auto* g = overlap_of(q.whatif);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->status, Status::skip) << g->title;
  EXPECT_NE(g->title.find("step annotations"), std::string::npos) << g->title;
  // Two communicators' collectives at once on their own streams: not one chain.
  gen::DdpOverlapSpec two;
  two.concurrent_allgather = true;
  const auto c = overlap_run(gen::ddp_overlap(two));
  ASSERT_EQ(fixture::find(c.whatif, "whatif.replay").status, Status::pass) << fixture::find(c.whatif, "whatif.replay").title;
  const auto* h = overlap_of(c.whatif);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->status, Status::skip) << h->title;
  EXPECT_NE(h->title.find("several communicators"), std::string::npos) << h->title;
}

// The real public Kineto traces (../shared/fixtures/profiles): where the replay holds, the overlap
// finding is there, its saving within the step, its exposed figure profile.exposed_comm's.
TEST(WhatifOverlap, RealTracesSayWhatIsExposed) {
  const std::string dir = std::string(PERFGAP_SHARED_DIR) + "/fixtures/profiles";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " is not here";
  const analyzers::ProfileReader read = fixture::kineto_file_reader();
  std::size_t seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string file = e.path().string();
    if (!e.path().filename().string().starts_with("kineto_hta_") || !file.ends_with(".json.gz")) continue;
    const auto fs = analyzers::whatif_profile_job({file}, read, {}, {}, 1).findings;
    if (fixture::find(fs, "whatif.replay").status != Status::pass) continue;
    const auto* f = overlap_of(fs);
    ASSERT_NE(f, nullptr) << file;
    // TorchRec's rank of 16: its sparse and dense groups' collectives run at once on three streams.
    if (file.find("ws16_rank0_sendrecv") != std::string::npos) {
      EXPECT_EQ(f->status, Status::skip) << f->title;
      EXPECT_NE(f->title.find("several communicators"), std::string::npos) << f->title;
    }
    if (f->status == Status::skip) continue;
    // What it hides is what the compute waited for: the saving is never above it.
    EXPECT_LE(fixture::metric(*f, "saved_ms_per_iter"), fixture::metric(*f, "held_ms_per_iter") + 0.01) << file;
    ++seen;
    EXPECT_GE(fixture::metric(*f, "saved_ms_per_iter"), 0) << file;
    EXPECT_LE(fixture::metric(*f, "saved_ms_per_iter"), fixture::metric(*f, "step_ms_per_iter")) << file;
    // By collective, they add up to it; held mostly by all-to-all (TorchRec's trace_diff pair),
    // the fix is the all-to-all's, not DDP buckets.
    double by_coll = 0, a2a = 0;
    for (const auto& [k, v] : f->metrics)
      if (k.starts_with("held_ms_per_iter.")) by_coll += v, a2a += k == "held_ms_per_iter.AllToAll" ? v : 0;
    EXPECT_NEAR(by_coll, fixture::metric(*f, "held_ms_per_iter"), 0.02) << file;
    if (2 * a2a >= fixture::metric(*f, "held_ms_per_iter") && a2a > 0) {
      EXPECT_NE(f->fix.find("overlap the all-to-all with compute"), std::string::npos) << file << ": " << f->fix;
      EXPECT_EQ(f->fix.find("DDP with too few buckets"), std::string::npos) << file << ": " << f->fix;
    }
    const auto an = analyzers::analyze_profile_job({file}, read, {}, 1).findings;
    EXPECT_NEAR(fixture::metric(*f, "exposed_ms_per_iter"), fixture::metric(fixture::find(an, "profile.exposed_comm", "all"), "exposed_ms_per_iter"), 0.005) << file;
  }
  EXPECT_GE(seen, 1u);
}

}  // namespace
}  // namespace perfgap
