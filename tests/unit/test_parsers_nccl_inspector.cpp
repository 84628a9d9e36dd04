// The NCCL Inspector plugin's output (parsers/nccl_inspector.hpp): JSON lines, pretty-printed
// JSON and Prometheus text; every field, the
// aggregation per (communicator, rank, collective, size), damaged lines with their numbers,
// unknown format versions and hostile lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "parsers/nccl_inspector.hpp"

using namespace perfgap::parsers;

namespace {

std::string insp_rec(int rank, std::uint64_t us, double busbw, const std::string& version = "v4.0", const std::string& extra_perf = "") {
  return "{\"header\":{\"id\":\"0xabc123\",\"comm_name\":\"DP Group 0\",\"rank\":" + std::to_string(rank) +
         ",\"n_ranks\":4,\"nnodes\":2},\"metadata\":{\"inspector_output_format_version\":\"" + version +
         "\",\"git_rev\":\"9019a1912\",\"rec_mechanism\":\"nccl_profiler_interface\",\"dump_timestamp_us\":1752867229276385,"
         "\"hostname\":\"node-a\",\"pid\":438776},\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":1231,\"coll_msg_size_bytes\":"
         "2147483648,\"coll_exec_time_us\":" + std::to_string(us) + ",\"coll_timing_source\":\"kernel_gpu\",\"coll_algobw_gbs\":200.5,"
         "\"coll_busbw_gbs\":" + std::to_string(busbw) + extra_perf + "}}\n";
}

}  // namespace

TEST(ParsersNcclInspector, ReadsEveryFieldAndAggregatesRecordsOfOneGroup) {
  auto r = parse_nccl_inspector(insp_rec(1, 41000, 300) + insp_rec(1, 43000, 280));
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->version, "v4.0");
  EXPECT_EQ(r->coll_records, 2u);
  ASSERT_EQ(r->colls.size(), 1u);
  const auto& c = r->colls[0];
  EXPECT_EQ(c.comm_id, "0xabc123");
  EXPECT_EQ(c.comm_name, "DP Group 0");
  EXPECT_EQ(c.rank, 1);
  EXPECT_EQ(c.n_ranks, 4);
  EXPECT_EQ(c.nnodes, 2u);
  EXPECT_EQ(c.host, "node-a");
  EXPECT_EQ(c.pid, 438776u);
  EXPECT_EQ(c.coll, "AllReduce");
  EXPECT_EQ(c.msg_bytes, 2147483648u);
  EXPECT_EQ(c.count, 2u);
  EXPECT_DOUBLE_EQ(c.mean_exec_us(), 42000);
  EXPECT_DOUBLE_EQ(c.mean_busbw_gbs(), 290);
  EXPECT_DOUBLE_EQ(c.min_busbw_gbs, 280);
  EXPECT_DOUBLE_EQ(c.max_busbw_gbs, 300);
  EXPECT_EQ(c.first_line, 1);
  EXPECT_EQ(c.cpu_timed, 0u);
  EXPECT_TRUE(r->damaged.empty());
}

