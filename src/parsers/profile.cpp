#include "parsers/profile.hpp"

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <vector>

namespace perfgap::parsers {

std::string_view coll_name(Coll c) {
  switch (c) {
    case Coll::none: return "compute";
    case Coll::AllGather: return "AllGather";
    case Coll::ReduceScatter: return "ReduceScatter";
    case Coll::AllReduce: return "AllReduce";
    case Coll::Broadcast: return "Broadcast";
    case Coll::Reduce: return "Reduce";
    case Coll::AllToAll: return "AllToAll";
    case Coll::SendRecv: return "SendRecv";
    case Coll::other: return "other NCCL";
  }
  return "?";
}

std::string_view copy_kind_name(CopyKind k) {
  switch (k) {
    case CopyKind::h2d: return "H2D";
    case CopyKind::d2h: return "D2H";
    case CopyKind::d2d: return "D2D";
    case CopyKind::p2p: return "P2P";
    case CopyKind::other: return "other";
    case CopyKind::unknown: return "unknown";
  }
  return "?";
}

std::string_view host_mem_name(HostMem m) {
  switch (m) {
    case HostMem::pageable: return "pageable";
    case HostMem::pinned: return "pinned";
    case HostMem::managed: return "managed";
    case HostMem::none: return "";
    case HostMem::unknown: return "unknown";
  }
  return "?";
}

namespace {

// Lower case without '_' (so "All_Reduce", "allreduce" and "AllReduce" read alike).
std::string squash(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s)
    if (ch != '_' && ch != ' ' && ch != '-') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  return out;
}

Coll from_words(const std::string& w) {
  // Longest names first: "reducescatter" and "allreduce" hold "reduce".
  static const std::pair<const char*, Coll> kOrder[] = {
      {"reducescatter", Coll::ReduceScatter}, {"allreduce", Coll::AllReduce}, {"allgather", Coll::AllGather},
      {"alltoall", Coll::AllToAll},           {"sendrecv", Coll::SendRecv},   {"broadcast", Coll::Broadcast},
      {"bcast", Coll::Broadcast},             {"reduce", Coll::Reduce},       {"send", Coll::SendRecv},
      {"recv", Coll::SendRecv},
  };
  for (const auto& [word, c] : kOrder)
    if (w.find(word) != std::string::npos) return c;
  return Coll::other;
}

}  // namespace

Coll collective_named(std::string_view name) {
  const std::string n = squash(name);
  // Longest first: "reduce" is in "allreduce" and "reducescatter".
  for (auto [key, c] : {std::pair{"reducescatter", Coll::ReduceScatter},
                        {"allreduce", Coll::AllReduce},
                        {"allgather", Coll::AllGather},
                        {"alltoall", Coll::AllToAll},
                        {"broadcast", Coll::Broadcast},
                        {"sendrecv", Coll::SendRecv},
                        {"reduce", Coll::Reduce}})
    if (n.find(key) != std::string::npos) return c;
  return Coll::none;
}

Coll collective_of_command(std::string_view command) {
  std::vector<std::string_view> words;
  while (!command.empty()) {
    const auto start = command.find_first_not_of(" \t");
    if (start == std::string_view::npos) break;
    command.remove_prefix(start);
    const auto end = command.find_first_of(" \t");
    words.push_back(command.substr(0, end));
    command = end == std::string_view::npos ? std::string_view() : command.substr(end);
  }
  for (std::size_t i = 0; i < words.size(); ++i) {
    const auto slash = words[i].rfind('/');
    const std::string_view base = slash == std::string_view::npos ? words[i] : words[i].substr(slash + 1);
    // nccl-tests: all_reduce_perf, alltoall_perf_mpi, ...
    if (base.ends_with("_perf") || base.ends_with("_perf_mpi")) return collective_named(base);
    if (base.starts_with("perfgap-collbench")) {
      // Its one collective argument (the flags' values are sizes and counts, never a collective).
      for (std::size_t k = i + 1; k < words.size(); ++k)
        if (!words[k].starts_with("-"))
          if (const Coll c = collective_named(words[k]); c != Coll::none) return c;
      return Coll::AllReduce;
    }
  }
  return Coll::none;
}

Coll nccl_collective(std::string_view name) {
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  if (name.substr(0, 4) != "nccl") return Coll::none;
  if (auto p = name.find('('); p != std::string_view::npos) name = name.substr(0, p);
  if (auto p = name.find('<'); p != std::string_view::npos) name = name.substr(0, p);
  return from_words(squash(name.substr(4)));
}

std::string_view kernel_base_name(std::string_view name) {
  auto trim = [](std::string_view v) {
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
    return v;
  };
  name = trim(name);
  if (name.substr(0, 5) == "void ") name = trim(name.substr(5));
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto rest = name.substr(i);
    if (rest.starts_with("(anonymous namespace)")) i += 20;
    else if (rest.starts_with("<unnamed>")) i += 8;
    else if (name[i] == '(' || name[i] == '<') return trim(name.substr(0, i));
  }
  return name;
}

