/*
 * fabric-direct: triggered and deferred operations (libfabric 1.17 API).
 *
 * Nothing here is needed by the verbs provider's data path, but the types
 * are part of the 1.17 interface (FI_OPT_XPU_TRIGGER, FI_QUEUE_WORK) and
 * keep libfabric 1.17's layout so that code written for it builds
 * unchanged.
 */
#ifndef FD_RDMA_FI_TRIGGER_H
#define FD_RDMA_FI_TRIGGER_H

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_atomic.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What fires a triggered operation. */
enum fi_trigger_event {
	FI_TRIGGER_THRESHOLD,   /* a counter reaching a value */
	FI_TRIGGER_XPU          /* a device (GPU) writing trigger variables */
};

/* Which operation a struct fi_deferred_work carries. */
enum fi_op_type {
	FI_OP_RECV,
	FI_OP_SEND,
	FI_OP_TRECV,
	FI_OP_TSEND,
	FI_OP_READ,
	FI_OP_WRITE,
	FI_OP_ATOMIC,
	FI_OP_FETCH_ATOMIC,
	FI_OP_COMPARE_ATOMIC,
	FI_OP_CNTR_SET,
	FI_OP_CNTR_ADD
};

struct fi_trigger_threshold {
	struct fid_cntr *cntr;
	size_t threshold;
};

/*
 * One variable a device writes to release an XPU-triggered operation;
 * small values are inline in 'value', larger ones through value.data.
 */
struct fi_trigger_var {
	enum fi_datatype datatype;
	int count;
	void *addr;
	union {
		uint8_t val8;
		uint16_t val16;
		uint32_t val32;
		uint64_t val64;
		uint8_t *data;
	} value;
};

/* Also the optval of fi_getopt(FI_OPT_XPU_TRIGGER). */
struct fi_trigger_xpu {
	int count;              /* entries in var[] */
	enum fi_hmem_iface iface;
	union {
		uint64_t reserved;  /* fixes the union at 8 bytes */
		int cuda;
		int ze;
	} device;
	struct fi_trigger_var *var;
};

/*
 * Deferred-work operands: the endpoint, the same message descriptor the
 * corresponding *msg call takes, and that call's flags.
 */
struct fi_op_msg {
	struct fid_ep *ep;
	struct fi_msg msg;
	uint64_t flags;
};

struct fi_op_tagged {
	struct fid_ep *ep;
	struct fi_msg_tagged msg;
	uint64_t flags;
};

struct fi_op_rma {
	struct fid_ep *ep;
	struct fi_msg_rma msg;
	uint64_t flags;
};

struct fi_op_atomic {
	struct fid_ep *ep;
	struct fi_msg_atomic msg;
	uint64_t flags;
};

struct fi_op_fetch_atomic {
	struct fid_ep *ep;
	struct fi_msg_atomic msg;
	struct fi_msg_fetch fetch;
	uint64_t flags;
};

struct fi_op_compare_atomic {
	struct fid_ep *ep;
	struct fi_msg_atomic msg;
	struct fi_msg_fetch fetch;
	struct fi_msg_compare compare;
	uint64_t flags;
};

/* For FI_OP_CNTR_SET / FI_OP_CNTR_ADD. */
struct fi_op_cntr {
	struct fid_cntr *cntr;
	uint64_t value;
};

#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_trigger.h>
#endif

/*
 * A direct provider may define FABRIC_DIRECT_TRIGGER and supply its own
 * versions of the three structures below.
 */
#ifndef FABRIC_DIRECT_TRIGGER

/*
 * Passed as the operation context with FI_TRIGGER, so it is meant to
 * occupy the same storage as struct fi_context (4 pointers on LP64);
 * the '2' variant likewise mirrors struct fi_context2 (8 pointers).
 */
struct fi_triggered_context {
	enum fi_trigger_event event_type;
	union {
		struct fi_trigger_threshold threshold;
		struct fi_trigger_xpu xpu;
		void *internal[3];
	} trigger;
};

struct fi_triggered_context2 {
	enum fi_trigger_event event_type;
	union {
		struct fi_trigger_threshold threshold;
		struct fi_trigger_xpu xpu;
		void *internal[7];
	} trigger;
};

/*
 * Queued with fi_control(FI_QUEUE_WORK) on a domain: run 'op' once
 * triggering_cntr reaches threshold, then bump completion_cntr.
 * 'context' is scratch space owned by the provider while queued.
 */
struct fi_deferred_work {
	struct fi_context2 context;

	uint64_t threshold;
	struct fid_cntr *triggering_cntr;
	struct fid_cntr *completion_cntr;

	enum fi_op_type op_type;

	union {
		struct fi_op_msg *msg;
		struct fi_op_tagged *tagged;
		struct fi_op_rma *rma;
		struct fi_op_atomic *atomic;
		struct fi_op_fetch_atomic *fetch_atomic;
		struct fi_op_compare_atomic *compare_atomic;
		struct fi_op_cntr *cntr;
	} op;
};

#endif /* !FABRIC_DIRECT_TRIGGER */

#ifdef __cplusplus
}
#endif

#endif /* FD_RDMA_FI_TRIGGER_H */
