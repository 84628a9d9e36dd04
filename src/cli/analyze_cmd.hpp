#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <tl/expected.hpp>

#include "report/model.hpp"
#include "sys/named_file.hpp"

namespace perfgap::cli {

struct AnalyzeArgs {
  std::string kind;
  std::vector<std::string> files;
  std::string format;  // "" = text
  std::string output;
  bool verbose = false;
  std::optional<double> rated_mhz;          // turbostat
  // nccl-tests without --reference: the NICs' line rate as the basis (--nics x --link-gbps, or
  // the ACTIVE RDMA ports of a perfgap check report given with --node-report).
  std::optional<int> nics;
  std::optional<double> link_gbps;
  std::string node_report;
  std::string reference;                    // nccl-tests, nsys, kineto: a file; steps: a file or ms
  std::string sizes;                        // nccl-tests
  std::optional<std::string> expect_topo_file;  // nccl-log
  std::string expect_net;                   // nccl-log: IB|Socket
  bool expect_gdr = false;                  // nccl-log
  std::optional<double> reference_ms;       // steps (deprecated: --reference MS)
  std::optional<long> warmup;               // steps
  std::string iteration_range;              // nsys, kineto
  std::string kallsyms;                     // perf: kernel symbols for perf.data
};

void add_analyze_command(CLI::App& app, AnalyzeArgs& args);
int run_analyze(const AnalyzeArgs& args);

// Shared with gap: a text input (a file, or - for standard input) parsed as it is read,
// block by block, so memory is one block plus the parser's model, whatever the input's
// size. The model, or why the input is unusable (unreadable, too large, empty, binary, or
// the parser's error).
tl::expected<void, std::string> stream_text_input(const std::string& path, std::size_t max_bytes,
                                                  const std::function<void(std::string_view)>& feed);

template <class Parser>
auto parse_input(const std::string& path, std::size_t max_bytes = sys::kMaxInputBytes)
    -> tl::expected<typename decltype(std::declval<Parser&>().finish())::value_type, std::string> {
  Parser parser;
  auto read = stream_text_input(path, max_bytes, [&](std::string_view block) { parser.feed(block); });
  if (!read) return tl::unexpected(read.error());
  auto model = parser.finish();
  if (!model) return tl::unexpected(model.error().describe());
  return std::move(*model);
}

}  // namespace perfgap::cli
