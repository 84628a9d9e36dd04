// perfgap-bench-gen: writes a large captured node tree (a sysroot laid out as the kernel
// presents /proc, /sys and /dev) for the `check --root` benchmark (bench/run.sh).
//
//   perfgap-bench-gen OUTDIR [--cpus 384] [--gpus 8] [--nics 8] [--ranks 8]
//                            [--threads-per-rank 8] [--other-procs 300] [--nic-queues 32]
//
// The default is an HGX-style training node: 2 sockets x 96 cores x 2 threads (384 CPUs,
// SMT siblings i and i+192, node0 = 0-95,192-287), intel_idle with POLL/C1/C1E/C6 on every
// CPU, intel_pstate, 8 NVIDIA GPUs and 8 ConnectX NICs behind PCIe switches (one GPU and one
// NIC per switch, four switches per socket), ~120 other PCI functions, ~440 interrupt rows,
// 8 torchrun ranks with 8 threads each (64 training threads) bound to their GPU's socket,
// and ~300 other processes (system daemons and kernel threads).
//
// File contents follow the kernel's formats (see tests/fixtures/cases/base/*.tree): cpulists,
// 32-bit-word cpumasks, /proc/interrupts column widths, 52-field task stat lines, NUL-separated
// environ, relative sysfs links (cpuN/cpufreq -> ../cpufreq/policyN, /sys/bus/pci/devices/<bdf>
// -> ../../../devices/..., driver and subsystem links that form cycles). Output is
// deterministic: the same options give the same tree.
//
// The tree holds what a capture for perfgap would hold: the files the checks read (their
// `.reads` lists) and few others, so `tar cf - TREE` reads about the same files as
// `perfgap check --root TREE` (the benchmark's yardstick). It does not hold the many sysfs
// and procfs attributes no check reads (cpuidle usage/time, /proc/<pid>/stat, ...).
//
// Standard library only, so it builds wherever perfgap builds.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fs = std::filesystem;

namespace {

// ---- small text helpers ------------------------------------------------------------------

std::string str(long long v) { return std::to_string(v); }

std::string hex(unsigned long long v, int width = 0) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*llx", width, v);
  return buf;
}

std::string pad_left(std::string s, std::size_t w) {
  if (s.size() < w) s.insert(0, w - s.size(), ' ');
  return s;
}

std::string pad_right(std::string s, std::size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

// A deterministic generator (splitmix64), so trees are reproducible.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
};

// A set of CPUs with the kernel's two text forms.
struct Cpus {
  std::vector<bool> bits;
  explicit Cpus(int n = 0) : bits(static_cast<std::size_t>(n), false) {}
  void add(int c) {
    if (c >= static_cast<int>(bits.size())) bits.resize(static_cast<std::size_t>(c) + 1, false);
    bits[static_cast<std::size_t>(c)] = true;
  }
  void add_range(int a, int b) {
    for (int c = a; c <= b; ++c) add(c);
  }
  bool has(int c) const { return c >= 0 && c < static_cast<int>(bits.size()) && bits[static_cast<std::size_t>(c)]; }
  std::vector<int> members() const {
    std::vector<int> m;
    for (std::size_t i = 0; i < bits.size(); ++i)
      if (bits[i]) m.push_back(static_cast<int>(i));
    return m;
  }
  // "0-95,192-287"
  std::string list() const {
    std::string out;
    auto m = members();
    for (std::size_t i = 0; i < m.size();) {
      std::size_t j = i;
      while (j + 1 < m.size() && m[j + 1] == m[j] + 1) ++j;
      if (!out.empty()) out += ',';
      out += str(m[i]);
      if (j > i) out += "-" + str(m[j]);
      i = j + 1;
    }
    return out;
  }
  // "00000000,...,ffffffff": 32-bit words, most significant first, nr_cpu_ids wide.
  std::string mask(int nr_cpus) const {
    int words = std::max(1, (nr_cpus + 31) / 32);
    std::string out;
    for (int w = words - 1; w >= 0; --w) {
      std::uint32_t v = 0;
      for (int b = 0; b < 32; ++b)
        if (has(w * 32 + b)) v |= 1u << b;
      if (!out.empty()) out += ',';
      out += hex(v, 8);
    }
    return out;
  }
};

// ---- the tree writer ---------------------------------------------------------------------

class Tree {
 public:
  explicit Tree(fs::path root) : root_(std::move(root)) {}

  void file(const std::string& rel, std::string_view content) {
    ensure_parent(rel);
    auto p = root_ / rel;
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) die("open " + p.string());
    const char* d = content.data();
    std::size_t left = content.size();
    while (left > 0) {
      ssize_t n = ::write(fd, d, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        die("write " + p.string());
      }
      d += n;
      left -= static_cast<std::size_t>(n);
    }
    ::close(fd);
    ++files_;
    bytes_ += content.size();
  }

  // A sysfs attribute: the value and a newline.
  void attr(const std::string& rel, std::string_view value) {
    std::string s(value);
    s += '\n';
    file(rel, s);
  }

  void link(const std::string& rel, const std::string& target) {
    ensure_parent(rel);
    auto p = root_ / rel;
    if (::symlink(target.c_str(), p.c_str()) != 0) die("symlink " + p.string() + " -> " + target);
    ++links_;
  }

  // A relative link from `rel` to the tree path `to`, as sysfs writes them.
  void rlink(const std::string& rel, const std::string& to) { link(rel, relative(parent(rel), to)); }

  void dir(const std::string& rel) { ensure_dir(rel); }

  std::size_t files() const { return files_; }
  std::size_t links() const { return links_; }
  std::size_t bytes() const { return bytes_; }

  [[noreturn]] static void die(const std::string& what) {
    std::fprintf(stderr, "perfgap-bench-gen: %s: %s\n", what.c_str(), std::strerror(errno));
    std::exit(1);
  }

 private:
  static std::string parent(const std::string& rel) {
    auto s = rel.rfind('/');
    return s == std::string::npos ? std::string() : rel.substr(0, s);
  }

  static std::vector<std::string> parts(const std::string& p) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i <= p.size()) {
      auto j = p.find('/', i);
      if (j == std::string::npos) j = p.size();
      if (j > i) out.push_back(p.substr(i, j - i));
      i = j + 1;
    }
    return out;
  }

  static std::string relative(const std::string& from_dir, const std::string& to) {
    auto a = parts(from_dir), b = parts(to);
    std::size_t k = 0;
    while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
    std::string out;
    for (std::size_t i = k; i < a.size(); ++i) out += "../";
    for (std::size_t i = k; i < b.size(); ++i) {
      out += b[i];
      if (i + 1 < b.size()) out += '/';
    }
    return out.empty() ? "." : out;
  }

  void ensure_parent(const std::string& rel) {
    auto p = parent(rel);
    if (!p.empty()) ensure_dir(p);
  }

  void ensure_dir(const std::string& rel) {
    if (made_.count(rel)) return;
    auto p = parent(rel);
    if (!p.empty()) ensure_dir(p);
    auto full = root_ / rel;
    if (::mkdir(full.c_str(), 0755) != 0 && errno != EEXIST) die("mkdir " + full.string());
    made_.insert(rel);
  }

  fs::path root_;
  std::set<std::string> made_;
  std::size_t files_ = 0, links_ = 0, bytes_ = 0;
};

// ---- options -----------------------------------------------------------------------------

struct Options {
  std::string out;
  int cpus = 384;
  int gpus = 8;
  int nics = 8;
  int ranks = 8;
  int threads_per_rank = 8;
  int other_procs = 300;
  int nic_queues = 32;
};

[[noreturn]] void usage(const char* argv0, const std::string& why = "") {
  if (!why.empty()) std::fprintf(stderr, "perfgap-bench-gen: %s\n", why.c_str());
  std::fprintf(stderr,
               "usage: %s OUTDIR [--cpus 384] [--gpus 8] [--nics 8] [--ranks 8] [--threads-per-rank 8]\n"
               "       [--other-procs 300] [--nic-queues 32]\n"
               "Writes a captured node tree for `perfgap check --root OUTDIR`. OUTDIR must be absent or empty.\n"
               "CPUs: 2 sockets x 2 SMT threads, so --cpus is a multiple of 4. --other-procs counts every process\n"
               "but the launcher, the ranks and perfgap's own (systemd and kthreadd are always there).\n",
               argv0);
  std::exit(2);
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto num = [&](int& slot, int lo, int hi) {
      if (i + 1 >= argc) usage(argv[0], a + " needs a value");
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < lo || v > hi) usage(argv[0], a + ": expected " + str(lo) + ".." + str(hi));
      slot = static_cast<int>(v);
    };
    if (a == "--cpus") num(o.cpus, 4, 8192);
    else if (a == "--gpus") num(o.gpus, 0, 12);
    else if (a == "--nics") num(o.nics, 0, 12);
    else if (a == "--ranks") num(o.ranks, 0, 64);
    else if (a == "--threads-per-rank") num(o.threads_per_rank, 1, 1000);
    else if (a == "--other-procs") num(o.other_procs, 0, 100000);
    else if (a == "--nic-queues") num(o.nic_queues, 1, 512);
    else if (a == "-h" || a == "--help") usage(argv[0]);
    else if (!a.empty() && a[0] == '-') usage(argv[0], "unknown option " + a);
    else if (o.out.empty()) o.out = a;
    else usage(argv[0], "more than one OUTDIR");
  }
  if (o.out.empty()) usage(argv[0], "no OUTDIR");
  if (o.cpus % 4 != 0) usage(argv[0], "--cpus must be a multiple of 4 (2 sockets x 2 threads)");
  return o;
}

