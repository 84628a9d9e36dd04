#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "analyzers/analyzers.hpp"
#include "parsers/steps.hpp"

using namespace perfgap;

TEST(ParsersSteps, Megatron) {
  auto s = parsers::parse_steps(
      " [2024-04-06 03:02:12] iteration       71/     100 | consumed samples:         9088 | elapsed time per iteration (ms): 5361.6 | x\n"
      "time (ms) | forward-compute: 193.77\n"
      " iteration       72/     100 | elapsed time per iteration (ms): 5470.7 |\n");
  ASSERT_TRUE(s) << s.error().describe();
  ASSERT_EQ(s->records.size(), 2u);
  EXPECT_EQ(s->records[0].iteration, 71);
  EXPECT_DOUBLE_EQ(s->records[1].value, 5470.7);
  EXPECT_EQ(s->records[1].line, 3);
}

TEST(ParsersSteps, CsvAndJsonLines) {
  auto c = parsers::parse_steps("step,loss,step_time_s\n1,2.0,1.5\n2,1.9,1.0\n3,1.8\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->layout, parsers::StepLayout::csv);
  ASSERT_EQ(c->records.size(), 2u);
  EXPECT_DOUBLE_EQ(c->records[1].value, 1000);
  ASSERT_EQ(c->damaged.size(), 1u);
  EXPECT_EQ(c->damaged[0].line, 4);
  auto j = parsers::parse_steps("{\"step\": 1, \"iteration_time_ms\": 100}\n{\"step\": 2, \"iteration_time_ms\": 110}\n{\"step\": 3, \"iter\n");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->records.size(), 2u);
  EXPECT_EQ(j->records[1].iteration, 2);
  EXPECT_EQ(j->damaged.size(), 1u);
  EXPECT_FALSE(parsers::parse_steps("a,b\n1,2\n"));
  EXPECT_FALSE(parsers::parse_steps(""));
}

TEST(AnalyzersSteps, StatsAndStatuses) {
  parsers::StepLog log;
  for (double v : {5000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1200.0}) log.records.push_back({v, -1, 1, false});
  auto st = analyzers::step_stats(log, std::nullopt);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->warmup, 1u);  // 10% of 11, at least 1
  EXPECT_DOUBLE_EQ(st->median, 1000);
  EXPECT_DOUBLE_EQ(st->tail, 1200);
  analyzers::StepsOptions o;
  o.reference_ms(960);  // 96% of reference
  auto f = analyzers::analyze_steps(*st, "m", o);
  EXPECT_EQ(f[0].status, report::Status::pass);
  EXPECT_EQ(f[1].status, report::Status::warn);  // p99 20% above the median
  o.reference_ms(940);
  EXPECT_EQ(analyzers::analyze_steps(*st, "m", o)[0].status, report::Status::fail);
  o.reference.reset();
  EXPECT_EQ(analyzers::analyze_steps(*st, "m", o)[0].status, report::Status::skip);
  EXPECT_FALSE(analyzers::step_stats(log, 11));
}

