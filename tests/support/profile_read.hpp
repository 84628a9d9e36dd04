// Generated scenarios (profile_gen.hpp) written in a real format and read back by perfgap's own
// readers, as analyze nsys|kineto reads them: the profile tests' one way to get a model.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "analyzers/profile_job.hpp"
#include "files.hpp"
#include "report/render.hpp"
#include "parsers/gunzip.hpp"
#include "parsers/profile.hpp"
#include "profile_gen.hpp"
#include "tree.hpp"

namespace perfgap::fixture {

// The scenario as one nsys SQLite export (every process of it).
inline parsers::Profile profile_from_nsys(const gen::Scenario& s) {
  TempDir t;
  auto path = t.file("p.sqlite");
  auto err = gen::write_nsys_sqlite(s, path);
  if (!err.empty()) throw std::runtime_error(err);
  auto p = parsers::read_nsys_sqlite(read_file(path));
  if (!p) throw std::runtime_error(p.error().describe());
  return std::move(*p);
}

// One Kineto trace per GPU (rank g is GPU g), merged in order as analyze kineto merges files.
inline parsers::Profile profile_from_kineto_ranks(const gen::Scenario& s) {
  parsers::Profile all;
  for (std::size_t g = 0; g < s.gpus.size(); ++g) {
    auto p = parsers::parse_kineto(gen::kineto_json(s, g, static_cast<int>(g)));
    if (!p) throw std::runtime_error(p.error().describe());
    all.merge(std::move(*p), static_cast<std::uint32_t>(g));
  }
  return all;
}

// One nsys export per rank, each with its node's host name (a job's own exports), merged in order.
inline parsers::Profile profile_from_nsys_ranks(const gen::Scenario& s) {
  TempDir t;
  parsers::Profile all;
  for (std::size_t g = 0; g < s.gpus.size(); ++g) {
    auto path = t.file("rank" + std::to_string(g) + ".sqlite");
    auto err = gen::write_nsys_sqlite(gen::rank_of(s, g), path);
    if (!err.empty()) throw std::runtime_error(err);
    auto p = parsers::read_nsys_sqlite(read_file(path));
    if (!p) throw std::runtime_error(p.error().describe());
    all.merge(std::move(*p), static_cast<std::uint32_t>(g));
  }
  return all;
}

// One Kineto trace per GPU held in memory as the job's files ("trace/rankG.json"), and the
// reader analyze_profile_job and whatif_profile_job take: a job without a file system.
struct KinetoRankTraces {
  std::vector<std::string> files;
  std::vector<std::string> json;
  analyzers::ProfileReader reader() const {
    return [this](const std::string& f) -> tl::expected<parsers::Profile, std::string> {
      for (std::size_t i = 0; i < files.size(); ++i)
        if (files[i] == f) {
          auto p = parsers::parse_kineto(json[i]);
          if (!p) return tl::unexpected(p.error().describe());
          return std::move(*p);
        }
      return tl::unexpected(std::string("no such file"));
    };
  }
};

inline KinetoRankTraces kinetos_of_ranks(const gen::Scenario& s) {
  KinetoRankTraces j;
  for (std::size_t g = 0; g < s.gpus.size(); ++g) {
    j.files.push_back("trace/rank" + std::to_string(g) + ".json");
    j.json.push_back(gen::kineto_json(s, g, static_cast<int>(g)));
  }
  return j;
}

// One nsys export per rank written in `dir` as the job's own files (rankG.sqlite, each with its
// node's host name), and the reader analyze_profile_job and whatif_profile_job take for them.
inline std::vector<std::string> nsys_rank_files(const gen::Scenario& s, const TempDir& dir) {
  std::vector<std::string> files;
  for (std::size_t g = 0; g < s.gpus.size(); ++g) {
    files.push_back(dir.file("rank" + std::to_string(g) + ".sqlite"));
    auto err = gen::write_nsys_sqlite(gen::rank_of(s, g), files.back());
    if (!err.empty()) throw std::runtime_error(err);
  }
  return files;
}
inline analyzers::ProfileReader nsys_file_reader() {
  return [](const std::string& f) -> tl::expected<parsers::Profile, std::string> {
    auto p = parsers::read_nsys_sqlite(read_file(f));
    if (!p) return tl::unexpected(p.error().describe());
    return std::move(*p);
  };
}

// The reader of Kineto traces as files, gzip'd or not (the public traces of ../shared).
inline analyzers::ProfileReader kineto_file_reader() {
  return [](const std::string& file) -> tl::expected<parsers::Profile, std::string> {
    auto text = parsers::gunzip(read_file(file), 1u << 30);
    if (!text) return tl::unexpected(std::string("gunzip"));
    auto p = parsers::parse_kineto(*text);
    if (!p) return tl::unexpected(p.error().describe());
    return std::move(*p);
  };
}

// Findings as the JSON report renders them: two jobs' answers compared byte for byte.
inline std::string findings_json(std::vector<report::Finding> fs) {
  report::Report r;
  r.findings = std::move(fs);
  return report::render_json(r);
}

}  // namespace perfgap::fixture
