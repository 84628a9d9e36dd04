#include "perf_data_gen.hpp"

#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace perfgap::gen {
namespace {

constexpr std::uint64_t kIp = 1, kTid = 2, kTime = 4, kRead = 16, kCallchain = 32, kCpu = 128, kPeriod = 256, kRaw = 1024,
                        kIdentifier = 1u << 16;
constexpr std::uint64_t kContextKernel = static_cast<std::uint64_t>(-128), kContextUser = static_cast<std::uint64_t>(-512);

class Out {
 public:
  explicit Out(bool big) : big_(big) {}
  void u8(std::uint8_t v) { s.push_back(static_cast<char>(v)); }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void bytes(const std::string& b) { s += b; }
  void zeros(std::size_t n) { s.append(n, '\0'); }
  void set_u16(std::size_t at, std::uint16_t v) {
    for (int i = 0; i < 2; ++i) s[at + i] = static_cast<char>(big_ ? (v >> (8 * (1 - i))) & 0xff : (v >> (8 * i)) & 0xff);
  }
  void set_u64(std::size_t at, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>(big_ ? (v >> (8 * (7 - i))) & 0xff : (v >> (8 * i)) & 0xff);
  }
  // The attr flags bitfield: a big-endian compiler allocates from each byte's top bit.
  void bitfield(std::uint64_t flags) {
    for (int i = 0; i < 8; ++i) {
      auto b = static_cast<std::uint8_t>((flags >> (8 * i)) & 0xff);
      if (big_) {
        std::uint8_t r = 0;
        for (int k = 0; k < 8; ++k) r = static_cast<std::uint8_t>(r | (((b >> k) & 1) << (7 - k)));
        b = r;
      }
      u8(b);
    }
  }
  std::string s;

 private:
  void put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(big_ ? (v >> (8 * (n - 1 - i))) & 0xff : (v >> (8 * i)) & 0xff));
  }
  bool big_;
};

struct Writer {
  const PerfDataSpec& sp;
  Out o;
  std::uint64_t sample_type = 0;
  std::uint64_t time = 1000;

  explicit Writer(const PerfDataSpec& s) : sp(s), o(s.big_endian) {
    sample_type = kIp | kTid | kTime | kCpu;
    if (sp.with_period) sample_type |= kPeriod;
    if (sp.callchains) sample_type |= kCallchain;
    if (sp.raw) sample_type |= kRaw;
    if (sp.read) sample_type |= kRead;
    if (sp.two_events) sample_type |= kIdentifier;
  }
  static std::uint64_t id_of(int event) { return 1000 + static_cast<std::uint64_t>(event); }

  void attr(Out& w, int event) const {
    std::size_t start = w.s.size();
    w.u32(event == 0 ? 0 : 1);  // PERF_TYPE_HARDWARE / SOFTWARE
    w.u32(sp.attr_size);
    w.u64(0);                   // config: cycles / cpu-clock
    w.u64(sp.sample_period);
    w.u64(sample_type);
    w.u64(sp.read ? (4 | 8 | 16) : 0);  // ID | GROUP | LOST
    // disabled, inherit, mmap, comm, sample_id_all, mmap2 (bits 0, 1, 8, 9, 18, 23).
    w.bitfield((1ull << 0) | (1ull << 1) | (1ull << 8) | (1ull << 9) | (1ull << 18) | (1ull << 23));
    w.u32(0);
    w.u32(0);
    while (w.s.size() - start < sp.attr_size) w.u8(0);
  }

  // Records: header + body + sample_id trailer (tid, time, [identifier], cpu).
  std::size_t begin(Out& w, std::uint32_t type, std::uint16_t misc) const {
    std::size_t at = w.s.size();
    w.u32(type);
    w.u16(misc);
    w.u16(0);
    return at;
  }
  static void end(Out& w, std::size_t at, bool pad = true) {
    while (pad && (w.s.size() - at) % 8) w.u8(0);
    std::size_t n = w.s.size() - at;
    if (n > 0xffff) throw std::runtime_error("perf_data_gen: record over 64 KiB");
    w.set_u16(at + 6, static_cast<std::uint16_t>(n));
  }
  void trailer(Out& w, std::uint32_t pid, std::uint32_t tid) {
    w.u32(pid);
    w.u32(tid);
    w.u64(time++);
    if (sp.two_events) w.u64(id_of(0));
    w.u32(0);
    w.u32(0);
  }
  static void name(Out& w, const std::string& n) {
    w.bytes(n);
    w.u8(0);
    while (w.s.size() % 8) w.u8(0);
  }

