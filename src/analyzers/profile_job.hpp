// A job's profiles (one Kineto trace or nsys export per rank) analysed together without holding
// them: each rank is read (by the caller's reader: this layer reads no file), reduced at once to
// its digest (per GPU its interval lists, collectives and candidate iteration windows; launch
// figures as histograms) and dropped, on up to `threads` threads. Memory is the digests plus one
// profile per thread, whatever the number of ranks. The rank set is then checked (copies, ranks
// of other runs left out; missing ranks counted: profile_ranks.hpp check_rank_set) and the
// findings are those analyze_profile gives for the kept ranks' profiles merged in the files'
// order, with profile.ranks saying what the set held (docs/ANALYZE.md, cross-rank analysis).
#pragma once

#include <cstddef>
#include <functional>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <tl/expected.hpp>

#include "analyzers/analyzers.hpp"
#include "parsers/profile.hpp"

namespace perfgap::analyzers {

using ProfileReader = std::function<tl::expected<parsers::Profile, std::string>(const std::string& file)>;
// A rank's input as read: its profile, or the bytes of the digest `whatif --digest` wrote of it
// (a file ending in kDigestSuffix).
using RankRead = std::variant<parsers::Profile, std::string>;
using RankReader = std::function<tl::expected<RankRead, std::string>(const std::string& file)>;
inline constexpr std::string_view kDigestSuffix = ".pgdigest";
// A RankReader's error that starts with this is a file found beside the traces that is no trace
// (JobRanks::not_traces), not an unreadable rank.
inline constexpr std::string_view kNotATrace = "not a trace: ";
RankReader profiles_only(const ProfileReader& read);

struct ProfileJob {
  std::vector<Finding> findings;  // empty when no file was usable
  std::vector<std::string> used;  // the files analysed, in order (those the rank-set check kept)
  // (file, why) in the files' order: the files that could not be read. The others are analysed;
  // profile.ranks counts these as missing ranks, so job-level verdicts (profile.straggler)
  // cannot pass, and the caller gives each an error finding.
  std::vector<std::pair<std::string, std::string>> unusable;
  // What memory the job took (the unit test that memory is not held per rank reads them).
  std::size_t profiles_held_peak = 0;  // profiles being read or digested at once (<= threads)
  std::size_t digest_bytes_peak = 0;   // the job's digest after its last rank
  std::size_t activities = 0;          // activities read over all ranks
};

// Labels get the file's name in front when there are several files (as the merged model's did).
ProfileJob analyze_profile_job(const std::vector<std::string>& files, const RankReader& read, const ProfileOptions& o, std::size_t threads);
inline ProfileJob analyze_profile_job(const std::vector<std::string>& files, const ProfileReader& read, const ProfileOptions& o, std::size_t threads) {
  return analyze_profile_job(files, profiles_only(read), o, threads);
}

// What `perfgap whatif` replays besides the ranks, nodes and launches it always tries.
// A healthy run's bus bandwidth of one collective by size (nccl-tests output: --nccl-tests).
struct BusbwCurve {
  parsers::Coll coll = parsers::Coll::none;
  std::vector<std::pair<std::uint64_t, double>> points;  // (size in bytes, busbw GB/s), by size
  std::string source;                                    // the file
  std::vector<std::string> gpu_models;                   // the GPUs its Rank lines name; empty: not named
  // A label (COLL=FILE) that the file contradicts: why, naming both (never replayed); empty: none.
  std::string label_refused;
  // analyze nccl-tests' nccl_tests.busbw_collapse warning on the run (no healthy run); empty: none.
  std::string collapse;
};
struct WhatifOptions {
  double busbw_gbps = 0;  // --busbw: every collective of known size at this bus bandwidth; 0: not tried
  // --nccl-tests: each collective of known size at the bandwidth a healthy run reached at its
  // size (between two sizes measured, interpolated on the sizes' logarithm; beyond them, the
  // nearest); collectives of a kind no curve has keep their time.
  std::vector<BusbwCurve> curves;
};
// The bus bandwidth a curve gives at `bytes` (as WhatifOptions::curves says).
double busbw_at(const BusbwCurve& c, std::uint64_t bytes);
// The job read as analyze_profile_job reads it, then replayed (analyzers/whatif.cpp,
// docs/WHATIF.md): whatif.replay (the replayed step against the measured one), then one finding
// per change tried, sorted by what it saves: whatif.late_set, whatif.rank, whatif.node,
// whatif.launch, whatif.overlap, whatif.busbw; profile.ranks first when the traces are several.
ProfileJob whatif_profile_job(const std::vector<std::string>& files, const RankReader& read, const ProfileOptions& o, const WhatifOptions& w,
                              std::size_t threads);
inline ProfileJob whatif_profile_job(const std::vector<std::string>& files, const ProfileReader& read, const ProfileOptions& o, const WhatifOptions& w,
                                     std::size_t threads) {
  return whatif_profile_job(files, profiles_only(read), o, w, threads);
}
// Why a whatif report replayed no change, for its headline (report::Report::undecided): "nothing
// could be replayed: WHY" where whatif.replay skipped, "no change could be replayed: WHY" where
// the replay was not trusted (its title) or every change skipped (the first one's reason); empty
// where a change was replayed (or, --digest, nothing was asked to be).
std::string whatif_undecided(const std::vector<Finding>& findings);
// whatif --digest: each trace read and written as its digest by `write(file, bytes)` (which
// returns why it could not, or ""), one at a time; the (file, why) of those that failed.
using DigestWriter = std::function<std::string(const std::string& file, const std::string& bytes)>;
std::vector<std::pair<std::string, std::string>> write_profile_digests(const std::vector<std::string>& files, const ProfileReader& read,
                                                                        const ProfileOptions& o, const DigestWriter& write);

}  // namespace perfgap::analyzers
