/* RDM wire protocol (docs/rdm-protocol.md): endpoint names, the CM data
 * of the connection handshake, the message header and the rendezvous
 * descriptor. Encoders write big endian; every decoder validates before
 * anything is trusted (data from the network). */
#ifndef FDM_PROTO_H
#define FDM_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

/* the name, the header's constants and ops: shared with the inline data
 * path */
#include "fdm_ep.h"

#define FDM_CM_LEN		48u

/* Validate and copy an address of the AV's format; 0 or -FI_EINVAL. */
int fdm_name_parse(struct fdm_name *out, const void *addr, size_t len);
/* The ordering key of the simultaneous-connect rule. */
void fdm_name_key(const struct fdm_name *n, uint8_t key[FDM_NAME_KEY_LEN]);
bool fdm_name_eq(const struct fdm_name *a, const struct fdm_name *b);

enum fdm_cm_kind {
	FDM_CM_REQ = 1,
	FDM_CM_ACCEPT = 2,
	FDM_CM_BUSY = 3,	/* reject: my own request to you is on its way */
};

struct fdm_cm {
	uint8_t kind;
	struct fdm_name name;	/* REQ: the requester's name */
	uint32_t conn_id;	/* the sender's id of the connection */
	/* REQ: the requester's context index in its scalable endpoint
	 * (below FDM_SEP_MAX_CTX, at most its port); 0 for a plain one */
	uint8_t ctx;
	/* REQ and ACCEPT (flow control): where the receiver of this data
	 * writes the sender's credits (0, 0: nowhere, no flow control that
	 * way), and how many messages it may send the sender's pool */
	uint64_t word_addr;
	uint32_t word_key;
	uint16_t credits;
};

void fdm_cm_encode(uint8_t out[FDM_CM_LEN], const struct fdm_cm *cm);
/* 0, or -FI_EINVAL for anything malformed. */
int fdm_cm_decode(struct fdm_cm *cm, const void *data, size_t len);

/* FDM_OP_RMA_EVENT's tag values */
#define FDM_EV_WRITE	1
#define FDM_EV_READ	2

struct fdm_hdr {
	uint8_t op;
	uint8_t flags;
	uint32_t conn_id;	/* the receiver's id of the connection */
	uint64_t tag;
	uint64_t data;
	uint64_t size;
	uint64_t ack_id;	/* FDM_HF_ACK: after the header, on the wire */
};

/* Writes the header, and with FDM_HF_ACK the request id behind it
 * (FDM_HDR_LEN + FDM_ACK_ID_LEN bytes then). */
void fdm_hdr_encode(uint8_t *out, const struct fdm_hdr *h);
/* The connection id is known only once the connection is up: it is
 * written into an encoded header when the message is posted. */
void fdm_hdr_set_conn(uint8_t *hdr, uint32_t conn_id);
/* Validate a received message of len bytes (eager_max: the pool's
 * payload room); 0 or -FI_EINVAL. */
int fdm_hdr_decode(struct fdm_hdr *h, const uint8_t *in, size_t len,
		   size_t eager_max);

#define FDM_RNDV_IOV_MAX	4u

/* The rendezvous payload: where the sender's data can be read. */
struct fdm_rndv_info {
	uint64_t req_id;
	uint32_t count;
	struct {
		uint64_t addr, len;
		uint32_t key;
	} iov[FDM_RNDV_IOV_MAX];
};

size_t fdm_rndv_encode(uint8_t *out, const struct fdm_rndv_info *ri);
/* Validate against the header's total size; 0 or -FI_EINVAL. */
int fdm_rndv_decode(struct fdm_rndv_info *ri, const uint8_t *in, size_t len,
		    uint64_t total);

/* The atomic request's payload (FDM_OP_ATOMIC_REQ): a 24-byte
 * descriptor, then the operand (count elements; none for
 * FI_ATOMIC_READ), then for the compare family the compare data. */
#define FDM_ATOMIC_DESC_LEN	24u

struct fdm_atomic_req {
	uint8_t kind;		/* enum fdm_atomic_kind (fdm_atomic.h) */
	uint8_t op;		/* enum fi_op */
	uint8_t dt;		/* enum fi_datatype */
	uint32_t count;		/* elements */
	uint64_t addr;		/* the target's virtual address (FI_MR_VIRT_ADDR) */
	uint64_t key;
	/* decode: inside the message, in wire byte order */
	uint8_t *operand;	/* NULL for FI_ATOMIC_READ */
	uint8_t *compare;	/* FDM_AK_COMPARE only */
};

/* The descriptor; the caller puts the data behind it. */
void fdm_atomic_req_encode(uint8_t *out, const struct fdm_atomic_req *r);
/* Validate a request's payload of len bytes: kind, operation and datatype
 * known and valid together, count within fdm_atomic_max_count, len exactly
 * the descriptor and the data they imply; 0 or -FI_EINVAL. */
int fdm_atomic_req_decode(struct fdm_atomic_req *r, uint8_t *in, size_t len);

#endif /* FDM_PROTO_H */
