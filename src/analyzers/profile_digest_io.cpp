// A rank's digest as bytes (whatif --digest, docs/WHATIF.md "Digests"): every field the job's
// analysis reads, in one field list used both ways, little-endian fixed-width integers, IEEE
// doubles, length-prefixed strings and vectors. A digest read back analyses exactly as the
// digest it was written from. Bad bytes are an error naming the byte, never a crash.
#include <bit>
#include <cstring>
#include <type_traits>

#include "analyzers/profile_model.hpp"

namespace perfgap::analyzers::profile_model {

namespace {

// "perfgap digest", then a version: a digest of another version is refused, not misread.
constexpr std::string_view kDigestMagic = "perfgap-digest\n";
// 2: each GPU's send/recv kernels and its rank (pipelines); 3: the host's synchronising calls;
// 4: the framework its names show; 6: where the host stalls' time went (each GPU's stall time in
// host calls, by name) and how complete its trace is (GpuInfo's host-call coverage)
constexpr std::uint32_t kDigestVersion = 6;
// No vector of a rank's digest holds this many entries (150k kernels are ~10^5 intervals).
constexpr std::uint64_t kMaxDigestEntries = std::uint64_t{1} << 32;

static_assert(std::endian::native == std::endian::little, "digests are written little-endian as the machine holds them");

// The one field list of each struct, for both directions (declared before the writer and the
// reader, whose templates call them).
template <class A>
void fields(A& a, Iv& v) { a.all(v.s, v.e); }
template <class A>
void fields(A& a, Win& v) { a.all(v.s, v.e, v.step); }
template <class A>
void fields(A& a, LocalStats& v) { a.all(v.len, v.compute, v.copy, v.idle, v.host_idle, v.host_stall); }
template <class A>
void fields(A& a, CutWindows& v) { a.all(v.wins, v.stats); }
template <class A>
void fields(A& a, WinStats& v) {
  a.all(v.len, v.compute, v.busy, v.idle, v.host_idle, v.copy, v.comm_all, v.exposed_all, v.wait, v.copy_bare, v.copy_by, v.comm, v.exposed, v.kernels, v.host_stall);
}
template <class A>
void fields(A& a, RankCollective& v) { a.all(v.coll, v.start, v.end, v.step, v.host_wait, v.bytes, v.group, v.host_stall); }
template <class A>
void fields(A& a, P2pOp& v) { a.all(v.start, v.end, v.step, v.host_wait, v.bytes, v.peer, v.dir, v.host_stall); }
template <class A>
void fields(A& a, parsers::GpuInfo& v) {
  a.all(v.file, v.process, v.device, v.label, v.key, v.host, v.host_calls, v.launching_calls, v.corr_span, v.corr_gap_median);
}
template <class A>
void fields(A& a, GpuTimeline& v) {
  a.all(v.acts, v.kernels, v.compute, v.comm_all, v.exposed_all, v.wait, v.comm, v.exposed, v.copies, v.copy_bare, v.colls, v.nccl, v.seq,
        v.compute_before, v.p2p, v.rank, v.cuts, v.period, v.kernel_ns, v.nccl_ns, v.first, v.last, v.wins, v.windows, v.total, v.host_stalls, v.host_stall_longest,
        v.stall_ns, v.stall_in_calls, v.stall_calls);
}
template <class A>
void fields(A& a, parsers::FrameworkSeen& v) { a.all(v.framework, v.why); }
template <class A>
void fields(A& a, Digest& v) {
  a.all(v.framework, v.format, v.gpus, v.tl, v.api_calls, v.ranges, v.sync_calls, v.sync_ns, v.env_present, v.graphs, v.empty, v.env, v.system, v.notes, v.found, v.shown, v.api_ns,
        v.delay_ns, v.launches, v.short_kernels, v.graph_kernels, v.copy_count, v.copy_bytes, v.coll_kernels, v.coll_bytes, v.coll_group, v.coll_ns);
}

class DigestBytesOut {
 public:
  std::string out;
  template <class T>
  void operator()(const T& v) {
    if constexpr (std::is_enum_v<T>) {
      (*this)(static_cast<std::underlying_type_t<T>>(v));
    } else if constexpr (std::is_same_v<T, bool>) {
      out.push_back(v ? 1 : 0);
    } else if constexpr (std::is_arithmetic_v<T>) {
      char b[sizeof(T)];
      std::memcpy(b, &v, sizeof(T));
      out.append(b, sizeof(T));
    } else {
      fields(*this, const_cast<T&>(v));
    }
  }
  void operator()(const std::string& s) {
    (*this)(static_cast<std::uint64_t>(s.size()));
    out += s;
  }
  template <class A, class B>
  void operator()(const std::pair<A, B>& p) {
    (*this)(p.first);
    (*this)(p.second);
  }
  template <class T>
  void operator()(const std::vector<T>& v) {
    (*this)(static_cast<std::uint64_t>(v.size()));
    for (const auto& x : v) (*this)(x);
  }
  template <class T, std::size_t N>
  void operator()(const std::array<T, N>& v) {
    for (const auto& x : v) (*this)(x);
  }
  template <class... T>
  void all(const T&... v) {
    ((*this)(v), ...);
  }
};

class DigestBytesIn {
 public:
  explicit DigestBytesIn(std::string_view in) : in_(in) {}
  std::string error;  // the first problem; the rest of the reads then leave values as they are
  template <class T>
  void operator()(T& v) {
    if constexpr (std::is_enum_v<T>) {
      std::underlying_type_t<T> u{};
      (*this)(u);
      v = static_cast<T>(u);
    } else if constexpr (std::is_same_v<T, bool>) {
      std::uint8_t b = 0;
      (*this)(b);
      v = b != 0;
    } else if constexpr (std::is_arithmetic_v<T>) {
      if (!take(sizeof(T))) return;
      std::memcpy(&v, in_.data() + at_ - sizeof(T), sizeof(T));
      // Every figure of a digest is a duration or a count: finite, >= 0, within one capture.
      if constexpr (std::is_floating_point_v<T>)
        if (!(v >= 0 && v <= 1e18)) fail("a figure out of range");
    } else {
      fields(*this, v);
    }
  }
  void operator()(std::string& s) {
    std::uint64_t n = 0;
    (*this)(n);
    if (!error.empty() || !take(n)) return;
    s.assign(in_.data() + at_ - n, n);
  }
  template <class A, class B>
  void operator()(std::pair<A, B>& p) {
    (*this)(p.first);
    (*this)(p.second);
  }
  template <class T>
  void operator()(std::vector<T>& v) {
    std::uint64_t n = 0;
    (*this)(n);
    if (!error.empty()) return;
    // Each entry takes at least a byte: a count beyond the bytes left is damage, not a size.
    if (n > kMaxDigestEntries || n > in_.size() - at_) {
      fail("a list of " + std::to_string(n) + " entries");
      return;
    }
    v.resize(n);
    for (auto& x : v) {
      if (!error.empty()) return;
      (*this)(x);
    }
  }
  template <class T, std::size_t N>
  void operator()(std::array<T, N>& v) {
    for (auto& x : v) (*this)(x);
  }
  template <class... T>
  void all(T&... v) {
    ((*this)(v), ...);
  }
  bool done() const { return at_ == in_.size(); }
  std::size_t at() const { return at_; }
  void fail(const std::string& what) {
    if (error.empty()) error = fmt::format("byte {}: {}", at_, what);
  }

