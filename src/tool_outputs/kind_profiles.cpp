// analyze nsys and kineto: GPU timeline profiles, one rank or a job's ranks (files,
// directories, globs), aligned across ranks by analyzers/profile.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <set>
#include <thread>
#include <unordered_set>
#include <variant>

#include "tool_outputs/inputs.hpp"
#include "tool_outputs/kinds.hpp"
#include "analyzers/analyzers.hpp"
#include "analyzers/profile_job.hpp"
#include "core/kb.hpp"
#include "fleet/inputs.hpp"
#include "sys/named_file.hpp"
#include "sys/paths.hpp"
#include "sys/output.hpp"
#include "parsers/nccl_tests.hpp"

namespace perfgap::tool_outputs::detail {

namespace {
// A job's rank files read together (docs/ANALYZE.md, cross-rank).
constexpr std::size_t kMaxProfileRanks = 16384;
// The site's knowledge base (docs/KB.md), read as explain reads it.
constexpr const char* kProfileSystemKbDir = "/etc/perfgap/kb.d";
}  // namespace

namespace {

// What analyze nsys|kineto and whatif run on the job once its inputs are known: its files read
// by `read` and reduced on `threads` threads.
using JobRunner = std::function<analyzers::ProfileJob(const std::vector<std::string>& files, const analyzers::RankReader& read,
                                                      const analyzers::ProfileOptions& o, std::size_t threads)>;

// A rank's input: a digest whatif --digest wrote (its bytes), else its trace or export.
// A file found in a directory or by a glob that is no trace at all (a config.json beside the
// traces) is left aside (analyzers::kNotATrace), not an unreadable rank; one named is read as given.
analyzers::RankReader rank_reader(std::string_view kind, const std::unordered_set<std::string>& listed) {
  return [kind, &listed](const std::string& f) -> tl::expected<analyzers::RankRead, std::string> {
    if (f.ends_with(analyzers::kDigestSuffix)) {
      auto bytes = sys::read_named_file(f, sys::kMaxInputBytes);
      if (!bytes) return tl::unexpected(f + ": " + bytes.error());
      return analyzers::RankRead{std::move(*bytes)};
    }
    auto p = read_profile(kind, f);
    if (!p && kind != "nsys" && listed.contains(f) && parsers::is_not_a_kineto_trace(p.error()))
      return tl::unexpected(std::string(analyzers::kNotATrace) + p.error());
    if (!p) return tl::unexpected(p.error());
    return analyzers::RankRead{std::move(*p)};
  };
}

tl::expected<Result, std::string> run_profile_job(const Analyzer& an, const Request& r, const JobRunner& run_job) {
  if (auto ok = reference_is_a_file(an, r, "profile"); !ok) return tl::unexpected(ok.error());
  const std::string_view k = an.kind;
  // The knowledge base's communication kernels (data/kb/comm_kernels.yaml, kb.d, --kb) before any
  // input: a malformed file is exit 2 naming its line.
  std::vector<core::KbDir> dirs{{kProfileSystemKbDir, true}};
  for (const auto& d : r.kb_dirs) dirs.push_back({d, false});
  auto kb = core::load_kb(dirs);
  if (!kb) return tl::unexpected(fmt::format("analyze {}: knowledge base {}", k, kb.error()));
  analyzers::ProfileOptions po;
  po.iteration_range = r.iteration_range;
  po.comm_kernels = &kb->comm_kernels;
  analyzers::ProfileFigures ref;
  if (!r.reference.empty()) {
    auto p = read_profile(k, r.reference);
    if (!p) return tl::unexpected("--reference " + r.reference + ": " + p.error());
    ref = analyzers::profile_figures(*p, po);
    po.reference = &ref;
    po.reference_source = r.reference;
  }
  // A job's ranks: files, directories (their traces/exports) and quoted globs.
  auto expanded = fleet::expand_inputs(r.files, [&](std::string_view n) { return is_profile_name(k, n) || n.ends_with(analyzers::kDigestSuffix); },
                                       k == "nsys" ? "nsys export (.sqlite, .nsys-rep)" : "Kineto trace (.json, .json.gz)");
  if (!expanded.problems.empty()) return tl::unexpected(fmt::format("analyze {}: {}: {}", k, expanded.problems[0].file, expanded.problems[0].why));
  const auto& files = expanded.files;
  if (files.size() > kMaxProfileRanks)
    return tl::unexpected(fmt::format("analyze {}: {} profiles; at most {} ranks are analysed together", k, files.size(), kMaxProfileRanks));
  Collected c{an, {}, {}, 0};
  // Each rank read, reduced to its digest and dropped (analyzers/profile_job.hpp): memory does
  // not grow with the ranks. Ranks on every core (up to 8); `nsys export`s one at a time.
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
  auto job = run_job(files, rank_reader(k, expanded.listed), po, threads);
  // An unreadable rank is an error finding of its own; the others are analysed, and the job-level
  // verdicts, missing it, cannot pass (profile.ranks). A file beside the traces that is no trace
  // is said and left aside (the job's own profile.ranks says it; whatif --digest, here).
  for (const auto& [file, why] : job.unusable) {
    if (!why.starts_with(analyzers::kNotATrace)) {
      c.bad(file, why);
      continue;
    }
    report::Finding f;
    f.id = "whatif.digest";
    f.layer = "workload";
    f.subject = file;
    f.status = report::Status::skip;
    f.title = "left aside, not a trace (found beside the traces): " + why.substr(analyzers::kNotATrace.size());
    c.findings.push_back(std::move(f));
  }
  if (job.used.empty()) return tl::unexpected(c.no_usable_input());
  c.usable = job.used.size();
  c.append(std::move(job.findings));
  return c.finish(files);
}

}  // namespace

bool is_profile_name(std::string_view kind, std::string_view n) {
  if (kind == "nsys") return n.ends_with(".sqlite") || n.ends_with(".nsys-rep") || n.ends_with(".qdrep");
  return n.ends_with(".json") || n.ends_with(".json.gz");
}

tl::expected<Result, std::string> run_profiles(const Analyzer& an, const Request& r) {
  return run_profile_job(an, r, [](const auto& files, const auto& read, const auto& o, std::size_t threads) {
    return analyzers::analyze_profile_job(files, read, o, threads);
  });
}

namespace {

// The scale an --nccl-tests run measured (its ranks and nodes, where the output shows them).
struct NcclTestsScale {
  std::string source;
  std::optional<long> ranks, nodes;
  bool ranks_inferred = false;  // read from busbw/algbw (the output names no ranks)
};

// What the replay must say of a run beside its curve: a label (COLL=FILE) the file contradicts
// (analyze's reading of it: the collective its output or its name says, its redop and busbw/algbw),
// and analyze's busbw_collapse warning (a run whose busbw collapses is no healthy one).
void nccl_tests_curve_checks(analyzers::BusbwCurve& c, const parsers::NcclTestsRun& run, parsers::Coll said, const std::string& label) {
  const auto findings = analyzers::analyze_nccl_tests(run, c.source, {});
  for (const auto& f : findings)
    if (f.id == "nccl_tests.busbw_collapse" && f.status == report::Status::warn) c.collapse = f.title;
  if (said == parsers::Coll::none) return;
  auto why = analyzers::nccl_tests_label_contradictions(run, said);
  if (why.empty()) return;
  // What analyze names as the collective measured (the output's name, the file's name, or the
  // figures), where it is another.
  for (const auto& f : findings)
    for (const auto& e : f.evidence)
      if (e.source == parsers::kCollectiveMeasuredEvidence && !e.observed.starts_with(parsers::coll_name(said)))
        why.push_back("analyze nccl-tests names the collective measured " + e.observed);
  c.label_refused = fmt::format("{} is given as {}= ({}), but the file shows another collective: {}", c.source, label, parsers::coll_name(said),
                                fmt::join(why, "; "));
}

// Each --nccl-tests output as its collective's bandwidth by size (the better of in and out of place).
tl::expected<std::vector<analyzers::BusbwCurve>, std::string> busbw_curves(const std::vector<std::string>& files, std::vector<NcclTestsScale>& scales) {
  std::vector<analyzers::BusbwCurve> out;
  for (const auto& given : files) {
    // COLL=FILE says the collective where the output does not ("all_reduce=run.txt").
    std::string file = given;
    parsers::Coll said = parsers::Coll::none;
    if (auto eq = given.find('=');
        eq != std::string::npos && (said = parsers::collective_named(given.substr(0, eq))) != parsers::Coll::none)
      file = given.substr(eq + 1);
    auto run = parse_input<parsers::NcclTestsParser>(file);
    if (!run) return tl::unexpected("--nccl-tests " + file + ": " + run.error());
    scales.push_back({file, run->ranks(), run->nodes()});
    if (!scales.back().ranks)
      if (auto inferred = analyzers::nccl_tests_inferred_ranks(*run)) scales.back().ranks = inferred, scales.back().ranks_inferred = true;
    analyzers::BusbwCurve c;
    c.source = file;
    c.gpu_models = run->gpu_models;
    c.coll = said != parsers::Coll::none ? said : parsers::collective_named(run->collective.empty() ? file : run->collective);
    if (c.coll == parsers::Coll::none)
      return tl::unexpected("--nccl-tests " + file + ": which collective it measured is not said (no all_reduce_perf-style line, and its path names "
                            "none): give it as all_reduce=" + file);
    nccl_tests_curve_checks(c, *run, said, given.substr(0, given.find('=')));
    for (const auto& row : run->rows) {
      double best = 0;
      for (const auto& f : {row.out_of_place, row.in_place})
        if (f && f->busbw > best) best = f->busbw;
      if (best > 0 && row.size > 0) c.points.emplace_back(row.size, best);
    }
    std::sort(c.points.begin(), c.points.end());
    if (c.points.empty() && scales.back().ranks == 1L)
      return tl::unexpected("--nccl-tests " + file + ": a run of 1 rank: nothing crosses a link, so its bus bandwidth is 0 by definition; give a run "
                            "at the job's scale");
    if (c.points.empty()) return tl::unexpected("--nccl-tests " + file + ": no row with a bus bandwidth");
    out.push_back(std::move(c));
  }
  return out;
}

// whatif --digest DIR: each trace written as DIR/NAME.pgdigest (NAME: the trace's name without
// its extension), a whatif.digest finding each; an unreadable trace an error finding.
tl::expected<Result, std::string> write_digests(const Analyzer& an, const Request& r) {
  if (auto made = sys::make_output_directory(r.digest_dir); !made) return tl::unexpected("--digest " + r.digest_dir + ": " + made.error());
  std::set<std::string> names;
  return run_profile_job(an, r, [&](const auto& files, const auto& rank_read, const auto& o, std::size_t) {
    analyzers::ProfileJob job;
    auto read = [&](const std::string& f) -> tl::expected<parsers::Profile, std::string> {
      auto got = rank_read(f);
      if (!got) return tl::unexpected(got.error());
      if (auto* p = std::get_if<parsers::Profile>(&*got)) return std::move(*p);
      return tl::unexpected(std::string("a digest already: whatif --digest writes the digests of traces"));
    };
    auto write = [&](const std::string& f, const std::string& bytes) -> std::string {
      std::string name = sys::base_name(f);
      for (std::string_view ext : std::initializer_list<std::string_view>{".json.gz", ".json", ".nsys-rep", ".qdrep", ".sqlite", analyzers::kDigestSuffix})
        if (name.ends_with(ext)) {
          name.resize(name.size() - ext.size());
          break;
        }
      const std::string out = r.digest_dir + "/" + name + std::string(analyzers::kDigestSuffix);
      if (!names.insert(out).second) return "another trace of the same name was written to " + out + ": give the traces names of their own";
      if (auto ok = sys::write_atomically(out, bytes); !ok) return out + ": " + ok.error();
      report::Finding d;
      d.id = "whatif.digest";
      d.layer = "workload";
      d.subject = f;
      d.status = report::Status::pass;
      d.title = fmt::format("wrote {} ({} bytes)", out, bytes.size());
      d.metric("bytes", static_cast<double>(bytes.size()));
      job.findings.push_back(std::move(d));
      job.used.push_back(f);
      return "";
    };
    job.unusable = analyzers::write_profile_digests(files, read, o, write);
    return job;
  });
}

}  // namespace

namespace {

// The job's ranks as the replay read them: whatif.replay's `world_size` (the traces' recorded
// world size), else its `ranks` (the ranks traced); 0 when unsaid.
long whatif_job_ranks(const std::vector<report::Finding>& findings) {
  long traced = 0, world = 0;
  for (const auto& f : findings)
    if (f.id == "whatif.replay")
      for (const auto& [name, v] : f.metrics) {
        if (name == "ranks" && v > 0) traced = static_cast<long>(v);
        if (name == "world_size" && v > 0) world = static_cast<long>(v);
      }
  return world > 0 ? world : traced;
}

// whatif.nccl_tests replays the job at the bandwidth of the nccl-tests runs given: a run of
// another scale (ranks, nodes) moved its data over other links (16 ranks on 2 nodes cross the
// NICs; 2 ranks on one node do not), so its bandwidth is another job's. Each run's scale is said
// in the finding's evidence, and one that differs from the job's ranks in its title.
void whatif_nccl_tests_scale(std::vector<report::Finding>& findings, const std::vector<NcclTestsScale>& scales) {
  const long job = whatif_job_ranks(findings);
  for (auto& f : findings) {
    if (f.id != "whatif.nccl_tests") continue;
    std::vector<std::string> unlike;
    for (const auto& s : scales) {
      const std::string at = fmt::format("{} rank{}{}{}", s.ranks ? std::to_string(*s.ranks) : std::string("?"), s.ranks == 1 ? "" : "s",
                                         s.ranks_inferred ? " (by busbw/algbw)" : "",
                                         s.nodes ? fmt::format(" on {} node{}", *s.nodes, *s.nodes == 1 ? "" : "s") : std::string());
      const bool differs = job > 0 && s.ranks && *s.ranks != job;
      report::Evidence e{s.source, fmt::format("nccl-tests measured on {}{}", s.ranks ? at : std::string("ranks and nodes not shown"),
                                               job > 0 ? fmt::format("; the job has {} rank{}", job, job == 1 ? "" : "s") : std::string()),
                         std::nullopt};
      if (differs) e.expected = fmt::format("a run at the job's scale ({} ranks, on its nodes): another scale's bandwidth crosses other links", job);
      f.evidence.push_back(std::move(e));
      if (differs) unlike.push_back(fmt::format("{} ({})", s.source, at));
    }
    // A skip (a run of another GPU: whatif.cpp) saves nothing: its title says why already.
    if (!unlike.empty() && f.status != report::Status::skip) {
      f.title += fmt::format(" (at the bandwidth of nccl-tests at another scale than the job's {} rank{}: {})", job, job == 1 ? "" : "s", fmt::join(unlike, "; "));
      // explain takes such a saving as a hypothesis, not the job's measurement (docs/EXPLAIN.md).
      f.metric("other_scale", 1);
      // Another scale's bandwidth is no measure of the job's settings: measure at its scale first.
      if (!f.fix.empty())
        f.fix = fmt::format("the bandwidth is nccl-tests' at another scale than the job's ({}), over other links: no measure of the job's NCCL "
                            "settings; run nccl-tests at the job's scale ({} rank{}, on its nodes, all_reduce_perf -g 1 under its launcher) "
                            "and replay at that before tuning",
                            fmt::join(unlike, "; "), job, job == 1 ? "" : "s");
    }
  }
}

}  // namespace

tl::expected<Result, std::string> run_whatif(const Analyzer& an, const Request& r, const analyzers::WhatifOptions& given) {
  analyzers::WhatifOptions w = given;
  std::vector<NcclTestsScale> scales;
  auto curves = busbw_curves(r.nccl_tests, scales);
  if (!curves) return tl::unexpected(curves.error());
  w.curves = std::move(*curves);
  if (!r.digest_dir.empty()) return write_digests(an, r);
  auto result = run_profile_job(an, r, [&](const auto& files, const auto& read, const auto& o, std::size_t threads) {
    return analyzers::whatif_profile_job(files, read, o, w, threads);
  });
  if (result && !scales.empty()) whatif_nccl_tests_scale(result->findings, scales);
  return result;
}

}  // namespace perfgap::tool_outputs::detail

namespace perfgap::tool_outputs {

tl::expected<Result, std::string> whatif(const Analyzer& analyzer, const Request& request, const analyzers::WhatifOptions& w) {
  return detail::run_whatif(analyzer, request, w);
}

std::string profile_kind_of(const std::vector<std::string>& inputs) {
  // Files and globs by their names; directories by what they hold, as the job's inputs are
  // found (fleet::expand_inputs): Kineto traces where there are any.
  for (const auto& in : inputs) {
    if (detail::is_profile_name("nsys", in)) return "nsys";
    if (detail::is_profile_name("kineto", in)) return "kineto";
  }
  auto found = [&](const char* kind) {
    auto x = fleet::expand_inputs(inputs, [&](std::string_view n) { return detail::is_profile_name(kind, n); }, kind);
    return x.problems.empty() && !x.files.empty();
  };
  return !found("kineto") && found("nsys") ? "nsys" : "kineto";
}

}  // namespace perfgap::tool_outputs
