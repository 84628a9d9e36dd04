// The launcher command line an nccl-tests output quotes: processes, processes per node, nodes and
// the benchmark's -g/-t, as the nccl-tests parser reads it (parsers/launch_command.hpp).
#include <gtest/gtest.h>

#include <string>

#include "parsers/nccl_tests.hpp"

using namespace perfgap;

namespace {

const char* kLaunchTable =
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
    "     1048576        262144     float     sum      -1    100.0   10.00   18.75       0    100.0   10.00   18.75       0\n"
    "     2097152        524288     float     sum      -1    100.0   20.00   37.50       0    100.0   20.00   37.50       0\n";

std::optional<parsers::LaunchCommand> launch_of(const std::string& head) {
  auto run = parsers::parse_nccl_tests(head + kLaunchTable);
  EXPECT_TRUE(run) << head;
  if (!run) return std::nullopt;
  EXPECT_EQ(run->rows.size(), 2u) << head;
  return run->launch;
}

}  // namespace

// nccl-tests issue 78's first line: 256 processes, 16 per node, one GPU each.
TEST(ParsersLaunchCommand, MpirunProcessesAndProcessesPerNode) {
  auto c = launch_of(
      "mpirun -n 256 -npernode 16 -hostfile /job/hostfile  --mca btl ^openib -x NCCL_DEBUG=WARN ./mpi-project/nccl-tests/build/all_reduce_perf -b 8 -e "
      "512M -f 2 -g 1 -c 0\n\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->launcher, "mpirun");
  EXPECT_EQ(c->ranks(), 256);
  EXPECT_EQ(c->node_count(), 16);
  EXPECT_EQ(c->said, "-n 256 -npernode 16 -g 1");
  EXPECT_EQ(c->line, 1);
  // The benchmark's own -n (iterations) and -c (check) are not the launcher's; -g multiplies.
  c = launch_of("$ mpirun -np 4 --map-by ppr:2:node /opt/nccl-tests/build/all_gather_perf -n 50 -c 1 -g 8\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ranks(), 32);
  EXPECT_EQ(c->node_count(), 2);
}

// srun's -N is nodes (Open MPI's is processes per node); --opt=value and glued short options.
TEST(ParsersLaunchCommand, SrunNodesAndTasksPerNode) {
  auto c = launch_of("srun --nodes=4 --ntasks-per-node=8 --cpus-per-task=8 --label -- all_gather_perf -b 64K -e 4G -f 2 -g 1\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ranks(), 32);
  EXPECT_EQ(c->node_count(), 4);
  c = launch_of("user@login:~$ srun -N2 -n16 ./build/all_reduce_perf_mpi -b 8 -e 8G\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ranks(), 16);
  EXPECT_EQ(c->node_count(), 2);
  // A node range is no count.
  c = launch_of("srun --nodes=2-4 --ntasks=16 all_reduce_perf\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ranks(), 16);
  EXPECT_FALSE(c->node_count());
}

// The a3mega capture's quoted command, continued with '\' over mail-quoted lines; the rows after
// it are read as before.
TEST(ParsersLaunchCommand, ContinuationLinesAndQuotes) {
  auto c = launch_of(
      "## NCCL TEST RESULT\n\n"
      "> mpirun -v --mca btl self,tcp --hostfile ~/hostfile \\\n"
      ">    -np 16 \\\n"
      ">    -npernode 8 \\\n"
      ">    -x ${HOST_VARS} \\\n"
      ">    /opt/src/nccl-tests/build/all_reduce_perf -b 8 -e 8G -f 2 -g 1\n\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ranks(), 16);
  EXPECT_EQ(c->node_count(), 2);
  EXPECT_EQ(c->line, 3);
  // A command still open when the table starts ends there: no row is taken for an option.
  c = launch_of("root@pod-vf02:/home/nccl-tests# mpirun --allow-run-as-root -np 2 ./build/all_reduce_perf -b 1M \\\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ranks(), 2);
}

// No benchmark binary (a hostname check, a training script), a shell variable for the count, or
// two commands that disagree: nothing is said.
TEST(ParsersLaunchCommand, WhatIsNotThisRunsCommand) {
  EXPECT_FALSE(launch_of("srun -N 2 hostname\n"));
  EXPECT_FALSE(launch_of("mpirun -np 16 python train.py\n"));
  auto c = launch_of("mpirun -np $NP ./all_reduce_perf -g 1\n");
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->ranks());
  EXPECT_FALSE(launch_of("mpirun -np 8 ./all_reduce_perf\nmpirun -np 16 ./all_reduce_perf\n"));
  c = launch_of("mpirun -np 8 ./all_reduce_perf\nmpirun -np 8 ./all_reduce_perf\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ranks(), 8);
  // A word in a row or an NCCL INFO line is no command.
  EXPECT_FALSE(launch_of("node1:123:456 [0] NCCL INFO cmd mpirun -np 8 ./all_reduce_perf\n"));
}
