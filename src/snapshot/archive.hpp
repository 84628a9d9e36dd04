// Where a captured tree goes (a directory or a .tar.gz, both written atomically) and how a
// .tar.gz comes back for `check --root`: extracted with libarchive into a private temporary
// directory that is removed when the replay ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <tl/expected.hpp>

#include "snapshot/capture.hpp"
#include "sys/stop_signals.hpp"
#include "sys/sysroot.hpp"

namespace perfgap::snapshot {

// "OUT.tar.gz" / "OUT.tgz": an archive; anything else: a directory.
bool names_archive(std::string_view path);

// Writes the tree plus .perfgap/snapshot.json (`manifest`). A directory OUT must not exist
// or be empty; it is built beside OUT and renamed into place, as the archive is. Errors
// name OUT and say why; nothing is left behind on failure.
tl::expected<void, std::string> write_directory(const Capture& c, const std::string& manifest, const std::string& out);
// The archive goes through sys::write_output: written atomically where OUT is a file (or a
// link to one), directly to a FIFO or device.
tl::expected<void, std::string> write_tar_gz(const Capture& c, const std::string& manifest, const std::string& out);
// The .tar.gz of a capture, in memory (errors without OUT's name).
tl::expected<std::string, std::string> tar_gz_bytes(const Capture& c, const std::string& manifest);

struct FreeSpace {
  std::uint64_t bytes = 0, inodes = 0;
};

// Bounds on what an archive may unpack to (tar bombs), all checked on a first pass over the
// headers before anything is written, and again while unpacking.
struct ExtractLimits {
  std::size_t max_entries = 1'000'000;
  std::uint64_t max_total_bytes = 4ull << 30;
  std::uint64_t max_entry_bytes = 256ull << 20;
  // The destination's free space; unset: statvfs of the destination (tests set it to stand
  // for a full file system).
  std::optional<FreeSpace> assume_free;
};

// What the first pass counted: entries, bytes of file data, and an estimate of the disk
// space they take (file data rounded up to blocks, a block per directory).
struct Needed {
  std::uint64_t entries = 0, bytes = 0, disk = 0;
};

// Unpacks a tar (gzip-compressed or not) into `dest`, an existing empty directory: regular
// files, directories and symbolic links only; no absolute names, no '..', nothing written
// through a link; file modes normalised (0644/0755). A first pass reads the headers only and
// refuses the archive (nothing written) when it breaks a limit or does not fit the
// destination's free space (blocks and inodes). An error says what is wrong (without the
// archive's name), write errors with their cause (ENOSPC, EFBIG, ...); `dest` may then hold
// part of the archive (ReplayRoot removes it).
tl::expected<void, std::string> extract(const std::string& archive, const std::string& dest, const ExtractLimits& limits = {});
tl::expected<void, std::string> extract_memory(const void* data, std::size_t size, const std::string& dest,
                                               const ExtractLimits& limits = {});

// A tree to replay: a directory as is, or an archive unpacked into a private directory under
// $TMPDIR (or /tmp) that is removed with this object.
class ReplayRoot {
 public:
  ~ReplayRoot();
  ReplayRoot(const ReplayRoot&) = delete;
  ReplayRoot& operator=(const ReplayRoot&) = delete;
  const sys::Sysroot& root() const { return root_; }
  // Errors name `path` (one line, for the caller's "--root ..."). While an unpacked tree
  // exists, SIGINT, SIGTERM and SIGHUP only set a flag: unpacking stops at once, the tree is
  // removed, and the destructor then re-raises the signal (the process ends as it would
  // have, exit 128+N, with nothing left behind).
  static tl::expected<std::unique_ptr<ReplayRoot>, std::string> open(const std::string& path, const ExtractLimits& limits = {});

 private:
  ReplayRoot(sys::Sysroot root, std::string temp) : root_(std::move(root)), temp_(std::move(temp)) {}
  void catch_signals();
  sys::Sysroot root_;
  std::string temp_;  // the unpacked archive's directory; empty for a directory
  std::unique_ptr<sys::StopSignals> signals_;  // while the unpacked tree exists
};

}  // namespace perfgap::snapshot
