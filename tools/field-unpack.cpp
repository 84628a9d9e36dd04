// Unpacks the real machine trees of ../shared/field/trees into DIR and prints one line per
// sysroot found ("NAME<TAB>ROOT"), to run perfgap over them by hand (tools/field-run.sh):
//   build/tools/perfgap-field-unpack ../shared/field/trees /tmp/field
#include <cstdio>

#include "field.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s TREES_DIR DEST\n", argv[0]);
    return 2;
  }
  auto r = perfgap::fixture::unpack_field_trees(argv[1], argv[2]);
  if (!r) {
    std::fprintf(stderr, "%s\n", r.error().c_str());
    return 2;
  }
  for (const auto& t : *r) std::printf("%s\t%s\n", t.name.c_str(), t.root.c_str());
  return 0;
}
