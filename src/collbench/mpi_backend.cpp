// MPI backend: one rank per process on CPUs (float sum), under mpirun, srun --mpi=pmix, or as
// a singleton. Built as the plugin perfgap-collbench-mpi.so; see backend.hpp.
#include <mpi.h>

#include <unistd.h>

#include <climits>
#include <functional>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "collbench/backend.hpp"
#include "collbench/collectives.hpp"
#include "collbench/nccl_tests_format.hpp"

extern char** environ;

namespace perfgap::collbench {
namespace {

struct MpiFailure {
  std::string message;
};

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw MpiFailure{std::string(call) + " failed: " + text};
}

class MpiBench {
 public:
  MpiBench(const Options& o, int rank, int ranks) : o_(o), rank_(rank), ranks_(ranks) {}

  // Room for the largest size (sizes only grow); one element at least so no pointer is null.
  void allocate(const Shape& largest) {
    send_.assign(std::max<std::uint64_t>(largest.send_count, 1), 0.0f);
    recv_.assign(std::max<std::uint64_t>(std::max(largest.send_count, largest.recv_count), 1), 0.0f);
  }

  Timing measure(const Shape& s, bool in_place) {
    Timing t;
    prepare(s, in_place);
    for (int i = 0; i < o_.warmup; ++i) call(s, in_place);
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double start = MPI_Wtime();
    for (int i = 0; i < o_.iters; ++i) call(s, in_place);
    // A collective is as slow as its slowest rank.
    double mean = (MPI_Wtime() - start) / o_.iters;
    check(MPI_Allreduce(MPI_IN_PLACE, &mean, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    t.seconds = mean;
    if (o_.check) {
      // The timed loop overwrote the inputs (in-place all_reduce compounds): start afresh.
      prepare(s, in_place);
      call(s, in_place);
      std::uint64_t offset = in_place ? in_place_layout(o_.collective, Api::mpi, s, rank_).result_offset : 0;
      unsigned long long wrong =
          count_wrong(o_.collective, s, rank_, ranks_, std::span<const float>(recv_.data() + offset, s.recv_count));
      check(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
      t.wrong = wrong;
    }
    return t;
  }

 private:
  // Inputs from the pattern; everything else NaN, so an element never written counts as wrong.
  void prepare(const Shape& s, bool in_place) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    if (in_place) {
      auto layout = in_place_layout(o_.collective, Api::mpi, s, rank_);
      std::fill(recv_.begin(), recv_.begin() + static_cast<std::ptrdiff_t>(layout.buffer_count), nan);
      fill_input(rank_, std::span<float>(recv_.data() + layout.input_offset, s.send_count));
    } else {
      fill_input(rank_, std::span<float>(send_.data(), s.send_count));
      std::fill(recv_.begin(), recv_.begin() + static_cast<std::ptrdiff_t>(s.recv_count), nan);
    }
  }

  void call(const Shape& s, bool in_place) {
    int n = static_cast<int>(s.per_rank);  // checked against INT_MAX before the run
    float* send = send_.data();
    float* recv = recv_.data();
    switch (o_.collective) {
      case Collective::all_reduce:
        check(MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
        break;
      case Collective::all_gather:
        if (in_place) check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, n, MPI_FLOAT, MPI_COMM_WORLD), "MPI_Allgather");
        else check(MPI_Allgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, MPI_COMM_WORLD), "MPI_Allgather");
        break;
      case Collective::reduce_scatter:
        check(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Reduce_scatter_block");
        break;
      case Collective::alltoall:
        if (in_place) check(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, n, MPI_FLOAT, MPI_COMM_WORLD), "MPI_Alltoall");
        else check(MPI_Alltoall(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, MPI_COMM_WORLD), "MPI_Alltoall");
        break;
    }
  }

  const Options& o_;
  int rank_, ranks_;
  std::vector<float> send_, recv_;
};

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(text, &len) != MPI_SUCCESS) return "MPI";
  std::string v(text);
  return v.substr(0, v.find_first_of(",\n"));
}

