// perfgap-collbench's pure logic (header-only in src/collbench): nccl-tests' size rounding and
// bus factors, the exact data check against an independent reference of each collective, the
// table layout read back by perfgap's nccl-tests parser, and the command line.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/backend.hpp"
#include "collbench/collectives.hpp"
#include "collbench/nccl_tests_format.hpp"
#include "collbench/options.hpp"
#include "parsers/nccl_tests.hpp"

using namespace perfgap::collbench;

namespace {

// Each collective computed from its definition over every rank's input, without expected().
std::vector<std::vector<float>> reference(Collective c, const Shape& s, int ranks) {
  std::vector<std::vector<float>> in(ranks, std::vector<float>(s.send_count));
  for (int r = 0; r < ranks; ++r) fill_input(r, in[r]);
  std::vector<std::vector<float>> out(ranks, std::vector<float>(s.recv_count, 0.0f));
  const std::size_t pc = s.per_rank;
  for (int r = 0; r < ranks; ++r) {
    for (std::size_t i = 0; i < s.recv_count; ++i) {
      float v = 0;
      switch (c) {
        case Collective::all_reduce:
          for (int q = 0; q < ranks; ++q) v += in[q][i];
          break;
        case Collective::all_gather: v = in[i / pc][i % pc]; break;
        case Collective::reduce_scatter:
          for (int q = 0; q < ranks; ++q) v += in[q][r * pc + i];
          break;
        case Collective::alltoall: v = in[i / pc][r * pc + i % pc]; break;
      }
      out[r][i] = v;
    }
  }
  return out;
}

Options parse_ok(std::vector<std::string_view> args) {
  auto o = parse_options(args);
  EXPECT_TRUE(o) << (o ? "" : o.error());
  return o ? *o : Options{};
}

std::string parse_error(std::vector<std::string_view> args) {
  auto o = parse_options(args);
  EXPECT_FALSE(o);
  return o ? "" : o.error();
}

}  // namespace

TEST(CollbenchShape, RoundsAsNcclTests) {
  // From real nccl-tests tables (shared fixtures): all_gather at 32 ranks prints 65536 B as
  // 512 elements per rank; reduce_scatter at 8 ranks 128 B as 4; alltoall at 64 ranks.
  EXPECT_EQ(shape(Collective::all_gather, 65536, 32).per_rank, 512u);
  EXPECT_EQ(shape(Collective::all_gather, 65536, 32).bytes(), 65536u);
  EXPECT_EQ(shape(Collective::reduce_scatter, 128, 8).per_rank, 4u);
  EXPECT_EQ(shape(Collective::reduce_scatter, 16, 8).bytes(), 0u);  // the size-0 rows of nccl-tests #128
  EXPECT_EQ(shape(Collective::alltoall, 268435456, 64).per_rank, 1048576u);
  // Whole floats; whole floats per rank where the buffer is split.
  EXPECT_EQ(shape(Collective::all_reduce, 13, 3).bytes(), 12u);
  EXPECT_EQ(shape(Collective::all_reduce, 13, 3).per_rank, 3u);
  EXPECT_EQ(shape(Collective::all_gather, 13, 3).bytes(), 12u);
  EXPECT_EQ(shape(Collective::all_gather, 16, 3).bytes(), 12u);
  EXPECT_EQ(shape(Collective::all_gather, 16, 3).send_count, 1u);
  EXPECT_EQ(shape(Collective::reduce_scatter, 40, 3).send_count, 9u);
  EXPECT_EQ(shape(Collective::reduce_scatter, 40, 3).recv_count, 3u);
  EXPECT_EQ(shape(Collective::alltoall, 40, 3).recv_count, 9u);
}

