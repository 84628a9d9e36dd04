// The inputs an analyzer or fleet is given (REPORTS..., a job's rank files), expanded into
// files: a directory gives its files that a filter takes (not recursive, hidden ones
// skipped, sorted), a quoted glob its matches (as glob(3) finds them), anything else is
// taken as a file. Moved here from fleet/ so that the file system is read only in sys/.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace perfgap::sys {

// An input that named nothing readable, and why (fleet.unreadable, analyze's skipped inputs).
struct InputProblem {
  std::string file;
  std::string why;
};

struct ExpandedInputs {
  std::vector<std::string> files;       // in argument order; a directory's and a glob's sorted; no repeats
  std::vector<InputProblem> problems;   // arguments that named nothing readable
  // Of `files`, those found by listing a directory or matching a glob, not named one by one: a
  // file there that is not of the kind asked for (a config.json beside the traces) is left aside.
  std::unordered_set<std::string> listed;
};
// A directory gives its files whose names `accept` takes (`what` names them when there is
// none: "directory holds no WHAT"), a quoted glob its matches ("no file matches this
// pattern"). A name that exists is taken literally, even with glob characters in it; a
// missing or unreadable file is left for its reader to report.
ExpandedInputs expand_inputs(const std::vector<std::string>& args, const std::function<bool(std::string_view)>& accept,
                             const std::string& what);

}  // namespace perfgap::sys
