// Generated scenarios (profile_gen.hpp) written in a real format and read back by perfgap's own
// readers, as analyze nsys|kineto reads them: the profile tests' one way to get a model.
#pragma once

#include <stdexcept>
#include <string>

#include "files.hpp"
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

}  // namespace perfgap::fixture
