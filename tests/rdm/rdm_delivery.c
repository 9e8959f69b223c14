/* FI_DELIVERY_COMPLETE on RDM sends (fi_cq(3)): the send completes only
 * once the receiving endpoint has taken the message in - placed in a
 * posted receive, or buffered by the provider as unexpected - never on
 * the transport's acknowledgement alone. MPICH's ch4:ofi asks for it as
 * an endpoint default (tx_attr->op_flags).
 *
 * Two endpoints in one process with a CQ each. Progress is manual, so the
 * receiver takes nothing in while only the sender's CQ is read: a
 * delivery-complete send must stay quiet then, and complete once the
 * receiver's CQ is read. A plain send (transmit complete: the peer's
 * device acknowledged it) completes meanwhile. Each form: the per-call
 * flag (fi_tsendmsg, fi_sendmsg), the endpoint default (FI_SETOPSFLAG,
 * then fi_tsend - inline in the direct build - and fi_tsenddata), a
 * message to a posted receive and one to the unexpected queue, sizes
 * across the layer's eager limit, every byte checked. */
#include <unistd.h>

#include "rdmt.h"

#define TAG 0x00e0000012345678ULL
#define QUIET_MS 600
#define BIG 8192

static struct rdmt_ep ea, eb;
static fi_addr_t to_b;
static uint8_t sbuf[BIG], rbuf[BIG];

/* Read only the sender's CQ for ms: nothing may arrive (the receiver has
 * not progressed since the send). */
static void sender_quiet(const char *what)
{
	long end = rdmt_now_ms() + QUIET_MS;
	struct fi_cq_tagged_entry e;

	while (rdmt_now_ms() < end) {
		ssize_t n = fi_cq_read(ea.cq->cq, &e, 1);

		if (n == 1)
			FDT_FAIL("%s: the send completed before the receiver took the "
				 "message in (context %p)", what, e.op_context);
		if (n == -FI_EAVAIL)
			FDT_FAIL("%s: error completion while the receiver was idle", what);
		FDT_ASSERT(n == -FI_EAGAIN, "%s: fi_cq_read = %zd", what, n);
		usleep(1000);
	}
}

/* The sender's CQ only, until its completion comes (the receiver does not
 * progress): a plain send needs nothing from the receiver's software. */
static void sender_completes_alone(void *ctx, const char *what)
{
	long end = rdmt_now_ms() + RDMT_WAIT_MS;
	struct fi_cq_tagged_entry e;

	for (;;) {
		ssize_t n = fi_cq_read(ea.cq->cq, &e, 1);

		if (n == 1) {
			FDT_ASSERT(e.op_context == ctx, "%s: context %p, want %p", what,
				   e.op_context, ctx);
			return;
		}
		FDT_ASSERT(n == -FI_EAGAIN, "%s: fi_cq_read = %zd", what, n);
		FDT_ASSERT(rdmt_now_ms() < end, "%s: no send completion in %d ms", what,
			   RDMT_WAIT_MS);
		usleep(1000);
	}
}

static void expect_send_done(void *ctx, const char *what)
{
	struct rdmt_comp c;

	rdmt_wait_ok(ea.cq, &c);
	FDT_ASSERT(c.e.op_context == ctx, "%s: send context %p, want %p", what,
		   c.e.op_context, ctx);
	FDT_ASSERT(c.e.flags & FI_SEND, "%s: flags 0x%llx", what,
		   (unsigned long long)c.e.flags);
}

static void check_bytes(size_t len, uint8_t seed, const char *what)
{
	for (size_t i = 0; i < len; i++)
		FDT_ASSERT(rbuf[i] == (uint8_t)(seed + i * 7),
			   "%s: byte %zu is %u, want %u", what, i, rbuf[i],
			   (uint8_t)(seed + i * 7));
	if (len < BIG)
		FDT_ASSERT(rbuf[len] == 0xee, "%s: written past the message", what);
}

static void fill(size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		sbuf[i] = (uint8_t)(seed + i * 7);
	memset(rbuf, 0xee, sizeof(rbuf));
}

/* A delivery-complete send to a receive posted before it. */
static void posted_case(size_t len, uint8_t seed, int how, const char *what)
{
	struct fi_context sctx, rctx;
	struct rdmt_comp c;
	struct iovec iov = { sbuf, len };

	fill(len, seed);
	FDT_OK(fi_trecv(eb.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, TAG, 0, &rctx));
	if (how == 0) {
		struct fi_msg_tagged m = { .msg_iov = &iov, .iov_count = 1, .addr = to_b,
					   .tag = TAG, .context = &sctx };

		RDMT_POST(fi_tsendmsg(ea.ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE));
	} else if (how == 1) {
		RDMT_POST(fi_tsend(ea.ep, sbuf, len, NULL, to_b, TAG, &sctx));
	} else {
		RDMT_POST(fi_tsenddata(ea.ep, sbuf, len, NULL, 0xabcd, to_b, TAG, &sctx));
	}
	sender_quiet(what);
	/* nothing placed yet: the receiver has not run */
	FDT_ASSERT(rbuf[0] == 0xee, "%s: data placed without the receiver's progress", what);
	rdmt_wait_ok(eb.cq, &c);
	rdmt_check_recv(&c, &rctx, FI_TAGGED | FI_RECV | (how == 2 ? FI_REMOTE_CQ_DATA : 0),
			len, TAG);
	if (how == 2)
		FDT_ASSERT(c.e.data == 0xabcd, "%s: data 0x%llx", what,
			   (unsigned long long)c.e.data);
	check_bytes(len, seed, what);
	expect_send_done(&sctx, what);
}

