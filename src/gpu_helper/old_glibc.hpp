// Included by every file of perfgap-gpu that calls dlopen, dlsym or dlerror: the binding to
// their first glibc versions applies to the references of the file that asks for it
// (old_glibc.cpp says why).
#pragma once

#if defined(PERFGAP_GPU_OLD_GLIBC)
#if defined(__x86_64__)
#define PERFGAP_GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define PERFGAP_GLIBC_BASE "GLIBC_2.17"
#else
#error "PERFGAP_GPU_OLD_GLIBC: only x86_64 and aarch64 have a _start (old_glibc.cpp)"
#endif
__asm__(".symver dlopen,dlopen@" PERFGAP_GLIBC_BASE);
__asm__(".symver dlsym,dlsym@" PERFGAP_GLIBC_BASE);
__asm__(".symver dlerror,dlerror@" PERFGAP_GLIBC_BASE);
#endif