namespace {
// One short sample per layout, each in its own format.
struct Sample {
  parsers::StepLayout layout;
  std::string text;
  std::size_t records;
  double first;  // the first record's value (ms, or the throughput)
};
std::vector<Sample> samples() {
  using L = parsers::StepLayout;
  return {
      {L::megatron,
       " iteration       10/     100 | consumed samples:  1280 | elapsed time per iteration (ms): 5361.6 | throughput per GPU (TFLOP/s/GPU): 401.2 |\n"
       "1:  iteration       11/     100 | consumed samples:  1408 | elapsed time per iteration (ms): 5370.1 | number of skipped iterations:   0 |\n",
       2, 5361.6},
      {L::nemo,
       "(pretraining, pid=4112) Training epoch 0, iteration 7/99 | lr: 6.9e-06 | global_step: 7 | train_step_timing in s: 47.12 | consumed_samples: 3584\n"
       "0: Epoch 0: : 9%| 9/100 [07:01<1:10:00, v_num=0, global_step=8.000, consumed_samples=4096.0, train_step_timing in s=47.15]\n",
       2, 47120},
      {L::nanochat,
       "step 00010/01000 (1.00%) | loss: 7.123456 | lrm: 1.00 | dt: 989.44ms | tok/sec: 529,837 | mfu: 48.20 | total time: 0.16m\n"
       "step 00011/01000 (1.10%) | loss: 7.101010 | lrm: 1.00 | dt: 1.01s | tok/sec: 519,001 | mfu: 47.20 | total time: 0.18m\n",
       2, 989.44},
      {L::hf_dict,
       "{'loss': 2.31, 'grad_norm': 1.9, 'learning_rate': 4.9e-05, 'epoch': 0.01, 'step': 1, 'train_step_runtime': 0.612}\n"
       "{'loss': 2.29, 'learning_rate': 4.8e-05, 'epoch': 0.02, 'step': 2, 'step_time': 0.608}\n"
       "{'train_runtime': 251.3, 'train_samples_per_second': 50.93, 'train_steps_per_second': 1.592, 'train_loss': 2.01, 'epoch': 1.0}\n",
       2, 612},
      {L::torchtitan,
       "[titan] 2025-01-14 18:02:40,100 - root - INFO - step:  1  loss: 12.2531  memory: 41.02GiB(51.88%)  tps: 2,287  mfu: 13.39%\n"
       "[titan] 2025-01-14 18:02:56,300 - root - INFO - step: 10  loss:  9.8012  memory: 47.61GiB(60.21%)  tps: 5,912  mfu: 34.61%\n"
       "[titan] 2025-01-14 18:03:14,310 - root - INFO - step: 20  loss:  8.1190  memory: 47.61GiB(60.21%)  tps: 5,887  mfu: 34.47%\n",
       2, 1800},
      {L::jsonl, "{\"step\": 1, \"step_time_ms\": 100.5, \"loss\": 2.0}\n{\"step\": 2, \"step_time_ms\": 101.5, \"loss\": 1.9}\n", 2, 100.5},
      {L::csv, "step,loss,step_time_s\n1,2.0,1.5\n2,1.9,1.0\n", 2, 1500},
      {L::throughput,
       "0: 2025-06-17 16:24:52 I [train.py:103] Batch 0 Loss: 11.61, Speed: 4.88 samples/sec, lr: 0.000100\n"
       "[Rank 0] step=10, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)] RunningAvgSamplesPerSec=11.2, CurrSamplesPerSec=11.4, MemAllocated=4.1GB\n"
       "0: 2025-06-17 16:24:55 I [train.py:103] Batch 1 Loss: 11.64, Speed: 10.90 samples/sec, lr: 0.000100\n",
       3, 4.88},
  };
}
}  // namespace

// parse_steps is a table of recognisers in a fixed order: each layout wins on its own sample,
// no layout tried before it claims any of its lines (it would shadow it: the CSV branch must
// not take log lines with commas), and every claimed line of the sample is its own.
TEST(ParsersSteps, EachLayoutWinsOnItsOwnSample) {
  const auto& order = parsers::step_layouts();
  ASSERT_EQ(order.size(), samples().size());
  for (const auto& s : samples()) {
    SCOPED_TRACE(parsers::step_layout_name(s.layout));
    auto log = parsers::parse_steps(s.text);
    ASSERT_TRUE(log) << log.error().describe();
    EXPECT_EQ(log->layout, s.layout);
    ASSERT_EQ(log->records.size(), s.records);
    EXPECT_NEAR(log->records[0].value, s.first, 1e-6 * s.first);
    EXPECT_TRUE(log->damaged.empty()) << log->damaged[0].describe();
    auto alone = parsers::parse_steps_as(s.text, s.layout);
    EXPECT_EQ(alone.log.records.size(), s.records);
    for (auto other : order) {
      if (other == s.layout) break;  // later layouts are shadowed by this one
      auto c = parsers::parse_steps_as(s.text, other);
      EXPECT_EQ(c.claimed_lines, 0) << parsers::step_layout_name(other) << " claims a line";
    }
    for (const auto& owner : parsers::step_line_owners(s.text))
      if (owner) {
        EXPECT_EQ(*owner, s.layout) << parsers::step_layout_name(*owner) << " owns a line";
      }
  }
}

