// analyze perf inputs: perf's text (report/script) or perf.data, with kernel symbols.
#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "tool_outputs/inputs.hpp"
#include "parsers/tool_text.hpp"
#include "sys/named_file.hpp"
#include "sys/paths.hpp"
#include "sys/sysroot.hpp"

namespace perfgap::tool_outputs {
namespace {

const parsers::Kallsyms* kernel_names_for(KernelNames& kn, const parsers::PerfData& d, std::string& source) {
  if (kn.given) {
    source = "--kallsyms " + kn.given_path;
    if (kn.given->zero_addresses) source += " (every address is 0: captured without root; capture it as root)";
    return &*kn.given;
  }
  auto root = sys::Sysroot::live();
  if (!kn.live_read) {
    kn.live_read = true;
    auto rel = root.read_value("/proc/sys/kernel/osrelease");
    if (rel) kn.running_release = *rel;
    auto text = root.read("/proc/kallsyms", 256u << 20);
    if (!text) kn.live_why = "/proc/kallsyms: " + text.error().reason();
    else if (auto k = parsers::parse_kallsyms(*text); !k) kn.live_why = "/proc/kallsyms: " + k.error().describe();
    else if (k->zero_addresses) kn.live_why = "/proc/kallsyms shows every address as 0 (not root, or kernel.kptr_restrict)";
    else kn.live = std::move(*k);
  }
  if (d.osrelease.empty()) {
    source = "no kernel symbols: the recording names no kernel release, so this node's /proc/kallsyms cannot be matched; pass --kallsyms FILE captured on the node";
    return nullptr;
  }
  if (d.osrelease != kn.running_release) {
    source = fmt::format("no kernel symbols: recorded on kernel {}, this node runs {}; pass --kallsyms FILE captured on the node", d.osrelease,
                         kn.running_release.empty() ? "an unknown one" : kn.running_release);
    return nullptr;
  }
  if (!kn.live) {
    source = fmt::format("no kernel symbols: {}; pass --kallsyms FILE captured on the node", kn.live_why);
    return nullptr;
  }
  source = fmt::format("this node's /proc/kallsyms (same kernel release {})", d.osrelease);
  return &*kn.live;
}

}  // namespace

tl::expected<void, std::string> load_given_kallsyms(KernelNames& kn, const std::string& path) {
  auto text = sys::read_named_file(path, 256u << 20);
  if (!text) return tl::unexpected("--kallsyms " + path + ": " + text.error());
  auto ks = parsers::parse_kallsyms(*text);
  if (!ks) return tl::unexpected("--kallsyms " + path + ": " + ks.error().describe());
  kn.given_path = path;
  kn.given = std::move(*ks);
  return {};
}

// A perf input: perf.data (by its magic, file or pipe mode) or perf's text, told apart by the
// first block, so a file, a FIFO and standard input are read once. Text streams into the
// parser; perf.data's blocks are kept whole (the reader takes all the bytes). The blocks are
// stream_named_file's, whole lines and so exactly the input's bytes, except that a "line"
// (bytes without a 0x0a) longer than a block is cut: a perf.data that has one is refused, not
// read wrong (the block then has one byte more than a block holds).
tl::expected<parsers::PerfProfile, std::string> read_perf_input(const std::string& file, KernelNames& kn) {
  auto bytes = std::make_optional<std::string>();
  parsers::PerfParser text;
  bool first = true, data = false, binary = false, cut = false, any = false;
  auto read = sys::stream_named_file(file, sys::kMaxInputBytes, [&](std::string_view block) {
    if (first) {
      first = false;
      data = parsers::looks_perf_data(block);
      if (!data && parsers::tooltext::looks_binary(block)) {
        binary = true;
        return false;
      }
    }
    if (data) {
      if (bytes->empty()) {
        // One allocation for a regular file (no regrowth copies of a large recording).
        std::uintmax_t size = 0;
        if (file != "-")
          if (auto st = sys::stat_path(file); st && S_ISREG(st->st_mode)) size = static_cast<std::uintmax_t>(st->st_size);
        if (size > 0) bytes->reserve(std::min<std::uintmax_t>(size, sys::kMaxInputBytes));
      }
      if (block.size() > sys::kStreamBlockBytes) {
        cut = true;
        return false;
      }
      bytes->append(block);
      return true;
    }
    if (!any) any = block.find_first_not_of(" \t\r\n") != std::string_view::npos;
    text.feed(block);
    return true;
  });
  if (!read) return tl::unexpected(read.error());
  if (binary) return tl::unexpected(std::string("binary data, neither perf text nor perf.data (no PERFILE2 magic)"));
  if (cut) return tl::unexpected(fmt::format("perf.data with more than {} bytes in a row without a 0x0a byte, which the block reader cannot pass on whole", sys::kStreamBlockBytes));
  if (!data) {
    if (!any) return tl::unexpected(std::string("empty"));
    auto p = text.finish();
    if (!p) return tl::unexpected(p.error().describe());
    return std::move(*p);
  }
  auto d = parsers::parse_perf_data(*bytes);
  if (!d) return tl::unexpected("perf.data: " + d.error().describe());
  std::string source;
  const parsers::Kallsyms* ks = kernel_names_for(kn, *d, source);
  return parsers::perf_data_profile(*d, ks, source);
}

}  // namespace perfgap::tool_outputs
