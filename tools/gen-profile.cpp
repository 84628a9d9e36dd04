// Writes a synthetic profile (tests/support/profile_gen.hpp) for manual runs and benchmarks:
//   perfgap-gen-profile SCENARIO nsys|nsys-2021|nsys-2025 OUT.sqlite | kineto OUT.json [GPU]
// (nsys: the 3.7.2 schema; nsys-2021, nsys-2025: the other schema variants of profile_gen.hpp)
// SCENARIO: exposed (AllGather 30 ms / ReduceScatter 15 ms exposed), exposed-tuned (15/5),
// launch-bound, overlapped, moe-deepep (DeepEP dispatch/combine, 2 GPUs), nvshmem (NVSHMEM
// on-stream kernels), pipeline (4 stages of send/recv only), large:GPUS:KERNELS_PER_GPU, large-steps:GPUS:KERNELS_PER_GPU (with
// ProfilerStep#N ranges, one per 2000 kernels).
//   perfgap-gen-profile job:RANKS:LATE_RANK:LATE_MS[:skewed][:iters=N][:launch=RANK[@FROM-TO]] kineto|nsys OUTDIR
// writes one file per rank (OUTDIR/rank00000.json or .sqlite; nsys: host node<rank/8>) of a
// data-parallel job (profile_gen.hpp gen::job) whose rank LATE_RANK (-1: none) computes LATE_MS
// longer before each AllReduce; `skewed`: the nodes' clocks apart by up to +-7 ms; `launch`: rank
// RANK's GPU waits 0.5 ms for each launch but an iteration's first (in iterations FROM to TO-1
// only, from 0), and the generator's own answers are printed: each iteration's length and an
// iteration's with no GPU waiting for a launch (ms).
//   perfgap-gen-profile gpipe|1f1b:STAGES:MICROBATCHES:SLOW_STAGE[:nopeers][:dp=COPIES][:slow_rank=RANK][:slow_node=NODE] kineto|nsys OUTDIR
// writes one file per rank of a pipeline of send/recv (profile_gen.hpp gen::pipeline_job) whose
// stage SLOW_STAGE (-1: none) computes 1.5x longer, and prints the generator's own answers: the
// step and the step with the slow stage (or rank) computing as the others do (ms); `nopeers`: the
// kernels name no peer (traces before PyTorch's "Dst Rank"/"Src Rank"); `dp=COPIES`: COPIES
// data-parallel copies of the pipeline (rank copy x STAGES + stage), each stage all-reducing its
// gradients across its copies before its optimizer; `slow_rank=RANK`: that one rank computes 1.5x
// longer; `slow_node=NODE`: the ranks of that node (8 x NODE to 8 x NODE + 7, as the nsys exports
// name their hosts `nodeN`) compute 1.5x longer.
//   perfgap-gen-profile ddp:RANKS:BUCKETS[:overlapped] kineto|nsys OUTDIR
// writes one file per rank of a data-parallel job whose gradients are all-reduced in BUCKETS
// buckets (profile_gen.hpp gen::ddp_overlap), each bucket's compute waiting for the previous
// AllReduce (or, `overlapped`, running on under it), and prints the generator's own answers: the
// step and the step with the compute running on under the AllReduces (ms).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "profile_gen.hpp"

