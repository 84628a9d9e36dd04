// check --history DIR: each run's JSON report kept in DIR (bounded, written atomically, under
// a lock), and what changed since the previous run and since the last run without `fail`
// (history.changed, history.since_good). The judging is a pure function of the reports
// (compare::ReportView, the one report reader); the disk side only lists, reads, writes and
// removes DIR's own perfgap-run-* files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "compare/compare.hpp"
#include "report/model.hpp"

namespace perfgap::history {

inline constexpr const char* kRunPrefix = "perfgap-run-";
inline constexpr const char* kLockName = ".perfgap-history.lock";

struct Limits {
  std::size_t max_runs = 96;                // a day of 15-minute runs
  std::uint64_t max_bytes = 64ull << 20;    // all kept runs together
};

struct Run {
  std::string file;  // name in DIR
  compare::ReportView view;
};

struct Past {
  std::string dir;                    // the directory as given (load): the fixes' commands name it
  std::vector<Run> runs;              // this node's check reports, oldest first
  std::vector<std::string> skipped;   // "NAME: why" for files not used (corrupt, foreign, another node's)
};

// history.changed (against the newest past run) and history.since_good (against the newest
// past run without a fail finding) for the report `now`. Findings are matched by (id,
// subject); history.* findings of earlier runs are not compared.
std::vector<report::Finding> judge(const compare::ReportView& now, const Past& past);

// The findings judge() gives when DIR could not be used (busy, unreadable): both skip, naming why.
std::vector<report::Finding> unusable(const std::string& dir, const std::string& why);

// DIR's runs of node `node` ("" takes any node), by sequence; other files named in `skipped`
// (DIR's lock and temporary files excepted).
Past load(const std::string& dir, const std::string& node);

// Writes `report_json` as DIR's next run, then removes the oldest runs beyond `limits` (never
// the one just written). Returns the new file's name.
tl::expected<std::string, std::string> keep(const std::string& dir, const std::string& report_json, const std::string& generated_at,
                                            const Limits& limits);

// `perfgap history DIR`'s listing: one history.run finding per kept run (its worst status and
// the ids that failed or warned), then one skip finding per file not used.
std::vector<report::Finding> listing(const Past& past);

// A kept run named as `history --compare` takes it: "latest", "previous", a 1-based position in
// the listing, or a file name. The error says which runs there are, for exit status 2.
tl::expected<const Run*, std::string> find_run(const Past& past, const std::string& ref);

// The history step of check --history DIR: under DIR's lock, the findings of what changed
// (judge) join `report`, then the report is kept (keep). A busy or unusable DIR is said in
// those findings (unusable); the check itself still reports.
void record_run(const std::string& dir, report::Report& report);

}  // namespace perfgap::history
