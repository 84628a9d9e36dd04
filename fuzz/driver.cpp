// The one libFuzzer executable of every target (fuzz/fuzz_<name>.cpp, PERFGAP_FUZZ_TARGET):
// the instrumented library and the headers the targets share are compiled and linked once,
// not fifty times (most of CI's fuzz build). The target is the name the executable was started
// by, build-fuzz/fuzz/fuzz_<name> (a link to perfgap-fuzz), or PERFGAP_FUZZ_TARGET=<name>.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "fuzz_common.hpp"

namespace {

std::map<std::string, perfgap::fuzz::Target>& targets() {
  static std::map<std::string, perfgap::fuzz::Target> all;
  return all;
}

perfgap::fuzz::Target chosen = nullptr;

}  // namespace

bool perfgap::fuzz::register_target(const char* name, Target target) {
  return targets().emplace(name, target).second;
}

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  std::string name;
  if (const char* env = std::getenv("PERFGAP_FUZZ_TARGET"); env && *env) {
    name = env;
  } else if (*argc > 0) {
    const char* base = std::strrchr((*argv)[0], '/');
    name = base ? base + 1 : (*argv)[0];
    if (name.rfind("fuzz_", 0) == 0) name.erase(0, 5);
  }
  auto it = targets().find(name);
  if (it == targets().end()) {
    std::fprintf(stderr, "perfgap-fuzz: no target '%s': start it as fuzz_<target> or with PERFGAP_FUZZ_TARGET=<target>; targets:",
                 name.c_str());
    for (const auto& [n, t] : targets()) std::fprintf(stderr, " %s", n.c_str());
    std::fprintf(stderr, "\n");
    std::exit(2);
  }
  chosen = it->second;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { return chosen(data, size); }
