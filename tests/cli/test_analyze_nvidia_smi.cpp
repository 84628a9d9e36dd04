// `perfgap analyze nvidia-smi`: exit statuses, inputs that are not nvidia-smi output (exit 2,
// one line naming the file), an unusable input next to good ones, standard input.
#include <gtest/gtest.h>

#include <filesystem>

#include "files.hpp"
#include "report_json.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::finding;
using perfgap::fixture::json_report;
using perfgap::fixture::line_count;
using perfgap::fixture::log_fixture;
using perfgap::fixture::read_file;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_in;

TEST(AnalyzeNvidiaSmi, ExitStatusFollowsTheFindings) {
  auto ok = json_report(PERFGAP_BINARY,
                        {"analyze", "nvidia-smi", log_fixture("nvidia-smi/healthy.xml"), log_fixture("nvidia-smi/topo-pix-legend.txt")}, 0);
  EXPECT_EQ((*finding(ok, "gpu.persistence", "0000:18:00.0"))["status"], "pass");
  EXPECT_EQ((*finding(ok, "gpu.topology", log_fixture("nvidia-smi/topo-pix-legend.txt")))["status"], "pass");
  auto bad = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", log_fixture("nvidia-smi/faults.xml")}, 1);
  EXPECT_EQ((*finding(bad, "gpu.ecc", "0000:18:00.0"))["status"], "fail");
  EXPECT_EQ((*finding(bad, "gpu.ecc", "0000:18:00.0"))["layer"], "gpu");
  // Two captures of one GPU: the replay counter's growth.
  auto grow =
      json_report(PERFGAP_BINARY,
                  {"analyze", "nvidia-smi", log_fixture("nvidia-smi/replay-before.xml"), log_fixture("nvidia-smi/replay-after.xml")}, 1);
  EXPECT_EQ((*finding(grow, "gpu.pcie", "0000:18:00.0"))["status"], "warn");
  // The text report shows the GPU<->NIC table.
  auto t = run_binary(PERFGAP_BINARY, {"analyze", "nvidia-smi", log_fixture("nvidia-smi/topo-far-nic.txt")});
  EXPECT_EQ(t.status, 1);
  EXPECT_NE(t.out.find("mlx5_1"), std::string::npos) << t.out;
}

TEST(AnalyzeNvidiaSmi, InputsThatAreNotNvidiaSmiAreExit2NamingTheFile) {
  TempDir d;
  auto whole = read_file(log_fixture("nvidia-smi/healthy.xml"));
  std::vector<std::string> files = {
      write_in(d, "empty.xml", ""),
      write_in(d, "words.txt", "GPU is fine\nreally\n"),
      write_in(d, "truncated.xml", whole.substr(0, whole.size() / 2)),
      write_in(d, "nccl-topo-v2.xml", "<system version=\"2\">\n  <cpu numaid=\"0\"/>\n</system>\n"),
      write_in(d, "nogpu.xml", "<nvidia_smi_log><attached_gpus>0</attached_gpus></nvidia_smi_log>\n"),
      log_fixture("perf/smmu-report.txt"),
  };
  for (const auto& f : files) {
    auto r = run_binary(PERFGAP_BINARY, {"analyze", "nvidia-smi", f});
    EXPECT_EQ(r.status, 2) << f << "\n" << r.out;
    EXPECT_TRUE(r.out.empty()) << f;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(f), std::string::npos) << r.err;
  }
  auto cut = run_binary(PERFGAP_BINARY, {"analyze", "nvidia-smi", files[2]});
  EXPECT_NE(cut.err.find("not well-formed XML"), std::string::npos) << cut.err;
  EXPECT_NE(cut.err.find("line "), std::string::npos) << cut.err;
  auto other = run_binary(PERFGAP_BINARY, {"analyze", "nvidia-smi", files[3]});
  EXPECT_NE(other.err.find("NCCL topology file"), std::string::npos) << other.err;
  // An NCCL topology file alone is read, but has nothing to be compared with.
  auto alone = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", write_in(d, "nccl-topo.xml", "<system version=\"1\">\n  <cpu numaid=\"0\"/>\n</system>\n")}, 0);
  EXPECT_EQ((*finding(alone, "gpu.topology_file", d.path() + "/nccl-topo.xml"))["status"], "skip");
}