/* A delivery-complete untagged send with no receive posted: buffered by
 * the receiver when it progresses, which is delivery; the receive comes
 * later and finds it. */
static void unexpected_case(size_t len, uint8_t seed)
{
	struct fi_context sctx, rctx;
	struct iovec iov = { sbuf, len };
	struct fi_msg m = { .msg_iov = &iov, .iov_count = 1, .addr = to_b, .context = &sctx };
	struct rdmt_comp c;
	struct fi_cq_tagged_entry e;

	fill(len, seed);
	RDMT_POST(fi_sendmsg(ea.ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE));
	sender_quiet("unexpected");
	/* the receiver progresses (no receive of its own to complete) */
	for (int i = 0; i < 50; i++) {
		FDT_EXPECT(fi_cq_read(eb.cq->cq, &e, 1), -FI_EAGAIN);
		usleep(2000);
	}
	expect_send_done(&sctx, "unexpected");
	FDT_OK(fi_recv(eb.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, &rctx));
	rdmt_wait_ok(eb.cq, &c);
	rdmt_check_recv(&c, &rctx, FI_MSG | FI_RECV, len, 0);
	check_bytes(len, seed, "unexpected");
}

int main(void)
{
	struct rdmt_dom d;
	struct fi_info *hints = rdmt_hints(FI_TAGGED | FI_MSG);
	struct fi_context sctx, rctx;
	struct rdmt_comp c;
	uint64_t flags;

	rdmt_dom_open(&d, hints);
	fi_freeinfo(hints);
	rdmt_ep_open(&d, &ea, NULL, 0);
	rdmt_ep_open(&d, &eb, NULL, 0);
	to_b = rdmt_insert(&ea, &eb);
	(void)rdmt_insert(&eb, &ea);

	/* the connection first, so every case below is a connected peer
	 * (the inline path in the direct build) */
	fill(64, 1);
	FDT_OK(fi_trecv(eb.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, TAG, 0, &rctx));
	RDMT_POST(fi_tsend(ea.ep, sbuf, 64, NULL, to_b, TAG, &sctx));
	rdmt_wait_ok(eb.cq, &c);
	expect_send_done(&sctx, "warm-up");

	/* plain send: transmit complete, no receiver progress needed */
	fill(1000, 2);
	RDMT_POST(fi_tsend(ea.ep, sbuf, 1000, NULL, to_b, TAG, &sctx));
	sender_completes_alone(&sctx, "plain send");
	FDT_OK(fi_trecv(eb.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, TAG, 0, &rctx));
	rdmt_wait_ok(eb.cq, &c);
	check_bytes(1000, 2, "plain send");

	/* the per-call flag */
	posted_case(1000, 3, 0, "fi_tsendmsg FI_DELIVERY_COMPLETE");
	posted_case(0, 4, 0, "fi_tsendmsg FI_DELIVERY_COMPLETE, 0 bytes");
	posted_case(8160, 5, 0, "fi_tsendmsg FI_DELIVERY_COMPLETE, 8160 bytes");
	posted_case(BIG, 6, 0, "fi_tsendmsg FI_DELIVERY_COMPLETE, 8192 bytes");
	unexpected_case(2000, 7);

	/* the endpoint's default */
	flags = FI_TRANSMIT | FI_COMPLETION | FI_DELIVERY_COMPLETE;
	FDT_OK(fi_control(&ea.ep->fid, FI_SETOPSFLAG, &flags));
	posted_case(1000, 8, 1, "fi_tsend, FI_DELIVERY_COMPLETE default");
	posted_case(8152, 9, 1, "fi_tsend, FI_DELIVERY_COMPLETE default, 8152 bytes");
	posted_case(100, 10, 2, "fi_tsenddata, FI_DELIVERY_COMPLETE default");
	/* an inject has no completion to hold back: still works */
	fill(100, 11);
	FDT_OK(fi_trecv(eb.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, TAG, 0, &rctx));
	RDMT_POST(fi_tinject(ea.ep, sbuf, 100, to_b, TAG));
	rdmt_wait_ok(eb.cq, &c);
	check_bytes(100, 11, "fi_tinject");
	/* and back to plain */
	flags = FI_TRANSMIT | FI_COMPLETION;
	FDT_OK(fi_control(&ea.ep->fid, FI_SETOPSFLAG, &flags));
	fill(500, 12);
	RDMT_POST(fi_tsend(ea.ep, sbuf, 500, NULL, to_b, TAG, &sctx));
	sender_completes_alone(&sctx, "plain send again");
	FDT_OK(fi_trecv(eb.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, TAG, 0, &rctx));
	rdmt_wait_ok(eb.cq, &c);
	check_bytes(500, 12, "plain send again");
	rdmt_quiet(ea.cq, 50, "sender CQ at the end");
	rdmt_quiet(eb.cq, 50, "receiver CQ at the end");

	rdmt_ep_close(&ea);
	rdmt_ep_close(&eb);
	rdmt_dom_close(&d);
	return rdmt_pass("rdm_delivery");
}
