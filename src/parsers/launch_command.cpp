#include "parsers/launch_command.hpp"

#include <array>

#include "sys/text.hpp"

namespace perfgap::parsers {
namespace {

std::string_view launch_basename(std::string_view t) {
  const auto slash = t.rfind('/');
  return slash == std::string_view::npos ? t : t.substr(slash + 1);
}

bool is_srun(std::string_view launcher) { return launcher == "srun"; }

bool is_launcher(std::string_view t) {
  static constexpr std::array<std::string_view, 6> kLaunchers = {"mpirun", "mpiexec", "mpiexec.hydra", "orterun", "prterun", "srun"};
  const auto base = launch_basename(t);
  for (auto l : kLaunchers)
    if (base == l) return true;
  return false;
}

// A shell prompt, a mail quote or an `set -x` trace before the command: "$", "user@host:~$",
// "root@pod:/dir#", ">", "+".
bool is_prompt(std::string_view t) {
  if (t.empty()) return false;
  const char c = t.back();
  return c == '$' || c == '#' || c == '>' || c == '%' || c == '+';
}

// "16" -> 16; anything else (a shell variable, a range "2-4", 0) is no count.
std::optional<long> launch_count(std::string_view v) {
  auto n = sys::to_int<long>(v);
  if (!n || *n <= 0 || *n >= (1L << 24)) return std::nullopt;
  return n;
}

// The benchmark's binary: nccl-tests' (and rccl-tests') all_reduce_perf, all_gather_perf_mpi.
bool is_benchmark(std::string_view t) {
  const auto base = launch_basename(t);
  return base.ends_with("_perf") || base.ends_with("_perf_mpi");
}

// What one option says, `name` without its value ("-n", "--ntasks"), `value` its argument.
// Returns false when the option is not one that counts.
bool launch_apply(LaunchCommand& c, bool benchmark, std::string_view name, std::string_view value) {
  const auto n = launch_count(value);
  if (benchmark) {
    if (name == "-g" || name == "--ngpus") return n && (c.gpus = *n, true);
    if (name == "-t" || name == "--nthreads") return n && (c.threads = *n, true);
    return false;
  }
  if (is_srun(c.launcher)) {
    if (name == "-n" || name == "--ntasks") return n && (c.processes = n, true);
    if (name == "-N" || name == "--nodes") return n && (c.nodes = n, true);
    if (name == "--ntasks-per-node") return n && (c.per_node = n, true);
    return false;
  }
  if (name == "-n" || name == "-np" || name == "--np" || name == "--n" || name == "-c") return n && (c.processes = n, true);
  if (name == "-npernode" || name == "--npernode" || name == "-N" || name == "-ppn" || name == "--ppn" || name == "-perhost")
    return n && (c.per_node = n, true);
  if (name == "--map-by" || name == "-map-by") {
    // "ppr:8:node", "ppr:8:node:PE=4", "ppr:8:node,oversubscribe"
    if (!value.starts_with("ppr:")) return false;
    value.remove_prefix(4);
    const auto colon = value.find(':');
    if (colon == std::string_view::npos || !value.substr(colon + 1).starts_with("node")) return false;
    const auto per = launch_count(value.substr(0, colon));
    return per && (c.per_node = per, true);
  }
  return false;
}

// Options that take a value we read; a glued short option ("-n16", srun's "-N2") is split.
bool launch_takes_value(bool benchmark, std::string_view launcher, std::string_view name) {
  if (benchmark) return name == "-g" || name == "--ngpus" || name == "-t" || name == "--nthreads";
  if (is_srun(launcher)) return name == "-n" || name == "--ntasks" || name == "-N" || name == "--nodes" || name == "--ntasks-per-node";
  return name == "-n" || name == "-np" || name == "--np" || name == "--n" || name == "-c" || name == "-npernode" || name == "--npernode" ||
         name == "-N" || name == "-ppn" || name == "--ppn" || name == "-perhost" || name == "--map-by" || name == "-map-by";
}

void launch_said(LaunchCommand& c, std::string_view name, std::string_view value) {
  if (!c.said.empty()) c.said += ' ';
  c.said += name;
  c.said += ' ';
  c.said += value;
}

}  // namespace

std::optional<long> LaunchCommand::ranks() const {
  const long per_process = threads * gpus;
  if (processes) return *processes * per_process;
  if (nodes && per_node) return *nodes * *per_node * per_process;
  return std::nullopt;
}

std::optional<long> LaunchCommand::node_count() const {
  if (nodes) return nodes;
  if (processes && per_node && *processes % *per_node == 0) return *processes / *per_node;
  return std::nullopt;
}

bool LaunchCommandReader::line(std::span<const std::string_view> cells, int lineno) {
  if (cells.empty()) return false;
  if (open_) {
    // A '\' continuation: options, the binary, a variable or a path; anything else (a row, an
    // NCCL INFO line) ends the command there.
    std::size_t q = 0;
    while (q < cells.size() && cells[q].find_first_not_of('>') == std::string_view::npos) ++q;  // "> " quoted continuation
    if (q < cells.size()) {
      const char c = cells[q][0];
      if (c == '-' || c == '$' || c == '/' || cells[q].starts_with("./") || is_benchmark(cells[q])) {
        launch_cells(cells.subspan(q));
        return true;
      }
    }
    finish_command();
  }
  // Rows and most lines start with a digit or a word no launcher has: a cheap refusal first.
  const char c0 = cells[0][0];
  if (c0 >= '0' && c0 <= '9') return false;
  std::size_t i = 0;
  while (i < cells.size() && i < 3 && !is_launcher(cells[i]) && is_prompt(cells[i])) ++i;
  if (i >= cells.size() || !is_launcher(cells[i])) return false;
  open_ = LaunchCommand{};
  open_->launcher = std::string(launch_basename(cells[i]));
  open_->line = lineno;
  after_binary_ = saw_binary_ = false;
  pending_.clear();
  launch_cells(cells.subspan(i + 1));
  return true;
}

void LaunchCommandReader::end() {
  if (open_) finish_command();
}

// The command's cells after the launcher (or a continuation line's); the command ends with the
// line unless its last cell ends in '\'.
void LaunchCommandReader::launch_cells(std::span<const std::string_view> cells) {
  bool continued = false;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    std::string_view t = cells[i];
    if (i + 1 == cells.size() && t.ends_with('\\')) {
      continued = true;
      t.remove_suffix(1);
      if (t.empty()) break;
    }
    if (!pending_.empty()) {
      if (launch_apply(*open_, after_binary_, pending_, t)) launch_said(*open_, pending_, t);
      pending_.clear();
      continue;
    }
    if (!after_binary_ && is_benchmark(t)) {
      after_binary_ = saw_binary_ = true;
      continue;
    }
    if (t.size() < 2 || t[0] != '-') continue;
    if (const auto eq = t.find('='); eq != std::string_view::npos && t.starts_with("--")) {
      if (launch_apply(*open_, after_binary_, t.substr(0, eq), t.substr(eq + 1))) launch_said(*open_, t.substr(0, eq), t.substr(eq + 1));
      continue;
    }
    if (launch_takes_value(after_binary_, open_->launcher, t)) {
      pending_ = std::string(t);
      continue;
    }
    // A short option glued to its count: "-n16", "-N2", "-g8".
    if (t.size() > 2 && t[1] != '-' && launch_count(t.substr(2)) && launch_takes_value(after_binary_, open_->launcher, t.substr(0, 2)))
      if (launch_apply(*open_, after_binary_, t.substr(0, 2), t.substr(2))) launch_said(*open_, t.substr(0, 2), t.substr(2));
  }
  if (!continued) finish_command();
}

void LaunchCommandReader::finish_command() {
  if (open_ && saw_binary_) {
    if (done_ && (done_->ranks() != open_->ranks() || done_->node_count() != open_->node_count())) conflict_ = true;
    done_ = std::move(open_);
  }
  if (conflict_) done_.reset();
  open_.reset();
  pending_.clear();
  after_binary_ = saw_binary_ = false;
}

}  // namespace perfgap::parsers
