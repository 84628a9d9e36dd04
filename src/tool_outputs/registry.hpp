// The analyzer registry: every `perfgap analyze KIND` is one entry here (its name, layer, the
// options it accepts, the formats it renders to, and the function that reads its inputs and runs
// its analyzer). The CLI binds the options and renders; it never branches on the kind.
// Adding a KIND: CONTRIBUTING.md, "Adding an analyzer format".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "report/model.hpp"
#include "report/render.hpp"

namespace perfgap::analyzers {
struct WhatifOptions;
}

namespace perfgap::tool_outputs {

// What `perfgap analyze` was asked, every kind's options together (each kind reads its own;
// options given to a kind that does not list them are refused before it runs).
struct Request {
  std::vector<std::string> files;
  std::optional<double> rated_mhz;              // turbostat
  std::optional<int> nics;                      // nccl-tests, nccl-inspector: the busbw basis
  std::optional<double> link_gbps;
  std::string node_report;
  std::optional<long> nodes;                    // nccl-tests: the nodes the run spanned, where its output does not show them
  std::string reference;                        // nccl-tests, nsys, kineto: a file; steps: a file or ms
  std::string sizes;                            // nccl-tests
  std::optional<std::string> expect_topo_file;  // nccl-log
  std::string expect_net;                       // nccl-log: IB|Socket
  bool expect_gdr = false;                      // nccl-log
  std::optional<double> reference_ms;           // steps (deprecated: --reference MS)
  std::optional<long> warmup;                   // steps
  std::string iteration_range;                  // nsys, kineto
  std::string kallsyms;                         // perf
  std::vector<std::string> kb_dirs;             // nsys, kineto: knowledge-base directories (--kb) over the built-in one and /etc/perfgap/kb.d
  std::vector<std::string> nccl_tests;          // whatif: healthy nccl-tests outputs (--nccl-tests), one collective each
  std::string digest_dir;                       // whatif --digest: write each trace's digest here instead of replaying
};

// What an analysis gives the report: its findings and its inputs (source.inputs: the files
// read, directories and globs expanded where the kind expands them).
struct Result {
  std::vector<report::Finding> findings;
  std::vector<std::string> inputs;
};

// Reads the request's inputs and runs the kind's analyzer. An input that cannot be used is an
// `error` finding next to the others; the error (exit 2) is for a request that cannot run at
// all: a bad option value, an unreadable --reference, no usable input.
struct Analyzer;
using RunFn = tl::expected<Result, std::string> (*)(const Analyzer&, const Request&);

struct Analyzer {
  const char* kind;      // "perf", "nccl-tests", ...
  const char* layer;     // the layer of what it reveals (and of an unusable input's finding)
  const char* main_id;   // the id an unusable input's `error` finding carries
  const char* reads;     // what it reads, for help texts
  std::vector<std::string_view> options;  // the kind-specific options it accepts ("--rated-mhz")
  std::vector<report::Format> formats;
  RunFn run;
};

// Every kind, in the order help texts list them.
const std::vector<Analyzer>& analyzers();
const Analyzer* find(std::string_view kind);
// "perf, turbostat, ..." and "perf | turbostat | ...".
std::string kind_list(std::string_view separator = ", ");

// The kind-specific options that `request` gives (by their spelling), in registry order.
std::vector<std::string_view> given_options(const Request& request);
// The kinds that accept `option`, as "analyze nccl-tests or analyze nccl-inspector".
std::string kinds_accepting(std::string_view option);

// Checks the request against the entry (options it does not take, options that go together),
// then runs it.
tl::expected<Result, std::string> run(const Analyzer& analyzer, const Request& request);

// perfgap whatif: the inputs of `analyze nsys|kineto` (the entry `kind`) replayed
// (analyzers/profile_job.hpp whatif_profile_job).
tl::expected<Result, std::string> whatif(const Analyzer& analyzer, const Request& request, const analyzers::WhatifOptions& w);
// The profile kind of these inputs: "nsys" where they are nsys exports (.sqlite, .nsys-rep,
// .qdrep) or directories holding only those, else "kineto".
std::string profile_kind_of(const std::vector<std::string>& inputs);

}  // namespace perfgap::tool_outputs
