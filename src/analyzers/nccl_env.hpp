// NCCL settings that override its own tuning (nccl.env.forced), judged the same wherever they
// were read: the node's environment and config files (checks/network/nccl.cpp) or the "X set
// by environment to Y" lines of a job's NCCL log (analyze nccl-log).
#pragma once

#include <string>

#include "facts/nccl.hpp"
#include "report/model.hpp"

namespace perfgap::analyzers {

// nccl.env.forced over `c`: `warn` naming each of NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS,
// NCCL_MAX_NCHANNELS, NCCL_BUFFSIZE set (and full debug logging), each with its source; `pass`
// otherwise, with one evidence line at `none_where` saying what was looked for (`none_prefix`
// first: why that may be partial).
report::Finding judge_nccl_forced(const facts::NcclConfig& c, const std::string& none_where, const std::string& none_prefix);

}  // namespace perfgap::analyzers