// ---- the node ----------------------------------------------------------------------------

constexpr int kSockets = 2;
constexpr int kHz = 100;                    // USER_HZ
constexpr double kUptime = 1209600.53;      // 14 days
constexpr const char* kKernel = "6.8.0-45-generic";
constexpr const char* kModel = "Intel(R) Xeon(R) 6972P";

struct Topo {
  int cpus, cores, cores_per_socket;
  std::vector<Cpus> node;  // per socket / NUMA node
  int socket_of(int cpu) const { return (cpu % cores) / cores_per_socket; }
  int core_of(int cpu) const { return (cpu % cores) % cores_per_socket; }
};

Topo make_topo(int cpus) {
  Topo t;
  t.cpus = cpus;
  t.cores = cpus / 2;
  t.cores_per_socket = t.cores / kSockets;
  for (int s = 0; s < kSockets; ++s) {
    Cpus c(cpus);
    c.add_range(s * t.cores_per_socket, (s + 1) * t.cores_per_socket - 1);
    c.add_range(t.cores + s * t.cores_per_socket, t.cores + (s + 1) * t.cores_per_socket - 1);
    t.node.push_back(c);
  }
  return t;
}

// ---- CPUs, idle, frequency, NUMA ---------------------------------------------------------

void write_cpus(Tree& tr, const Topo& t) {
  const std::string cpu = "sys/devices/system/cpu";
  Cpus all(t.cpus);
  all.add_range(0, t.cpus - 1);
  for (auto f : {"online", "possible", "present"}) tr.attr(cpu + "/" + f, all.list());
  tr.attr(cpu + "/offline", "");
  tr.attr(cpu + "/kernel_max", "8191");
  tr.attr(cpu + "/cpuidle/current_driver", "intel_idle");
  tr.attr(cpu + "/cpuidle/current_governor", "menu");
  tr.attr(cpu + "/cpuidle/current_governor_ro", "menu");
  tr.attr(cpu + "/cpuidle/available_governors", "ladder menu teo");
  tr.attr("sys/module/intel_idle/parameters/max_cstate", "9");
  tr.attr(cpu + "/intel_pstate/status", "active");
  tr.attr(cpu + "/intel_pstate/no_turbo", "0");
  tr.attr(cpu + "/intel_pstate/max_perf_pct", "100");
  tr.attr(cpu + "/intel_pstate/min_perf_pct", "33");
  tr.attr(cpu + "/intel_pstate/num_pstates", "32");
  tr.attr(cpu + "/intel_pstate/turbo_pct", "39");
  tr.attr(cpu + "/intel_pstate/hwp_dynamic_boost", "0");

  struct State { const char* name; int latency; };
  const State states[] = {{"POLL", 0}, {"C1", 1}, {"C1E", 4}, {"C6", 170}};
  for (int c = 0; c < t.cpus; ++c) {
    const std::string d = cpu + "/cpu" + str(c);
    for (int s = 0; s < 4; ++s) {
      const std::string sd = d + "/cpuidle/state" + str(s);
      tr.attr(sd + "/name", states[s].name);
      tr.attr(sd + "/latency", str(states[s].latency));
      tr.attr(sd + "/disable", "0");
    }
    // cpuN/cpufreq is a link to the policy directory, as the kernel lays it out.
    tr.link(d + "/cpufreq", "../cpufreq/policy" + str(c));
    const std::string p = cpu + "/cpufreq/policy" + str(c);
    tr.attr(p + "/scaling_driver", "intel_pstate");
    tr.attr(p + "/scaling_governor", "performance");
    tr.attr(p + "/energy_performance_preference", "performance");
    tr.attr(p + "/scaling_max_freq", "3900000");
    tr.attr(p + "/cpuinfo_max_freq", "3900000");
  }

  const std::string node = "sys/devices/system/node";
  Cpus nodes(kSockets);
  nodes.add_range(0, kSockets - 1);
  for (auto f : {"online", "possible", "has_cpu", "has_memory", "has_normal_memory"}) tr.attr(node + "/" + f, nodes.list());
  for (int n = 0; n < kSockets; ++n) {
    tr.attr(node + "/node" + str(n) + "/cpulist", t.node[static_cast<std::size_t>(n)].list());
    tr.attr(node + "/node" + str(n) + "/cpumap", t.node[static_cast<std::size_t>(n)].mask(t.cpus));
    std::string dist;
    for (int m = 0; m < kSockets; ++m) dist += (m ? " " : "") + str(m == n ? 10 : 21);
    tr.attr(node + "/node" + str(n) + "/distance", dist);
  }
}

std::string cpuinfo(const Topo& t) {
  const std::string flags =
      "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse "
      "sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl "
      "xtopology nonstop_tsc cpuid aperfmperf tsc_known_freq pni pclmulqdq dtes64 monitor ds_cpl vmx smx est "
      "tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes "
      "xsave avx f16c rdrand lahf_lm abm 3dnowprefetch cpuid_fault epb cat_l3 cat_l2 cdp_l3 intel_ppin cdp_l2 "
      "ssbd mba ibrs ibpb stibp ibrs_enhanced tpr_shadow flexpriority ept vpid ept_ad fsgsbase tsc_adjust bmi1 "
      "hle avx2 smep bmi2 erms invpcid rtm cqm rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt "
      "clwb intel_pt avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc "
      "cqm_mbm_total cqm_mbm_local split_lock_detect user_shstk avx_vnni avx512_bf16 wbnoinvd dtherm ida arat "
      "pln pts hwp hwp_act_window hwp_epp hwp_pkg_req vnmi avx512vbmi umip pku ospke waitpkg avx512_vbmi2 gfni "
      "vaes vpclmulqdq avx512_vnni avx512_bitalg tme avx512_vpopcntdq la57 rdpid bus_lock_detect cldemote "
      "movdiri movdir64b enqcmd fsrm md_clear serialize tsxldtrk pconfig arch_lbr ibt amx_bf16 avx512_fp16 "
      "amx_tile amx_int8 flush_l1d arch_capabilities";
  const std::string vmx =
      "vnmi preemption_timer posted_intr invvpid ept_x_only ept_ad ept_1gb flexpriority apicv tsc_offset vtpr "
      "mtf vapic ept vpid unrestricted_guest vapic_reg vid ple shadow_vmcs pml ept_mode_based_exec tsc_scaling "
      "usr_wait_pause notify_vm_exiting ipi_virt";
  std::string out;
  out.reserve(static_cast<std::size_t>(t.cpus) * 2600);
  for (int c = 0; c < t.cpus; ++c) {
    int core = t.core_of(c), sock = t.socket_of(c);
    int apic = sock * 256 + core * 2 + (c >= t.cores ? 1 : 0);
    out += "processor\t: " + str(c) + "\n";
    out += "vendor_id\t: GenuineIntel\n";
    out += "cpu family\t: 6\n";
    out += "model\t\t: 173\n";
    out += std::string("model name\t: ") + kModel + "\n";
    out += "stepping\t: 1\n";
    out += "microcode\t: 0x10003a2\n";
    out += "cpu MHz\t\t: " + str(800 + (c * 37) % 3100) + ".000\n";
    out += "cache size\t: 491520 KB\n";
    out += "physical id\t: " + str(sock) + "\n";
    out += "siblings\t: " + str(t.cpus / kSockets) + "\n";
    out += "core id\t\t: " + str(core) + "\n";
    out += "cpu cores\t: " + str(t.cores_per_socket) + "\n";
    out += "apicid\t\t: " + str(apic) + "\n";
    out += "initial apicid\t: " + str(apic) + "\n";
    out += "fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: 31\nwp\t\t: yes\n";
    out += "flags\t\t: " + flags + "\n";
    out += "vmx flags\t: " + vmx + "\n";
    out += "bugs\t\t: spectre_v1 spectre_v2 spec_store_bypass swapgs bhi\n";
    out += "bogomips\t: 4800.00\n";
    out += "clflush size\t: 64\ncache_alignment\t: 64\naddress sizes\t: 52 bits physical, 57 bits virtual\n";
    out += "power management:\n\n";
  }
  return out;
}

