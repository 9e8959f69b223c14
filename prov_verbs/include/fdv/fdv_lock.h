/* The data-path lock: real only when the library was configured for
 * FI_THREAD_SAFE. With FDV_THREAD_SAFE 0 every call folds to nothing, so a
 * FI_THREAD_DOMAIN application pays no atomic instruction it did not ask for. */
#ifndef FDV_LOCK_H
#define FDV_LOCK_H

#include <fdv/fdv_compiler.h>
#include <fdv/fdv_config.h>

#if FDV_THREAD_SAFE
#include <pthread.h>
typedef pthread_spinlock_t fdv_lock_t;
FDV_INLINE void fdv_lock_init(fdv_lock_t *l) { pthread_spin_init(l, PTHREAD_PROCESS_PRIVATE); }
FDV_INLINE void fdv_lock_destroy(fdv_lock_t *l) { pthread_spin_destroy(l); }
FDV_INLINE void fdv_lock(fdv_lock_t *l) { pthread_spin_lock(l); }
FDV_INLINE void fdv_unlock(fdv_lock_t *l) { pthread_spin_unlock(l); }
#else
/* A one-byte placeholder keeps the struct layouts identical in shape. */
typedef struct { char unused; } fdv_lock_t;
FDV_INLINE void fdv_lock_init(fdv_lock_t *l) { (void)l; }
FDV_INLINE void fdv_lock_destroy(fdv_lock_t *l) { (void)l; }
FDV_INLINE void fdv_lock(fdv_lock_t *l) { (void)l; }
FDV_INLINE void fdv_unlock(fdv_lock_t *l) { (void)l; }
#endif

#endif /* FDV_LOCK_H */
