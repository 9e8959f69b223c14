/* The ops tables gen/gen.py writes into fdv_ops_gen.c. */
#ifndef FDV_OPS_H
#define FDV_OPS_H

#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_collective.h>

extern struct fi_ops_msg fdv_msg_ops_msg;
extern struct fi_ops_rma fdv_msg_ops_rma;
extern struct fi_ops_atomic fdv_msg_ops_atomic;
extern struct fi_ops_tagged fdv_msg_ops_tagged;
extern struct fi_ops_cq fdv_ops_cq;
extern struct fi_ops_collective fdv_msg_ops_collective;

#include <fdv/fdv_config.h>
#if FDV_OPS_LOCKED
/* fdv_ops_locked_gen.c: the same calls inside the endpoint's or CQ's lock,
 * for objects opened at FI_THREAD_ENDPOINT, FID or SAFE. */
extern struct fi_ops_msg fdv_msg_ops_locked_msg;
extern struct fi_ops_rma fdv_msg_ops_locked_rma;
extern struct fi_ops_atomic fdv_msg_ops_locked_atomic;
extern struct fi_ops_cq fdv_ops_locked_cq;
#endif
#if FDV_EP_RSTREAM
/* rstream endpoints: fi_msg through the fdr_msg_ functions, the rest
 * -FI_ENOSYS. */
extern struct fi_ops_msg fdv_rstream_ops_msg;
extern struct fi_ops_rma fdv_rstream_ops_rma;
extern struct fi_ops_atomic fdv_rstream_ops_atomic;
extern struct fi_ops_tagged fdv_rstream_ops_tagged;
extern struct fi_ops_collective fdv_rstream_ops_collective;
#endif

#endif