TEST(ParsersSteps, NewLayoutsDetails) {
  // Megatron: skipped iterations are marked.
  auto m = parsers::parse_steps(
      " iteration 1/ 9 | elapsed time per iteration (ms): 900.0 | number of skipped iterations:   1 |\n"
      " iteration 2/ 9 | elapsed time per iteration (ms): 800.0 | number of skipped iterations:   0 |\n");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->records[0].skipped);
  EXPECT_FALSE(m->records[1].skipped);
  // NeMo: global_step numbers the record; a redrawn progress bar ('\r') gives one record.
  auto n = parsers::parse_steps(
      "Epoch 0: 1/9 [global_step=0.000, train_step_timing in s=2.5]\rEpoch 0: 1/9 [global_step=0.000, train_step_timing in s=2.5]"
      "\rEpoch 0: 2/9 [global_step=1.000, train_step_timing in s=2.0]\n");
  ASSERT_TRUE(n);
  ASSERT_EQ(n->records.size(), 2u);
  EXPECT_EQ(n->records[1].iteration, 1);
  EXPECT_DOUBLE_EQ(n->records[1].value, 2000);
  // torchtitan: (t2 - t1) / (steps between); ANSI colours are dropped.
  auto t = parsers::parse_steps(
      "[titan] 2025-01-14 23:59:59,500 - root - INFO - \x1b[31mstep:  1  \x1b[32mloss: 12.2  \x1b[34mtps: 2,287\x1b[39m\n"
      "[titan] 2025-01-15 00:00:04,500 - root - INFO - \x1b[31mstep:  6  \x1b[32mloss: 11.0  \x1b[34mtps: 5,120\x1b[39m\n");
  ASSERT_TRUE(t) << t.error().describe();
  EXPECT_EQ(t->layout, parsers::StepLayout::torchtitan);
  ASSERT_EQ(t->records.size(), 1u);
  EXPECT_DOUBLE_EQ(t->records[0].value, 1000);  // 5 s over 5 steps, across midnight
  EXPECT_EQ(t->records[0].iteration, 6);
  // torchtitan without timestamps: its throughput.
  auto tps = parsers::parse_steps("step:  1  loss: 12.2  tps: 2,287\nstep:  2  loss: 11.0  tps: 5,120\n");
  ASSERT_TRUE(tps);
  EXPECT_EQ(tps->layout, parsers::StepLayout::throughput);
  EXPECT_TRUE(tps->throughput);
  EXPECT_EQ(tps->unit, "tokens/s");
  EXPECT_DOUBLE_EQ(tps->records[1].value, 5120);
  // HF Trainer: the end-of-run summary alone is no step.
  EXPECT_FALSE(parsers::parse_steps("{'train_runtime': 251.3, 'train_samples_per_second': 50.93, 'train_steps_per_second': 1.592}\n"));
  auto hf = parsers::parse_steps("{'loss': 2.3, 'train_runtime': 0.61, 'step': 7}\n");
  ASSERT_TRUE(hf);
  EXPECT_EQ(hf->records[0].iteration, 7);
  // Throughput: samples and tokens are not mixed; the unit with more records wins.
  auto mix = parsers::parse_steps("10.5 samples/sec\n11.0 samples/sec\n2048 tokens/s\n");
  ASSERT_TRUE(mix);
  EXPECT_EQ(mix->unit, "samples/s");
  EXPECT_EQ(mix->records.size(), 2u);
  // A CSV header does not make later log lines with commas its rows.
  auto csv = parsers::parse_steps("step,step_time_ms\n1,100\n2,101\nBatch 3 Loss: 1.0, Speed: 9.5 samples/sec, lr: 0.1\n");
  ASSERT_TRUE(csv);
  EXPECT_EQ(csv->layout, parsers::StepLayout::csv);
  EXPECT_TRUE(csv->damaged.empty()) << csv->damaged[0].describe();
  EXPECT_EQ(parsers::step_line_owners("step,step_time_ms\n1,100\nBatch 3 Loss: 1.0, Speed: 9.5 samples/sec\n")[2], parsers::StepLayout::throughput);
}

