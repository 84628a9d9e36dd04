// The real monitoring pipeline on loopback (docs/MONITORING.md): perfgap writes its textfile
// for a tree with known failures, Debian's prometheus-node-exporter serves it with the textfile
// collector, Debian's prometheus scrapes it (with contrib/prometheus/perfgap-rules.yml loaded)
// from a configuration written here, and PromQL through the HTTP API must return perfgap's
// series with the values of the same tree's JSON report, and the rules' alerts. Both servers are
// taken out of Debian's packages by tools/setup-debian.sh --test into /var/tmp/perfgap-tools
// (or $PERFGAP_PROMETHEUS / $PERFGAP_NODE_EXPORTER, or $PATH); each is stopped by its PID when
// the test ends, passed or failed. Without them the test skips, except under CI (CI=true).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;

namespace {

std::string pipeline_tool(const char* env, const char* name) {
  if (const char* p = std::getenv(env); p && *p) return p;
  const std::string kept = std::string("/var/tmp/perfgap-tools/") + name;
  if (fs::exists(kept)) return kept;
  return perfgap::fixture::find_on_path(name);
}

// A TCP port on 127.0.0.1 that is free now (the kernel's pick for port 0).
int pipeline_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

std::string pipeline_url_encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// GET http://127.0.0.1:PORT/PATH: the body of a 200 answer; nullopt when nothing answers (yet)
// or the answer is not 200. Reads are bounded by a socket timeout.
std::optional<std::string> pipeline_http_get(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  std::string response;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[65536];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) response.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  const auto body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || response.find(" 200 ") > response.find("\r\n") || body == std::string::npos)
    return std::nullopt;
  return response.substr(body + 4);
}

// The result vector of an instant PromQL query; empty when the query returns nothing (yet).
nlohmann::json pipeline_query(int port, const std::string& promql) {
  auto body = pipeline_http_get(port, "/api/v1/query?query=" + pipeline_url_encode(promql));
  if (!body) return nlohmann::json::array();
  auto j = nlohmann::json::parse(*body, nullptr, false);
  if (j.is_discarded() || j.value("status", "") != "success") return nlohmann::json::array();
  return j["data"]["result"];
}

