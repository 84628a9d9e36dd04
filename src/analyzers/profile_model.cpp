// The profile analyzer's small shared pieces: interval lists, medians, histograms, step names,
// the findings' percentages and words.
#include "analyzers/profile_model.hpp"

#include <algorithm>
#include <map>
#include <cstdlib>
#include <cctype>
#include <cmath>

namespace perfgap::analyzers::profile_model {

std::string library_key(std::string_view name) {
  std::string k;
  for (char ch : name) {
    const auto u = static_cast<unsigned char>(ch);
    if (std::isalnum(u)) k.push_back(static_cast<char>(std::tolower(u)));
    else if (ch == '+') k.push_back('p');
    else if (!k.empty() && k.back() != '_') k.push_back('_');
  }
  while (!k.empty() && k.back() == '_') k.pop_back();
  return k.empty() ? "library" : k;
}

Finding started(std::string_view id, std::string_view layer, std::string subject) {
  Finding f;
  f.id = std::string(id);
  f.layer = std::string(layer);
  f.subject = std::move(subject);
  return f;
}

void push(Ivs& u, std::int64_t s, std::int64_t e) {
  if (e <= s) return;
  if (!u.empty() && s <= u.back().e) u.back().e = std::max(u.back().e, e);
  else u.push_back({s, e});
}

Ivs minus(const Ivs& a, const Ivs& b) {
  Ivs out;
  std::size_t j = 0;
  for (const auto& x : a) {
    std::int64_t s = x.s;
    while (j < b.size() && b[j].e <= s) ++j;
    std::size_t k = j;
    while (k < b.size() && b[k].s < x.e) {
      if (b[k].s > s) out.push_back({s, b[k].s});
      s = std::max(s, b[k].e);
      if (s >= x.e) break;
      ++k;
    }
    if (s < x.e) out.push_back({s, x.e});
  }
  return out;
}

std::int64_t measure(const Ivs& u, std::int64_t ws, std::int64_t we) {
  auto it = std::lower_bound(u.begin(), u.end(), ws, [](const Iv& v, std::int64_t t) { return v.e <= t; });
  std::int64_t sum = 0;
  for (; it != u.end() && it->s < we; ++it) sum += std::min(it->e, we) - std::max(it->s, ws);
  return sum;
}

double ms(double ns) { return ns / 1e6; }

double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

std::string size_text(double bytes) {
  if (bytes >= 1 << 30) return fmt::format("{:.2f} GiB", bytes / (1 << 30));
  if (bytes >= 1 << 20) return fmt::format("{:.2f} MiB", bytes / (1 << 20));
  if (bytes >= 1 << 10) return fmt::format("{:.1f} KiB", bytes / (1 << 10));
  return fmt::format("{:.0f} B", bytes);
}

std::int64_t recorded_world(const Digest& d) {
  if (d.job.world >= 0) return d.job.world;
  for (const auto& [k, v] : d.system)
    if (k == "world_size") return std::atoll(v.c_str());
  return -1;
}

std::string_view window_noun(const Analysis& an) { return an.iterations ? "iteration" : "capture"; }

std::string iteration_words(const Analysis& an) {
  return an.iterations ? "per iteration" : "over the whole profile (no iterations found)";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(h), v.end());
  const double hi = v[h];
  if (v.size() % 2) return hi;
  return (*std::max_element(v.begin(), v.begin() + static_cast<long>(h)) + hi) / 2;
}

double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  k = std::clamp<std::size_t>(k, 1, v.size()) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

CopyClass copy_class(const GpuActivity& a) {
  using parsers::CopyKind;
  using parsers::HostMem;
  if (a.kind == ActKind::memset) return kMemset;
  auto host = [&](CopyClass pageable) {
    switch (a.host_mem) {
      case HostMem::pageable: return pageable;
      case HostMem::pinned: return static_cast<CopyClass>(pageable + 1);
      case HostMem::managed: return static_cast<CopyClass>(pageable + 2);
      default: return static_cast<CopyClass>(pageable + 3);
    }
  };
  switch (a.copy) {
    case CopyKind::h2d: return host(kH2dPageable);
    case CopyKind::d2h: return host(kD2hPageable);
    case CopyKind::d2d: return kD2d;
    case CopyKind::p2p: return kP2p;
    default: return kOtherCopy;
  }
}

void radix_sort(std::vector<std::int64_t>& v) {
  if (v.size() < 256) {
    std::sort(v.begin(), v.end());
    return;
  }
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  auto key = [](std::int64_t x) { return static_cast<std::uint64_t>(x) ^ (std::uint64_t{1} << 63); };  // signed order
  std::vector<std::int64_t> tmp(v.size());
  std::vector<std::size_t> count(kBuckets);
  for (int shift = 0; shift < 64; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (auto x : v) ++count[(key(x) >> shift) & (kBuckets - 1)];
    if (count[(key(v[0]) >> shift) & (kBuckets - 1)] == v.size()) continue;
    std::size_t sum = 0;
    for (auto& c : count) sum += std::exchange(c, sum);
    for (auto x : v) tmp[count[(key(x) >> shift) & (kBuckets - 1)]++] = x;
    v.swap(tmp);
  }
}

