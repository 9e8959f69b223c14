/* rstream wire protocol: blob and message codecs, flow bookkeeping. Pure
 * functions over plain integers (see fdr_proto.h); compiled into the
 * library and, on their own, into the host tests and the fuzzers. */
#include <string.h>

#include "fdr_proto.h"
#include "fd_util.h"

const char *fdr_bad_str(int why)
{
	switch (why) {
	case FDR_OK:			return "ok";
	case FDR_BAD_SHORT:		return "too short";
	case FDR_BAD_VERSION:		return "unknown protocol version";
	case FDR_BAD_FLAGS:		return "unknown flags";
	case FDR_BAD_RING:		return "ring size out of range";
	case FDR_BAD_CREDITS:		return "credit count out of range";
	case FDR_BAD_KEY:		return "remote key wider than 32 bits";
	case FDR_BAD_ADDR:		return "bad ring address";
	case FDR_BAD_KIND:		return "unexpected kind of message";
	case FDR_BAD_WORD:		return "malformed message word";
	case FDR_BAD_OVERRUN:		return "data beyond the free rx ring space";
	case FDR_BAD_CREDIT_RETURN:	return "more credits returned than used";
	case FDR_BAD_FREED:		return "more bytes freed than written";
	case FDR_BAD_AFTER_FIN:		return "message after end of stream";
	default:			return "unknown reason";
	}
}

void fdr_blob_encode(uint8_t out[FDR_BLOB_LEN], const struct fdr_blob *b)
{
	fd_put_be64(out, b->ring_addr);
	fd_put_be64(out + 8, b->rkey);
	fd_put_be32(out + 16, b->ring_size);
	fd_put_be16(out + 20, b->credits);
	out[22] = b->version;
	out[23] = b->flags;
}

int fdr_blob_decode(struct fdr_blob *b, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	memset(b, 0, sizeof(*b));
	if (!p || len < FDR_BLOB_LEN)
		return FDR_BAD_SHORT;
	b->ring_addr = fd_get_be64(p);
	b->rkey = fd_get_be64(p + 8);
	b->ring_size = fd_get_be32(p + 16);
	b->credits = fd_get_be16(p + 20);
	b->version = p[22];
	b->flags = p[23];
	/* The version first: a later protocol may lay out the rest
	 * differently, and is refused as such, not as garbage. */
	if (b->version != FDR_PROTO_VERSION)
		return FDR_BAD_VERSION;
	if (b->flags & ~FDR_BLOB_FLAG_IWARP)
		return FDR_BAD_FLAGS;
	if (b->ring_size < FDR_RING_MIN || b->ring_size > FDR_RING_MAX)
		return FDR_BAD_RING;
	if (b->credits < FDR_CREDITS_MIN)
		return FDR_BAD_CREDITS;
	if (b->rkey > UINT32_MAX)
		return FDR_BAD_KEY;
	if (!b->ring_addr || b->ring_addr > UINT64_MAX - b->ring_size)
		return FDR_BAD_ADDR;
	return FDR_OK;
}

/* ---- message words ---- */

uint32_t fdr_word_ctrl(uint32_t credits, uint32_t bytes, int fin)
{
	return (fin ? FDR_W_FIN : 0) |
	       (credits & FDR_W_CREDIT_MAX) << FDR_W_CREDIT_SHIFT |
	       (bytes & FDR_W_BYTES_MAX);
}

uint32_t fdr_word_data(uint32_t len)
{
	return FDR_W_DATA | (len & FDR_W_LEN_MAX);
}

static int decode_ctrl(struct fdr_msg *m, uint32_t word)
{
	if (word & (FDR_W_DATA | FDR_W_RESERVED))
		return FDR_BAD_WORD;
	m->fin = (word & FDR_W_FIN) != 0;
	m->credits = (word >> FDR_W_CREDIT_SHIFT) & FDR_W_CREDIT_MAX;
	m->bytes = word & FDR_W_BYTES_MAX;
	return FDR_OK;
}

int fdr_msg_decode(struct fdr_msg *m, int iwarp, enum fdr_rx_kind kind,
		   uint32_t byte_len, uint32_t word)
{
	memset(m, 0, sizeof(*m));
	switch (kind) {
	case FDR_RX_WRITE_IMM:
		/* Data; the immediate is reserved and must be 0. */
		if (iwarp)
			return FDR_BAD_KIND;
		if (word || !byte_len || byte_len > FDR_W_LEN_MAX)
			return FDR_BAD_WORD;
		m->len = byte_len;
		return FDR_OK;
	case FDR_RX_SEND_IMM:
		if (iwarp || byte_len)
			return FDR_BAD_KIND;
		return decode_ctrl(m, word);
	case FDR_RX_SEND:
		if (!iwarp || byte_len != 4)
			return FDR_BAD_KIND;
		if (word & FDR_W_DATA) {
			m->len = word & FDR_W_LEN_MAX;
			return m->len ? FDR_OK : FDR_BAD_WORD;
		}
		return decode_ctrl(m, word);
	default:
		return FDR_BAD_KIND;
	}
}

/* ---- flow ---- */