TEST(CollbenchShape, BusFactorsAndBandwidth) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_gather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::reduce_scatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::alltoall, 1), 0);
  // dgxc 8x H100 all_reduce: 1 GiB in 4029.4 us = 266.48 GB/s algbw, 466.33 busbw.
  auto f = figures(Collective::all_reduce, shape(Collective::all_reduce, 1073741824, 8), 8, 4029.4e-6);
  EXPECT_NEAR(f.algbw, 266.48, 0.005);
  EXPECT_NEAR(f.busbw, 466.33, 0.01);
  EXPECT_DOUBLE_EQ(figures(Collective::all_gather, shape(Collective::all_gather, 0, 2), 2, 1e-6).algbw, 0);
}

TEST(CollbenchCheck, ExactAgainstAnIndependentReferenceAtManyRankCounts) {
  // 61 is the pattern's period: 62 and 130 exercise the whole-period shortcut of the sums.
  for (int ranks : {1, 2, 3, 8, 61, 62, 130})
    for (auto c : kCollectives) {
      Shape s = shape(c, 4 * 3 * static_cast<std::uint64_t>(ranks) + 4, ranks);
      auto out = reference(c, s, ranks);
      for (int r = 0; r < ranks; ++r) EXPECT_EQ(count_wrong(c, s, r, ranks, out[r]), 0u) << name(c) << " ranks " << ranks << " rank " << r;
    }
}

TEST(CollbenchCheck, CountsCorruptedMissingAndMisplacedElements) {
  const int ranks = 4;
  for (auto c : kCollectives) {
    Shape s = shape(c, 4 * 8 * ranks, ranks);
    auto out = reference(c, s, ranks);
    auto bad = out[1];
    bad[3] += 1;
    EXPECT_EQ(count_wrong(c, s, 1, ranks, bad), 1u) << name(c);
    bad[5] = std::numeric_limits<float>::quiet_NaN();  // never written
    EXPECT_EQ(count_wrong(c, s, 1, ranks, bad), 2u) << name(c);
    // Another rank's result is wrong here, except where every rank gets the same.
    if (c != Collective::all_reduce && c != Collective::all_gather) {
      EXPECT_GT(count_wrong(c, s, 1, ranks, out[2]), 0u) << name(c);
    }
    // A short result counts its missing elements.
    std::vector<float> shorter(out[1].begin(), out[1].end() - 2);
    EXPECT_EQ(count_wrong(c, s, 1, ranks, shorter), 2u) << name(c);
  }
  // Two blocks swapped (a misrouted all_gather) are caught.
  Shape s = shape(Collective::all_gather, 4 * 8 * ranks, ranks);
  auto out = reference(Collective::all_gather, s, ranks);
  std::swap_ranges(out[0].begin(), out[0].begin() + static_cast<long>(s.per_rank), out[0].begin() + static_cast<long>(s.per_rank));
  EXPECT_GT(count_wrong(Collective::all_gather, s, 0, ranks, out[0]), 0u);
}

TEST(CollbenchCheck, InPlaceLayouts) {
  Shape rs = shape(Collective::reduce_scatter, 4 * 12, 4);  // 3 per rank
  EXPECT_EQ(in_place_layout(Collective::reduce_scatter, Api::mpi, rs, 2).result_offset, 0u);
  EXPECT_EQ(in_place_layout(Collective::reduce_scatter, Api::nccl, rs, 2).result_offset, 6u);
  EXPECT_EQ(in_place_layout(Collective::reduce_scatter, Api::nccl, rs, 2).buffer_count, 12u);
  Shape ag = shape(Collective::all_gather, 4 * 12, 4);
  EXPECT_EQ(in_place_layout(Collective::all_gather, Api::mpi, ag, 3).input_offset, 9u);
  EXPECT_EQ(in_place_layout(Collective::all_gather, Api::nccl, ag, 3).input_offset, 9u);
}

