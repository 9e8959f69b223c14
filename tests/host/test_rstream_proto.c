/*
 * rstream protocol logic without a device (prov_verbs/rstream/fdr_proto.c):
 * the connect-time blob and message-word codecs, ring copies, and a
 * simulation of two endpoints talking through in-order queues with random
 * scheduling, random write and read sizes, unequal and tiny rings, both
 * framings, a slow reader and an orderly end. The simulation checks every
 * byte, that no side ever overruns the other's ring or receive queue, and
 * that the two sides never deadlock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdr_proto.h"
#include "fdt_check.h"

/* ---- blob ---- */

static struct fdr_blob good_blob(void)
{
	struct fdr_blob b = {
		.ring_addr = 0x7f0012345000ull, .rkey = 0x1234,
		.ring_size = 32768, .credits = 384,
		.version = FDR_PROTO_VERSION, .flags = 0,
	};
	return b;
}

static int decode_modified(struct fdr_blob b)
{
	uint8_t wire[FDR_BLOB_LEN];
	struct fdr_blob out;

	fdr_blob_encode(wire, &b);
	return fdr_blob_decode(&out, wire, sizeof(wire));
}

static void test_blob(void)
{
	struct fdr_blob b = good_blob(), out, t;
	uint8_t wire[FDR_BLOB_LEN + 8];
	static const uint8_t expect[FDR_BLOB_LEN] = {
		0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x50, 0x00,	/* address */
		0, 0, 0, 0, 0, 0, 0x12, 0x34,			/* rkey */
		0x00, 0x00, 0x80, 0x00,				/* 32768 */
		0x01, 0x80,					/* 384 */
		2, 0,						/* version, flags */
	};

	fdr_blob_encode(wire, &b);
	CHECK(!memcmp(wire, expect, sizeof(expect)), "wire layout (network order)");
	memset(wire + FDR_BLOB_LEN, 0xee, 8);	/* user data follows */
	CHECK(fdr_blob_decode(&out, wire, sizeof(wire)) == FDR_OK, "decode");
	CHECK(!memcmp(&out, &b, sizeof(b)), "round trip");
	CHECK(fdr_blob_decode(&out, wire, FDR_BLOB_LEN - 1) == FDR_BAD_SHORT, "short");
	CHECK(fdr_blob_decode(&out, NULL, 100) == FDR_BAD_SHORT, "NULL");

	t = b; t.version = 1;
	CHECK(decode_modified(t) == FDR_BAD_VERSION, "version 1");
	t = b; t.version = 3;
	CHECK(decode_modified(t) == FDR_BAD_VERSION, "version 3");
	t = b; t.flags = 0x02;
	CHECK(decode_modified(t) == FDR_BAD_FLAGS, "unknown flag");
	t = b; t.flags = FDR_BLOB_FLAG_IWARP;
	CHECK(decode_modified(t) == FDR_OK, "iwarp flag");
	t = b; t.ring_size = FDR_RING_MIN - 1;
	CHECK(decode_modified(t) == FDR_BAD_RING, "ring too small");
	t = b; t.ring_size = FDR_RING_MAX + 1;
	CHECK(decode_modified(t) == FDR_BAD_RING, "ring too big");
	t = b; t.ring_size = 0;
	CHECK(decode_modified(t) == FDR_BAD_RING, "ring 0");
	t = b; t.ring_size = FDR_RING_MIN;
	CHECK(decode_modified(t) == FDR_OK, "smallest ring");
	t = b; t.ring_size = FDR_RING_MAX;
	CHECK(decode_modified(t) == FDR_OK, "largest ring");
	t = b; t.credits = FDR_CREDITS_MIN - 1;
	CHECK(decode_modified(t) == FDR_BAD_CREDITS, "too few credits");
	t = b; t.credits = 0xffff;
	CHECK(decode_modified(t) == FDR_OK, "most credits");
	t = b; t.rkey = 1ull << 32;
	CHECK(decode_modified(t) == FDR_BAD_KEY, "64-bit key");
	t = b; t.ring_addr = 0;
	CHECK(decode_modified(t) == FDR_BAD_ADDR, "null address");
	t = b; t.ring_addr = UINT64_MAX - 100;
	CHECK(decode_modified(t) == FDR_BAD_ADDR, "address wraps");
	t = b; t.ring_addr = UINT64_MAX - t.ring_size;
	CHECK(decode_modified(t) == FDR_OK, "address at the top");
	for (int w = FDR_OK; w <= FDR_BAD_AFTER_FIN + 1; w++)
		CHECK(fdr_bad_str(w) && *fdr_bad_str(w), "reason %d has a text", w);
}

