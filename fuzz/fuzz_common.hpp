// Shared helpers of the libFuzzer targets: an invariant check that aborts (so libFuzzer
// records the input as a crash), the text view of the fuzzer's bytes, and the registration of
// a target. Every target lives in one executable (perfgap-fuzz, fuzz/driver.cpp): its library
// and headers are compiled once, not once per target; `fuzz_<name>` is a link to it, and the
// name it is started by picks the target.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(cond)                                                               \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)

namespace perfgap::fuzz {
using Target = int (*)(const std::uint8_t* data, std::size_t size);
// Adds NAME to the targets the driver can run; called once per target at static init.
bool register_target(const char* name, Target target);

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}
}  // namespace perfgap::fuzz

// PERFGAP_FUZZ_TARGET(name) { ...body over data, size... }: the target `name`, run by
// build-fuzz/fuzz/fuzz_<name> (the file fuzz/fuzz_<name>.cpp, tools/run-fuzz.sh).
#define PERFGAP_FUZZ_TARGET(name)                                                              \
  static int perfgap_fuzz_target_##name(const std::uint8_t* data, std::size_t size);          \
  [[maybe_unused]] static const bool perfgap_fuzz_registered_##name =                          \
      perfgap::fuzz::register_target(#name, perfgap_fuzz_target_##name);                      \
  static int perfgap_fuzz_target_##name(const std::uint8_t* data, std::size_t size)
