#include "cli/analyze_cmd.hpp"

#include <fmt/format.h>
#include <signal.h>  // NOLINT(modernize-deprecated-headers): struct sigaction is POSIX, not in <csignal>
#include <sys/stat.h>

#include <algorithm>
#include <new>
#include <thread>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <optional>
#include <utility>

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include "analyzers/analyzers.hpp"
#include "analyzers/profile_job.hpp"
#include "compare/compare.hpp"
#include "fleet/inputs.hpp"
#include "parsers/gunzip.hpp"
#include "parsers/perf_data.hpp"
#include "parsers/profile.hpp"
#include "sys/executable.hpp"
#include "sys/process.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/gap_cmd.hpp"
#include "cli/output.hpp"
#include "sys/named_file.hpp"
#include "sys/sysroot.hpp"
#include "parsers/tool_text.hpp"
#include "report/render.hpp"
#include "sys/text.hpp"

namespace perfgap::cli {
namespace {

std::string kinds_list() {
  std::string s;
  for (const auto& k : analyzers::kinds()) s += (s.empty() ? "" : ", ") + std::string(k.kind);
  return s;
}

bool ends_with(const std::string& s, const char* suffix) {
  std::string_view x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

// While nsys export runs, SIGINT, SIGTERM and SIGHUP only set this flag: nsys's process group
// is stopped, the temporary directory removed, and the signal then raised again (exit 128+N,
// nothing left behind).
volatile std::sig_atomic_t g_export_signal = 0;
extern "C" void on_export_signal(int sig) { g_export_signal = sig; }

class ExportSignals {
 public:
  ExportSignals() {
    g_export_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_export_signal;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &sa, &saved_[i]);
  }
  ~ExportSignals() {
    for (std::size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &saved_[i], nullptr);
  }
  ExportSignals(const ExportSignals&) = delete;
  ExportSignals& operator=(const ExportSignals&) = delete;
  // After the cleanup: the signal that came takes its normal course.
  static void raise_pending() {
    if (int sig = g_export_signal) {
      ::signal(sig, SIG_DFL);
      ::raise(sig);
    }
  }

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction saved_[3] = {};
};

// A .nsys-rep through `nsys export --type sqlite` into a private temp dir; the export's bytes or why not.
tl::expected<std::string, std::string> export_nsys_report(const std::string& file) {
  std::string nsys = sys::find_executable("nsys");
  if (nsys.empty()) {
    std::string_view stem = file;
    for (std::string_view ext : {std::string_view(".nsys-rep"), std::string_view(".qdrep")})
      if (stem.ends_with(ext)) stem.remove_suffix(ext.size());
    return tl::unexpected(fmt::format("an Nsight Systems report (.nsys-rep), and nsys is not on PATH to export it: run "
                                      "nsys export --type sqlite --output {}.sqlite {} and pass the .sqlite file",
                                      stem, file));
  }
  if (file == "-") return tl::unexpected(std::string("an Nsight Systems report on stdin: nsys export needs a file; export it and pass the .sqlite file"));
  // The report as an absolute path after `--`: a name that looks like an option stays a file name.
  std::error_code abs_ec;
  std::string report = std::filesystem::absolute(file, abs_ec).string();
  if (abs_ec) return tl::unexpected(fmt::format("cannot make an absolute path of it: {}", abs_ec.message()));
  std::error_code tmp_ec;
  auto tmp_dir = std::filesystem::temp_directory_path(tmp_ec);
  if (tmp_ec) tmp_dir = "/tmp";
  std::string tmpl = (tmp_dir / "perfgap-nsys.XXXXXX").string();
  ExportSignals signals;  // from before the directory exists until it is gone
  if (!::mkdtemp(tmpl.data())) return tl::unexpected(fmt::format("cannot make a temporary directory for nsys export: {}", std::strerror(errno)));
  std::string out = tmpl + "/export.sqlite";
  sys::CommandOptions o;
  o.timeout = std::chrono::minutes(10);
  o.term_grace = std::chrono::seconds(2);
  o.stop = &g_export_signal;
  tl::expected<std::string, std::string> bytes;
  auto r = sys::run_command({nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", out, "--", report}, o);
  if (!r.started) bytes = tl::unexpected("nsys export could not run: " + r.error);
  else if (r.stopped || g_export_signal) bytes = tl::unexpected(fmt::format("interrupted by signal {}", static_cast<int>(g_export_signal)));
  else if (r.timed_out) bytes = tl::unexpected(std::string("nsys export did not finish within 10 minutes"));
  else if (r.status != 0) {
    std::string err = r.err.substr(0, r.err.find('\n'));
    bytes = tl::unexpected(fmt::format("nsys export failed (exit {}){}", r.status, err.empty() ? "" : ": " + err));
  } else {
    bytes = sys::read_named_file(out, sys::kMaxInputBytes);
    if (!bytes) bytes = tl::unexpected("the export of nsys: " + bytes.error());
  }
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  ExportSignals::raise_pending();
  return bytes;
}

// A Kineto trace, plain or gzip, parsed as it is read: the file (or pipe) in blocks, a .gz
// inflated a block at a time, so neither the file nor its JSON is ever held whole.
tl::expected<parsers::Profile, std::string> read_kineto_file(const std::string& file) {
  auto reader = sys::BlockReader::open(file, sys::kMaxInputBytes);
  if (!reader) return tl::unexpected(reader.error());
  auto first = reader->next();  // a whole block (or all of a shorter input): enough to tell gzip and SQLite
  if (!first) return tl::unexpected(first.error());
  if (first->empty()) return tl::unexpected(std::string("empty"));
  bool pending = true;  // `first` not handed out yet
  std::string read_error;  // the file's own (a read error, the size limit): said as such, not as gzip's
  parsers::ByteSource raw = [&]() -> tl::expected<std::string_view, std::string> {
    if (std::exchange(pending, false)) return *first;
    auto b = reader->next();
    if (!b) read_error = b.error();
    return b;
  };
  std::optional<parsers::GunzipSource> gz;
  parsers::ByteSource text = raw;
  if (first->size() >= 2 && static_cast<unsigned char>((*first)[0]) == 0x1f && static_cast<unsigned char>((*first)[1]) == 0x8b) {
    gz.emplace(raw, sys::kMaxInputBytes);
    text = [&]() -> tl::expected<std::string_view, std::string> {
      auto b = gz->next();
      if (!b) return tl::unexpected(read_error.empty() ? "gzip: " + b.error() : read_error);
      return b;
    };
  }
  // The first decompressed block starts like the JSON (or an SQLite database given as kineto).
  bool looked = false;
  parsers::ByteSource checked = [&]() -> tl::expected<std::string_view, std::string> {
    auto b = text();
    if (b && !std::exchange(looked, true) && parsers::looks_sqlite(*b))
      return tl::unexpected(std::string("an SQLite database, not a Kineto JSON trace (an nsys export? use analyze nsys)"));
    return b;
  };
  auto p = parsers::read_kineto(checked);
  if (!p) return tl::unexpected(p.error().describe());
  return std::move(*p);
}

// One profile input read into the model, or why it is unusable.
tl::expected<parsers::Profile, std::string> read_profile(const std::string& kind, const std::string& file) {
  if (kind != "nsys") return read_kineto_file(file);
  auto bytes = sys::read_named_file(file, sys::kMaxInputBytes);
  if (!bytes) return tl::unexpected(bytes.error());
  if (bytes->empty()) return tl::unexpected(std::string("empty"));
  if (parsers::looks_nsys_report(*bytes) || (!parsers::looks_sqlite(*bytes) && (ends_with(file, ".nsys-rep") || ends_with(file, ".qdrep")))) {
    bytes = export_nsys_report(file);
    if (!bytes) return tl::unexpected(bytes.error());
  }
  auto p = parsers::read_nsys_sqlite(*bytes);
  if (!p) return tl::unexpected(p.error().describe());
  return std::move(*p);
}

// Kernel symbols for perf.data: --kallsyms, else the live /proc/kallsyms when it is of the same
// kernel release as the recording and readable with addresses; else none and why.
struct KernelNames {
  std::optional<parsers::Kallsyms> given;   // --kallsyms
  std::optional<parsers::Kallsyms> live;    // read once, on first need
  bool live_read = false;
  std::string live_why;
  std::string running_release;
};

const parsers::Kallsyms* kernel_names_for(KernelNames& kn, const std::string& opt, const parsers::PerfData& d, std::string& source) {
  if (kn.given) {
    source = "--kallsyms " + opt;
    if (kn.given->zero_addresses) source += " (every address is 0: captured without root; capture it as root)";
    return &*kn.given;
  }
  auto root = sys::Sysroot::live();
  if (!kn.live_read) {
    kn.live_read = true;
    auto rel = root.read_value("/proc/sys/kernel/osrelease");
    if (rel) kn.running_release = *rel;
    auto text = root.read("/proc/kallsyms", 256u << 20);
    if (!text) kn.live_why = "/proc/kallsyms: " + text.error().reason();
    else if (auto k = parsers::parse_kallsyms(*text); !k) kn.live_why = "/proc/kallsyms: " + k.error().describe();
    else if (k->zero_addresses) kn.live_why = "/proc/kallsyms shows every address as 0 (not root, or kernel.kptr_restrict)";
    else kn.live = std::move(*k);
  }
  if (d.osrelease.empty()) {
    source = "no kernel symbols: the recording names no kernel release, so this node's /proc/kallsyms cannot be matched; pass --kallsyms FILE captured on the node";
    return nullptr;
  }
  if (d.osrelease != kn.running_release) {
    source = fmt::format("no kernel symbols: recorded on kernel {}, this node runs {}; pass --kallsyms FILE captured on the node", d.osrelease,
                         kn.running_release.empty() ? "an unknown one" : kn.running_release);
    return nullptr;
  }
  if (!kn.live) {
    source = fmt::format("no kernel symbols: {}; pass --kallsyms FILE captured on the node", kn.live_why);
    return nullptr;
  }
  source = fmt::format("this node's /proc/kallsyms (same kernel release {})", d.osrelease);
  return &*kn.live;
}

// A perf input: perf.data (by its magic, file or pipe mode) or perf's text, told apart by the
// first block, so a file, a FIFO and standard input are read once. Text streams into the
// parser; perf.data's blocks are kept whole (the reader takes all the bytes). The blocks are
// stream_named_file's, whole lines and so exactly the input's bytes, except that a "line"
// (bytes without a 0x0a) longer than a block is cut: a perf.data that has one is refused, not
// read wrong (the block then has one byte more than a block holds).
tl::expected<parsers::PerfProfile, std::string> read_perf_input(const std::string& file, const std::string& kallsyms_opt, KernelNames& kn) {
  auto bytes = std::make_optional<std::string>();
  parsers::PerfParser text;
  bool first = true, data = false, binary = false, cut = false, any = false;
  auto read = sys::stream_named_file(file, sys::kMaxInputBytes, [&](std::string_view block) {
    if (first) {
      first = false;
      data = parsers::looks_perf_data(block);
      if (!data && parsers::tooltext::looks_binary(block)) {
        binary = true;
        return false;
      }
    }
    if (data) {
      if (bytes->empty()) {
        // One allocation for a regular file (no regrowth copies of a large recording).
        std::error_code ec;
        auto size = file == "-" ? 0 : std::filesystem::file_size(file, ec);
        if (!ec && size > 0) bytes->reserve(std::min<std::uintmax_t>(size, sys::kMaxInputBytes));
      }
      if (block.size() > sys::kStreamBlockBytes) {
        cut = true;
        return false;
      }
      bytes->append(block);
      return true;
    }
    if (!any) any = block.find_first_not_of(" \t\r\n") != std::string_view::npos;
    text.feed(block);
    return true;
  });
  if (!read) return tl::unexpected(read.error());
  if (binary) return tl::unexpected(std::string("binary data, neither perf text nor perf.data (no PERFILE2 magic)"));
  if (cut) return tl::unexpected(fmt::format("perf.data with more than {} bytes in a row without a 0x0a byte, which the block reader cannot pass on whole", sys::kStreamBlockBytes));
  if (!data) {
    if (!any) return tl::unexpected(std::string("empty"));
    auto p = text.finish();
    if (!p) return tl::unexpected(p.error().describe());
    return std::move(*p);
  }
  auto d = parsers::parse_perf_data(*bytes);
  if (!d) return tl::unexpected("perf.data: " + d.error().describe());
  std::string source;
  const parsers::Kallsyms* ks = kernel_names_for(kn, kallsyms_opt, *d, source);
  return parsers::perf_data_profile(*d, ks, source);
}

}  // namespace

tl::expected<void, std::string> stream_text_input(const std::string& path, std::size_t max_bytes,
                                                  const std::function<void(std::string_view)>& feed) {
  bool first = true, any = false, binary = false;
  auto read = sys::stream_named_file(path, max_bytes, [&](std::string_view block) {
    // The first block is the first MiB (or all of a smaller input): what looks_binary reads.
    if (first && parsers::tooltext::looks_binary(block)) {
      binary = true;
      return false;
    }
    first = false;
    if (!any) any = block.find_first_not_of(" \t\r\n") != std::string_view::npos;
    feed(block);
    return true;
  });
  if (!read) return read;
  if (binary) return tl::unexpected(std::string("binary data, not text"));
  if (!any) return tl::unexpected(std::string("empty"));
  return {};
}

// A job's rank files read together by analyze nsys/kineto (docs/ANALYZE.md, cross-rank).
constexpr std::size_t kMaxProfileRanks = 1024;

// A check report is a few hundred KiB; a fleet-sized one is not a node report.
constexpr std::size_t kMaxNodeReportBytes = 64u << 20;

void add_analyze_command(CLI::App& app, AnalyzeArgs& a) {
  auto* cmd = app.add_subcommand("analyze", "Turn profiler or benchmark outputs into findings (KIND: perf, turbostat, numastat, nccl-tests, nccl-log, nccl-inspector, nccl-ras, steps, nsys, kineto, nvidia-smi)");
  cmd->add_option("kind", a.kind, "perf | turbostat | numastat | nccl-tests | nccl-log | nccl-inspector | nccl-ras | steps | nsys | kineto | nvidia-smi")->required();
  cmd->add_option("files", a.files, "Input files (several: each is read; an unusable one becomes an error finding; nccl-inspector: also directories of the plugin's .log files)")->required();
  using report::Format;
  add_format_option(cmd, a.format, {Format::text, Format::json, Format::html, Format::junit, Format::prometheus},
                    "html: one self-contained page with charts; junit: each finding a testcase; prometheus: node_exporter textfile, busbw and the other metrics for graphs");
  cmd->add_option("--output", a.output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", a.verbose, "Show all evidence, metrics and passing details");
  cmd->add_option("--rated-mhz", a.rated_mhz, "turbostat: the CPU's rated maximum (turbo) MHz for the busy cores")->check(CLI::PositiveNumber);
  cmd->add_option("--reference", a.reference, "nccl-tests: a reference run's output; steps: a reference step log or milliseconds per iteration (830, 830ms) as gap's; nsys, kineto: a reference profile")
      ->type_name("FILE|MS");
  cmd->add_option("--iteration-range", a.iteration_range, "nsys, kineto: the NVTX/annotation range that is one iteration (default ProfilerStep#N, step-like ranges, else the timeline's period)");
  cmd->add_option("--sizes", a.sizes, "nccl-tests: sizes to judge (1M,64M,1G; K/M/G are powers of 1024); default every size >= 1 MiB");
  cmd->add_option("--nics", a.nics, "nccl-tests without --reference, nccl-inspector: RDMA NICs per node the job uses (with --link-gbps: the busbw basis across nodes)")->check(CLI::Range(1, 1024));
  cmd->add_option("--link-gbps", a.link_gbps, "nccl-tests without --reference, nccl-inspector: each NIC's link rate in Gb/s (400 for NDR)")->check(CLI::Range(1.0, 100000.0));
  cmd->add_option("--node-report", a.node_report, "nccl-tests without --reference, nccl-inspector: a perfgap check report (--format json) of a node of the run: its ACTIVE RDMA ports are the busbw basis");
  cmd->add_option("--expect-topo-file", a.expect_topo_file, "nccl-log: the NCCL topology file the job should load");
  cmd->add_option("--expect-net", a.expect_net, "nccl-log: IB or Socket (IB is assumed when the log shows RDMA devices)")
      ->check(one_of({"IB", "Socket"}));
  cmd->add_flag("--expect-gdr", a.expect_gdr, "nccl-log: inter-node channels should use GPUDirect RDMA");
  // Kept for scripts written before --reference took milliseconds.
  cmd->add_option("--reference-ms", a.reference_ms, "steps: deprecated spelling of --reference MS")->type_name("MS")->check(CLI::PositiveNumber);
  cmd->add_option("--kallsyms", a.kallsyms, "perf: kernel symbols (a copy of /proc/kallsyms taken as root on the recording node) to name perf.data's kernel addresses");
  cmd->add_option("--warmup", a.warmup, "steps: records to drop at the start (default 10% of the run, at least 1)")->check(CLI::NonNegativeNumber);
}

int run_analyze(const AnalyzeArgs& a) {
  const auto* kind = analyzers::kind_info(a.kind);
  if (!kind) throw UsageError(fmt::format("unknown analyze KIND '{}' (one of: {})", a.kind, kinds_list()));
  const std::string k = a.kind;
  auto only_for = [&](bool given, const char* opt, std::initializer_list<const char*> ok) {
    if (!given) return;
    for (const char* x : ok)
      if (k == x) return;
    std::string list;
    for (const char* x : ok) list += (list.empty() ? "" : " or ") + std::string("analyze ") + x;
    throw UsageError(fmt::format("{} applies to {}, not analyze {}", opt, list, k));
  };
  only_for(a.rated_mhz.has_value(), "--rated-mhz", {"turbostat"});
  only_for(!a.reference.empty(), "--reference", {"nccl-tests", "steps", "nsys", "kineto"});
  only_for(!a.iteration_range.empty(), "--iteration-range", {"nsys", "kineto"});
  only_for(!a.sizes.empty(), "--sizes", {"nccl-tests"});
  only_for(a.nics.has_value() || a.link_gbps.has_value() || !a.node_report.empty(), "--nics, --link-gbps and --node-report", {"nccl-tests", "nccl-inspector"});
  if (a.nics.has_value() != a.link_gbps.has_value()) throw UsageError("--nics and --link-gbps go together (NICs per node and each one's Gb/s)");
  if (a.nics && !a.node_report.empty()) throw UsageError("give --nics/--link-gbps or --node-report, not both");
  only_for(a.expect_topo_file.has_value(), "--expect-topo-file", {"nccl-log"});
  only_for(!a.expect_net.empty(), "--expect-net", {"nccl-log"});
  only_for(a.expect_gdr, "--expect-gdr", {"nccl-log"});
  only_for(a.reference_ms.has_value(), "--reference-ms", {"steps"});
  only_for(a.warmup.has_value(), "--warmup", {"steps"});
  only_for(!a.kallsyms.empty(), "--kallsyms", {"perf"});
  if (a.reference_ms && !a.reference.empty()) throw UsageError("give --reference-ms or --reference, not both");
  // --reference means one thing on every command: a file, or (where a time per iteration is
  // the reference: steps, gap, explain) milliseconds. A number given to a kind that compares
  // whole runs is said as such, not as "cannot open 830".
  std::optional<double> reference_ms = a.reference_ms;
  if (!a.reference.empty()) {
    if (k == "steps") {
      if (auto ms = milliseconds_argument("--reference", a.reference)) reference_ms = ms;
    } else if (looks_like_milliseconds(a.reference) && a.reference != "-" && !std::filesystem::exists(a.reference)) {
      throw UsageError(fmt::format("--reference {}: analyze {} takes a reference {} file, not a number (milliseconds per iteration are a "
                                   "reference for analyze steps, gap and explain)",
                                   a.reference, k, k == "nccl-tests" ? "run's output" : "profile"));
    }
  }

  std::vector<report::Finding> findings;
  std::vector<std::string> unusable;
  int usable = 0;
  auto bad = [&](const std::string& file, const std::string& why) {
    findings.push_back(analyzers::unusable_input(*kind, file, why));
    unusable.push_back(file + ": " + why);
  };
  auto append = [&](std::vector<report::Finding> v) {
    for (auto& f : v) findings.push_back(std::move(f));
  };

  // Options that read files or need parsing: fatal when wrong (exit 2).
  analyzers::NcclTestsOptions nt;
  parsers::NcclTestsRun nt_ref;
  analyzers::StepsOptions st;
  KernelNames kernel_names;
  if (!a.kallsyms.empty()) {
    auto text = sys::read_named_file(a.kallsyms, 256u << 20);
    if (!text) throw UsageError("--kallsyms " + a.kallsyms + ": " + text.error());
    auto ks = parsers::parse_kallsyms(*text);
    if (!ks) throw UsageError("--kallsyms " + a.kallsyms + ": " + ks.error().describe());
    kernel_names.given = std::move(*ks);
  }
  std::optional<std::size_t> warmup;
  if (a.warmup) warmup = static_cast<std::size_t>(*a.warmup);
  st.warmup = warmup;
  if (k == "nccl-tests") {
    if (!a.sizes.empty()) {
      auto s = parsers::parse_sizes(a.sizes);
      if (!s) throw UsageError("--sizes " + a.sizes + ": " + s.error().describe());
      nt.sizes = *s;
    }
    if (!a.reference.empty()) {
      auto r = parse_input<parsers::NcclTestsParser>(a.reference);
      if (!r) throw UsageError("--reference " + a.reference + ": " + r.error());
      nt_ref = std::move(*r);
      nt.reference = &nt_ref;
      nt.reference_source = a.reference;
    }
  }
  if (k == "nccl-tests" || k == "nccl-inspector") {
    if (a.nics) {
      nt.nic_gbps_total = *a.nics * *a.link_gbps;
      nt.nic_basis = fmt::format("--nics {} --link-gbps {:g}", *a.nics, *a.link_gbps);
    } else if (!a.node_report.empty()) {
      auto text = sys::read_named_file(a.node_report, kMaxNodeReportBytes);
      if (!text) throw UsageError("--node-report " + a.node_report + ": " + text.error());
      auto r = compare::read_report(*text);
      if (!r) throw UsageError("--node-report " + a.node_report + ": " + r.error());
      // Every ACTIVE, LinkUp RDMA port (net.ib.ports pass, or fail for a rate below its peers':
      // it still carries traffic at its rate).
      std::size_t ports = 0;
      double total = 0;
      for (const auto& x : r->findings)
        if (x.id == "net.ib.ports" && (x.status == report::Status::pass || x.status == report::Status::fail))
          for (const auto& [name, v] : x.metrics)
            if (name == "rate_gbps" && v > 0 && (x.status == report::Status::pass || x.title.find("while its") != std::string::npos)) {
              ++ports;
              total += v;
            }
      if (ports == 0)
        throw UsageError(fmt::format("--node-report {}: no ACTIVE RDMA port with a rate in it (net.ib.ports): give --nics and --link-gbps", a.node_report));
      nt.nic_gbps_total = total;
      nt.nic_basis = fmt::format("{}: {} ACTIVE RDMA port{}, {:g} Gb/s together{}", a.node_report, ports, ports == 1 ? "" : "s", total,
                                 r->node.empty() ? "" : " on " + r->node);
    }
  }
  if (k == "steps") {
    if (reference_ms) {
      st.reference_ms(*reference_ms);
      st.reference_source = a.reference_ms ? "--reference-ms" : "--reference";
    } else if (!a.reference.empty()) {
      auto r = parse_input<parsers::StepsParser>(a.reference);
      if (!r) throw UsageError("--reference " + a.reference + ": " + r.error());
      auto s = analyzers::step_stats(*r, warmup);
      if (!s) throw UsageError("--reference " + a.reference + ": no records left after the warm-up");
      st.reference = s->median;
      st.reference_throughput = s->throughput;
      st.reference_unit = s->unit;
      st.reference_source = a.reference;
    }
  }

  if (k == "nsys" || k == "kineto") {
    analyzers::ProfileOptions po;
    po.iteration_range = a.iteration_range;
    analyzers::ProfileFigures ref;
    if (!a.reference.empty()) {
      auto r = read_profile(k, a.reference);
      if (!r) throw UsageError("--reference " + a.reference + ": " + r.error());
      ref = analyzers::profile_figures(*r, po);
      po.reference = &ref;
      po.reference_source = a.reference;
    }
    // A job's ranks: files, directories (their traces/exports) and quoted globs.
    auto profile_name = [&](std::string_view n) {
      if (k == "nsys") return n.ends_with(".sqlite") || n.ends_with(".nsys-rep") || n.ends_with(".qdrep");
      return n.ends_with(".json") || n.ends_with(".json.gz");
    };
    auto expanded = fleet::expand_inputs(a.files, profile_name, k == "nsys" ? "nsys export (.sqlite, .nsys-rep)" : "Kineto trace (.json, .json.gz)");
    if (!expanded.problems.empty()) throw UsageError(fmt::format("analyze {}: {}: {}", k, expanded.problems[0].file, expanded.problems[0].why));
    const auto& files = expanded.files;
    if (files.size() > kMaxProfileRanks)
      throw UsageError(fmt::format("analyze {}: {} profiles; at most {} ranks are analysed together", k, files.size(), kMaxProfileRanks));
    // Each rank read, reduced to its digest and dropped (analyzers/profile_job.hpp): memory does
    // not grow with the ranks. Kineto ranks on every core (up to 8); nsys one at a time (it may
    // run `nsys export`).
    const std::size_t threads = k == "kineto" ? std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8) : 1;
    auto job = analyzers::analyze_profile_job(files, [&](const std::string& f) { return read_profile(k, f); }, po, threads);
    if (!job.unusable.empty() && files.size() > 1) throw UsageError(fmt::format("{}: {}", job.unusable[0].first, job.unusable[0].second));
    for (const auto& [file, why] : job.unusable) bad(file, why);
    if (job.used.empty()) {
      std::string msg = unusable.size() == 1 ? "no usable input: " + unusable[0] : "no usable input: ";
      if (unusable.size() > 1)
        for (std::size_t i = 0; i < unusable.size(); ++i) msg += (i ? "; " : "") + unusable[i];
      throw UsageError(fmt::format("analyze {}: {}", k, msg));
    }
    append(std::move(job.findings));
    return emit_report("analyze", files, std::move(findings), chosen_format(a.format), a.output, a.verbose);
  }

  if (k == "nvidia-smi") {
    // Read together: a GPU in two -q -x captures has the growth of its counters judged.
    std::vector<parsers::NvidiaSmi> caps;
    std::vector<std::string> sources;
    for (const auto& file : a.files) {
      auto c = parse_input<parsers::NvidiaSmiParser>(file, parsers::kMaxNvidiaSmiBytes);
      if (!c) { bad(file, c.error()); continue; }
      caps.push_back(std::move(*c));
      sources.push_back(file);
    }
    if (caps.empty()) {
      std::string msg = "no usable input: ";
      for (std::size_t i = 0; i < unusable.size(); ++i) msg += (i ? "; " : "") + unusable[i];
      throw UsageError(fmt::format("analyze {}: {}", k, msg));
    }
    std::vector<analyzers::NvidiaSmiInput> in;
    for (std::size_t i = 0; i < caps.size(); ++i) in.push_back({sources[i], &caps[i]});
    append(analyzers::analyze_nvidia_smi(in));
    return emit_report("analyze", a.files, std::move(findings), chosen_format(a.format), a.output, a.verbose);
  }

  if (k == "nccl-inspector") {
    // One file per process (HOST-pidPID.log in the plugin's dump directory), judged together.
    std::vector<std::string> files;
    for (const auto& arg : a.files) {
      std::error_code ec;
      if (arg != "-" && std::filesystem::is_directory(arg, ec)) {
        std::vector<std::string> in_dir;
        for (const auto& e : std::filesystem::directory_iterator(arg, ec))
          if (e.path().extension() == ".log" && e.is_regular_file(ec)) in_dir.push_back(e.path().string());
        if (ec) {
          bad(arg, "cannot list the directory: " + ec.message());
          continue;
        }
        if (in_dir.empty()) {
          bad(arg, "a directory without .log files (the Inspector writes HOST-pidPID.log into NCCL_INSPECTOR_DUMP_DIR)");
          continue;
        }
        std::sort(in_dir.begin(), in_dir.end());
        files.insert(files.end(), in_dir.begin(), in_dir.end());
      } else {
        files.push_back(arg);
      }
    }
    std::vector<parsers::NcclInspector> runs;
    std::vector<std::string> sources;
    runs.reserve(files.size());
    for (const auto& file : files) {
      auto r = parse_input<parsers::NcclInspectorParser>(file);
      if (!r) {
        bad(file, r.error());
        continue;
      }
      runs.push_back(std::move(*r));
      sources.push_back(file);
    }
    if (runs.empty()) {
      std::string msg = "no usable input: ";
      for (std::size_t i = 0; i < unusable.size(); ++i) msg += (i ? "; " : "") + unusable[i];
      throw UsageError(fmt::format("analyze {}: {}", k, msg));
    }
    std::vector<analyzers::NcclInspectorInput> in;
    for (std::size_t i = 0; i < runs.size(); ++i) in.push_back({sources[i], &runs[i]});
    analyzers::NcclInspectorOptions io;
    io.nic_gbps_total = nt.nic_gbps_total;
    io.nic_basis = nt.nic_basis;
    append(analyzers::analyze_nccl_inspector(in, io));
    return emit_report("analyze", a.files, std::move(findings), chosen_format(a.format), a.output, a.verbose);
  }

  std::vector<parsers::NcclLog> logs;
  std::vector<std::string> log_sources;
  logs.reserve(a.files.size());
  for (const auto& file : a.files) {
    if (k == "perf") {
      auto p = read_perf_input(file, a.kallsyms, kernel_names);
      if (!p) { bad(file, p.error()); continue; }
      append(analyzers::analyze_perf(*p, file));
    } else if (k == "turbostat") {
      auto t = parse_input<parsers::TurbostatParser>(file);
      if (!t) { bad(file, t.error()); continue; }
      append(analyzers::analyze_turbostat(*t, file, {a.rated_mhz}));
    } else if (k == "numastat") {
      auto n = parse_input<parsers::NumastatParser>(file, parsers::kMaxNumastatBytes);
      if (!n) { bad(file, n.error()); continue; }
      append(analyzers::analyze_numastat(*n, file));
    } else if (k == "nccl-tests") {
      auto r = parse_input<parsers::NcclTestsParser>(file);
      if (!r) { bad(file, r.error()); continue; }
      append(analyzers::analyze_nccl_tests(*r, file, nt));
    } else if (k == "nccl-log") {
      auto l = parse_input<parsers::NcclLogParser>(file);
      if (!l) { bad(file, l.error()); continue; }
      logs.push_back(std::move(*l));
      log_sources.push_back(file);
    } else if (k == "nccl-ras") {
      auto r = parse_input<parsers::NcclRasParser>(file);
      if (!r) { bad(file, r.error()); continue; }
      append(analyzers::analyze_nccl_ras(*r, file));
    } else if (k == "steps") {
      auto s = parse_input<parsers::StepsParser>(file);
      if (!s) { bad(file, s.error()); continue; }
      auto stats = analyzers::step_stats(*s, warmup);
      if (!stats) {
        bad(file, fmt::format("{} record(s), none left after dropping {} warm-up record(s)", s->records.size(), warmup.value_or(0)));
        continue;
      }
      append(analyzers::analyze_steps(*stats, file, st));
      append(analyzers::damaged_lines("steps.gap", "workload", file, s->damaged));
    }
    ++usable;
  }
  if (!logs.empty()) {
    std::vector<analyzers::NcclLogInput> in;
    for (std::size_t i = 0; i < logs.size(); ++i) in.push_back({log_sources[i], &logs[i]});
    analyzers::NcclLogOptions o;
    o.expect_topo_file = a.expect_topo_file;
    if (!a.expect_net.empty()) o.expect_net = a.expect_net;
    o.expect_gdr = a.expect_gdr;
    append(analyzers::analyze_nccl_logs(in, o));
  }
  if (usable == 0) {
    std::string msg = unusable.size() == 1 ? "no usable input: " + unusable[0] : "no usable input: ";
    if (unusable.size() > 1)
      for (std::size_t i = 0; i < unusable.size(); ++i) msg += (i ? "; " : "") + unusable[i];
    throw UsageError(fmt::format("analyze {}: {}", k, msg));
  }
  return emit_report("analyze", a.files, std::move(findings), chosen_format(a.format), a.output, a.verbose);
}

}  // namespace perfgap::cli
