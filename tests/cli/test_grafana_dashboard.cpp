// contrib/grafana/perfgap.json and contrib/prometheus/perfgap-rules.yml query only series
// perfgap writes: every perfgap_* name in an expression is one the Prometheus renderer emits,
// every metric label they select (exact or as a regex) is a metric perfgap wrote in a real run
// of the binary, every perfgap:* name is recorded by the rules, every alert name the dashboard
// selects is an alert of the rules, and every check id the rules select is a registered check.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;

namespace {

void collect_exprs(const nlohmann::json& j, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (k == "expr" && v.is_string()) out.push_back(v.get<std::string>());
      else collect_exprs(v, out);
    }
  } else if (j.is_array()) {
    for (const auto& v : j) collect_exprs(v, out);
  }
}

// What perfgap writes in Prometheus form: the golden trees' checks and an analyze of nccl-tests.
struct GrafanaEmitted {
  std::set<std::string> series;
  std::map<std::string, std::set<std::string>> metrics_by_id;
  std::string text;
};

GrafanaEmitted grafana_emitted() {
  const fs::path src = PERFGAP_SOURCE_DIR;
  GrafanaEmitted e;
  for (const char* name : {"healthy-x86", "h100-c1-remote-numa", "kvm-guest", "gb200-vm", "ib-hw-events"}) {
    perfgap::fixture::TempDir tree;
    auto spec = perfgap::fixture::unpack_tree((src / "tests/fixtures/golden" / (std::string(name) + ".tree")).string(), tree.path());
    EXPECT_TRUE(spec) << spec.error();
    e.text += run_binary(PERFGAP_BINARY, {"check", "--root", tree.path(), "--format", "prometheus"}).out;
  }
  auto nccl = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", (src / "tests/fixtures/logs/nccl-tests/slow-allreduce.txt").string(),
                                          "--format", "prometheus"});
  EXPECT_EQ(nccl.status, 0) << nccl.err;
  e.text += nccl.out;
  const std::regex line_re(R"(^(perfgap_[a-z_]+)\{([^}]*)\} )");
  const std::regex id_re(R"(id="([^"]*)\")"), metric_re(R"(metric="([^"]*)\")");
  std::istringstream lines(e.text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, line_re)) continue;
    e.series.insert(m[1]);
    const std::string labels = m[2];
    std::smatch id, metric;
    if (m[1] == "perfgap_metric" && std::regex_search(labels, id, id_re) && std::regex_search(labels, metric, metric_re))
      e.metrics_by_id[id[1]].insert(metric[1]);
  }
  return e;
}

struct GrafanaRules {
  std::set<std::string> records, alerts;
  std::vector<std::string> exprs;
};

GrafanaRules grafana_rules() {
  GrafanaRules r;
  const YAML::Node doc = YAML::LoadFile((fs::path(PERFGAP_SOURCE_DIR) / "contrib/prometheus/perfgap-rules.yml").string());
  for (const auto& group : doc["groups"])
    for (const auto& rule : group["rules"]) {
      if (rule["record"]) r.records.insert(rule["record"].as<std::string>());
      if (rule["alert"]) r.alerts.insert(rule["alert"].as<std::string>());
      r.exprs.push_back(rule["expr"].as<std::string>());
    }
  return r;
}

std::set<std::string> grafana_check_ids() {
  std::set<std::string> ids;
  auto list = run_binary(PERFGAP_BINARY, {"check", "--list"});
  EXPECT_EQ(list.status, 0) << list.err;
  std::istringstream lines(list.out);
  for (std::string line; std::getline(lines, line);) ids.insert(line.substr(0, line.find(' ')));
  return ids;
}

// A PromQL regex as the rules write it ("gpu\\.xid|pcie\\.aer"): the RE2 pattern ("gpu\.xid|...").
std::string grafana_pattern(std::string pattern) {
  for (std::size_t p = pattern.find("\\\\"); p != std::string::npos; p = pattern.find("\\\\", p + 1)) pattern.erase(p, 1);
  return pattern;
}

// The alternatives of a plain a|b|c pattern, escapes removed ("gpu.xid", "pcie.aer").
std::vector<std::string> grafana_alternatives(const std::string& pattern) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : grafana_pattern(pattern)) {
    if (c == '|') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\\') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

bool grafana_any_match(const std::set<std::string>& names, const std::string& pattern) {
  const std::regex re(grafana_pattern(pattern));  // PromQL's =~ is anchored RE2; these read the same in ECMAScript
  for (const auto& n : names)
    if (std::regex_match(n, re)) return true;
  return false;
}

// Checks one expression. `check_ids`: when given, every id it selects must be one of them.
void grafana_expect_known(const std::string& e, const GrafanaEmitted& emitted, const GrafanaRules& rules, const std::set<std::string>* check_ids) {
  static const std::regex name_re(R"(perfgap_[a-z_]+)"), recorded_re(R"(perfgap:[a-z0-9_:]+)");
  static const std::regex selector_re(R"re((perfgap_metric|perfgap_finding)\{([^}]*)\})re"), alerts_re(R"re(ALERTS\{([^}]*)\})re");
  static const std::regex exact_re(R"re(metric="([^"]*)")re"), match_re(R"re(metric=~"([^"]*)")re");
  static const std::regex id_exact_re(R"re(\bid="([^"]*)")re"), id_match_re(R"re(\bid=~"([^"]*)")re");
  static const std::regex alert_exact_re(R"re(alertname="([^"]*)")re"), alert_match_re(R"re(alertname=~"([^"]*)")re");
  for (std::sregex_iterator it(e.begin(), e.end(), name_re), end; it != end; ++it)
    EXPECT_TRUE(emitted.series.count(it->str())) << it->str() << " in `" << e << "` is not a series perfgap writes";
  for (std::sregex_iterator it(e.begin(), e.end(), recorded_re), end; it != end; ++it)
    EXPECT_TRUE(rules.records.count(it->str())) << it->str() << " in `" << e << "` is not recorded by perfgap-rules.yml";
  for (std::sregex_iterator it(e.begin(), e.end(), alerts_re), end; it != end; ++it) {
    const std::string sel = (*it)[1];
    std::smatch m;
    if (std::regex_search(sel, m, alert_exact_re)) {
      EXPECT_TRUE(rules.alerts.count(m[1])) << m[1] << " in `" << e << "` is no alert of the rules";
    } else if (std::regex_search(sel, m, alert_match_re)) {
      EXPECT_TRUE(grafana_any_match(rules.alerts, m[1])) << m[1] << " in `" << e << "` matches no alert";
    }
  }
  for (std::sregex_iterator it(e.begin(), e.end(), selector_re), end; it != end; ++it) {
    const std::string name = (*it)[1], sel = (*it)[2];
    std::smatch id, m;
    std::vector<std::string> ids;
    if (std::regex_search(sel, id, id_exact_re)) ids.push_back(id[1]);
    else if (std::regex_search(sel, id, id_match_re)) ids = grafana_alternatives(id[1]);
    if (check_ids) {
      for (const auto& i : ids) EXPECT_TRUE(check_ids->count(i)) << i << " in `" << e << "` is not a registered check id";
    }
    if (name != "perfgap_metric") continue;
    // The metrics written for the selected ids (any id when none is selected).
    std::set<std::string> known;
    for (const auto& [i, metrics] : emitted.metrics_by_id)
      if (ids.empty() || std::find(ids.begin(), ids.end(), i) != ids.end()) known.insert(metrics.begin(), metrics.end());
    if (!check_ids) {
      ASSERT_FALSE(ids.empty()) << "perfgap_metric without an id in `" << e << "`";
    }
    if (std::regex_search(sel, m, exact_re)) {
      EXPECT_TRUE(known.count(m[1])) << "metric " << m[1] << " in `" << e << "` is not written";
    } else if (std::regex_search(sel, m, match_re)) {
      if (check_ids) {  // the rules name their metrics one by one: each must be written
        for (const auto& alt : grafana_alternatives(m[1])) EXPECT_TRUE(known.count(alt)) << "metric " << alt << " in `" << e << "` is not written";
      } else {
        EXPECT_TRUE(grafana_any_match(known, m[1])) << "metric =~ " << m[1] << " in `" << e << "` matches nothing written";
      }
    } else {
      ADD_FAILURE() << "perfgap_metric without a metric label in `" << e << "`";
    }
  }
}

TEST(GrafanaDashboard, EveryQueryNamesSeriesPerfgapEmits) {
  std::ifstream in(fs::path(PERFGAP_SOURCE_DIR) / "contrib/grafana/perfgap.json");
  ASSERT_TRUE(in);
  auto dash = nlohmann::json::parse(in);
  std::vector<std::string> exprs;
  collect_exprs(dash, exprs);
  ASSERT_GE(exprs.size(), 8u);
  const auto emitted = grafana_emitted();
  ASSERT_TRUE(emitted.series.count("perfgap_metric")) << emitted.text.substr(0, 500);
  const auto rules = grafana_rules();
  for (const auto& e : exprs) grafana_expect_known(e, emitted, rules, nullptr);
  // The alerts view of the rules is on the dashboard.
  EXPECT_TRUE(std::any_of(exprs.begin(), exprs.end(), [](const std::string& e) { return e.find("ALERTS{") != std::string::npos; }));
}

TEST(PrometheusRules, EveryExpressionNamesSeriesPerfgapEmits) {
  const auto emitted = grafana_emitted();
  const auto rules = grafana_rules();
  ASSERT_GE(rules.alerts.size(), 4u);
  const auto ids = grafana_check_ids();
  ASSERT_TRUE(ids.count("gpu.xid"));
  for (const auto& e : rules.exprs) grafana_expect_known(e, emitted, rules, &ids);
}

TEST(PrometheusRules, TheCheckerRefusesAnUnknownName) {
  // What the two tests above would say about a typo.
  const GrafanaEmitted emitted{{"perfgap_metric"}, {{"gpu.xid", {"events"}}}, ""};
  const GrafanaRules rules{{"perfgap:known"}, {"PerfgapKnown"}, {}};
  const std::set<std::string> ids{"gpu.xid"};
  for (const std::string bad : {"perfgap_metrics", "perfgap:unknown", "perfgap_metric{id=\"gpu.xid\",metric=\"event\"}",
                                "perfgap_metric{id=~\"gpu\\\\.xid|gpu\\\\.xdi\",metric=\"events\"}", "ALERTS{alertname=\"PerfgapUnknown\"}"}) {
    ::testing::TestPartResultArray failures;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
      grafana_expect_known(bad, emitted, rules, &ids);
    }
    EXPECT_GT(failures.size(), 0) << bad << " passed the checker";
  }
  ::testing::TestPartResultArray none;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &none);
    grafana_expect_known("perfgap:known > 0 and perfgap_metric{id=~\"gpu\\\\.xid\",metric=\"events\"} and ALERTS{alertname=~\"Perfgap.*\"}", emitted,
                         rules, &ids);
  }
  EXPECT_EQ(none.size(), 0);
}

}  // namespace
