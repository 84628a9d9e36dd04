// `perfgap analyze nccl-tests` text output carries the decisive numbers as a table (size,
// busbw, reference, ratio); the JSON report does not (they are metrics there).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "files.hpp"
#include "run.hpp"

using perfgap::fixture::log_fixture;
using perfgap::fixture::run_binary;

TEST(AnalyzeTable, NcclTestsReferenceTableInText) {
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", log_fixture("nccl-tests/slow-allreduce.txt"), "--reference",
                                       log_fixture("nccl-tests/ref-allreduce.txt")});
  EXPECT_EQ(r.status, 1) << r.err << r.out;
  EXPECT_NE(r.out.find("        size    busbw GB/s  reference GB/s  ratio\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("        1 MiB        65.77           67.04  98.1%\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("        64 MiB      249.82          361.67  69.1%\n"), std::string::npos) << r.out;

  auto j = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", log_fixture("nccl-tests/slow-allreduce.txt"), "--reference",
                                       log_fixture("nccl-tests/ref-allreduce.txt"), "--format", "json"});
  EXPECT_EQ(j.status, 1);
  EXPECT_EQ(j.out.find("reference GB/s"), std::string::npos);
  auto doc = nlohmann::json::parse(j.out);
  for (const auto& f : doc["findings"]) EXPECT_FALSE(f.contains("table"));
}

TEST(AnalyzeTable, NcclTestsPlainTableOnlyWithVerboseWhenPassing) {
  auto quiet = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", log_fixture("nccl-tests/ref-allreduce.txt")});
  EXPECT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_EQ(quiet.out.find("algbw GB/s"), std::string::npos) << quiet.out;
  auto verbose = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", log_fixture("nccl-tests/ref-allreduce.txt"), "-v"});
  EXPECT_EQ(verbose.status, 0) << verbose.err;
  EXPECT_NE(verbose.out.find("size    busbw GB/s  algbw GB/s  time us\n"), std::string::npos) << verbose.out;
  EXPECT_NE(verbose.out.find("64 MiB      361.67      206.67    324.7\n"), std::string::npos) << verbose.out;
}
