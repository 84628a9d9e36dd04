// The knowledge base (docs/KB.md): what each finding id is estimated to cost in training
// throughput, where that figure comes from, the measurements that reveal what findings cannot,
// the known-costly kernel symbols of perf.smmu_cmdq / perf.hot_kernel, and the GPU kernels that
// are communication (analyze nsys|kineto). Data, not code: the
// files in data/kb/ are embedded at build time; /etc/perfgap/kb.d/*.yaml and `--kb DIR`
// override entries (per id, the later file wins) without a rebuild.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

namespace perfgap::core {

// Where an estimate comes from.
struct KbSource {
  std::string kind;  // public-case, vendor-guide, measurement, none
  std::string cite;  // what a person looks up: the case, guide or measurement
  std::string url;   // may be empty
};

struct KbImpact {
  enum class Kind { estimated, unestimated, not_a_cause };
  std::string id;
  Kind kind = Kind::unestimated;
  double low_pct = 0, high_pct = 0;  // estimated: cost range in percent of training throughput
  std::string note;                  // unestimated / not_a_cause: why; estimated: what the range assumes
  std::string workload, layer, scale;  // conditions the estimate holds under ("any" where it does not matter)
  KbSource source;
  std::string file;  // the file (and line) the entry came from: "builtin:data/kb/impact.yaml:12"
};

// A measurement that reveals a kind of loss the findings may not: taken when no report given to
// `explain` holds a finding matching `covered_by` (ids or globs such as `profile.*`).
struct KbMeasurement {
  std::string name;
  std::vector<std::string> covered_by;
  std::string take;  // what to run
  // Which side of the job it measures, so that explain takes next what the reports point at:
  // "host" (the GPUs wait on their host: taken first), "communication" (not taken next where a
  // profile shows no communication kernel at all); "" for neither.
  std::string side;
  std::string file;
};

// A root cause: the finding ids that see it (a setting, its measurement, the live equivalent),
// counted once by explain. `estimate` names how a report's measurement of the cause becomes its
// cost (analyzers/budget.cpp); `case_measured` and `case_cost` are the public case's figures
// for the proportional estimators (24% of cycles -> 11.5 points). An id no cause names is a
// cause of its own.
struct KbCause {
  std::string id;
  std::string title;
  std::vector<std::string> members;  // finding ids, or globs such as live.smmu_*
  std::string absorbs;               // another cause: when both are found, its findings and measurement are this one's
  std::string estimate;              // smmu_share | cpu_frequency | remote_numa | collective | slowest_node | waiting | "" (prior only)
  double case_measured = 0, case_cost = 0;
  std::string next;  // the next step for this cause, in explain's fix
  std::string file;
  bool host = false;  // costs only where the GPUs wait for their host: whatif.launch bounds such causes together
};

struct KbSymbol {
  std::string match;  // exact base name, or a prefix ending in '*'
  std::string group, finding, cause, fix;
};

// An NVIDIA Xid number: what the driver means by it and what to do (data/kb/xid.yaml, our
// own words over NVIDIA's published Xid catalogue). resolution: the catalogue's immediate
// action (RESTART_APP, RESET_GPU, RESTART_BM, ...: kXidResolutions); severity follows from it:
// "fail" (the GPU or node needs service: drain) or "warn" (the application's fault, a
// recorded or contained event, nothing to do). meaning and action may be empty: the
// resolution's own words (xid_resolution_action) stand in.
struct KbXid {
  long code = 0;
  std::string name, meaning, severity, action, resolution;
};
// The catalogue's resolution buckets perfgap knows, and what each asks of an operator.
std::string_view xid_resolution_action(std::string_view resolution);
bool xid_resolution_fails(std::string_view resolution);

// An NVSwitch SXid number whose severity the driver's line does not settle (data/kb/sxid.yaml,
// our own words over NVIDIA's Fabric Manager guide): severity "fail" (the guide's recovery
// resets the GPUs or switches, or restarts the VM/node, whatever word the line prints), "warn",
// or "ignore" (the guide says it can be ignored).
struct KbSxid {
  long code = 0;
  std::string name, severity, meaning, action;
};

// A GPU kernel that is communication (data/kb/comm_kernels.yaml): `match` is the kernel's base name
// (parsers::kernel_base_name: no `void `, template or argument lists, namespaces kept) or a glob
// over it whose `*` is any run of characters; `kind` one of kCommKinds; `library` the name its time
// is reported under (profile.exposed_comm's subject).
struct KbCommKernel {
  std::string match, kind, library, note;
  std::string file;  // "builtin:data/kb/comm_kernels.yaml:12"
};
inline constexpr std::string_view kCommKinds[] = {"collective", "sendrecv", "expert_parallel", "one_sided", "copy"};
// The entry a kernel name matches: of several, the one with the most characters besides `*`
// (the more specific), the later of equals; nullptr when none does.
const KbCommKernel* match_comm_kernel(const std::vector<KbCommKernel>& table, std::string_view kernel_name);

// How far a measured figure may stand from the same figure of a reference run (bare metal, a
// known-good node), in multiples of the reference on its worse side: pass within `pass_within`,
// fail beyond `fail_beyond`, warn between (analyze perf-stat --reference, compare's TLB parity).
struct KbRatio {
  std::string id;  // the finding id it judges: perf_stat.dtlb
  double pass_within = 0, fail_beyond = 0;
  std::string why;
  std::string file;
};

// One file's content. Errors name the file and the line ("kb.d/site.yaml:7: cost_pct: ...").
struct KbFile {
  std::vector<KbImpact> impact;
  std::vector<KbMeasurement> measurements;
  std::vector<KbSymbol> symbols;
  std::vector<KbCause> causes;
  std::vector<KbXid> xids;
  std::vector<KbSxid> sxids;
  std::vector<KbRatio> ratios;
  std::vector<KbCommKernel> comm_kernels;
  std::string xid_catalogue;  // which catalogue (source and version) the xids follow
  std::string sxid_guide;     // which guide (and version) the sxids follow
};
tl::expected<KbFile, std::string> parse_kb(std::string_view text, const std::string& file);

struct Kb {
  std::map<std::string, KbImpact, std::less<>> impact;
  std::vector<KbMeasurement> measurements;  // in the order of the files, a later one replacing a name in place
  std::vector<KbSymbol> symbols;            // the built-in files' only
  std::vector<KbCause> causes;              // a later file's cause replaces the one of the same id in place
  std::map<long, KbXid> xids;               // by number; the built-in files' only
  std::map<long, KbSxid> sxids;             // by number; the built-in files' only
  std::map<std::string, KbRatio, std::less<>> ratios;  // by finding id; a later file's replaces
  std::vector<KbCommKernel> comm_kernels;   // a later file's entry replaces the one of the same match in place, or is added
  std::string xid_catalogue;                // the catalogue version the xids follow
  std::string sxid_guide;                   // the guide version the sxids follow

