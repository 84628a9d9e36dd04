#include <gtest/gtest.h>

#include <limits>

#include <nlohmann/json.hpp>

#include "report/redact.hpp"
#include "report/render.hpp"

using namespace perfgap::report;

TEST(Redact, AuditedPrefixesOnly) {
  EXPECT_TRUE(audited_name("NCCL_DEBUG"));
  EXPECT_TRUE(audited_name("MEGATRON_X"));
  EXPECT_FALSE(audited_name("PATH"));
  EXPECT_FALSE(audited_name("nccl_debug"));
  EXPECT_FALSE(audited_name("WANDB_API_KEY"));
}

TEST(Redact, SecretNamesFollowTheContract) {
  for (auto n : {"WANDB_API_KEY", "NVIDIA_API_KEY", "SLURM_JOB_TOKEN", "CUDA_SECRET", "X_PASSWORD", "DB_PASSWD",
                 "AWS_CREDENTIALS", "SSH_PRIVATE", "KEY", "MY_APIKEY", "NCCL_KEY_FILE", "access_token"})
    EXPECT_TRUE(secret_name(n)) << n;
  for (auto n : {"NCCL_IB_PKEY", "KEYBOARD", "MONKEY", "NCCL_DEBUG", "TORCH_KEYS"}) EXPECT_FALSE(secret_name(n)) << n;
}

TEST(Redact, EnvironmentMapKeepsLastValueAndRedacts) {
  auto m = audited_environment({{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG", "WARN"}, {"HOME", "/root"},
                                {"NVIDIA_API_KEY", "nvapi-x"}, {"NCCL_IB_PKEY", "0x8001"}});
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m["NCCL_DEBUG"], "WARN");
  EXPECT_EQ(m["NVIDIA_API_KEY"], "<redacted>");
  EXPECT_EQ(m["NCCL_IB_PKEY"], "0x8001");
}

namespace {
Report sample() {
  Report r;
  r.tool_version = "0.1.0";
  r.generated_at = "2026-11-30T12:00:00Z";
  r.source.kind = "root";
  r.source.root = "/tmp/t";
  Node n;
  n.name = n.hostname = "gpu001";
  n.arch = "x86_64";
  n.kernel = "6.8.0";
  n.virtualized = false;
  n.container = "none";
  r.node = n;
  Finding p{.id = "a.pass", .layer = "cpu-power", .status = Status::pass, .subject = "", .title = "ok", .evidence = {{"/x", "1", std::nullopt}}, .fix = "", .impact = "", .metrics = {{"m", 1.5}}, .table = {}, .table_always = false, .charts = {}};
  Finding f{.id = "a.fail", .layer = "cpu-power", .status = Status::fail, .subject = "pid:1", .title = "bad \xff byte", .evidence = {{"/y", "0", std::string("1")}, {"/z", "2", std::nullopt}, {"/w", "3", std::nullopt}, {"/v", "4", std::nullopt}}, .fix = "do it", .impact = "4%", .metrics = {}, .table = {}, .table_always = false, .charts = {}};
  r.findings = {p, f};
  return r;
}
}  // namespace

TEST(Render, JsonKeepsContractShapeAndSurvivesBadUtf8) {
  auto j = nlohmann::json::parse(render_json(sample()));
  EXPECT_EQ(j["schema"], "perfgap.report/1");
  EXPECT_EQ(j["summary"]["fail"], 1);
  EXPECT_EQ(j["findings"][1]["subject"], "pid:1");
  EXPECT_FALSE(j["findings"][0].contains("subject"));
  EXPECT_EQ(j["findings"][1]["evidence"][0]["expected"], "1");
  EXPECT_FALSE(j["findings"][1]["evidence"][1].contains("expected"));
  EXPECT_DOUBLE_EQ(j["findings"][0]["metrics"]["m"].get<double>(), 1.5);
  // fix and impact are always there, empty when the finding has none (the contract's example).
  EXPECT_EQ(j["findings"][0]["fix"], "");
  EXPECT_EQ(j["findings"][0]["impact"], "");
  EXPECT_EQ(j["findings"][1]["fix"], "do it");
}

TEST(Render, TextColourOnlyWhenAsked) {
  auto plain = render_text(sample(), {false, false});
  EXPECT_EQ(plain.find("\x1b["), std::string::npos);
  auto colour = render_text(sample(), {false, true});
  EXPECT_NE(colour.find("\x1b[1;31m"), std::string::npos);
  // Fails first, evidence cut to three without -v, fix shown.
  EXPECT_LT(plain.find("a.fail"), plain.find("a.pass"));
  EXPECT_NE(plain.find("1 more (-v shows all)"), std::string::npos);
  EXPECT_NE(plain.find("fix: do it"), std::string::npos);
  auto verbose = render_text(sample(), {true, false});
  EXPECT_NE(verbose.find("/v: 4"), std::string::npos);
  EXPECT_NE(verbose.find("metrics: m=1.5"), std::string::npos);
}