// Asks until the query returns something, at most `limit` (the servers start and scrape on
// their own schedule; the bound only keeps a broken pipeline from hanging the test).
nlohmann::json pipeline_poll(int port, const std::string& promql, std::chrono::seconds limit = std::chrono::seconds(90)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    auto r = pipeline_query(port, promql);
    if (!r.empty() || std::chrono::steady_clock::now() > until) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

std::string pipeline_read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string pipeline_label(const nlohmann::json& sample, const char* name) {
  const auto& m = sample["metric"];
  return m.contains(name) ? m[name].get<std::string>() : std::string();  // Prometheus drops empty labels
}

TEST(MonitoringPipeline, NodeExporterAndPrometheusServePerfgapsSeriesAndAlerts) {
  const std::string prometheus = pipeline_tool("PERFGAP_PROMETHEUS", "prometheus");
  const std::string exporter = pipeline_tool("PERFGAP_NODE_EXPORTER", "prometheus-node-exporter");
  if (prometheus.empty() || exporter.empty()) {
    const char* ci = std::getenv("CI");
    if (ci && std::string(ci) == "true") FAIL() << "CI must have prometheus and prometheus-node-exporter (tools/setup-debian.sh --test)";
    GTEST_SKIP() << "prometheus or prometheus-node-exporter not found: run tools/setup-debian.sh --test";
  }
  const fs::path src = PERFGAP_SOURCE_DIR;
  perfgap::fixture::TempDir tmp;
  const fs::path base = tmp.path();
  const fs::path tree = base / "tree", textfiles = base / "textfile", data = base / "data";
  fs::create_directories(textfiles);
  // Xids, a link-flapping NIC and RDMA link errors: two `fail`, several `warn`.
  auto spec = perfgap::fixture::unpack_tree((src / "tests/fixtures/golden/ib-hw-events.tree").string(), tree.string());
  ASSERT_TRUE(spec) << spec.error();
  auto written = run_binary(PERFGAP_BINARY, {"check", "--root", tree.string(), "--format", "prometheus", "--output", (textfiles / "perfgap.prom").string()});
  ASSERT_EQ(written.status, 1) << written.err;  // a `fail` was found, the file written
  // The atomic write leaves the one file node_exporter reads, nothing half-written beside it.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(textfiles)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"perfgap.prom"});
  auto json = run_binary(PERFGAP_BINARY, {"check", "--root", tree.string(), "--format", "json"});
  ASSERT_EQ(json.status, 1) << json.err;
  const auto report = nlohmann::json::parse(json.out);

  const int exporter_port = pipeline_free_port(), prometheus_port = pipeline_free_port();
  ASSERT_GT(exporter_port, 0);
  ASSERT_GT(prometheus_port, 0);
  perfgap::fixture::Background node_exporter(
      exporter,
      {"--web.listen-address=127.0.0.1:" + std::to_string(exporter_port), "--collector.disable-defaults", "--collector.textfile",
       "--collector.textfile.directory=" + textfiles.string()},
      (base / "node_exporter.log").string());
  ASSERT_GT(node_exporter.pid(), 0) << node_exporter.error();
  std::ofstream(base / "prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                          << "rule_files:\n  - " << (src / "contrib/prometheus/perfgap-rules.yml").string() << "\n"
                                          << "scrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:"
                                          << exporter_port << "']\n";
  perfgap::fixture::Background server(prometheus,
                                      {"--config.file=" + (base / "prometheus.yml").string(), "--storage.tsdb.path=" + data.string(),
                                       "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port)},
                                      (base / "prometheus.log").string());
  ASSERT_GT(server.pid(), 0) << server.error();

  // The first scrape that carried perfgap's file.
  auto fails = pipeline_poll(prometheus_port, "perfgap_findings{status=\"fail\"}");
  ASSERT_EQ(fails.size(), 1u) << "no perfgap series scraped; node_exporter:\n"
                              << pipeline_read(base / "node_exporter.log") << "\nprometheus:\n"
                              << pipeline_read(base / "prometheus.log");
  EXPECT_TRUE(node_exporter.running());
  EXPECT_TRUE(server.running());
  const std::string node = report["node"]["name"];
  EXPECT_EQ(pipeline_label(fails[0], "node"), node);
  EXPECT_EQ(pipeline_label(fails[0], "job"), "node");
  EXPECT_EQ(pipeline_label(fails[0], "instance"), "127.0.0.1:" + std::to_string(exporter_port));
  EXPECT_EQ(fails[0]["value"][1], "2");

  // Every finding and every metric of the JSON report, with its value, and nothing else.
  std::set<std::tuple<std::string, std::string, std::string>> want_findings, got_findings;
  std::map<std::tuple<std::string, std::string, std::string>, double> want_metrics, got_metrics;
  for (const auto& f : report["findings"]) {
    const std::string id = f["id"], subject = f.value("subject", "");
    want_findings.emplace(id, subject, f["status"]);
    if (f.contains("metrics"))
      for (const auto& [m, v] : f["metrics"].items()) want_metrics[{id, subject, m}] = v.get<double>();
  }
  for (const auto& s : pipeline_query(prometheus_port, "perfgap_finding"))
    got_findings.emplace(pipeline_label(s, "id"), pipeline_label(s, "subject"), pipeline_label(s, "status"));
  for (const auto& s : pipeline_query(prometheus_port, "perfgap_metric"))
    got_metrics[{pipeline_label(s, "id"), pipeline_label(s, "subject"), pipeline_label(s, "metric")}] = std::stod(s["value"][1].get<std::string>());
  EXPECT_EQ(got_findings, want_findings);
  ASSERT_EQ(got_metrics.size(), want_metrics.size());
  for (const auto& [key, v] : want_metrics) {
    ASSERT_TRUE(got_metrics.count(key)) << std::get<0>(key) << " " << std::get<1>(key) << " " << std::get<2>(key);
    EXPECT_DOUBLE_EQ(got_metrics[key], v) << std::get<0>(key) << " " << std::get<2>(key);
  }
  EXPECT_TRUE(want_findings.count({"gpu.xid", "0000:af:00.0", "fail"}));
  EXPECT_TRUE(want_metrics.count({"net.link_flaps", "0000:ae:00.0", "events"}));

  // node_exporter's own view of the file, which PerfgapNotReporting reads.
  auto mtime = pipeline_query(prometheus_port, "node_textfile_mtime_seconds{file=~\"(.*/)?perfgap\\\\.prom\"}");
  ASSERT_EQ(mtime.size(), 1u);
  struct stat st {};
  ASSERT_EQ(::stat((textfiles / "perfgap.prom").c_str(), &st), 0);
  // node_exporter writes the mtime as a float with whole seconds' precision.
  EXPECT_NEAR(std::stod(mtime[0]["value"][1].get<std::string>()), static_cast<double>(st.st_mtim.tv_sec), 1.0);
  auto scrape_error = pipeline_query(prometheus_port, "node_textfile_scrape_error");
  ASSERT_EQ(scrape_error.size(), 1u);
  EXPECT_EQ(scrape_error[0]["value"][1], "0");

  // The rules, evaluated by the real server: the Xid `fail` is a critical PerfgapHardwareErrors.
  auto alerts = pipeline_poll(prometheus_port, "ALERTS{alertname=\"PerfgapHardwareErrors\",alertstate=\"firing\",id=\"gpu.xid\"}");
  std::map<std::string, std::string> severity_by_subject;
  for (const auto& a : alerts) severity_by_subject[pipeline_label(a, "subject")] = pipeline_label(a, "severity");
  EXPECT_EQ(severity_by_subject["0000:af:00.0"], "critical");
  EXPECT_EQ(severity_by_subject["0000:18:00.0"], "warning");

  server.stop();
  node_exporter.stop();
  EXPECT_FALSE(server.running());
  EXPECT_FALSE(node_exporter.running());
}

}  // namespace
