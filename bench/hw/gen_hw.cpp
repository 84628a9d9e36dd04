// Writes the inputs of bench/hw/run.sh: a node tree with N ConnectX ports (mlx5_0..N-1, each
// ports/1/counters and hw_counters as the kernel lays them out, mlx5's full hw_counters list),
// /proc/uptime and /proc/stat, and a kernel log tail of SIZE bytes in /dev/kmsg's record format
// (.perfgap/dmesg.txt, as a snapshot keeps it): driver start-up and routine lines with a few
// hardware events (Xid, AER, link flaps, thermal) among them.
//   perfgap-bench-gen-hw OUTDIR [--nics 8] [--log-bytes 1048576]
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

void mkdirs(const std::string& path) {
  for (std::size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0755);
}

void put(const std::string& path, const std::string& text) {
  mkdirs(path.substr(0, path.rfind('/')));
  std::ofstream(path) << text;
}

const char* const kCounters[] = {"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors", "port_rcv_remote_physical_errors",
                                 "port_rcv_switch_relay_errors", "port_xmit_discards", "port_xmit_constraint_errors", "port_rcv_constraint_errors",
                                 "local_link_integrity_errors", "excessive_buffer_overrun_errors", "VL15_dropped", "port_xmit_data",
                                 "port_rcv_data", "port_xmit_packets", "port_rcv_packets", "unicast_xmit_packets", "unicast_rcv_packets",
                                 "multicast_xmit_packets", "multicast_rcv_packets", "port_xmit_wait"};
const char* const kHwCounters[] = {"duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err", "np_cnp_sent",
                                   "np_ecn_marked_roce_packets", "out_of_buffer", "out_of_sequence", "packet_seq_err", "req_cqe_error",
                                   "req_cqe_flush_error", "req_remote_access_errors", "req_remote_invalid_request", "resp_cqe_error",
                                   "resp_cqe_flush_error", "resp_local_length_error", "resp_remote_access_errors", "rnr_nak_retry_err",
                                   "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps",
                                   "roce_slow_restart_trans", "rp_cnp_handled", "rp_cnp_ignored", "rx_atomic_requests", "rx_icrc_encapsulated",
                                   "rx_read_requests", "rx_write_requests"};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUTDIR [--nics 8] [--log-bytes 1048576]\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  int nics = 8;
  long log_bytes = 1 << 20;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--nics") nics = std::atoi(argv[i + 1]);
    else if (a == "--log-bytes") log_bytes = std::atol(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  put(out + "/proc/uptime", "86400.00 680000.00\n");
  put(out + "/proc/stat", "cpu  1 2 3 4 5 6 7 8 0 0\nbtime 1764400000\n");
  for (int n = 0; n < nics; ++n) {
    const std::string bdf = "0000:" + std::string(n < 5 ? "1" : "9") + std::to_string(n) + ":00.0";
    const std::string dev = "/sys/devices/pci0000:00/" + bdf + "/infiniband/mlx5_" + std::to_string(n);
    mkdirs(out + "/sys/class/infiniband");
    ::symlink(("../../devices/pci0000:00/" + bdf + "/infiniband/mlx5_" + std::to_string(n)).c_str(),
              (out + "/sys/class/infiniband/mlx5_" + std::to_string(n)).c_str());
    const std::string port = out + dev + "/ports/1";
    put(port + "/state", "4: ACTIVE\n");
    put(port + "/rate", "400 Gb/sec (4X NDR)\n");
    unsigned long v = 1000003UL * static_cast<unsigned long>(n + 1);
    for (const char* c : kCounters) put(port + "/counters/" + c, std::to_string(v++ % 97) + "\n");
    for (const char* c : kHwCounters) put(port + "/hw_counters/" + c, std::to_string(v++ % 89) + "\n");
  }
  // The log: routine lines, every 200th a hardware event.
  const char* const routine[] = {
      "mlx5_core 0000:10:00.0: E-Switch: Total vports 2, per vport: max uc(128) max mc(2048)",
      "nvidia-uvm: Loaded the UVM driver, major device number 508.",
      "audit: type=1400 audit(1764400123.456:789): apparmor=\"STATUS\" operation=\"profile_replace\" name=\"/usr/bin/man\" pid=1234 comm=\"apparmor_parser\"",
      "IPv6: ADDRCONF(NETDEV_CHANGE): ibp16s0: link becomes ready",
      "EXT4-fs (nvme0n1p2): mounted filesystem 8e1f9c2a-4a4f-4f58-9d1e-3b7b5c9a8f21 r/w with ordered data mode. Quota mode: none.",
      "systemd[1]: Started session-42.scope - Session 42 of User slurm.",
  };
  const char* const events[] = {
      "NVRM: Xid (PCI:0000:18:00): 13, pid=3101, name=python3, Graphics SM Warp Exception on (GPC 1, TPC 0, SM 1): Illegal Instruction Encoding",
      "nvidia 0000:18:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
      "mlx5_core 0000:12:00.0 ibp18s0: Link down",
      "mlx5_core 0000:12:00.0 ibp18s0: Link up",
      "CPU12: Core temperature above threshold, cpu clock throttled (total events = 41)",
  };
  std::string log;
  long seq = 0;
  unsigned long long usec = 5000000;
  while (static_cast<long>(log.size()) < log_bytes) {
    const char* msg = seq % 200 == 199 ? events[(seq / 200) % 5] : routine[seq % 6];
    log += "6," + std::to_string(seq) + "," + std::to_string(usec) + ",-;" + msg + "\n";
    if (seq % 3 == 0) log += " SUBSYSTEM=pci\n DEVICE=+pci:0000:10:00.0\n";
    ++seq;
    usec += 12345;
  }
  log.resize(static_cast<std::size_t>(log_bytes));
  log.erase(log.rfind('\n') + 1);
  put(out + "/.perfgap/dmesg.txt", log);
  std::printf("%s: %d NICs, kernel log %zu bytes, %ld records\n", out.c_str(), nics, log.size(), seq);
  return 0;
}