/* ---- message words ---- */

static void test_words(void)
{
	struct fdr_msg m;

	/* RoCE framing */
	CHECK(fdr_msg_decode(&m, 0, FDR_RX_WRITE_IMM, 100, 0) == FDR_OK &&
	      m.len == 100 && !m.fin, "data");
	CHECK(fdr_msg_decode(&m, 0, FDR_RX_WRITE_IMM, 0, 0) == FDR_BAD_WORD, "empty data");
	CHECK(fdr_msg_decode(&m, 0, FDR_RX_WRITE_IMM, 10, 5) == FDR_BAD_WORD, "data imm");
	CHECK(fdr_msg_decode(&m, 0, FDR_RX_WRITE_IMM, FDR_W_DATA, 0) == FDR_BAD_WORD,
	      "data over 2 GiB");
	CHECK(fdr_msg_decode(&m, 0, FDR_RX_SEND_IMM, 0, fdr_word_ctrl(511, FDR_W_BYTES_MAX, 1)) == FDR_OK &&
	      m.credits == 511 && m.bytes == FDR_W_BYTES_MAX && m.fin && !m.len, "ctrl max");
	CHECK(fdr_msg_decode(&m, 0, FDR_RX_SEND_IMM, 0, fdr_word_ctrl(3, 4096, 0)) == FDR_OK &&
	      m.credits == 3 && m.bytes == 4096 && !m.fin, "ctrl");
	CHECK(fdr_msg_decode(&m, 0, FDR_RX_SEND_IMM, 4, 0) == FDR_BAD_KIND, "ctrl with payload");
	CHECK(fdr_msg_decode(&m, 0, FDR_RX_SEND_IMM, 0, FDR_W_RESERVED) == FDR_BAD_WORD, "reserved bit");
	CHECK(fdr_msg_decode(&m, 0, FDR_RX_SEND_IMM, 0, FDR_W_DATA | 5) == FDR_BAD_WORD,
	      "iWARP data word on RoCE");
	CHECK(fdr_msg_decode(&m, 0, FDR_RX_SEND, 4, 0) == FDR_BAD_KIND, "plain send on RoCE");
	/* iWARP framing */
	CHECK(fdr_msg_decode(&m, 1, FDR_RX_SEND, 4, fdr_word_data(777)) == FDR_OK &&
	      m.len == 777, "iwarp data");
	CHECK(fdr_msg_decode(&m, 1, FDR_RX_SEND, 4, FDR_W_DATA) == FDR_BAD_WORD, "iwarp empty data");
	CHECK(fdr_msg_decode(&m, 1, FDR_RX_SEND, 4, fdr_word_ctrl(9, 1, 0)) == FDR_OK &&
	      m.credits == 9 && m.bytes == 1, "iwarp ctrl");
	CHECK(fdr_msg_decode(&m, 1, FDR_RX_SEND, 3, 0) == FDR_BAD_KIND, "iwarp short");
	CHECK(fdr_msg_decode(&m, 1, FDR_RX_SEND, 8, 0) == FDR_BAD_KIND, "iwarp long");
	CHECK(fdr_msg_decode(&m, 1, FDR_RX_WRITE_IMM, 8, 0) == FDR_BAD_KIND, "imm on iwarp");
	CHECK(fdr_msg_decode(&m, 1, FDR_RX_SEND_IMM, 0, 0) == FDR_BAD_KIND, "imm on iwarp");
	CHECK(fdr_msg_decode(&m, 0, (enum fdr_rx_kind)42, 0, 0) == FDR_BAD_KIND, "bad kind");
	CHECK(fdr_word_ctrl(512, 0, 0) == 0, "credits are 9 bits");
}

/* ---- flow rules on their own ---- */

