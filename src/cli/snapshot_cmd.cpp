// perfgap snapshot OUT: captures what the checks read into a sysroot directory or OUT.tar.gz
// that `check --root` replays anywhere (snapshot/take: the capture and its writing; docs/SNAPSHOT.md).
#include <sys/stat.h>

#include <fmt/format.h>

#include <memory>

#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "cli/pid_option.hpp"
#include "report/text_style.hpp"
#include "snapshot/archive.hpp"
#include "snapshot/take.hpp"
#include "sys/paths.hpp"

namespace perfgap::cli {
namespace {

struct SnapshotArgs {
  std::string out;
  std::string root;
  std::vector<int> pids;
  std::string format;
  bool verbose = false;
  bool nvml = false;
};

std::string summary_text(const snapshot::Capture& c, const std::string& out, bool verbose) {
  std::string text = fmt::format("snapshot of {} ({}): {} files, {} links, {} directories, {:.1f} MiB in {:.0f} ms; {} training process(es); {} skipped -> {}\n",
                                 c.hostname.empty() ? "unknown host" : report::printable(c.hostname),
                                 c.live ? "live" : "tree " + report::printable(c.source_root),
                                 c.count(snapshot::Entry::file), c.count(snapshot::Entry::link), c.count(snapshot::Entry::dir),
                                 static_cast<double>(c.file_bytes()) / (1 << 20), c.duration_ms, c.training_pids.size(),
                                 c.skipped.size(), report::printable(out));
  if (verbose)
    for (const auto& s : c.skipped) text += fmt::format("  skipped {}: {}\n", report::printable(s.path), report::printable(s.reason));
  return text;
}

}  // namespace

CommandRunner add_snapshot_command(CLI::App& app) {
  auto a = std::make_shared<SnapshotArgs>();
  auto* cmd = app.add_subcommand("snapshot", "Capture the files the checks read into a directory or OUT.tar.gz that check --root replays");
  cmd->add_option("OUT", a->out, "A new (or empty) directory, or a path ending in .tar.gz (written atomically)")->required();
  cmd->add_option("--root", a->root, "Capture from a captured tree (directory or .tar.gz) instead of the live system");
  cmd->add_option("--pid", a->pids, "Training process to capture (repeatable); default: auto-detect, as check does")
      ->check(process_id());
  // Not a report: the summary of what was captured, or its manifest (json).
  add_format_option(cmd, a->format, {report::Format::text, report::Format::json}, "the summary on stdout; json: the manifest");
  cmd->add_flag("-v,--verbose", a->verbose, "List every path that was skipped, with the reason");
  cmd->add_flag("--nvml", a->nvml, "Let perfgap-gpu query GPUs whose persistence mode is off too (as check --nvml)");
  return [a]() -> int {
    // A directory OUT is refused before anything is read, so a mistake costs nothing.
    const bool archive = snapshot::names_archive(a->out);
    if (archive) {
      if (auto o = check_output(a->out); !o) throw UsageError(o.error());
    } else {
      auto st = sys::lstat_path(a->out);
      if (st && (!S_ISDIR(st->st_mode) || !sys::is_empty_directory(a->out)))
        throw UsageError(a->out + ": exists and is not an empty directory (a snapshot goes into a new or empty directory, or OUT.tar.gz)");
    }
    auto taken = snapshot::take({.out = a->out, .root = a->root, .pids = a->pids, .nvml = a->nvml});
    if (!taken) throw UsageError(taken.error());
    const auto& manifest = taken->manifest;
    const auto& captured = taken->capture;
    auto w = write_stdout(a->format == "json" ? manifest : summary_text(captured, a->out, a->verbose));
    if (!w) throw UsageError(w.error());
    return 0;
  };
}

}  // namespace perfgap::cli