TEST(AnalyzeNvidiaSmi, TopologyFileComparedWithTheMatrix) {
  const auto matrix = log_fixture("nvidia-smi/topo-pix-legend.txt");
  const auto good = log_fixture("nvidia-smi/nccl-topo-pix-legend.xml");
  const auto swapped = log_fixture("nvidia-smi/nccl-topo-pix-legend-swapped.xml");
  auto ok = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", matrix, good}, 0);
  const auto* f = finding(ok, "gpu.topology_file", good);
  ASSERT_NE(f, nullptr) << ok.dump(1);
  EXPECT_EQ((*f)["status"], "pass") << f->dump(1);
  EXPECT_EQ((*f)["metrics"]["gpus_compared"], 4);
  // NICs exchanged between GPU0 and GPU1, and the second socket's GPUs put on NUMA node 0.
  auto bad = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", matrix, swapped}, 1);
  const auto* b = finding(bad, "gpu.topology_file", swapped);
  ASSERT_NE(b, nullptr) << bad.dump(1);
  EXPECT_EQ((*b)["status"], "fail");
  EXPECT_EQ((*b)["metrics"]["gpus_misplaced"], 4) << b->dump(1);
  const std::string title = (*b)["title"];
  for (const char* who : {"GPU0", "GPU1", "GPU2 NUMA", "GPU3 NUMA"}) EXPECT_NE(title.find(who), std::string::npos) << title;
  std::string evidence = b->dump();
  EXPECT_NE(evidence.find("the file puts mlx5_1 on its switch, the node has mlx5_0 there"), std::string::npos) << evidence;
  // A NIC the node does not have: warn, the placement itself agrees.
  TempDir d;
  std::string extra = read_file(good);
  auto last_cpu = extra.rfind("  </cpu>");
  ASSERT_NE(last_cpu, std::string::npos);
  extra.insert(last_cpu, "    <pci busid=\"0000:ee:00.0\" class=\"0x020700\"><nic><net name=\"mlx5_9\"/></nic></pci>\n");
  const auto more = write_in(d, "extra-nic.xml", extra);
  auto w = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", matrix, more}, 0);
  const auto* wf = finding(w, "gpu.topology_file", more);
  ASSERT_NE(wf, nullptr);
  EXPECT_EQ((*wf)["status"], "warn") << wf->dump(1);
  EXPECT_NE((*wf)["title"].get<std::string>().find("mlx5_9"), std::string::npos);
  // The text report shows the side-by-side table.
  auto t = run_binary(PERFGAP_BINARY, {"analyze", "nvidia-smi", matrix, swapped});
  EXPECT_EQ(t.status, 1);
  EXPECT_NE(t.out.find("switch NICs (file)"), std::string::npos) << t.out;
}

TEST(AnalyzeNvidiaSmi, TopologyFilesAsPublishedAgainstAPublishedMatrix) {
  // Real captures of different machines (shared/fixtures): never a crash, always a decision
  // with its evidence; vendor files whose NICs carry no names are compared by presence.
  const fs::path shared = fs::path(PERFGAP_SOURCE_DIR) / "../shared/fixtures";
  if (!fs::exists(shared / "topo-xml")) GTEST_SKIP() << "no ../shared";
  const auto matrix = (shared / "nvidia-smi/topo-m-h100-8gpu-9nic-tabs-nic-rows-nccl-1453.txt").string();
  for (const auto& e : fs::directory_iterator(shared / "topo-xml")) {
    if (e.path().extension() != ".xml" || e.path().filename().string().find("graph") != std::string::npos) continue;
    auto r = run_binary(PERFGAP_BINARY, {"analyze", "nvidia-smi", matrix, e.path().string(), "--format", "json"});
    EXPECT_LE(r.status, 2) << e.path() << r.err;
    if (r.status == 2) {
      EXPECT_EQ(line_count(r.err), 1) << r.err;
      continue;
    }
    EXPECT_NE(r.out.find("gpu.topology_file"), std::string::npos) << e.path();
  }
}

