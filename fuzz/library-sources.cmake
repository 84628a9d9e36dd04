# The part of src/ that the fuzz targets link, and all that the fuzz build compiles of the
# library (src/CMakeLists.txt, under PERFGAP_FUZZ): globs for the folders they use whole, file
# names in the others, relative to src/. The library stays static, so a needed file missing here
# is an undefined reference when perfgap-fuzz links (loud); a file here that no target needs
# only costs compile time. tools/fuzz-sources.sh prints the list the link needs and how this one
# differs: run it when a fuzz target starts to call something new or code moves between files.
# The checks and facts come with the config fuzzers: fuzz_config reads each check's declared
# thresholds from core::builtin_registry(), which registers every check.
set(PERFGAP_FUZZ_LIBRARY_SOURCES
  analyzers/*.cpp
  checks/*.cpp checks/cpu_power/*.cpp checks/gpu/*.cpp checks/network/*.cpp checks/pcie/*.cpp checks/placement/*.cpp
  checks/runtime_topology/*.cpp checks/virtualization/*.cpp
  compare/*.cpp
  facts/*.cpp
  parsers/*.cpp
  core/baseline.cpp core/check.cpp core/config.cpp core/kb.cpp
  fleet/aggregate.cpp fleet/drift.cpp fleet/reader.cpp fleet/stats.cpp fleet/text_view.cpp
  probe/judge.cpp
  report/informational.cpp report/model.cpp report/outgoing.cpp report/reader.cpp report/redact.cpp
  report/render_json.cpp report/render_machine.cpp report/render_text.cpp report/text_style.cpp
  slurm/fanout.cpp slurm/health_config.cpp slurm/node_state.cpp
  snapshot/archive.cpp
  sweep/grid.cpp
  sys/bounded.cpp sys/executable.cpp sys/fd_read.cpp sys/named_file.cpp sys/output.cpp sys/paths.cpp
  sys/process.cpp sys/spawn.cpp sys/stop_signals.cpp sys/sysroot.cpp sys/text.cpp
)
