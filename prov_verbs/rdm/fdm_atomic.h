/* RDM atomics, done in software by the target (docs/rdm-protocol.md,
 * "Atomics"): the initiator sends a request, the target's progress applies
 * it to its memory and answers, with the old values for the fetch and
 * compare forms. This header is the arithmetic (fdm_atomic_apply.c) and
 * the two halves of the protocol (fdm_atomic.c). */
#ifndef FDM_ATOMIC_H
#define FDM_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fi_atomic.h>

/* The three families; the request's first byte on the wire. */
enum fdm_atomic_kind {
	FDM_AK_WRITE = 1,	/* fi_atomic: no result */
	FDM_AK_FETCH = 2,	/* fi_fetch_atomic: the old values come back */
	FDM_AK_COMPARE = 3,	/* fi_compare_atomic: operand and compare data */
};

/* ---- fdm_atomic_apply.c ---- */

/* Bytes of one element of dt; 0 for a type the layer does not do
 * (long double and its complex, the 128-bit integers). */
size_t fdm_atomic_dt_size(unsigned dt);
/* Whether op on dt belongs to kind and is done here. Takes values straight
 * off the wire or from the application: anything out of range is false. */
bool fdm_atomic_ok(unsigned kind, unsigned op, unsigned dt);
/* Elements one request of this kind and type may carry: what fits one
 * eager buffer with the descriptor, operand and compare data. */
size_t fdm_atomic_max_count(unsigned kind, unsigned dt);
/* Apply op to count elements at dst (fdm_atomic_ok for some kind, dst
 * aligned to fdm_atomic_align(dt)). operand is NULL for FI_ATOMIC_READ,
 * compare for anything but the compare family; result (may be NULL)
 * receives the values dst held before, element by element. */
void fdm_atomic_apply(unsigned op, unsigned dt, void *dst, const void *operand,
		      const void *compare, void *result, size_t count);
/* The alignment a target address needs for dt. */
size_t fdm_atomic_align(unsigned dt);
/* Host <-> wire byte order (big endian, each scalar; a complex number is
 * its real then its imaginary part), in place; its own inverse. */
void fdm_atomic_swab(void *buf, size_t count, unsigned dt);

/* ---- fdm_atomic.c ---- */
struct fdm_ep;
struct fdm_conn;
struct fdm_tx;
struct fdm_hdr;

extern struct fi_ops_atomic fdm_atomic_ops;
/* fi_query_atomic on an RDM domain. */
int fdm_atomic_query(struct fid_domain *domain, enum fi_datatype dt, enum fi_op op,
		     struct fi_atomic_attr *attr, uint64_t flags);
/* The request's send completed (or failed: err), or its connection
 * failed while the answer was awaited. */
void fdm_atomic_tx_done(struct fdm_ep *ep, struct fdm_tx *tx, int err);
/* Target: a request arrived (payload: the message after the header). */
void fdm_atomic_handle_req(struct fdm_ep *ep, struct fdm_conn *conn,
			   const struct fdm_hdr *h, uint8_t *payload, size_t len);
/* Initiator: an answer arrived. */
void fdm_atomic_handle_resp(struct fdm_ep *ep, struct fdm_conn *conn,
			    const struct fdm_hdr *h, uint8_t *payload, size_t len);
/* Answer the requests that waited for a transmit request. */
/* An FI_DELIVERY_COMPLETE acknowledgement owed: sent now, or queued with
 * the atomic answers that wait for a transmit request, in arrival order. */
void fdm_owe_ack(struct fdm_ep *ep, struct fdm_conn *conn, uint64_t req_id);
void fdm_atomic_pump(struct fdm_ep *ep);
/* Endpoint close: forget the waiting requests. */
void fdm_atomic_drop(struct fdm_ep *ep);

#endif /* FDM_ATOMIC_H */
