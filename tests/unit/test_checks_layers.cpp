// The checks' folders and report layers (checks/all.hpp, checks/util.hpp): each layer constant
// is the contract's name for it (report::kLayers), each folder's register function registers
// the checks of its own layer only, and the built-in registry holds every one of them once.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "checks/all.hpp"
#include "checks/util.hpp"

using namespace perfgap;

namespace {

struct Folder {
  void (*register_fn)(core::Registry&);
  std::string_view layer;
  const char* name;
};

const Folder kFolders[] = {
    {checks::register_virtualization, checks::layer::virtualization, "virtualization"},
    {checks::register_cpu_power, checks::layer::cpu_power, "cpu_power"},
    {checks::register_placement, checks::layer::placement, "placement"},
    {checks::register_runtime_topology, checks::layer::runtime_topology, "runtime_topology"},
    {checks::register_network, checks::layer::network, "network"},
    {checks::register_gpu, checks::layer::gpu, "gpu"},
    {checks::register_pcie, checks::layer::pcie, "pcie"},
};

}  // namespace

TEST(CheckLayers, ConstantsSpellTheContractsLayers) {
  EXPECT_EQ(checks::layer::virtualization, "virtualization");
  EXPECT_EQ(checks::layer::cpu_power, "cpu-power");
  EXPECT_EQ(checks::layer::placement, "placement");
  EXPECT_EQ(checks::layer::runtime_topology, "runtime-topology");
  EXPECT_EQ(checks::layer::network, "network");
  EXPECT_EQ(checks::layer::gpu, "gpu");
  EXPECT_EQ(checks::layer::pcie, "pcie");
}

TEST(CheckLayers, EachFolderRegistersItsOwnLayerOnly) {
  std::set<std::string> seen;
  for (const auto& folder : kFolders) {
    core::Registry r;
    folder.register_fn(r);
    EXPECT_FALSE(r.all().empty()) << folder.name;
    for (const auto& c : r.all()) {
      EXPECT_EQ(c.layer, folder.layer) << "checks/" << folder.name << "/ registers " << c.id;
      EXPECT_TRUE(seen.insert(std::string(c.id)).second) << c.id << " registered by two folders";
    }
  }
  // The built-in registry is these checks, each once, in report order (checks/all.cpp).
  std::set<std::string> builtin;
  for (const auto& c : core::builtin_registry().all()) builtin.insert(std::string(c.id));
  EXPECT_EQ(builtin, seen);
  EXPECT_EQ(core::builtin_registry().all().size(), seen.size());
}
