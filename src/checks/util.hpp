// Helpers shared by checks: evidence wording and facts every layer needs.
#pragma once

#include <chrono>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "core/check.hpp"
#include "facts/reads.hpp"
#include "report/model.hpp"

namespace perfgap::checks {

using report::Finding;
using report::Status;
// What facts read, for composing `reads` (facts/reads.hpp).
namespace reads = facts::reads;

// The report layer of each folder's findings, taken from report::kLayers (the contract's list,
// in report order) so that no check spells a layer's name: checks/<folder>/ registers the
// checks of layer::<folder> only (tests/unit/test_checks_layers.cpp holds both to it).
namespace layer {
static_assert(std::size(report::kLayers) == 10, "report::kLayers changed: revisit checks::layer");
inline constexpr std::string_view virtualization = report::kLayers[0];
inline constexpr std::string_view cpu_power = report::kLayers[1];
inline constexpr std::string_view placement = report::kLayers[2];
inline constexpr std::string_view runtime_topology = report::kLayers[3];
inline constexpr std::string_view network = report::kLayers[4];
inline constexpr std::string_view gpu = report::kLayers[5];
inline constexpr std::string_view pcie = report::kLayers[6];
}  // namespace layer

// A measured share against its limit when the counters leave it +/- `margin`: `fail` above
// the limit by more than the margin, `pass` at or below it by the margin, and within the
// margin `warn` (above the limit) or `skip` (at or below it: too close to call).
Status limit_verdict(double share, double margin, double limit);

// The window a tick-quantised share needs for its margin (which shrinks as 1/window) to fall
// under its distance to the limit (at least 0.1 point): seconds x margin / distance, with 15%
// to spare, rounded up to 10 ms, at most 60 s.
std::chrono::milliseconds window_to_decide(double seconds, double margin, double share, double limit);

// A setting's value as evidence may show it: credentials redacted (report::redact).
std::string shown(std::string_view name, const std::string& value);

// A process as a finding's subject: "pid:1234".
std::string pid_subject(int pid);
// The path of a process's /proc file, for evidence: "/proc/1234/numa_maps".
std::string proc_path(int pid, std::string_view file);
// "12.3" with one decimal.
std::string pct(double v);
// "cpu3, cpu7 and 12 more" style summary of a CPU set, as a kernel list.
std::string cpus_text(const parsers::CpuSet& s);
// The CPUs training processes may use: the union of their Cpus_allowed_list, or all online
// CPUs when none were found. `how` says which.
parsers::CpuSet workload_cpus(facts::Facts& f, std::string* how);
// A skip finding when the online CPU list cannot be read (every per-CPU check needs it).
std::optional<Finding> topology_skip(facts::Facts& f, std::string_view id, std::string_view layer);
// "NAME unset", or, when the audited environment could not be read, that it is unknown.
std::string unset_text(facts::Facts& f, std::string_view names, std::string_view suffix = "");
// For checks decided by the audited environment: when it could not be read, a `pass` is no
// verdict (a variable may be set there), so it becomes a `skip` naming why; other statuses
// (a bad value found in an NCCL config file) stand, with the unread environment as evidence.
std::vector<Finding> unless_env_unread(facts::Facts& f, std::vector<Finding> found);
// The value of kernel setting `name` (facts::sysctl, e.g. "kernel.numa_balancing"), or the
// `skip` finding of check `id` titled "<what> not available: <why>". Checks read /proc/sys
// only through this.
tl::expected<std::string, Finding> sysctl_or_skip(facts::Facts& f, std::string_view name, std::string_view id, std::string_view layer,
                                                  std::string_view what);
// The skip finding for checks that need training processes and found none.
Finding no_training_skip(std::string_view id, std::string_view layer, const facts::Training& t);

}  // namespace perfgap::checks
