// A job's files read into one digest (profile_model.hpp read_profile_job): what analyze and
// whatif both start from.
#include <algorithm>
#include <bit>
#include <charconv>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>

#include "analyzers/profile_model.hpp"

namespace perfgap::analyzers::profile_model {

namespace {

// What the rank-set check needs of a rank's digest (profile_ranks.hpp check_rank_set).
RankInput rank_input(const std::string& name, const Digest& d) {
  RankInput in;
  in.name = name;
  std::int64_t base = -1;
  for (const auto& [k, v] : d.system) {
    std::int64_t x = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || ptr != v.data() + v.size()) continue;
    if (k == "rank" && in.rank < 0) in.rank = x;
    else if (k == "world_size" && in.world < 0) in.world = x;
    else if (k == "base_time_ns" && base < 0) base = x;
  }
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the timeline's shape
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ULL;
  };
  std::int64_t first = INT64_MAX;
  // Two ranks of a generated or perfectly even job may share a timeline: the rank and devices
  // are part of what makes a trace the same one.
  mix(static_cast<std::uint64_t>(in.rank));
  for (const auto& g : d.gpus) mix(static_cast<std::uint64_t>(g.device)), mix(g.process);
  mix(d.tl.size());
  for (const auto& gt : d.tl) {
    mix(gt.acts), mix(gt.kernels), mix(static_cast<std::uint64_t>(gt.first)), mix(static_cast<std::uint64_t>(gt.last));
    mix(std::bit_cast<std::uint64_t>(gt.kernel_ns)), mix(std::bit_cast<std::uint64_t>(gt.nccl_ns));
    if (gt.acts) first = std::min(first, gt.first);
    for (const auto& w : gt.cuts[kCutStep].wins)
      if (w.step >= 0) {
        in.step_lo = in.step_lo < 0 ? w.step : std::min(in.step_lo, w.step);
        in.step_hi = std::max(in.step_hi, w.step);
      }
    if (!gt.seq.empty()) in.seqs.push_back(&gt.seq);
  }
  in.fingerprint = h;
  // Kineto's ts: µs since the epoch in older traces, since baseTimeNanoseconds in newer ones
  // (1e17 ns is 1973: a smaller first timestamp without a base is a clock of its own).
  if (first != INT64_MAX && base >= 0) in.wall_start_ns = base + first;
  else if (first != INT64_MAX && first >= 100'000'000'000'000'000LL) in.wall_start_ns = first;
  return in;
}


}  // namespace

