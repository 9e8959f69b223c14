/* The data-path lock: real only when the library was configured for
 * FI_THREAD_SAFE. With FDV_THREAD_SAFE 0 every call folds to nothing, so a
 * FI_THREAD_DOMAIN application pays no atomic instruction it did not ask for. */
#ifndef FDV_LOCK_H
#define FDV_LOCK_H

#include <fdv/fdv_compiler.h>
#include <fdv/fdv_config.h>

#if FDV_THREAD_SAFE
/* A test-and-test-and-set spinlock on compiler builtins: the same code in C
 * and C++, and no dependence on POSIX feature macros in the application.
 * Acquire on lock and release on unlock order the queue state they guard. */
typedef struct { volatile char held; } fdv_lock_t;

FDV_INLINE void fdv_lock_init(fdv_lock_t *l) { __atomic_clear(&l->held, __ATOMIC_RELAXED); }
FDV_INLINE void fdv_lock_destroy(fdv_lock_t *l) { (void)l; }
FDV_INLINE void fdv_lock(fdv_lock_t *l)
{
	while (__atomic_test_and_set(&l->held, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&l->held, __ATOMIC_RELAXED)) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		}
	}
}
FDV_INLINE void fdv_unlock(fdv_lock_t *l) { __atomic_clear(&l->held, __ATOMIC_RELEASE); }
#else
/* A one-byte placeholder keeps the struct layouts identical in shape. */
typedef struct { char unused; } fdv_lock_t;
FDV_INLINE void fdv_lock_init(fdv_lock_t *l) { (void)l; }
FDV_INLINE void fdv_lock_destroy(fdv_lock_t *l) { (void)l; }
FDV_INLINE void fdv_lock(fdv_lock_t *l) { (void)l; }
FDV_INLINE void fdv_unlock(fdv_lock_t *l) { (void)l; }
#endif

#endif /* FDV_LOCK_H */
