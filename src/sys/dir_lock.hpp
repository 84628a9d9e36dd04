// An exclusive lock on a state directory (flock on DIR/NAME): two perfgap runs that keep state
// in one directory (health's drain state, check --history) never interleave their writes.
#pragma once

#include <chrono>
#include <string>

namespace perfgap::sys {

class DirLock {
 public:
  // Creates DIR when missing; tries until `wait` has passed (zero: one try).
  DirLock(const std::string& dir, const std::string& name, std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();
  bool held() const { return held_; }
  bool busy() const { return busy_; }  // not held because another run holds it
  // Why it is not held when not busy: the lock file could not be opened or locked.
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  bool held_ = false, busy_ = false;
  std::string error_;
};

}  // namespace perfgap::sys