std::string proc_stat(const Topo& t, int nr_irqs, Rng& rng) {
  std::vector<std::uint64_t> tot(10, 0);
  std::string lines;
  for (int c = 0; c < t.cpus; ++c) {
    std::uint64_t f[10] = {60000000 + rng.below(40000000), 1000 + rng.below(500), 2000000 + rng.below(1000000),
                           20000000 + rng.below(20000000), 5000 + rng.below(5000), 0, 10000 + rng.below(20000),
                           0, 0, 0};
    lines += "cpu" + str(c);
    for (int i = 0; i < 10; ++i) {
      lines += ' ';
      lines += str(static_cast<long long>(f[i]));
      tot[static_cast<std::size_t>(i)] += f[i];
    }
    lines += "\n";
  }
  std::string out = "cpu ";
  for (auto v : tot) {
    out += ' ';
    out += str(static_cast<long long>(v));
  }
  out += "\n" + lines;
  out += "intr 98765432101";
  for (int i = 0; i < nr_irqs; ++i) {
    out += ' ';
    out += i < 40 || i % 7 == 0 ? str(static_cast<long long>(rng.below(100000))) : std::string("0");
  }
  out += "\nctxt 9876543210123\nbtime 1764400000\nprocesses 12345678\nprocs_running 67\nprocs_blocked 0\n";
  out += "softirq 123456789012 0 23456789012 1234567 3456789012 123456 0 234567890 45678901234 0 12345678901\n";
  return out;
}

// ---- PCI ---------------------------------------------------------------------------------

struct Pci {
  std::string path;  // tree path of the device directory
  std::string bdf;
  unsigned vendor, device, cls;
  std::string driver;  // "" when unbound
  int node;
};

std::string bdf(int bus, int dev, int fn) {
  return "0000:" + hex(static_cast<unsigned>(bus), 2) + ":" + hex(static_cast<unsigned>(dev), 2) + "." + str(fn);
}

struct PciLayout {
  std::vector<Pci> devs;
  std::vector<std::string> gpus, nics;  // BDFs, PCI order
  std::vector<std::string> nvme, mgmt_nic;
  std::vector<std::string> root_ports, down_ports;
};

PciLayout layout_pci(const Options& o) {
  PciLayout L;
  auto add = [&](const std::string& parent, int bus, int dev, int fn, unsigned v, unsigned d, unsigned cls,
                 std::string drv, int node) -> std::string {
    Pci p;
    p.bdf = bdf(bus, dev, fn);
    p.path = parent + "/" + p.bdf;
    p.vendor = v;
    p.device = d;
    p.cls = cls;
    p.driver = std::move(drv);
    p.node = node;
    L.devs.push_back(p);
    return p.path;
  };
  auto root = [](int bus) { return "sys/devices/pci0000:" + hex(static_cast<unsigned>(bus), 2); };

  // Socket 0, bus 00: host bridge, CBDMA, PCH functions, BMC VGA and a management NIC.
  {
    auto r = root(0x00);
    add(r, 0x00, 0x00, 0, 0x8086, 0x09a2, 0x060000, "", 0);
    for (int f = 1; f <= 4; ++f) add(r, 0x00, 0x00, f, 0x8086, 0x09a3 + static_cast<unsigned>(f), 0x088000, "", 0);
    for (int f = 0; f < 4; ++f) add(r, 0x00, 0x01, f, 0x8086, 0x0b00, 0x088000, "ioatdma", 0);
    add(r, 0x00, 0x11, 0, 0x8086, 0x1bd2, 0x010601, "ahci", 0);
    add(r, 0x00, 0x14, 0, 0x8086, 0x1bcd, 0x0c0330, "xhci_hcd", 0);
    add(r, 0x00, 0x14, 2, 0x8086, 0x1bce, 0x050000, "", 0);
    add(r, 0x00, 0x16, 0, 0x8086, 0x1be0, 0x078000, "mei_me", 0);
    add(r, 0x00, 0x16, 1, 0x8086, 0x1be1, 0x078000, "", 0);
    add(r, 0x00, 0x16, 4, 0x8086, 0x1be4, 0x078000, "", 0);
    add(r, 0x00, 0x17, 0, 0x8086, 0x1ba2, 0x010601, "ahci", 0);
    auto rp1 = add(r, 0x00, 0x1c, 0, 0x8086, 0x1bb8, 0x060400, "pcieport", 0);
    L.root_ports.push_back(bdf(0x00, 0x1c, 0));
    auto br = add(rp1, 0x01, 0x00, 0, 0x1a03, 0x1150, 0x060400, "", 0);
    add(br, 0x02, 0x00, 0, 0x1a03, 0x2000, 0x030000, "ast", 0);
    auto rp2 = add(r, 0x00, 0x1c, 4, 0x8086, 0x1bbc, 0x060400, "pcieport", 0);
    L.root_ports.push_back(bdf(0x00, 0x1c, 4));
    for (int f = 0; f < 2; ++f) {
      add(rp2, 0x03, 0x00, f, 0x8086, 0x1572, 0x020000, "i40e", 0);
      L.mgmt_nic.push_back(bdf(0x03, 0x00, f));
    }
    add(r, 0x00, 0x1f, 0, 0x8086, 0x1b81, 0x060100, "", 0);
    add(r, 0x00, 0x1f, 4, 0x8086, 0x1bc9, 0x0c0500, "i801_smbus", 0);
    add(r, 0x00, 0x1f, 5, 0x8086, 0x1bca, 0x0c8000, "intel-spi", 0);
  }

  // GPU/NIC complexes: root port -> PCIe switch (upstream, 4 downstream) -> GPU, NIC and, on
  // the first complexes, an NVSwitch. Half on each socket.
  const int complexes = std::max(o.gpus, o.nics);
  const int per0 = (complexes + 1) / 2;
  struct Placed { int idx; std::string path; std::string bdf; };
  std::vector<Placed> gpu_slots, nic_slots;
  for (int k = 0; k < complexes; ++k) {
    int sock = k < per0 ? 0 : 1;
    int pos = sock == 0 ? k : k - per0;
    int R = (sock == 0 ? 0x15 : 0x97) + pos * 0x11;
    auto r = root(R);
    add(r, R, 0x00, 0, 0x8086, 0x09a2, 0x088000, "", sock);
    add(r, R, 0x00, 4, 0x8086, 0x0998, 0x060000, "", sock);
    auto rp = add(r, R, 0x01, 0, 0x8086, 0x352a, 0x060400, "pcieport", sock);
    L.root_ports.push_back(bdf(R, 0x01, 0));
    auto up = add(rp, R + 1, 0x00, 0, 0x1000, 0xc030, 0x060400, "pcieport", sock);
    std::vector<std::string> down;
    for (int d = 0; d < 4; ++d) {
      down.push_back(add(up, R + 2, d, 0, 0x1000, 0xc030, 0x060400, "pcieport", sock));
      L.down_ports.push_back(bdf(R + 2, d, 0));
    }
    if (k < o.gpus) {
      add(down[0], R + 3, 0x00, 0, 0x10de, 0x2330, 0x030200, "nvidia", sock);
      L.gpus.push_back(bdf(R + 3, 0x00, 0));
    }
    if (k < o.nics) {
      add(down[1], R + 4, 0x00, 0, 0x15b3, 0x1021, 0x020700, "mlx5_core", sock);
      L.nics.push_back(bdf(R + 4, 0x00, 0));
    }
    if (k < 4 && o.gpus >= 8) add(down[2], R + 5, 0x00, 0, 0x10de, 0x22a3, 0x068000, "", sock);
  }

  // Socket 0: two NVMe drives on their own root ports.
  {
    int R = 0x15 + per0 * 0x11;
    auto r = root(R);
    add(r, R, 0x00, 0, 0x8086, 0x09a2, 0x088000, "", 0);
    for (int d = 0; d < 2; ++d) {
      auto rp = add(r, R, 0x01 + d * 2, 0, 0x8086, 0x352a, 0x060400, "pcieport", 0);
      L.root_ports.push_back(bdf(R, 0x01 + d * 2, 0));
      add(rp, R + 1 + d, 0x00, 0, 0x144d, 0xa80a, 0x010802, "nvme", 0);
      L.nvme.push_back(bdf(R + 1 + d, 0x00, 0));
    }
  }

  // Uncore functions on each socket's last buses (integrated memory controller, UPI, PCU...).
  for (int s = 0; s < kSockets; ++s) {
    for (int bus : {s == 0 ? 0x7e : 0xfe, s == 0 ? 0x7f : 0xff}) {
      auto r = root(bus);
      static const int devs[] = {0x00, 0x0b};
      for (int d : devs)
        for (int f = 0; f < 3; ++f)
          add(r, bus, d, f, 0x8086, 0x3240 + static_cast<unsigned>(d * 8 + f), 0x088000, "", s);
    }
  }
  return L;
}

