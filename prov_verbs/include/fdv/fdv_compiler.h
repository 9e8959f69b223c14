/* Compiler helpers shared by the inline data path. Installed: the generated
 * direct headers include the data path, so this file is part of what an
 * application compiles. */
#ifndef FDV_COMPILER_H
#define FDV_COMPILER_H

#include <stddef.h>
#include <stdint.h>

/* One inline marker for every hot function. always_inline because the whole
 * point of the direct build is that the application's call site and the
 * ibv_post_send it ends in are one straight line of code. */
#define FDV_INLINE static inline __attribute__((always_inline))

#define fdv_likely(x)   __builtin_expect(!!(x), 1)
#define fdv_unlikely(x) __builtin_expect(!!(x), 0)

/* Slow paths live in the library's .c files, out of line and cold, so the
 * hot path's instruction stream holds only the common case. */
#define FDV_COLD __attribute__((cold, noinline))

/* Marks a function the library defines and the installed inline headers
 * call: an out-of-line entry point, part of the ABI like fi_*. Every
 * function an installed inline header declares without defining must carry
 * it; gen/gen.py lists them in src/fabric-direct.map, the version script
 * of every shared libfabric-direct, which keeps everything else local. */
#define FDV_EXPORT __attribute__((visibility("default")))

#define fdv_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#ifdef __cplusplus
#define FDV_EXTERN_C_BEGIN extern "C" {
#define FDV_EXTERN_C_END }
#else
#define FDV_EXTERN_C_BEGIN
#define FDV_EXTERN_C_END
#endif

#endif /* FDV_COMPILER_H */
