// perfgap inside real containers (tests/support/real_container.sh): runc on an OCI bundle
// whose rootfs is a debootstrap minbase, bubblewrap, and enroot's mechanism (unshare + chroot
// with the host's environ.d/mounts.d lines). The public topology case: the host sets
// NCCL_TOPO_FILE=/etc/nccl/topo.xml and has the file; a container given neither fails with
// the bind-mount and variable fix (against the host's report, and alone when only the
// variable arrives); given both it passes. container.detect names each runtime.
//
// Needs root, unshare, the runtime, and a minbase root file system
// ($PERFGAP_CHROOT_DIR/trixie, default /var/tmp/perfgap-chroots: tools/release-check.sh
// chroots makes it). Missing any of them is a skip saying which, except under
// PERFGAP_REAL_CONTAINER_TESTS=required (tools/test.sh in CI as root), where it is a
// failure; a kernel that refuses namespaces is always a skip.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "run.hpp"

namespace {
namespace real_containers_test {

namespace fs = std::filesystem;
using perfgap::fixture::RunResult;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

const std::string kScript = std::string(PERFGAP_SOURCE_DIR) + "/tests/support/real_container.sh";
const std::vector<std::string> kTopoChecks = {"--only", "container.detect", "--only", "container.env_drift", "--only",
                                              "nccl.topo_file", "--format", "json"};

bool required() {
  const char* r = std::getenv("PERFGAP_REAL_CONTAINER_TESTS");
  return r && std::string(r) == "required";
}

std::string on_path(const std::string& name) {
  for (const char* dir : {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    const std::string p = std::string(dir) + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// The static release binary when it was built (what users copy into images), else this
// build's dynamic one with the machine's libraries bound into the image.
struct Binary {
  std::string path;
  bool dynamic = true;
};
Binary binary_to_run() {
  std::string release;
  if (const char* e = std::getenv("PERFGAP_RELEASE_BINARY"); e && *e) release = e;
  else release = std::string(PERFGAP_SOURCE_DIR) + "/build-release/src/perfgap";
  if (::access(release.c_str(), X_OK) == 0) {
    auto v = run_binary(release, {"version"});
    if (v.status == 0 && v.out.find("linkage: static") != std::string::npos) return {release, false};
  }
  return {PERFGAP_BINARY, true};
}

class RealContainer : public ::testing::Test {
 protected:
  // "" when everything is there; else why not (and whether it is the kernel's refusal).
  std::string missing(const std::string& runtime, bool* kernel) {
    *kernel = false;
    if (::geteuid() != 0) return "needs root (mount namespaces, overlays, runc)";
    if (on_path("unshare").empty()) return "no unshare (util-linux)";
    if (!runtime.empty() && on_path(runtime).empty()) return "no " + runtime + " (tools/setup-debian.sh --test installs runc and bubblewrap)";
    const char* dir = std::getenv("PERFGAP_CHROOT_DIR");
    rootfs_ = std::string(dir && *dir ? dir : "/var/tmp/perfgap-chroots") + "/trixie";
    if (::access((rootfs_ + "/bin/sh").c_str(), X_OK) != 0)
      return "no minbase root file system at " + rootfs_ + " (tools/release-check.sh chroots makes it with debootstrap)";
    auto probe = run_binary(on_path("unshare"), {"--mount", "--propagation", "private", "true"});
    if (probe.status != 0) {
      *kernel = true;
      return "the kernel refuses a mount namespace here (unshare --mount: " + probe.err + ")";
    }
    return "";
  }
  void need(const std::string& runtime) {
    bool kernel = false;
    auto why = missing(runtime, &kernel);
    if (why.empty()) {
      ready_ = true;
      return;
    }
    if (required() && !kernel) FAIL() << "PERFGAP_REAL_CONTAINER_TESTS=required, but: " << why;
    GTEST_SKIP() << why;
  }
  void SetUp() override {
    bin_ = binary_to_run();
    ASSERT_TRUE(perfgap::fixture::write_file(work_.file("topo.xml"), topology_for_this_machine()));
  }

  // A topology file that matches this machine (its NUMA nodes' CPUs; no GPU or NIC to name).
  static std::string topology_for_this_machine() {
    std::string xml = "<system version=\"1\">\n";
    for (int node = 0; node < 64; ++node) {
      std::ifstream in("/sys/devices/system/node/node" + std::to_string(node) + "/cpumap");
      if (!in) continue;
      std::string mask;
      std::getline(in, mask);
      xml += "  <cpu numaid=\"" + std::to_string(node) + "\" affinity=\"" + mask + "\" arch=\"x86_64\">\n  </cpu>\n";
    }
    return xml + "</system>\n";
  }

  RunResult run(const std::string& runtime, const std::string& carry, std::vector<std::string> args) {
    std::vector<std::string> argv = {kScript, runtime, rootfs_, bin_.path, work_.path(), carry};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_binary("/bin/bash", argv, {{"PG_HOST_LIBS", bin_.dynamic ? "1" : "0"}});
  }
  // The host's report, the baseline every container run compares with.
  std::string host_baseline() {
    auto h = run("host", "both", {"check", "--format", "json", "--output", work_.file("out/host.json")});
    EXPECT_TRUE(h.status == 0 || h.status == 1) << h.err;
    auto j = nlohmann::json::parse(perfgap::fixture::read_file(work_.file("out/host.json")));
    EXPECT_EQ(j["node"]["environment"]["NCCL_TOPO_FILE"], "/etc/nccl/topo.xml");
    EXPECT_EQ(j["node"]["settings"]["nccl_topo_file"], "present");
    return "/out/host.json";
  }

  struct Seen {
    nlohmann::json report;
    std::string detect;  // container.detect's title
    std::string container;
  };
  static Seen parse(const RunResult& r) {
    Seen s;
    try {
      s.report = nlohmann::json::parse(r.out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what() << "\nstdout: " << r.out << "\nstderr: " << r.err;
      return s;
    }
    s.container = s.report["node"].value("container", "");
    for (const auto& f : s.report["findings"])
      if (f["id"] == "container.detect") s.detect = f["title"];
    return s;
  }
  static const nlohmann::json* find(const Seen& s, const std::string& id, const std::string& status, const std::string& subject = "") {
    for (const auto& f : s.report["findings"])
      if (f["id"] == id && f["status"] == status && (subject.empty() || f.value("subject", "") == subject)) return &f;
    return nullptr;
  }

  // The public case in one runtime: fails without the file and variable (against the host's
  // report, and alone with only the variable), passes with both.
  void topology_case(const std::string& runtime, const std::string& container, const std::string& named, const std::string& mount_words) {
    const std::string base = host_baseline();
    std::vector<std::string> with_base = {"check", "--baseline", base};
    with_base.insert(with_base.end(), kTopoChecks.begin(), kTopoChecks.end());

    auto bare = run(runtime, "none", with_base);
    EXPECT_EQ(bare.status, 1) << bare.out << bare.err;
    auto b = parse(bare);
    if (container.empty()) EXPECT_TRUE(b.container != "none" && b.container != "unknown") << b.container << ": " << b.detect;
    else EXPECT_EQ(b.container, container) << b.detect;
    EXPECT_NE(b.detect.find(named), std::string::npos) << b.detect;
    const auto* drift = find(b, "container.env_drift", "fail", "NCCL_TOPO_FILE");
    ASSERT_NE(drift, nullptr) << bare.out;
    EXPECT_NE((*drift)["title"].get<std::string>().find("missing here"), std::string::npos) << drift->dump();
    const std::string fix = (*drift)["fix"];
    // Both halves of the fix, in this runtime's words: pass the variable, bind the file.
    EXPECT_NE(fix.find("NCCL_TOPO_FILE"), std::string::npos) << fix;
    EXPECT_NE(fix.find("make the file itself visible at the same path: "), std::string::npos) << fix;
    EXPECT_NE(fix.find(mount_words), std::string::npos) << fix;
    EXPECT_NE(find(b, "nccl.topo_file", "warn"), nullptr) << bare.out;

    // Alone (no baseline), the variable passed but the file not bound: NCCL would fall back.
    std::vector<std::string> alone_args = {"check"};
    alone_args.insert(alone_args.end(), kTopoChecks.begin(), kTopoChecks.end());
    auto alone = run(runtime, "var", alone_args);
    EXPECT_EQ(alone.status, 1) << alone.out << alone.err;
    auto a = parse(alone);
    const auto* missing_file = find(a, "nccl.topo_file", "fail");
    ASSERT_NE(missing_file, nullptr) << alone.out;
    EXPECT_NE((*missing_file)["title"].get<std::string>().find("/etc/nccl/topo.xml"), std::string::npos) << missing_file->dump();
    EXPECT_NE((*missing_file)["fix"].get<std::string>().find("mount"), std::string::npos) << missing_file->dump();

    // The variable and the file both carried: no drift, the file matches this node.
    auto fixed = run(runtime, "both", with_base);
    EXPECT_EQ(fixed.status, 0) << fixed.out << fixed.err;
    auto x = parse(fixed);
    EXPECT_NE(find(x, "container.env_drift", "pass"), nullptr) << fixed.out;
    EXPECT_NE(find(x, "nccl.topo_file", "pass"), nullptr) << fixed.out;
    EXPECT_EQ(x.container, b.container);
  }

  TempDir work_;
  Binary bin_;
  std::string rootfs_;
  bool ready_ = false;
};

TEST_F(RealContainer, BubblewrapTopologyCase) {
  need("bwrap");
  if (!ready_) return;
  topology_case("bwrap", "bubblewrap", "bubblewrap", "bwrap --ro-bind /etc/nccl/topo.xml /etc/nccl/topo.xml");
}

TEST_F(RealContainer, RuncBundleOnDebootstrapRootfsTopologyCase) {
  need("runc");
  if (!ready_) return;
  topology_case("runc", "runc", "OCI runtime container (runc", "a bind mount of /etc/nccl/topo.xml at /etc/nccl/topo.xml in config.json");
}

// enroot's own mechanism: what reaches the container is decided by the host's environ.d and
// mounts.d lines. No runtime marker is left: perfgap decides from runtime-independent signals
// (its root against PID 1's, an overlay root, ...); where the machine running the test is
// itself a container, /sys bound from it may carry that runtime's masks instead, so only
// "a container" is asserted.
TEST_F(RealContainer, EnrootMechanismTopologyCase) {
  need("");
  if (!ready_) return;
  topology_case("enroot", "", "in a container: ", "'/etc/nccl/topo.xml /etc/nccl/topo.xml none x-create=file,bind,ro' in /etc/enroot/mounts.d/*.fstab");
}

}  // namespace real_containers_test
}  // namespace