static void test_flow_rules(void)
{
	struct fdr_blob peer = good_blob();
	struct fdr_flow f;
	struct fdr_msg m;
	uint32_t toff, poff, n, w;

	peer.ring_size = 16384;
	peer.credits = 8;
	fdr_flow_init(&f, 3000, 2048, 6, &peer);
	CHECK(f.credits == 8 && fdr_flow_data_ok(&f), "initial credits");
	/* contiguity in both rings, a quarter of the peer's ring at most */
	n = fdr_flow_tx_piece(&f, 10000, &toff, &poff);
	CHECK(n == 3000 && toff == 0 && poff == 0, "first piece %u", n);
	fdr_flow_tx_commit(&f, n);
	n = fdr_flow_tx_piece(&f, 10000, &toff, &poff);
	CHECK(n == 0, "tx ring full: %u", n);
	CHECK(fdr_flow_tx_complete(&f, 3000) == 0, "complete");
	CHECK(fdr_flow_tx_complete(&f, 1) == -1, "over-complete");
	n = fdr_flow_tx_piece(&f, 10000, &toff, &poff);
	CHECK(n == 3000 && toff == 0 && poff == 3000, "tx ring wrapped %u %u %u", n, toff, poff);
	fdr_flow_tx_commit(&f, 500);
	n = fdr_flow_tx_piece(&f, 10000, &toff, &poff);
	CHECK(n == 2500 && toff == 500 && poff == 3500, "tx space left %u %u %u", n, toff, poff);
	n = fdr_flow_tx_piece(&f, 7, &toff, &poff);
	CHECK(n == 7, "what was asked %u", n);
	{
		struct fdr_flow g;

		fdr_flow_init(&g, 65536, 2048, 6, &peer);
		g.tx_pos = g.tx_done = g.peer_freed = 16000;
		n = fdr_flow_tx_piece(&g, 10000, &toff, &poff);
		CHECK(n == 384 && toff == 16000 && poff == 16000, "peer ring end %u", n);
		g.tx_pos = g.tx_done = g.peer_freed = 16384;
		n = fdr_flow_tx_piece(&g, 10000, &toff, &poff);
		CHECK(n == 4096 && poff == 0, "quarter of the peer ring %u", n);
		g.peer_freed = 0;	/* nothing read over there yet */
		n = fdr_flow_tx_piece(&g, 10000, &toff, &poff);
		CHECK(n == 0, "peer ring full %u", n);
		g.peer_freed = 10;
		n = fdr_flow_tx_piece(&g, 10000, &toff, &poff);
		CHECK(n == 10, "ten bytes free %u", n);
	}
	/* credits: 6 left, data stops at the reserve */
	fdr_flow_tx_commit(&f, 1);
	fdr_flow_tx_commit(&f, 1);
	fdr_flow_tx_commit(&f, 1);
	CHECK(f.credits == 3 && fdr_flow_data_ok(&f), "3 credits");
	fdr_flow_tx_commit(&f, 1);
	CHECK(f.credits == FDR_RESERVED_CREDITS && !fdr_flow_data_ok(&f), "reserve");
	CHECK(fdr_flow_ctrl_ok(&f, 0), "control may use the reserve");
	f.credits = 1;
	CHECK(!fdr_flow_ctrl_ok(&f, 0), "last credit only returns credits");
	f.owed = 1;
	CHECK(fdr_flow_ctrl_ok(&f, 0), "last credit returning one");
	CHECK(fdr_flow_ctrl_ok(&f, 1), "FIN takes any credit");
	f.credits = 0;
	CHECK(!fdr_flow_ctrl_ok(&f, 1) && !fdr_flow_ctrl_ok(&f, 0), "no credit");
	/* returning credits and bytes */
	f.credits = 2;
	m = (struct fdr_msg){ .credits = 6 };
	CHECK(fdr_flow_rx_apply(&f, &m) == FDR_OK && f.credits == 8, "credits back");
	m = (struct fdr_msg){ .credits = 1 };
	CHECK(fdr_flow_rx_apply(&f, &m) == FDR_BAD_CREDIT_RETURN, "too many credits");
	m = (struct fdr_msg){ .bytes = 3504 };
	CHECK(fdr_flow_rx_apply(&f, &m) == FDR_OK && f.peer_freed == 3504, "bytes freed");
	m = (struct fdr_msg){ .bytes = 1 };
	CHECK(fdr_flow_rx_apply(&f, &m) == FDR_BAD_FREED, "freed beyond sent");
	/* receiving: exactly the reported space may be filled */
	m = (struct fdr_msg){ .len = 2048 };
	CHECK(fdr_flow_rx_apply(&f, &m) == FDR_OK, "fill");
	m = (struct fdr_msg){ .len = 1 };
	CHECK(fdr_flow_rx_apply(&f, &m) == FDR_BAD_OVERRUN, "overrun");
	fdr_flow_rx_consume(&f, 1500);
	CHECK(fdr_flow_rx_apply(&f, &m) == FDR_BAD_OVERRUN, "read but not reported");
	CHECK(fdr_flow_ctrl_due(&f), "due: a quarter of the ring read");
	w = fdr_flow_ctrl_take(&f, 0);
	/* the one owed above plus three accepted messages (refused ones
	 * count for nothing) */
	CHECK(((w >> FDR_W_CREDIT_SHIFT) & FDR_W_CREDIT_MAX) == 4 &&
	      (w & FDR_W_BYTES_MAX) == 1500, "ctrl word 0x%x", w);
	CHECK(f.owed == 0 && f.rx_reported == 1500 && !fdr_flow_ctrl_due(&f), "reported");
	CHECK(fdr_flow_rx_apply(&f, &m) == FDR_OK, "space after report");
	m = (struct fdr_msg){ .fin = 1 };
	CHECK(fdr_flow_rx_apply(&f, &m) == FDR_OK && f.fin_rcvd, "fin");
	CHECK(fdr_flow_rx_apply(&f, &m) == FDR_BAD_AFTER_FIN, "after fin");
	CHECK(!fdr_flow_ctrl_due(&f), "no credits after the end");
	/* a large backlog is reported in bounded pieces */
	fdr_flow_init(&f, 4096, FDR_RING_MAX, 2000, &peer);
	f.owed = 1500;
	f.rx_arrived = f.rx_read = 3u << 20;
	w = fdr_flow_ctrl_take(&f, 0);
	CHECK(((w >> FDR_W_CREDIT_SHIFT) & FDR_W_CREDIT_MAX) == FDR_W_CREDIT_MAX &&
	      (w & FDR_W_BYTES_MAX) == FDR_W_BYTES_MAX, "capped word");
	CHECK(f.owed == 1500 - FDR_W_CREDIT_MAX && f.rx_reported == FDR_W_BYTES_MAX, "rest kept");
}

