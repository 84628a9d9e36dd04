// Where a rendered report (or snapshot archive) goes. Every --output of every command, and
// snapshot's OUT.tar.gz, goes through write_output:
//   ""/"-"                         standard output
//   a regular file, or no file     written atomically (temp file beside it + rename)
//   a symbolic link                its target, by those rules (the link stays a link);
//                                  /dev/stdout and /dev/fd/N of our own stdout/stderr are
//                                  written through that descriptor
//   a character device, FIFO or    written directly, never renamed over (/dev/null stays
//   socket                         /dev/null; a FIFO's reader gets the report)
//   anything else (a directory)    an error naming the path; nothing is written
#pragma once

#include <string>

#include <tl/expected.hpp>

namespace perfgap::sys {

tl::expected<void, std::string> write_output(const std::string& path, const std::string& content);
// The same decision as write_output without writing anything (a sweep checks its --output
// before hours of runs): an error names the path and says why.
tl::expected<void, std::string> check_output(const std::string& path);
bool output_is_stdout(const std::string& path);  // "" or "-"

// Temp file beside `path` + rename: for files perfgap owns (health state, sweep manifest).
tl::expected<void, std::string> write_atomically(const std::string& path, const std::string& content);
tl::expected<void, std::string> write_stdout(const std::string& content);
// A directory for files perfgap writes (whatif --digest DIR): made with its parents where
// missing; an error says why not ("is a file", "cannot create: ...").
tl::expected<void, std::string> make_output_directory(const std::string& path);

}  // namespace perfgap::sys