TEST(Render, JunitMapsStatusesToElements) {
  auto x = render_junit(sample());
  EXPECT_NE(x.find("<testsuite name=\"perfgap gpu001\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\""), std::string::npos) << x;
  EXPECT_NE(x.find("<testcase classname=\"gpu001\" name=\"a.fail pid:1\">"), std::string::npos) << x;
  EXPECT_NE(x.find("<failure message=\"bad"), std::string::npos);
  auto r = sample();
  r.findings[0].status = Status::skip;
  r.findings[0].title = "cannot <see> & \"tell\"";
  r.findings[1].status = Status::warn;
  auto y = render_junit(r);
  EXPECT_NE(y.find("<skipped message=\"cannot &lt;see&gt; &amp; &quot;tell&quot;\"/>"), std::string::npos) << y;
  EXPECT_NE(y.find("<system-out>warn: bad"), std::string::npos) << y;
  EXPECT_EQ(y.find("<failure"), std::string::npos);
}

TEST(Render, PrometheusTextfileFormat) {
  auto p = render_prometheus(sample(), 1764500000);
  EXPECT_NE(p.find("# TYPE perfgap_finding gauge\n"), std::string::npos);
  EXPECT_NE(p.find("perfgap_finding{node=\"gpu001\",id=\"a.fail\",layer=\"cpu-power\",subject=\"pid:1\",status=\"fail\"} 1\n"), std::string::npos) << p;
  EXPECT_NE(p.find("perfgap_findings{node=\"gpu001\",status=\"fail\"} 1\n"), std::string::npos);
  EXPECT_NE(p.find("perfgap_findings{node=\"gpu001\",status=\"error\"} 0\n"), std::string::npos);
  EXPECT_NE(p.find("perfgap_last_run_timestamp_seconds{node=\"gpu001\"} 1764500000\n"), std::string::npos);
  // Every numeric metric as its own series, non-finite values spelt as the format wants, and a
  // repeated (id, subject, metric) left out so no series appears twice.
  EXPECT_NE(p.find("# TYPE perfgap_metric gauge\n"), std::string::npos);
  EXPECT_NE(p.find("perfgap_metric{node=\"gpu001\",id=\"a.pass\",subject=\"\",metric=\"m\"} 1.5\n"), std::string::npos) << p;
  auto m = sample();
  m.findings[1].metrics = {{"remote_pct", 18}, {"ratio", std::numeric_limits<double>::quiet_NaN()},
                           {"big", std::numeric_limits<double>::infinity()}, {"tiny", 1e-300}};
  m.findings.push_back(m.findings[1]);
  m.findings.back().metrics = {{"remote_pct", 99}};
  auto mp = render_prometheus(m, 0);
  EXPECT_NE(mp.find("id=\"a.fail\",subject=\"pid:1\",metric=\"remote_pct\"} 18\n"), std::string::npos) << mp;
  EXPECT_NE(mp.find("metric=\"ratio\"} NaN\n"), std::string::npos) << mp;
  EXPECT_NE(mp.find("metric=\"big\"} +Inf\n"), std::string::npos) << mp;
  EXPECT_NE(mp.find("metric=\"tiny\"} 1e-300\n"), std::string::npos) << mp;
  EXPECT_EQ(mp.find("} 99\n"), std::string::npos) << "a repeated series is left out:\n" << mp;
  auto r = sample();
  r.findings[0].subject = "a\"b\\c";
  EXPECT_NE(render_prometheus(r, 0).find("subject=\"a\\\"b\\\\c\""), std::string::npos);
}

// A report that decided nothing never heads OK: every finding a skip (or a command's own
// "could not", Report::undecided) heads SKIP with why, in text, HTML and the JSON's `undecided`.
TEST(Render, AReportThatDecidedNothingHeadsSkipWithWhy) {
  auto r = sample();
  r.findings.resize(1);
  r.findings[0].status = Status::skip;
  r.findings[0].title = "no trace of the job";
  const auto text = render_text(r, {false, false});
  EXPECT_NE(text.find(": SKIP  0 fail, 0 warn, 0 pass, 1 skip, 0 error; nothing could be decided: no trace of the job\n"), std::string::npos) << text;
  EXPECT_EQ(text.find(" OK "), std::string::npos) << text;
  auto j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j["undecided"], "nothing could be decided: no trace of the job");
  EXPECT_NE(render_html(r, {}).find("SKIP: 0 fail, 0 warn, 0 pass, 1 skip, 0 error; nothing could be decided: no trace of the job"), std::string::npos);
  // A command's own words win; with a pass beside them it still heads SKIP, with a warn WARN
  // (and the words stay).
  r.findings.push_back(sample().findings[0]);
  r.undecided = "nothing could be replayed: one rank alone";
  EXPECT_NE(render_text(r, {false, false}).find(": SKIP  0 fail, 0 warn, 1 pass, 1 skip, 0 error; nothing could be replayed: one rank alone\n"),
            std::string::npos)
      << render_text(r, {false, false});
  r.findings[1].status = Status::warn;
  EXPECT_NE(render_text(r, {false, false}).find(": WARN  0 fail, 1 warn, 0 pass, 1 skip, 0 error; nothing could be replayed: one rank alone\n"),
            std::string::npos);
  // Decided: no `undecided`, OK as before.
  auto ok = sample();
  ok.findings.resize(1);
  EXPECT_FALSE(nlohmann::json::parse(render_json(ok)).contains("undecided"));
  EXPECT_NE(render_text(ok, {false, false}).find(": OK  0 fail"), std::string::npos);
}
