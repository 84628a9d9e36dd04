// maps_mention: never crashes; it only answers true for a needle the text contains, and
// an empty needle matches exactly when some line names a file (holds a '/').
#include "fuzz_common.hpp"
#include "parsers/procfs.hpp"

using perfgap::parsers::maps_mention;

PERFGAP_FUZZ_TARGET(maps_mention) {
  auto text = perfgap::fuzz::as_text(data, size);
  for (std::string_view needle : {"libnccl", "libcuda.so", "nvidia", "x", "/"}) {
    if (maps_mention(text, {needle})) FUZZ_CHECK(text.find(needle) != std::string_view::npos);
  }
  FUZZ_CHECK(!maps_mention(text, {"/"}));  // a base name never holds a '/'
  FUZZ_CHECK(maps_mention(text, {""}) == (text.find('/') != std::string_view::npos));
  FUZZ_CHECK(maps_mention(text, {"libnccl", "libcuda"}) ==
             (maps_mention(text, {"libnccl"}) || maps_mention(text, {"libcuda"})));
  return 0;
}
