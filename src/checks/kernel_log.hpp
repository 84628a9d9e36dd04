// What the checks of hardware events in the kernel log share (gpu/xid.cpp, gpu/driver_errors.cpp,
// pcie/aer.cpp, network/link_flaps.cpp, network/nic_health.cpp, cpu_power/kernel_events.cpp,
// cpu_power/kernel_crash.cpp): the log is facts::kernel_log
// (--dmesg FILE, a tree's .perfgap/dmesg.txt, or /dev/kmsg live); the events come from
// parsers/kernel_events.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "checks/util.hpp"
#include "facts/platform.hpp"

namespace perfgap::checks::kernel_log {

using parsers::KernelEvent;
using parsers::KernelEventKind;

// The events of one class about one subject, in log order.
struct Group {
  std::vector<const KernelEvent*> events;
  // How many events the lines are, where a check counts otherwise than one per line (a GPU's
  // fall off the bus reported by several lines); 0: each line is one.
  std::size_t counted = 0;
};

// What every kernel-log check reads: the log, and the GPUs and RDMA devices its PCI addresses
// are named by.
std::vector<std::string_view> log_reads();
// The end of every kernel-log check's rule: when it skips, and the log formats read.
const std::string& skip_rule();

// A PCI address named as the tree shows it: "GPU 0 (0000:18:00.0)", "mlx5_0 (0000:2a:00.0)".
std::string named_device(facts::Facts& f, const std::string& bdf);
// The log's own evidence: where it came from, how many records, the span it covers.
void add_log_evidence(Finding& fnd, const facts::KernelLog& log);
// Count, first and last time, and the lines (the first few and the last) of one group; the
// "events" metric is g.counted where set, else the number of lines.
void add_events(Finding& fnd, const facts::KernelLog& log, const Group& g);
// The subject of an event: its PCI address, "unnamed" when the line names none.
std::string bdf_subject(const KernelEvent& e);

// A finding per subject, or one `pass` naming the log when the class never occurs, or one
// `skip` when the log cannot be read. `judge` sets status, title, fix and impact (and may set
// the group's `counted`).
std::vector<Finding> per_subject(facts::Facts& f, std::string_view id, std::string_view layer, std::string_view what,
                                 const std::function<bool(const KernelEvent&)>& keep,
                                 const std::function<std::string(const KernelEvent&)>& subject_of,
                                 const std::function<void(Finding&, const std::string&, Group&)>& judge);

}  // namespace perfgap::checks::kernel_log
