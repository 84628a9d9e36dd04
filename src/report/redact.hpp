// The contract's rules for what of an environment may appear in a report.
#pragma once

#include <string>
#include <string_view>

#include "parsers/procfs.hpp"
#include "report/model.hpp"

namespace perfgap::report {

inline constexpr std::string_view kRedacted = "<redacted>";

// NCCL_, UCX_, CUDA_, NVIDIA_, OMPI_, PMIX_, SLURM_, TORCH_, NVTE_, MEGATRON_.
bool audited_name(std::string_view name);
// Names containing TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, PRIVATE or AUTHORIZATION,
// with KEY or APIKEY as one of their '_'-separated words (WANDB_API_KEY; not NCCL_IB_PKEY),
// or ending in _PAT, PASS (not BYPASS) or AUTH (GITHUB_PAT, SSHPASS, AUTH).
bool secret_name(std::string_view name);
// Values that carry a credential whatever the variable is called: an option or key of a
// secret name with a value ("--password=x", "--token x", "password=x", "?token=x",
// "X-Auth-Token: x"), a URL with a password (scheme://user:pass@host), an HTTP
// authorization ("Authorization: ...", "Bearer x", "Basic QWxhZGRpbjpvcGVu"). A report status
// word before a colon is no header: "fixed: fail -> pass: TITLE" is kept whole.
bool secret_value(std::string_view value);
// Free text (a title, an evidence line quoting NAME=value) cut at its first credential, by the
// value rules above: "NCCL_SOCKET_IFNAME=--token <redacted>", "https://<redacted>". Everything
// from there on is hidden (the rest may repeat or quote the secret).
std::string redact_text(std::string_view text);
// redact_text over a finding's title, evidence (observed, expected) and table cells: what every
// renderer applies to every finding on the way out, whatever check made it.
void redact_finding(Finding& f);
// kRedacted when the name or the value is secret, else the value: the one rule for
// reports, evidence and snapshots.
std::string redact(std::string_view name, std::string_view value);
// The audited variables, secrets redacted; the last value of a repeated name wins
// (report.node.environment, core::describe_node).
StringMap audited_environment(const parsers::EnvList& env);
// NUL-separated KEY=VALUE text (a /proc/<pid>/environ) with each value passed through
// redact(): every name, the order and the separators are kept (perfgap snapshot).
std::string redact_environ(std::string_view text);

}  // namespace perfgap::report