TEST(AnalyzersSteps, ThroughputFlipsTheDirection) {
  auto meas = *parsers::parse_steps("9.0 samples/sec\n9.0 samples/sec\n9.1 samples/sec\n");
  auto st = analyzers::step_stats(meas, std::nullopt);
  ASSERT_TRUE(st);
  EXPECT_TRUE(st->throughput);
  analyzers::StepsOptions o;
  o.reference = 10.0;
  o.reference_throughput = true;
  o.reference_unit = "samples/s";
  o.reference_source = "ref";
  auto f = analyzers::analyze_steps(*st, "m", o);
  EXPECT_EQ(f[0].status, report::Status::fail);  // 9.05 / 10 = 90.5%
  EXPECT_NE(f[0].title.find("throughput"), std::string::npos) << f[0].title;
  double pct = 0;
  for (const auto& [k, v] : f[0].metrics)
    if (k == "percent_of_reference") pct = v;
  EXPECT_NEAR(pct, 90.5, 1e-9);
  o.reference = 9.2;  // 98.4%
  EXPECT_EQ(analyzers::analyze_steps(*st, "m", o)[0].status, report::Status::pass);
  // A time reference for a throughput log (or another unit) compares nothing.
  analyzers::StepsOptions t;
  t.reference_ms(100);
  t.reference_source = "--reference-ms";
  auto g = analyzers::analyze_steps(*st, "m", t);
  EXPECT_EQ(g[0].status, report::Status::skip);
  EXPECT_NE(g[0].title.find("throughput (samples/s)"), std::string::npos) << g[0].title;
  o.reference_unit = "tokens/s";
  EXPECT_EQ(analyzers::analyze_steps(*st, "m", o)[0].status, report::Status::skip);
  // The tail: the slow end of a throughput is its lowest values.
  auto slow = *parsers::parse_steps("1 samples/sec\n10 samples/sec\n10 samples/sec\n10 samples/sec\n8 samples/sec\n");
  auto ss = analyzers::step_stats(slow, std::nullopt);
  EXPECT_DOUBLE_EQ(ss->tail, 8);  // the warm-up record (1) is dropped
  EXPECT_EQ(analyzers::analyze_steps(*ss, "m", {})[1].status, report::Status::warn);
}

// A tail is ruled out over 10 steps or more; a slow step among fewer is still reported.
TEST(AnalyzersSteps, AFewStepsRuleOutNoTail) {
  const auto tail_of = [](int steps, double slow_ms) {
    std::string log = "elapsed time per iteration (ms): 500.0\n";  // the warm-up
    for (int i = 0; i < steps; ++i) log += fmt::format("elapsed time per iteration (ms): {}\n", i == steps - 1 ? slow_ms : 87.5);
    auto st = analyzers::step_stats(*parsers::parse_steps(log), std::nullopt);
    return analyzers::analyze_steps(*st, "m", {})[1];
  };
  auto f = tail_of(2, 88.4);
  EXPECT_EQ(f.status, report::Status::skip) << f.title;
  EXPECT_NE(f.title.find("too few to rule out a slow tail"), std::string::npos) << f.title;
  EXPECT_EQ(tail_of(9, 88.4).status, report::Status::skip);
  EXPECT_EQ(tail_of(10, 88.4).status, report::Status::pass);
  EXPECT_EQ(tail_of(3, 120.0).status, report::Status::warn);
}

TEST(AnalyzersSteps, SkippedIterationsAreLeftOut) {
  auto log = *parsers::parse_steps(
      " iteration 1/ 9 | elapsed time per iteration (ms): 9000.0 | number of skipped iterations:   1 |\n"
      " iteration 2/ 9 | elapsed time per iteration (ms): 500.0 | number of skipped iterations:   1 |\n"
      " iteration 3/ 9 | elapsed time per iteration (ms): 1000.0 | number of skipped iterations:   0 |\n"
      " iteration 4/ 9 | elapsed time per iteration (ms): 1002.0 | number of skipped iterations:   0 |\n");
  auto st = analyzers::step_stats(log, std::nullopt);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->skipped, 1u);
  EXPECT_DOUBLE_EQ(st->median, 1001);
  // Only skipped iterations: kept, and said.
  auto all = *parsers::parse_steps(
      " iteration 1/ 9 | elapsed time per iteration (ms): 9000.0 | number of skipped iterations:   1 |\n"
      " iteration 2/ 9 | elapsed time per iteration (ms): 500.0 | number of skipped iterations:   1 |\n");
  auto sa = analyzers::step_stats(all, std::nullopt);
  ASSERT_TRUE(sa);
  EXPECT_TRUE(sa->all_skipped);
  auto f = analyzers::analyze_steps(*sa, "m", {});
  EXPECT_NE(f[0].title.find("skipped iterations only"), std::string::npos) << f[0].title;
}

