#include "sys/bounded.hpp"

#include <atomic>

namespace perfgap::sys {
namespace {
std::atomic<int> abandoned{0};
}
int abandoned_workers() { return abandoned.load(); }
void note_abandoned_worker() { abandoned.fetch_add(1); }
}  // namespace perfgap::sys