static void test_ring_copy(void)
{
	uint8_t ring[16], out[16], in[16];

	for (int i = 0; i < 16; i++)
		in[i] = (uint8_t)(i + 1);
	memset(ring, 0, sizeof(ring));
	fdr_ring_put(ring, 16, 12, in, 10);
	CHECK(ring[12] == 1 && ring[15] == 4 && ring[0] == 5 && ring[5] == 10 && ring[6] == 0,
	      "wrapping put");
	fdr_ring_get(ring, 16, 12, out, 10);
	CHECK(!memcmp(out, in, 10), "wrapping get");
	fdr_ring_get(ring, 16, 0, out, 16);
	CHECK(out[0] == 5, "get from 0");
}

/* ---- two simulated endpoints ---- */

static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

static uint8_t stream_byte(int dir, uint64_t pos)
{
	uint64_t x = (pos + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)dir << 61;

	return (uint8_t)(x >> 56 ^ x >> 24);
}

enum { M_WRITE, M_WRITE_IMM, M_SEND_IMM, M_SEND };

struct wire_msg {
	int kind;
	uint32_t len, tx_off, peer_off, word;
};

#define QMAX 65536

struct sim_ep {
	int dir;			/* 0: A, 1: B */
	struct fdr_flow f;
	uint8_t *tx, *rx;
	uint32_t rx_posted;		/* receives posted */
	uint32_t sq_free, sq_depth;
	uint32_t comp_len[QMAX];	/* send completions pending, in order */
	uint32_t comp_head, comp_tail;
	struct wire_msg q[QMAX];	/* to the peer, in order */
	uint32_t q_head, q_tail;
	int iwarp;
	uint64_t want_send;		/* bytes the application still sends */
	int reader_paused;
	int fin_wanted;
	int broken;
};

static void sim_post(struct sim_ep *e, struct wire_msg m, uint32_t comp)
{
	CHECK(e->sq_free > 0, "send queue overflow");
	CHECK(e->q_tail - e->q_head < QMAX, "wire queue full");
	e->sq_free--;
	e->q[e->q_tail++ % QMAX] = m;
	e->comp_len[e->comp_tail++ % QMAX] = comp;
}