void write_pci(Tree& tr, const Topo& t, const PciLayout& L) {
  std::set<std::string> drivers;
  for (const auto& p : L.devs) {
    const auto& d = p.path;
    tr.attr(d + "/vendor", "0x" + hex(p.vendor, 4));
    tr.attr(d + "/device", "0x" + hex(p.device, 4));
    tr.attr(d + "/class", "0x" + hex(p.cls, 6));
    tr.attr(d + "/numa_node", str(p.node));
    tr.attr(d + "/local_cpulist", t.node[static_cast<std::size_t>(p.node)].list());
    tr.rlink(d + "/subsystem", "sys/bus/pci");
    tr.rlink("sys/bus/pci/devices/" + p.bdf, d);
    if (!p.driver.empty()) {
      // device/driver -> the driver directory, which links back to the device: a cycle.
      tr.rlink(d + "/driver", "sys/bus/pci/drivers/" + p.driver);
      tr.rlink("sys/bus/pci/drivers/" + p.driver + "/" + p.bdf, d);
      drivers.insert(p.driver);
    }
  }
  for (const auto& drv : drivers) tr.attr("sys/bus/pci/drivers/" + drv + "/uevent", "");
  tr.attr("sys/bus/pci/drivers_autoprobe", "1");
}

void write_nvidia(Tree& tr, const PciLayout& L, Rng& rng) {
  tr.file("proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024\n"
          "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n");
  tr.file("proc/driver/nvidia/params", "ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\nDeviceFileUID: 0\n");
  for (std::size_t i = 0; i < L.gpus.size(); ++i) {
    auto r = [&] { return hex(rng.next(), 16); };
    std::string u = r() + r();
    std::string uuid = "GPU-" + u.substr(0, 8) + "-" + u.substr(8, 4) + "-" + u.substr(12, 4) + "-" + u.substr(16, 4) + "-" + u.substr(20, 12);
    tr.file("proc/driver/nvidia/gpus/" + L.gpus[i] + "/information",
            "Model: \t\t NVIDIA H100 80GB HBM3\n"
            "IRQ:   \t\t " + str(500 + static_cast<long long>(i)) + "\n"
            "GPU UUID: \t " + uuid + "\n"
            "Video BIOS: \t 96.00.99.00.01\n"
            "Bus Type: \t PCIe\n"
            "DMA Size: \t 52 bits\n"
            "DMA Mask: \t 0xfffffffffffff\n"
            "Bus Location: \t " + L.gpus[i] + "\n"
            "Device Minor: \t " + str(static_cast<long long>(i)) + "\n"
            "GPU Firmware: \t 550.90.07\n"
            "GPU Excluded:\t No\n");
    tr.file("dev/nvidia" + str(static_cast<long long>(i)), "");
  }
  tr.file("dev/nvidiactl", "");
  tr.file("dev/nvidia-uvm", "");
}

// ---- interrupts --------------------------------------------------------------------------

struct IrqRow {
  std::string irq;    // "0", "120", "NMI"
  std::string chip;   // "IR-PCI-MSIX-0000:ae:00.0"
  std::string hw;     // "0-edge"
  std::string name;   // "mlx5_comp0@pci:0000:ae:00.0" or an arch description
  std::vector<int> hot;  // CPUs with a count
  Cpus affinity, effective;
  bool arch = false;
};

struct Irqs {
  std::vector<IrqRow> rows;
  int nr = 0;  // one past the largest number
};

Irqs layout_irqs(const Topo& t, const PciLayout& L, const Options& o) {
  Irqs I;
  int next = 24;
  auto node_of_bdf = [&](const std::string& b) {
    for (const auto& p : L.devs)
      if (p.bdf == b) return p.node;
    return 0;
  };
  Cpus all(t.cpus);
  all.add_range(0, t.cpus - 1);
  auto row = [&](std::string irq, std::string chip, std::string hw, std::string name, int node, int eff) {
    IrqRow r;
    r.irq = std::move(irq);
    r.chip = std::move(chip);
    r.hw = std::move(hw);
    r.name = std::move(name);
    r.affinity = node < 0 ? all : t.node[static_cast<std::size_t>(node)];
    r.effective = Cpus(t.cpus);
    r.effective.add(eff);
    r.hot.push_back(eff);
    I.rows.push_back(std::move(r));
  };
  // Housekeeping CPUs: the first core of each socket and its sibling.
  auto hk = [&](int node, int i) {
    int base = node * t.cores_per_socket;
    return i % 2 == 0 ? base : t.cores + base;
  };
  row("0", "IR-IO-APIC", "2-edge", "timer", -1, 0);
  row("8", "IR-IO-APIC", "8-edge", "rtc0", -1, 0);
  row("9", "IR-IO-APIC", "9-fasteoi", "acpi", -1, 0);
  row("16", "IR-IO-APIC", "16-fasteoi", "i801_smbus", -1, 0);
  for (int i = 0; i < 12; ++i) row(str(next++), "DMAR-MSI", str(i) + "-edge", "dmar" + str(i), i < 6 ? 0 : 1, hk(i < 6 ? 0 : 1, i));
  for (const auto& p : L.root_ports) {
    int n = next++;
    row(str(n), "IR-PCI-MSI-" + p, "0-edge", "PCIe PME, aerdrv, pcie-dpc", node_of_bdf(p), hk(node_of_bdf(p), n));
  }
  for (const auto& p : L.down_ports) {
    int n = next++;
    row(str(n), "IR-PCI-MSI-" + p, "0-edge", "PCIe PME, pciehp", node_of_bdf(p), hk(node_of_bdf(p), n));
  }
  row(str(next++), "IR-PCI-MSI-0000:00:14.0", "0-edge", "xhci_hcd", 0, 0);
  row(str(next++), "IR-PCI-MSI-0000:00:17.0", "0-edge", "ahci[0000:00:17.0]", 0, 0);
  row(str(next++), "IR-PCI-MSI-0000:00:16.0", "0-edge", "mei_me", 0, t.cores);
  for (int i = 0; i < 4; ++i) row(str(next++), "IR-PCI-MSIX-" + bdf(0, 1, i), "0-edge", "ioat-msix", 0, hk(0, i));
  // Management NIC (i40e): misc vector and 16 queue pairs per port.
  for (std::size_t f = 0; f < L.mgmt_nic.size(); ++f) {
    const auto& b = L.mgmt_nic[f];
    row(str(next++), "IR-PCI-MSIX-" + b, "0-edge", "i40e-" + b + ":misc", 0, 0);
    for (int q = 0; q < 16; ++q)
      row(str(next++), "IR-PCI-MSIX-" + b, str(q + 1) + "-edge", "i40e-eno" + str(static_cast<long long>(f + 1)) + "np" + str(static_cast<long long>(f)) + "-TxRx-" + str(q), 0, hk(0, q));
  }
  // NVMe: admin queue and 32 I/O queues per drive, spread over the socket's CPUs.
  for (std::size_t n = 0; n < L.nvme.size(); ++n) {
    const auto& b = L.nvme[n];
    auto cpus = t.node[0].members();
    row(str(next++), "IR-PCI-MSIX-" + b, "0-edge", "nvme" + str(static_cast<long long>(n)) + "q0", 0, 0);
    for (int q = 1; q <= 32; ++q)
      row(str(next++), "IR-PCI-MSIX-" + b, str(q) + "-edge", "nvme" + str(static_cast<long long>(n)) + "q" + str(q), 0,
          cpus[static_cast<std::size_t>((q - 1) * 6) % cpus.size()]);
  }
  // ConnectX: async vector and nic_queues completion vectors each, pinned by the driver's
  // affinity hints to successive CPUs of the NIC's node (so they land on training cores).
  for (const auto& b : L.nics) {
    int node = node_of_bdf(b);
    auto cpus = t.node[static_cast<std::size_t>(node)].members();
    row(str(next++), "IR-PCI-MSIX-" + b, "0-edge", "mlx5_async0@pci:" + b, node, hk(node, 0));
    for (int q = 0; q < o.nic_queues; ++q)
      row(str(next++), "IR-PCI-MSIX-" + b, str(q + 1) + "-edge", "mlx5_comp" + str(q) + "@pci:" + b, node,
          cpus[static_cast<std::size_t>(q) % cpus.size()]);
  }
  // NVIDIA: one MSI vector per GPU, on a housekeeping CPU of its node.
  for (std::size_t g = 0; g < L.gpus.size(); ++g) {
    int node = node_of_bdf(L.gpus[g]);
    row(str(next++), "IR-PCI-MSI-" + L.gpus[g], "0-edge", "nvidia", node, hk(node, static_cast<int>(g)));
  }
  I.nr = next;
  // Architecture rows: every CPU counts.
  const char* arch[][2] = {{"NMI", "Non-maskable interrupts"}, {"LOC", "Local timer interrupts"},
                           {"SPU", "Spurious interrupts"},     {"PMI", "Performance monitoring interrupts"},
                           {"IWI", "IRQ work interrupts"},     {"RTR", "APIC ICR read retries"},
                           {"RES", "Rescheduling interrupts"}, {"CAL", "Function call interrupts"},
                           {"TLB", "TLB shootdowns"},          {"TRM", "Thermal event interrupts"},
                           {"THR", "Threshold APIC interrupts"}, {"DFR", "Deferred Error APIC interrupts"},
                           {"MCE", "Machine check exceptions"}, {"MCP", "Machine check polls"},
                           {"PIN", "Posted-interrupt notification event"}, {"NPI", "Nested posted-interrupt event"},
                           {"PIW", "Posted-interrupt wakeup event"}};
  for (auto& a : arch) {
    IrqRow r;
    r.irq = a[0];
    r.name = a[1];
    r.arch = true;
    I.rows.push_back(std::move(r));
  }
  return I;
}