TEST(CollbenchFormat, FiguresAlignAsNcclTests) {
  EXPECT_EQ(format_figure(13.67, 7), "  13.67");
  EXPECT_EQ(format_figure(0.0, 6), "  0.00");
  EXPECT_EQ(format_figure(274.38, 6), "274.38");
  EXPECT_EQ(format_figure(1503.1, 6), "1503.1");
  EXPECT_EQ(format_figure(619657.1, 6), "619657");
  EXPECT_EQ(format_figure(62648, 7), "62648.0");
  EXPECT_EQ(format_figure(1e12, 7), "1.0e+12");
}

TEST(CollbenchFormat, TableReadsBackThroughPerfgapsParser) {
  Options o;
  o.collective = Collective::reduce_scatter;
  o.min_bytes = 64;
  o.max_bytes = 1 << 20;
  o.step_factor = 16;
  TableWriter table(o.collective, 4);
  std::string text = "# Collective test starting: reduce_scatter_perf\n" + run_header_line(o, 1) + "#\n# Using devices\n" +
                     rank_line(0, 4242, "node1", 0, "cpus 0-3", "CPU") + table_header();
  std::vector<std::uint64_t> sizes;
  for (auto size : size_steps(o)) {
    Shape s = shape(o.collective, size, 4);
    sizes.push_back(s.bytes());
    text += table.row(s, Timing{2e-6 * static_cast<double>(sizes.size()), 0}, Timing{3e-6, std::nullopt});
  }
  text += table.footer();
  auto run = perfgap::parsers::parse_nccl_tests(text);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->collective, "reduce_scatter_perf");
  ASSERT_EQ(run->rows.size(), sizes.size());
  EXPECT_TRUE(run->damaged.empty());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto& row = run->rows[i];
    EXPECT_EQ(row.size, sizes[i]);
    EXPECT_EQ(row.count, sizes[i] / 16);
    EXPECT_EQ(row.redop, "sum");
    ASSERT_TRUE(row.out_of_place && row.in_place);
    EXPECT_EQ(row.out_of_place->wrong, 0.0);
    EXPECT_FALSE(row.in_place->wrong);  // N/A
    EXPECT_NEAR(row.out_of_place->busbw, row.out_of_place->algbw * 0.75, 0.01);
  }
  ASSERT_TRUE(run->avg_busbw);
  EXPECT_EQ(table.wrong(), 0u);
  EXPECT_NE(table.footer().find("Out of bounds values : 0 OK"), std::string::npos);
}

TEST(CollbenchFormat, WrongResultsFailTheFooter) {
  TableWriter table(Collective::all_reduce, 2);
  Shape s = shape(Collective::all_reduce, 1024, 2);
  table.row(s, Timing{1e-6, 3}, Timing{1e-6, 2});
  EXPECT_EQ(table.wrong(), 5u);
  EXPECT_NE(table.footer().find("Out of bounds values : 5 FAILED"), std::string::npos) << table.footer();
}

TEST(CollbenchOptions, NcclTestsFlagsAndDefaults) {
  auto o = parse_ok({"all_gather"});
  EXPECT_EQ(o.collective, Collective::all_gather);
  EXPECT_EQ(o.min_bytes, 32u << 20);
  EXPECT_EQ(size_steps(o).size(), 1u);
  o = parse_ok({"alltoall", "-b", "8", "-e128M", "--stepfactor=2", "-n", "7", "--warmup_iters", "0", "-c", "0", "-g", "2"});
  EXPECT_EQ(o.collective, Collective::alltoall);
  EXPECT_EQ(o.min_bytes, 8u);
  EXPECT_EQ(o.max_bytes, 128u << 20);
  EXPECT_EQ(o.step_factor, 2u);
  EXPECT_EQ(o.iters, 7);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.check, 0);
  EXPECT_EQ(o.gpus, 2);
  EXPECT_EQ(size_steps(o).size(), 25u);  // 8 B .. 128 MiB doubling
  EXPECT_EQ(size_steps(o).back(), 128u << 20);
  o = parse_ok({"all_reduce", "-b", "1M", "-e", "3M", "-i", "1M", "--backend", "mpi"});
  EXPECT_EQ(size_steps(o), (std::vector<std::uint64_t>{1u << 20, 2u << 20, 3u << 20}));
  EXPECT_EQ(o.backend, BackendChoice::mpi);
  EXPECT_EQ(parse_bytes("1G"), 1ull << 30);
  EXPECT_EQ(parse_bytes("4k"), 4096u);
  EXPECT_FALSE(parse_bytes("1.5M"));
  EXPECT_FALSE(parse_bytes("99999999999999999999"));
  EXPECT_FALSE(parse_bytes("18014398509481984G"));  // overflows
  EXPECT_TRUE(parse_ok({"all_reduce", "--help"}).help);
  // Sizes that reach the top of uint64 stop instead of wrapping around.
  o = parse_ok({"all_reduce", "-b", "8G", "-e", "18446744073709551615", "-f", "1024"});
  EXPECT_EQ(size_steps(o).size(), 4u);
}