TEST(ParsersNcclInspector, VerboseRecordsP2pAndOlderV4WritersAreRead) {
  // Verbose: event_trace_sn/_ts nested objects; the README's older v4 layout has neither
  // comm_name nor coll_timing_source; "nan" bandwidths for an operation of no time.
  std::string verbose = insp_rec(0, 100, 10, "v4.0",
                                 ",\"event_trace_sn\":{\"coll_start_sn\":1,\"coll_stop_sn\":2,\"kernel_events\":[{\"channel_id\":0,"
                                 "\"kernel_start_sn\":3,\"kernel_stop_sn\":48,\"kernel_record_sn\":47}]}");
  std::string old =
      "{\"header\":{\"id\":\"0x7f8c496ae9f661\",\"rank\":2,\"n_ranks\":8,\"nnodes\":1},\"metadata\":{\"inspector_output_format_version\":\"v4.0\","
      "\"git_rev\":\"\",\"rec_mechanism\":\"profiler_plugin\",\"dump_timestamp_us\":1748030377748202,\"hostname\":\"h\",\"pid\":1639453},"
      "\"coll_perf\":{\"coll\":\"AllGather\",\"coll_sn\":1407,\"coll_msg_size_bytes\":17179869184,\"coll_exec_time_us\":0,"
      "\"coll_algobw_gbs\":\"nan\",\"coll_busbw_gbs\":\"nan\"}}\n";
  std::string p2p =
      "{\"header\":{\"id\":\"0x1\",\"comm_name\":\"PP\",\"rank\":0,\"n_ranks\":2,\"nnodes\":1},\"metadata\":{\"inspector_output_format_version\":"
      "\"v4.1\",\"git_rev\":\"\",\"rec_mechanism\":\"nccl_profiler_interface\",\"dump_timestamp_us\":1,\"hostname\":\"h\",\"pid\":1},"
      "\"p2p_perf\":{\"p2p\":\"Send\",\"p2p_sn\":3,\"p2p_peer\":1,\"p2p_msg_size_bytes\":8192,\"p2p_exec_time_us\":5,"
      "\"p2p_timing_source\":\"kernel_cpu\",\"p2p_algobw_gbs\":1.6,\"p2p_busbw_gbs\":1.6}}\r\n";
  auto r = parse_nccl_inspector(verbose + old + p2p);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_TRUE(r->damaged.empty()) << r->damaged[0].message;
  EXPECT_EQ(r->coll_records, 2u);
  EXPECT_EQ(r->p2p_records, 1u);
  ASSERT_EQ(r->colls.size(), 2u);
  EXPECT_EQ(r->colls[1].comm_name, "");
  EXPECT_EQ(r->colls[1].bw_count, 0u);  // "nan": no bandwidth, still a record
  EXPECT_EQ(r->colls[1].count, 1u);
}

TEST(ParsersNcclInspector, CpuTimedRecordsAreCounted) {
  std::string rec = insp_rec(0, 100, 10);
  rec.replace(rec.find("kernel_gpu"), 10, "collective_cpu");
  auto r = parse_nccl_inspector(rec);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->colls[0].cpu_timed, 1u);
}

TEST(ParsersNcclInspector, TruncatedLinesAndWrongTypesAreDamagedWithTheirLines) {
  std::string good = insp_rec(0, 100, 10);
  std::string cut = good.substr(0, good.size() / 2) + "\n";
  std::string rank_string = insp_rec(1, 100, 10);
  rank_string.replace(rank_string.find("\"rank\":1"), 8, "\"rank\":\"1\"");
  std::string busbw_bool = insp_rec(2, 100, 10);
  busbw_bool.replace(busbw_bool.find("\"coll_busbw_gbs\":"), std::string("\"coll_busbw_gbs\":10.000000").size(), "\"coll_busbw_gbs\":true");
  std::string no_size = insp_rec(3, 100, 10);
  no_size.replace(no_size.find("\"coll_msg_size_bytes\":2147483648,"), std::string("\"coll_msg_size_bytes\":2147483648,").size(), "");
  std::string negative = insp_rec(3, 100, 10);
  negative.replace(negative.find("\"coll_exec_time_us\":100"), std::string("\"coll_exec_time_us\":100").size(), "\"coll_exec_time_us\":-5");
  std::string rank_over = insp_rec(9, 100, 10);
  auto r = parse_nccl_inspector(good + cut + rank_string + busbw_bool + no_size + negative + rank_over + "[1,2]\n" + "{\"a\":1}\n");
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->coll_records, 1u);
  ASSERT_EQ(r->damaged.size(), 8u);
  EXPECT_EQ(r->damaged[0].line, 2);
  EXPECT_NE(r->damaged[0].message.find("cut short"), std::string::npos);
  EXPECT_EQ(r->damaged[1].line, 3);
  EXPECT_EQ(r->damaged[1].message, "header.rank is a string, not a non-negative integer");
  EXPECT_EQ(r->damaged[2].message, "coll_perf.coll_busbw_gbs is a boolean, not a bandwidth in GB/s");
  EXPECT_EQ(r->damaged[3].message, "coll_perf.coll_msg_size_bytes is missing");
  EXPECT_NE(r->damaged[4].message.find("coll_perf.coll_exec_time_us is a negative"), std::string::npos);
  EXPECT_NE(r->damaged[5].message.find("not below header.n_ranks"), std::string::npos);
  EXPECT_EQ(r->damaged[6].message, "not a JSON object");
  EXPECT_EQ(r->damaged[7].line, 9);
}