// What the job's files held as ranks: all of one run, or which were left out, unreadable or
// missing (job-level verdicts over part of a job cannot pass: profile.straggler).
Finding ranks_finding(const JobRanks& j, const std::string& source, parsers::Framework fw) {
  Finding f = started("profile.ranks", "workload", source);
  f.metric("inputs", static_cast<double>(j.inputs));
  f.metric("ranks_read", static_cast<double>(j.kept));
  f.metric("left_out", static_cast<double>(j.left_out.size()));
  f.metric("unreadable", static_cast<double>(j.unreadable.size()));
  if (j.world > 0) {
    f.metric("world_size", static_cast<double>(j.world));
    f.metric("ranks_missing", static_cast<double>(j.missing.size()));
  }
  for (const auto& [file, why] : j.left_out) f.add(file, "left out: " + why, "a rank of this run, read once");
  for (const auto& [file, why] : j.unreadable) f.add(file, "unreadable: " + why, "a readable trace");
  if (!j.not_traces.empty()) f.metric("not_traces", static_cast<double>(j.not_traces.size()));
  for (const auto& [file, why] : j.not_traces) f.add(file, "left aside, not a trace (found beside the traces): " + why);
  if (!j.missing.empty()) f.add(source, fmt::format("ranks {} of 0-{} not among the traces read", rank_ranges(j.missing), j.world - 1), "every rank's trace");
  const std::string of = j.world > 0 ? fmt::format("{} of {} ranks", j.ranks.empty() ? j.kept : j.ranks.size(), j.world) : fmt::format("{} traces", j.kept);
  std::vector<std::string> what;
  if (!j.missing.empty()) what.push_back(fmt::format("rank{} {} missing", j.missing.size() == 1 ? "" : "s", rank_ranges(j.missing)));
  if (!j.unreadable.empty()) what.push_back(fmt::format("{} unreadable", j.unreadable.size()));
  if (!j.left_out.empty()) {
    std::string names;
    for (std::size_t i = 0; i < j.left_out.size() && i < 2; ++i) names += (i ? ", " : "") + j.left_out[i].first;
    if (j.left_out.size() > 2) names += fmt::format(" and {} more", j.left_out.size() - 2);
    what.push_back(fmt::format("{} left out ({}: {})", j.left_out.size(), names, j.left_out[0].second));
  }
  // Traces that say nothing of their run (no rank, no capture time) are taken as this run's:
  // said, with the files, wherever the set is judged.
  std::string assumed;
  if (!j.assumed.empty()) {
    f.metric("assumed_of_this_run", static_cast<double>(j.assumed.size()));
    for (const auto& file : j.assumed)
      f.add(file, "records neither its rank nor its capture's start time: assumed to be of this run",
            "a rank (Kineto distributedInfo) or a capture time (nsys TARGET_INFO_SESSION_START_TIME) to tell its run by");
    std::string names;
    for (std::size_t i = 0; i < j.assumed.size() && i < 2; ++i) names += (i ? ", " : "") + j.assumed[i];
    if (j.assumed.size() > 2) names += fmt::format(" and {} more", j.assumed.size() - 2);
    assumed = fmt::format("assumed one run: {} record{} neither rank nor capture time to tell", names, j.assumed.size() == 1 ? "s" : "");
  }
  // Said in the title too: a pass shows no evidence in text.
  const std::string beside =
      j.not_traces.empty() ? "" : fmt::format("; {} file{} beside them {} no trace, left aside", j.not_traces.size(), j.not_traces.size() == 1 ? "" : "s", j.not_traces.size() == 1 ? "is" : "are");
  if (what.empty()) {
    f.status = report::Status::pass;
    if (!assumed.empty()) {
      f.title = fmt::format("{}, each read once, {}{}{}", of, assumed, j.world > 0 ? "" : " (whether ranks are missing is unknown)", beside);
      return f;
    }
    f.title = j.world > 0 ? fmt::format("{} of one run (world_size {}), each read once{}", of, j.world, beside)
                          : fmt::format("{} of one run, each read once (the traces record no world size: whether ranks are missing is unknown){}", of, beside);
    return f;
  }
  if (!assumed.empty()) what.push_back(assumed);
  f.status = report::Status::warn;
  std::string list;
  for (const auto& w : what) list += (list.empty() ? "" : "; ") + w;
  f.title = fmt::format("{} analysed as the job: {}{}{}", of, list, j.partial() ? "; job-level verdicts cover these ranks only and cannot pass" : "", beside);
  f.fix = j.partial() ? fmt::format("give every rank's trace ({}; a directory or a quoted glob takes them all) so that the job-level "
                                    "verdicts cover the whole job",
                                    framework_fix(fw, FixTopic::job_partial))
                      : "give the traces of one run only, each once";
  return f;
}

