// perfgap-collbench: times all_reduce, all_gather, reduce_scatter or alltoall over a range of
// sizes and prints the nccl-tests table. See docs/COLLBENCH.md.
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/backend.hpp"
#include "collbench/options.hpp"

namespace perfgap::collbench {
namespace {

// Launchers give every rank these; only rank 0 speaks, so an error reads once, not N times.
bool is_first_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* v = std::getenv(var); v && std::string_view(v) != "0") return false;
  return true;
}

int launched_ranks() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return 1;
}

std::string executable_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<std::size_t>(n));
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

int run_mpi(const Options& o) {
  // Next to the executable in a build tree; lib/perfgap/ beside bin/ when installed.
  std::string dir = executable_dir();
  std::string tried;
  void* plugin = nullptr;
  for (const std::string& path : {dir + "/" + kMpiPluginFile, dir + "/../lib/perfgap/" + kMpiPluginFile}) {
    // RTLD_GLOBAL: Open MPI's own components resolve libmpi's symbols through the global scope.
    plugin = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (plugin) break;
    if (tried.empty()) tried = ::dlerror();
  }
  if (!plugin) {
    print_error("MPI backend unavailable: " + tried + " (Open MPI not installed, or built without MPI; use -g for the NCCL backend)");
    return kExitUnusable;
  }
  auto entry = reinterpret_cast<MpiEntryPoint>(::dlsym(plugin, kMpiEntryPoint));
  if (!entry) {
    print_error(std::string("MPI backend unavailable: no ") + kMpiEntryPoint + " in " + kMpiPluginFile);
    return kExitUnusable;
  }
  return entry(&o, PERFGAP_VERSION, sizeof(Options));
}

int run(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  auto parsed = parse_options(args);
  if (!parsed) {
    if (is_first_rank()) print_error(parsed.error() + " (see --help)");
    return kExitUnusable;
  }
  const Options& o = *parsed;
  if (o.help) {
    if (is_first_rank()) std::fputs(usage().c_str(), stdout);
    return kExitOk;
  }
  if (o.version) {
#ifdef PERFGAP_COLLBENCH_MPI
    constexpr const char* mpi = " mpi";
#else
    constexpr const char* mpi = "";
#endif
#ifdef PERFGAP_COLLBENCH_NCCL
    constexpr const char* nccl = " nccl";
#else
    constexpr const char* nccl = "";
#endif
    if (is_first_rank()) std::printf("perfgap-collbench %s (backends:%s%s)\n", PERFGAP_VERSION, mpi, nccl);
    return kExitOk;
  }
  bool nccl = o.backend == BackendChoice::nccl || (o.backend == BackendChoice::automatic && o.gpus > 0);
  if (!nccl) return run_mpi(o);
#ifdef PERFGAP_COLLBENCH_NCCL
  if (int n = launched_ranks(); n > 1) {
    if (is_first_rank())
      print_error("the NCCL backend is one process driving -g GPUs; it was launched as " + std::to_string(n) +
                  " ranks (run it once per node, without mpirun/srun tasks)");
    return kExitUnusable;
  }
  return run_nccl(o);
#else
  if (is_first_rank()) print_error("NCCL backend not built: the CUDA and NCCL headers were not found at build time");
  return kExitUnusable;
#endif
}

}  // namespace
}  // namespace perfgap::collbench

int main(int argc, char** argv) { return perfgap::collbench::run(argc, argv); }
