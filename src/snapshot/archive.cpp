#include "snapshot/archive.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <cstring>
#include <ctime>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "sys/output.hpp"
#include "sys/paths.hpp"
#include "sys/text.hpp"

namespace perfgap::snapshot {
namespace {

constexpr const char* kManifestPath = "/.perfgap/snapshot.json";

std::string errno_text(int err) { return std::strerror(err); }

std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// Every path to write (the tree, the manifest, and the directories they imply), parents
// before children. Entries never lie below a link: the capture records real paths only,
// and a writer that followed a link could leave OUT.
struct Plan {
  std::map<std::string, const Entry*> items;  // "/proc/cpuinfo" -> entry; null: implied directory
};

// `manifest` must outlive the plan.
tl::expected<Plan, std::string> plan(const Capture& c, const Entry& manifest) {
  Plan p;
  auto add = [&](const std::string& path, const Entry* e) -> tl::expected<void, std::string> {
    for (auto slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
      auto parent = path.substr(0, slash);
      auto it = p.items.find(parent);
      if (it == p.items.end()) p.items.emplace(parent, nullptr);
      else if (it->second && it->second->kind != Entry::dir)
        return tl::unexpected(path + " lies below " + parent + ", which is not a directory in the capture");
    }
    auto [it, fresh] = p.items.emplace(path, e);
    if (!fresh && it->second == nullptr) {
      if (e->kind != Entry::dir) return tl::unexpected(path + " is both a directory and not one in the capture");
      it->second = e;
    }
    return {};
  };
  for (const auto& [path, e] : c.entries) {
    if (path.size() < 2 || path.front() != '/' || path == kManifestPath) continue;
    if (auto r = add(path, &e); !r) return tl::unexpected(r.error());
  }
  if (auto r = add(kManifestPath, &manifest); !r) return tl::unexpected(r.error());
  return p;
}

tl::expected<void, std::string> archive_failure(struct archive* a, const std::string& what) {
  const char* msg = archive_error_string(a);
  return tl::unexpected(one_line(what + (msg ? std::string(": ") + msg : std::string())));
}

// Bytes and names of one entry, stripped of leading "./"; "" for the archive's root itself.
tl::expected<std::string, std::string> safe_name(const char* raw) {
  if (raw == nullptr) return tl::unexpected(std::string("an entry without a name"));
  std::string_view name(raw);
  if (name.size() > 4096) return tl::unexpected(std::string("an entry name longer than 4096 bytes"));
  if (!name.empty() && name.front() == '/') return tl::unexpected("absolute entry name " + std::string(name));
  std::string out;
  for (auto part : sys::split(name, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return tl::unexpected("entry name with '..': " + std::string(name));
    if (!out.empty()) out.push_back('/');
    out.append(part);
  }
  return out;
}

// The unpack loops stop when the StopSignals that ReplayRoot holds while it owns an unpacked
// tree has caught a signal.
tl::expected<void, std::string> interrupted() {
  return tl::unexpected("interrupted by signal " + std::to_string(sys::StopSignals::pending()));
}

std::string mib_text(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// A write error with its cause: libarchive's message, and the errno's text where the message
// does not already say it (ENOSPC: "No space left on device").
tl::expected<void, std::string> write_failure(struct archive* out, const std::string& what) {
  std::string msg = archive_error_string(out) ? archive_error_string(out) : "write failed";
  int err = archive_errno(out);
  if (err > 0) {
    std::string cause = std::strerror(err);
    if (msg.find(cause) == std::string::npos) msg += ": " + cause;
  }
  return tl::unexpected(one_line(what + ": " + msg));
}

// The per-entry rules, shared by the scan and the unpack. Returns the entry's clean name
// ("" for the root) or why it is refused.
tl::expected<std::string, std::string> check_entry(struct archive_entry* e, const ExtractLimits& limits) {
  auto name = safe_name(archive_entry_pathname(e));
  if (!name) return tl::unexpected(name.error());
  if (archive_entry_hardlink(e) != nullptr) return tl::unexpected("hard link entry " + *name + " (snapshots hold none)");
  const auto type = archive_entry_filetype(e);
  if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
    return tl::unexpected("entry " + *name + " is not a file, directory or symbolic link");
  if (type == AE_IFREG) {
    auto size = archive_entry_size(e);
    if (size < 0 || static_cast<std::uint64_t>(size) > limits.max_entry_bytes)
      return tl::unexpected("entry " + *name + " larger than " + mib_text(limits.max_entry_bytes));
  }
  return name;
}

// Pass 1: headers only (no data is decompressed into anything), with every limit enforced
// as the entries arrive, so a bomb of a million empty files stops at the limit, in seconds,
// before one byte is written.
tl::expected<Needed, std::string> scan_from(struct archive* in, const ExtractLimits& limits, std::uint64_t block) {
  Needed need;
  for (;;) {
    if (sys::StopSignals::pending()) return tl::unexpected(interrupted().error());
    struct archive_entry* e = nullptr;
    int rc = archive_read_next_header(in, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) return tl::unexpected(archive_failure(in, "not a readable tar.gz archive").error());
    if (++need.entries > limits.max_entries) return tl::unexpected("more than " + std::to_string(limits.max_entries) + " entries");
    auto name = check_entry(e, limits);
    if (!name) return tl::unexpected(name.error());
    if (archive_entry_filetype(e) == AE_IFREG) {
      auto size = static_cast<std::uint64_t>(archive_entry_size(e));
      need.bytes += size;
      if (need.bytes > limits.max_total_bytes) return tl::unexpected("unpacks to more than " + mib_text(limits.max_total_bytes));
      need.disk += (size + block - 1) / block * block;
    } else if (archive_entry_filetype(e) == AE_IFDIR) {
      need.disk += block;
    }
  }
  if (need.entries == 0) return tl::unexpected(std::string("an archive with no entries"));
  // The stream itself must be whole: reading to the end checks the gzip trailer.
  return need;
}

// Whether `dest`'s file system can hold what the scan counted (blocks and inodes), with
// the free space of statvfs, or limits.assume_free where a test sets it.
tl::expected<void, std::string> check_space(const std::string& dest, const Needed& need, const ExtractLimits& limits) {
  FreeSpace free;
  if (limits.assume_free) {
    free = *limits.assume_free;
  } else {
    auto st = sys::stat_file_system(dest);
    if (!st) return tl::unexpected(dest + ": " + errno_text(st.error()));
    const struct statvfs& vfs = *st;
    free.bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    // Some file systems (tmpfs without nr_inodes, btrfs) report no inode count: no limit.
    free.inodes = vfs.f_files == 0 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(vfs.f_favail);
  }
  if (need.disk > free.bytes)
    return tl::unexpected("needs " + mib_text(need.disk) + " but " + dest + " has " + mib_text(free.bytes) + " free");
  if (need.entries > free.inodes)
    return tl::unexpected("needs " + std::to_string(need.entries) + " files but " + dest + " has " + std::to_string(free.inodes) + " inodes free");
  return {};
}

// Pass 2: the same rules again (the file could have changed since the scan), and every
// write error with its cause.
tl::expected<void, std::string> extract_from(struct archive* in, const std::string& dest, const ExtractLimits& limits) {
  auto real = sys::canonical_path(dest);  // libarchive refuses paths through links, /tmp's own included
  if (!real) return tl::unexpected(dest + ": " + real.error());
  struct archive* out = archive_write_disk_new();
  if (out == nullptr) return tl::unexpected(std::string("out of memory"));
  // No owners, times, ACLs, xattrs or flags from the archive; modes are set below.
  archive_write_disk_set_options(out, ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  auto finish = [&](tl::expected<void, std::string> r) {
    archive_write_free(out);
    return r;
  };
  std::size_t entries = 0;
  std::uint64_t total = 0;
  for (;;) {
    if (sys::StopSignals::pending()) return finish(interrupted());
    struct archive_entry* e = nullptr;
    int rc = archive_read_next_header(in, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) return finish(archive_failure(in, "not a readable tar.gz archive"));
    if (++entries > limits.max_entries)
      return finish(tl::unexpected("more than " + std::to_string(limits.max_entries) + " entries"));
    auto name = check_entry(e, limits);
    if (!name) return finish(tl::unexpected(name.error()));
    const auto type = archive_entry_filetype(e);
    if (name->empty()) continue;  // "./": the root, which exists
    if (type == AE_IFREG) {
      auto size = static_cast<std::uint64_t>(archive_entry_size(e));
      if (total + size > limits.max_total_bytes)
        return finish(tl::unexpected("unpacks to more than " + mib_text(limits.max_total_bytes)));
    }
    archive_entry_set_pathname(e, sys::join(*real, *name).c_str());
    archive_entry_set_perm(e, type == AE_IFDIR ? 0755 : 0644);
    if (archive_write_header(out, e) < ARCHIVE_WARN) return finish(write_failure(out, "cannot unpack " + *name));
    if (type != AE_IFREG) continue;
    const void* buf = nullptr;
    std::size_t len = 0;
    la_int64_t offset = 0;
    for (;;) {
      if (sys::StopSignals::pending()) return finish(interrupted());
      rc = archive_read_data_block(in, &buf, &len, &offset);
      if (rc == ARCHIVE_EOF) break;
      if (rc < ARCHIVE_WARN) return finish(archive_failure(in, "not a readable tar.gz archive"));
      total += len;
      if (total > limits.max_total_bytes)
        return finish(tl::unexpected("unpacks to more than " + mib_text(limits.max_total_bytes)));
      if (archive_write_data_block(out, buf, len, offset) < ARCHIVE_WARN) return finish(write_failure(out, "cannot unpack " + *name));
    }
    if (archive_write_finish_entry(out) < ARCHIVE_WARN) return finish(write_failure(out, "cannot unpack " + *name));
  }
  if (entries == 0) return finish(tl::unexpected(std::string("an archive with no entries")));
  if (archive_write_close(out) != ARCHIVE_OK) return finish(write_failure(out, "cannot finish unpacking"));
  return finish({});
}

struct archive* new_reader() {
  struct archive* in = archive_read_new();
  if (in == nullptr) return nullptr;
  // gzip or plain tar only: support_filter_all would also run external programs (lzop, ...).
  archive_read_support_filter_gzip(in);
  archive_read_support_format_tar(in);
  return in;
}

}  // namespace

bool names_archive(std::string_view path) {
  auto ends = [&](std::string_view s) { return path.size() > s.size() && path.substr(path.size() - s.size()) == s; };
  return ends(".tar.gz") || ends(".tgz");
}

tl::expected<void, std::string> write_directory(const Capture& c, const std::string& manifest, const std::string& out) {
  if (auto st = sys::lstat_path(out)) {
    if (!S_ISDIR(st->st_mode)) return tl::unexpected(out + ": exists and is not a directory");
    if (!sys::is_empty_directory(out)) return tl::unexpected(out + ": exists and is not empty (a snapshot goes into a new or empty directory)");
  } else if (st.error() != ENOENT) {
    return tl::unexpected(out + ": " + errno_text(st.error()));
  }
  const Entry manifest_entry{Entry::file, manifest};
  auto p = plan(c, manifest_entry);
  if (!p) return tl::unexpected(out + ": " + p.error());
  std::vector<std::pair<std::string, sys::NewItem>> items;
  items.reserve(p->items.size());
  for (const auto& [path, e] : p->items) {
    sys::NewItem item;
    if (e != nullptr && e->kind == Entry::link) item = {sys::NewItem::link, &e->content};
    else if (e != nullptr && e->kind != Entry::dir) item = {sys::NewItem::file, &e->content};
    items.emplace_back(path.substr(1), item);
  }
  if (auto w = sys::write_new_directory(out, items); !w) return tl::unexpected(out + ": " + w.error());
  return {};
}

tl::expected<std::string, std::string> tar_gz_bytes(const Capture& c, const std::string& manifest) {
  const Entry manifest_entry{Entry::file, manifest};
  auto p = plan(c, manifest_entry);
  if (!p) return tl::unexpected(p.error());
  std::string bytes;
  struct archive* a = archive_write_new();
  if (a == nullptr) return tl::unexpected(std::string("out of memory"));
  auto fail = [&](const std::string& why) -> tl::expected<std::string, std::string> {
    archive_write_free(a);
    return tl::unexpected(one_line(why));
  };
  auto error_or = [&](const char* fallback) { return std::string(archive_error_string(a) ? archive_error_string(a) : fallback); };
  auto append = [](struct archive*, void* self, const void* buf, std::size_t n) -> la_ssize_t {
    static_cast<std::string*>(self)->append(static_cast<const char*>(buf), n);
    return static_cast<la_ssize_t>(n);
  };
  // pax_restricted: plain ustar headers, pax extensions only for long names or large files.
  if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK || archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
      archive_write_set_filter_option(a, "gzip", "compression-level", "1") != ARCHIVE_OK ||
      archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
      archive_write_open2(a, &bytes, nullptr, append, nullptr, nullptr) != ARCHIVE_OK)
    return fail(error_or("cannot start the archive"));
  struct archive_entry* e = archive_entry_new();
  const std::time_t now = std::time(nullptr);
  for (const auto& [path, item] : p->items) {
    archive_entry_clear(e);
    archive_entry_set_pathname(e, path.c_str() + 1);
    archive_entry_set_mtime(e, now, 0);
    archive_entry_set_uid(e, 0);
    archive_entry_set_gid(e, 0);
    if (item == nullptr || item->kind == Entry::dir) {
      archive_entry_set_filetype(e, AE_IFDIR);
      archive_entry_set_perm(e, 0755);
    } else if (item->kind == Entry::link) {
      archive_entry_set_filetype(e, AE_IFLNK);
      archive_entry_set_perm(e, 0777);
      archive_entry_set_symlink(e, item->content.c_str());
    } else {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_perm(e, 0644);
      archive_entry_set_size(e, static_cast<la_int64_t>(item->content.size()));
    }
    if (archive_write_header(a, e) != ARCHIVE_OK ||
        (item != nullptr && item->kind == Entry::file && !item->content.empty() &&
         archive_write_data(a, item->content.data(), item->content.size()) != static_cast<la_ssize_t>(item->content.size()))) {
      std::string why = path + ": " + error_or("cannot write");
      archive_entry_free(e);
      return fail(why);
    }
  }
  archive_entry_free(e);
  if (archive_write_close(a) != ARCHIVE_OK) return fail(error_or("cannot finish the archive"));
  archive_write_free(a);
  return bytes;
}

tl::expected<void, std::string> write_tar_gz(const Capture& c, const std::string& manifest, const std::string& out) {
  auto bytes = tar_gz_bytes(c, manifest);
  if (!bytes) return tl::unexpected(out + ": " + bytes.error());
  return sys::write_output(out, *bytes);
}

namespace {

// Both passes over one archive, each from a fresh reader that `open` prepares.
template <class Open>
tl::expected<void, std::string> scan_then_extract(Open open, const std::string& dest, const ExtractLimits& limits) {
  const auto vfs = sys::stat_file_system(dest);
  const std::uint64_t block = vfs && vfs->f_frsize > 0 ? vfs->f_frsize : 4096;
  for (int pass = 0; pass < 2; ++pass) {
    struct archive* in = new_reader();
    if (in == nullptr) return tl::unexpected(std::string("out of memory"));
    tl::expected<void, std::string> r;
    if (auto o = open(in); !o) {
      r = tl::unexpected(o.error());
    } else if (pass == 0) {
      auto need = scan_from(in, limits, block);
      if (!need) r = tl::unexpected(need.error());
      else r = check_space(dest, *need, limits);
    } else {
      r = extract_from(in, dest, limits);
    }
    archive_read_free(in);
    if (!r) return r;
  }
  return {};
}

}  // namespace

tl::expected<void, std::string> extract(const std::string& archive, const std::string& dest, const ExtractLimits& limits) {
  return scan_then_extract(
      [&](struct archive* in) -> tl::expected<void, std::string> {
        if (archive_read_open_filename(in, archive.c_str(), 1 << 16) != ARCHIVE_OK) return archive_failure(in, "cannot open");
        return {};
      },
      dest, limits);
}

tl::expected<void, std::string> extract_memory(const void* data, std::size_t size, const std::string& dest, const ExtractLimits& limits) {
  return scan_then_extract(
      [&](struct archive* in) -> tl::expected<void, std::string> {
        if (archive_read_open_memory(in, data, size) != ARCHIVE_OK) return archive_failure(in, "not a readable tar.gz archive");
        return {};
      },
      dest, limits);
}

ReplayRoot::~ReplayRoot() {
  if (temp_.empty()) return;
  sys::remove_tree(temp_);
  // The tree is gone: the signal that came meanwhile now takes its normal course.
  signals_.reset();
  sys::StopSignals::raise_pending();
}

void ReplayRoot::catch_signals() { signals_ = std::make_unique<sys::StopSignals>(); }

tl::expected<std::unique_ptr<ReplayRoot>, std::string> ReplayRoot::open(const std::string& path, const ExtractLimits& limits) {
  auto found = sys::stat_path(path);
  // "node17.tar.gz/node17": the tree inside an archive (as check_tree_content suggests for an
  // archive of "node17/proc/..."): the archive unpacked, the tree below it replayed.
  std::string archive = path, inner;
  if (!found) {
    for (auto slash = path.rfind('/'); slash != std::string::npos && slash > 0; slash = path.rfind('/', slash - 1)) {
      const std::string head = path.substr(0, slash);
      auto st = sys::stat_path(head);
      if (!st) continue;
      if (S_ISREG(st->st_mode) && names_archive(head)) {
        archive = head;
        inner = path.substr(slash + 1);
        found = st;
      }
      break;
    }
    const bool climbs = inner.find("..") != std::string::npos;
    if (!found || climbs) return tl::unexpected(path + ": " + (climbs ? std::string("a path inside an archive may not climb with ..") : errno_text(found.error())));
  }
  const struct stat& st = *found;
  if (S_ISDIR(st.st_mode)) {
    auto r = sys::Sysroot::at(path);
    if (!r) return tl::unexpected(r.error());
    return std::unique_ptr<ReplayRoot>(new ReplayRoot(std::move(*r), ""));
  }
  // A file is taken for an archive by its name or its gzip magic; anything else is a
  // mistaken path, said as such.
  auto gzip_magic = [&] {
    const std::string magic = sys::read_file_head(archive, 2);
    return magic.size() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f && static_cast<unsigned char>(magic[1]) == 0x8b;
  };
  if (!S_ISREG(st.st_mode) || (!names_archive(archive) && !gzip_magic())) {
    // A test fixture's text form (docs/FIXTURES.md) is the likeliest such file: say how to use it.
    if (S_ISREG(st.st_mode) && path.size() > 5 && path.compare(path.size() - 5, 5, ".tree") == 0)
      return tl::unexpected(path + ": a fixture tree as text, not a directory: unpack it first with perfgap-tree-unpack FILE.tree DIR (docs/FIXTURES.md)");
    return tl::unexpected(path + ": not a directory (nor a .tar.gz snapshot)");
  }
  const char* tmpdir = std::getenv("TMPDIR");
  std::string temp = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/perfgap-root.XXXXXX";
  if (!sys::make_temp_directory(temp)) return tl::unexpected(path + ": cannot create a directory to unpack it: " + temp + ": " + errno_text(errno));
  // From here the directory belongs to the ReplayRoot, whose destructor removes it, on an
  // error, a signal (SIGINT, SIGTERM, SIGHUP: caught until then) or the end of the replay.
  std::unique_ptr<ReplayRoot> replay(new ReplayRoot(sys::Sysroot::live(), temp));
  replay->catch_signals();
  // A file written past RLIMIT_FSIZE is an EFBIG error to report, not a SIGXFSZ to die of.
  ::signal(SIGXFSZ, SIG_IGN);
  if (auto x = extract(archive, temp, limits); !x) return tl::unexpected(one_line(archive + ": " + x.error()));
  if (!inner.empty()) {
    auto below = sys::stat_path(temp + "/" + inner);
    if (!below || !S_ISDIR(below->st_mode)) return tl::unexpected(path + ": no directory " + inner + "/ in " + archive);
  }
  auto r = sys::Sysroot::at(inner.empty() ? temp : temp + "/" + inner);
  if (!r) return tl::unexpected(path + ": " + r.error());
  replay->root_ = std::move(*r);
  return replay;
}

}  // namespace perfgap::snapshot
