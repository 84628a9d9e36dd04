// The snapshot archive extraction (check --root X.tar.gz) on arbitrary bytes: never crashes,
// never writes outside its destination, and a refusal is one line saying why. Seeds: real
// snapshots and hostile archives in tests/fixtures/snapshot/ (copy them into
// fuzz/corpus/snapshot_extract/ to start from them).
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "fuzz_common.hpp"
#include "snapshot/archive.hpp"

namespace fs = std::filesystem;

namespace {

// <scratch>/outer/dest: an escape through '..' or a link lands in outer or scratch.
const fs::path& scratch() {
  static const fs::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string t = std::string(tmp && *tmp ? tmp : "/tmp") + "/perfgap-fuzz-extract.XXXXXX";
    FUZZ_CHECK(::mkdtemp(t.data()) != nullptr);
    return fs::path(t);
  }();
  return dir;
}

bool only_child(const fs::path& dir, const char* name) {
  int n = 0;
  bool found = false;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++n;
    found = found || e.path().filename() == name;
  }
  return n == 1 && found;
}

}  // namespace

PERFGAP_FUZZ_TARGET(snapshot_extract) {
  const fs::path outer = scratch() / "outer", dest = outer / "dest";
  fs::create_directories(dest);
  perfgap::snapshot::ExtractLimits limits;
  limits.max_entries = 2000;
  limits.max_total_bytes = 8u << 20;
  limits.max_entry_bytes = 4u << 20;
  auto r = perfgap::snapshot::extract_memory(data, size, dest.string(), limits);
  if (!r) FUZZ_CHECK(!r.error().empty() && r.error().find('\n') == std::string::npos);
  FUZZ_CHECK(only_child(scratch(), "outer"));
  FUZZ_CHECK(only_child(outer, "dest"));
  std::error_code ec;
  fs::remove_all(dest, ec);
  FUZZ_CHECK(!ec);
  return 0;
}