TEST(ParsersNcclInspector, AnUnknownFormatVersionIsAnErrorAtItsLine) {
  auto r = parse_nccl_inspector(insp_rec(0, 100, 10) + insp_rec(1, 100, 10, "v5.0"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().line, 2);
  EXPECT_NE(r.error().message.find("'v5.0' is not one perfgap reads (v4.x)"), std::string::npos) << r.error().message;
  EXPECT_FALSE(parse_nccl_inspector(insp_rec(0, 100, 10, "4.0")));
  EXPECT_FALSE(parse_nccl_inspector(insp_rec(0, 100, 10, "v40.1")));
  EXPECT_TRUE(parse_nccl_inspector(insp_rec(0, 100, 10, "v4")));
}

TEST(ParsersNcclInspector, InputsOfNoRecordAreErrors) {
  EXPECT_FALSE(parse_nccl_inspector(""));
  auto words = parse_nccl_inspector("NCCL INFO hello\n");
  ASSERT_FALSE(words);
  EXPECT_EQ(words.error().line, 1);
  auto other_json = parse_nccl_inspector("{\"traceEvents\":[]}\n");
  ASSERT_FALSE(other_json);
  EXPECT_NE(other_json.error().message.find("not an Inspector record"), std::string::npos);
}

TEST(ParsersNcclInspector, HugeLinesAndDeepNestingAreDamagedNotParsed) {
  std::string deep = "{\"header\":" + std::string(100000, '[') + std::string(100000, ']') + "}\n";
  std::string huge = "{\"x\":\"" + std::string(kMaxInspectorLineBytes + 10, 'a') + "\"}\n";
  auto r = parse_nccl_inspector(deep + huge + insp_rec(0, 100, 10));
  ASSERT_TRUE(r) << r.error().describe();
  ASSERT_EQ(r->damaged.size(), 2u);
  EXPECT_NE(r->damaged[0].message.find("nested deeper"), std::string::npos);
  EXPECT_NE(r->damaged[1].message.find("longer than any Inspector record"), std::string::npos);
  // Brackets inside strings are not nesting.
  std::string quoted = insp_rec(1, 100, 10);
  quoted.replace(quoted.find("DP Group 0"), 10, std::string(40, '['));
  auto q = parse_nccl_inspector(quoted);
  ASSERT_TRUE(q) << q.error().describe();
  EXPECT_TRUE(q->damaged.empty());
}

// The forms the plugin's users hold besides its JSON lines (NVIDIA/nccl
// plugins/profiler/inspector: README.md prints records pretty-printed; inspector_prom.cc writes
// Prometheus text), each told apart once by the first line.
TEST(ParsersNcclInspector, PrettyPrintedRecordsAreReadWithTheLineEachStartsOn) {
  // As the README and `jq .` print them: one key a line, two-space indents.
  auto pretty = [](int rank, const std::string& exec) {
    return "{\n  \"header\": {\n    \"id\": \"0x7f8c496ae9f661\",\n    \"rank\": " + std::to_string(rank) +
           ",\n    \"n_ranks\": 2,\n    \"nnodes\": 1\n  },\n  \"metadata\": {\n    \"inspector_output_format_version\": \"v4.0\",\n"
           "    \"git_rev\": \"\",\n    \"rec_mechanism\": \"profiler_plugin\",\n    \"dump_timestamp_us\": 1748030377748202,\n"
           "    \"hostname\": \"example-hostname\",\n    \"pid\": 1639453\n  },\n  \"coll_perf\": {\n    \"coll\": \"AllReduce\",\n"
           "    \"coll_sn\": 1407,\n    \"coll_msg_size_bytes\": 17179869184,\n    \"coll_exec_time_us\": " + exec +
           ",\n    \"coll_algobw_gbs\": 277.210914,\n    \"coll_busbw_gbs\": 485.119099\n  }\n}\n";
  };
  const std::string a = pretty(0, "61974"), b = pretty(1, "61980.5");
  const int lines_a = static_cast<int>(std::count(a.begin(), a.end(), '\n'));
  // A record cut short before the next one starts: damaged at its first line, the next read.
  const std::string cut = a.substr(0, a.find("\"coll_perf\"")) + "\n";
  const int lines_cut = static_cast<int>(std::count(cut.begin(), cut.end(), '\n'));
  auto r = parse_nccl_inspector(a + "\n" + cut + b);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->form, "pretty-printed JSON");
  EXPECT_EQ(r->coll_records, 2u);
  ASSERT_EQ(r->colls.size(), 2u);
  EXPECT_EQ(r->colls[0].first_line, 1);
  EXPECT_EQ(r->colls[1].first_line, lines_a + 2 + lines_cut);
  EXPECT_DOUBLE_EQ(r->colls[1].mean_exec_us(), 61980.5);
  EXPECT_DOUBLE_EQ(r->colls[0].mean_busbw_gbs(), 485.119099);
  ASSERT_EQ(r->damaged.size(), 1u);
  EXPECT_EQ(r->damaged[0].line, lines_a + 2);
  EXPECT_NE(r->damaged[0].message.find("cut short"), std::string::npos);
  // Cut short at the end of the input.
  auto end = parse_nccl_inspector(a + cut);
  ASSERT_TRUE(end);
  ASSERT_EQ(end->damaged.size(), 1u);
  EXPECT_EQ(end->damaged[0].line, lines_a + 1);
  auto only_cut = parse_nccl_inspector(cut);
  ASSERT_FALSE(only_cut);
  EXPECT_EQ(only_cut.error().line, 1);
}

