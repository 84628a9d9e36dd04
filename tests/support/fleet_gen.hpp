// Generates node reports as `perfgap check --format json` writes them (same field order,
// 2-space indentation, ~40 findings with evidence, fixes, metrics, node settings and
// environment), for the fleet tests and the fleet benchmark. Header-only, standard library
// only, deterministic for a given spec (the seed drives the measurement noise).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace perfgap::fleetgen {

struct NodeSpec {
  std::string name = "gpu0001";
  std::uint64_t seed = 1;
  std::string generated_at = "2026-11-30T12:00:00Z";
  std::string kernel = "6.8.0-45-generic";
  // Added to or replacing the defaults below; an empty value removes the entry.
  std::map<std::string, std::string> settings;
  std::map<std::string, std::string> environment;
  std::map<std::string, std::string> nccl_conf;
  // id -> status for every finding of that id ("fail", "warn", ...).
  std::map<std::string, std::string> status;
  // "id.metric" or "id.metric@subject" -> value, replacing the generated one.
  std::map<std::string, double> metrics;
};

// gpu0001, gpu0002, ... (Slurm-style zero-padded names).
inline std::string node_name(std::size_t i, int width = 4, std::string_view prefix = "gpu") {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*zu", width, i);
  return std::string(prefix) + buf;
}

