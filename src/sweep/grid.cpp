// The grid of settings, the benchmark's environment and launcher arguments, and judging one
// finished run.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <set>

#include "parsers/nccl_log.hpp"
#include "parsers/nccl_tests.hpp"
#include "sweep/sweep.hpp"

namespace perfgap::sweep {
namespace {

bool valid_name(std::string_view n) {
  if (n.empty() || (n[0] >= '0' && n[0] <= '9')) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string_view base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Whole-string integer (NCCL prints integer parameters as it parsed them: "0x4" -> 4).
std::optional<long long> as_integer(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 0);
  if (errno != 0 || end == s.c_str() || *end != '\0') return std::nullopt;
  return v;
}

const char* signal_name(int sig) {
  switch (sig) {
    case 1: return "SIGHUP";
    case 2: return "SIGINT";
    case 3: return "SIGQUIT";
    case 4: return "SIGILL";
    case 6: return "SIGABRT";
    case 7: return "SIGBUS";
    case 8: return "SIGFPE";
    case 9: return "SIGKILL";
    case 11: return "SIGSEGV";
    case 13: return "SIGPIPE";
    case 15: return "SIGTERM";
    default: return "";
  }
}

}  // namespace

tl::expected<Axis, std::string> parse_axis(std::string_view spec) {
  auto eq = spec.find('=');
  if (eq == std::string_view::npos) return tl::unexpected(fmt::format("--env {}: expected NAME=v1,v2,...", spec));
  Axis a;
  a.name = std::string(spec.substr(0, eq));
  if (!valid_name(a.name))
    return tl::unexpected(fmt::format("--env {}: '{}' is not a variable name (letters, digits, _)", spec, a.name));
  // Values are separated by commas; `\,` is a comma inside a value (NCCL_ALGO=Ring\,Tree).
  auto list = spec.substr(eq + 1);
  std::set<std::string> seen;
  std::string v;
  auto take = [&]() -> std::optional<std::string> {
    if (v.empty()) return fmt::format("--env {}: empty value (write `unset` to remove the variable)", spec);
    if (!seen.insert(v).second) return fmt::format("--env {}: value '{}' listed twice", spec, v);
    a.values.push_back(std::move(v));
    v.clear();
    return std::nullopt;
  };
  for (std::size_t i = 0; i < list.size(); ++i) {
    char c = list[i];
    if (c == '\\' && i + 1 < list.size() && (list[i + 1] == ',' || list[i + 1] == '\\')) {
      v += list[++i];
    } else if (c == ',') {
      if (auto e = take()) return tl::unexpected(*e);
    } else if (c == '\0') {
      return tl::unexpected(fmt::format("--env {}: value with a NUL byte", a.name));
    } else {
      v += c;
    }
  }
  if (auto e = take()) return tl::unexpected(*e);
  return a;
}

tl::expected<std::vector<Axis>, std::string> parse_axes(const std::vector<std::string>& specs) {
  if (specs.empty()) return tl::unexpected(std::string("--env NAME=v1,v2,... is required"));
  std::vector<Axis> axes;
  for (const auto& s : specs) {
    auto a = parse_axis(s);
    if (!a) return tl::unexpected(a.error());
    for (const auto& b : axes)
      if (b.name == a->name) return tl::unexpected(fmt::format("--env {} given twice: list its values once", a->name));
    axes.push_back(std::move(*a));
  }
  std::size_t n = 1;
  for (const auto& a : axes) n *= a.values.size();
  if (n < 2) return tl::unexpected(std::string("--env: a sweep needs at least two settings (the baseline and a candidate)"));
  return axes;
}

std::string Setting::label() const {
  std::string s;
  for (const auto& [k, v] : values) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

std::string Setting::file_part() const {
  std::string s = label();
  for (auto& c : s) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '=' ||
              c == '.' || c == '-' || c == ',' || c == '+';
    if (!ok) c = '_';
  }
  if (s.size() > 120) s.resize(120);
  return s;
}

report::StringMap Setting::as_map() const {
  report::StringMap m;
  for (const auto& [k, v] : values) m[k] = v;
  return m;
}

std::vector<Setting> expand_grid(const std::vector<Axis>& axes) {
  std::vector<Setting> out(1);
  for (const auto& a : axes) {
    std::vector<Setting> next;
    for (const auto& s : out)
      for (const auto& v : a.values) {
        Setting t = s;
        t.values.emplace_back(a.name, v);
        next.push_back(std::move(t));
      }
    out = std::move(next);
  }
  return out;
}

std::vector<PlannedRun> plan_runs(std::size_t settings, int repeat) {
  std::vector<PlannedRun> out;
  for (int r = 1; r <= repeat; ++r)
    for (std::size_t s = 0; s < settings; ++s) out.push_back({s, r});
  return out;
}

std::vector<std::string> build_environment(const std::vector<std::string>& base, const Setting& s) {
  std::vector<std::string> out;
  for (const auto& kv : base) {
    bool swept = false;
    for (const auto& [k, v] : s.values) swept = swept || (kv.size() > k.size() && kv.compare(0, k.size(), k) == 0 && kv[k.size()] == '=');
    if (!swept) out.push_back(kv);
  }
  for (const auto& [k, v] : s.values)
    if (v != kUnset) out.push_back(k + "=" + v);
  return out;
}

bool is_mpi_launcher_name(std::string_view argv0) {
  auto b = base_name(argv0);
  return b == "mpirun" || b == "mpiexec" || b == "orterun" || b == "prterun" || b == "mpirun.openmpi" || b == "mpiexec.openmpi";
}

Launcher classify_launcher(std::string_view argv0, std::string_view resolved, std::string_view version_text) {
  if (!is_mpi_launcher_name(argv0)) return Launcher::direct;
  auto r = base_name(resolved);
  if (r == "orterun" || r == "prterun" || r.find("openmpi") != std::string_view::npos) return Launcher::open_mpi;
  auto b = base_name(argv0);
  if (b == "orterun" || b == "prterun" || b.find("openmpi") != std::string_view::npos) return Launcher::open_mpi;
  if (version_text.find("Open MPI") != std::string_view::npos || version_text.find("OpenRTE") != std::string_view::npos ||
      version_text.find("Open RTE") != std::string_view::npos)
    return Launcher::open_mpi;
  return Launcher::direct;
}

std::vector<std::string> launch_argv(const std::vector<std::string>& command, const Setting& s, Launcher l) {
  if (l != Launcher::open_mpi || command.empty()) return command;
  std::vector<std::string> out{command[0]};
  for (const auto& [k, v] : s.values) {
    if (v == kUnset) continue;
    bool already = false;
    for (std::size_t i = 1; i + 1 < command.size(); ++i)
      already = already || ((command[i] == "-x" || command[i] == "--x") && (command[i + 1] == k || command[i + 1].rfind(k + "=", 0) == 0));
    if (already) continue;
    out.push_back("-x");
    out.push_back(k);
  }
  out.insert(out.end(), command.begin() + 1, command.end());
  return out;
}

std::optional<std::string> env_echo_mismatch(std::string_view output, const Setting& s) {
  if (output.find(" set by environment to ") == std::string_view::npos) return std::nullopt;
  auto log = parsers::parse_nccl_log(output);
  if (!log) return std::nullopt;
  for (const auto& [k, v] : s.values) {
    for (const auto& [kv, line] : log->env_settings) {
      auto eq = kv.find('=');
      if (eq == std::string::npos || kv.compare(0, eq, k) != 0 || eq != k.size()) continue;
      std::string seen = kv.substr(eq + 1);
      if (v == kUnset)
        return fmt::format("line {}: {} set by environment to {}, but the setting unsets it", line, k, seen);
      if (seen == v) continue;
      auto a = as_integer(seen), b = as_integer(v);
      if (a && b && *a == *b) continue;
      return fmt::format("line {}: {} set by environment to {}, expected {}", line, k, seen, v);
    }
  }
  return std::nullopt;
}

RunOutcome judge_run(const ProcessResult& p, std::string_view output, const Setting& s, double timeout_s) {
  RunOutcome r;
  auto fail = [&](std::string why) {
    r.ok = false;
    r.problem = std::move(why);
    r.busbw.clear();
    return r;
  };
  if (!p.spawn_error.empty()) return fail("could not start: " + p.spawn_error);
  if (p.interrupted) return fail("interrupted");
  if (p.timed_out) return fail(fmt::format("timed out after {:g} s (killed)", timeout_s));
  if (p.signal) {
    const char* n = signal_name(*p.signal);
    return fail(*n ? fmt::format("killed by signal {} ({})", *p.signal, n) : fmt::format("killed by signal {}", *p.signal));
  }
  if (p.exit_code && *p.exit_code != 0) return fail(fmt::format("exit status {}", *p.exit_code));
  if (output.find_first_not_of(" \t\r\n") == std::string_view::npos) return fail("no output");
  if (auto m = env_echo_mismatch(output, s)) return fail("the setting did not reach the ranks: " + *m);
  auto parsed = parsers::parse_nccl_tests(output);
  if (!parsed) return fail("no readable nccl-tests table: " + parsed.error().describe());
  std::size_t wrong_sizes = 0;
  for (const auto& row : parsed->rows) {
    double w = 0;
    if (row.out_of_place && row.out_of_place->wrong) w += *row.out_of_place->wrong;
    if (row.in_place && row.in_place->wrong) w += *row.in_place->wrong;
    if (w > 0) ++wrong_sizes;
    if (row.out_of_place) r.busbw[row.size] = row.out_of_place->busbw;
  }
  if (wrong_sizes) return fail(fmt::format("wrong results (#wrong > 0) at {} size(s)", wrong_sizes));
  if (r.busbw.empty()) return fail("no out-of-place result in the nccl-tests table");
  r.unreadable_rows = parsed->damaged.size();
  r.ok = true;
  return r;
}

}  // namespace perfgap::sweep
