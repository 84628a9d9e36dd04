#include "parsers/procfs.hpp"

#include <algorithm>
#include <cctype>

#include "sys/text.hpp"

namespace perfgap::parsers {

using sys::split_lines;
using sys::split_ws;
using sys::to_int;
using sys::trim_ws;

std::uint64_t CpuTimes::total() const {
  std::uint64_t t = 0;
  for (std::size_t i = 0; i < fields.size() && i < 8; ++i) t += fields[i];
  return t;
}

Parsed<ProcStat> parse_proc_stat(std::string_view text) {
  ProcStat out;
  int lineno = 0;
  for (auto line : split_lines(text)) {
    ++lineno;
    if (!sys::starts_with(line, "cpu")) continue;
    auto f = split_ws(line);
    if (f.empty()) continue;
    CpuTimes t;
    if (f[0] != "cpu") {
      auto digits = f[0].substr(3);
      auto n = digits.empty() || digits[0] < '0' || digits[0] > '9' ? std::nullopt : to_int<int>(digits);
      if (!n || *n < 0) return parse_fail("bad cpu label '" + std::string(f[0]) + "'", lineno);
      t.cpu = *n;
    }
    if (f.size() < 5) return parse_fail("cpu line with " + std::to_string(f.size() - 1) + " columns", lineno);
    for (std::size_t i = 1; i < f.size(); ++i) {
      auto v = to_int<std::uint64_t>(f[i]);
      if (!v) return parse_fail("bad counter '" + std::string(f[i]) + "'", lineno);
      t.fields.push_back(*v);
    }
    if (t.cpu < 0) out.all = std::move(t);
    else out.cpus.push_back(std::move(t));
  }
  if (out.cpus.empty() && !out.all) return parse_fail("no cpu lines");
  return out;
}

namespace {

bool has_word(std::string_view list, std::string_view word) {
  for (auto w : split_ws(list))
    if (w == word) return true;
  return false;
}

bool is_x86_vendor(std::string_view v) {
  for (std::string_view known : {"GenuineIntel", "AuthenticAMD", "HygonGenuine", "CentaurHauls", "Shanghai",
                                 "GenuineTMx86", "TransmetaCPU", "CyrixInstead", "NexGenDriven", "RiseRiseRise",
                                 "SiS SiS SiS", "UMC UMC UMC", "Geode by NSC", "Vortex86 SoC", "GenuineIotel"})
    if (v == known) return true;
  return false;
}

}  // namespace

bool known_arch(std::string_view arch) {
  for (std::string_view a : {"x86_64", "i686", "i386", "aarch64", "arm", "s390x", "s390", "ppc64le", "ppc64", "ppc", "powerpc",
                             "riscv64", "riscv32", "loongarch64", "sparc64", "sparc", "mips64", "mips", "unknown"})
    if (arch == a) return true;
  // uname -m spellings of 32-bit arm and x86 ("armv7l", "armv8l", "i586").
  if (arch.size() > 3 && arch.substr(0, 3) == "arm") return true;
  if (arch.size() == 4 && arch[0] == 'i' && arch.substr(2) == "86" && arch[1] >= '3' && arch[1] <= '6') return true;
  return false;
}

Parsed<CpuInfo> parse_cpuinfo(std::string_view text) {
  CpuInfo info;
  bool seen_any = false, seen_flags = false;
  // What each architecture's own keys said; decided together at the end.
  std::string vendor, x86_flags, s390_features, arm_features, arm_arch, power_cpu, isa, loongarch_family, sparc_type, mips_model, cpu_key;
  for (auto line : split_lines(text)) {
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto key = trim_ws(line.substr(0, colon));
    auto value = trim_ws(line.substr(colon + 1));
    seen_any = true;
    if (key == "processor") {
      ++info.processors;
    } else if (key == "flags" && !seen_flags) {
      seen_flags = true;
      x86_flags = std::string(value);
    } else if (key == "vendor_id" && vendor.empty()) {
      vendor = std::string(value);
    } else if (key == "features" && s390_features.empty()) {
      s390_features = std::string(value);
    } else if (key == "model name" && info.model_name.empty()) {
      info.model_name = std::string(value);
    } else if (key == "Model Name" && info.model_name.empty()) {
      info.model_name = std::string(value);
    } else if (key == "CPU implementer" && !info.implementer) {
      info.implementer = static_cast<unsigned>(std::strtoul(std::string(value).c_str(), nullptr, 0));
    } else if (key == "CPU part" && !info.part) {
      info.part = static_cast<unsigned>(std::strtoul(std::string(value).c_str(), nullptr, 0));
    } else if (key == "CPU architecture" && arm_arch.empty()) {
      arm_arch = std::string(value);
    } else if (key == "Features" && arm_features.empty()) {
      arm_features = std::string(value);
    } else if (key == "cpu" && cpu_key.empty()) {
      cpu_key = std::string(value);
    } else if (key == "platform" && info.power_platform.empty()) {
      info.power_platform = std::string(value);
    } else if (key == "model" && info.power_model.empty()) {
      info.power_model = std::string(value);
    } else if (key == "isa" && isa.empty()) {
      isa = std::string(value);
    } else if (key == "CPU Family" && loongarch_family.empty()) {
      loongarch_family = std::string(value);
    } else if (key == "type" && sparc_type.empty()) {
      sparc_type = std::string(value);
    } else if (key == "cpu model" && mips_model.empty()) {
      mips_model = std::string(value);
    }
  }
  if (!seen_any) return parse_fail("no 'key : value' lines");

  auto lower_isa = sys::lower(isa);
  if (vendor == "IBM/S390") {
    info.arch_hint = has_word(s390_features, "zarch") ? "s390x" : "s390";
  } else if (is_x86_vendor(vendor) || (has_word(x86_flags, "fpu") && has_word(x86_flags, "tsc"))) {
    info.arch_hint = has_word(x86_flags, "lm") ? "x86_64" : x86_flags.empty() ? "" : "i686";
    info.hypervisor_flag = has_word(x86_flags, "hypervisor");
  } else if (info.implementer || !arm_features.empty() || !arm_arch.empty()) {
    // arm64 kernels print their own feature names (fp, asimd); 32-bit ARM kernels print
    // half/thumb/vfp, and so does an arm64 kernel's compat view only in a 32-bit process.
    bool arm64_words = has_word(arm_features, "asimd") || has_word(arm_features, "fp") || has_word(arm_features, "sve");
    bool arm32_words = has_word(arm_features, "thumb") || has_word(arm_features, "half") || has_word(arm_features, "swp") ||
                       has_word(arm_features, "vfp") || has_word(arm_features, "fastmult");
    auto arch_num = to_int<int>(arm_arch);
    if (arm64_words && !arm32_words) info.arch_hint = "aarch64";
    else if (arm32_words) info.arch_hint = "arm";
    else if (arm_arch == "AArch64" || (arch_num && *arch_num >= 8)) info.arch_hint = "aarch64";
    else if (arch_num && *arch_num <= 7) info.arch_hint = "arm";
    else if (info.implementer) info.arch_hint = "";  // an implementer alone says ARM, not which word size
  } else if (sys::starts_with(lower_isa, "rv64")) {
    info.arch_hint = "riscv64";
  } else if (sys::starts_with(lower_isa, "rv32")) {
    info.arch_hint = "riscv32";
  } else if (sys::lower(loongarch_family).find("loongson-64bit") != std::string::npos ||
             sys::lower(loongarch_family).find("loongarch") != std::string::npos) {
    info.arch_hint = "loongarch64";
  } else if (!mips_model.empty() || lower_isa.find("mips") != std::string::npos) {
    info.arch_hint = lower_isa.find("mips64") != std::string::npos ? "mips64" : "mips";
  } else if (sys::starts_with(sparc_type, "sun4") || sys::lower(cpu_key).find("sparc") != std::string::npos) {
    info.arch_hint = "sparc64";
    if (info.model_name.empty()) info.model_name = cpu_key;
  } else if (!info.power_platform.empty() || sys::starts_with(cpu_key, "POWER") || sys::starts_with(cpu_key, "PPC") ||
             cpu_key.find("altivec") != std::string::npos) {
    info.arch_hint = "powerpc";
    if (info.model_name.empty()) info.model_name = cpu_key;
  }
  if (info.model_name.empty() && info.implementer && info.part) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "arm implementer 0x%02x part 0x%03x", *info.implementer, *info.part);
    info.model_name = buf;
    if (*info.implementer == 0x41 && *info.part == 0xd4f) info.model_name = "Neoverse-V2";
  }
  return info;
}