TEST(AnalyzeNvidiaSmi, TopologyFileOfAnotherCloudFailsOnItsCpuAffinity) {
  // Azure ND v5's file (CPUs 0-47 and 48-95 on its two <cpu>) against an 8-GPU H100 whose topo -m
  // shows CPUs 0-79 and 80-159: the switch layout and NUMA nodes agree, the machine does not.
  // Before: pass, "matches this node's topo -m", on GPUs mapped by index and NICs only counted.
  const fs::path shared = fs::path(PERFGAP_SOURCE_DIR) / "../shared/fixtures";
  if (!fs::exists(shared / "topo-xml")) GTEST_SKIP() << "no ../shared";
  const auto matrix = (shared / "nvidia-smi/topo-m-h100-8gpu-9nic-tabs-nic-rows-nccl-1453.txt").string();
  for (const char* other : {"topo-xml/azhpc-ndv5-topo.xml", "topo-xml/aws-ofi-nccl-p4d-24xl-topo.xml"}) {
    const auto file = (shared / other).string();
    auto j = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", matrix, file}, 1);
    const auto* f = finding(j, "gpu.topology_file", file);
    ASSERT_NE(f, nullptr) << j.dump(1);
    EXPECT_EQ((*f)["status"], "fail") << f->dump(1);
    const std::string title = (*f)["title"];
    EXPECT_NE(title.find("CPU affinity of all 8 GPUs"), std::string::npos) << title;
    EXPECT_EQ((*f)["metrics"]["gpus_cpu_affinity_differs"], 8) << f->dump(1);
  }
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", matrix, (shared / "topo-xml/azhpc-ndv5-topo.xml").string()}, 1);
  const std::string evidence = finding(j, "gpu.topology_file", (shared / "topo-xml/azhpc-ndv5-topo.xml").string())->dump();
  // Both sides: the file's mask as CPUs, the node's CPU Affinity.
  EXPECT_NE(evidence.find("CPUs 0-47 in the file"), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("CPUs 0-79 on the node"), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("bus ids"), std::string::npos) << evidence;
}

TEST(AnalyzeNvidiaSmi, TopologyFileSaysWhatItComparedAndChecksBusIdsWithAQueryCapture) {
  const auto matrix = log_fixture("nvidia-smi/topo-pix-legend.txt");
  const auto good = log_fixture("nvidia-smi/nccl-topo-pix-legend.xml");
  // Without a -q capture topo -m gives no bus id: the pass names what it compared and what not.
  auto ok = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", matrix, good}, 0);
  const std::string title = (*finding(ok, "gpu.topology_file", good))["title"];
  EXPECT_NE(title.find("the same NICs on their switches, NUMA nodes, CPU affinity"), std::string::npos) << title;
  EXPECT_NE(title.find("PCI bus ids are not compared"), std::string::npos) << title;
  EXPECT_EQ(title.find("matches this node"), std::string::npos) << title;
  // healthy.xml's two GPUs sit at 18:00.0 and 2a:00.0; the file's other two are no GPU of that node.
  auto bad = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", matrix, good, log_fixture("nvidia-smi/healthy.xml")}, 1);
  const auto* b = finding(bad, "gpu.topology_file", good);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ((*b)["status"], "fail") << b->dump(1);
  EXPECT_NE((*b)["title"].get<std::string>().find("2 GPU bus ids (0000:9c:00.0, 0000:bc:00.0)"), std::string::npos) << b->dump(1);
  // A 2-GPU node and its file: the bus ids agree, and the title says they were compared.
  TempDir d;
  const auto small = write_in(d, "topo-2.txt",
                              "\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
                              "GPU0\t X \tNV18\tPIX\tNODE\t0-31\t0\t\tN/A\n"
                              "GPU1\tNV18\t X \tNODE\tPIX\t0-31\t0\t\tN/A\n"
                              "NIC0\tPIX\tNODE\t X \tNODE\n"
                              "NIC1\tNODE\tPIX\tNODE\t X \n\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n");
  std::string two = read_file(good);
  two.erase(two.find("  <cpu numaid=\"1\""), two.find("</system>") - two.find("  <cpu numaid=\"1\""));
  const auto file2 = write_in(d, "topo-2.xml", two);
  auto same = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", small, file2, log_fixture("nvidia-smi/healthy.xml")}, 0);
  const auto* s = finding(same, "gpu.topology_file", file2);
  ASSERT_NE(s, nullptr) << same.dump(1);
  EXPECT_EQ((*s)["status"], "pass") << s->dump(1);
  EXPECT_NE((*s)["title"].get<std::string>().find("GPU bus ids (nvidia-smi -q)"), std::string::npos) << s->dump(1);
  // The node's topo -m shows a part of the file's CPUs: warn, both sides said.
  std::string narrow = read_file(small);
  for (auto p = narrow.find("0-31"); p != std::string::npos; p = narrow.find("0-31", p)) narrow.replace(p, 4, "0-15");
  auto w = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", write_in(d, "topo-2-narrow.txt", narrow), file2}, 0);
  const auto* wf = finding(w, "gpu.topology_file", file2);
  ASSERT_NE(wf, nullptr);
  EXPECT_EQ((*wf)["status"], "warn") << wf->dump(1);
  EXPECT_NE((*wf)["title"].get<std::string>().find("(0-15) is a part of the file's (0-31)"), std::string::npos) << wf->dump(1);
}

