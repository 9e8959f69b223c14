/* The rstream wire protocol and its bookkeeping, as pure functions: no
 * verbs, no locks, no allocation. Everything that decides what a peer may
 * do, or what a byte count means, lives here so that host unit tests and a
 * fuzzer can drive it without a device. docs/rstream-protocol.md is the
 * prose version of this file. */
#ifndef FDR_PROTO_H
#define FDR_PROTO_H

#include <stddef.h>
#include <stdint.h>

/* ---- connect-time blob (CM private data, network byte order) ---- */

#define FDR_PROTO_VERSION	2
#define FDR_BLOB_LEN		24
/* Byte 23 (reserved in upstream's layout) carries flags; the only one
 * says the sender frames data the iWARP way. Both ends must agree. */
#define FDR_BLOB_FLAG_IWARP	0x01

/* What a peer may announce. Ring sizes bound the arithmetic below (1 GiB
 * keeps every offset and every iWARP length in 31 bits); credits need room
 * for the two reserved for control messages plus at least two for data. */
#define FDR_RING_MIN		1024u
#define FDR_RING_MAX		(1u << 30)
#define FDR_CREDITS_MIN		4u

struct fdr_blob {
	uint64_t ring_addr;	/* virtual address of the sender's rx ring */
	uint64_t rkey;		/* its remote key (verbs keys are 32 bits) */
	uint32_t ring_size;	/* bytes */
	uint16_t credits;	/* receives the sender keeps posted */
	uint8_t version;
	uint8_t flags;
};

/* Reasons a blob or a message is refused, 0 when accepted. */
enum fdr_bad {
	FDR_OK = 0,
	FDR_BAD_SHORT,		/* fewer bytes than the layout needs */
	FDR_BAD_VERSION,
	FDR_BAD_FLAGS,
	FDR_BAD_RING,		/* ring size out of range */
	FDR_BAD_CREDITS,
	FDR_BAD_KEY,
	FDR_BAD_ADDR,		/* null, or the ring would wrap the address space */
	FDR_BAD_KIND,		/* a completion the protocol never produces */
	FDR_BAD_WORD,		/* reserved bits set, or an empty data message */
	FDR_BAD_OVERRUN,	/* data beyond the space we had reported free */
	FDR_BAD_CREDIT_RETURN,	/* more credits back than we had used */
	FDR_BAD_FREED,		/* more bytes freed than we had written */
	FDR_BAD_AFTER_FIN,	/* anything after the end of the stream */
};

const char *fdr_bad_str(int why);

void fdr_blob_encode(uint8_t out[FDR_BLOB_LEN], const struct fdr_blob *b);
/* Decodes the first FDR_BLOB_LEN bytes of buf (len may be larger: user CM
 * data follows) and validates every field. */
int fdr_blob_decode(struct fdr_blob *b, const void *buf, size_t len);

/* ---- data-path messages: one 32-bit word ----
 *
 *   bit 31     DATA: iWARP framing only; bits 0..30 are a length
 *   bit 30     FIN: the sender's stream ends here
 *   bit 29     reserved, 0
 *   bits 20-28 credits returned (receives reposted since the last report)
 *   bits 0-19  bytes freed in the rx ring (read by the application)
 *
 * RoCE carries data as an RDMA write with immediate (immediate 0, the
 * completion's byte count is the length) and the other words as the
 * immediate of a zero-byte send. iWARP has no immediate data: data is a
 * plain RDMA write followed by a 4-byte send of DATA | length, and control
 * words are 4-byte sends. */
#define FDR_W_DATA		(1u << 31)
#define FDR_W_FIN		(1u << 30)
#define FDR_W_RESERVED		(1u << 29)
#define FDR_W_CREDIT_SHIFT	20
#define FDR_W_CREDIT_MAX	511u
#define FDR_W_BYTES_MAX		((1u << 20) - 1)
#define FDR_W_LEN_MAX		(FDR_W_DATA - 1)

/* How a message arrived, from the receive completion. */
enum fdr_rx_kind {
	FDR_RX_WRITE_IMM,	/* RDMA write with immediate */
	FDR_RX_SEND_IMM,	/* send with immediate */
	FDR_RX_SEND,		/* send without immediate, payload in a slot */
};

struct fdr_msg {
	uint32_t len;		/* data bytes now readable, 0 for control */
	uint32_t credits;
	uint32_t bytes;
	int fin;
};

/* word: the immediate (host order) or, for FDR_RX_SEND, the payload's
 * first four bytes read big-endian; byte_len: the completion's length. */
