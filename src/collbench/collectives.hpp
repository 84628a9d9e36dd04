// The four collectives of perfgap-collbench as nccl-tests defines them: what a row's size and
// count mean, bus-bandwidth factors, and the deterministic data that makes the result check
// exact. Header-only so that perfgap_tests can test it without linking the benchmark.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace perfgap::collbench {

enum class Collective { all_reduce, all_gather, reduce_scatter, alltoall };

inline constexpr std::array<Collective, 4> kCollectives{Collective::all_reduce, Collective::all_gather,
                                                         Collective::reduce_scatter, Collective::alltoall};

inline std::string_view name(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::alltoall: return "alltoall";
  }
  return "?";
}

inline std::optional<Collective> collective_named(std::string_view s) {
  for (auto c : kCollectives)
    if (name(c) == s) return c;
  return std::nullopt;
}

// nccl-tests prints "none" for the collectives that do not reduce.
inline std::string_view redop(Collective c) {
  return c == Collective::all_reduce || c == Collective::reduce_scatter ? "sum" : "none";
}

// nccl-tests' busbw = algbw x factor: the share of the data each rank must move over its
// slowest link in the optimal algorithm, so figures compare across rank counts.
inline double bus_factor(Collective c, int ranks) {
  if (ranks <= 0) return 0;
  double n = ranks;
  return c == Collective::all_reduce ? 2 * (n - 1) / n : (n - 1) / n;
}

inline constexpr std::size_t kElementBytes = sizeof(float);  // float sum, as nccl-tests' default

// Element counts of one row, as nccl-tests' getCollByteCount: `per_rank` is the count argument
// of the call (printed in the count column); the size column is the larger buffer.
struct Shape {
  std::uint64_t send_count = 0, recv_count = 0, per_rank = 0;
  std::uint64_t bytes() const { return (send_count > recv_count ? send_count : recv_count) * kElementBytes; }
};

// `bytes` is the requested size; it is rounded down as nccl-tests does (to whole elements,
// and to a multiple of the rank count where the buffer is split across ranks).
inline Shape shape(Collective c, std::uint64_t bytes, int ranks) {
  std::uint64_t count = bytes / kElementBytes;
  std::uint64_t n = ranks > 0 ? static_cast<std::uint64_t>(ranks) : 1;
  switch (c) {
    case Collective::all_reduce: return {count, count, count};
    case Collective::all_gather: return {count / n, (count / n) * n, count / n};
    case Collective::reduce_scatter: return {(count / n) * n, count / n, count / n};
    case Collective::alltoall: return {(count / n) * n, (count / n) * n, count / n};
  }
  return {};
}

// Data: small integers, so every sum over ranks is exact in float whatever order the reduction
// takes, and each (rank, index) gets a different value so misplaced blocks are caught.
inline constexpr int kPatternPeriod = 61;
inline float pattern(int rank, std::uint64_t index) {
  auto r = static_cast<std::uint64_t>(rank % kPatternPeriod);
  return static_cast<float>(static_cast<int>((index + 3 * r) % kPatternPeriod) - 30);
}

// Sum over ranks 0..ranks-1 of pattern(rank, index), by index % kPatternPeriod.
struct ReducedPattern {
  std::array<float, kPatternPeriod> sums{};
  explicit ReducedPattern(int ranks) {
    for (int k = 0; k < kPatternPeriod; ++k) {
      long total = 0;
      // Whole periods of ranks add up to zero (each residue once); only the rest counts.
      for (int r = ranks - ranks % kPatternPeriod; r < ranks; ++r) total += static_cast<long>(pattern(r, static_cast<std::uint64_t>(k)));
      sums[static_cast<std::size_t>(k)] = static_cast<float>(total);
    }
  }
  float at(std::uint64_t index) const { return sums[index % kPatternPeriod]; }
};

// What a rank contributes (its send buffer, send_count elements).
inline void fill_input(int rank, std::span<float> send) {
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = pattern(rank, i);
}

// The expected result element `i` (of recv_count) on `rank`.
inline float expected(Collective c, const Shape& s, int rank, const ReducedPattern& reduced, std::uint64_t i) {
  std::uint64_t block = s.per_rank ? i / s.per_rank : 0, within = s.per_rank ? i % s.per_rank : 0;
  switch (c) {
    case Collective::all_reduce: return reduced.at(i);
    case Collective::all_gather: return pattern(static_cast<int>(block), within);
    case Collective::reduce_scatter: return reduced.at(static_cast<std::uint64_t>(rank) * s.per_rank + i);
    case Collective::alltoall: return pattern(static_cast<int>(block), static_cast<std::uint64_t>(rank) * s.per_rank + within);
  }
  return 0;
}

// Elements of `result` (the recv_count elements the collective produced on `rank`) that differ
// from the exact expected values; a missing or extra element counts as wrong too.
inline std::uint64_t count_wrong(Collective c, const Shape& s, int rank, int ranks, std::span<const float> result) {
  ReducedPattern reduced(ranks);
  std::uint64_t wrong = 0;
  std::uint64_t n = result.size() < s.recv_count ? result.size() : s.recv_count;
  for (std::uint64_t i = 0; i < n; ++i)
    if (!(result[i] == expected(c, s, rank, reduced, i))) ++wrong;  // NaN sentinels count as wrong
  wrong += (result.size() > s.recv_count ? result.size() : s.recv_count) - n;
  return wrong;
}

// Where the input and the result lie in the single buffer of an in-place call. MPI and NCCL
// agree except for reduce-scatter: MPI_IN_PLACE leaves the result at the start of the buffer,
// NCCL at this rank's block (recvbuff = sendbuff + rank * recvcount).
enum class Api { mpi, nccl };
struct InPlaceLayout {
  std::uint64_t input_offset = 0, result_offset = 0, buffer_count = 0;
};

inline InPlaceLayout in_place_layout(Collective c, Api api, const Shape& s, int rank) {
  auto r = static_cast<std::uint64_t>(rank);
  switch (c) {
    case Collective::all_reduce: return {0, 0, s.recv_count};
    case Collective::all_gather: return {r * s.send_count, 0, s.recv_count};
    case Collective::reduce_scatter: return {0, api == Api::nccl ? r * s.recv_count : 0, s.send_count};
    case Collective::alltoall: return {0, 0, s.recv_count};
  }
  return {};
}

}  // namespace perfgap::collbench
