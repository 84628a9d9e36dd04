// The small text parsers the facts read node files with (moved out of src/facts/), in one
// target so CI's fuzz time stays flat: the first byte picks the parser, the rest is its text.
// Each never crashes and keeps the invariant its callers rely on.
#include <cmath>
#include <string>

#include "fuzz_common.hpp"
#include "parsers/host_files.hpp"
#include "parsers/nccl_topo.hpp"
#include "parsers/procfs.hpp"
#include "parsers/sysfs_values.hpp"
#include "sys/text.hpp"

namespace {

bool trimmed(std::string_view s) { return perfgap::sys::trim_ws(s) == s; }

}  // namespace

PERFGAP_FUZZ_TARGET(facts_text) {
  namespace p = perfgap::parsers;
  if (size == 0) return 0;
  auto text = perfgap::fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 9) {
    case 0: {  // /proc/driver/nvidia/version
      auto v = p::parse_nvidia_driver_version(text);
      FUZZ_CHECK(v.first_line.find('\n') == std::string::npos && trimmed(v.first_line));
      FUZZ_CHECK(v.open_module == (v.first_line.find("Open Kernel Module") != std::string::npos));
      if (v.version) FUZZ_CHECK(v.version->size() >= 5 && v.version->find_first_not_of("0123456789.") == std::string::npos);
      break;
    }
    case 1: {  // /proc/self/smaps
      auto kb = p::parse_smaps_page_size_kb(text);
      if (kb) FUZZ_CHECK(*kb > 0);
      else FUZZ_CHECK(!kb.error().empty());
      break;
    }
    case 2:  // /proc/bus/pci/devices
      for (const auto& [bus, vendor] : p::parse_proc_bus_pci_vendors(text)) FUZZ_CHECK(!bus.empty() && vendor <= 0xffffu);
      break;
    case 3: {  // /proc/sysinfo
      auto s = p::parse_sysinfo(text);
      FUZZ_CHECK(s.control_program.find('\n') == std::string::npos && trimmed(s.control_program));
      FUZZ_CHECK(s.lpar_name.find('\n') == std::string::npos && trimmed(s.lpar_name));
      break;
    }
    case 4:  // /etc/passwd
      for (auto uid : {"0", "1000", ""})
        if (auto home = p::passwd_home(text, uid)) FUZZ_CHECK(home->find_first_of(":\n") == std::string::npos);
      break;
    case 5: {  // /run/.containerenv, enroot and plugstack lines
      FUZZ_CHECK(p::containerenv_engine(text).find('\n') == std::string::npos);
      int last = 0;
      for (const auto& [n, line] : p::config_lines(text)) {
        FUZZ_CHECK(n > last && !line.empty() && line[0] != '#' && trimmed(line) && line.find('\n') == std::string::npos);
        last = n;
        auto name = p::enroot_environ_name(line);
        FUZZ_CHECK(name.find_first_of("= \t#") == std::string::npos);
      }
      break;
    }
    case 6:  // RDMA port rate and state
      if (auto r = p::parse_ib_rate(text)) FUZZ_CHECK(!(*r < 0));
      FUZZ_CHECK(trimmed(p::strip_state_number(text)));
      break;
    case 7:  // a topology file's link_speed, a device's max_link_speed
      if (auto s = p::parse_topo_link_speed(text)) FUZZ_CHECK(!(*s < 0));
      break;
    default:  // PCIe link attributes
      if (auto s = p::parse_link_speed(text)) FUZZ_CHECK(std::isfinite(*s) && *s > 0 && *s <= 1000);
      if (auto w = p::parse_link_width(text)) FUZZ_CHECK(*w >= 0 && *w <= 32);
      break;
  }
  return 0;
}
