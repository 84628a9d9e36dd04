// split_command_words (fanout --container-wrap): never throws; an error has a reason; the
// words are non-empty unless quoted empty, and quoting each word back the way a shell reads
// it (sys::quote_command) splits to the same words.
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "slurm/fanout.hpp"
#include "sys/spawn.hpp"

PERFGAP_FUZZ_TARGET(command_words) {
  if (size > 4096) return 0;
  auto r = perfgap::slurm::split_command_words(perfgap::fuzz::as_text(data, size));
  if (!r) {
    FUZZ_CHECK(!r.error().empty());
    return 0;
  }
  FUZZ_CHECK(!r->empty());
  auto back = perfgap::slurm::split_command_words(perfgap::sys::quote_command(*r));
  FUZZ_CHECK(back.has_value() && *back == *r);
  return 0;
}
