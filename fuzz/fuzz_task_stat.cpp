// parse_task_stat: never crashes; comm is exactly the text between the first '(' and the
// last ')', and the state is a single non-blank character.
#include "fuzz_common.hpp"
#include "parsers/procfs.hpp"

PERFGAP_FUZZ_TARGET(task_stat) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto r = perfgap::parsers::parse_task_stat(text);
  if (!r) {
    FUZZ_CHECK(!r.error().message.empty());
    return 0;
  }
  auto open = text.find('(');
  auto close = text.rfind(')');
  FUZZ_CHECK(open != std::string_view::npos && close != std::string_view::npos && open < close);
  FUZZ_CHECK(r->comm == text.substr(open + 1, close - open - 1));
  FUZZ_CHECK(r->state != ' ' && r->state != '\t' && r->state != '\n');
  return 0;
}