EnvList parse_environ(std::string_view text) {
  EnvList out;
  for (auto entry : sys::split(text, '\0')) {
    if (entry.empty()) continue;
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) out.emplace_back(std::string(entry), "");
    else out.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return out;
}

std::map<std::string, std::string, std::less<>> parse_key_values(std::string_view text) {
  std::map<std::string, std::string, std::less<>> out;
  for (auto line : split_lines(text)) {
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    out.emplace(std::string(trim_ws(line.substr(0, colon))), std::string(trim_ws(line.substr(colon + 1))));
  }
  return out;
}

KernelCmdline parse_cmdline(std::string_view text) {
  KernelCmdline out;
  std::string cur;
  bool quoted = false, any = false;
  for (char c : text) {
    if (c == '"') { quoted = !quoted; any = true; continue; }
    if (!quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\0')) {
      if (any) out.words.push_back(cur);
      cur.clear();
      any = false;
      continue;
    }
    cur.push_back(c);
    any = true;
  }
  if (any) out.words.push_back(cur);
  return out;
}

namespace {
// The kernel compares parameter names with '-' and '_' as the same character (parameq).
bool name_matches(std::string_view word, std::string_view name) {
  if (word.size() < name.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char a = word[i] == '-' ? '_' : word[i], b = name[i] == '-' ? '_' : name[i];
    if (a != b) return false;
  }
  return true;
}
}  // namespace

