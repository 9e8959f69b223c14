/*
 * Verbs provider: which threading levels this build serves, and which
 * take the locked ops tables (private; used by fi_getinfo and fi_domain
 * and by every object's open).
 */
#ifndef FDV_THREADING_H
#define FDV_THREADING_H

#include <stdbool.h>

#include <rdma/fi_domain.h>

#include <fdv/fdv_config.h>

/* Higher is a stronger promise, as fi_getinfo's matching ranks them. */
static inline int fdv_thread_strength(enum fi_threading level)
{
	switch (level) {
	case FI_THREAD_SAFE:		return 5;
	case FI_THREAD_FID:		return 4;
	case FI_THREAD_ENDPOINT:	return 3;
	case FI_THREAD_COMPLETION:	return 2;
	case FI_THREAD_DOMAIN:		return 1;
	default:			return 0;
	}
}

/*
 * What each build can promise (docs/fi_direct_verbs.7.md, "Threading"):
 * - FDV_THREAD_SAFE: every data-path call holds its endpoint's or CQ's
 *   lock, so every level.
 * - FDV_OPS_LOCKED (OFF, no inline locks): every level; ENDPOINT and up get
 *   the locked ops tables, chosen per object at open time.
 * - direct without locks: the application's inline code takes no lock, so
 *   only the levels where the application serializes everything that
 *   shares state: DOMAIN, and COMPLETION (objects that share a CQ or an EQ
 *   are serialized; what different CQs' endpoints share - the device
 *   context, the PD, the completion-slot counter - is thread safe in
 *   rdma-core or atomic).
 */
static inline enum fi_threading fdv_threading_max(void)
{
#if FDV_THREAD_SAFE || FDV_OPS_LOCKED
	return FI_THREAD_SAFE;
#else
	return FI_THREAD_COMPLETION;
#endif
}

/* Whether an object opened at this threading level takes the locked ops
 * tables (FI_THREAD_ENDPOINT, FID, SAFE in a FDV_OPS_LOCKED build). */
static inline bool fdv_threading_locked(enum fi_threading level)
{
#if FDV_OPS_LOCKED
	return fdv_thread_strength(level) >= fdv_thread_strength(FI_THREAD_ENDPOINT);
#else
	(void)level;
	return false;
#endif
}

#endif /* FDV_THREADING_H */
