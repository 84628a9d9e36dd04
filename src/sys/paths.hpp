// Paths perfgap names itself or is given: the small questions about them (is it there, a
// directory, empty, writable) and the small changes (make, remove, a temporary directory),
// so that no code outside sys/ touches the file system (CONTRIBUTING.md, "Lint":
// tools/lint-fs-in-sys.sh). Each is the one call it replaces, errors reported the same way:
// a bool with errno set, or std::filesystem's message. Reads of the node go through the
// Sysroot (sys/sysroot.hpp), files the user names through sys/named_file.hpp.
#pragma once

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tl/expected.hpp>

namespace perfgap::sys {

// ---- path strings (no file-system access) ------------------------------------------------

// The last component, as std::filesystem::path::filename gives it: what follows the last
// '/' ("" for "dir/").
std::string base_name(std::string_view path);
// std::filesystem::path::lexically_normal: "a/./b/../c" -> "a/c".
std::string lexically_normal(const std::string& path);
// std::filesystem::absolute: against the current directory, not normalised; the error is
// std::filesystem's message.
tl::expected<std::string, std::string> absolute_path(const std::string& path);
// `name` in the temporary directory ($TMPDIR when it is a directory, else /tmp), joined as
// std::filesystem joins: "/tmp/NAME".
std::string in_temp_directory(std::string_view name);

// ---- questions -----------------------------------------------------------------------------

// access(2): whether this process may reach (F_OK), read (R_OK), write (W_OK) or execute
// (X_OK) `path`.
bool can_access(const std::string& path, int mode);
bool exists(const std::string& path);  // can_access(path, F_OK)
// stat(2) follows a final link, lstat(2) does not: the stat, or the errno.
tl::expected<struct stat, int> stat_path(const std::string& path);
tl::expected<struct stat, int> lstat_path(const std::string& path);
// stat_path and S_ISDIR: false for anything else, or what cannot be stat'ed.
bool is_directory(const std::string& path);
// A directory with no entries (std::filesystem::is_empty); false when it cannot be read.
bool is_empty_directory(const std::string& path);
// statvfs(3) of the file system holding `path`, or the errno.
tl::expected<struct statvfs, int> stat_file_system(const std::string& path);
// std::filesystem::canonical: absolute, every link resolved; the error is its message.
tl::expected<std::string, std::string> canonical_path(const std::string& path);
// realpath(3), or nullopt.
std::optional<std::string> real_path(const std::string& path);
// readlink(2) of `path` (at most 4095 bytes), or nullopt when it is no link or unreadable.
std::optional<std::string> read_link(const std::string& path);
// The first `max_bytes` of a file ("" when it cannot be opened or read): small files of
// /proc, a file's magic bytes. Opened without waiting (O_NONBLOCK).
std::string read_file_head(const std::string& path, std::size_t max_bytes);

// One entry of list_directory: `regular` for a regular file or a link to one, `size` (its
// size) only then.
struct DirEntry {
  std::string name;
  bool regular = false;
  std::uint64_t size = 0;
};
struct DirListing {
  std::vector<DirEntry> entries;  // in the directory's order, without "." and ".."
  std::string error;              // std::filesystem's message when the listing failed or stopped
};
DirListing list_directory(const std::string& dir);

// ---- changes -------------------------------------------------------------------------------

// mkdir(2) with mode 0755: false with errno set.
bool make_directory(const std::string& path);
// std::filesystem::create_directories: the directory and its missing parents; the error is
// std::filesystem's message.
tl::expected<void, std::string> make_directories(const std::string& path);
// mkdtemp(3) / mkstemp(3): `tmpl` ends in XXXXXX, replaced by the name made; false with
// errno set. The temporary file is created empty and closed.
bool make_temp_directory(std::string& tmpl);
bool make_temp_file(std::string& tmpl);
// A file or an empty directory, and a whole tree: whatever is there goes, errors are ignored.
void remove_path(const std::string& path);
void remove_tree(const std::string& path);
// A file perfgap writes a stream into (a benchmark's log): created or truncated, mode 0644;
// the descriptor, or -1 with errno set. The caller writes and closes it.
int create_file(const std::string& path);
// Appends `text` in one write to `path` (created, mode 0644): false when it cannot be opened.
bool append_to_file(const std::string& path, const std::string& text);

// A new directory OUT built from `items` (paths relative to OUT, parents before children:
// directories, files with their bytes, symbolic links with their targets), in a temporary
// directory beside OUT (".NAME.tmp-XXXXXX", as write_atomically names its temporary) that
// is renamed into place: rename() replaces an empty directory and nothing else, so OUT
// appears whole or not at all. Nothing is written through a link. Why not, without OUT's
// name ("cannot create a directory beside it: ...", "proc/cpuinfo: ..."); nothing is left
// behind on failure.
struct NewItem {
  enum Kind { dir, file, link } kind = dir;
  const std::string* content = nullptr;  // a file's bytes, a link's target
};
tl::expected<void, std::string> write_new_directory(const std::string& out,
                                                    const std::vector<std::pair<std::string, NewItem>>& items);

}  // namespace perfgap::sys