// A record on the file's last line, cut by the write (no newline, and without fields the other
// records carry), is never used: it is a damaged line, "cut short", and the rest is read.
namespace {
parsers::Parsed<parsers::StepLog> steps_in_pieces(std::string_view text) {
  parsers::StepsParser p;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    auto end = nl == std::string_view::npos ? text.size() : nl + 1;
    p.feed(text.substr(pos, end - pos));
    pos = end;
  }
  return p.finish();
}
}  // namespace

TEST(ParsersSteps, CutShortLastRecordIsNotUsed) {
  const std::string meg =
      "iteration        1/  508626 | consumed samples:          288 | elapsed time per iteration (ms): 255940.5 | learning rate: 0.000E+00 | "
      "global batch size:   288 | loss scale: 4294967296.0 | number of skipped iterations:   1 | number of nan iterations:   0 |\n"
      "iteration        2/  508626 | consumed samples:          576 | elapsed time per iteration (ms): 243438.3 | learning rate: 0.000E+00 | "
      "global batch size:   288 | loss scale: 2147483648.0 | number of skipped iterations:   1 | number of nan iterations:   0 |\n";
  // Cut 2 bytes into the value: a "real" 24 ms step among two skipped ones, before the fix.
  for (const std::string tail : {"iteration        3/  508626 | consumed samples:          864 | elapsed time per iteration (ms): 24",
                                 "iteration        3/  508626 | consumed samples:          864 | elapsed time per iteration (ms): 243344.4 | lear",
                                 "iteration        3/  508626 | consumed samples:          864 | elapsed time per iteration (ms): 243344.4 | learning rate: "
                                 "0.000E+00 | global batch size:   288 | loss scale: 1073741824.0 | number of skipped"}) {
    for (const auto& s : {parsers::parse_steps(meg + tail), steps_in_pieces(meg + tail)}) {
      ASSERT_TRUE(s) << s.error().describe();
      ASSERT_EQ(s->records.size(), 2u) << tail;
      EXPECT_TRUE(s->records[0].skipped && s->records[1].skipped);
      ASSERT_EQ(s->damaged.size(), 1u) << tail;
      EXPECT_EQ(s->damaged[0].line, 3);
      EXPECT_TRUE(s->damaged[0].message.starts_with("cut short: ")) << s->damaged[0].message;
    }
  }
  // Whole, without a final newline: used. With a newline after the cut: a record like any
  // other (the line was ended; it is not the file's cut end).
  auto whole = parsers::parse_steps(meg +
                                    "iteration        3/  508626 | consumed samples:          864 | elapsed time per iteration (ms): 243344.4 | learning rate: "
                                    "0.000E+00 | global batch size:   288 | loss scale: 1073741824.0 | number of skipped iterations:   0 | number of nan "
                                    "iterations:   0 |");
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->records.size(), 3u);
  EXPECT_TRUE(whole->damaged.empty()) << whole->damaged[0].describe();
  // A skipped iteration's line lacks the loss and grad norm a real one prints: still whole.
  auto fewer = parsers::parse_steps(
      " iteration 1/ 9 | elapsed time per iteration (ms): 900.0 | lm loss: 1.0E+01 | grad norm: 3.1 | number of skipped iterations:   0 | number of nan iterations:   0 |\n"
      " iteration 2/ 9 | elapsed time per iteration (ms): 800.0 | number of skipped iterations:   1 | number of nan iterations:   0 |");
  ASSERT_TRUE(fewer);
  EXPECT_EQ(fewer->records.size(), 2u);
  EXPECT_TRUE(fewer->damaged.empty());
  // The srun-labelled log whose last value is 88.4: a cut "88" is not 88.0.
  auto label = parsers::parse_steps(
      "1:  iteration       25/73242187 | elapsed time per iteration (ms): 87.0 | learning rate: 1.638E-08 | number of skipped iterations:   0 |\n"
      "1:  iteration       26/73242187 | elapsed time per iteration (ms): 86.5 | learning rate: 1.704E-08 | number of skipped iterations:   0 |\n"
      "1:  iteration       27/73242187 | elapsed time per iteration (ms): 88");
  ASSERT_TRUE(label);
  EXPECT_EQ(label->records.size(), 2u);
  ASSERT_EQ(label->damaged.size(), 1u);
  EXPECT_EQ(label->damaged[0].line, 3);
}