std::optional<std::string> KernelCmdline::value(std::string_view name) const {
  std::optional<std::string> v;
  for (const auto& w : words)
    if (w.size() > name.size() && name_matches(w, name) && w[name.size()] == '=') v = w.substr(name.size() + 1);
  return v;
}

bool KernelCmdline::has(std::string_view word) const {
  for (const auto& w : words)
    if ((w.size() == word.size() && name_matches(w, word)) ||
        (w.size() > word.size() && name_matches(w, word) && w[word.size()] == '='))
      return true;
  return false;
}

Parsed<TaskStat> parse_task_stat(std::string_view text) {
  // "pid (comm) S ppid ..." where comm may hold spaces and parentheses: it ends at the last ')'.
  auto open = text.find('(');
  auto close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return parse_fail("no '(comm)' field");
  TaskStat t;
  auto pid = to_int<int>(text.substr(0, open));
  if (!pid) return parse_fail("bad pid field");
  t.pid = *pid;
  t.comm = std::string(text.substr(open + 1, close - open - 1));
  auto rest = split_ws(trim_ws(text.substr(close + 1)));
  // rest[0] is field 3 (state); field N is rest[N-3].
  auto field = [&](int n) -> std::optional<std::string_view> {
    std::size_t i = static_cast<std::size_t>(n - 3);
    if (i >= rest.size()) return std::nullopt;
    return rest[i];
  };
  auto st = field(3);
  if (!st || st->size() != 1) return parse_fail("bad state field");
  t.state = (*st)[0];
  auto ut = field(14), stt = field(15), start = field(22);
  if (!ut || !stt || !start) return parse_fail("too few fields");
  auto u = to_int<std::uint64_t>(*ut), s = to_int<std::uint64_t>(*stt), b = to_int<std::uint64_t>(*start);
  if (!u || !s || !b) return parse_fail("bad time fields");
  t.utime = *u;
  t.stime = *s;
  t.starttime = *b;
  if (auto p = field(39)) {
    if (auto v = to_int<int>(*p)) t.processor = *v;
    else return parse_fail("bad processor field");
  }
  return t;
}

