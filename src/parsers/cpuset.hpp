// A set of CPU (or NUMA node) numbers, and the kernel's list format ("0-3,8,10-11").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

class CpuSet {
 public:
  CpuSet() = default;
  void insert(int cpu);
  bool contains(int cpu) const;
  bool empty() const;
  std::size_t count() const;
  std::vector<int> members() const;
  CpuSet intersect(const CpuSet& other) const;
  CpuSet unite(const CpuSet& other) const;
  CpuSet minus(const CpuSet& other) const;
  bool intersects(const CpuSet& other) const { return !intersect(other).empty(); }
  bool subset_of(const CpuSet& other) const { return minus(other).empty(); }
  std::string to_list() const;  // kernel list format; "" when empty
  bool operator==(const CpuSet& o) const;

 private:
  std::vector<std::uint64_t> bits_;
};

// Kernel cpulist (also used for node lists and smp_affinity_list). Empty text is the empty
// set (an offline node). Rejects anything else that is not the format, with the column.
Parsed<CpuSet> parse_cpulist(std::string_view text);
// cpufreq's affected_cpus/related_cpus: CPU numbers separated by spaces ("0 1 2 3").
Parsed<CpuSet> parse_cpu_words(std::string_view text);
// Kernel cpumask ("ff,00000001", 32-bit hex words, most significant first).
Parsed<CpuSet> parse_cpumask(std::string_view text);

}  // namespace perfgap::parsers
