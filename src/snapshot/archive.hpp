// Where a captured tree goes (a directory or a .tar.gz, both written atomically) and how a
// .tar.gz comes back for `check --root`: extracted with libarchive into a private temporary
// directory that is removed when the replay ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <tl/expected.hpp>

#include "snapshot/capture.hpp"
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

// Bounds on what an archive may unpack to (tar bombs).
struct ExtractLimits {
  std::size_t max_entries = 1'000'000;
  std::uint64_t max_total_bytes = 4ull << 30;
  std::uint64_t max_entry_bytes = 256ull << 20;
};

// Unpacks a tar (gzip-compressed or not) into `dest`, an existing empty directory: regular
// files, directories and symbolic links only; no absolute names, no '..', nothing written
// through a link; file modes normalised (0644/0755). An error says what is wrong (without
// the archive's name); `dest` may then hold part of the archive.
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
  // Errors name `path` (one line, for the caller's "--root ...").
  static tl::expected<std::unique_ptr<ReplayRoot>, std::string> open(const std::string& path);

 private:
  ReplayRoot(sys::Sysroot root, std::string temp) : root_(std::move(root)), temp_(std::move(temp)) {}
  sys::Sysroot root_;
  std::string temp_;  // the unpacked archive's directory; empty for a directory
};

}  // namespace perfgap::snapshot