Parsed<NumaMaps> parse_numa_maps(std::string_view text) {
  NumaMaps out;
  int lineno = 0;
  for (auto line : split_lines(text)) {
    ++lineno;
    if (trim_ws(line).empty()) continue;
    auto f = split_ws(line);
    if (f.size() < 2) return parse_fail("cut short (no memory policy)", lineno);
    if (f[0].find_first_not_of("0123456789abcdef") != std::string_view::npos)
      return parse_fail("bad address '" + std::string(f[0]) + "'", lineno);
    std::vector<std::pair<int, std::uint64_t>> pages;
    std::optional<std::uint64_t> page_kb;
    // The kernel prints the counts (anon=, dirty=, ..., N<node>=, kernelpagesize_kB=) only for
    // a mapping with pages, and always all of them: a count without the rest is a cut line.
    bool counts = false;
    for (std::size_t i = 2; i < f.size(); ++i) {
      auto w = f[i];
      for (std::string_view key : {"anon=", "dirty=", "mapped=", "mapmax=", "swapcache=", "active=", "writeback="})
        if (sys::starts_with(w, key)) counts = true;
      if (w.size() > 1 && w[0] == 'N' && w[1] >= '0' && w[1] <= '9') {
        auto eq = w.find('=');
        if (eq == std::string_view::npos) return parse_fail("cut short at '" + std::string(w) + "'", lineno);
        auto node = to_int<int>(w.substr(1, eq - 1));
        auto n = to_int<std::uint64_t>(w.substr(eq + 1));
        if (!node || !n) return parse_fail("bad node count '" + std::string(w) + "'", lineno);
        pages.emplace_back(*node, *n);
      } else if (sys::starts_with(w, "kernelpagesize_kB=")) {
        page_kb = to_int<std::uint64_t>(w.substr(18));
        if (!page_kb || *page_kb == 0) return parse_fail("bad '" + std::string(w) + "'", lineno);
      }
    }
    if ((counts || !pages.empty()) && !page_kb)
      return parse_fail("cut short (page counts without kernelpagesize_kB)", lineno);
    if (counts && pages.empty()) return parse_fail("cut short (page counts without N<node>= entries)", lineno);
    for (auto [node, n] : pages) out.bytes_per_node[node] += n * *page_kb * 1024;
    ++out.mappings;
  }
  return out;
}

Parsed<Interrupts> parse_interrupts(std::string_view text) {
  Interrupts out;
  auto lines = split_lines(text);
  if (lines.empty()) return parse_fail("empty");
  for (auto w : split_ws(lines[0])) {
    if (!sys::starts_with(w, "CPU")) return parse_fail("header is not a CPU list", 1);
    auto digits = w.substr(3);
    auto n = digits.empty() || digits[0] < '0' || digits[0] > '9' ? std::nullopt : to_int<int>(digits);
    if (!n) return parse_fail("bad CPU header '" + std::string(w) + "'", 1);
    out.cpus.push_back(*n);
  }
  if (out.cpus.empty()) return parse_fail("no CPU columns", 1);
  for (std::size_t li = 1; li < lines.size(); ++li) {
    auto line = lines[li];
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    InterruptRow row;
    row.irq = std::string(trim_ws(line.substr(0, colon)));
    auto f = split_ws(line.substr(colon + 1));
    std::size_t i = 0;
    for (; i < f.size() && row.counts.size() < out.cpus.size(); ++i) {
      auto v = to_int<std::uint64_t>(f[i]);
      if (!v) break;
      row.counts.push_back(*v);
    }
    // Rows such as ERR/MIS carry one number only; pad them so columns stay aligned.
    row.counts.resize(out.cpus.size(), 0);
    std::string desc;
    for (; i < f.size(); ++i) {
      if (!desc.empty()) desc.push_back(' ');
      desc.append(f[i]);
    }
    row.description = std::move(desc);
    out.rows.push_back(std::move(row));
  }
  return out;
}

