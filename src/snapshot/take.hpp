// One `perfgap snapshot`, and the replayed tree `check --root` and `snapshot --root` read:
// the tree opened (a directory, or an archive unpacked) and its content checked; the capture of
// the declared reads from it (or the live system) written as a directory or OUT.tar.gz.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "snapshot/archive.hpp"
#include "snapshot/capture.hpp"

namespace perfgap::snapshot {

// A captured tree to read: ReplayRoot::open, then sys::check_tree_content (a tree that is not a
// node's is refused). Errors name `path`, one line, for the caller's "--root ...".
tl::expected<std::unique_ptr<ReplayRoot>, std::string> open_checked_root(const std::string& path);

struct TakeRequest {
  std::string out;        // a new or empty directory, or a path that names_archive()
  std::string root;       // empty: the live system; else a captured tree (directory or .tar.gz)
  std::vector<int> pids;  // empty: detect training processes as check does
  bool nvml = false;
};

struct Taken {
  Capture capture;
  std::string manifest;   // manifest_json: what --format json prints
};

// Captures and writes. The unpacked copy of a --root archive is removed before OUT is written.
// Errors (a bad --root, OUT not writable) are for exit status 2; a bad --root's says "--root ...".
tl::expected<Taken, std::string> take(const TakeRequest& request);

}  // namespace perfgap::snapshot
