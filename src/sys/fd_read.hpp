// Reads an open descriptor to its end within a size limit, and closes it: the one read loop
// behind Sysroot::read (tree and live files) and read_named_file (files named by the user).
#pragma once

#include <cstddef>
#include <string>

namespace perfgap::sys {

enum class FdRead { ok, too_large, error };

// Appends to `out`; on `error`, `err` holds errno. EAGAIN (a non-blocking device with
// nothing queued) ends the read as `ok` with what came so far.
FdRead read_fd_to_end(int fd, std::size_t max_bytes, std::string& out, int& err);

}  // namespace perfgap::sys