TEST(ParsersSteps, CutShortLastRecordOfEachLayout) {
  struct Case {
    const char* what;
    std::string text;
    std::size_t records;  // of the complete lines
  };
  const std::vector<Case> cases = {
      {"nemo log", "iteration 7/999 | global_step: 45 | train_step_timing in s: 47.12 | consumed_samples: 23552\n"
                   "iteration 8/999 | global_step: 46 | train_step_timing in s: 47.15 | consumed_samples: 24064\n"
                   "iteration 9/999 | global_step: 47 | train_step_timing in s: 4", 2},
      {"lightning bar", "Epoch 0: 1/9 [global_step=0.000, train_step_timing in s=2.50, v_num=1]\n"
                        "Epoch 0: 2/9 [global_step=1.000, train_step_timing in s=2.00, v_num=1]\n"
                        "Epoch 0: 3/9 [global_step=2.000, train_step_timing in s=2.0", 2},
      {"nanochat", "step 00010/01000 | loss: 3.1 | dt: 989.44ms | tok/sec: 529,837 | mfu: 40.1\n"
                   "step 00011/01000 | loss: 3.0 | dt: 990.12ms | tok/sec: 529,500 | mfu: 40.0\n"
                   "step 00012/01000 | loss: 3.0 | dt: 99", 2},
      {"nanochat unit", "step 00010/01000 | loss: 3.1 | dt: 989.44ms | tok/sec: 529,837 | mfu: 40.1\n"
                        "step 00011/01000 | loss: 3.0 | dt: 990.12ms | tok/sec: 529,500 | mfu: 40.0\n"
                        "step 00012/01000 | loss: 3.0 | dt: 990.12ms | tok/se", 2},
      {"hf dict", "{'loss': 2.3, 'train_step_runtime': 0.61, 'step': 7}\n{'loss': 2.2, 'train_step_runtime': 0.62, 'step': 8}\n"
                  "{'loss': 2.2, 'train_step_runtime': 0.6", 2},
      {"torchtitan", "[titan] 2025-01-14 23:59:59,500 - root - INFO - step:  1  loss: 12.2  memory: 3.1GiB  tps: 2,287  mfu: 1.0%\n"
                     "[titan] 2025-01-15 00:00:00,500 - root - INFO - step:  2  loss: 12.0  memory: 3.1GiB  tps: 2,290  mfu: 1.0%\n"
                     "[titan] 2025-01-15 00:00:01,500 - root - INFO - step:  3  loss: 11.9  memory: 3.1GiB  tps: 2,2", 1},
      {"jsonl", "{\"step\": 1, \"step_time_ms\": 100.5}\n{\"step\": 2, \"step_time_ms\": 101.5}\n{\"step\": 3, \"step_time_ms\": 10", 2},
      {"csv", "step,step_time_ms,loss\n1,100.5,2.0\n2,101.5,1.9\n3,10", 2},
      {"throughput", "Batch 1 Loss: 11.6, Speed: 10.90 samples/sec, lr: 0.000100\nBatch 2 Loss: 11.5, Speed: 11.09 samples/sec, lr: 0.000100\n"
                     "Batch 3 Loss: 11.4, Speed: 11.09 samples/sec", 2},
      {"deepspeed", "CurrSamplesPerSec=12.5, MemAllocated=3.1GB\nCurrSamplesPerSec=12.7, MemAllocated=3.1GB\nCurrSamplesPerSec=1", 2},
  };
  for (const auto& c : cases) {
    for (const auto& s : {parsers::parse_steps(c.text), steps_in_pieces(c.text)}) {
      ASSERT_TRUE(s) << c.what << ": " << s.error().describe();
      EXPECT_EQ(s->records.size(), c.records) << c.what;
      ASSERT_EQ(s->damaged.size(), 1u) << c.what;
      EXPECT_EQ(s->damaged[0].line, static_cast<int>(std::count(c.text.begin(), c.text.end(), '\n')) + 1) << c.what;
      EXPECT_TRUE(s->damaged[0].message.starts_with("cut short")) << c.what << ": " << s->damaged[0].message;
    }
    // The same lines whole, without a final newline: every record used, nothing damaged.
    const auto whole = c.text.substr(0, c.text.rfind('\n'));
    auto w = parsers::parse_steps(whole);
    ASSERT_TRUE(w) << c.what;
    EXPECT_TRUE(w->damaged.empty()) << c.what << ": " << w->damaged[0].describe();
  }
}
