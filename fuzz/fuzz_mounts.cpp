// parse_mounts / parse_mountinfo / mount_option / parse_tmpfs_size: never crash; every entry has four
// non-empty fields; a size is never computed with overflow (parse_tmpfs_size refuses it).
#include <string>

#include "fuzz_common.hpp"
#include "parsers/host_files.hpp"
#include "parsers/mounts.hpp"

PERFGAP_FUZZ_TARGET(mounts) {
  auto text = perfgap::fuzz::as_text(data, size);
  for (const auto& m : perfgap::parsers::parse_mounts(text)) {
    FUZZ_CHECK(!m.fstype.empty() && !m.options.empty());
    if (auto s = perfgap::parsers::mount_option(m.options, "size")) {
      (void)perfgap::parsers::parse_tmpfs_size(*s, std::uint64_t{1} << 40);
      (void)perfgap::parsers::parse_tmpfs_size(*s, std::nullopt);
    }
    (void)perfgap::parsers::enroot_mount_carries(m.source + " " + m.target, "/etc/nccl/topo.xml");
  }
  for (const auto& m : perfgap::parsers::parse_mountinfo(text)) FUZZ_CHECK(!m.fstype.empty() && !m.source.empty() && !m.target.empty());
  auto pct = perfgap::parsers::parse_tmpfs_size(text, UINT64_MAX);
  if (pct && !text.empty() && text.back() == '%') FUZZ_CHECK(true);
  (void)perfgap::parsers::enroot_environ_name(text);
  return 0;
}