std::string proc_interrupts(const Topo& t, const Irqs& I, Rng& rng) {
  // The kernel's layout: the label column is as wide as the largest IRQ number (at least 3),
  // counts are 10 wide with a leading space, then chip, hwirq, and the action names.
  int prec = std::max(3, static_cast<int>(str(I.nr).size()));
  std::string out(static_cast<std::size_t>(prec + 8), ' ');
  for (int c = 0; c < t.cpus; ++c) out += pad_right("CPU" + str(c), 11);
  out += "\n";
  for (const auto& r : I.rows) {
    out += pad_left(r.irq, static_cast<std::size_t>(prec)) + ":";
    for (int c = 0; c < t.cpus; ++c) {
      std::uint64_t n = 0;
      if (r.arch) {
        if (r.irq == "LOC") n = 100000000 + rng.below(900000000);
        else if (r.irq == "RES" || r.irq == "CAL" || r.irq == "TLB") n = rng.below(5000000);
        else if (r.irq == "NMI" || r.irq == "PMI" || r.irq == "IWI" || r.irq == "MCP") n = rng.below(20000);
      } else if (std::find(r.hot.begin(), r.hot.end(), c) != r.hot.end()) {
        n = 1000 + rng.below(2000000000);
      } else if (c < 2 && rng.below(4) == 0) {
        n = rng.below(100);  // counted before the affinity was set
      }
      out += ' ';
      out += pad_left(str(static_cast<long long>(n)), 10);
    }
    if (r.arch) out += "   " + r.name;
    else out += "  " + pad_right(r.chip, 8) + " " + pad_right(r.hw, 8) + " " + r.name;
    out += "\n";
  }
  out += pad_left("ERR", static_cast<std::size_t>(prec)) + ": " + pad_left("0", 10) + "\n";
  out += pad_left("MIS", static_cast<std::size_t>(prec)) + ": " + pad_left("0", 10) + "\n";
  return out;
}

void write_irqs(Tree& tr, const Topo& t, const Irqs& I) {
  Cpus all(t.cpus);
  all.add_range(0, t.cpus - 1);
  tr.attr("proc/irq/default_smp_affinity", all.mask(t.cpus));
  for (const auto& r : I.rows) {
    if (r.arch) continue;
    tr.attr("proc/irq/" + r.irq + "/smp_affinity_list", r.affinity.list());
    tr.attr("proc/irq/" + r.irq + "/effective_affinity_list", r.effective.list());
  }
}

// ---- processes ---------------------------------------------------------------------------

struct Task {
  int tid;
  std::string comm;
  double share;  // fraction of one CPU over its lifetime
  int last_cpu;
};

struct Proc {
  int pid, ppid;
  std::string name;
  bool kthread = false;
  std::vector<std::pair<std::string, std::string>> env;
  Cpus allowed;
  double start_s;  // seconds after boot
  std::vector<Task> tasks;
  std::uint64_t vm_kb = 0, rss_kb = 0;
  int uid = 0;
};

std::string environ_text(const Proc& p) {
  std::string out;
  for (const auto& [k, v] : p.env) {
    out += k + "=" + v;
    out.push_back('\0');
  }
  return out;
}

std::string status_text(const Proc& p, const Topo& t) {
  std::string s;
  auto kv = [&](const char* k, const std::string& v) { s += std::string(k) + ":\t" + v + "\n"; };
  auto kb = [](std::uint64_t v) { return pad_left(str(static_cast<long long>(v)), 8) + " kB"; };
  kv("Name", p.name.substr(0, 15));
  kv("Umask", p.kthread ? "0000" : "0022");
  kv("State", p.tasks.front().share > 0.5 ? "R (running)" : "S (sleeping)");
  kv("Tgid", str(p.pid));
  kv("Ngid", "0");
  kv("Pid", str(p.pid));
  kv("PPid", str(p.ppid));
  kv("TracerPid", "0");
  std::string id = str(p.uid) + "\t" + str(p.uid) + "\t" + str(p.uid) + "\t" + str(p.uid);
  kv("Uid", id);
  kv("Gid", id);
  kv("FDSize", p.kthread ? "64" : "256");
  kv("Groups", "");
  kv("NStgid", str(p.pid));
  kv("NSpid", str(p.pid));
  kv("NSpgid", str(p.pid));
  kv("NSsid", str(p.pid));
  kv("Kthread", p.kthread ? "1" : "0");
  if (!p.kthread) {
    kv("VmPeak", kb(p.vm_kb + 4096));
    kv("VmSize", kb(p.vm_kb));
    kv("VmLck", kb(0));
    kv("VmPin", kb(0));
    kv("VmHWM", kb(p.rss_kb + 1024));
    kv("VmRSS", kb(p.rss_kb));
    kv("RssAnon", kb(p.rss_kb * 3 / 4));
    kv("RssFile", kb(p.rss_kb / 4));
    kv("RssShmem", kb(0));
    kv("VmData", kb(p.vm_kb / 2));
    kv("VmStk", kb(132));
    kv("VmExe", kb(2048));
    kv("VmLib", kb(p.vm_kb / 8));
    kv("VmPTE", kb(p.rss_kb / 500 + 60));
    kv("VmSwap", kb(0));
    kv("HugetlbPages", kb(0));
  }
  kv("CoreDumping", "0");
  kv("THP_enabled", p.kthread ? "0" : "1");
  kv("untag_mask", "0xffffffffffffffff");
  kv("Threads", str(static_cast<long long>(p.tasks.size())));
  kv("SigQ", "0/2062745");
  kv("SigPnd", "0000000000000000");
  kv("ShdPnd", "0000000000000000");
  kv("SigBlk", "0000000000000000");
  kv("SigIgn", p.kthread ? "ffffffffffffffff" : "0000000001001000");
  kv("SigCgt", p.kthread ? "0000000000000000" : "0000000180004a02");
  kv("CapInh", "0000000000000000");
  kv("CapPrm", p.uid == 0 ? "000001ffffffffff" : "0000000000000000");
  kv("CapEff", p.uid == 0 ? "000001ffffffffff" : "0000000000000000");
  kv("CapBnd", "000001ffffffffff");
  kv("CapAmb", "0000000000000000");
  kv("NoNewPrivs", "0");
  kv("Seccomp", "0");
  kv("Seccomp_filters", "0");
  kv("Speculation_Store_Bypass", "thread vulnerable");
  kv("SpeculationIndirectBranch", "conditional enabled");
  kv("Cpus_allowed", p.allowed.mask(t.cpus));
  kv("Cpus_allowed_list", p.allowed.list());
  // Mems_allowed is MAX_NUMNODES (1024) bits wide on distribution kernels.
  Cpus mems(1024);
  mems.add_range(0, kSockets - 1);
  kv("Mems_allowed", mems.mask(1024));
  kv("Mems_allowed_list", mems.list());
  kv("voluntary_ctxt_switches", str(static_cast<long long>(1000 + p.pid * 7 % 100000)));
  kv("nonvoluntary_ctxt_switches", str(static_cast<long long>(p.pid * 3 % 5000)));
  return s;
}

std::string task_stat(const Proc& p, const Task& k) {
  // 52 fields; comm in parentheses; field 22 starttime, 14/15 utime/stime, 39 processor.
  double alive = kUptime - p.start_s;
  auto ticks = static_cast<long long>(k.share * alive * kHz);
  long long ut = ticks * 9 / 10, st = ticks - ut;
  long long start = static_cast<long long>(p.start_s * kHz);
  const char state = k.share > 0.5 ? 'R' : (p.kthread ? 'I' : 'S');
  std::string s = str(k.tid) + " (" + k.comm.substr(0, 15) + ") " + state + " " + str(p.ppid) + " " + str(p.pid) + " " +
                  str(p.pid) + " 0 -1 " + (p.kthread ? "69238880" : "4194560") + " " + str(12000 + k.tid % 1000) +
                  " 0 " + str(k.tid % 50) + " 0 " + str(ut) + " " + str(st) + " 0 0 20 0 " +
                  str(static_cast<long long>(p.tasks.size())) + " 0 " + str(start) + " " +
                  str(static_cast<long long>(p.vm_kb * 1024)) + " " + str(static_cast<long long>(p.rss_kb / 4)) +
                  " 18446744073709551615 " + (p.kthread ? "0 0 0 0 0" : "94559184363520 94559186493793 140724603453232 0 0") +
                  " 0 0 " + (p.kthread ? "2147483647 0" : "4096 16386") + " 1 0 0 17 " + str(k.last_cpu) +
                  " 0 0 " + str(k.tid % 13) + " 0 0 " +
                  (p.kthread ? "0 0 0 0 0 0 0 0" : "94559188590984 94559188608384 94559212130304 140724603458673 140724603458700 140724603458700 140724603461599") +
                  " 0\n";
  return s;
}

