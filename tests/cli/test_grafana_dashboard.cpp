// contrib/grafana/perfgap.json queries only series perfgap writes: every perfgap_* name in an
// expression is one the Prometheus renderer emits, and every metric label it selects (exact or
// as a regex) is a metric perfgap wrote for that finding id in a real run of the binary.
#include <gtest/gtest.h>

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

TEST(GrafanaDashboard, EveryQueryNamesSeriesPerfgapEmits) {
  const fs::path src = PERFGAP_SOURCE_DIR;
  std::ifstream in(src / "contrib/grafana/perfgap.json");
  ASSERT_TRUE(in);
  auto dash = nlohmann::json::parse(in);
  std::vector<std::string> exprs;
  collect_exprs(dash, exprs);
  ASSERT_GE(exprs.size(), 8u);

  // What perfgap writes: the golden trees' checks and an analyze of nccl-tests, in Prometheus form.
  std::string emitted;
  for (const char* name : {"healthy-x86", "h100-c1-remote-numa", "kvm-guest", "gb200-vm"}) {
    perfgap::fixture::TempDir tree;
    auto spec = perfgap::fixture::unpack_tree((src / "tests/fixtures/golden" / (std::string(name) + ".tree")).string(), tree.path());
    ASSERT_TRUE(spec) << spec.error();
    emitted += run_binary(PERFGAP_BINARY, {"check", "--root", tree.path(), "--format", "prometheus"}).out;
  }
  auto nccl = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", (src / "tests/fixtures/logs/nccl-tests/slow-allreduce.txt").string(),
                                          "--format", "prometheus"});
  ASSERT_EQ(nccl.status, 0) << nccl.err;
  emitted += nccl.out;
  std::set<std::string> series;
  std::map<std::string, std::set<std::string>> metrics_by_id;
  const std::regex line_re(R"(^(perfgap_[a-z_]+)\{([^}]*)\} )");
  const std::regex id_re(R"(id="([^"]*)\")"), metric_re(R"(metric="([^"]*)\")");
  std::istringstream lines(emitted);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, line_re)) continue;
    series.insert(m[1]);
    const std::string labels = m[2];
    std::smatch id, metric;
    if (m[1] == "perfgap_metric" && std::regex_search(labels, id, id_re) && std::regex_search(labels, metric, metric_re))
      metrics_by_id[id[1]].insert(metric[1]);
  }
  ASSERT_TRUE(series.count("perfgap_metric")) << emitted.substr(0, 500);

  const std::regex name_re(R"(perfgap_[a-z_]+)");
  const std::regex selector_re(R"re(perfgap_metric\{([^}]*)\})re");
  const std::regex exact_re(R"re(metric="([^"]*)")re"), match_re(R"re(metric=~"([^"]*)")re"), sel_id_re(R"re(id="([^"]*)")re");
  for (const auto& e : exprs) {
    for (std::sregex_iterator it(e.begin(), e.end(), name_re), end; it != end; ++it)
      EXPECT_TRUE(series.count(it->str())) << it->str() << " in `" << e << "` is not a series perfgap writes";
    for (std::sregex_iterator it(e.begin(), e.end(), selector_re), end; it != end; ++it) {
      const std::string sel = (*it)[1];
      std::smatch id, m;
      ASSERT_TRUE(std::regex_search(sel, id, sel_id_re)) << "perfgap_metric without an id in `" << e << "`";
      const auto& known = metrics_by_id[id[1]];
      if (std::regex_search(sel, m, exact_re)) {
        EXPECT_TRUE(known.count(m[1])) << id[1] << " metric " << m[1] << " in `" << e << "` is not written";
      } else if (std::regex_search(sel, m, match_re)) {
        // PromQL's =~ is anchored RE2; the escapes the dashboard uses read the same in ECMAScript.
        std::string pattern = m[1];
        for (std::size_t p = pattern.find("\\\\"); p != std::string::npos; p = pattern.find("\\\\", p + 1)) pattern.erase(p, 1);
        const std::regex re(pattern);
        bool any = false;
        for (const auto& k : known) any = any || std::regex_match(k, re);
        EXPECT_TRUE(any) << id[1] << " metric =~ " << pattern << " in `" << e << "` matches nothing written";
      } else {
        ADD_FAILURE() << "perfgap_metric without a metric label in `" << e << "`";
      }
    }
  }
}

}  // namespace
