#include "checks/kernel_log.hpp"

#include <fmt/format.h>

#include "facts/infiniband.hpp"

namespace perfgap::checks::kernel_log {
namespace {

// The evidence lines a finding keeps per device: the first ones and the last.
constexpr std::size_t kShownLines = 4;

// Events of one class by subject (what `subject_of` names), in log order.
std::map<std::string, Group> group_by(const facts::KernelLog& log, const std::function<bool(const KernelEvent&)>& keep,
                                      const std::function<std::string(const KernelEvent&)>& subject_of) {
  std::map<std::string, Group> out;
  for (const auto& e : log.events)
    if (keep(e)) out[subject_of(e)].events.push_back(&e);
  return out;
}

}  // namespace

std::vector<std::string_view> log_reads() {
  return reads::of({reads::kernel_log(), reads::visible_gpus(), reads::infiniband()});
}

const std::string& skip_rule() {
  static const std::string rule =
      " `skip` when the kernel log cannot be read (kernel.dmesg_restrict without root, a tree without .perfgap/dmesg.txt and no --dmesg FILE) "
      "or holds nothing (an empty --dmesg FILE; a tree's .perfgap/dmesg.txt without one kernel line; a --dmesg FILE with text "
      "but no kernel line is exit 2). "
      "The log may be /dev/kmsg records, dmesg output (plain, -r/pstore '<N>' priorities, -x/--decode 'kern  :warn  : ', -T, "
      "--time-format iso, and -t without stamps: lines that start with a driver's prefix such as 'NVRM: ' or "
      "'mlx5_core 0000:5c:00.0: '), journalctl -k (short, short-precise, short-monotonic, short-iso, short-full, -o cat) or "
      "syslog kern.log lines (with or without the printk time, rsyslog ISO stamps); one line reader removes each line's prefixes "
      "once and keeps the time each form carries, also for a multi-line record's indented continuation lines. A syslog or journal "
      "line tagged by a user-space process ('gpud[5555]: ', 'nvidia-persistenced[1111]: ': a daemon quoting the driver's Xid "
      "line) is not the kernel's and is left out.";
  return rule;
}

std::string named_device(facts::Facts& f, const std::string& bdf) {
  if (bdf.empty()) return "device not named in the log";
  if (const auto& gpus = f.visible_gpus(); gpus)
    for (const auto& g : *gpus)
      if (g.bdf == bdf) return fmt::format("GPU {} ({})", g.index, bdf);
  if (const auto& ib = facts::infiniband(f); ib)
    for (const auto& d : *ib)
      if (d.bdf == bdf) return fmt::format("{} ({})", d.name, bdf);
  return bdf;
}

void add_log_evidence(Finding& fnd, const facts::KernelLog& log) {
  std::string span;
  if (log.first_s && log.last_s) {
    parsers::KernelEvent first, last;
    first.since_boot_s = log.first_s;
    last.since_boot_s = log.last_s;
    span = fmt::format(", {} to {}", log.when(first), log.when(last));
  }
  fnd.add(log.source, fmt::format("{} records{}", log.messages.size(), span));
}

void add_events(Finding& fnd, const facts::KernelLog& log, const Group& g) {
  const auto& first = *g.events.front();
  const auto& last = *g.events.back();
  const std::size_t n = g.counted ? g.counted : g.events.size();
  const std::string lines = n == g.events.size() ? std::string() : fmt::format(" ({} lines)", g.events.size());
  fnd.add("events", fmt::format("{} in the kernel log{}, first {}, last {}", n, lines, log.when(first), log.when(last)));
  for (std::size_t i = 0; i < g.events.size(); ++i) {
    if (i >= kShownLines - 1 && i + 1 != g.events.size()) continue;
    fnd.add(log.source, g.events[i]->line);
  }
  if (g.events.size() > kShownLines) fnd.add(log.source, fmt::format("({} more lines like these)", g.events.size() - kShownLines));
  fnd.metric("events", static_cast<double>(n));
}

std::string bdf_subject(const KernelEvent& e) { return e.device.empty() ? "unnamed" : e.device; }

std::vector<Finding> per_subject(facts::Facts& f, std::string_view id, std::string_view layer, std::string_view what,
                                 const std::function<bool(const KernelEvent&)>& keep,
                                 const std::function<std::string(const KernelEvent&)>& subject_of,
                                 const std::function<void(Finding&, const std::string&, Group&)>& judge) {
  const auto& log = facts::kernel_log(f);
  if (!log) return {core::finding(id, layer, Status::skip, "kernel log not readable: " + log.error())};
  auto groups = group_by(*log, keep, subject_of);
  if (groups.empty()) {
    auto fnd = core::finding(id, layer, Status::pass, fmt::format("no {} in the kernel log", what));
    add_log_evidence(fnd, *log);
    return {std::move(fnd)};
  }
  std::vector<Finding> out;
  for (auto& [subject, g] : groups) {
    auto fnd = core::finding(id, layer, Status::warn, "");
    fnd.subject = subject;
    judge(fnd, subject, g);
    add_events(fnd, *log, g);
    add_log_evidence(fnd, *log);
    out.push_back(std::move(fnd));
  }
  return out;
}

}  // namespace perfgap::checks::kernel_log