Coll collective_from_arg(std::string_view arg) {
  auto w = squash(arg);
  if (w.empty()) return Coll::other;
  return from_words(w);
}

std::size_t name_sendrecv_collectives(Profile& p, const std::vector<ProfileRange>& ops) {
  struct Op {
    std::int64_t start, end;
    std::uint64_t process;
    Coll coll;
    P2pDir dir;
  };
  std::vector<Op> comm;
  auto take = [&](const ProfileRange& r) {
    std::string_view n = p.names[r.name];
    if (!n.starts_with("nccl:")) return;
    n.remove_prefix(5);
    // emit_nvtx appends ", seq = N, op_id = M" and the like: the op's own name only.
    std::size_t len = 0;
    while (len < n.size() && (std::isalnum(static_cast<unsigned char>(n[len])) || n[len] == '_')) ++len;
    n = n.substr(0, len);
    const Coll c = collective_from_arg(n);
    const P2pDir d = n == "send" || n == "isend" ? P2pDir::send : n == "recv" || n == "irecv" ? P2pDir::recv : P2pDir::unknown;
    comm.push_back({r.start, r.end, r.process, c, d});
  };
  for (const auto& r : p.ranges) take(r);
  for (const auto& r : ops) take(r);
  if (comm.empty()) return 0;
  std::sort(comm.begin(), comm.end(), [](const Op& a, const Op& b) { return a.start < b.start; });
  std::size_t renamed = 0;
  for (auto& a : p.acts) {
    if (a.kind != ActKind::kernel || a.coll != Coll::SendRecv || a.api_start < 0) continue;
    const std::uint64_t proc = a.gpu < p.gpus.size() ? p.gpus[a.gpu].process : 0;
    auto it = std::upper_bound(comm.begin(), comm.end(), a.api_start, [](std::int64_t t, const Op& o) { return t < o.start; });
    // The innermost op holding the launch call: the latest start that still ends after it (a
    // few ops of other threads may start in between).
    for (int tried = 0; it != comm.begin() && tried < 64; ++tried) {
      --it;
      if (it->process != proc || it->end < a.api_end) continue;
      if (it->coll != Coll::SendRecv && it->coll != Coll::other && it->coll != Coll::none) {
        a.coll = it->coll;
        a.p2p = P2pDir::unknown;
        a.peer = -1;
        ++renamed;
      } else if (it->coll == Coll::SendRecv && a.p2p == P2pDir::unknown) {
        a.p2p = it->dir;
      }
      break;
    }
  }
  // A SendRecv kernel whose launch call is not in the trace (launched before the capture began)
  // has no op to name its collective. On a stream whose other NCCL kernels all ran collectives
  // (NCCL builds that run every collective as SendRecv), calling it point-to-point would invent
  // pipeline transfers the job does not have: it is an NCCL kernel of unknown collective.
  if (renamed > 0) {
    auto stream_key = [](const GpuActivity& a) { return (static_cast<std::uint64_t>(a.gpu) << 32) | a.stream; };
    std::vector<std::uint64_t> collective_streams, p2p_streams;
    for (const auto& a : p.acts) {
      if (a.kind != ActKind::kernel || a.api_start < 0) continue;
      if (a.coll == Coll::SendRecv) p2p_streams.push_back(stream_key(a));
      else if (a.coll != Coll::none && a.coll != Coll::other) collective_streams.push_back(stream_key(a));
    }
    for (auto* v : {&collective_streams, &p2p_streams}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    std::size_t unknown = 0;
    for (auto& a : p.acts) {
      if (a.kind != ActKind::kernel || a.coll != Coll::SendRecv || a.api_start >= 0) continue;
      const auto k = stream_key(a);
      if (!std::binary_search(collective_streams.begin(), collective_streams.end(), k) ||
          std::binary_search(p2p_streams.begin(), p2p_streams.end(), k))
        continue;
      a.coll = Coll::other;
      a.p2p = P2pDir::unknown;
      a.peer = -1;
      ++unknown;
    }
    if (unknown)
      p.notes.push_back(std::to_string(unknown) + " SendRecv kernels without their launch call in the trace (launched before it began) counted as " +
                        "NCCL kernels of unknown collective: their streams' other NCCL kernels all ran collectives, not point-to-point transfers");
  }
  return renamed;
}

bool is_sync_call(std::string_view n) {
  if (!n.starts_with("cu") && !n.starts_with("hip")) return false;
  // ROCm's HIP calls as PyTorch's profiler records them on AMD GPUs (hipDeviceSynchronize, ...).
  for (std::string_view w : {"cudaStreamSynchronize", "cuStreamSynchronize", "cudaDeviceSynchronize", "cuCtxSynchronize", "cudaEventSynchronize",
                             "cuEventSynchronize", "cudaThreadSynchronize", "hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize",
                             "hipCtxSynchronize"})
    if (n.starts_with(w)) return true;
  // Synchronous copies: cudaMemcpy, cudaMemcpy2D, cudaMemcpyToSymbol, cuMemcpyDtoH_v2, hipMemcpy,
  // hipMemcpyWithStream (not the *Async ones, not cudaMemcpyPeer's Async, not cudaMemset).
  return (n.starts_with("cudaMemcpy") || n.starts_with("cuMemcpy") || n.starts_with("hipMemcpy")) && n.find("Async") == std::string_view::npos;
}

std::uint32_t Profile::call_name_index(std::string_view s) {
  // nsys names its runtime calls by the API version that added them: cudaLaunchKernel_v7000.
  if (auto v = s.rfind("_v"); v != std::string_view::npos && v + 2 < s.size() &&
                              s.find_first_not_of("0123456789", v + 2) == std::string_view::npos)
    s = s.substr(0, v);
  for (std::uint32_t i = 0; i < call_names.size(); ++i)
    if (call_names[i] == s) return i;
  if (call_names.size() == 255) s = "other calls";
  else if (call_names.size() > 255) return 255;
  call_names.emplace_back(s);
  return static_cast<std::uint32_t>(call_names.size() - 1);
}

void Profile::merge(Profile&& o, std::uint32_t file) {
  if (gpus.empty() && acts.empty() && ranges.empty() && names.size() <= 1 && env.empty() && system.empty() && notes.empty()) {
    // The first profile: taken over whole (no copy of millions of activities).
    for (auto& g : o.gpus) g.file = file;
    for (auto& r : o.ranges) r.file = file;
    for (auto& c : o.slow_calls) c.file = file;
    *this = std::move(o);
    return;
  }
  const auto gpu_base = static_cast<std::uint32_t>(gpus.size());
  std::unordered_map<std::string, std::uint32_t> index;
  for (std::uint32_t i = 0; i < names.size(); ++i) index.emplace(names[i], i);
  std::vector<std::uint32_t> remap(o.names.size());
  for (std::size_t i = 0; i < o.names.size(); ++i) {
    auto [it, fresh] = index.emplace(o.names[i], static_cast<std::uint32_t>(names.size()));
    if (fresh) names.push_back(o.names[i]);
    remap[i] = it->second;
  }
  std::unordered_map<std::string, int> keys;
  for (const auto& g : gpus) keys[g.key] = 1;
  for (auto& g : o.gpus) {
    g.file = file;
    if (keys.count(g.key)) g.key = "file" + std::to_string(file) + "." + g.key;  // the same process/rank in two inputs
    keys[g.key] = 1;
    gpus.push_back(std::move(g));
  }
  // Geometric growth: an exact reserve per merge would copy every earlier rank's activities
  // again for each new one (a job's 256 ranks: quadratic).
  if (acts.capacity() < acts.size() + o.acts.size()) acts.reserve(std::max(acts.size() + o.acts.size(), 2 * acts.capacity()));
  for (auto& a : o.acts) {
    a.gpu += gpu_base;
    a.name = remap[a.name];
    acts.push_back(a);
  }
  for (auto& r : o.ranges) {
    r.file = file;
    r.name = remap[r.name];
    ranges.push_back(r);
  }
  std::vector<std::uint32_t> call_remap(o.call_names.size());
  for (std::size_t i = 0; i < o.call_names.size(); ++i) {
    const auto at = std::find(call_names.begin(), call_names.end(), o.call_names[i]);
    call_remap[i] = static_cast<std::uint32_t>(at - call_names.begin());
    if (at == call_names.end()) call_names.push_back(o.call_names[i]);
  }
  for (auto c : o.slow_calls) {
    c.file = file;
    c.name = call_remap[c.name];
    slow_calls.push_back(c);
  }
  std::sort(slow_calls.begin(), slow_calls.end(), [](const SlowHostCall& a, const SlowHostCall& b) { return a.start < b.start; });
  api_calls += o.api_calls;
  sync_calls += o.sync_calls;
  sync_ns += o.sync_ns;
  if (format.empty()) format = o.format;
  else if (format.find(o.format) == std::string::npos) format += "; " + o.format;
  if (o.env_present) env_present = true;
  for (auto& e : o.env) env.push_back(std::move(e));
  for (auto& s : o.system) system.push_back(std::move(s));
  for (auto& n : o.notes) notes.push_back(std::move(n));
  for (auto& t : o.threads)
    if (std::find(threads.begin(), threads.end(), t) == threads.end()) threads.push_back(std::move(t));
  framework = framework_joined(framework, o.framework);
}

}  // namespace perfgap::parsers