int fdr_msg_decode(struct fdr_msg *m, int iwarp, enum fdr_rx_kind kind,
		   uint32_t byte_len, uint32_t word);
uint32_t fdr_word_ctrl(uint32_t credits, uint32_t bytes, int fin);
uint32_t fdr_word_data(uint32_t len);

/* ---- flow state of one connection ----
 *
 * Positions count bytes since the connection started (64 bits never wrap
 * in practice); ring offsets are positions modulo the ring size. The
 * sender writes stream byte p at offset p % peer_ring of the peer's rx ring
 * and stages it at p % tx_ring of its own tx ring; RC delivers writes in
 * order, so the receiver's arrived count is the sender's position. */

/* Credits a data message may not use: they are kept for control messages,
 * so credit returns and FIN can always be sent. */
#define FDR_RESERVED_CREDITS	2u

/* Writes are at most a 1/FDR_PIECE_DIV of the peer's ring, and freed ring
 * space is reported once 1/FDR_REPORT_DIV of the ring is free: the window
 * keeps moving instead of stopping and starting a ring at a time. */
#define FDR_PIECE_DIV		4u
#define FDR_REPORT_DIV		4u

struct fdr_flow {
	/* sending */
	uint64_t tx_pos;	/* bytes written to the peer */
	uint64_t tx_done;	/* ... whose writes completed: ring space free */
	uint64_t peer_freed;	/* bytes the peer reported read */
	uint32_t tx_ring;
	uint32_t peer_ring;
	uint32_t credits;	/* peer receives we may still consume */
	uint32_t peer_credits;	/* the peer's total (from its blob) */
	int fin_sent;
	/* receiving */
	uint64_t rx_arrived;	/* bytes the peer wrote into our rx ring */
	uint64_t rx_read;	/* ... the application took */
	uint64_t rx_reported;	/* ... we told the peer about */
	uint32_t rx_ring;
	uint32_t rx_credits;	/* receives we keep posted */
	uint32_t owed;		/* receives consumed and reposted, unreported */
	int fin_rcvd;
};

void fdr_flow_init(struct fdr_flow *f, uint32_t tx_ring, uint32_t rx_ring,
		   uint32_t rx_credits, const struct fdr_blob *peer);

/* Largest piece of at most `want` bytes that can be written now as one
 * RDMA write: within tx ring space, within the space the peer reported
 * free, contiguous in both rings. 0 when nothing can go. Credits are not
 * looked at (fdr_flow_data_ok). */
uint32_t fdr_flow_tx_piece(const struct fdr_flow *f, size_t want,
			   uint32_t *tx_off, uint32_t *peer_off);
/* Bytes a send could accept now, ignoring contiguity and credits. */
uint64_t fdr_flow_tx_room(const struct fdr_flow *f);
int fdr_flow_data_ok(const struct fdr_flow *f);
void fdr_flow_tx_commit(struct fdr_flow *f, uint32_t len);
/* A write of len bytes completed; 0, or -1 if that is more than was sent. */
int fdr_flow_tx_complete(struct fdr_flow *f, uint32_t len);

/* Control messages: due when half the receive credits or half the rx
 * ring wait to be reported; allowed while credits last, the last credit
 * only for a message that returns credits (that is what keeps the two
 * sides from both running dry), FIN with any credit. */
int fdr_flow_ctrl_due(const struct fdr_flow *f);
int fdr_flow_ctrl_ok(const struct fdr_flow *f, int fin);
/* Build the next control word and account for it (consumes a credit). */
uint32_t fdr_flow_ctrl_take(struct fdr_flow *f, int fin);

/* Account for a decoded message; FDR_OK or why it breaks the protocol.
 * Counts the receive it consumed as owed (the caller reposts it). */
int fdr_flow_rx_apply(struct fdr_flow *f, const struct fdr_msg *m);
uint64_t fdr_flow_rx_avail(const struct fdr_flow *f);
uint32_t fdr_flow_rx_off(const struct fdr_flow *f);
void fdr_flow_rx_consume(struct fdr_flow *f, size_t n);

/* Copy n bytes between a ring of ring_size bytes at offset off and a flat
 * buffer, wrapping at the end of the ring. */
void fdr_ring_put(uint8_t *ring, uint32_t ring_size, uint32_t off,
		  const void *src, size_t n);
void fdr_ring_get(const uint8_t *ring, uint32_t ring_size, uint32_t off,
		  void *dst, size_t n);

#endif /* FDR_PROTO_H */