 private:
  bool take(std::uint64_t n) {
    if (!error.empty()) return false;
    if (n > in_.size() - at_) {
      fail("cut short (" + std::to_string(in_.size()) + " bytes)");
      return false;
    }
    at_ += static_cast<std::size_t>(n);
    return true;
  }
  std::string_view in_;
  std::size_t at_ = 0;
};

// Merged and sorted, as digest() leaves every interval list (the analysis measures by binary search).
bool merged(const Ivs& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i].e < v[i].s || (i > 0 && v[i].s < v[i - 1].e)) return false;
  return true;
}

// A profiler capture spans seconds to minutes; 2^44 ns is almost five hours. Within it every
// difference and sum the analysis takes of a GPU's times stays far inside 64 bits.
constexpr std::int64_t kMaxDigestSpanNs = std::int64_t{1} << 44;
constexpr std::int64_t kMaxDigestTimeNs = std::int64_t{1} << 61;

// Inside the GPU's timeline [first, last].
bool within(const Ivs& v, std::int64_t first, std::int64_t last) { return v.empty() || (v.front().s >= first && v.back().e <= last); }

// What digest() guarantees and the analysis relies on (indices and slots inside their arrays,
// interval lists merged, windows ordered, times within one capture): "" when the digest holds it.
std::string digest_damage(const Digest& d) {
  if (d.tl.size() != d.gpus.size()) return "GPUs and timelines differ in count";
  for (const auto& gt : d.tl) {
    if (gt.compute_before.size() != gt.seq.size()) return "a GPU's collectives and their compute differ in count";
    if (gt.acts > 0 && (gt.first < -kMaxDigestTimeNs || gt.last > kMaxDigestTimeNs || gt.last < gt.first || gt.last - gt.first > kMaxDigestSpanNs))
      return "a GPU's timeline beyond one capture";
    for (const Ivs* v : {&gt.compute, &gt.comm_all, &gt.exposed_all, &gt.wait, &gt.copy_bare})
      if (!within(*v, gt.first, gt.last)) return "an interval outside its GPU's timeline";
    for (const auto* arr : {&gt.comm, &gt.exposed})
      for (const auto& v : *arr)
        if (!within(v, gt.first, gt.last)) return "an interval outside its GPU's timeline";
    for (const auto& v : gt.copies)
      if (!within(v, gt.first, gt.last)) return "an interval outside its GPU's timeline";
    for (const auto& c : gt.seq)
      if (c.start < gt.first || c.end > gt.last || c.host_wait < 0 || c.host_wait > kMaxDigestSpanNs || c.host_stall < 0 || c.host_stall > c.host_wait)
        return "a collective outside its GPU's timeline";
    for (std::size_t i = 0; i < gt.p2p.size(); ++i) {
      const auto& c = gt.p2p[i];
      if (c.start < gt.first || c.end > gt.last || c.end < c.start || (i > 0 && c.start < gt.p2p[i - 1].start) || c.host_wait < 0 ||
          c.host_wait > kMaxDigestSpanNs || c.host_stall < 0 || c.host_stall > c.host_wait || c.peer < -1 || c.dir > parsers::P2pDir::recv)
        return "a send/recv out of range";
    }
    if (gt.rank < -1) return "a rank out of range";
    if (gt.host_stall_longest < 0 || gt.host_stall_longest > kMaxDigestSpanNs) return "a host stall beyond one capture";
    if (gt.stall_ns < 0 || gt.stall_ns > kMaxDigestSpanNs || gt.stall_in_calls < 0 || gt.stall_in_calls > gt.stall_ns)
      return "host stall time beyond one capture";
    for (const auto& [name, ns] : gt.stall_calls)
      if (ns < 0 || ns > gt.stall_ns) return "host stall time in calls beyond the stalls'";
    for (const auto& [start, slot] : gt.colls)
      if (start < gt.first || start > gt.last) return "a communication kernel outside its GPU's timeline";
    for (auto x : gt.compute_before)
      if (x < 0 || x > kMaxDigestSpanNs) return "a collective's compute beyond one capture";
    for (const auto& c : gt.cuts)
      for (const auto& w : c.wins)
        if (w.s < -kMaxDigestTimeNs || w.e > kMaxDigestTimeNs || w.e - w.s > kMaxDigestSpanNs) return "a window beyond one capture";
    for (const Ivs* v : {&gt.compute, &gt.comm_all, &gt.exposed_all, &gt.wait, &gt.copy_bare})
      if (!merged(*v)) return "an interval list out of order";
    for (const auto& v : gt.comm)
      if (!merged(v)) return "an interval list out of order";
    for (const auto& v : gt.exposed)
      if (!merged(v)) return "an interval list out of order";
    for (const auto& v : gt.copies)
      if (!merged(v)) return "an interval list out of order";
    for (std::size_t i = 0; i < gt.colls.size(); ++i)
      if (static_cast<int>(gt.colls[i].second) >= kCommSlots || (i > 0 && gt.colls[i].first < gt.colls[i - 1].first)) return "a communication kernel out of range";
    for (std::size_t i = 0; i < gt.seq.size(); ++i)
      if (gt.seq[i].coll > parsers::Coll::other || gt.seq[i].end < gt.seq[i].start || (i > 0 && gt.seq[i].start < gt.seq[i - 1].start))
        return "a collective out of range";
    for (const auto& c : gt.cuts) {
      if (c.stats.size() != c.wins.size()) return "a cut's windows and their figures differ in count";
      for (std::size_t i = 0; i < c.wins.size(); ++i)
        if (c.wins[i].e < c.wins[i].s || (i > 0 && c.wins[i].s < c.wins[i - 1].s)) return "a window out of order";
    }
  }
  return "";
}

}  // namespace

