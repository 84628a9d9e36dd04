// Real machine trees as other projects publish them (../shared/field/trees): tarballs of
// sysroots (hwloc, util-linux, ghw, nri-plugins) and Prometheus text archives (.ttar, from
// prometheus/procfs and node_exporter). Unpacked for tests and for looking at them by hand
// (build/tools/perfgap-field-unpack); never copied into the project.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

namespace perfgap::fixture {

// Writes the files of a ttar archive (Directory:/Path:/Lines:/Mode:/SymlinkTo:, NULLBYTE for
// NUL, a final EOF for "no newline") under `dest`. Errors name the archive and line.
tl::expected<void, std::string> unpack_ttar(std::string_view text, const std::string& name, const std::string& dest);

// One field tree: a directory that holds proc/ or sys/ as a node presents them.
struct FieldTree {
  std::string name;  // archive and the path inside it: "hwloc/2arm-2c.tar.bz2:2arm-2c"
  std::string root;  // directory to pass as --root
};

// Unpacks every archive under `trees_dir` into `dest` (one subdirectory per archive; the
// node_exporter proc tarball and sys.ttar share one) and lists the sysroots found inside.
tl::expected<std::vector<FieldTree>, std::string> unpack_field_trees(const std::string& trees_dir,
                                                                     const std::string& dest);

}  // namespace perfgap::fixture