JobDigest read_profile_job(const std::vector<std::string>& files, const RankReader& read, const ProfileOptions& o, std::size_t threads) {
  JobDigest out;
  ProfileJob& job = out.job;
  Digest& all = out.all;
  const std::size_t n = files.size();
  if (n == 0) return out;
  const bool several = n > 1;
  std::vector<std::optional<Digest>> ready(n);  // every rank's digest: the job is decided on all of them
  std::vector<std::string> why(n);
  std::mutex mu;
  std::size_t next = 0, held = 0;
  // Each thread takes the next file, reads it, reduces it to its digest and drops the profile.
  // An unreadable rank is said and the others are read: the rank-set check counts it missing.
  auto work = [&] {
    for (;;) {
      std::size_t i = 0;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next == n) return;
        i = next++;
        job.profiles_held_peak = std::max(job.profiles_held_peak, ++held);
      }
      std::optional<Digest> d;
      std::string err;
      std::size_t acts = 0;
      {
        auto r = read(files[i]);
        if (!r) {
          err = r.error();
        } else if (auto* p = std::get_if<Profile>(&*r)) {
          // Of several files, each one's GPUs and notes say which file they are of.
          if (several) {
            for (auto& g : p->gpus) g.label = files[i] + ": " + g.label;
            for (auto& note : p->notes) note = files[i] + ": " + note;
          }
          acts = p->acts.size();
          d = digest(*p, o);
        } else if (auto sd = deserialize_digest(std::get<std::string>(*r)); !sd) {
          err = sd.error();
        } else if (auto why = digest_slots_damage(*sd, CommLibraries(o)); !why.empty()) {
          err = why;
        } else {
          // Labelled by the trace it was made from, as that trace would have been.
          if (several) {
            for (auto& g : sd->digest.gpus) g.label = sd->source + ": " + g.label;
            for (auto& note : sd->digest.notes) note = sd->source + ": " + note;
          }
          d = std::move(sd->digest);
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      --held;
      job.activities += acts;
      ready[i] = std::move(d);
      why[i] = std::move(err);
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < std::clamp<std::size_t>(threads, 1, n); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  // The job's rank set, then its digests absorbed in the files' order (the report is the one of
  // one thread).
  JobRanks jr;
  jr.several = several;
  jr.inputs = n;
  std::vector<RankInput> inputs;
  std::vector<std::size_t> input_file;
  for (std::size_t i = 0; i < n; ++i) {
    if (!ready[i] && why[i].starts_with(kNotATrace)) {
      jr.not_traces.emplace_back(files[i], why[i].substr(kNotATrace.size()));
      continue;
    }
    if (!ready[i]) {
      job.unusable.emplace_back(files[i], why[i]);
      jr.unreadable.emplace_back(files[i], why[i]);
      continue;
    }
    inputs.push_back(rank_input(files[i], *ready[i]));
    input_file.push_back(i);
  }
  RankSet set;
  if (several) {
    set = check_rank_set(inputs);
    jr.world = set.world;
    jr.ranks = set.ranks;
    jr.missing = set.missing;
    for (auto k : set.untied) jr.assumed.push_back(files[input_file[k]]);
  } else {
    set.left_out.assign(inputs.size(), "");
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::size_t i = input_file[k];
    if (!set.left_out[k].empty()) {
      jr.left_out.emplace_back(files[i], set.left_out[k]);
      ready[i].reset();
      continue;
    }
    absorb(all, std::move(*ready[i]), static_cast<std::uint32_t>(i));
    ready[i].reset();
    job.used.push_back(files[i]);
  }
  job.digest_bytes_peak = digest_bytes(all);
  if (job.used.empty()) return out;
  jr.kept = job.used.size();
  all.job = std::move(jr);
  out.source = job.used.size() == 1 ? job.used[0] : fmt::format("{} profiles", job.used.size());
  // One file kept of several: the evidence is sourced by it, so its GPUs need not repeat it
  // ("a.json.gz: a.json.gz: rank 3 GPU 3").
  if (several && job.used.size() == 1)
    for (auto& g : all.gpus)
      if (g.label.rfind(out.source + ": ", 0) == 0) g.label.erase(0, out.source.size() + 2);
  return out;
}


}  // namespace perfgap::analyzers::profile_model

namespace perfgap::analyzers {

RankReader profiles_only(const ProfileReader& read) {
  return [read](const std::string& file) -> tl::expected<RankRead, std::string> {
    auto p = read(file);
    if (!p) return tl::unexpected(p.error());
    return RankRead{std::move(*p)};
  };
}

std::vector<std::pair<std::string, std::string>> write_profile_digests(const std::vector<std::string>& files, const ProfileReader& read,
                                                                        const ProfileOptions& o, const DigestWriter& write) {
  std::vector<std::pair<std::string, std::string>> failed;
  for (const auto& f : files) {
    auto p = read(f);
    if (!p) {
      failed.emplace_back(f, p.error());
      continue;
    }
    const std::string bytes = profile_model::serialize_digest(profile_model::digest(*p, o), f, profile_model::CommLibraries(o).name);
    if (auto why = write(f, bytes); !why.empty()) failed.emplace_back(f, why);
  }
  return failed;
}

}  // namespace perfgap::analyzers
