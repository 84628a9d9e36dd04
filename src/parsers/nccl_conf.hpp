// NCCL's own setting syntaxes, read the way NCCL reads them: its config files
// (src/misc/param.cc setEnvFile), integer settings (strtoll) and the NCCL_IB_HCA /
// NCCL_SOCKET_IFNAME device lists. facts/nccl finds the files and merges the settings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace perfgap::parsers {

struct NcclConfEntry {
  std::string name, value;
  int line = 0;
};

// One NCCL config file, as NCCL's setEnvFile reads it: lines starting with '#' (in column 0)
// are comments; a line is NAME=VALUE split at the first '='; nothing is trimmed (only the
// final '\n' goes; "A = 1" sets a variable named "A " that NCCL never reads); lines without
// '=' or with an empty name are ignored; name and value are cut at 1023 bytes and at a NUL.
// Within one file the first setting of a name wins (NCCL calls setenv(name, value, 0)).
std::vector<NcclConfEntry> parse_nccl_conf(std::string_view text);

// NCCL reads integer settings with strtoll(str, nullptr, 0): leading blanks, a sign, 0x/0
// prefixes, and whatever digits come first ("1abc" is 1, "yes" is 0).
std::int64_t nccl_int(std::string_view value);

// ---- device lists (NCCL_IB_HCA, NCCL_SOCKET_IFNAME) -----------------------------------

// NCCL's syntax (src/misc/utils.cc parseStringList/matchIfList, net_ib.cc): an optional
// leading '^' (exclude), then an optional '=' (exact names; otherwise prefixes), then a comma
// list of NAME[:PORT]; entries with an empty name are dropped; at most `max_entries`.
struct NcclIfEntry {
  std::string prefix;
  int port = -1;  // -1: any port (PORT is read like atoi: "x" is port 0, which never exists)
};
struct NcclIfList {
  bool exclude = false;
  bool exact = false;
  std::vector<NcclIfEntry> entries;
};
NcclIfList parse_nccl_if_list(std::string_view value, std::size_t max_entries = 32);
// NCCL's matchIfList: true when an entry matches (an empty list matches everything); the
// caller applies `exclude` (selected = match != exclude).
bool nccl_if_match(const NcclIfList& list, std::string_view name, int port);

}  // namespace perfgap::parsers