TEST(ParsersNcclInspector, AFractionalExecutionTimeIsRead) {
  // Records that went through another tool: "coll_exec_time_us":5663.0.
  std::string rec = insp_rec(1, 100, 0.55585);
  rec.replace(rec.find("\"coll_exec_time_us\":100"), std::string("\"coll_exec_time_us\":100").size(), "\"coll_exec_time_us\":5663.0");
  auto r = parse_nccl_inspector(rec + insp_rec(1, 5664, 0.55));
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_TRUE(r->damaged.empty()) << r->damaged[0].message;
  EXPECT_EQ(r->form, "JSON lines");
  ASSERT_EQ(r->colls.size(), 1u);
  EXPECT_EQ(r->colls[0].count, 2u);
  EXPECT_DOUBLE_EQ(r->colls[0].mean_exec_us(), 5663.5);
  std::string text = insp_rec(1, 100, 1);
  text.replace(text.find("\"coll_exec_time_us\":100"), std::string("\"coll_exec_time_us\":100").size(), "\"coll_exec_time_us\":\"5663\"");
  auto s = parse_nccl_inspector(text);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("coll_perf.coll_exec_time_us is a string, not a time in microseconds"), std::string::npos) << s.error().message;
}

namespace {
// One collective as the v4 plugin wrote it with NCCL_INSPECTOR_PROM_DUMP=1 (inspector_prom.cc:
// the comm's static labels, then collective, coll_sn, timestamp and message_size; %.6g values).
std::string prom_coll(int rank, const std::string& size, double busbw, double exec_us, int sn = 228924) {
  const std::string labels = "comm_id=\"0xd152c00f111816\",hostname=\"pool0-000" + std::to_string(rank / 2) + "\",rank=\"" + std::to_string(rank) +
                             "\",slurm_job=\"unknown\",slurm_job_id=\"unknown\",nranks=\"4\",n_nodes=\"2\",gpu_device_id=\"GPU" +
                             std::to_string(rank % 2) + "\",collective=\"AllReduce\",coll_sn=\"" + std::to_string(sn) +
                             "\",timestamp=\"2025-10-17T03:31:47Z\",message_size=\"" + size + "\"";
  auto g = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return std::string(b);
  };
  return "nccl_algorithm_bandwidth_gbs{" + labels + "} " + g(busbw / 1.5) + "\nnccl_bus_bandwidth_gbs{" + labels + "} " + g(busbw) +
         "\nnccl_collective_exec_time_microseconds{" + labels + "} " + g(exec_us) + "\n";
}
}  // namespace