struct Procs {
  std::vector<Proc> list;
  int self_pid = 0;
  std::vector<int> rank_pids;
};

Procs make_procs(const Topo& t, const PciLayout& L, const Options& o, Rng& rng) {
  Procs P;
  Cpus all(t.cpus);
  all.add_range(0, t.cpus - 1);
  auto proc = [&](int pid, int ppid, std::string name, double start, bool kthread) -> Proc& {
    Proc p;
    p.pid = pid;
    p.ppid = ppid;
    p.name = std::move(name);
    p.kthread = kthread;
    p.allowed = all;
    p.start_s = start;
    p.vm_kb = kthread ? 0 : 20000 + rng.below(400000);
    p.rss_kb = kthread ? 0 : 4000 + rng.below(60000);
    P.list.push_back(std::move(p));
    return P.list.back();
  };
  auto task = [&](Proc& p, int tid, std::string comm, double share, int cpu) {
    p.tasks.push_back({tid, std::move(comm), share, cpu});
  };
  const std::vector<std::pair<std::string, std::string>> sysenv = {
      {"LANG", "C.UTF-8"}, {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      {"NOTIFY_SOCKET", "/run/systemd/notify"}, {"JOURNAL_STREAM", "8:23456"}, {"SYSTEMD_EXEC_PID", ""},
      {"INVOCATION_ID", ""}};
  auto daemon_env = [&](Proc& p) {
    p.env = sysenv;
    p.env[4].second = str(p.pid);
    p.env[5].second = hex(rng.next(), 16) + hex(rng.next(), 16);
  };

  // systemd and the kernel's roots.
  {
    auto& p = proc(1, 0, "systemd", 2.1, false);
    p.env = {{"HOME", "/"}, {"TERM", "linux"}, {"BOOT_IMAGE", std::string("/vmlinuz-") + kKernel}};
    task(p, 1, "systemd", 0.0004, 17);
  }
  // "Other" processes: everything but the launcher, the ranks and perfgap itself.
  int other = 2;
  auto budget = [&] { return other < o.other_procs; };
  {
    auto& p = proc(2, 0, "kthreadd", 0.0, true);
    task(p, 2, "kthreadd", 0.00001, 40);
  }

  // System daemons: (name, threads, user, share of a CPU of the busiest thread).
  struct Daemon { const char* name; int threads; int uid; double share; };
  const Daemon daemons[] = {
      {"systemd-journal", 1, 0, 0.002},  {"systemd-udevd", 1, 0, 0.0005}, {"systemd-network", 1, 100, 0.0001},
      {"systemd-resolve", 1, 101, 0.0002}, {"systemd-timesyn", 2, 102, 0.0001}, {"systemd-logind", 1, 0, 0.0001},
      {"dbus-daemon", 1, 103, 0.0003},   {"rsyslogd", 4, 104, 0.0004},       {"cron", 1, 0, 0.0001},
      {"chronyd", 1, 105, 0.0001},       {"irqbalance", 2, 0, 0.0006},       {"sshd", 1, 0, 0.0001},
      {"agetty", 1, 0, 0.0},             {"polkitd", 3, 106, 0.0001},        {"udisksd", 5, 0, 0.0001},
      {"nvidia-persiste", 1, 0, 0.0008}, {"nv-fabricmanage", 12, 0, 0.004},  {"nv-hostengine", 18, 0, 0.006},
      {"dcgm-exporter", 16, 0, 0.15},    {"node_exporter", 10, 65534, 0.003}, {"containerd", 24, 0, 0.002},
      {"dockerd", 32, 0, 0.001},         {"munged", 4, 107, 0.0001},         {"slurmd", 6, 0, 0.0007},
      {"lldpd", 1, 108, 0.0001},         {"snmpd", 1, 109, 0.0001},          {"sssd", 1, 0, 0.0002},
      {"sssd_be", 1, 0, 0.0003},         {"sssd_nss", 1, 0, 0.0002},         {"opensm", 8, 0, 0.001},
      {"rdma-ndd", 1, 0, 0.0},           {"lvmetad", 1, 0, 0.0},             {"multipathd", 7, 0, 0.0003},
      {"fluent-bit", 6, 0, 0.01},        {"telegraf", 14, 0, 0.008},         {"sshd", 1, 1000, 0.0001},
      {"bash", 1, 1000, 0.0001},         {"tmux: server", 1, 1000, 0.0002},  {"bash", 1, 1000, 0.0},
      {"htop", 1, 1000, 0.002},          {"slurmstepd", 5, 0, 0.0005},
  };
  int pid = 3000;
  int next_tid = 20000;  // threads other than a process's main thread
  for (const auto& d : daemons) {
    if (!budget()) break;
    auto& p = proc(pid, 1, d.name, 10.0 + other, false);
    p.uid = d.uid;
    daemon_env(p);
    if (std::string(d.name) == "dcgm-exporter") {
      // A busy exporter thread that last ran on a training core of socket 0.
      task(p, pid, d.name, 0.001, 1 + static_cast<int>(rng.below(t.cores_per_socket - 1)));
      for (int k = 1; k < d.threads; ++k)
        task(p, next_tid++, k == 3 ? "dcgm-exporter" : d.name, k == 3 ? d.share : 0.0005,
             k == 3 ? 17 : static_cast<int>(rng.below(static_cast<std::uint64_t>(t.cpus))));
    } else {
      task(p, pid, d.name, d.share, static_cast<int>(rng.below(static_cast<std::uint64_t>(t.cpus))));
      for (int k = 1; k < d.threads; ++k)
        task(p, next_tid++, d.name, d.share / 4, static_cast<int>(rng.below(static_cast<std::uint64_t>(t.cpus))));
    }
    pid += 1 + static_cast<int>(rng.below(30));
    ++other;
  }

  // The launcher: srun gave it SLURM_LOCALID, but it maps no CUDA/NCCL (not a training process).
  const int launcher = 40200;
  std::vector<std::pair<std::string, std::string>> jobenv = {
      {"PATH", "/opt/conda/bin:/usr/local/cuda/bin:/usr/bin:/bin"}, {"HOME", "/home/train"},
      {"USER", "train"}, {"SLURM_JOB_ID", "4242424"}, {"SLURM_JOB_NAME", "llm-pretrain"},
      {"SLURM_NODEID", "3"}, {"SLURM_PROCID", "3"}, {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "64"},
      {"SLURMD_NODENAME", "gpu-a17"}, {"MASTER_ADDR", "gpu-a01"}, {"MASTER_PORT", "29500"},
      {"NCCL_IB_HCA", "mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7"},
      {"NCCL_SOCKET_IFNAME", "eno1np0"}, {"NCCL_DEBUG", "WARN"}, {"CUDA_DEVICE_MAX_CONNECTIONS", "1"},
      {"OMP_NUM_THREADS", "8"}, {"WANDB_API_KEY", "0123456789abcdef0123456789abcdef01234567"},
      {"HF_TOKEN", "hf_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"}, {"LD_LIBRARY_PATH", "/usr/local/cuda/lib64:/opt/conda/lib"}};
  if (o.ranks > 0) {
    auto& p = proc(launcher, pid - 1, "torchrun", 3600.0, false);
    p.uid = 1001;
    p.env = jobenv;
    task(p, launcher, "torchrun", 0.002, 0);
    task(p, launcher + 1, "torchrun", 0.0001, t.cores);
  }

  // Ranks: LOCAL_RANK r uses GPU r (CUDA_VISIBLE_DEVICES lists all), bound to the CPUs of its
  // GPU's socket less the housekeeping core (first core of the socket and its sibling).
  const char* thread_names[] = {"python3", "pt_autograd_0", "cuda-EvtHandlr", "pt_nccl_watchdg", "python3",
                                "pt_nccl_heartbt", "cuda00001400006", "pt_autograd_1"};
  std::string cvd;
  for (std::size_t g = 0; g < std::max<std::size_t>(L.gpus.size(), 1); ++g) cvd += (g ? "," : "") + str(static_cast<long long>(g));
  for (int r = 0; r < o.ranks; ++r) {
    int node = r % kSockets;
    if (r < static_cast<int>(L.gpus.size()))
      for (const auto& d : L.devs)
        if (d.bdf == L.gpus[static_cast<std::size_t>(r)]) node = d.node;
    int rp = launcher + 10 + r * std::max(100, o.threads_per_rank + 10);
    auto& p = proc(rp, launcher, "python3", 3605.0, false);
    p.uid = 1001;
    p.vm_kb = 180000000 + rng.below(20000000);
    p.rss_kb = 30000000 + rng.below(5000000);
    p.env = jobenv;
    p.env.push_back({"LOCAL_RANK", str(r)});
    p.env.push_back({"RANK", str(3 * o.ranks + r)});
    p.env.push_back({"WORLD_SIZE", str(8 * o.ranks)});
    p.env.push_back({"LOCAL_WORLD_SIZE", str(o.ranks)});
    p.env.push_back({"CUDA_VISIBLE_DEVICES", cvd});
    p.env.push_back({"TORCHELASTIC_RUN_ID", "4242424"});
    Cpus allowed = t.node[static_cast<std::size_t>(node)];
    allowed.bits[static_cast<std::size_t>(node * t.cores_per_socket)] = false;
    allowed.bits[static_cast<std::size_t>(t.cores + node * t.cores_per_socket)] = false;
    p.allowed = allowed;
    auto cpus = allowed.members();
    for (int k = 0; k < o.threads_per_rank; ++k) {
      double share = k == 0 ? 0.97 : k == 4 ? 0.35 : k == 3 ? 0.02 : 0.005 + 0.001 * k;
      int cpu = cpus[static_cast<std::size_t>(r * 11 + k * 5) % cpus.size()];
      task(p, k == 0 ? rp : rp + k, thread_names[k % 8], share, cpu);
    }
    P.rank_pids.push_back(rp);
  }

  // perfgap itself: /proc/self points here.
  P.self_pid = 51234;
  {
    auto& p = proc(P.self_pid, pid - 1, "perfgap", kUptime - 2, false);
    p.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"HOME", "/root"}, {"SLURMD_NODENAME", "gpu-a17"},
             {"NCCL_IB_QPS_PER_CONNECTION", "4"}, {"NCCL_IB_PKEY", "0x8001"}, {"LANG", "C.UTF-8"}};
    task(p, P.self_pid, "perfgap", 0.5, 0);
  }

  // Kernel threads fill the rest: global ones, then per-CPU ones in CPU order (a real
  // 384-CPU node has ~2000; --other-procs sets how many are written).
  const char* global[] = {"pool_workqueue_release", "kworker/R-rcu_g", "kworker/R-rcu_p", "kworker/R-slub_",
                          "kworker/R-netns", "rcu_tasks_kthread", "rcu_tasks_rude_kthread", "rcu_tasks_trace_kthread",
                          "rcu_preempt", "rcu_exp_par_gp_kthread_worker/0", "rcu_exp_gp_kthread_worker", "kdevtmpfs",
                          "kworker/R-inet_", "kauditd", "khungtaskd", "oom_reaper", "kworker/R-write", "kcompactd0",
                          "kcompactd1", "ksmd", "khugepaged", "kworker/R-kinte", "kworker/R-kbloc", "kworker/R-blkcg",
                          "irq/9-acpi", "kworker/R-tpm_d", "kworker/R-ata_s", "kworker/R-md", "kworker/R-md_bi",
                          "kworker/R-edac-", "watchdogd", "kswapd0", "kswapd1", "ecryptfs-kthread", "kworker/R-kthro",
                          "kworker/R-acpi_", "scsi_eh_0", "kworker/R-scsi_", "kworker/R-mld", "kworker/R-ipv6_",
                          "kworker/R-kstrp", "kworker/R-charg", "jbd2/nvme0n1p2-8", "kworker/R-ext4-", "kworker/R-nvme-",
                          "kworker/R-mlx5_", "kworker/R-ib-co", "kworker/R-ib_mc", "kworker/R-ib_nl", "kworker/R-nv_qu"};
  int kpid = 3;
  for (auto g : global) {
    if (!budget()) break;
    auto& p = proc(kpid, 2, g, 0.1, true);
    task(p, kpid, g, 0.00001, static_cast<int>(rng.below(static_cast<std::uint64_t>(t.cpus))));
    ++kpid;
    ++other;
  }
  const char* percpu[] = {"cpuhp/", "idle_inject/", "migration/", "ksoftirqd/", "kworker/"};
  for (int c = 0; c < t.cpus && budget(); ++c) {
    for (int k = 0; k < 5 && budget(); ++k) {
      std::string name = std::string(percpu[k]) + str(c) + (k == 4 ? ":0H-events_highpri" : "");
      auto& p = proc(kpid + 50, 2, name, 0.2, true);
      double share = k == 3 ? 0.0005 : 0.0;
      task(p, kpid + 50, name, share, c);
      ++kpid;
      ++other;
    }
  }
  std::sort(P.list.begin(), P.list.end(), [](const Proc& a, const Proc& b) { return a.pid < b.pid; });
  return P;
}

