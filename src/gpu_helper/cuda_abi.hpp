// The few CUDA driver API types and constants perfgap-gpu --probe uses, declared here (from
// the driver API's documented ABI) so the helper builds without the CUDA toolkit and loads
// libcuda.so.1 at run time. The fake driver of the tests (tests/support/fake_cuda.cpp)
// implements the same calls.
#pragma once

#include <cstddef>

namespace perfgap::cuda {

using Result = int;  // CUresult
using Device = int;  // CUdevice
using DevicePtr = unsigned long long;  // CUdeviceptr (64-bit)
struct CtxSt;
struct StreamSt;
struct EventSt;
struct ModSt;
struct FuncSt;
using Context = CtxSt*;
using Stream = StreamSt*;
using Event = EventSt*;
using Module = ModSt*;
using Function = FuncSt*;

inline constexpr Result kSuccess = 0;
inline constexpr unsigned kStreamNonBlocking = 0x1;  // CU_STREAM_NON_BLOCKING
inline constexpr unsigned kEventDefault = 0x0;       // CU_EVENT_DEFAULT (timing enabled)

// An empty kernel as PTX: the driver JIT-compiles it for whatever GPU it meets (sm_50 and up).
inline constexpr char kEmptyKernelPtx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry perfgap_empty()\n"
    "{\n"
    "  ret;\n"
    "}\n";
inline constexpr char kEmptyKernelName[] = "perfgap_empty";

}  // namespace perfgap::cuda