TEST(CollbenchOptions, ErrorsNameTheProblem) {
  EXPECT_NE(parse_error({}).find("no collective"), std::string::npos);
  EXPECT_NE(parse_error({"bcast"}).find("unknown collective 'bcast'"), std::string::npos);
  EXPECT_NE(parse_error({"all_reduce", "-e"}).find("-e needs a value"), std::string::npos);
  EXPECT_NE(parse_error({"all_reduce", "-w", "x"}).find("bad value 'x' for -w"), std::string::npos);
  EXPECT_NE(parse_error({"all_reduce", "-o", "max"}).find("not supported"), std::string::npos);
  EXPECT_NE(parse_error({"all_reduce", "-b", "2K", "-e", "1K"}).find("larger than -e"), std::string::npos);
  EXPECT_NE(parse_error({"all_reduce", "-i", "0"}).find("bad value"), std::string::npos);
  EXPECT_NE(parse_error({"all_reduce", "-f", "2", "-i", "4"}).find("not both"), std::string::npos);
  EXPECT_NE(parse_error({"all_reduce", "-b", "1", "-e", "1M", "-i", "1"}).find("sizes"), std::string::npos);
  EXPECT_NE(parse_error({"all_reduce", "--backend=mpi", "-g", "1"}).find("NCCL backend"), std::string::npos);
}

TEST(CollbenchSettings, PicksTunablesAndRedactsSecrets) {
  std::vector<std::string> env = {"NCCL_IB_QPS_PER_CONNECTION=4", "PATH=/usr/bin", "OMPI_MCA_coll_tuned_allgather_algorithm=2",
                                  "OMPI_MCA_orte_hnp_uri=x", "UCX_TLS=rc", "NCCL_IB_PKEY=0x8001", "NCCL_API_KEY=hunter2",
                                  "NCCL_TOKEN_FILE=/x", "BROKEN"};
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  EXPECT_EQ(tunable_settings(envp.data()),
            "NCCL_API_KEY=<redacted> NCCL_IB_PKEY=0x8001 NCCL_IB_QPS_PER_CONNECTION=4 NCCL_TOKEN_FILE=<redacted> "
            "OMPI_MCA_coll_tuned_allgather_algorithm=2 UCX_TLS=rc");
  // The report's rule, values included: a credential in a value, a name ending in _PAT.
  std::vector<std::string> more = {"NCCL_NET_ARGS=--password=hunter2", "UCX_SOCKADDR_URL=tcp://u:pw@h", "NCCL_GIT_PAT=x", "NCCL_DEBUG=INFO"};
  std::vector<char*> morep;
  for (auto& e : more) morep.push_back(e.data());
  morep.push_back(nullptr);
  EXPECT_EQ(tunable_settings(morep.data()), "NCCL_DEBUG=INFO NCCL_GIT_PAT=<redacted> NCCL_NET_ARGS=<redacted> UCX_SOCKADDR_URL=<redacted>");
}