void fdr_flow_init(struct fdr_flow *f, uint32_t tx_ring, uint32_t rx_ring,
		   uint32_t rx_credits, const struct fdr_blob *peer)
{
	memset(f, 0, sizeof(*f));
	f->tx_ring = tx_ring;
	f->rx_ring = rx_ring;
	f->rx_credits = rx_credits;
	f->peer_ring = peer->ring_size;
	f->peer_credits = peer->credits;
	f->credits = peer->credits;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t fdr_flow_tx_room(const struct fdr_flow *f)
{
	uint64_t tx_free = f->tx_ring - (f->tx_pos - f->tx_done);
	uint64_t peer_free = f->peer_ring - (f->tx_pos - f->peer_freed);

	return min64(tx_free, peer_free);
}

uint32_t fdr_flow_tx_piece(const struct fdr_flow *f, size_t want,
			   uint32_t *tx_off, uint32_t *peer_off)
{
	uint64_t n = min64(want, fdr_flow_tx_room(f));

	*tx_off = (uint32_t)(f->tx_pos % f->tx_ring);
	*peer_off = (uint32_t)(f->tx_pos % f->peer_ring);
	n = min64(n, f->tx_ring - *tx_off);
	n = min64(n, f->peer_ring - *peer_off);
	/* Pieces of a quarter ring at most: the receiver can read (and
	 * report) the first while the next are on the wire, instead of
	 * waiting for one write as big as its ring. */
	n = min64(n, f->peer_ring / FDR_PIECE_DIV);
	return (uint32_t)n;
}

int fdr_flow_data_ok(const struct fdr_flow *f)
{
	return !f->fin_sent && f->credits > FDR_RESERVED_CREDITS;
}

void fdr_flow_tx_commit(struct fdr_flow *f, uint32_t len)
{
	f->tx_pos += len;
	f->credits--;
}

int fdr_flow_tx_complete(struct fdr_flow *f, uint32_t len)
{
	if (len > f->tx_pos - f->tx_done)
		return -1;
	f->tx_done += len;
	return 0;
}

static uint32_t half(uint32_t v)
{
	return v / 2 ? v / 2 : 1;
}

int fdr_flow_ctrl_due(const struct fdr_flow *f)
{
	if (f->fin_sent || f->fin_rcvd)
		return 0;	/* the stream is ending: nobody needs credits */
	return f->owed >= half(f->rx_credits) ||
	       f->rx_read - f->rx_reported >= f->rx_ring / FDR_REPORT_DIV;
}

int fdr_flow_ctrl_ok(const struct fdr_flow *f, int fin)
{
	if (f->fin_sent)
		return 0;
	if (fin)
		return f->credits >= 1;
	return f->credits >= 2 || (f->credits == 1 && f->owed >= 1);
}

uint32_t fdr_flow_ctrl_take(struct fdr_flow *f, int fin)
{
	uint32_t c = f->owed < FDR_W_CREDIT_MAX ? f->owed : FDR_W_CREDIT_MAX;
	uint64_t unreported = f->rx_read - f->rx_reported;
	uint32_t b = (uint32_t)min64(unreported, FDR_W_BYTES_MAX);

	f->owed -= c;
	f->rx_reported += b;
	f->credits--;
	if (fin)
		f->fin_sent = 1;
	return fdr_word_ctrl(c, b, fin);
}

int fdr_flow_rx_apply(struct fdr_flow *f, const struct fdr_msg *m)
{
	if (f->fin_rcvd)
		return FDR_BAD_AFTER_FIN;
	if (m->len) {
		/* The peer may fill exactly what we last reported free. */
		if (f->rx_arrived - f->rx_reported + m->len > f->rx_ring)
			return FDR_BAD_OVERRUN;
		f->rx_arrived += m->len;
	} else {
		if ((uint64_t)f->credits + m->credits > f->peer_credits)
			return FDR_BAD_CREDIT_RETURN;
		if (m->bytes > f->tx_pos - f->peer_freed)
			return FDR_BAD_FREED;
		f->credits += m->credits;
		f->peer_freed += m->bytes;
		if (m->fin)
			f->fin_rcvd = 1;
	}
	f->owed++;
	return FDR_OK;
}

uint64_t fdr_flow_rx_avail(const struct fdr_flow *f)
{
	return f->rx_arrived - f->rx_read;
}

uint32_t fdr_flow_rx_off(const struct fdr_flow *f)
{
	return (uint32_t)(f->rx_read % f->rx_ring);
}

void fdr_flow_rx_consume(struct fdr_flow *f, size_t n)
{
	f->rx_read += n;
}

void fdr_ring_put(uint8_t *ring, uint32_t ring_size, uint32_t off,
		  const void *src, size_t n)
{
	size_t first = ring_size - off < n ? ring_size - off : n;

	memcpy(ring + off, src, first);
	if (n > first)
		memcpy(ring, (const uint8_t *)src + first, n - first);
}

void fdr_ring_get(const uint8_t *ring, uint32_t ring_size, uint32_t off,
		  void *dst, size_t n)
{
	size_t first = ring_size - off < n ? ring_size - off : n;

	memcpy(dst, ring + off, first);
	if (n > first)
		memcpy((uint8_t *)dst + first, ring, n - first);
}
