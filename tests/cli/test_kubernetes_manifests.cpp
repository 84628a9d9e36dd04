// contrib/kubernetes: every manifest is valid against the Kubernetes API schemas (the npm
// kubernetes-models validators through tools/validate-k8s.cjs, unknown fields refused), and
// states what docs/MONITORING.md promises (host namespaces, read-only host paths, the named
// capabilities, the textfile directory; the pre-check running in the trainer's image with the
// trainer's env, resources and mounts). tools/setup-debian.sh --test installs the validators
// in /var/tmp/perfgap-tools/k8s (or $PERFGAP_K8S_MODULES names a node_modules); without them
// (or node) the validation tests skip, except under CI (CI=true), which must have them.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;

namespace {

const fs::path kK8sDir = fs::path(PERFGAP_SOURCE_DIR) / "contrib/kubernetes";

std::string k8s_read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

YAML::Node k8s_doc(const std::string& file, const std::string& kind) {
  for (const auto& d : YAML::LoadAllFromFile((kK8sDir / file).string()))
    if (d["kind"] && d["kind"].as<std::string>() == kind) return d;
  ADD_FAILURE() << "no " << kind << " in " << file;
  return YAML::Node();
}

std::set<std::string> k8s_strings(const YAML::Node& seq) {
  std::set<std::string> out;
  for (const auto& s : seq) out.insert(s.as<std::string>());
  return out;
}

class KubernetesValidator : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = perfgap::fixture::find_on_path("node");
    const char* env = std::getenv("PERFGAP_K8S_MODULES");
    modules_ = env && *env ? env : "/var/tmp/perfgap-tools/k8s/node_modules";
    if (node_.empty() || !fs::exists(fs::path(modules_) / "kubernetes-models/package.json")) {
      const char* ci = std::getenv("CI");
      if (ci && std::string(ci) == "true") FAIL() << "CI must have node and the kubernetes-models validators (tools/setup-debian.sh --test)";
      GTEST_SKIP() << "node or " << modules_ << "/kubernetes-models not found: run tools/setup-debian.sh --test";
    }
  }
  perfgap::fixture::RunResult validate(const std::vector<std::string>& files) {
    std::vector<std::string> args{(fs::path(PERFGAP_SOURCE_DIR) / "tools/validate-k8s.cjs").string(), modules_};
    args.insert(args.end(), files.begin(), files.end());
    return run_binary(node_, args);
  }
  std::string node_, modules_;
  perfgap::fixture::TempDir tmp_;
};

TEST_F(KubernetesValidator, EveryManifestIsValid) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kK8sDir))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  ASSERT_GE(files.size(), 2u);
  auto r = validate(files);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("validate-k8s: 3 object(s) checked, 0 problem(s)"), std::string::npos) << r.out;
}

TEST_F(KubernetesValidator, RefusesAnUnknownFieldAWrongTypeAndAWrongValue) {
  const std::string text = k8s_read(kK8sDir / "perfgap-daemonset.yaml");
  struct Mutation {
    std::string from, to, said;
  };
  for (const auto& m : {Mutation{"hostPID: true", "hostPid: true", "/spec/template/spec/hostPid: unknown field"},
                        Mutation{"hostPID: true", "hostPID: \"yes\"", "/spec/template/spec/hostPID: type"},
                        Mutation{"imagePullPolicy: IfNotPresent", "imagePullPolicy: Sometimes", "imagePullPolicy: enum"},
                        Mutation{"readOnly: true", "readonly: true", "readonly: unknown field"}}) {
    const auto at = text.find(m.from);
    ASSERT_NE(at, std::string::npos) << m.from;
    std::string changed = text;
    changed.replace(at, m.from.size(), m.to);
    const fs::path file = fs::path(tmp_.path()) / "changed.yaml";
    std::ofstream(file) << changed;
    auto r = validate({file.string()});
    EXPECT_EQ(r.status, 1) << m.to << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find(m.said), std::string::npos) << m.to << "\n" << r.out;
  }
  // Not YAML at all, and a file that is not there: could not run, one line.
  auto missing = validate({(fs::path(tmp_.path()) / "absent.yaml").string()});
  EXPECT_EQ(missing.status, 2) << missing.out;
  EXPECT_TRUE(perfgap::fixture::one_line(missing.err)) << missing.err;
}

