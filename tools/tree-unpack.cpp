// Unpacks a fixture .tree file into a directory, to look at a case or run perfgap on it:
//   build/tools/perfgap-tree-unpack tests/fixtures/cases/base/ranks.tree /tmp/ranks
#include <cstdio>

#include "tree.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FILE.tree DIR\n", argv[0]);
    return 2;
  }
  auto r = perfgap::fixture::unpack_tree(argv[1], argv[2]);
  if (!r) {
    std::fprintf(stderr, "%s\n", r.error().c_str());
    return 2;
  }
  return 0;
}
