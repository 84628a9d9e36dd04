#include "parsers/perf_data.hpp"

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "sys/text.hpp"

namespace perfgap::parsers {
namespace {

// include/uapi/linux/perf_event.h and tools/perf/util/{header,event}.h, as far as they are read.
constexpr std::size_t kFileHeaderSize = 104;                // magic, size, attr_size, 3 sections, 256-bit features
constexpr std::size_t kAttrVer0 = 64;

enum : std::uint64_t {
  kIp = 1u << 0, kTid = 1u << 1, kTime = 1u << 2, kAddr = 1u << 3, kRead = 1u << 4, kCallchain = 1u << 5,
  kId = 1u << 6, kCpu = 1u << 7, kPeriod = 1u << 8, kStreamId = 1u << 9, kRaw = 1u << 10,
  kBranchStack = 1u << 11, kIdentifier = 1u << 16,
};
enum : std::uint64_t { kRfEnabled = 1, kRfRunning = 2, kRfId = 4, kRfGroup = 8, kRfLost = 16 };
constexpr std::uint64_t kBranchHwIndex = 1u << 17;   // PERF_SAMPLE_BRANCH_HW_INDEX
constexpr std::uint64_t kFlagFreq = 1u << 10;

enum : std::uint32_t {
  kRecMmap = 1, kRecLost = 2, kRecComm = 3, kRecFork = 7, kRecSample = 9, kRecMmap2 = 10, kRecLostSamples = 13,
  kRecHeaderAttr = 64, kRecTracingData = 66, kRecBuildId = 67, kRecAuxtrace = 71, kRecFeature = 80,
  kRecCompressed = 81, kRecCompressed2 = 83,
};
enum : unsigned {
  kFeatBuildId = 2, kFeatHostname = 3, kFeatOsrelease = 4, kFeatVersion = 5, kFeatArch = 6, kFeatNrcpus = 7,
  kFeatCmdline = 11, kFeatCpuTopology = 13, kFeatNumaTopology = 14, kFeatCompressed = 27,
};

// An attr's event as perf names it: the generic hardware and software events (the PMU type of a
// hybrid CPU rides in config's upper 32 bits of a hardware event); others by "type:config".
std::string perf_data_event_name(std::uint32_t type, std::uint64_t config) {
  static const char* kHw[] = {"cycles", "instructions", "cache-references", "cache-misses", "branch-instructions",
                              "branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles"};
  static const char* kSw[] = {"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations", "minor-faults",
                              "major-faults", "alignment-faults", "emulation-faults", "dummy", "bpf-output", "cgroup-switches"};
  const std::uint64_t c = config & 0xffffffffULL;
  if (type == 0 && c < std::size(kHw)) return kHw[c];
  if (type == 1 && config < std::size(kSw)) return kSw[config];
  return fmt::format("{}:{:#x}", type, config);
}

std::uint64_t align8(std::uint64_t n) { return (n + 7) & ~std::uint64_t{7}; }

struct Attr {
  std::uint32_t type = 0;
  std::uint64_t config = 0, sample_period = 0, sample_type = 0, read_format = 0, flags = 0, branch_sample_type = 0;
};

struct Key {
  std::uint64_t a;
  std::uint32_t tid;
  PerfLeaf::Kind kind;
  std::uint16_t event = 0;
  bool operator==(const Key& o) const { return a == o.a && tid == o.tid && kind == o.kind && event == o.event; }
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::uint64_t h = (k.a * 0x9E3779B97F4A7C15ULL) ^ ((std::uint64_t{k.tid} << 3) | static_cast<std::uint64_t>(k.kind)) ^ (std::uint64_t{k.event} << 40);
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

struct Mapping {
  std::uint64_t end;
  std::uint32_t dso;
};

class Failure {
 public:
  explicit Failure(std::string m) : msg(std::move(m)) {}
  std::string msg;
};

template <bool Swap>
class Reader {
 public:
  Reader(std::string_view all, PerfData& d, const PerfDataOptions& o) : d_(d) {
    ratio_ = o.max_inflate_ratio;
    inflate_limit_ = static_cast<std::uint64_t>(all.size()) * o.max_inflate_ratio + (64u << 20);
    ids_limit_ = std::min<std::size_t>(all.size() / 8, kMaxIds);
  }
  ~Reader() {
    if (zs_) ZSTD_freeDStream(zs_);
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  static std::uint64_t u64(std::string_view b, std::size_t off) {
    std::uint64_t v;
    std::memcpy(&v, b.data() + off, 8);
    if constexpr (Swap) v = __builtin_bswap64(v);
    return v;
  }
  static std::uint32_t u32(std::string_view b, std::size_t off) {
    std::uint32_t v;
    std::memcpy(&v, b.data() + off, 4);
    if constexpr (Swap) v = __builtin_bswap32(v);
    return v;
  }
  static std::uint16_t u16(std::string_view b, std::size_t off) {
    std::uint16_t v;
    std::memcpy(&v, b.data() + off, 2);
    if constexpr (Swap) v = __builtin_bswap16(v);
    return v;
  }

  // perf_event_attr of `avail` bytes at b[off]: only the fields its own size covers.
  Attr read_attr(std::string_view b, std::size_t off, std::size_t avail, std::size_t where) {
    if (avail < kAttrVer0) throw Failure(fmt::format("offset {}: perf_event_attr of {} bytes (at least {})", where, avail, kAttrVer0));
    std::size_t size = u32(b, off + 4);
    if (size == 0) size = kAttrVer0;  // perf before 2.6.33 wrote 0
    if (size < kAttrVer0) throw Failure(fmt::format("offset {}: perf_event_attr.size {} (at least {})", where + 4, size, kAttrVer0));
    size = std::min(size, avail);
    if (d_.attr_size == 0) d_.attr_size = static_cast<std::uint32_t>(size);
    Attr a;
    a.type = u32(b, off);
    a.config = u64(b, off + 8);
    a.sample_period = u64(b, off + 16);
    a.sample_type = u64(b, off + 24);
    a.read_format = u64(b, off + 32);
    // The flags bitfield: a big-endian writer allocates bits from the most significant bit of
    // each byte, so (as perf does) each byte's bits are reversed and the bytes kept in order.
    unsigned char fb[8];
    std::memcpy(fb, b.data() + off + 40, 8);
    if constexpr (Swap)
      for (auto& c : fb) c = static_cast<unsigned char>(((c * 0x0202020202ULL) & 0x010884422010ULL) % 1023);
    a.flags = 0;
    for (int i = 7; i >= 0; --i) a.flags = (a.flags << 8) | fb[i];
    if (size >= 80) a.branch_sample_type = u64(b, off + 72);
    d_.events.push_back(fmt::format("{}:{:#x}", a.type, a.config));
    d_.event_names.push_back(perf_data_event_name(a.type, a.config));
    d_.event_samples.push_back(0);
    d_.event_weight.push_back(0);
    return a;
  }

  // The ids of every attr together are bounded: in a file written by perf each id section is
  // its own part of the file, so they add up to less than the file; sections that overlap (one
  // section per attr, each over the whole file) would make reading quadratic.
  void add_attr(const Attr& a, std::string_view b, std::size_t ids_off, std::size_t n_ids, std::size_t at) {
    attrs_.push_back(a);
    ids_read_ += n_ids;
    if (ids_read_ > ids_limit_)
      throw Failure(fmt::format("offset {}: the attrs' id sections hold {} ids together, more than the {} that fit in the file without overlapping "
                                "(or perfgap's {} ids): not a perf.data perf wrote",
                                at, ids_read_, std::min(ids_limit_, kMaxIds), kMaxIds));
    for (std::size_t i = 0; i < n_ids; ++i) ids_.emplace(u64(b, ids_off + 8 * i), attrs_.size() - 1);
  }

  // ---- feature sections -----------------------------------------------------------------
  // A perf header string: u32 length (padded), then the bytes up to the first NUL.
  static bool str(std::string_view f, std::size_t& pos, std::string& out) {
    if (f.size() - pos < 4) return false;
    std::uint32_t len = u32(f, pos);
    pos += 4;
    if (len > f.size() - pos) return false;
    auto s = f.substr(pos, len);
    out = std::string(s.substr(0, s.find('\0')));
    pos += len;
    return true;
  }
  // Tolerant: what a damaged or truncated section holds is kept as far as it could be read.
  void feature(unsigned id, std::string_view f) {
    std::size_t pos = 0;
    switch (id) {
      case kFeatHostname: str(f, pos, d_.hostname); break;
      case kFeatOsrelease: str(f, pos, d_.osrelease); break;
      case kFeatVersion: str(f, pos, d_.version); break;
      case kFeatArch: str(f, pos, d_.arch); break;
      case kFeatNrcpus:
        if (f.size() >= 8) {
          d_.nr_cpus_avail = u32(f, 0);
          d_.nr_cpus_online = u32(f, 4);
        }
        break;
      case kFeatCmdline: {
        if (f.size() < 4) break;
        std::uint32_t n = u32(f, 0);
        pos = 4;
        std::string s, all;
        for (std::uint32_t i = 0; i < n && str(f, pos, s); ++i) all += (all.empty() ? "" : " ") + s;
        d_.cmdline = all;
        break;
      }
      case kFeatBuildId:
        while (f.size() - pos >= 8) {
          std::uint16_t sz = u16(f, pos + 6);
          if (sz < 8 || sz > f.size() - pos) break;
          ++d_.build_ids;
          pos += sz;
        }
        break;
      case kFeatCpuTopology: {
        std::string s;
        if (f.size() < 4) break;
        std::uint32_t cores = u32(f, 0);
        pos = 4;
        std::uint32_t i = 0;
        for (; i < cores && str(f, pos, s); ++i) {}
        if (i < cores || f.size() - pos < 4) break;
        std::uint32_t threads = u32(f, pos);
        pos += 4;
        for (i = 0; i < threads && str(f, pos, s); ++i) {}
        d_.sibling_threads = i;
        break;
      }
      case kFeatNumaTopology: {
        if (f.size() < 4) break;
        std::uint32_t n = u32(f, 0);
        pos = 4;
        std::string s;
        std::size_t read = 0;
        for (std::uint32_t i = 0; i < n && f.size() - pos >= 20; ++i) {
          pos += 20;  // node, mem_total, mem_free
          if (!str(f, pos, s)) break;
          ++read;
        }
        d_.numa_nodes = read;
        break;
      }
      case kFeatCompressed: d_.compressed = true; break;
      default: break;
    }
  }

  // ---- records ----------------------------------------------------------------------------
  // The records of b[begin, end). `base` names b's first byte in errors (its file offset, or
  // for decompressed data the COMPRESSED record's offset). Returns where the last whole record
  // ends (a decompressed stream's partial record carries over to the next chunk).
  std::size_t records(std::string_view b, std::size_t begin, std::size_t end, bool partial_ok, std::size_t base, bool inflated) {
    std::size_t pos = begin;
    while (pos < end) {
      if (end - pos < 8) {
        if (partial_ok) return pos;
        throw Failure(fmt::format("{}: {} bytes left, less than a record header", where(base, pos, inflated), end - pos));
      }
      std::uint32_t type = u32(b, pos);
      std::uint16_t misc = u16(b, pos + 4);
      std::size_t size = u16(b, pos + 6);
      if (size < 8) throw Failure(fmt::format("{}: record of type {} with size {} (less than its 8-byte header)", where(base, pos, inflated), type, size));
      if (size > end - pos) {
        if (partial_ok) return pos;
        throw Failure(fmt::format("{}: record of type {} claims {} bytes, {} left", where(base, pos, inflated), type, size, end - pos));
      }
      ++d_.records;
      std::string_view r = b.substr(pos, size);
      std::uint64_t extra = 0;
      if (type == kRecSample) sample(r, misc, base, pos, inflated);
      else extra = other(type, r, base + pos, inflated);
      pos += size;
      if (extra > 0) {
        // Payloads that follow their record outside header.size (pipe-mode tracing data, AUX data).
        if (inflated) throw Failure(fmt::format("{}: record of type {} with a trailing payload inside compressed data", where(base, pos - size, inflated), type));
        if (extra > end - pos) throw Failure(fmt::format("{}: record of type {} is followed by {} bytes, {} left", where(base, pos - size, inflated), type, extra, end - pos));
        pos += extra;
      }
    }
    return pos;
  }

  static std::string where(std::size_t base, std::size_t pos, bool inflated) {
    return inflated ? fmt::format("offset {} (COMPRESSED record), byte {} of its decompressed data", base, pos) : fmt::format("offset {}", base + pos);
  }

  const Attr* attr_of_sample(std::string_view r) {
    if (attrs_.size() == 1) return &attrs_.front();
    if (attrs_.empty()) return nullptr;
    const std::uint64_t st = attrs_.front().sample_type;
    std::size_t off;
    if (st & kIdentifier) off = 8;
    else if (st & kId) off = 8 + 8 * std::popcount(st & (kIp | kTid | kTime | kAddr));
    else return &attrs_.front();  // no ids recorded: perf too takes the first event
    if (r.size() < off + 8) return nullptr;
    auto it = ids_.find(u64(r, off));
    return it == ids_.end() ? nullptr : &attrs_[it->second];
  }

  void sample(std::string_view r, std::uint16_t misc, std::size_t base, std::size_t at, bool inflated) {
    ++d_.samples;
    const Attr* a = attr_of_sample(r);
    if (!a) {
      ++d_.unmatched_samples;
      return;
    }
    const std::uint64_t st = a->sample_type;
    const std::size_t end = r.size();
    std::size_t pos = 8;
    auto need = [&](std::size_t n, const char* what) {
      if (n > end - pos)
        throw Failure(fmt::format("{}: sample of {} bytes ends inside its {} (sample_type {:#x})", where(base, at, inflated), end, what, st));
    };
    std::uint64_t ip = 0, period = 0;
    std::uint32_t tid = 0, pid = 0;
    if (st & kIdentifier) { need(8, "identifier"); pos += 8; }
    if (st & kIp) { need(8, "ip"); ip = u64(r, pos); pos += 8; }
    if (st & kTid) { need(8, "pid/tid"); pid = u32(r, pos); tid = u32(r, pos + 4); pos += 8; }
    std::size_t fixed = 8 * std::popcount(st & (kTime | kAddr | kId | kStreamId | kCpu));
    need(fixed, "time/addr/id/stream_id/cpu");
    pos += fixed;
    if (st & kPeriod) { need(8, "period"); period = u64(r, pos); pos += 8; }
    if (st & kRead) {
      const std::uint64_t rf = a->read_format;
      if (rf & kRfGroup) {
        need(8, "read group");
        std::uint64_t nr = u64(r, pos);
        std::uint64_t each = 8 + 8 * std::popcount(rf & (kRfId | kRfLost));
        std::uint64_t head = 8 + 8 * std::popcount(rf & (kRfEnabled | kRfRunning));
        if (nr > end || head + nr * each > end - pos) need(end, "read group values");
        pos += head + nr * each;
      } else {
        std::size_t n = 8 + 8 * std::popcount(rf & (kRfEnabled | kRfRunning | kRfId | kRfLost));
        need(n, "read value");
        pos += n;
      }
    }
    if (st & kCallchain) {
      need(8, "callchain");
      std::uint64_t nr = u64(r, pos);
      pos += 8;
      if (nr > (end - pos) / 8) need(end, "callchain");
      pos += nr * 8;
      d_.callchain_frames += nr;
    }
    if (st & kRaw) {
      need(4, "raw size");
      std::uint32_t n = u32(r, pos);
      pos += 4;
      need(n, "raw data");
      pos += n;
    }
    if (st & kBranchStack) {
      need(8, "branch stack");
      std::uint64_t nr = u64(r, pos);
      pos += 8;
      if (a->branch_sample_type & kBranchHwIndex) { need(8, "branch hw_idx"); pos += 8; }
      if (nr > (end - pos) / 24) need(end, "branch stack");
      pos += nr * 24;
    }
    // What follows (registers, user stack, weights, ...) is not needed: the record's size skips it.
    double w = (st & kPeriod) ? static_cast<double>(period)
                              : ((a->flags & kFlagFreq) || a->sample_period == 0 ? 1.0 : static_cast<double>(a->sample_period));
    d_.total_weight += w;
    const auto ev = static_cast<std::size_t>(a - attrs_.data());
    if (ev < d_.event_samples.size()) {
      ++d_.event_samples[ev];
      d_.event_weight[ev] += w;
    }
    Key k{0, tid, PerfLeaf::Kind::user, static_cast<std::uint16_t>(std::min<std::size_t>(ev, 0xffff))};
    switch (misc & 7) {
      case 1: k.kind = PerfLeaf::Kind::kernel; k.a = ip; break;
      case 3: k.kind = PerfLeaf::Kind::hypervisor; k.a = ip; break;
      case 4: case 5: k.kind = PerfLeaf::Kind::guest; k.a = ip; break;
      default: k.a = dso_of(pid, ip); break;
    }
    auto& agg = leaves_[k];
    agg.first += w;
    ++agg.second;
  }

  std::uint32_t dso_of(std::uint32_t pid, std::uint64_t ip) {
    // A forked child without mappings of its own runs in its parent's (a few levels at most).
    for (int depth = 0; depth < 4; ++depth) {
      if (pid != last_pid_ || !last_maps_) {
        auto it = maps_.find(pid);
        last_pid_ = pid;
        last_maps_ = it == maps_.end() ? nullptr : &it->second;
      }
      if (last_maps_) {
        auto m = last_maps_->upper_bound(ip);
        if (m != last_maps_->begin()) {
          --m;
          if (ip < m->second.end) return m->second.dso;
        }
      }
      auto p = parent_.find(pid);
      if (p == parent_.end()) break;
      pid = p->second;
    }
    return 0;
  }

  // Mapping names are bounded: each to PATH_MAX (the kernel's own limit for a path), and the
  // distinct names together to kMaxDsoNameBytes; past that, new names share one entry.
  std::uint32_t intern_dso(std::string_view name) {
    if (name.size() > kMaxDsoName) name = name.substr(0, kMaxDsoName);
    auto it = dso_ids_.find(std::string(name));
    if (it != dso_ids_.end()) return it->second;
    if (dso_name_bytes_ + name.size() > kMaxDsoNameBytes) {
      if (!overflow_dso_) {
        d_.dsos.emplace_back(fmt::format("[mapping names past {} MiB]", kMaxDsoNameBytes >> 20));
        overflow_dso_ = static_cast<std::uint32_t>(d_.dsos.size() - 1);
      }
      return *overflow_dso_;
    }
    dso_name_bytes_ += name.size();
    d_.dsos.emplace_back(name);
    auto id = static_cast<std::uint32_t>(d_.dsos.size() - 1);
    dso_ids_.emplace(std::string(name), id);
    return id;
  }

  void mmap(std::string_view r, std::size_t name_off, std::size_t at) {
    if (r.size() < name_off) throw Failure(fmt::format("offset {}: MMAP record of {} bytes (at least {})", at, r.size(), name_off));
    std::uint32_t pid = u32(r, 8);
    std::uint64_t addr = u64(r, 16), len = u64(r, 24), pgoff = u64(r, 32);
    auto name = r.substr(name_off);
    name = name.substr(0, name.find('\0'));
    if (pid == 0xffffffffu) {  // the kernel and its modules
      if (!d_.kernel_text && name.starts_with("[kernel.kallsyms]")) d_.kernel_text = pgoff;
      return;
    }
    if (len == 0) return;
    auto& m = maps_[pid];
    last_maps_ = nullptr;
    std::uint64_t end = addr + len < addr ? ~std::uint64_t{0} : addr + len;
    // A new mapping replaces what it overlaps (exec, munmap + mmap).
    auto it = m.lower_bound(addr);
    if (it != m.begin() && std::prev(it)->second.end > addr) --it;
    while (it != m.end() && it->first < end) it = m.erase(it);
    m.emplace(addr, Mapping{end, intern_dso(name)});
  }

  // Non-sample records. Returns the bytes of a payload that follows the record.
  std::uint64_t other(std::uint32_t type, std::string_view r, std::size_t at, bool inflated) {
    auto need = [&](std::size_t n, const char* what) {
      if (r.size() < n) throw Failure(fmt::format("offset {}: {} record of {} bytes (at least {})", at, what, r.size(), n));
    };
    switch (type) {
      case kRecMmap: mmap(r, 40, at); break;
      case kRecMmap2: mmap(r, 72, at); break;
      case kRecComm: {
        need(16, "COMM");
        auto name = r.substr(16);
        comms_[u32(r, 12)] = std::string(name.substr(0, name.find('\0')));
        break;
      }
      case kRecFork: {
        need(24, "FORK");
        std::uint32_t pid = u32(r, 8), ppid = u32(r, 12), tid = u32(r, 16), ptid = u32(r, 20);
        if (pid != ppid) parent_[pid] = ppid;
        if (!comms_.count(tid)) {
          auto c = comms_.find(ptid);
          if (c != comms_.end()) comms_[tid] = c->second;
        }
        break;
      }
      case kRecLost: need(24, "LOST"); d_.lost += u64(r, 16); break;
      case kRecLostSamples: need(16, "LOST_SAMPLES"); d_.lost += u64(r, 8); break;
      case kRecHeaderAttr: {
        need(8 + kAttrVer0, "HEADER_ATTR");
        std::size_t sz = u32(r, 12);
        if (sz == 0) sz = kAttrVer0;
        if (sz > r.size() - 8) throw Failure(fmt::format("offset {}: HEADER_ATTR's attr.size {} exceeds its record ({} bytes)", at, sz, r.size()));
        Attr a = read_attr(r, 8, sz, at + 8);
        add_attr(a, r, 8 + sz, (r.size() - 8 - sz) / 8, at);
        break;
      }
      case kRecFeature: need(16, "HEADER_FEATURE"); feature(static_cast<unsigned>(u64(r, 8)), r.substr(16)); break;
      case kRecBuildId: ++d_.build_ids; break;
      case kRecTracingData:
        need(12, "HEADER_TRACING_DATA");
        return d_.pipe ? align8(u32(r, 8)) : 0;
      case kRecAuxtrace: need(16, "AUXTRACE"); return u64(r, 8);
      case kRecCompressed: inflate(r.substr(8), at, inflated); break;
      case kRecCompressed2: {
        need(16, "COMPRESSED2");
        std::uint64_t n = u64(r, 8);
        if (n > r.size() - 16) throw Failure(fmt::format("offset {}: COMPRESSED2 data_size {} exceeds its record ({} bytes)", at, n, r.size()));
        inflate(r.substr(16, n), at, inflated);
        break;
      }
      default: break;
    }
    return 0;
  }

  // One zstd stream over every COMPRESSED chunk: a record may start in one chunk and end in the next.
  void inflate(std::string_view z, std::size_t at, bool inflated) {
    if (inflated) throw Failure(fmt::format("offset {}: a compressed record inside compressed data", at));
    d_.compressed = true;
    if (!zs_) {
      zs_ = ZSTD_createDStream();
      if (!zs_ || ZSTD_isError(ZSTD_initDStream(zs_))) throw Failure("zstd: cannot start a decompression stream");
    }
    ZSTD_inBuffer in{z.data(), z.size(), 0};
    bool full = false;
    while (in.pos < in.size || full) {
      const bool after_full = full;  // a call only to drain what zstd may still hold
      std::size_t have = pending_.size(), before = in.pos;
      pending_.resize(have + kChunk);
      ZSTD_outBuffer out{pending_.data() + have, kChunk, 0};
      std::size_t rc = ZSTD_decompressStream(zs_, &out, &in);
      if (ZSTD_isError(rc)) throw Failure(fmt::format("offset {}: COMPRESSED record: zstd: {}", at, ZSTD_getErrorName(rc)));
      pending_.resize(have + out.pos);
      full = out.pos == kChunk;  // more may be buffered inside zstd
      if (out.pos == 0 && in.pos == before) {
        // The output filled exactly on the last call and zstd held nothing more: done.
        if (after_full && in.pos == in.size) break;
        throw Failure(fmt::format("offset {}: COMPRESSED record: zstd makes no progress", at));
      }
      inflated_ += out.pos;
      if (inflated_ > inflate_limit_)
        throw Failure(fmt::format("offset {}: compressed records decompress past {} bytes ({} x the input + 64 MiB; a zstd bomb?)", at, inflate_limit_, ratio_));
      std::string_view p(pending_);
      std::size_t used = records(p, 0, p.size(), true, at, true);
      pending_.erase(0, used);
    }
  }

  void finish_compressed() {
    if (!pending_.empty())
      throw Failure(fmt::format("compressed records end inside a record ({} bytes of it decompressed)", pending_.size()));
  }

  void finish() {
    d_.leaves.reserve(leaves_.size());
    for (const auto& [k, v] : leaves_) {
      PerfLeaf l;
      l.kind = k.kind;
      l.tid = k.tid;
      l.event = k.event;
      if (k.kind == PerfLeaf::Kind::user) l.dso = static_cast<std::uint32_t>(k.a);
      else l.ip = k.a;
      l.weight = v.first;
      l.samples = v.second;
      d_.leaves.push_back(l);
    }
    d_.comms.assign(comms_.begin(), comms_.end());
    std::sort(d_.comms.begin(), d_.comms.end());
  }

  std::vector<Attr> attrs_;

 private:
  static constexpr std::size_t kChunk = 256 << 10;
  static constexpr std::size_t kMaxIds = 1u << 20;
  static constexpr std::size_t kMaxDsoName = 4096;
  static constexpr std::size_t kMaxDsoNameBytes = 16u << 20;
  PerfData& d_;
  std::size_t ids_read_ = 0, ids_limit_ = 0, dso_name_bytes_ = 0;
  std::optional<std::uint32_t> overflow_dso_;
  std::unordered_map<std::uint64_t, std::size_t> ids_;
  std::unordered_map<Key, std::pair<double, std::uint64_t>, KeyHash> leaves_;
  std::unordered_map<std::uint32_t, std::map<std::uint64_t, Mapping>> maps_;
  std::unordered_map<std::uint32_t, std::uint32_t> parent_;
  std::unordered_map<std::uint32_t, std::string> comms_;
  std::unordered_map<std::string, std::uint32_t> dso_ids_;
  std::uint32_t last_pid_ = 0;
  std::map<std::uint64_t, Mapping>* last_maps_ = nullptr;
  ZSTD_DStream* zs_ = nullptr;
  std::string pending_;
  std::uint64_t inflated_ = 0, inflate_limit_ = 0, ratio_ = 0;
};

template <bool Swap>
void read_file_mode(std::string_view b, PerfData& d, const PerfDataOptions& o) {
  using R = Reader<Swap>;
  if (b.size() < kFileHeaderSize) throw Failure(fmt::format("offset 0: perf.data header of {} bytes, {} expected", b.size(), kFileHeaderSize));
  std::uint64_t hsize = R::u64(b, 8);
  if (hsize < kFileHeaderSize || hsize > b.size()) throw Failure(fmt::format("offset 8: header size {} (at least {}, at most the file's {})", hsize, kFileHeaderSize, b.size()));
  std::uint64_t attr_size = R::u64(b, 16);
  auto section = [&](std::size_t at, const char* what) {
    std::uint64_t off = R::u64(b, at), size = R::u64(b, at + 8);
    if (off > b.size() || size > b.size() - off)
      throw Failure(fmt::format("offset {}: {} section [{}, +{}) past the end of the file ({} bytes)", at, what, off, size, b.size()));
    return std::pair<std::size_t, std::size_t>(off, size);
  };
  auto [attrs_off, attrs_size] = section(24, "attrs");
  auto [data_off, data_size] = section(40, "data");
  R r(b, d, o);
  if (attrs_size > 0) {
    if (attr_size < kAttrVer0 + 16 || attr_size > (1u << 16))
      throw Failure(fmt::format("offset 16: attr_size {} (an attr of at least {} bytes and its ids section)", attr_size, kAttrVer0));
    for (std::size_t i = 0; i + attr_size <= attrs_size; i += attr_size) {
      std::size_t at = attrs_off + i;
      Attr a = r.read_attr(b, at, attr_size - 16, at);
      auto [ids_off, ids_size] = section(at + attr_size - 16, "ids");
      r.add_attr(a, b, ids_off, ids_size / 8, at);
    }
  }
  if (r.attrs_.empty()) throw Failure(fmt::format("offset 24: no event attributes (attrs section of {} bytes)", attrs_size));
  // Features: one section entry per bit set in adds_features, right after the data.
  std::size_t table = data_off + data_size;
  unsigned n = 0;
  for (unsigned bit = 1; bit < 256; ++bit) {
    std::uint64_t word = R::u64(b, 72 + 8 * (bit / 64));
    if (!((word >> (bit % 64)) & 1)) continue;
    std::size_t at = table + 16 * n++;
    if (at + 16 > b.size()) break;  // tolerant: a truncated table loses the features past it
    std::uint64_t off = R::u64(b, at), size = R::u64(b, at + 8);
    if (off <= b.size() && size <= b.size() - off) r.feature(bit, b.substr(off, size));
  }
  r.records(b, data_off, data_off + data_size, false, 0, false);
  r.finish_compressed();
  r.finish();
}

template <bool Swap>
void read_pipe_mode(std::string_view b, PerfData& d, const PerfDataOptions& o) {
  using R = Reader<Swap>;
  d.pipe = true;
  if (b.size() < 16) throw Failure(fmt::format("offset 0: pipe header of {} bytes, 16 expected", b.size()));
  std::uint64_t hsize = R::u64(b, 8);
  if (hsize != 16) throw Failure(fmt::format("offset 8: pipe header size {} (16 expected)", hsize));
  R r(b, d, o);
  r.records(b, 16, b.size(), false, 0, false);
  r.finish_compressed();
  r.finish();
}

}  // namespace

bool looks_perf_data(std::string_view bytes) {
  return bytes.size() >= 8 && (bytes.substr(0, 8) == "PERFILE2" || bytes.substr(0, 8) == "2ELIFREP");
}

Parsed<PerfData> parse_perf_data(std::string_view b, const PerfDataOptions& o) {
  if (!looks_perf_data(b)) return parse_fail("offset 0: no PERFILE2 magic (not a perf.data file)");
  static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big);
  const bool file_big = b.substr(0, 8) == "2ELIFREP";
  const bool swap = file_big != (std::endian::native == std::endian::big);
  PerfData d;
  d.big_endian = file_big;
  try {
    // A pipe header is 16 bytes (magic, size 16); a file header is 104.
    std::uint64_t size = 0;
    if (b.size() >= 16) {
      std::memcpy(&size, b.data() + 8, 8);
      if (swap) size = __builtin_bswap64(size);
    }
    const bool pipe = b.size() >= 16 && size == 16;
    if (pipe) {
      if (swap) read_pipe_mode<true>(b, d, o);
      else read_pipe_mode<false>(b, d, o);
    } else {
      if (swap) read_file_mode<true>(b, d, o);
      else read_file_mode<false>(b, d, o);
    }
  } catch (const Failure& f) {
    return parse_fail(f.msg);
  } catch (const std::bad_alloc&) {
    return parse_fail("out of memory reading perf.data");
  }
  return d;
}

Parsed<Kallsyms> parse_kallsyms(std::string_view text) {
  Kallsyms k;
  int line_no = 0;
  bool any = false, nonzero = false;
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    line = sys::trim_ws(line);
    if (line.empty()) continue;
    auto sp1 = line.find(' ');
    auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || sp1 == 0 || sp1 > 16 || sp2 != sp1 + 2)
      return parse_fail("not a kallsyms line (\"ADDRESS TYPE NAME [module]\")", line_no);
    std::uint64_t addr = 0;
    for (char c : line.substr(0, sp1)) {
      int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (v < 0) return parse_fail("kallsyms address is not hexadecimal", line_no);
      addr = (addr << 4) | static_cast<std::uint64_t>(v);
    }
    any = true;
    nonzero = nonzero || addr != 0;
    char type = line[sp1 + 1];
    auto name = line.substr(sp2 + 1);
    name = name.substr(0, name.find_first_of(" \t"));
    if (name == "_text") k.text = addr;
    if (type == 't' || type == 'T' || type == 'w' || type == 'W') k.symbols.emplace_back(addr, std::string(name));
  }
  if (!any) return parse_fail("no kallsyms lines");
  k.zero_addresses = !nonzero;
  std::stable_sort(k.symbols.begin(), k.symbols.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return k;
}

namespace {
std::string_view basename_of(std::string_view p) {
  auto s = p.rfind('/');
  return s == std::string_view::npos || s + 1 == p.size() ? p : p.substr(s + 1);
}
}  // namespace

PerfProfile perf_data_profile(const PerfData& d, const Kallsyms* ks, std::string symbol_source) {
  PerfProfile p;
  p.layout = PerfProfile::Layout::data;
  p.command_column = true;
  p.samples = static_cast<double>(d.samples - d.unmatched_samples);
  // Several events sampled: one counted (its samples and periods alone), the others named.
  std::optional<std::uint16_t> only;
  double total_weight = d.total_weight;
  {
    std::vector<std::pair<std::string, double>> evs;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < d.event_samples.size() && i < d.event_names.size(); ++i)
      if (d.event_samples[i] > 0) {
        evs.emplace_back(d.event_names[i], static_cast<double>(d.event_samples[i]));
        index.push_back(i);
      }
    if (evs.size() > 1) {
      const std::size_t pick = perf_pick_event(evs);
      only = static_cast<std::uint16_t>(std::min<std::size_t>(index[pick], 0xffff));
      p.event = evs[pick].first;
      for (std::size_t i = 0; i < evs.size(); ++i)
        if (i != pick) p.other_events.push_back(evs[i]);
      p.samples = evs[pick].second;
      total_weight = d.event_weight[index[pick]];
    }
  }
  p.lost = static_cast<double>(d.lost);
  p.symbol_source = std::move(symbol_source);
  PerfProfile::Recording rec;
  rec.hostname = d.hostname;
  rec.osrelease = d.osrelease;
  rec.arch = d.arch;
  rec.nr_cpus = d.nr_cpus_online;
  rec.pipe = d.pipe;
  rec.compressed = d.compressed;
  rec.big_endian = d.big_endian;
  rec.unmatched_samples = d.unmatched_samples;
  p.recording = rec;
  const bool usable = ks && !ks->zero_addresses && !ks->symbols.empty();
  // The recording's _text (its KASLR base) against the kallsyms' _text.
  std::uint64_t delta = 0;
  if (usable && d.kernel_text && ks->text) delta = *d.kernel_text - *ks->text;
  auto name_of = [&](std::uint64_t ip) -> const std::string* {
    if (!usable) return nullptr;
    std::uint64_t a = ip - delta;
    auto it = std::upper_bound(ks->symbols.begin(), ks->symbols.end(), a, [](std::uint64_t x, const auto& s) { return x < s.first; });
    if (it == ks->symbols.begin()) return nullptr;
    --it;
    // Past the last symbol by more than any function is long: not this kernel's text.
    if (std::next(it) == ks->symbols.end() && a - it->first > (1u << 20)) return nullptr;
    return &it->second;
  };
  auto comm_of = [&](std::uint32_t tid) {
    auto it = std::lower_bound(d.comms.begin(), d.comms.end(), tid, [](const auto& c, std::uint32_t t) { return c.first < t; });
    return it != d.comms.end() && it->first == tid ? it->second : fmt::format(":{}", tid);
  };
  struct Row {
    std::string dso;
    bool kernel;
    double weight = 0;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;  // (symbol, comm)
  double unresolved = 0;
  for (const auto& l : d.leaves) {
    if (only && l.event != *only) continue;
    std::string sym, dso;
    bool kernel = false;
    switch (l.kind) {
      case PerfLeaf::Kind::kernel: {
        kernel = true;
        dso = "[kernel.kallsyms]";
        const std::string* n = name_of(l.ip);
        if (n) sym = *n;
        else {
          sym = fmt::format("{:#x}", l.ip);
          unresolved += l.weight;
        }
        break;
      }
      case PerfLeaf::Kind::user:
        dso = std::string(basename_of(l.dso < d.dsos.size() ? d.dsos[l.dso] : "[unknown]"));
        sym = dso;
        break;
      case PerfLeaf::Kind::guest: dso = sym = "[guest]"; break;
      case PerfLeaf::Kind::hypervisor: dso = sym = "[hypervisor]"; break;
    }
    auto& row = rows[{sym, comm_of(l.tid)}];
    row.dso = dso;
    row.kernel = kernel;
    row.weight += l.weight;
  }
  const double total = total_weight > 0 ? total_weight : 1;
  for (auto& [k, r] : rows) {
    PerfSymbol s;
    s.symbol = k.first;
    s.comm = k.second;
    s.dso = r.dso;
    s.kernel = r.kernel;
    s.self_pct = 100.0 * r.weight / total;
    p.symbols.push_back(std::move(s));
  }
  std::stable_sort(p.symbols.begin(), p.symbols.end(), [](const auto& a, const auto& b) { return a.self_pct > b.self_pct; });
  p.unresolved_kernel_pct = 100.0 * unresolved / total;
  return p;
}

}  // namespace perfgap::parsers