namespace detail {

inline void escape(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

inline std::string number(double v) {
  char b[40];
  // nlohmann writes integral doubles with ".0"; others with up to 17 significant digits.
  if (v == static_cast<double>(static_cast<long long>(v)) && v < 1e15 && v > -1e15)
    std::snprintf(b, sizeof b, "%.1f", v);
  else
    std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

struct Rng {
  std::uint64_t s;
  double uniform() {  // [0, 1)
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<double>(s >> 11) / 9007199254740992.0;
  }
};

struct Ev {
  std::string source, observed, expected;
};

struct F {
  std::string id, layer, status, subject, title;
  std::vector<Ev> evidence;
  std::string fix, impact;
  std::vector<std::pair<std::string, double>> metrics;
};

inline std::vector<F> findings(const NodeSpec& spec, Rng& rng) {
  const std::string bdfs[] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                              "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
  const std::string nics[] = {"0000:19:00.0", "0000:3b:00.0", "0000:9b:00.0", "0000:bb:00.0"};
  std::vector<F> v;
  auto add = [&](F f) { v.push_back(std::move(f)); };
  add({"virt.hypervisor", "virtualization", "pass", "", "bare metal",
       {{"/proc/cpuinfo", "flags: no 'hypervisor'", ""}, {"/sys/class/dmi/id/sys_vendor", "Supermicro", ""},
        {"/sys/class/dmi/id/product_name", "SYS-821GE-TNHR", ""}},
       "", "", {{"virtualized", 0}}});
  add({"smmu.cmdqv", "virtualization", "skip", "", "not an NVIDIA Grace node (an x86_64 node): CMDQV is a Grace SMMUv3 feature",
       {{"/proc/cpuinfo", "x86_64", ""}}, "", "", {}});
  add({"iommu.dma_mode", "virtualization", "pass", "", "GPU and NIC IOMMU groups use identity (passthrough) DMA",
       {{"/sys/kernel/iommu_groups/17/type", "identity", "identity"}, {"/sys/kernel/iommu_groups/42/type", "identity", "identity"},
        {"/proc/cmdline", "iommu=pt intel_iommu=on", ""}},
       "", "", {{"identity_devices", 12}, {"translated_devices", 0}}});
  add({"mem.page_size", "virtualization", "skip", "", "not an NVIDIA Grace node (an x86_64 node): the 64 KiB page recommendation is Grace's",
       {{"/proc/cpuinfo", "x86_64", ""}}, "", "", {}});
  add({"cpu.cstate.deep_idle", "cpu-power", "pass", "", "idle cores reach C6 (latency 170 us); no PM QoS limit holds them back",
       {{"/sys/devices/system/cpu/cpu0/cpuidle", "POLL (0 us), C1 (1 us), C1E (2 us), C6 (170 us)", ""},
        {"/sys/devices/system/cpu/cpuidle/current_driver", "intel_idle", ""},
        {"/dev/cpu_dma_latency", "2000000000 us (no limit)", ""}},
       "Enable C6 (package C-states) in the BIOS and do not cap them with intel_idle.max_cstate or processor.max_cstate on the kernel command line.",
       "Busy cores lose turbo headroom: about 4% of step time in the reference investigation (3.0 GHz instead of 3.8 GHz).",
       {{"deepest_latency_us", 170}}});
  add({"cpu.turbo", "cpu-power", "pass", "", "turbo/boost enabled; no frequency cap on 224 CPUs",
       {{"/sys/devices/system/cpu/intel_pstate/no_turbo", "0", "0"}, {"/sys/devices/system/cpu/intel_pstate/status", "active", ""},
        {"/sys/devices/system/cpu/cpu*/cpufreq/scaling_max_freq", "3800000 kHz on 224 CPUs (cpuinfo_max_freq 3800000)", ""}},
       "", "", {{"capped_cpus", 0}}});
  add({"cpu.governor", "cpu-power", "pass", "", "performance governor or EPP on all 224 CPUs",
       {{"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance", "performance"},
        {"/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference", "performance", ""}},
       "Set the performance governor (cpupower frequency-set -g performance) or EPP 'performance' on every CPU.",
       "", {{"cpus_not_performance", 0}}});
  double steal = 0.02 + 0.05 * rng.uniform();
  add({"cpu.steal", "cpu-power", "pass", "", "steal 0.0% since boot (limit 2.0%)",
       {{"/proc/stat (steal column)", "0.0% of CPU time since boot on CPUs allowed to 8 training processes", ""},
        {"CPUs considered", "0-223", ""}, {"/proc/loadavg", "84.12 83.90 83.75", ""}},
       "", "", {{"steal_pct", steal}, {"max_cpu_steal_pct", steal * 1.8}}});
  add({"numa.balancing", "placement", "pass", "", "automatic NUMA balancing is off", {{"/proc/sys/kernel/numa_balancing", "0", "0"}},
       "", "", {}});
  for (int r = 0; r < 2; ++r) {
    double remote = 0.1 + 0.4 * rng.uniform();
    add({"numa.remote_memory", "placement", "pass", "pid:" + std::to_string(4242 + r),
         "0.3% of resident memory (python3) on NUMA nodes holding none of its allowed CPUs",
         {{"/proc/" + std::to_string(4242 + r) + "/status Cpus_allowed_list", r ? "56-111 (local nodes 1)" : "0-55 (local nodes 0)", ""},
          {"/proc/" + std::to_string(4242 + r) + "/numa_maps", "N0=61.22 GiB N1=0.18 GiB", ""}},
         "", "", {{"remote_pct", remote}, {"resident_gib", 61.0 + rng.uniform()}}});
  }
  add({"placement.gpu_affinity", "placement", "pass", "", "8 ranks bound to CPUs local to their GPUs",
       {{"/proc/4242/environ", "GPU 0 (0000:18:00.0) from CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7, LOCAL_RANK=0", ""},
        {"/sys/bus/pci/devices/0000:18:00.0/local_cpulist", "0-55 (NUMA node 0)", ""}},
       "", "", {{"ranks", 8}}});
  add({"placement.shared_cores", "placement", "pass", "", "no other busy thread and no NIC/GPU interrupt on the 112 training cores",
       {{"training cores", "0-111 (allowed CPUs of bound ranks)", ""}, {"/proc/interrupts", "mlx5_comp* and nvidia IRQs on 112-223", ""}},
       "", "", {{"training_cores", 112}, {"intruding_processes", 0}, {"device_irqs_on_training_cores", 0}}});
  add({"container.detect", "runtime-topology", "pass", "", "in an enroot container (pyxis)",
       {{"/proc/1/cgroup", "0::/slurm/uid_1000/job_4242/step_0", ""}, {"/proc/self/environ", "ENROOT_ROOTFS set", ""}},
       "", "", {}});
  add({"container.shm", "runtime-topology", "pass", "", "/dev/shm holds 1007.7 GiB (at least 1 GiB per GPU)",
       {{"/proc/mounts", "tmpfs /dev/shm tmpfs rw,nosuid,nodev", ""}, {"statfs /dev/shm", "1007.7 GiB", ">= 8 GiB"}},
       "", "", {{"shm_gib", 1007.7}}});
  add({"container.memlock", "runtime-topology", "pass", "", "locked memory unlimited", {{"/proc/self/limits", "Max locked memory unlimited unlimited bytes", "unlimited"}},
       "", "", {}});
  add({"container.devices", "runtime-topology", "pass", "", "every device node is reachable (4 RDMA devices, 8 GPUs)",
       {{"stat", "/dev/infiniband/uverbs0..3 /dev/nvidia0..7 /dev/nvidiactl /dev/nvidia-uvm present", ""}}, "", "", {}});
  add({"container.launcher_config", "runtime-topology", "pass", "", "enroot carries NCCL_TOPO_FILE and its file into containers",
       {{"/etc/enroot/environ.d/50-nccl.env", "NCCL_TOPO_FILE=/etc/nccl/topo.xml", ""}, {"/etc/enroot/mounts.d/50-nccl.fstab", "/etc/nccl", ""}},
       "", "", {}});
  add({"container.env_drift", "runtime-topology", "skip", "", "no host baseline given (--baseline HOST.json from perfgap check --format json on the host)",
       {}, "", "", {}});
  add({"nccl.topo_file", "runtime-topology", "pass", "", "NCCL_TOPO_FILE /etc/nccl/topo.xml is readable and names the 8 GPUs and 4 NICs of this node",
       {{"/proc/self/environ", "NCCL_TOPO_FILE=/etc/nccl/topo.xml", ""}, {"/etc/nccl/topo.xml", "8 GPUs, 4 NICs, 2 CPUs", ""}},
       "", "", {{"topo_gpus", 8}, {"topo_nics", 4}}});
  add({"nccl.env.disabled_paths", "network", "pass", "", "no NCCL setting switches off a fast path",
       {{"/proc/self/environ, NCCL config files", "none of NCCL_P2P_DISABLE, NCCL_P2P_LEVEL=LOC, NCCL_SHM_DISABLE, NCCL_IB_DISABLE, NCCL_NVLS_ENABLE=0, NCCL_NET_GDR_LEVEL=LOC", ""}},
       "", "", {}});
  add({"nccl.env.forced", "network", "pass", "", "NCCL's algorithm, protocol, channel and buffer tuning is not overridden",
       {{"/proc/self/environ, NCCL config files", "none of NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_BUFFSIZE", ""}},
       "", "", {}});
  add({"nccl.env.devices", "network", "pass", "", "NCCL_IB_HCA names 4 RDMA devices that exist here",
       {{"/proc/self/environ", "NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3", ""}, {"/sys/class/infiniband", "mlx5_0 mlx5_1 mlx5_2 mlx5_3", ""}},
       "", "", {}});
  add({"nccl.gdr", "network", "pass", "", "GPUDirect RDMA available: nvidia_peermem loaded, GPUs and NICs share PCIe switches",
       {{"/proc/modules", "nvidia_peermem", ""}, {"/sys/bus/pci/devices/0000:18:00.0", "behind the switch of 0000:19:00.0", ""}},
       "", "", {{"gdr_pairs", 8}}});
  add({"nccl.ib.qps", "network", "pass", "", "NCCL_IB_QPS_PER_CONNECTION=4 on 400 Gb/s ports",
       {{"/proc/self/environ", "NCCL_IB_QPS_PER_CONNECTION=4", ">= 2"}, {"/sys/class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)", ""}},
       "Measure NCCL_IB_QPS_PER_CONNECTION (2, 4, 8) with perfgap sweep and set the best in the job environment.",
       "At 512 GPUs on 1.6 Tb/s ConnectX-8 nodes, 1 QP per connection cost 24% of iteration time.",
       {{"max_port_gbps", 400}}});
  for (int g = 0; g < 8; ++g)
    add({"pcie.link", "pcie", "pass", bdfs[g], "GPU " + bdfs[g] + " link x16 at 32 GT/s (its maximum)",
         {{"/sys/bus/pci/devices/" + bdfs[g] + "/current_link_width", "16", "16"},
          {"/sys/bus/pci/devices/" + bdfs[g] + "/current_link_speed", "32.0 GT/s PCIe", "32.0 GT/s PCIe"}},
         "", "", {{"link_speed_gts", 32}, {"link_width", 16}, {"max_link_speed_gts", 32}, {"max_link_width", 16}}});
  for (int n = 0; n < 4; ++n)
    add({"pcie.link", "pcie", "pass", nics[n], "NIC " + nics[n] + " link x16 at 32 GT/s (its maximum)",
         {{"/sys/bus/pci/devices/" + nics[n] + "/current_link_width", "16", "16"},
          {"/sys/bus/pci/devices/" + nics[n] + "/current_link_speed", "32.0 GT/s PCIe", "32.0 GT/s PCIe"}},
         "", "", {{"link_speed_gts", 32}, {"link_width", 16}, {"max_link_speed_gts", 32}, {"max_link_width", 16}}});
  add({"gpu.inventory", "gpu", "pass", "", "8 GPU(s): 8 x NVIDIA H100 80GB HBM3, driver 550.90.07",
       {{"/sys/bus/pci/devices", "8 GPU(s) on PCI: 0000:18:00.0, 0000:2a:00.0, 0000:3a:00.0, 0000:5d:00.0, 0000:9a:00.0, 0000:ab:00.0, 0000:ba:00.0, 0000:db:00.0", ""},
        {"/proc/driver/nvidia/gpus", "8 listed", ""}, {"/proc/driver/nvidia/version", "550.90.07", ""}},
       "", "", {{"gpus_pci", 8}, {"gpus_visible", 8}}});
  for (int p = 0; p < 4; ++p) {
    std::string port = "mlx5_" + std::to_string(p) + ":1";
    add({"net.ib.ports", "network", "pass", port, port + " ACTIVE/LinkUp at 400 Gb/s (4X NDR)",
         {{"/sys/class/infiniband/mlx5_" + std::to_string(p) + "/ports/1/state", "4: ACTIVE", "4: ACTIVE"},
          {"/sys/class/infiniband/mlx5_" + std::to_string(p) + "/ports/1/phys_state", "5: LinkUp", "5: LinkUp"},
          {"/sys/class/infiniband/mlx5_" + std::to_string(p) + "/ports/1/rate", "400 Gb/sec (4X NDR)", ""}},
         "", "", {{"rate_gbps", 400}}});
  }
  for (auto& f : v) {
    if (auto it = spec.status.find(f.id); it != spec.status.end()) f.status = it->second;
    for (auto& [name, value] : f.metrics) {
      std::string key = f.id + "." + name;
      if (auto it = spec.metrics.find(key + (f.subject.empty() ? "" : "@" + f.subject)); it != spec.metrics.end()) value = it->second;
      else if (auto it2 = spec.metrics.find(key); it2 != spec.metrics.end() && f.subject.empty()) value = it2->second;
    }
  }
  return v;
}

inline void string_map(std::string& out, const std::map<std::string, std::string>& base, const std::map<std::string, std::string>& over,
                       const char* indent) {
  std::map<std::string, std::string> m = base;
  for (const auto& [k, v] : over) {
    if (v.empty()) m.erase(k);
    else m[k] = v;
  }
  if (m.empty()) {
    out += "{}";
    return;
  }
  out += "{\n";
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += ",\n";
    first = false;
    out += indent;
    out += "  ";
    escape(out, k);
    out += ": ";
    escape(out, v);
  }
  out += "\n";
  out += indent;
  out += "}";
}

}  // namespace detail

// The report of one node, as `perfgap check --format json` prints it.
inline std::string report_json(const NodeSpec& spec) {
  using namespace detail;
  Rng rng{spec.seed * 0x9E3779B97F4A7C15ull + 0x1234567ull};
  auto fs = findings(spec, rng);
  std::string o;
  o.reserve(32 * 1024);
  o += "{\n  \"schema\": \"perfgap.report/1\",\n  \"tool\": {\n    \"name\": \"perfgap\",\n    \"version\": \"0.1.0\"\n  },\n";
  o += "  \"generated_at\": ";
  escape(o, spec.generated_at);
  o += ",\n  \"source\": {\n    \"kind\": \"live\",\n    \"root\": null,\n    \"inputs\": []\n  },\n";
  o += "  \"node\": {\n    \"name\": ";
  escape(o, spec.name);
  o += ",\n    \"hostname\": ";
  escape(o, spec.name);
  o += ",\n    \"arch\": \"x86_64\",\n    \"kernel\": ";
  escape(o, spec.kernel);
  o += ",\n    \"virtualized\": false,\n    \"container\": \"enroot\",\n    \"settings\": ";
  string_map(o,
             {{"cpu_model", "Intel(R) Xeon(R) Platinum 8480+"}, {"deepest_idle_state", "C6"}, {"governor", "performance"},
              {"idle_driver", "intel_idle"}, {"iommu_mode", "identity"}, {"nccl_topo_file", "present"}, {"numa_balancing", "0"},
              {"nvidia_driver", "550.90.07"}, {"page_size_kb", "4"}, {"turbo", "on"}},
             spec.settings, "    ");
  o += ",\n    \"environment\": ";
  string_map(o,
             {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"}, {"NCCL_IB_HCA", "mlx5_0,mlx5_1,mlx5_2,mlx5_3"},
              {"NCCL_IB_QPS_PER_CONNECTION", "4"}, {"NCCL_SOCKET_IFNAME", "bond0"}, {"NCCL_TOPO_FILE", "/etc/nccl/topo.xml"},
              {"SLURM_JOB_ID", "4242"}, {"SLURM_PROCID", "0"}, {"UCX_TLS", "rc,sm"}, {"WANDB_API_KEY", "<redacted>"}},
             spec.environment, "    ");
  o += ",\n    \"nccl_conf\": ";
  string_map(o, {{"NCCL_IB_QPS_PER_CONNECTION", "4"}, {"NCCL_IB_TIMEOUT", "22"}}, spec.nccl_conf, "    ");
  o += "\n  },\n";
  int pass = 0, warn = 0, fail = 0, skip = 0, error = 0;
  for (const auto& f : fs) {
    if (f.status == "pass") ++pass;
    else if (f.status == "warn") ++warn;
    else if (f.status == "fail") ++fail;
    else if (f.status == "skip") ++skip;
    else ++error;
  }
  o += "  \"summary\": {\n    \"pass\": " + std::to_string(pass) + ",\n    \"warn\": " + std::to_string(warn) + ",\n    \"fail\": " +
       std::to_string(fail) + ",\n    \"skip\": " + std::to_string(skip) + ",\n    \"error\": " + std::to_string(error) + "\n  },\n";
  o += "  \"findings\": [";
  for (std::size_t i = 0; i < fs.size(); ++i) {
    const auto& f = fs[i];
    o += i ? ",\n    {\n" : "\n    {\n";
    o += "      \"id\": ";
    escape(o, f.id);
    o += ",\n      \"layer\": ";
    escape(o, f.layer);
    o += ",\n      \"status\": ";
    escape(o, f.status);
    if (!f.subject.empty()) {
      o += ",\n      \"subject\": ";
      escape(o, f.subject);
    }
    o += ",\n      \"title\": ";
    escape(o, f.title);
    o += ",\n      \"evidence\": [";
    for (std::size_t e = 0; e < f.evidence.size(); ++e) {
      o += e ? ",\n        {\n" : "\n        {\n";
      o += "          \"source\": ";
      escape(o, f.evidence[e].source);
      o += ",\n          \"observed\": ";
      escape(o, f.evidence[e].observed);
      if (!f.evidence[e].expected.empty()) {
        o += ",\n          \"expected\": ";
        escape(o, f.evidence[e].expected);
      }
      o += "\n        }";
    }
    o += f.evidence.empty() ? "]" : "\n      ]";
    if (!f.fix.empty()) {
      o += ",\n      \"fix\": ";
      escape(o, f.fix);
    }
    if (!f.impact.empty()) {
      o += ",\n      \"impact\": ";
      escape(o, f.impact);
    }
    o += ",\n      \"metrics\": {";
    for (std::size_t m = 0; m < f.metrics.size(); ++m) {
      o += m ? ",\n        " : "\n        ";
      escape(o, f.metrics[m].first);
      o += ": " + number(f.metrics[m].second);
    }
    o += f.metrics.empty() ? "}" : "\n      }";
    o += "\n    }";
  }
  o += "\n  ]\n}\n";
  return o;
}

}  // namespace perfgap::fleetgen