std::string rank_maps(Rng& rng, int r) {
  // A PyTorch process maps hundreds of libraries; libcuda and libnccl come late.
  std::string out;
  std::uint64_t a = 0x55d0c0a00000ULL;
  auto line = [&](std::uint64_t len, const char* perms, const std::string& path, std::uint64_t inode) {
    out += hex(a, 0) + "-" + hex(a + len, 0) + " " + perms + " 00000000 " + (inode ? "103:02" : "00:00") + " " +
           str(static_cast<long long>(inode));
    if (!path.empty()) out += pad_left("", 26 - std::min<std::size_t>(26, str(static_cast<long long>(inode)).size())) + path;
    out += "\n";
    a += len;
  };
  line(0x2f000, "r--p", "/opt/conda/bin/python3.10", 2345);
  line(0x2b8000, "r-xp", "/opt/conda/bin/python3.10", 2345);
  line(0x4000000, "rw-p", "[heap]", 0);
  a = 0x7f0000000000ULL;
  const char* pkgs[] = {"torch/lib/libtorch_cuda.so", "torch/lib/libtorch_cpu.so", "torch/lib/libc10.so",
                        "torch/lib/libc10_cuda.so", "torch/lib/libgomp-a34b3233.so.1", "numpy/core/_multiarray_umath.cpython-310-x86_64-linux-gnu.so",
                        "nvidia/cublas/lib/libcublas.so.12", "nvidia/cublas/lib/libcublasLt.so.12",
                        "nvidia/cudnn/lib/libcudnn.so.9", "nvidia/cuda_runtime/lib/libcudart.so.12",
                        "nvidia/cusparse/lib/libcusparse.so.12", "nvidia/cufft/lib/libcufft.so.11",
                        "nvidia/curand/lib/libcurand.so.10", "nvidia/nvjitlink/lib/libnvJitLink.so.12",
                        "pandas/_libs/hashtable.cpython-310-x86_64-linux-gnu.so", "yaml/_yaml.cpython-310-x86_64-linux-gnu.so"};
  for (int i = 0; i < 560; ++i) {
    std::string path;
    if (i % 7 == 3) path = "";
    else if (i % 5 == 0) path = "/opt/conda/lib/python3.10/lib-dynload/mod" + str(i) + ".cpython-310-x86_64-linux-gnu.so";
    else path = std::string("/opt/conda/lib/python3.10/site-packages/") + pkgs[i % 16];
    const char* perms[] = {"r--p", "r-xp", "r--p", "rw-p"};
    line(0x1000 * (1 + rng.below(4096)), path.empty() ? "rw-p" : perms[i % 4], path, path.empty() ? 0 : 10000 + static_cast<std::uint64_t>(i));
  }
  line(0x400000, "r--p", "/usr/lib/x86_64-linux-gnu/libcuda.so.550.90.07", 3456);
  line(0x1c00000, "r-xp", "/usr/lib/x86_64-linux-gnu/libcuda.so.550.90.07", 3456);
  line(0x200000, "r--p", "/opt/conda/lib/python3.10/site-packages/nvidia/nccl/lib/libnccl.so.2", 4567);
  line(0x8000000, "r-xp", "/opt/conda/lib/python3.10/site-packages/nvidia/nccl/lib/libnccl.so.2", 4567);
  for (int i = 0; i < 40; ++i) line(0x200000, "rw-s", "/dev/nvidia" + str(r % 8), 900 + static_cast<std::uint64_t>(r));
  line(0x21000, "rw-p", "[stack]", 0);
  line(0x2000, "r--p", "[vvar]", 0);
  line(0x2000, "r-xp", "[vdso]", 0);
  return out;
}

std::string rank_numa_maps(Rng& rng, int node, int lines) {
  std::string out;
  std::uint64_t a = 0x7f0000000000ULL;
  const int remote = 1 - node;
  for (int i = 0; i < lines; ++i) {
    out += hex(a, 0);
    if (i % 3 == 0) {
      std::uint64_t pages = 1 + rng.below(4096);
      out += " default file=/opt/conda/lib/python3.10/site-packages/torch/lib/lib" + str(i) + ".so mapped=" +
             str(static_cast<long long>(pages)) + " mapmax=8 N" + str(node) + "=" + str(static_cast<long long>(pages)) +
             " kernelpagesize_kB=4";
    } else if (i % 3 == 1) {
      std::uint64_t pages = 1000 + rng.below(2000000);
      std::uint64_t rem = pages / 50;
      out += " default anon=" + str(static_cast<long long>(pages)) + " dirty=" + str(static_cast<long long>(pages)) +
             " active=" + str(static_cast<long long>(pages * 9 / 10)) + " N" + str(node) + "=" +
             str(static_cast<long long>(pages - rem)) + " N" + str(remote) + "=" + str(static_cast<long long>(rem)) +
             " kernelpagesize_kB=4";
    } else {
      out += " default";
      if (i % 9 == 2) out += " file=/dev/nvidia" + str(i % 8);
    }
    out += "\n";
    a += 0x1000 * (1 + rng.below(1 << 16));
  }
  out += "7ffd4e9f0000 default stack anon=33 dirty=33 N" + str(node) + "=33 kernelpagesize_kB=4\n";
  return out;
}

