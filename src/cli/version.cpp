#include "cli/version.hpp"

#include <fmt/format.h>

// PERFGAP_VERSION, PERFGAP_GIT_COMMIT and PERFGAP_BUILD_TYPE are defined by src/CMakeLists.txt.
namespace perfgap::cli {

std::string version_text() {
#if defined(__x86_64__)
  constexpr const char* arch = "x86_64";
#elif defined(__aarch64__)
  constexpr const char* arch = "aarch64";
#else
  constexpr const char* arch = "unknown";
#endif
#if defined(PERFGAP_STATIC_BUILD)
  constexpr const char* linkage = "static";
#else
  constexpr const char* linkage = "dynamic";
#endif
  return fmt::format("perfgap {}\ncommit: {}\nbuild: {}\narch: {}\nlinkage: {}", PERFGAP_VERSION, PERFGAP_GIT_COMMIT,
                     PERFGAP_BUILD_TYPE, arch, linkage);
}

}  // namespace perfgap::cli
