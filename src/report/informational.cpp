#include "report/informational.hpp"

#include <algorithm>
#include <iterator>

namespace perfgap::report {

bool informational(std::string_view id) {
  return std::find(std::begin(kInformationalIds), std::end(kInformationalIds), id) != std::end(kInformationalIds);
}

bool decides(std::string_view id, Status status) {
  if (status == Status::skip) return false;
  return status != Status::pass || !informational(id);
}

}  // namespace perfgap::report