void write_procs(Tree& tr, const Topo& t, const Procs& P, Rng& rng) {
  for (const auto& p : P.list) {
    const std::string d = "proc/" + str(p.pid);
    tr.file(d + "/environ", environ_text(p));
    tr.file(d + "/status", status_text(p, t));
    for (const auto& k : p.tasks) tr.file(d + "/task/" + str(k.tid) + "/stat", task_stat(p, k));
  }
  tr.link("proc/self", str(P.self_pid));
  tr.link("proc/thread-self", str(P.self_pid) + "/task/" + str(P.self_pid));
  tr.link("proc/mounts", "self/mounts");
  const std::string self = "proc/" + str(P.self_pid);
  tr.file(self + "/mounts",
          "/dev/nvme0n1p2 / ext4 rw,relatime 0 0\n"
          "tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0\n"
          "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
          "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n");
  tr.file(self + "/smaps",
          "55f1a1e00000-55f1a1e2c000 r--p 00000000 103:02 1234                       /usr/local/bin/perfgap\n"
          "Size:                176 kB\nKernelPageSize:        4 kB\nMMUPageSize:           4 kB\nRss:                 176 kB\n"
          "Pss:                 176 kB\nShared_Clean:          0 kB\nShared_Dirty:          0 kB\nPrivate_Clean:       176 kB\n"
          "Private_Dirty:         0 kB\nReferenced:          176 kB\nAnonymous:             0 kB\nLazyFree:              0 kB\n"
          "AnonHugePages:         0 kB\nShmemPmdMapped:        0 kB\nFilePmdMapped:         0 kB\nShared_Hugetlb:        0 kB\n"
          "Private_Hugetlb:       0 kB\nSwap:                  0 kB\nSwapPss:               0 kB\nLocked:                0 kB\n"
          "THPeligible:           0\nVmFlags: rd mr mw me dw sd\n"
          "7ffd4e9f0000-7ffd4ea11000 rw-p 00000000 00:00 0                          [stack]\n"
          "Size:                132 kB\nKernelPageSize:        4 kB\nMMUPageSize:           4 kB\nRss:                  16 kB\n"
          "VmFlags: rd wr mr mw me gd ac\n");
  tr.file("proc/1/cgroup", "0::/init.scope\n");
  tr.file("proc/1/maps",
          "55d0c0a00000-55d0c0a2f000 r--p 00000000 103:02 2345                       /usr/lib/systemd/systemd\n"
          "55d0c0a2f000-55d0c0b4a000 r-xp 0002f000 103:02 2345                       /usr/lib/systemd/systemd\n");
  // The launcher's maps (rank variables but no CUDA), the ranks' maps and numa_maps.
  for (const auto& p : P.list) {
    if (p.name == "torchrun")
      tr.file("proc/" + str(p.pid) + "/maps",
              "55d0c0a00000-55d0c0a2f000 r--p 00000000 103:02 2345                       /opt/conda/bin/python3.10\n"
              "55d0c0a2f000-55d0c0ce7000 r-xp 0002f000 103:02 2345                       /opt/conda/bin/python3.10\n"
              "7f1e30000000-7f1e30200000 r--p 00000000 103:02 5678                       /opt/conda/lib/libpython3.10.so.1.0\n");
  }
  for (std::size_t r = 0; r < P.rank_pids.size(); ++r) {
    int rp = P.rank_pids[r];
    const Proc* p = nullptr;
    for (const auto& q : P.list)
      if (q.pid == rp) p = &q;
    int node = t.node[0].has(p->allowed.members().front()) ? 0 : 1;
    tr.file("proc/" + str(rp) + "/maps", rank_maps(rng, static_cast<int>(r)));
    tr.file("proc/" + str(rp) + "/numa_maps", rank_numa_maps(rng, node, 300));
  }
}

// ---- the rest ----------------------------------------------------------------------------

void write_misc(Tree& tr) {
  tr.attr("proc/sys/kernel/hostname", "gpu-a17");
  tr.attr("proc/sys/kernel/osrelease", kKernel);
  tr.attr("proc/sys/kernel/ostype", "Linux");
  tr.attr("proc/sys/kernel/numa_balancing", "0");
  tr.attr("proc/sys/kernel/pid_max", "4194304");
  tr.file("proc/cmdline", std::string("BOOT_IMAGE=/vmlinuz-") + kKernel +
                              " root=UUID=3b1c0a5e-1f7d-4b8e-9d1e-0c7a9e0f1a22 ro intel_iommu=on iommu=pt "
                              "pci=realloc=off transparent_hugepage=madvise quiet\n");
  char up[64];
  std::snprintf(up, sizeof up, "%.2f %.2f\n", kUptime, kUptime * 300.0);
  tr.file("proc/uptime", up);
  tr.file("proc/version", std::string("Linux version ") + kKernel +
                              " (buildd@lcy02-amd64-026) (x86_64-linux-gnu-gcc-12 (Ubuntu 12.3.0-1ubuntu1~22.04) 12.3.0, "
                              "GNU ld (GNU Binutils for Ubuntu) 2.38) #45~22.04.1-Ubuntu SMP PREEMPT_DYNAMIC\n");
  // DMI: /sys/class/dmi/id is a link into /sys/devices/virtual/dmi/id.
  const std::string dmi = "sys/devices/virtual/dmi/id";
  tr.attr(dmi + "/sys_vendor", "Supermicro");
  tr.attr(dmi + "/product_name", "SYS-822GA-NGR3");
  tr.attr(dmi + "/product_version", "0123456789");
  tr.attr(dmi + "/board_vendor", "Supermicro");
  tr.attr(dmi + "/board_name", "X14DBG-AP");
  tr.attr(dmi + "/bios_vendor", "American Megatrends International, LLC.");
  tr.attr(dmi + "/bios_version", "1.2");
  tr.attr(dmi + "/bios_date", "03/14/2025");
  tr.attr(dmi + "/chassis_vendor", "Supermicro");
  tr.rlink("sys/class/dmi/id", dmi);
  // /dev/cpu_dma_latency holds the 4 bytes of the current request: 2000000000, no request.
  const std::int32_t qos = 2000000000;
  tr.file("dev/cpu_dma_latency", std::string_view(reinterpret_cast<const char*>(&qos), 4));
  tr.attr("etc/hostname", "gpu-a17");
  tr.file("etc/os-release", "PRETTY_NAME=\"Ubuntu 22.04.5 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  fs::path out(o.out);
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_empty(out, ec)) {
    std::fprintf(stderr, "perfgap-bench-gen: %s exists and is not empty\n", o.out.c_str());
    return 2;
  }
  fs::create_directories(out, ec);
  if (ec) {
    std::fprintf(stderr, "perfgap-bench-gen: %s: %s\n", o.out.c_str(), ec.message().c_str());
    return 1;
  }
  Rng rng{0x5eed5eed1234ULL};
  Tree tr(out);
  const Topo t = make_topo(o.cpus);
  const PciLayout pci = layout_pci(o);
  const Irqs irqs = layout_irqs(t, pci, o);
  Procs procs = make_procs(t, pci, o, rng);

  write_misc(tr);
  write_cpus(tr, t);
  tr.file("proc/cpuinfo", cpuinfo(t));
  tr.file("proc/stat", proc_stat(t, irqs.nr + 64, rng));
  tr.file("proc/interrupts", proc_interrupts(t, irqs, rng));
  write_irqs(tr, t, irqs);
  write_pci(tr, t, pci);
  write_nvidia(tr, pci, rng);
  write_procs(tr, t, procs, rng);

  std::size_t tasks = 0, training = 0;
  for (const auto& p : procs.list) tasks += p.tasks.size();
  for (int rp : procs.rank_pids)
    for (const auto& p : procs.list)
      if (p.pid == rp) training += p.tasks.size();
  std::size_t irq_rows = 0;
  for (const auto& r : irqs.rows) irq_rows += r.arch ? 0 : 1;
  std::printf("%s: %d CPUs, %zu GPUs, %zu NICs, %zu PCI functions, %zu IRQs, %zu processes (%zu ranks), "
              "%zu tasks (%zu training); %zu files, %zu links, %.1f MiB\n",
              o.out.c_str(), t.cpus, pci.gpus.size(), pci.nics.size(), pci.devs.size(), irq_rows, procs.list.size(),
              procs.rank_pids.size(), tasks, training, tr.files(), tr.links(), static_cast<double>(tr.bytes()) / (1 << 20));
  return 0;
}
