// The one list of informational finding ids: findings that say what was read (a profile's
// contents, the events a perf stat run counted, the hypervisor or container found) and judge
// nothing, so that their `pass` is not a verdict. A report whose findings are only skips and
// such passes decided nothing (Report::undecided_why: the headline says SKIP, never OK), and
// every reader that turns statuses into a verdict (fleet's node standings and measured verdicts,
// history's last good run, compare's "nothing compared") asks decides() rather than reading
// `pass` as healthy.
//
// It lives beside the report model, not with the checks or analyzers that write these ids:
// those producers are spread over checks/, analyzers/ and sweep/, while every consumer of the
// rule (the renderers here, compare, history, fleet) reads reports and sits at or above
// report/, the one layer they all include. docs/CONTRACT.md lists the same ids (a unit test
// holds the two together).
//
// An id belongs here only when its `pass` never judges: an id whose pass is a verdict stays out
// (gpu.inventory fails when the driver misses a GPU on PCI, so its pass says none is missing;
// compare.summary's pass says nothing regressed; whatif.digest's pass is the digest asked for;
// history.run carries the kept run's own verdict). A listed id that warns, fails or errs
// (profile.ranks with ranks missing, damaged lines) decides like any finding.
#pragma once

#include <string_view>

#include "report/model.hpp"

namespace perfgap::report {

inline constexpr std::string_view kInformationalIds[] = {
    "virt.hypervisor",         // check: names the hypervisor, or bare metal
    "container.detect",        // check: names the container runtime, or none
    "gpu.nvml",                // check: the GPUs' NVML facts were read (the gpu.* checks judge them)
    "perf.summary",            // analyze perf, profile: what the profile holds (samples, kernel share, hottest symbols)
    "perf_stat.events",        // analyze perf-stat: the events read, their scaling
    "profile.summary",         // analyze nsys|kineto: kernels, GPUs and span of the profile
    "profile.iterations",      // analyze nsys|kineto: how iterations were found and their length
    "profile.ranks",           // analyze nsys|kineto: which ranks' traces were read (warns when ranks are missing)
    "nccl_inspector.summary",  // analyze nccl-inspector: records, ranks, communicators and hosts read
    "sweep.result",            // sweep: one setting's runs as measured (sweep.recommendation judges them)
};

// Whether `id` is an informational summary (kInformationalIds).
bool informational(std::string_view id);

// Whether a finding decided something: any status but skip, except the pass of an
// informational id.
bool decides(std::string_view id, Status status);
inline bool decides(const Finding& f) { return decides(f.id, f.status); }

}  // namespace perfgap::report