Hist hist_of(std::vector<std::int64_t>& v) {
  radix_sort(v);
  Hist h;
  for (auto x : v) {
    if (!h.empty() && h.back().first == x) ++h.back().second;
    else h.emplace_back(x, 1);
  }
  return h;
}

void hist_add(Hist& into, const Hist& more) {
  if (more.empty()) return;
  Hist out;
  out.reserve(into.size() + more.size());
  std::size_t i = 0, j = 0;
  while (i < into.size() || j < more.size()) {
    if (j == more.size() || (i < into.size() && into[i].first < more[j].first)) out.push_back(into[i++]);
    else if (i == into.size() || more[j].first < into[i].first) out.push_back(more[j++]);
    else out.emplace_back(into[i].first, into[i].second + more[j].second), ++i, ++j;
  }
  into = std::move(out);
}

double hist_percentile_us(const Hist& h, double q) {
  std::uint64_t n = 0;
  for (const auto& [v, c] : h) n += c;
  if (n == 0) return 0;
  auto k = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n)));
  k = std::clamp<std::uint64_t>(k, 1, n) - 1;
  for (const auto& [v, c] : h) {
    if (k < c) return static_cast<double>(v) / 1e3;
    k -= c;
  }
  return 0;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool profiler_step(std::string_view n) {
  if (!starts_with(n, "ProfilerStep#") || n.size() == 13) return false;
  for (char c : n.substr(13))
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::int64_t profiler_step_number(std::string_view n) {
  if (!profiler_step(n) || n.size() > 13 + 15) return -1;
  std::int64_t v = 0;
  for (char c : n.substr(13)) v = v * 10 + (c - '0');
  return v;
}

bool step_like(std::string_view n) {
  std::string s;
  for (char c : n) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  std::string_view v = s;
  for (std::string_view pre : {"training", "train"})
    if (starts_with(v, pre)) {
      v.remove_prefix(pre.size());
      while (!v.empty() && (v.front() == '_' || v.front() == ' ' || v.front() == '-')) v.remove_prefix(1);
      break;
    }
  bool word = false;
  for (std::string_view w : {"iteration", "iter", "step"})
    if (starts_with(v, w)) {
      v.remove_prefix(w.size());
      word = true;
      break;
    }
  if (!word) return false;
  while (!v.empty() && (v.front() == '_' || v.front() == ' ' || v.front() == '#' || v.front() == ':' || v.front() == '-' || v.front() == '=')) v.remove_prefix(1);
  for (char c : v)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool range_named(std::string_view n, std::string_view want) {
  if (n == want) return true;
  if (!starts_with(n, want)) return false;
  char next = n[want.size()];
  return !std::isalpha(static_cast<unsigned char>(next));
}

// Both merged and sorted.
Ivs intersect(const Ivs& a, const Ivs& b) {
  Ivs out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t s = std::max(a[i].s, b[j].s), e = std::min(a[i].e, b[j].e);
    if (s < e) out.push_back({s, e});
    if (a[i].e < b[j].e) ++i;
    else ++j;
  }
  return out;
}

bool StallTime::calls_hold() const { return in_calls >= kHostStallNs && !calls.empty() && 2 * in_calls >= ns; }

std::vector<std::string> StallTime::call_names() const {
  std::vector<std::string> out;
  out.reserve(calls.size());
  for (const auto& [n, t] : calls) out.push_back(n);
  return out;
}

StallTime stall_time(const Analysis& an) {
  StallTime s;
  std::map<std::string, std::int64_t> by_name;
  for (const auto& gt : an.gpus) {
    s.ns += gt.stall_ns, s.in_calls += gt.stall_in_calls;
    for (const auto& [n, t] : gt.stall_calls) by_name[n] += t;
  }
  s.calls.assign(by_name.begin(), by_name.end());
  std::stable_sort(s.calls.begin(), s.calls.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  return s;
}

std::string sampled_trace_evidence(const Digest& d, double* held_pct) {
  const parsers::GpuInfo* worst = nullptr;
  for (const auto& g : d.gpus)
    if (g.host_calls >= kSampledMinCalls && g.corr_gap_median >= kSampledCorrGap && (!worst || g.corr_gap_median > worst->corr_gap_median)) worst = &g;
  if (!worst) return {};
  const auto held = static_cast<double>(worst->host_calls), span = static_cast<double>(std::max<std::int64_t>(1, worst->corr_span));
  if (held_pct) *held_pct = 100.0 * held / span;
  return fmt::format(
      "a filtered or sampled trace: {} holds {} of the {} host calls its correlation ids number ({:.1f}%; consecutive ones {} ids apart at the "
      "median, 1 to 6 in a complete Kineto trace){}: the GPU work and host calls left out read as idle and as host stalls",
      worst->label, worst->host_calls, worst->corr_span, 100.0 * held / span, worst->corr_gap_median,
      worst->launching_calls == worst->host_calls ? ", and every one it holds launched GPU work (a complete trace holds syncs, event records, allocations)"
                                                   : "");
}

}  // namespace perfgap::analyzers::profile_model
