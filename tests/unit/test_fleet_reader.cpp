#include <gtest/gtest.h>

#include "fleet/reader.hpp"
#include "fleet_gen.hpp"

namespace perfgap::fleet {
namespace {

std::string why(std::string_view text) {
  ReportReader r;
  auto got = r.parse(text, {});
  return got ? std::string("ok") : got.error();
}

TEST(FleetReader, ReadsGeneratedReport) {
  fleetgen::NodeSpec spec;
  spec.name = "gpu0042";
  spec.environment["NCCL_IB_QPS_PER_CONNECTION"] = "1";
  spec.status["cpu.governor"] = "fail";
  ReportReader r;
  auto n = r.parse(fleetgen::report_json(spec), {});
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(n->name, "gpu0042");
  EXPECT_EQ(n->kernel, "6.8.0-45-generic");
  EXPECT_EQ(n->generated_unix, 1796040000);
  EXPECT_EQ(n->settings.at("governor"), "performance");
  // Only NCCL_/UCX_ variables are kept for drift.
  EXPECT_EQ(n->environment.at("NCCL_IB_QPS_PER_CONNECTION"), "1");
  EXPECT_EQ(n->environment.count("CUDA_VISIBLE_DEVICES"), 0u);
  EXPECT_EQ(n->environment.count("UCX_TLS"), 1u);
  EXPECT_GE(n->findings.size(), 40u);
  bool governor_fails = false;
  for (const auto& f : n->findings) governor_fails |= f.id == "cpu.governor" && f.status == report::Status::fail;
  EXPECT_TRUE(governor_fails);
  // Without details, no titles or evidence are kept; with them they are.
  EXPECT_TRUE(n->report_findings.empty());
  std::size_t metrics = 0;
  for (const auto& f : n->findings) metrics += n->metrics_of(f).size();
  EXPECT_EQ(metrics, n->metrics.size());
  EXPECT_EQ(n->metrics_of(n->findings[0]).front().name, "virtualized");
  auto d = r.parse(fleetgen::report_json(spec), {.findings = true, .details = true});
  ASSERT_TRUE(d);
  ASSERT_EQ(d->report_findings.size(), d->findings.size());
  EXPECT_EQ(d->report_findings[0].title, "bare metal");
  EXPECT_EQ(d->report_findings[0].evidence.size(), 3u);
  auto m = r.parse(fleetgen::report_json(spec), {.findings = true});
  EXPECT_TRUE(m->report_findings[0].title.empty());
  EXPECT_EQ(m->report_findings[0].id, "virt.hypervisor");
}

// An analyze nccl-inspector|nccl-ras report names its ranks in a "nccl ranks" evidence line:
// kept per finding; an item without a host is left out; a node report's such line is not read.
TEST(FleetReader, NcclRanksEvidenceOfAnAnalyzeReport) {
  const std::string head = R"({"schema":"perfgap.report/1","tool":{"name":"perfgap","version":"x"},"generated_at":"2026-12-02T12:00:00Z",)";
  const std::string findings = R"js("findings":[{"id":"nccl_inspector.summary","layer":"network","status":"pass","evidence":[]},
    {"id":"nccl_ras.dead","layer":"network","status":"fail","evidence":[{"source":"ras.txt:3","observed":"process 7"},
      {"source":"nccl ranks","observed":"10.0.0.13: pid 41005 (GPU 1); no host here; 10.0.0.14: rank 3 (pid 9, GPU 0)"}]}]})js";
  ReportReader r;
  auto n = r.parse(head + R"("source":{"kind":"analyze","inputs":["ras.txt"]},"node":null,)" + findings, {});
  ASSERT_TRUE(n) << n.error();
  ASSERT_EQ(n->ranks.size(), 2u);
  EXPECT_EQ(n->ranks[0].finding, 1u);
  EXPECT_EQ(n->ranks[0].host, "10.0.0.13");
  EXPECT_EQ(n->ranks[0].what, "pid 41005 (GPU 1)");
  EXPECT_EQ(n->ranks[1].host, "10.0.0.14");
  EXPECT_EQ(n->ranks[1].what, "rank 3 (pid 9, GPU 0)");
  EXPECT_TRUE(n->hosts.empty());
}