static void sim_flush_ctrl(struct sim_ep *e, int fin)
{
	while (e->sq_free > 0 && fdr_flow_ctrl_ok(&e->f, fin) &&
	       (fin || fdr_flow_ctrl_due(&e->f))) {
		struct wire_msg m = { .kind = e->iwarp ? M_SEND : M_SEND_IMM };

		m.word = fdr_flow_ctrl_take(&e->f, fin);
		sim_post(e, m, 0);
		if (fin)
			break;
	}
}

static void sim_send(struct sim_ep *e, uint64_t want)
{
	uint32_t need = e->iwarp ? 2 : 1;

	if (want > e->want_send)
		want = e->want_send;

	while (want && fdr_flow_data_ok(&e->f) && e->sq_free > need) {
		uint32_t toff, poff, n = fdr_flow_tx_piece(&e->f, want, &toff, &poff);

		if (!n)
			break;
		for (uint32_t i = 0; i < n; i++)
			e->tx[toff + i] = stream_byte(e->dir, e->f.tx_pos + i);
		if (e->iwarp) {
			sim_post(e, (struct wire_msg){ .kind = M_WRITE, .len = n,
				 .tx_off = toff, .peer_off = poff }, n);
			sim_post(e, (struct wire_msg){ .kind = M_SEND,
				 .word = fdr_word_data(n) }, 0);
		} else {
			sim_post(e, (struct wire_msg){ .kind = M_WRITE_IMM, .len = n,
				 .tx_off = toff, .peer_off = poff }, n);
		}
		fdr_flow_tx_commit(&e->f, n);
		want -= n;
		e->want_send -= n;
	}
}

static void sim_recv(struct sim_ep *e, size_t want)
{
	uint8_t buf[8192];
	uint64_t avail = fdr_flow_rx_avail(&e->f);
	size_t n = avail < want ? (size_t)avail : want;

	if (n > sizeof(buf))
		n = sizeof(buf);
	if (!n)
		return;
	fdr_ring_get(e->rx, e->f.rx_ring, fdr_flow_rx_off(&e->f), buf, n);
	for (size_t i = 0; i < n; i++) {
		if (buf[i] != stream_byte(!e->dir, e->f.rx_read + i)) {
			CHECK(0, "stream %d byte %llu corrupt", !e->dir,
			      (unsigned long long)(e->f.rx_read + i));
			e->broken = 1;
			return;
		}
	}
	fdr_flow_rx_consume(&e->f, n);
	sim_flush_ctrl(e, 0);
}

/* The oldest message from `from` arrives at `to`. */
static int sim_deliver(struct sim_ep *from, struct sim_ep *to)
{
	struct wire_msg m;
	struct fdr_msg d;
	int why, kind;

	if (from->q_head == from->q_tail)
		return 0;
	m = from->q[from->q_head++ % QMAX];
	if (m.kind == M_WRITE || m.kind == M_WRITE_IMM) {
		CHECK(m.peer_off + m.len <= to->f.rx_ring, "write beyond the ring");
		memcpy(to->rx + m.peer_off, from->tx + m.tx_off, m.len);
		if (m.kind == M_WRITE)
			return 1;	/* no receive consumed */
	}
	if (!to->rx_posted) {
		CHECK(0, "peer sent with no receive posted (credits broken)");
		to->broken = 1;
		return 1;
	}
	to->rx_posted--;
	kind = m.kind == M_WRITE_IMM ? FDR_RX_WRITE_IMM :
	       m.kind == M_SEND_IMM ? FDR_RX_SEND_IMM : FDR_RX_SEND;
	why = fdr_msg_decode(&d, to->iwarp, kind,
			     m.kind == M_WRITE_IMM ? m.len : m.kind == M_SEND ? 4 : 0,
			     m.kind == M_WRITE_IMM ? 0 : m.word);
	if (!why)
		why = fdr_flow_rx_apply(&to->f, &d);
	if (why) {
		CHECK(0, "protocol error: %s", fdr_bad_str(why));
		to->broken = 1;
		return 1;
	}
	if (!d.fin)
		to->rx_posted++;	/* reposted at once */
	sim_flush_ctrl(to, 0);
	return 1;
}

static int sim_complete(struct sim_ep *e)
{
	uint32_t len;

	/* A send completes only once it left the wire queue. */
	if (e->comp_head == e->comp_tail ||
	    e->comp_tail - e->comp_head <= e->q_tail - e->q_head)
		return 0;
	len = e->comp_len[e->comp_head++ % QMAX];
	e->sq_free++;
	if (len)
		CHECK(fdr_flow_tx_complete(&e->f, len) == 0, "completion accounting");
	sim_flush_ctrl(e, 0);
	return 1;
}

