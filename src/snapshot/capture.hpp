// `perfgap snapshot`: the files the checks declare they read (CheckInfo::reads), captured
// from a Sysroot into memory as a tree that `check --root` replays (contract: "Sysroot").
// Symbolic links stay links; a declared path that goes through one captures the link and
// the part of its target the path needs, never more; device nodes become empty files
// (/dev/cpu_dma_latency keeps its 4 bytes); environments keep every name and lose secret
// values. Nothing is written here: writers (snapshot/output.hpp) turn the tree into a
// directory or a .tar.gz.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sys/sysroot.hpp"

namespace perfgap::snapshot {

// One object of the captured tree, under its real (link-free) absolute path.
struct Entry {
  enum Kind { dir, file, link } kind = file;
  std::string content;  // file: the bytes; link: the target as the kernel has it
};

// What could not be captured, and why ("permission denied", "larger than 4 MiB", ...).
struct Skipped {
  std::string path, reason;
};

// How many objects a declared pattern (or an extra, such as the kernel log) brought in.
struct Matched {
  std::string pattern;
  std::string why;  // the checks declaring it, or why an extra is captured
  std::size_t count = 0;
};

struct Options {
  std::vector<int> pids;  // training processes named by the user; empty: detect them
  std::chrono::milliseconds proc_read_timeout{2000};  // per process (a stuck one is left behind)
  std::chrono::milliseconds numa_maps_budget{500};    // numa.remote_memory's max_read_ms default
  std::size_t max_file_bytes = 4u << 20;              // larger files are skipped (a few exceptions)
  std::size_t max_kernel_log_bytes = 16u << 20;       // the tail of the kernel log kept
  bool nvml = false;  // live: perfgap-gpu --nvml (GPUs out of persistence mode are queried too)
};

struct Capture {
  std::map<std::string, Entry> entries;  // "/proc/cpuinfo" -> file; sorted: parents first
  std::vector<Skipped> skipped;
  std::vector<Matched> matched;
  std::vector<int> training_pids;
  std::vector<std::string> process_problems;  // what process detection could not read
  bool live = false;
  std::string source_root;  // the tree captured from; empty when live
  std::string hostname;
  std::string started_at;   // RFC 3339, UTC
  double duration_ms = 0;
  std::uint64_t file_bytes() const;
  std::size_t count(Entry::Kind kind) const;
};

// The declared read patterns of every built-in check, with the ids that declare each.
std::vector<Matched> declared_patterns();

// Captures `source` (live "/" or a tree). Never writes anything; never fails as a whole:
// what it cannot read is listed in `skipped`.
Capture capture(const sys::Sysroot& source, const Options& opts);

// One path component against a declared pattern component: '*' any run of characters,
// '?' one, '[0-9]' / '[!x]' classes (fnmatch without flags).
bool component_matches(std::string_view pattern, std::string_view name);

// The manifest written to .perfgap/snapshot.json (docs/SNAPSHOT.md).
std::string manifest_json(const Capture& c, const std::string& tool_version);

}  // namespace perfgap::snapshot
