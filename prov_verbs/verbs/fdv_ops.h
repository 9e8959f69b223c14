/* Generated from gen/api.spec and include/rdma by gen/gen.py: do not
 * edit; regenerate with `python3 gen/gen.py`. */


/* The ops tables of fdv_ops_gen.c and of fdv_ops_locked_gen.c; the
 * -FI_ENOSYS stubs and whole tables are the core's (fd_enosys.h). */
#ifndef FDV_OPS_H
#define FDV_OPS_H

#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_collective.h>
#include <fdv/fdv_config.h>
#include "fd_enosys.h"

extern struct fi_ops_atomic fdv_msg_ops_atomic;
extern struct fi_ops_msg fdv_msg_ops_msg;
extern struct fi_ops_rma fdv_msg_ops_rma;
extern struct fi_ops_cq fdv_ops_cq;

#if FDV_OPS_LOCKED
/* The same calls inside the endpoint's or CQ's lock, for objects opened
 * at FI_THREAD_ENDPOINT, FID or SAFE. */
extern struct fi_ops_atomic fdv_msg_ops_locked_atomic;
extern struct fi_ops_cq fdv_ops_locked_cq;
extern struct fi_ops_msg fdv_msg_ops_locked_msg;
extern struct fi_ops_rma fdv_msg_ops_locked_rma;
#endif

#endif /* FDV_OPS_H */