TEST(ParsersNcclInspector, PrometheusTextOfRanksIsRead) {
  auto r = parse_nccl_inspector(prom_coll(0, "2.00GB", 400, 9000) + prom_coll(0, "2.00GB", 380, 9400, 228925) + prom_coll(3, "2.00GB", 200, 18000) +
                                prom_coll(3, "512B", 1.5, 12));
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->form, "Prometheus text");
  EXPECT_EQ(r->coll_records, 4u);
  EXPECT_TRUE(r->damaged.empty()) << r->damaged[0].message;
  ASSERT_EQ(r->colls.size(), 3u);
  const auto& c = r->colls[0];
  EXPECT_EQ(c.comm_id, "0xd152c00f111816");
  EXPECT_EQ(c.rank, 0);
  EXPECT_EQ(c.n_ranks, 4);
  EXPECT_EQ(c.nnodes, 2u);
  EXPECT_EQ(c.host, "pool0-0000");
  EXPECT_EQ(c.coll, "AllReduce");
  EXPECT_EQ(c.msg_bytes, 2147483648u);
  EXPECT_EQ(c.count, 2u);
  EXPECT_DOUBLE_EQ(c.mean_busbw_gbs(), 390);
  EXPECT_DOUBLE_EQ(c.mean_exec_us(), 9200);
  EXPECT_EQ(c.first_line, 1);
  EXPECT_EQ(r->colls[1].rank, 3);
  EXPECT_EQ(r->colls[1].first_line, 7);
  EXPECT_EQ(r->colls[2].msg_bytes, 512u);
  // A sample cut short, and a collective without its time: damaged at their lines.
  std::string one = prom_coll(1, "2.00GB", 390, 9100);
  std::string no_time = prom_coll(2, "2.00GB", 390, 9100);
  no_time.erase(no_time.find("nccl_collective_exec_time"));
  auto d = parse_nccl_inspector("# TYPE nccl_bus_bandwidth_gbs gauge\n" + one.substr(0, 50) + "\n" + one + no_time + prom_coll(3, "2.00GB", 380, 9000));
  ASSERT_TRUE(d) << d.error().describe();
  EXPECT_EQ(d->coll_records, 2u);
  ASSERT_EQ(d->damaged.size(), 2u);
  EXPECT_EQ(d->damaged[0].line, 2);
  EXPECT_NE(d->damaged[0].message.find("cut short"), std::string::npos) << d->damaged[0].message;
  EXPECT_EQ(d->damaged[1].line, 6);
  EXPECT_NE(d->damaged[1].message.find("no nccl_collective_exec_time_microseconds"), std::string::npos);
}

TEST(ParsersNcclInspector, PrometheusAggregatesWithoutRanksAreRefusedNamingTheirForm) {
  // v5.1 (the README's example): per-GPU means, labelled node and gpu, not rank.
  const std::string v5 =
      "nccl_bus_bandwidth_gbs{version=\"v5.1\",slurm_job_id=\"unknown\",node=\"nvl72004-T01\",gpu=\"GPU0\",comm_name=\"DP Group 0\","
      "n_nodes=\"1\",nranks=\"4\",collective=\"AllReduce\",message_size=\"4-5GB\",algo_proto=\"Ring_ll\"} 678.263\n";
  auto r = parse_nccl_inspector(v5);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().line, 1);
  EXPECT_NE(r.error().message.find("aggregate form v5.1"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("NCCL_INSPECTOR_PROM_DUMP=0"), std::string::npos) << r.error().message;
}
