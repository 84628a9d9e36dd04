# Cross-compiling the static perfgap for aarch64 (Grace, GB200/GB300) on a Debian 12 x86_64
# host (preset release-aarch64): Debian's g++-aarch64-linux-gnu (its own arm64 glibc and
# libstdc++ in /usr/aarch64-linux-gnu) plus the arm64 static libraries perfgap links, unpacked
# from Debian's arm64 -dev packages into build-aarch64-sysroot/ by tools/aarch64-sysroot.sh
# (apt-get download + dpkg -x: nothing is installed on the host).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
get_filename_component(_pg_src "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(PERFGAP_AARCH64_SYSROOT "${_pg_src}/build-aarch64-sysroot" CACHE PATH "arm64 -dev packages unpacked (tools/aarch64-sysroot.sh)")
if(NOT EXISTS "${PERFGAP_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu/libarchive.a")
  message(FATAL_ERROR "no arm64 libraries in ${PERFGAP_AARCH64_SYSROOT}: run tools/aarch64-sysroot.sh first")
endif()
# Libraries and headers only from the arm64 sysroot (and the cross compiler's own): the
# header-only libraries are linked into it by tools/aarch64-sysroot.sh. Their CMake package
# files (/usr/share/cmake) name /usr/include, which the top CMakeLists.txt keeps off the
# command line of a cross build (the host's glibc headers are x86_64's).
set(CMAKE_FIND_ROOT_PATH "${PERFGAP_AARCH64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# The host's MPI is x86_64: perfgap-collbench for aarch64 builds without the MPI plugin.
set(CMAKE_DISABLE_FIND_PACKAGE_MPI ON)
# Runs the built binary (man pages) under qemu-user.
find_program(PERFGAP_QEMU_AARCH64 qemu-aarch64-static)
if(PERFGAP_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${PERFGAP_QEMU_AARCH64})
endif()
