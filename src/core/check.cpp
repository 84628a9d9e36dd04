#include "core/check.hpp"

#include <stdexcept>

namespace perfgap::core {

double Thresholds::get(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::out_of_range("undeclared threshold '" + std::string(name) + "'");
  return it->second;
}

report::Finding finding(std::string_view id, std::string_view layer, report::Status status,
                        std::string title) {
  report::Finding f;
  f.id = std::string(id);
  f.layer = std::string(layer);
  f.status = status;
  f.title = std::move(title);
  return f;
}

void Registry::add(CheckInfo info) {
  if (find(info.id)) throw std::logic_error("check registered twice: " + std::string(info.id));
  checks_.push_back(std::move(info));
}

const CheckInfo* Registry::find(std::string_view id) const {
  for (const auto& c : checks_)
    if (c.id == id) return &c;
  return nullptr;
}

}  // namespace perfgap::core