namespace {

using namespace perfgap::gen;

// One file per rank: OUTDIR/rank00000.json or .sqlite (nsys: host node<rank/8>).
int write_ranks(const Scenario& s, const std::string& kind, const std::string& out) {
  for (std::size_t r = 0; r < s.gpus.size(); ++r) {
    char name[64];
    std::snprintf(name, sizeof name, "/rank%05zu.%s", r, kind == "kineto" ? "json" : "sqlite");
    if (kind == "kineto") {
      std::ofstream f(out + name, std::ios::binary);
      f << kineto_json(s, r, static_cast<int>(r));
      if (!f) {  // said, not a silent exit 1 (a directory that does not exist)
        std::fprintf(stderr, "cannot write %s%s (does the directory %s exist?)\n", out.c_str(), name, out.c_str());
        return 1;
      }
    } else if (kind == "nsys") {
      auto err = write_nsys_sqlite(rank_of(s, r), out + name);
      if (!err.empty()) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return 1;
      }
    } else {
      return 2;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s exposed|exposed-tuned|launch-bound|overlapped|moe-deepep|nvshmem|pipeline|large:GPUS:KERNELS nsys|nsys-2021|nsys-2025|kineto OUT [GPU]\n"
                 "       %s job:RANKS:LATE_RANK:LATE_MS[:skewed][:iters=N][:launch=RANK[@FROM-TO]] kineto|nsys OUTDIR\n"
                 "       %s gpipe|1f1b:STAGES:MICROBATCHES:SLOW_STAGE[:nopeers][:dp=COPIES][:slow_rank=RANK][:slow_node=NODE] kineto|nsys OUTDIR\n"
                 "       %s ddp:RANKS:BUCKETS[:overlapped] kineto|nsys OUTDIR\n",
                 argv[0], argv[0], argv[0], argv[0]);
    return 2;
  }
  std::string sc = argv[1], kind = argv[2], out = argv[3];
  if (sc.rfind("job:", 0) == 0) {
    JobSpec spec;
    bool skewed = false;
    int used = 0;
    int got = std::sscanf(sc.c_str(), "job:%d:%d:%lf%n", &spec.ranks, &spec.late_rank, &spec.late_ms, &used);
    // Then ":skewed", ":iters=N" (iterations per rank: ~26 KB of Kineto JSON each) and
    // ":launch=RANK[@FROM-TO]", in any order.
    bool bad = got < 3;
    for (std::string_view rest = got == 3 ? std::string_view(sc).substr(static_cast<std::size_t>(used)) : ""; !bad && !rest.empty();) {
      if (rest.front() != ':') { bad = true; break; }
      rest.remove_prefix(1);
      auto word = rest.substr(0, rest.find(':'));
      rest.remove_prefix(word.size());
      if (word == "skewed") skewed = true;
      else if (word.rfind("iters=", 0) == 0) spec.iterations = std::atoi(std::string(word.substr(6)).c_str());
      else if (word.rfind("launch=", 0) == 0) {
        const std::string v(word.substr(7));
        int n = 0;
        const bool range = v.find('@') != std::string::npos;
        bad = range ? std::sscanf(v.c_str(), "%d@%d-%d%n", &spec.launch_bound_rank, &spec.launch_bound_from, &spec.launch_bound_to, &n) != 3
                    : std::sscanf(v.c_str(), "%d%n", &spec.launch_bound_rank, &n) != 1;
        bad = bad || static_cast<std::size_t>(n) != v.size() || spec.launch_bound_rank < 0 || spec.launch_bound_from < 0 ||
              (range && spec.launch_bound_to <= spec.launch_bound_from);
      } else bad = true;
    }
    if (bad || spec.ranks < 1 || spec.ranks > 100000 || spec.late_rank >= spec.ranks || spec.iterations < 1 || spec.iterations > 10000000 ||
        spec.launch_bound_rank >= spec.ranks) {
      std::fprintf(stderr, "job:RANKS:LATE_RANK:LATE_MS[:skewed][:iters=N][:launch=RANK[@FROM-TO]]\n");
      return 2;
    }
    if (skewed) spec.clock_offset_ms = node_clock_offsets(spec.ranks);
    JobAnswer answer;
    const Scenario s = job(spec, &answer);
    if (spec.launch_bound_rank >= 0) {
      std::printf("iteration_ms");
      for (double ms : answer.iteration_ms) std::printf(" %.3f", ms);
      std::printf("\nno_launch_wait_ms %.3f\n", answer.no_launch_wait_ms);
    }
    return write_ranks(s, kind, out);
  }
  if (sc.rfind("gpipe:", 0) == 0 || sc.rfind("1f1b:", 0) == 0) {
    PipelineSpec spec;
    spec.one_f_one_b = sc[0] == '1';
    int used = 0;
    const auto at = sc.find(':');
    int got = std::sscanf(sc.c_str() + at, ":%d:%d:%d%n", &spec.stages, &spec.microbatches, &spec.slow_stage, &used);
    // Then ":nopeers", ":dp=N", ":slow_rank=R" and ":slow_node=K", in any order.
    bool bad = got < 3;
    for (std::string_view rest = got == 3 ? std::string_view(sc).substr(at + static_cast<std::size_t>(used)) : ""; !bad && !rest.empty();) {
      if (rest.front() != ':') { bad = true; break; }
      rest.remove_prefix(1);
      auto word = rest.substr(0, rest.find(':'));
      rest.remove_prefix(word.size());
      char* end = nullptr;
      if (word == "nopeers") spec.peers = false;
      else if (word.rfind("dp=", 0) == 0) {
        const std::string v(word.substr(3));
        spec.replicas = static_cast<int>(std::strtol(v.c_str(), &end, 10));
        spec.dp_allreduce = true;
        bad = v.empty() || *end != 0;
      } else if (word.rfind("slow_rank=", 0) == 0) {
        const std::string v(word.substr(10));
        spec.slow_rank = static_cast<int>(std::strtol(v.c_str(), &end, 10));
        bad = v.empty() || *end != 0;
      } else if (word.rfind("slow_node=", 0) == 0) {
        const std::string v(word.substr(10));
        const long node = std::strtol(v.c_str(), &end, 10);
        bad = v.empty() || *end != 0 || node < 0 || node > 1024;
        for (int r = 0; !bad && r < 8; ++r) spec.slow_ranks.push_back(static_cast<int>(node) * 8 + r);
      } else bad = true;
    }
    if (bad || spec.stages < 2 || spec.stages > 1024 || spec.microbatches < 1 || spec.microbatches > 4096 || spec.slow_stage >= spec.stages ||
        spec.replicas < 1 || spec.replicas > 1024 || spec.slow_rank >= spec.stages * spec.replicas ||
        (!spec.slow_ranks.empty() && spec.slow_ranks.front() >= spec.stages * spec.replicas)) {
      std::fprintf(stderr, "gpipe|1f1b:STAGES:MICROBATCHES:SLOW_STAGE[:nopeers][:dp=COPIES][:slow_rank=RANK][:slow_node=NODE]\n");
      return 2;
    }
    // A job that ends inside the slow node has only the node's first ranks.
    std::erase_if(spec.slow_ranks, [&](int r) { return r >= spec.stages * spec.replicas; });
    PipelineAnswer answer;
    const Scenario s = pipeline_job(spec, &answer);
    std::printf("step_ms %.3f\nbalanced_step_ms %.3f\n", answer.step_ms, answer.balanced_step_ms);
    return write_ranks(s, kind, out);
  }
  if (sc.rfind("ddp:", 0) == 0) {
    DdpOverlapSpec spec;
    int used = 0;
    const int got = std::sscanf(sc.c_str(), "ddp:%d:%d%n", &spec.ranks, &spec.buckets, &used);
    const std::string rest = got == 2 ? sc.substr(static_cast<std::size_t>(used)) : "?";
    if ((!rest.empty() && rest != ":overlapped") || spec.ranks < 1 || spec.ranks > 100000 || spec.buckets < 1 || spec.buckets > 1000) {
      std::fprintf(stderr, "ddp:RANKS:BUCKETS[:overlapped]\n");
      return 2;
    }
    spec.overlapped = !rest.empty();
    DdpOverlapAnswer answer;
    const Scenario s = ddp_overlap(spec, &answer);
    std::printf("step_ms %.3f\noverlapped_step_ms %.3f\n", answer.step_ms, answer.overlapped_step_ms);
    return write_ranks(s, kind, out);
  }
  Scenario s;
  if (sc == "exposed") s = exposed_comm(8, 10, 30, 15);
  else if (sc == "exposed-tuned") s = exposed_comm(8, 10, 15, 5);
  else if (sc == "launch-bound") s = launch_bound(8, 10);
  else if (sc == "overlapped") s = overlapped(8, 10);
  else if (sc == "moe-deepep") s = moe_deepep(2, 10);
  else if (sc == "nvshmem") s = nvshmem(1, 10);
  else if (sc == "pipeline") s = pipeline(4, 10);
  else if (sc.rfind("large:", 0) == 0 || sc.rfind("large-steps:", 0) == 0) {
    const bool steps = sc[5] == '-';
    const std::size_t at = steps ? 12 : 6;
    auto colon = sc.find(':', at);
    if (colon == std::string::npos) return 2;
    s = large(std::atoi(sc.substr(at, colon - at).c_str()), std::strtoull(sc.c_str() + colon + 1, nullptr, 10), 2000, steps);
  } else {
    std::fprintf(stderr, "unknown scenario %s\n", sc.c_str());
    return 2;
  }
  if (kind == "nsys" || kind == "nsys-2021" || kind == "nsys-2025") {
    auto err = write_nsys_sqlite(s, out, kind == "nsys" ? NsysSchema::v372 : kind == "nsys-2021" ? NsysSchema::v2021 : NsysSchema::v2025);
    if (!err.empty()) {
      std::fprintf(stderr, "%s\n", err.c_str());
      return 1;
    }
  } else if (kind == "kineto") {
    std::size_t g = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 0;
    if (g >= s.gpus.size()) return 2;
    std::ofstream(out, std::ios::binary) << kineto_json(s, g, static_cast<int>(g));
  } else {
    return 2;
  }
  return 0;
}