bool is_digest(std::string_view bytes) { return bytes.starts_with(kDigestMagic); }

std::string serialize_digest(const Digest& d, const std::string& source, const std::vector<std::string>& libraries) {
  DigestBytesOut w;
  w.out = kDigestMagic;
  w(kDigestVersion);
  w(source);
  w(libraries);
  w(d);
  return std::move(w.out);
}

tl::expected<SourcedDigest, std::string> deserialize_digest(std::string_view bytes) {
  if (!is_digest(bytes)) return tl::unexpected(std::string("not a perfgap digest (whatif --digest writes them)"));
  DigestBytesIn r(bytes.substr(kDigestMagic.size()));
  std::uint32_t version = 0;
  r(version);
  if (r.error.empty() && version != kDigestVersion)
    return tl::unexpected(fmt::format("a digest of version {}; this perfgap reads version {} (write it again with this perfgap's whatif --digest)", version,
                                      kDigestVersion));
  SourcedDigest out;
  r(out.source);
  r(out.libraries);
  r(out.digest);
  if (r.error.empty() && !r.done()) r.fail("bytes after the digest's end");
  if (!r.error.empty()) return tl::unexpected("damaged digest: " + r.error);
  if (auto why = digest_damage(out.digest); !why.empty()) return tl::unexpected("damaged digest: " + why);
  return out;
}

std::string digest_slots_damage(const SourcedDigest& sd, const CommLibraries& libs) {
  if (sd.libraries != libs.name) {
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
      return s.empty() ? std::string("none") : s;
    };
    return fmt::format("written with other communication libraries ({}; this run's table has {}): read it with the --kb it was written with",
                       list(sd.libraries), list(libs.name));
  }
  const auto& d = sd.digest;
  for (int c = parsers::kCollCount + static_cast<int>(libs.name.size()); c < kCommSlots; ++c) {
    bool used = d.coll_kernels[c] || d.coll_bytes[c] || d.coll_group[c] || d.coll_ns[c] != 0;
    for (const auto& gt : d.tl) used = used || !gt.comm[c].empty() || !gt.exposed[c].empty();
    if (used) return "damaged digest: communication in a slot no library names";
  }
  for (const auto& gt : d.tl)
    for (const auto& [start, slot] : gt.colls)
      if (static_cast<int>(slot) >= parsers::kCollCount + static_cast<int>(libs.name.size())) return "damaged digest: communication in a slot no library names";
  return "";
}

}  // namespace perfgap::analyzers::profile_model