  void records(Out& w) {
    std::size_t at = begin(w, 1, 1);  // MMAP, misc KERNEL: the kernel's _text
    w.u32(0xffffffffu);
    w.u32(0);
    w.u64(sp.kernel_text);
    w.u64(0x1000000);
    w.u64(sp.kernel_text);
    name(w, "[kernel.kallsyms]_text");
    trailer(w, 0xffffffffu, 0);
    end(w, at);
    for (const auto& c : sp.comms) {
      at = begin(w, 3, 0);
      w.u32(c.pid);
      w.u32(c.tid);
      name(w, c.name);
      trailer(w, c.pid, c.tid);
      end(w, at);
    }
    for (const auto& m : sp.mmaps) {
      at = begin(w, m.mmap2 ? 10 : 1, 2);
      w.u32(m.pid);
      w.u32(m.pid);
      w.u64(m.addr);
      w.u64(m.len);
      w.u64(m.pgoff);
      if (m.mmap2) {
        w.zeros(24);
        w.u32(5);  // PROT_READ | PROT_EXEC
        w.u32(2);  // MAP_PRIVATE
      }
      name(w, m.name);
      trailer(w, m.pid, m.pid);
      end(w, at);
    }
    if (sp.lost > 0) {
      at = begin(w, 2, 0);
      w.u64(id_of(0));
      w.u64(sp.lost);
      trailer(w, 0, 0);
      end(w, at);
      at = begin(w, 13, 0);
      w.u64(1);
      trailer(w, 0, 0);
      end(w, at);
    }
    for (std::size_t rep = 0; rep < sp.repeat; ++rep) {
      for (const auto& s : sp.samples) {
        at = begin(w, 9, s.kernel ? 1 : 2);
        if (sp.two_events) w.u64(id_of(s.event));
        w.u64(s.ip);
        w.u32(s.pid);
        w.u32(s.tid);
        w.u64(time++);
        w.u32(0);
        w.u32(0);
        if (sp.with_period) w.u64(s.period);
        if (sp.read) {
          w.u64(2);  // group of two: value, id, lost each
          for (int k = 0; k < 2; ++k) {
            w.u64(7);
            w.u64(id_of(k));
            w.u64(0);
          }
        }
        if (sp.callchains) {
          w.u64(s.callchain.size() + 2);
          w.u64(s.kernel ? kContextKernel : kContextUser);
          w.u64(s.ip);
          for (auto f : s.callchain) w.u64(f);
        }
        if (sp.raw) {
          w.u32(4);
          w.u32(0xdeadbeef);
        }
        end(w, at);
      }
      if (rep % 64 == 63) {  // FINISHED_ROUND now and then, as perf writes them
        at = begin(w, 68, 0);
        end(w, at);
      }
    }
  }

  // The records cut into zstd chunks of one stream, each flushed, so records span chunks.
  void compress(Out& w, const std::string& plain) {
    ZSTD_CStream* z = ZSTD_createCStream();
    ZSTD_initCStream(z, 1);
    std::string buf(ZSTD_CStreamOutSize(), '\0');
    for (std::size_t off = 0; off < plain.size(); off += sp.compress_chunk) {
      std::size_t n = std::min(sp.compress_chunk, plain.size() - off);
      ZSTD_inBuffer in{plain.data() + off, n, 0};
      std::string chunk;
      std::size_t rem;
      do {
        ZSTD_outBuffer out{buf.data(), buf.size(), 0};
        rem = ZSTD_compressStream2(z, &out, &in, off + n == plain.size() ? ZSTD_e_end : ZSTD_e_flush);
        if (ZSTD_isError(rem)) throw std::runtime_error("perf_data_gen: zstd");
        chunk.append(buf.data(), out.pos);
      } while (rem != 0 || in.pos < in.size);
      // A chunk over a record's 64 KiB goes as several records of the same stream.
      for (std::size_t c = 0; c < chunk.size(); c += 60000) {
        std::string part = chunk.substr(c, 60000);
        std::size_t at = begin(w, static_cast<std::uint32_t>(sp.compressed), 0);
        if (sp.compressed == 83) w.u64(part.size());
        w.bytes(part);
        end(w, at, sp.compressed == 83);  // COMPRESSED (81) is not padded: its size is the data's
      }
    }
    ZSTD_freeCStream(z);
  }

  void data(Out& w) {
    if (!sp.compressed) return records(w);
    Out plain(sp.big_endian);
    records(plain);
    compress(w, plain.s);
  }

  static void str(Out& w, const std::string& v) {
    std::uint32_t len = static_cast<std::uint32_t>((v.size() + 1 + 63) / 64 * 64);
    w.u32(len);
    w.bytes(v);
    w.zeros(len - v.size());
  }
  // Feature bits written: HOSTNAME 3, OSRELEASE 4, ARCH 6, NRCPUS 7, CMDLINE 11, COMPRESSED 27.
  std::vector<std::pair<unsigned, std::string>> features() const {
    std::vector<std::pair<unsigned, std::string>> f;
    auto one = [&](unsigned id, auto fill) {
      Out w(sp.big_endian);
      fill(w);
      f.emplace_back(id, w.s);
    };
    one(3, [&](Out& w) { str(w, sp.hostname); });
    one(4, [&](Out& w) { str(w, sp.osrelease); });
    one(6, [&](Out& w) { str(w, sp.arch); });
    one(7, [&](Out& w) { w.u32(sp.nr_cpus); w.u32(sp.nr_cpus); });
    one(11, [&](Out& w) { w.u32(2); str(w, "perf"); str(w, "record"); });
    if (sp.compressed) one(27, [&](Out& w) { w.u32(0); w.u32(1); w.u32(1); w.u32(0); w.u32(static_cast<std::uint32_t>(sp.compress_chunk)); });
    return f;
  }

