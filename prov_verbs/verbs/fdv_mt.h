/* The locks of the OFF build's locked ops tables (fdv_ops_locked_gen.c):
 * a mutex per msg endpoint and per CQ, taken around each data-path call of
 * an object opened at FI_THREAD_ENDPOINT, FID or SAFE. A mutex, not a
 * spinlock: threaded programs often run more threads than cores, and a
 * spinning waiter would burn the holder's time slice. The lock-free tables
 * never include this file. */
#ifndef FDV_MT_H
#define FDV_MT_H

#include <pthread.h>
#include "fdv_internal.h"

static inline pthread_mutex_t *fdv_mt_ep_mutex(struct fid_ep *ep)
{
	return &FDV_OBJ(struct fdv_msg_ep, ep.ep_fid, ep)->mt_lock;
}

static inline void fdv_mt_ep_lock(struct fid_ep *ep)
{
	pthread_mutex_lock(fdv_mt_ep_mutex(ep));
}

static inline void fdv_mt_ep_unlock(struct fid_ep *ep)
{
	pthread_mutex_unlock(fdv_mt_ep_mutex(ep));
}

static inline pthread_mutex_t *fdv_mt_cq_mutex(struct fid_cq *cq)
{
	return &FDV_OBJ(struct fdv_cq_full, cq.cq_fid, cq)->mt_lock;
}

static inline void fdv_mt_cq_lock(struct fid_cq *cq)
{
	pthread_mutex_lock(fdv_mt_cq_mutex(cq));
}

static inline void fdv_mt_cq_unlock(struct fid_cq *cq)
{
	pthread_mutex_unlock(fdv_mt_cq_mutex(cq));
}

#endif /* FDV_MT_H */
