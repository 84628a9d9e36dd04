// Which perfgap-gpu perfgap runs (facts::choose_gpu_helpers) and the memory-backed copy it
// starts (sys::memory_executable): the override alone when given, else the copy embedded in
// perfgap first and the installed one as the fallback, each passed-over copy saying why.
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "facts/gpu.hpp"
#include "sys/process.hpp"
#include "sys/executable.hpp"

namespace {

using perfgap::facts::choose_gpu_helpers;

TEST(FactsGpuHelperChoice, OverrideAloneWhenSet) {
  auto c = choose_gpu_helpers("/opt/x/perfgap-gpu", "", "/proc/self/fd/7", "", "/usr/bin/perfgap-gpu", "");
  ASSERT_EQ(c.candidates.size(), 1u);
  EXPECT_EQ(c.candidates[0].path, "/opt/x/perfgap-gpu");
  EXPECT_EQ(c.candidates[0].how, "PERFGAP_GPU_HELPER=/opt/x/perfgap-gpu");
  auto bad = choose_gpu_helpers("/nonexistent/perfgap-gpu", "not present", "/proc/self/fd/7", "", "/usr/bin/perfgap-gpu", "");
  EXPECT_TRUE(bad.candidates.empty());
  EXPECT_EQ(bad.why, "PERFGAP_GPU_HELPER=/nonexistent/perfgap-gpu: not present");
}

TEST(FactsGpuHelperChoice, EmbeddedFirstThenBeside) {
  auto c = choose_gpu_helpers("", "", "/proc/self/fd/7", "", "/usr/bin/perfgap-gpu", "");
  ASSERT_EQ(c.candidates.size(), 2u);
  EXPECT_EQ(c.candidates[0].path, "/proc/self/fd/7");
  EXPECT_EQ(c.candidates[0].how, "embedded in perfgap, run from memory");
  EXPECT_EQ(c.candidates[1].path, "/usr/bin/perfgap-gpu");
  EXPECT_TRUE(c.why.empty());
  // Only the embedded copy: no complaint about the absent file.
  auto alone = choose_gpu_helpers("", "", "/proc/self/fd/7", "", "/usr/bin/perfgap-gpu", "not present");
  ASSERT_EQ(alone.candidates.size(), 1u);
  EXPECT_TRUE(alone.why.empty()) << alone.why;
}

TEST(FactsGpuHelperChoice, MemoryRefusedFallsBackToTheInstalledCopySayingWhy) {
  auto c = choose_gpu_helpers("", "", "", "memfd_create(MFD_EXEC) refused", "/usr/bin/perfgap-gpu", "");
  ASSERT_EQ(c.candidates.size(), 1u);
  EXPECT_EQ(c.candidates[0].how, "beside perfgap, /usr/bin/perfgap-gpu");
  EXPECT_NE(c.why.find("the copy embedded in perfgap cannot run from memory: memfd_create(MFD_EXEC) refused"), std::string::npos) << c.why;
  auto none = choose_gpu_helpers("", "", "", "memfd_create(MFD_EXEC) refused", "/usr/bin/perfgap-gpu", "not present");
  EXPECT_TRUE(none.candidates.empty());
  EXPECT_NE(none.why.find("cannot run from memory"), std::string::npos) << none.why;
  EXPECT_NE(none.why.find("not installed next to perfgap (/usr/bin/perfgap-gpu: not present)"), std::string::npos) << none.why;
  // A build without the embedded copy says so when nothing is installed either.
  auto plain = choose_gpu_helpers("", "", "", "", "/usr/bin/perfgap-gpu", "not present");
  EXPECT_NE(plain.why.find("and not embedded in this build"), std::string::npos) << plain.why;
}

TEST(SysMemoryExecutable, RunsASealedCopyOfAProgram) {
  std::ifstream in("/bin/true", std::ios::binary);
  ASSERT_TRUE(in) << "no /bin/true";
  const std::vector<unsigned char> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto m = perfgap::sys::memory_executable("perfgap-test", image.data(), image.size());
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->path.rfind("/proc/self/fd/", 0), 0u) << m->path;
  auto r = perfgap::sys::run_command({m->path}, {});
  EXPECT_TRUE(r.started) << r.error;
  EXPECT_EQ(r.status, 0);
  // Sealed: no process can change the image under the helper.
  struct stat st {};
  ASSERT_EQ(::fstat(m->fd, &st), 0);
  EXPECT_EQ(static_cast<std::size_t>(st.st_size), image.size());
  EXPECT_FALSE(perfgap::sys::memory_executable("x", nullptr, 0));
}

}  // namespace