static void sim_init(struct sim_ep *e, int dir, uint32_t tx_ring,
		     uint32_t rx_ring, uint32_t rx_credits, uint32_t sq,
		     const struct fdr_blob *peer, int iwarp, uint64_t total)
{
	memset(e, 0, sizeof(*e));
	e->dir = dir;
	e->tx = malloc(tx_ring);
	e->rx = malloc(rx_ring);
	fdr_flow_init(&e->f, tx_ring, rx_ring, rx_credits, peer);
	e->rx_posted = rx_credits;
	e->sq_free = e->sq_depth = sq;
	e->iwarp = iwarp;
	e->want_send = total;
}

struct sim_cfg {
	uint32_t ring[2][2];	/* [ep][tx, rx] */
	uint32_t credits[2], sq[2];
	int iwarp;
	uint64_t total[2];
	uint32_t max_write, max_read;
	int slow_reader;	/* B pauses reading now and then */
};

static void run_sim(const struct sim_cfg *c, uint64_t seed)
{
	struct sim_ep *ep = calloc(2, sizeof(*ep));
	struct fdr_blob blob[2];
	uint64_t steps = 0, idle = 0;

	rng_state = seed * 2654435761u + 1;
	for (int i = 0; i < 2; i++) {
		blob[i] = good_blob();
		blob[i].ring_size = c->ring[i][1];
		blob[i].credits = (uint16_t)c->credits[i];
	}
	sim_init(&ep[0], 0, c->ring[0][0], c->ring[0][1], c->credits[0], c->sq[0],
		 &blob[1], c->iwarp, c->total[0]);
	sim_init(&ep[1], 1, c->ring[1][0], c->ring[1][1], c->credits[1], c->sq[1],
		 &blob[0], c->iwarp, c->total[1]);
	for (;;) {
		int moved = 0, s = (int)(rnd() % 2);
		struct sim_ep *e = &ep[s], *p = &ep[!s];

		if (ep[0].broken || ep[1].broken)
			break;
		switch (rnd() % 6) {
		case 0:
			if (e->want_send) {
				uint64_t before = e->want_send;

				sim_send(e, 1 + rnd() % c->max_write);
				moved = e->want_send != before;
			}
			break;
		case 1:
			if (c->slow_reader && s == 1 && rnd() % 16 == 0)
				e->reader_paused = !e->reader_paused;
			if (!e->reader_paused) {
				uint64_t before = e->f.rx_read;

				sim_recv(e, 1 + rnd() % c->max_read);
				moved = e->f.rx_read != before;
			}
			break;
		case 2:
		case 3:
			moved = sim_deliver(e, p);
			break;
		default:
			moved = sim_complete(e);
			break;
		}
		/* fi_shutdown closes both directions: a side ends the
		 * connection once it sent and read everything. */
		for (int i = 0; i < 2; i++) {
			if (!ep[i].want_send && !ep[i].f.fin_sent &&
			    ep[i].f.rx_read == c->total[!i] &&
			    fdr_flow_ctrl_ok(&ep[i].f, 1) && ep[i].sq_free) {
				sim_flush_ctrl(&ep[i], 1);
				moved = 1;
			}
		}
		steps++;
		if (getenv("SIM_DEBUG") && steps % 1000000 == 0)
			fprintf(stderr, "step %llu: A tx %llu cr %u sq %u | B rx %llu read %llu rep %llu owed %u cr %u sq %u\n",
				(unsigned long long)steps, (unsigned long long)ep[0].f.tx_pos, ep[0].f.credits, ep[0].sq_free,
				(unsigned long long)ep[1].f.rx_arrived, (unsigned long long)ep[1].f.rx_read,
				(unsigned long long)ep[1].f.rx_reported, ep[1].f.owed, ep[1].f.credits, ep[1].sq_free);
		if (ep[0].f.fin_rcvd && ep[1].f.fin_rcvd &&
		    !fdr_flow_rx_avail(&ep[0].f) && !fdr_flow_rx_avail(&ep[1].f))
			break;
		idle = moved ? 0 : idle + 1;
		if (idle > 100000) {
			for (int i = 0; i < 2; i++)
				fprintf(stderr, "  ep %d: credits %u owed %u sq %u posted %u "
					"tx %llu done %llu freed %llu rx %llu read %llu rep %llu "
					"want %llu fin %d/%d paused %d\n", i, ep[i].f.credits,
					ep[i].f.owed, ep[i].sq_free, ep[i].rx_posted,
					(unsigned long long)ep[i].f.tx_pos,
					(unsigned long long)ep[i].f.tx_done,
					(unsigned long long)ep[i].f.peer_freed,
					(unsigned long long)ep[i].f.rx_arrived,
					(unsigned long long)ep[i].f.rx_read,
					(unsigned long long)ep[i].f.rx_reported,
					(unsigned long long)ep[i].want_send,
					ep[i].f.fin_sent, ep[i].f.fin_rcvd, ep[i].reader_paused);
			CHECK(0, "deadlock after %llu steps (seed %llu)",
			      (unsigned long long)steps, (unsigned long long)seed);
			break;
		}
		/* A paused reader resumes eventually. */
		if (idle > 1000)
			ep[1].reader_paused = 0;
	}
	for (int i = 0; i < 2; i++) {
		CHECK(ep[!i].f.rx_read == c->total[i] || ep[0].broken || ep[1].broken,
		      "stream %d: %llu of %llu bytes (seed %llu)", i,
		      (unsigned long long)ep[!i].f.rx_read,
		      (unsigned long long)c->total[i], (unsigned long long)seed);
		free(ep[i].tx);
		free(ep[i].rx);
	}
	free(ep);
}