TEST(AnalyzeNvidiaSmi, CutMatrixTitlesSayHowManyGpusTheyJudge) {
  // Published matrices cut short (4 of 16, 6 of 8, 7 of 8 GPU rows). Before: "every GPU of the
  // matrix has the same bonded NVLinks", only -v said the capture was cut.
  const fs::path shared = fs::path(PERFGAP_SOURCE_DIR) / "../shared/fixtures/nvidia-smi";
  if (!fs::exists(shared)) GTEST_SKIP() << "no ../shared";
  const std::pair<const char*, const char*> cases[] = {
      {"topo-m-dgx2-16gpu-nv6-mlx5-columns-old-format-nccl-tests-78.txt", "4 of 16 GPUs (capture cut: 12 GPU rows missing): "},
      {"topo-m-8gpu-nv18-9nic-spaces-sglang-13973.txt", "6 of 8 GPUs (capture cut: 2 GPU rows missing): "},
      {"topo-m-h800-nv8-no-gpu-numa-id-column-nccl-933.txt", "7 of 8 GPUs (capture cut: 1 GPU row missing): "}};
  for (const auto& [name, prefix] : cases) {
    const auto file = (shared / name).string();
    auto j = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", file}, 0);
    for (const char* id : {"gpu.nvlink", "gpu.topology"}) {
      const auto* f = finding(j, id, file);
      ASSERT_NE(f, nullptr) << name << " " << id;
      const std::string title = (*f)["title"];
      EXPECT_EQ(title.rfind(prefix, 0), 0u) << name << " " << id << ": " << title;
      EXPECT_EQ(title.find("every GPU"), std::string::npos) << title;
    }
  }
  // A whole matrix keeps its title; one GPU row left has no peer row to compare: skip.
  TempDir d;
  auto whole = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", log_fixture("nvidia-smi/topo-pix-legend.txt")}, 0);
  EXPECT_EQ((*finding(whole, "gpu.nvlink", log_fixture("nvidia-smi/topo-pix-legend.txt")))["title"].get<std::string>().rfind("every GPU of the matrix", 0), 0u);
  std::string one = read_file(log_fixture("nvidia-smi/topo-pix-legend.txt"));
  auto g1 = one.find("\nGPU1");
  one.erase(g1, one.find("\nNIC0") - g1);
  const auto cut1 = write_in(d, "one-row.txt", one);
  auto j1 = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", cut1}, 0);
  const auto* n1 = finding(j1, "gpu.nvlink", cut1);
  ASSERT_NE(n1, nullptr) << j1.dump(1);
  EXPECT_EQ((*n1)["status"], "skip") << n1->dump(1);
}

TEST(AnalyzeNvidiaSmi, UnusableNextToGoodIsAnErrorFindingAndStdinWorks) {
  TempDir d;
  auto empty = write_in(d, "empty.xml", "");
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nvidia-smi", empty, log_fixture("nvidia-smi/healthy.xml")}, 1);
  auto e = finding(j, "gpu.persistence", empty);
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["status"], "error");
  EXPECT_EQ(j["summary"]["error"], 1);
  auto piped = run_binary(
      "/bin/sh", {"-c", "exec \"$0\" analyze nvidia-smi - --format json < \"$1\"", PERFGAP_BINARY, log_fixture("nvidia-smi/faults.xml")});
  EXPECT_EQ(piped.status, 1) << piped.err;
  EXPECT_NE(piped.out.find("\"gpu.fabric\""), std::string::npos);
}
