// RDMA devices (/sys/class/infiniband) and their ports, shared by the network, runtime and
// NCCL checks; the network interfaces (/sys/class/net) NCCL's settings name.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "facts/facts.hpp"

namespace perfgap::facts {

struct IbPort {
  int port = 0;
  std::string dir;         // /sys/class/infiniband/<dev>/ports/<n>
  std::string state;       // "ACTIVE" (the text after "4: ")
  std::string phys_state;  // "LinkUp"
  std::string link_layer;  // "InfiniBand" or "Ethernet"
  std::string rate_text;   // "400 Gb/sec (4X NDR)"; parsers::parse_ib_rate reads it
  std::optional<double> rate_gbps;
};

struct IbDevice {
  std::string name;                   // mlx5_0
  std::string bdf;                    // PCI function behind it, "" when not PCI
  std::vector<IbPort> ports;
  std::optional<std::string> uverbs;  // "uverbs0" from /sys/class/infiniband_verbs/*/ibdev
  std::string hca_type, board_id;     // "MT4123", "MT_0000000223" where the driver has them
  std::string fw_ver;                 // "28.39.1002" where the driver has it
  std::string driver_name() const;    // the name without its instance number: mlx5_0 -> mlx5, i40iw0 -> i40iw
};

// Every RDMA device; an empty list when /sys/class/infiniband does not exist (no RDMA
// devices on this node), missing() when it exists but cannot be read.
const Avail<std::vector<IbDevice>>& infiniband(Facts& f);

// Where the RDMA device list is empty but this may be a gap in a tree from elsewhere
// (!absence_is_real()) and PCI shows a NIC with RDMA (NVIDIA/Mellanox 0x15b3 network class,
// any InfiniBand-class device, Amazon EFA): the skip title that says so, naming the NIC, so
// no check says "no RDMA devices" of a node that has them; the same where PCI is not readable
// either. "" otherwise.
std::string rdma_not_captured(Facts& f);

// The network interfaces /sys/class/net lists, by name (what NCCL_SOCKET_IFNAME and a
// topology file's <net name> are matched against); missing() with why when it cannot be listed.
const Avail<std::vector<std::string>>& net_interfaces(Facts& f);

}  // namespace perfgap::facts