TEST(FleetReader, TruncatedAtEveryPointIsRejectedNotCrashing) {
  const std::string full = fleetgen::report_json({});
  ReportReader r;
  for (std::size_t cut = 0; cut + 2 < full.size(); cut += 97) {
    auto got = r.parse(std::string_view(full).substr(0, cut), {});
    EXPECT_FALSE(got) << "cut at " << cut;
  }
  auto got = r.parse(std::string_view(full).substr(0, full.size() / 2), {});
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().find("truncated"), std::string::npos) << got.error();
}

TEST(FleetReader, ForeignAndGarbageInputsSayWhy) {
  EXPECT_EQ(why(""), "line 1, byte 0: not JSON (empty)");
  EXPECT_EQ(why("  \n"), "line 2, byte 3: not JSON (empty)");
  EXPECT_NE(why("\x7f" "ELF\x02\x01").find("not a JSON object"), std::string::npos);
  EXPECT_NE(why("[1,2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(why("{oops").find("JSON"), std::string::npos);
  EXPECT_NE(why(R"({"schema": "other/2", "node": {}})").find("schema is not perfgap.report/1 ('other/2')"), std::string::npos);
  EXPECT_NE(why(R"({"hello": 1})").find("schema is not perfgap.report/1 (none)"), std::string::npos);
  // analyze reports are measurements (fleet/measured); other kinds are neither.
  EXPECT_NE(why(R"({"schema": "perfgap.report/1", "source": {"kind": "gap"}, "node": null, "findings": []})").find("neither a node report"),
            std::string::npos);
  EXPECT_NE(why(R"({"schema": "perfgap.report/1", "source": {"kind": "live"}, "node": null, "findings": []})").find("node is null"),
            std::string::npos);
  // A node without a name is still a node (issue 41 item 5): the loader names it from its file.
  EXPECT_EQ(why(R"({"schema": "perfgap.report/1", "source": {"kind": "root"}, "node": {"name": ""}, "findings": []})"), "ok");
  EXPECT_EQ(why(R"({"schema": "perfgap.report/1", "source": {"kind": "root"}, "node": {"hostname": ""}, "findings": []})"), "ok");
  EXPECT_NE(why(R"({"schema": "perfgap.report/1", "source": {"kind": "live"}, "node": {"name": "a"}, "findings": [{"id": "x", "layer": "gpu", "status": "great"}]})")
                .find("findings[0].status 'great'"),
            std::string::npos);
  EXPECT_NE(why(R"({"schema": "perfgap.report/1", "source": {"kind": "root"}, "node": {"name": "a", "settings": {"x": 1}}, "findings": []})")
                .find("node.settings.x is a number, not a string"),
            std::string::npos);
  EXPECT_EQ(why(R"({"schema": "perfgap.report/1", "source": {"kind": "root"}, "node": {"name": "a"}, "findings": [{"id": "x", "layer": "gpu", "status": "pass", "metrics": {"nan": null, "n": 3}}]})"),
            "ok");
}

TEST(FleetReader, Rfc3339) {
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_rfc3339("2026-11-30T12:00:00Z"), 1796040000);
  EXPECT_EQ(parse_rfc3339("2026-11-30T13:30:00.123+01:30"), 1796040000);
  EXPECT_FALSE(parse_rfc3339("2026-11-30 12:00"));
  EXPECT_FALSE(parse_rfc3339("2026-13-30T12:00:00Z"));
  EXPECT_FALSE(parse_rfc3339("2026-11-30T12:00:00Zjunk"));
}

}  // namespace
}  // namespace perfgap::fleet