static void test_sim(void)
{
	struct sim_cfg c;
	/* RSTREAM_SIM_SEEDS=1000 for a longer hunt */
	uint64_t seeds = getenv("RSTREAM_SIM_SEEDS") ?
			 strtoull(getenv("RSTREAM_SIM_SEEDS"), NULL, 0) : 40;

	/* default-like, one way */
	memset(&c, 0, sizeof(c));
	c.ring[0][0] = c.ring[0][1] = c.ring[1][0] = c.ring[1][1] = 32768;
	c.credits[0] = c.credits[1] = 384;
	c.sq[0] = c.sq[1] = 384;
	c.total[0] = 4 << 20;
	c.max_write = 100000;
	c.max_read = 70000;
	run_sim(&c, 1);
	c.iwarp = 1;
	run_sim(&c, 2);

	/* tiny rings and queues, both ways, unequal sizes, both framings */
	for (uint64_t seed = 3; seed < 3 + seeds; seed++) {
		memset(&c, 0, sizeof(c));
		c.ring[0][0] = FDR_RING_MIN + rnd() % 4096;
		c.ring[0][1] = FDR_RING_MIN + rnd() % 4096;
		c.ring[1][0] = FDR_RING_MIN + rnd() % 4096;
		c.ring[1][1] = FDR_RING_MIN + rnd() % 4096;
		c.credits[0] = FDR_CREDITS_MIN + rnd() % 12;
		c.credits[1] = FDR_CREDITS_MIN + rnd() % 12;
		c.sq[0] = 4 + rnd() % 8;
		c.sq[1] = 4 + rnd() % 8;
		c.iwarp = (int)(seed & 1);
		c.total[0] = 200000 + rnd() % 100000;
		c.total[1] = seed % 3 ? rnd() % 100000 : 0;
		c.max_write = 1 + rnd() % 5000;
		c.max_read = 1 + rnd() % 5000;
		c.slow_reader = (int)(seed % 4 == 0);
		run_sim(&c, seed);
	}

	/* one-byte writes and reads: credits, not bytes, run out */
	memset(&c, 0, sizeof(c));
	c.ring[0][0] = c.ring[0][1] = c.ring[1][0] = c.ring[1][1] = 4096;
	c.credits[0] = c.credits[1] = 4;
	c.sq[0] = c.sq[1] = 4;
	c.total[0] = c.total[1] = 20000;
	c.max_write = 1;
	c.max_read = 1;
	run_sim(&c, 99);
	c.iwarp = 1;
	run_sim(&c, 100);
}

int main(void)
{
	test_blob();
	test_words();
	test_flow_rules();
	test_ring_copy();
	test_sim();
	if (fdt_check_failures) {
		fprintf(stderr, "%d check(s) failed\n", fdt_check_failures);
		return 1;
	}
	printf("rstream protocol: all checks passed\n");
	return 0;
}
