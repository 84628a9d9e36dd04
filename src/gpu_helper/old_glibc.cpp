// perfgap-gpu runs in the job's container, whose glibc may be older than the build machine's
// (Ubuntu 20.04 and Debian 11: 2.31, RHEL 8: 2.28). A program linked against glibc 2.34 or
// newer asks for __libc_start_main@GLIBC_2.34 (from the C runtime's _start) and dlopen,
// dlsym, dlerror @GLIBC_2.34 (libdl merged into libc), which older glibc lacks: the loader
// refuses the program before main. So the helper brings its own _start (linked with
// -nostartfiles) calling the architecture's first __libc_start_main, and binds the dl*
// calls to their first versions: newer glibc keeps both in libc.so.6 as compatibility
// symbols, older glibc has them in libc.so.6 and libdl.so.2 (linked as NEEDED for them).
// The first versions' __libc_start_main takes the program's constructor runner as `init`
// (glibc 2.34+ calls it instead of walking the array itself when it is given).
// tools/release-check.sh proves the result asks for no symbol newer than GLIBC_2.17.
#if defined(PERFGAP_GPU_OLD_GLIBC)

#include <cstddef>

#include "gpu_helper/old_glibc.hpp"

__asm__(".symver perfgap_libc_start_main,__libc_start_main@" PERFGAP_GLIBC_BASE);

extern "C" {
// The linker's bounds of the program's own .init_array (constructors of this executable).
extern void (*__init_array_start[])(int, char**, char**);  // NOLINT(bugprone-reserved-identifier)
extern void (*__init_array_end[])(int, char**, char**);    // NOLINT(bugprone-reserved-identifier)

__attribute__((used)) void perfgap_gpu_run_constructors(int argc, char** argv, char** envp) {
  const std::size_t n = static_cast<std::size_t>(__init_array_end - __init_array_start);
  for (std::size_t i = 0; i < n; ++i) __init_array_start[i](argc, argv, envp);
}
}

// _start: the kernel leaves argc at the stack pointer, argv after it; the dynamic loader
// passes its finaliser in rdx (x86_64) or x0 (aarch64). __libc_start_main(main, argc, argv,
// init, fini, rtld_fini, stack_end) never returns.
#if defined(__x86_64__)
__asm__(R"(
  .text
  .globl _start
  .type _start,@function
_start:
  xorl %ebp, %ebp
  movq %rdx, %r9
  popq %rsi
  movq %rsp, %rdx
  andq $-16, %rsp
  pushq %rax
  pushq %rsp
  leaq perfgap_gpu_run_constructors(%rip), %rcx
  xorl %r8d, %r8d
  leaq main(%rip), %rdi
  call perfgap_libc_start_main@PLT
  hlt
  .size _start, .-_start
)");
#elif defined(__aarch64__)
__asm__(R"(
  .text
  .globl _start
  .type _start,%function
_start:
  mov x29, #0
  mov x30, #0
  mov x5, x0
  ldr x1, [sp]
  add x2, sp, #8
  mov x6, sp
  adrp x0, main
  add x0, x0, :lo12:main
  adrp x3, perfgap_gpu_run_constructors
  add x3, x3, :lo12:perfgap_gpu_run_constructors
  mov x4, #0
  bl perfgap_libc_start_main
  brk #1
  .size _start, .-_start
)");
#endif

#endif  // PERFGAP_GPU_OLD_GLIBC
