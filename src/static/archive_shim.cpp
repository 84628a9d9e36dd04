// Static build only (PERFGAP_STATIC): two libarchive-internal functions, defined here so the
// linker never pulls the libarchive.a members that hold them, and with them every format
// perfgap does not use. libarchive 3.6 keeps
//   __archive_write_entry_filetype_unsupported (called by the pax/ustar writer) in
//     archive_write_set_format.o, whose format table references the 7zip, cpio, iso9660,
//     mtree, shar, warc, xar (libxml2 -> ICU) and zip (nettle, lzma, bz2) writers;
//   archive_write_disk_set_acls (called by archive_write_disk) in archive_disk_acl_linux.o,
//     which needs libacl and archive_read_disk (group-name lookups through NSS).
// perfgap writes tar (pax restricted) + gzip and extracts without ARCHIVE_EXTRACT_ACL, so
// neither replaced member would ever run. The link map check (tests/release) proves the
// members stay out; a libarchive that moves these functions shows up there or as a
// duplicate-symbol error at link time, never silently.
#include <archive.h>
#include <archive_entry.h>

#include <cerrno>
#include <sys/types.h>

// libarchive's private archive_private.h: EFTYPE where it exists (not on Linux), else EINVAL.
#define ARCHIVE_ERRNO_FILE_FORMAT EINVAL
#define ARCHIVE_ERRNO_MISC (-1)

extern "C" {

// As libarchive 3.6.2's: the entry's type cannot be written in this format.
void __archive_write_entry_filetype_unsupported(struct archive* a, struct archive_entry* entry, const char* format) {
  const char* name = nullptr;
  switch (archive_entry_filetype(entry)) {
    case AE_IFDIR: name = "directories"; break;
    case AE_IFLNK: name = "symbolic links"; break;
    case AE_IFCHR: name = "character devices"; break;
    case AE_IFBLK: name = "block devices"; break;
    case AE_IFIFO: name = "named pipes"; break;
    case AE_IFSOCK: name = "sockets"; break;
    default: break;
  }
  if (name)
    archive_set_error(a, ARCHIVE_ERRNO_FILE_FORMAT, "%s: %s format cannot archive %s", archive_entry_pathname(entry), format, name);
  else
    archive_set_error(a, ARCHIVE_ERRNO_FILE_FORMAT, "%s: %s format cannot archive files with mode 0%lo",
                      archive_entry_pathname(entry), format, static_cast<unsigned long>(archive_entry_mode(entry)));
}

// Only reached with ARCHIVE_EXTRACT_ACL, which perfgap never sets: say so rather than
// pretend the ACLs were restored.
struct archive_acl;
int archive_write_disk_set_acls(struct archive* a, int /*fd*/, const char* name, struct archive_acl* /*acl*/, mode_t /*mode*/) {
  archive_set_error(a, ARCHIVE_ERRNO_MISC, "%s: ACLs are not restored by the static perfgap", name ? name : "?");
  return ARCHIVE_WARN;
}

}  // extern "C"
