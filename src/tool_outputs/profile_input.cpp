// analyze nsys / kineto inputs: an SQLite export (a .nsys-rep through `nsys export`), a Kineto trace.
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>

#include "tool_outputs/inputs.hpp"
#include "parsers/gunzip.hpp"
#include "sys/executable.hpp"
#include "sys/named_file.hpp"
#include "sys/paths.hpp"
#include "sys/process.hpp"
#include "sys/stop_signals.hpp"

namespace perfgap::tool_outputs {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  std::string_view x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

// A .nsys-rep through `nsys export --type sqlite` into a private temp dir; the export's bytes or why not.
tl::expected<std::string, std::string> export_nsys_report(const std::string& file) {
  // A job's ranks are read on several threads: their exports run one at a time (nsys export
  // uses the cores itself, and one signal guard lives at a time), their parses side by side.
  static std::mutex one_export;
  const std::lock_guard<std::mutex> lock(one_export);
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
  auto absolute = sys::absolute_path(file);
  if (!absolute) return tl::unexpected(fmt::format("cannot make an absolute path of it: {}", absolute.error()));
  const std::string& report = *absolute;
  std::string tmpl = sys::in_temp_directory("perfgap-nsys.XXXXXX");
  // SIGINT, SIGTERM and SIGHUP only set a flag: nsys's process group is stopped, the temporary
  // directory removed, and the signal then raised again (exit 128+N, nothing left behind).
  sys::StopSignals signals;  // from before the directory exists until it is gone
  if (!sys::make_temp_directory(tmpl)) return tl::unexpected(fmt::format("cannot make a temporary directory for nsys export: {}", std::strerror(errno)));
  std::string out = tmpl + "/export.sqlite";
  sys::CommandOptions o;
  o.timeout = std::chrono::minutes(10);
  o.term_grace = std::chrono::seconds(2);
  o.stop = sys::StopSignals::flag();
  tl::expected<std::string, std::string> bytes;
  auto r = sys::run_command({nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", out, "--", report}, o);
  if (!r.started) bytes = tl::unexpected("nsys export could not run: " + r.error);
  else if (r.stopped || sys::StopSignals::pending()) bytes = tl::unexpected(fmt::format("interrupted by signal {}", sys::StopSignals::pending()));
  else if (r.timed_out) bytes = tl::unexpected(std::string("nsys export did not finish within 10 minutes"));
  else if (r.status != 0) {
    std::string err = r.err.substr(0, r.err.find('\n'));
    bytes = tl::unexpected(fmt::format("nsys export failed (exit {}){}", r.status, err.empty() ? "" : ": " + err));
  } else {
    bytes = sys::read_named_file(out, sys::kMaxInputBytes);
    if (!bytes) bytes = tl::unexpected("the export of nsys: " + bytes.error());
  }
  sys::remove_tree(tmpl);
  sys::StopSignals::raise_pending();
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
  // The trace's node, where its name says it (whatif.node and profile.straggler group ranks by it).
  if (const auto host = parsers::kineto_trace_host(file); !host.empty())
    for (auto& g : p->gpus)
      if (g.host.empty()) g.host = host;
  return std::move(*p);
}

}  // namespace

// One profile input read into the model, or why it is unusable.
tl::expected<parsers::Profile, std::string> read_profile(std::string_view kind, const std::string& file) {
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

}  // namespace perfgap::tool_outputs
