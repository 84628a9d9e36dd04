// Cross-rank alignment of a job's profiles: the ranks' clocks are put on one timeline from the
// ends of the same collectives (an NCCL collective ends on every rank of the communicator at
// about the same moment, whatever time each rank arrived), then each collective's arrivals,
// skew and last rank follow. Pure: collective kernels in, alignment out (analyzers/profile.cpp
// builds the findings).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "parsers/profile.hpp"

namespace perfgap::analyzers {

// One collective kernel of a rank, on that rank's own clock (ns).
struct RankCollective {
  parsers::Coll coll = parsers::Coll::none;
  std::int64_t start = 0, end = 0;
};

// A collective seen by several ranks (after alignment, on the reference rank's clock).
struct MatchedCollective {
  parsers::Coll coll = parsers::Coll::none;
  std::size_t ref_index = 0;            // its index in the reference rank's sequence
  std::int64_t end = 0;                 // the reference rank's end
  std::vector<std::int32_t> index;      // per rank: its index in that rank's sequence; -1 none
  std::vector<std::int64_t> arrival;    // per rank: kernel start on the reference clock (valid where index >= 0)
  std::int64_t first = 0, last = 0, second = 0;  // earliest, latest and second-latest arrival
  std::int32_t last_rank = -1;          // the rank that arrived last by more than the tie margin; -1: none
};

struct RankAlignment {
  std::size_t reference = 0;
  std::vector<bool> aligned;
  std::vector<std::int64_t> offset;     // ns added to a rank's clock to put it on the reference's
  std::vector<std::int64_t> end_spread; // ns: the median distance of its collective ends from the reference's after alignment
  std::vector<std::string> why_not;     // per rank not aligned: why
  std::vector<MatchedCollective> matches;  // in the reference rank's order
  std::int64_t tolerance = 0;           // ns: how far apart the ends of one collective may be
};

// The collectives that align ranks: every NCCL kernel but SendRecv (point-to-point transfers
// do not end together across the job).
bool aligns_ranks(parsers::Coll c);

// Aligns the ranks (each sequence sorted by start). Ranks without collectives, and ranks whose
// sequence matches the reference's at no offset where the ends coincide, are left out and named
// in why_not; a rank's clock is never guessed.
RankAlignment align_ranks(const std::vector<std::vector<RankCollective>>& ranks);

}  // namespace perfgap::analyzers