tl::expected<Limit, std::string> parse_memlock_limit(std::string_view text) {
  for (auto line : sys::split_lines(text)) {
    if (!sys::starts_with(line, "Max locked memory")) continue;
    auto fields = sys::split_ws(line.substr(17));
    if (fields.size() < 2) return tl::unexpected(std::string("'Max locked memory' row has no soft and hard values"));
    Limit l;
    l.text = std::string(sys::trim_ws(line.substr(17)));
    auto value = [](std::string_view v, std::optional<std::uint64_t>& out) {
      if (v == "unlimited") return true;
      auto n = sys::to_int<std::uint64_t>(v);
      if (!n) return false;
      // Within 1 GiB of 2^64 caps nothing: some launchers write "infinity" as -1 rounded
      // down to a page or MiB (18446744073708503040 = 2^64 - 1 MiB).
      if (*n >= ~std::uint64_t(0) - (std::uint64_t(1) << 30)) return true;
      out = *n;
      return true;
    };
    if (!value(fields[0], l.soft) || !value(fields[1], l.hard))
      return tl::unexpected("'Max locked memory' values not understood: " + l.text);
    return l;
  }
  return tl::unexpected(std::string("no 'Max locked memory' row"));
}

tl::expected<long, std::string> parse_smaps_page_size_kb(std::string_view text) {
  for (auto line : split_lines(text)) {
    if (!sys::starts_with(line, "KernelPageSize:")) continue;
    auto fields = split_ws(line);
    if (fields.size() >= 3 && fields[2] == "kB")
      if (auto kb = to_int<long>(fields[1]); kb && *kb > 0) return *kb;
    return tl::unexpected("unreadable KernelPageSize line '" + std::string(trim_ws(line)) + "'");
  }
  return tl::unexpected(std::string("no KernelPageSize line"));
}

NvidiaDriverVersion parse_nvidia_driver_version(std::string_view text) {
  NvidiaDriverVersion out;
  auto first = text.substr(0, text.find('\n'));
  out.first_line = std::string(trim_ws(first));
  out.open_module = first.find("Open Kernel Module") != std::string_view::npos;
  for (auto line : split_lines(text)) {
    if (!sys::starts_with(line, "NVRM version:")) continue;
    for (auto w : split_ws(line)) {
      if (w.size() >= 5 && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string_view::npos &&
          w.find_first_not_of("0123456789.") == std::string_view::npos) {
        out.version = std::string(w);
        return out;
      }
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::uint32_t>> parse_proc_bus_pci_vendors(std::string_view text) {
  std::vector<std::pair<std::string, std::uint32_t>> out;
  for (auto line : sys::split(text, '\n')) {
    auto fields = split_ws(line);
    if (fields.size() < 2 || fields[1].size() != 8) continue;
    auto id = to_int<std::uint32_t>(fields[1], 16);
    if (id) out.emplace_back(std::string(fields[0]), *id >> 16);
  }
  return out;
}

SysInfo parse_sysinfo(std::string_view text) {
  SysInfo out;
  for (auto line : sys::split(text, '\n')) {
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto key = trim_ws(line.substr(0, colon));
    auto value = std::string(trim_ws(line.substr(colon + 1)));
    if (out.control_program.empty() && key.size() > 4 && key.substr(0, 2) == "VM" && key.find("Control Program") != std::string_view::npos)
      out.control_program = value;
    if (out.lpar_name.empty() && key == "LPAR Name") out.lpar_name = value;
  }
  return out;
}

bool maps_mention(std::string_view maps_text, std::initializer_list<std::string_view> needles) {
  for (auto line : split_lines(maps_text)) {
    auto slash = line.find('/');
    if (slash == std::string_view::npos) continue;
    auto path = line.substr(slash);
    auto base = path.substr(path.rfind('/') + 1);
    for (auto n : needles)
      if (base.find(n) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace perfgap::parsers
