#include <gtest/gtest.h>

#include <thread>

#include "core/runner.hpp"

using namespace perfgap;
using report::Status;

namespace {

core::CheckInfo make(std::string_view id, core::CheckFn fn) {
  return core::CheckInfo{.id = id, .layer = "cpu-power", .summary = "s", .rule = "r", .fix = "f", .reads = {"/x"}, .params = {}, .run = std::move(fn)};
}

std::shared_ptr<facts::Facts> empty_facts() {
  return std::make_shared<facts::Facts>(sys::Sysroot::live(), facts::Options{});
}

}  // namespace

TEST(Runner, ThrowingCheckBecomesErrorAndOthersStillRun) {
  auto boom = make("t.boom", [](facts::Facts&, const core::Thresholds&) -> std::vector<report::Finding> {
    throw std::runtime_error("kaput");
  });
  auto ok = make("t.ok", [](facts::Facts&, const core::Thresholds&) {
    return std::vector<report::Finding>{core::finding("t.ok", "cpu-power", Status::pass, "fine")};
  });
  auto out = core::run_checks({&boom, &ok}, empty_facts(), core::Config{}, core::RunOptions{});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].id, "t.boom");
  EXPECT_EQ(out[0].status, Status::error);
  EXPECT_NE(out[0].title.find("kaput"), std::string::npos);
  EXPECT_EQ(out[1].status, Status::pass);
}

TEST(Runner, HangingCheckIsAbandonedAfterItsDeadline) {
  auto hang = make("t.hang", [](facts::Facts&, const core::Thresholds&) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    return std::vector<report::Finding>{};
  });
  auto ok = make("t.ok", [](facts::Facts&, const core::Thresholds&) {
    return std::vector<report::Finding>{core::finding("t.ok", "cpu-power", Status::pass, "fine")};
  });
  auto start = std::chrono::steady_clock::now();
  auto out = core::run_checks({&hang, &ok}, empty_facts(), core::Config{}, core::RunOptions{std::chrono::milliseconds(200)});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].status, Status::error);
  EXPECT_NE(out[0].title.find("did not finish"), std::string::npos);
  EXPECT_EQ(out[1].status, Status::pass);
}

TEST(Runner, CheckWithoutFindingsIsAnError) {
  auto silent = make("t.silent", [](facts::Facts&, const core::Thresholds&) { return std::vector<report::Finding>{}; });
  auto out = core::run_checks({&silent}, empty_facts(), core::Config{}, core::RunOptions{});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status, Status::error);
}

TEST(Runner, ThresholdsReachTheCheck) {
  auto info = make("cpu.steal", [](facts::Facts&, const core::Thresholds& th) {
    return std::vector<report::Finding>{core::finding("cpu.steal", "cpu-power", Status::pass, std::to_string(static_cast<int>(th.get("fail_pct"))))};
  });
  info.params = {{"fail_pct", 2, "d"}};
  core::Config cfg;
  cfg.thresholds["cpu.steal"]["fail_pct"] = 7;
  auto out = core::run_checks({&info}, empty_facts(), cfg, core::RunOptions{});
  EXPECT_EQ(out.at(0).title, "7");
}