  const KbImpact* find(std::string_view id) const;
  // The cause an id belongs to: the first naming it exactly, else the first whose glob matches;
  // nullptr when none does (the id is its own cause).
  const KbCause* cause_of(std::string_view id) const;
  const KbCause* cause(std::string_view cause_id) const;
  // Adds a file over what is there: its entries replace those of the same id (measurement name).
  void overlay(KbFile file);
};

// The files of data/kb/ embedded in the binary, parsed once; a broken one is a build defect
// (its tests fail), reported as a throw naming it.
const Kb& builtin_kb();

// The built-in knowledge base, then every *.yaml of each directory in turn (sorted by name;
// a missing `/etc/perfgap/kb.d` is no error, a named `--kb DIR` that is not there is).
struct KbDir {
  std::string path;
  bool optional = false;
};
tl::expected<Kb, std::string> load_kb(const std::vector<KbDir>& dirs);

std::string_view to_string(KbImpact::Kind k);

// The files of data/kb/, defined in the source src/CMakeLists.txt generates from them.
struct KbEmbeddedFile {
  const char* name;  // "impact.yaml"
  const char* text;
};
extern const KbEmbeddedFile kKbEmbeddedFiles[];
extern const std::size_t kKbEmbeddedFileCount;

}  // namespace perfgap::core