  std::string pipe() {
    o.u64(0x32454c4946524550ULL);
    o.u64(16);
    for (int e = 0; e < (sp.two_events ? 2 : 1); ++e) {
      std::size_t at = begin(o, 64, 0);  // HEADER_ATTR
      attr(o, e);
      o.u64(id_of(e));
      end(o, at);
    }
    for (const auto& [id, body] : features()) {
      std::size_t at = begin(o, 80, 0);  // HEADER_FEATURE
      o.u64(id);
      o.bytes(body);
      end(o, at);
    }
    data(o);
    return o.s;
  }

  std::string file() {
    const int n_attr = sp.two_events ? 2 : 1;
    const std::size_t entry = sp.attr_size + 16;
    o.u64(0x32454c4946524550ULL);
    o.u64(104);
    o.u64(entry);
    std::size_t attrs_off = 104, ids_off = attrs_off + n_attr * entry, data_off = ids_off + 8 * n_attr;
    o.u64(attrs_off);
    o.u64(n_attr * entry);
    o.u64(data_off);
    o.u64(0);  // data size, set below
    o.u64(0);
    o.u64(0);
    auto feats = features();
    std::uint64_t bits[4] = {0, 0, 0, 0};
    for (const auto& f : feats) bits[f.first / 64] |= 1ull << (f.first % 64);
    for (auto b : bits) o.u64(b);
    for (int e = 0; e < n_attr; ++e) {
      attr(o, e);
      o.u64(ids_off + 8 * e);
      o.u64(8);
    }
    for (int e = 0; e < n_attr; ++e) o.u64(id_of(e));
    data(o);
    std::size_t data_size = o.s.size() - data_off;
    o.set_u64(48, data_size);
    std::size_t table = o.s.size(), body = table + 16 * feats.size();
    for (const auto& f : feats) {
      o.u64(body);
      o.u64(f.second.size());
      body += f.second.size();
    }
    for (const auto& f : feats) o.bytes(f.second);
    return o.s;
  }
};

}  // namespace

std::string write_perf_data(const PerfDataSpec& spec) {
  Writer w(spec);
  return spec.pipe ? w.pipe() : w.file();
}

std::string kallsyms_text(const std::vector<std::pair<std::uint64_t, std::string>>& symbols, std::uint64_t text) {
  std::string out;
  char line[64];
  std::snprintf(line, sizeof line, "%016llx T _text\n", static_cast<unsigned long long>(text));
  out += line;
  for (const auto& [a, n] : symbols) {
    std::snprintf(line, sizeof line, "%016llx T ", static_cast<unsigned long long>(a));
    out += line + n + "\n";
  }
  return out;
}

PerfDataSpec demo_spec(const std::vector<std::pair<std::string, int>>& kernel_shares, int user_share) {
  PerfDataSpec s;
  s.comms = {{100, 100, "python"}, {100, 101, "pt_data_worker"}, {200, 200, "nccl_proxy"}};
  s.mmaps = {{100, 0x7f0000000000ULL, 0x200000, 0, "/usr/lib/x86_64-linux-gnu/libc.so.6", true},
             {200, 0x400000, 0x100000, 0, "/usr/bin/python3.11", false}};
  std::uint64_t addr = s.kernel_text + 0x1000;
  for (const auto& [name, n] : kernel_shares) {
    for (int i = 0; i < n; ++i) {
      GenSample g;
      g.ip = addr + 0x10 + static_cast<std::uint64_t>(i % 7) * 4;
      g.pid = 100;
      g.tid = i % 3 == 0 ? 101 : 100;
      g.callchain = {s.kernel_text + 0x100, 0x7f0000001000ULL};
      s.samples.push_back(g);
    }
    addr += 0x1000;
  }
  for (int i = 0; i < user_share; ++i) {
    GenSample g;
    g.kernel = false;
    if (i % 2 == 0) {
      g.ip = 0x7f0000000100ULL + static_cast<std::uint64_t>(i);
      g.pid = g.tid = 100;
    } else {
      g.ip = 0x400100 + static_cast<std::uint64_t>(i);
      g.pid = g.tid = 200;
    }
    g.callchain = {0x7f0000002000ULL};
    s.samples.push_back(g);
  }
  return s;
}

std::string demo_kallsyms(const std::vector<std::pair<std::string, int>>& kernel_shares, std::uint64_t text) {
  std::vector<std::pair<std::uint64_t, std::string>> syms;
  std::uint64_t addr = text + 0x1000;
  for (const auto& k : kernel_shares) {
    syms.emplace_back(addr, k.first);
    addr += 0x1000;
  }
  syms.emplace_back(addr, "__demo_end");
  return kallsyms_text(syms, text);
}

}  // namespace perfgap::gen
