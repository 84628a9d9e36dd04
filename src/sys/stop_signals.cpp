#include "sys/stop_signals.hpp"

#include <iterator>

namespace perfgap::sys {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal_flag(int sig) {
  if (g_stop_signal == 0) g_stop_signal = sig;
}

}  // namespace

int StopSignals::depth_ = 0;

StopSignals::StopSignals() {
  if (depth_++ == 0) g_stop_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal_flag;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &sa, &saved_[i]);
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &saved_[i], nullptr);
  --depth_;
}

volatile std::sig_atomic_t* StopSignals::flag() { return &g_stop_signal; }

void StopSignals::raise_pending() {
  if (int sig = g_stop_signal) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
}

}  // namespace perfgap::sys