// Every rank reaches the same verdict, so all leave together; rank 0 says why.
bool agree_unusable(bool mine, int rank, const std::string& why) {
  int bad = mine ? 1 : 0;
  check(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  if (bad && rank == 0) print_error(why);
  return bad != 0;
}

int run(const Options& o) {
  int rank = 0, ranks = 1;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &ranks), "MPI_Comm_size");
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int local_rank = 0, local_ranks = 1;
  check(MPI_Comm_rank(node, &local_rank), "MPI_Comm_rank");
  check(MPI_Comm_size(node, &local_ranks), "MPI_Comm_size");
  MPI_Comm_free(&node);

  auto sizes = size_steps(o);
  Shape largest = shape(o.collective, sizes.empty() ? 0 : sizes.back(), ranks);
  if (agree_unusable(largest.per_rank > static_cast<std::uint64_t>(INT_MAX), rank,
                     "-e " + std::to_string(o.max_bytes) + " needs more than INT_MAX elements per MPI call"))
    return kExitUnusable;
  // Buffers of every rank of this node must fit in its memory: better a clear error than the
  // OOM killer in the middle of a sweep.
  double need = static_cast<double>(largest.send_count + std::max(largest.send_count, largest.recv_count)) * kElementBytes * local_ranks;
  double have = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (agree_unusable(have > 0 && need > 0.8 * have, rank,
                     "-e " + std::to_string(o.max_bytes) + ": the buffers of " + std::to_string(local_ranks) + " rank(s) need " +
                         std::to_string(static_cast<long long>(need / (1 << 20))) + " MiB, more than 80% of this node's memory"))
    return kExitUnusable;

  MpiBench bench(o, rank, ranks);
  bench.allocate(largest);

  // Rank lines, gathered to rank 0 in rank order as nccl-tests does.
  constexpr int kLine = 512;
  std::string mine = rank_line(rank, static_cast<long>(::getpid()), host_name(), local_rank, "cpus " + affinity_list(), cpu_model());
  mine.resize(kLine - 1, '\0');
  mine.push_back('\0');
  std::vector<char> lines(rank == 0 ? static_cast<std::size_t>(kLine) * static_cast<std::size_t>(ranks) : 1);
  check(MPI_Gather(mine.data(), kLine, MPI_CHAR, lines.data(), kLine, MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Gather");
  // The settings a sweep varies must reach every rank (mpirun -x NAME on other nodes): say
  // which ranks saw different ones, so a sweep that changed nothing is not misread.
  std::string settings = tunable_settings(environ);
  unsigned long long digest = std::hash<std::string>{}(settings);
  std::vector<unsigned long long> digests(static_cast<std::size_t>(ranks));
  check(MPI_Allgather(&digest, 1, MPI_UNSIGNED_LONG_LONG, digests.data(), 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD), "MPI_Allgather");
  std::string differing;
  for (int r = 0; r < ranks; ++r)
    if (digests[static_cast<std::size_t>(r)] != digest) {
      if (!differing.empty()) differing += ',';  // (appended in two steps: GCC 12's -Wrestrict misfires on "" + string at -O3)
      differing += std::to_string(r);
    }
  if (rank == 0) {
    std::printf("# perfgap-collbench %s backend: mpi (%s) ranks: %d\n", PERFGAP_VERSION, library_version().c_str(), ranks);
    if (!settings.empty()) std::printf("# Settings: %s\n", settings.c_str());
    if (!differing.empty())
      std::printf("# Settings differ on rank(s) %s from rank 0's (pass them to every rank: mpirun -x NAME)\n", differing.c_str());
    std::printf("# Collective test starting: %s\n", program_name(o.collective).c_str());
    std::fputs(run_header_line(o, 1).c_str(), stdout);
    std::printf("#\n# Using devices\n");
    for (int r = 0; r < ranks; ++r) std::fputs(lines.data() + static_cast<std::size_t>(r) * kLine, stdout);
    std::fputs(table_header().c_str(), stdout);
    std::fflush(stdout);
  }

  TableWriter table(o.collective, ranks);
  for (auto size : sizes) {
    Shape s = shape(o.collective, size, ranks);
    Timing out_of_place = bench.measure(s, false);
    Timing in_place = bench.measure(s, true);
    std::string row = table.row(s, out_of_place, in_place);
    if (rank == 0) {
      std::fputs(row.c_str(), stdout);
      std::fflush(stdout);  // a sweep that stops the run keeps the rows already done
    }
  }
  if (rank == 0) {
    std::fputs(table.footer().c_str(), stdout);
    std::fflush(stdout);
  }
  return table.wrong() ? kExitWrong : kExitOk;
}

}  // namespace
}  // namespace perfgap::collbench

extern "C" __attribute__((visibility("default"))) int perfgap_collbench_mpi_run(const perfgap::collbench::Options* options,
                                                                                  const char* version, std::size_t options_size) {
  using namespace perfgap::collbench;
  if (std::strcmp(version, PERFGAP_VERSION) != 0 || options_size != sizeof(Options)) {
    print_error(std::string("the MPI plugin ") + kMpiPluginFile + " is from another build (version " + PERFGAP_VERSION + ")");
    return kExitUnusable;
  }
  if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
    print_error("MPI_Init failed");
    return kExitUnusable;
  }
  // Errors come back as codes, so they end in one line and a clean abort rather than MPI's
  // multi-line default handler.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc = kExitUnusable;
  try {
    rc = run(*options);
  } catch (const MpiFailure& e) {
    print_error(e.message);
    MPI_Abort(MPI_COMM_WORLD, kExitUnusable);
  } catch (const std::bad_alloc&) {
    print_error("out of memory for the buffers of -e " + std::to_string(options->max_bytes));
    MPI_Abort(MPI_COMM_WORLD, kExitUnusable);
  }
  MPI_Finalize();
  return rc;
}
