// Environ redaction (report::redact_environ, what snapshot writes) on arbitrary bytes: the same entries in the same order, every
// name kept, the values of secret names and of values that carry a credential (report::
// secret_value: --password=x, user:pass@ URLs, Bearer ...) replaced by <redacted>, everything
// else byte for byte, and redacting twice changes nothing more.
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "report/redact.hpp"
#include "snapshot/capture.hpp"

namespace {

std::vector<std::string_view> entries(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nul = text.find('\0', pos);
    if (nul == std::string_view::npos) nul = text.size();
    out.push_back(text.substr(pos, nul - pos));
    pos = nul + 1;
  }
  return out;
}

}  // namespace

PERFGAP_FUZZ_TARGET(snapshot_redact) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto out = perfgap::report::redact_environ(text);
  auto in_entries = entries(text), out_entries = entries(out);
  FUZZ_CHECK(in_entries.size() == out_entries.size());
  FUZZ_CHECK((!text.empty() && text.back() == '\0') == (!out.empty() && out.back() == '\0'));
  for (std::size_t i = 0; i < in_entries.size(); ++i) {
    auto a = in_entries[i], b = out_entries[i];
    auto eq = a.find('=');
    const bool secret = eq != std::string_view::npos &&
                        (perfgap::report::secret_name(a.substr(0, eq)) || perfgap::report::secret_value(a.substr(eq + 1)));
    if (!secret) {
      FUZZ_CHECK(a == b);
    } else {
      FUZZ_CHECK(b.substr(0, eq + 1) == a.substr(0, eq + 1));
      FUZZ_CHECK(b.substr(eq + 1) == perfgap::report::kRedacted);
    }
  }
  FUZZ_CHECK(perfgap::report::redact_environ(out) == out);
  return 0;
}