TEST(KubernetesManifests, DaemonSetSharesTheNodesNamespacesAndWritesOnlyTheTextfile) {
  const auto ds = k8s_doc("perfgap-daemonset.yaml", "DaemonSet");
  const auto pod = ds["spec"]["template"]["spec"];
  EXPECT_TRUE(pod["hostPID"].as<bool>());
  EXPECT_TRUE(pod["hostNetwork"].as<bool>());
  EXPECT_FALSE(pod["automountServiceAccountToken"].as<bool>());
  ASSERT_EQ(pod["containers"].size(), 1u);
  const auto c = pod["containers"][0];
  const auto sc = c["securityContext"];
  EXPECT_FALSE(sc["privileged"].as<bool>());
  EXPECT_FALSE(sc["allowPrivilegeEscalation"].as<bool>());
  EXPECT_TRUE(sc["readOnlyRootFilesystem"].as<bool>());
  EXPECT_EQ(k8s_strings(sc["capabilities"]["drop"]), std::set<std::string>{"ALL"});
  EXPECT_EQ(k8s_strings(sc["capabilities"]["add"]), (std::set<std::string>{"SYS_PTRACE", "DAC_READ_SEARCH", "SYSLOG"}));
  // The same capabilities as the systemd service's bounding set.
  const std::string service = k8s_read(fs::path(PERFGAP_SOURCE_DIR) / "packaging/systemd/perfgap.service");
  EXPECT_NE(service.find("\nCapabilityBoundingSet=CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_SYSLOG\n"), std::string::npos);

  // Host paths are read-only but for the textfile directory, which is the service's too.
  std::map<std::string, std::string> host_path;  // volume -> host path
  for (const auto& v : pod["volumes"])
    if (v["hostPath"]) host_path[v["name"].as<std::string>()] = v["hostPath"]["path"].as<std::string>();
  std::string textfile_mount;
  for (const auto& m : c["volumeMounts"]) {
    const auto name = m["name"].as<std::string>();
    if (!host_path.count(name)) continue;
    if (host_path[name] == "/var/lib/prometheus/node-exporter") textfile_mount = m["mountPath"].as<std::string>();
    else EXPECT_TRUE(m["readOnly"] && m["readOnly"].as<bool>()) << name << " is writable";
  }
  ASSERT_FALSE(textfile_mount.empty()) << "no mount of the textfile directory";
  EXPECT_NE(service.find("\nReadWritePaths=/var/lib/prometheus/node-exporter\n"), std::string::npos);
  EXPECT_TRUE(host_path.count("kmsg") && host_path["kmsg"] == "/dev/kmsg");
  // The loop writes there, every 15 minutes like the timer.
  const std::string script = c["args"][0].as<std::string>();
  EXPECT_NE(script.find("/usr/bin/perfgap check --format prometheus --output " + textfile_mount + "/perfgap.prom"), std::string::npos) << script;
  auto syntax = run_binary("/bin/sh", {"-n", "-c", script});  // the loop is valid POSIX shell
  EXPECT_EQ(syntax.status, 0) << syntax.err;
  bool interval = false;
  for (const auto& e : c["env"]) interval = interval || (e["name"].as<std::string>() == "PERFGAP_INTERVAL_S" && e["value"].as<std::string>() == "900");
  EXPECT_TRUE(interval);
}

TEST(KubernetesManifests, PrecheckRunsInTheTrainersImageWithItsEnvResourcesAndMounts) {
  const auto job = k8s_doc("perfgap-precheck-job.yaml", "Job");
  const auto pod = job["spec"]["template"]["spec"];
  EXPECT_EQ(job["spec"]["backoffLimit"].as<int>(), 0);
  EXPECT_EQ(pod["restartPolicy"].as<std::string>(), "Never");
  EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>());
  ASSERT_EQ(pod["initContainers"].size(), 2u);
  const auto copy = pod["initContainers"][0], check = pod["initContainers"][1], trainer = pod["containers"][0];
  EXPECT_EQ(copy["command"][1].as<std::string>(), "/usr/bin/perfgap");
  EXPECT_EQ(check["command"][0].as<std::string>(), "/opt/perfgap/perfgap");
  EXPECT_EQ(check["command"][1].as<std::string>(), "check");
  EXPECT_EQ(check["image"].as<std::string>(), trainer["image"].as<std::string>());
  for (const char* key : {"env", "resources", "securityContext", "volumeMounts"})
    EXPECT_EQ(YAML::Dump(check[key]), YAML::Dump(trainer[key])) << key << " differs between the pre-check and the trainer";
}

}  // namespace
