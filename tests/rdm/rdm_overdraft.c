/* Injects may overdraw a connection's send credits (issue 22, MPICH's
 * pt2pt/sendrecv3; docs/rdm-protocol.md "Overdraft").
 *
 * An inject reports no completion, so it cannot wait on its connection's
 * queue for credits (nobody would call progress to post it: rdm_inject).
 * Before, that made every inject past the 64 credits of a connection
 * -FI_EAGAIN until the receiver read again, and a program that times a
 * burst of small sends to a sleeping partner waited for the partner. Now
 * an inject may go up to FDM_CREDIT_OVERDRAFT (128) messages below zero:
 * the connection is RC with endless RNR retries, so a message that finds
 * no pool buffer at the peer is held by the device and delivered, in
 * order, once the peer reposts one.
 *
 * NSEND sender endpoints (one process; the receiver endpoint gets no call
 * at all while they send, only the senders' own CQs are read) each send
 * NMSG tagged messages: fi_tinject, but message QUEUED_AT is an fi_tsend
 * with a completion, which must wait in its connection's queue (its
 * credits are below zero then) without being overtaken by the injects
 * behind it. Per sender:
 *  - the first FIRST_OK calls (more than the 64 credits) return 0 at
 *    once, no retry;
 *  - by LIMIT (grant + overdraft) the sender gets -FI_EAGAIN, and keeps
 *    getting it, promptly, while the receiver sleeps: bounded, no hang;
 *  - the senders' overdrafts together are more than the receiver's pool
 *    (POOL buffers, FI_VERBS_RX_SIZE: grants of 64 and 48), so the second
 *    sender's last ~110 messages wait in the device's RNR retries (on rxe
 *    the RNR counters must move), within its send queue (128);
 * then the receiver wakes (PRE_POSTED receives per sender were posted
 * before, the rest find their messages unexpected), the senders finish
 * (the refused message retried), and every message arrives once, in the
 * order issued, every byte right, and the fi_tsend completes. */
#include <unistd.h>

#include "rdmt.h"

#define NSEND		2
#define POOL		"256"
#define NMSG		220
#define MSGLEN		64
#define FIRST_OK	160	/* > 64 credits, < 64 + 128 */
#define QUEUED_AT	80
#define LIMIT		(64 + 128)	/* FDM_CREDIT_MAX + FDM_CREDIT_OVERDRAFT */
#define PRE_POSTED	100
#define REFUSED_MS	300	/* the refused inject is retried this long */
#define TAG(k)		(0x100u + (uint64_t)(k))
#define WARM_TAG(k)	(0x200u + (uint64_t)(k))

static uint8_t sbuf[NSEND][NMSG][MSGLEN], rbuf[NSEND][NMSG][MSGLEN];
static struct fi_context rctx[NSEND][NMSG], qctx[NSEND], wctx[2][NSEND], xctx[NSEND];
static uint8_t wbuf[2][NSEND][8], xbuf[NSEND][MSGLEN];
static int qdone[NSEND];

static uint32_t seed(int k, int i)
{
	return (uint32_t)(k * 100000 + i);
}

/* Read sender k's own CQ only (rdmt_progress would read the receiver's
 * too, and so wake it): the injects report nothing, the fi_tsend once. */
static void reap_own(struct rdmt_ep *s, int k)
{
	struct fi_cq_tagged_entry e[8];
	ssize_t n;

	while ((n = fi_cq_read(s->cq->cq, e, 8)) > 0) {
		for (ssize_t j = 0; j < n; j++) {
			FDT_ASSERT(e[j].op_context == &qctx[k] && !qdone[k],
				   "sender %d: a completion nobody asked for (ctx %p)", k,
				   e[j].op_context);
			FDT_ASSERT(e[j].flags & FI_SEND, "sender %d: tsend flags %#llx", k,
				   (unsigned long long)e[j].flags);
			qdone[k] = 1;
		}
	}
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err;

		memset(&err, 0, sizeof(err));
		fi_cq_readerr(s->cq->cq, &err, 0);
		FDT_FAIL("sender %d: error completion %d (%s)", k, err.err, fi_strerror(err.err));
	}
	FDT_ASSERT(n == -FI_EAGAIN, "sender %d: fi_cq_read = %zd", k, n);
}

static ssize_t send_one(struct rdmt_ep *s, int k, int i, fi_addr_t to)
{
	if (i == QUEUED_AT)
		return fi_tsend(s->ep, sbuf[k][i], MSGLEN, NULL, to, TAG(k), &qctx[k]);
	return fi_tinject(s->ep, sbuf[k][i], MSGLEN, to, TAG(k));
}

int main(void)
{
	struct rdmt_dom dom;
	struct rdmt_ep r, s[NSEND];
	struct rdmt_comp c;
	struct fi_info *hints;
	fi_addr_t to[NSEND];
	const char *dev;
	long rnr0, rnr1;
	int refused_at[NSEND], next[NSEND] = { 0 };
	long refused_tries[NSEND] = { 0 };
	int k, i, got;

	/* the eager pool of every endpoint (the verbs rx size) */
	setenv("FI_VERBS_RX_SIZE", POOL, 1);
	hints = rdmt_hints(FI_MSG | FI_TAGGED);
	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	dev = dom.info->domain_attr->name;
	rdmt_ep_open(&dom, &r, NULL, FI_AV_TABLE);
	for (k = 0; k < NSEND; k++) {
		rdmt_ep_open(&dom, &s[k], NULL, FI_AV_TABLE);
		to[k] = rdmt_insert(&s[k], &r);
	}
	/* connections up, both sides progressing: one message each */
	for (k = 0; k < NSEND; k++) {
		RDMT_POST(fi_trecv(r.ep, wbuf[1][k], 8, NULL, FI_ADDR_UNSPEC, WARM_TAG(k), 0,
				   &wctx[1][k]));
		RDMT_POST(fi_tsend(s[k].ep, wbuf[0][k], 8, NULL, to[k], WARM_TAG(k), &wctx[0][k]));
		rdmt_wait_ok(r.cq, &c);
		rdmt_check_recv(&c, &wctx[1][k], FI_TAGGED | FI_RECV, 8, WARM_TAG(k));
		rdmt_wait_ok(s[k].cq, &c);
		FDT_ASSERT(c.e.op_context == &wctx[0][k], "warm-up send %d: context", k);
	}
	for (k = 0; k < NSEND; k++)
		for (i = 0; i < PRE_POSTED; i++)
			RDMT_POST(fi_trecv(r.ep, rbuf[k][i], MSGLEN, NULL, FI_ADDR_UNSPEC, TAG(k), 0,
					   &rctx[k][i]));

	/* ---- the receiver sleeps from here: no call on r ---- */
	rnr0 = rdmt_rnr_count(dev);
	for (k = 0; k < NSEND; k++) {
		refused_at[k] = -1;
		for (i = 0; i < NMSG && refused_at[k] < 0; i++) {
			ssize_t rc;

			fdt_fill(sbuf[k][i], MSGLEN, seed(k, i));
			rc = send_one(&s[k], k, i, to[k]);
			if (rc == -FI_EAGAIN && i >= FIRST_OK && i != QUEUED_AT) {
				refused_at[k] = i;
				break;
			}
			FDT_ASSERT(rc == 0, "sender %d, %s %d to the sleeping receiver = %zd (%s) on "
				   "the first try: %s", k, i == QUEUED_AT ? "fi_tsend" : "fi_tinject",
				   i, rc, fi_strerror((int)-rc),
				   i == QUEUED_AT ? "a send with a completion waits in the queue" :
				   "an inject may overdraw the 64 credits by 128");
			if (i != QUEUED_AT)	/* an inject's buffer is ours again */
				memset(sbuf[k][i], 0xee, MSGLEN);
			reap_own(&s[k], k);
		}
		FDT_ASSERT(refused_at[k] >= 0 && refused_at[k] <= LIMIT,
			   "sender %d: %d messages taken without -FI_EAGAIN from a sleeping "
			   "receiver (the overdraft has a bound: %d)", k, i, LIMIT);
	}
	/* Still asleep: no credit can come back, so the refused message
	 * stays refused, each call answering at once. */
	for (k = 0; k < NSEND; k++) {
		long end = rdmt_now_ms() + REFUSED_MS;

		i = refused_at[k];
		while (rdmt_now_ms() < end) {
			long t0 = rdmt_now_ms();
			ssize_t rc = fi_tinject(s[k].ep, sbuf[k][i], MSGLEN, to[k], TAG(k));

			FDT_ASSERT(rc == -FI_EAGAIN, "sender %d: fi_tinject %d = %zd past the "
				   "overdraft, the receiver asleep (want -FI_EAGAIN)", k, i, rc);
			FDT_ASSERT(rdmt_now_ms() - t0 < 1000, "sender %d: a refused inject took %ld ms",
				   k, rdmt_now_ms() - t0);
			refused_tries[k]++;
			reap_own(&s[k], k);
		}
	}

	rnr1 = rdmt_rnr_count(dev);
	FDT_ASSERT(rnr0 >= 0 || strncmp(dev, "rxe", 3),
		   "no RNR counters for %s in /sys/class/infiniband", dev);
	if (rnr0 >= 0)
		FDT_ASSERT(rnr1 > rnr0, "no RNR NAK while the overdrafts (%d + %d messages) "
			   "exceeded the receiver's pool of %s", refused_at[0], refused_at[1], POOL);

	/* ---- the receiver wakes: what arrived meets no receive (except
	 * the PRE_POSTED ones) and goes to the unexpected queue ---- */
	for (long end = rdmt_now_ms() + 200; rdmt_now_ms() < end;)
		rdmt_progress();
	for (k = 0; k < NSEND; k++)
		for (i = PRE_POSTED; i < NMSG; i++)
			RDMT_POST(fi_trecv(r.ep, rbuf[k][i], MSGLEN, NULL, FI_ADDR_UNSPEC, TAG(k), 0,
					   &rctx[k][i]));
	for (k = 0; k < NSEND; k++) {
		for (i = refused_at[k]; i < NMSG; i++) {
			if (i > refused_at[k])
				fdt_fill(sbuf[k][i], MSGLEN, seed(k, i));
			RDMT_POST(fi_tinject(s[k].ep, sbuf[k][i], MSGLEN, to[k], TAG(k)));
			memset(sbuf[k][i], 0xee, MSGLEN);
		}
	}
	for (got = 0; got < NSEND * NMSG; got++) {
		rdmt_wait_ok(r.cq, &c);
		for (k = 0; k < NSEND; k++)
			if (c.e.op_context == &rctx[k][next[k]])
				break;
		FDT_ASSERT(k < NSEND, "receive %d: context %p is no sender's next receive "
			   "(out of order)", got, c.e.op_context);
		i = next[k]++;
		rdmt_check_recv(&c, &rctx[k][i], FI_TAGGED | FI_RECV, MSGLEN, TAG(k));
		FDT_ASSERT(fdt_check(rbuf[k][i], MSGLEN, seed(k, i)),
			   "sender %d, message %d: wrong bytes (lost, doubled or overtaken)", k, i);
	}
	for (k = 0; k < NSEND; k++) {
		if (!qdone[k]) {
			rdmt_wait_ok(s[k].cq, &c);
			FDT_ASSERT(c.e.op_context == &qctx[k], "sender %d: tsend's context", k);
		}
		/* nothing doubled behind the last one */
		RDMT_POST(fi_trecv(r.ep, xbuf[k], MSGLEN, NULL, FI_ADDR_UNSPEC, TAG(k), 0, &xctx[k]));
	}
	rdmt_quiet(r.cq, 200, "a message past the last one sent");
	for (k = 0; k < NSEND; k++)
		printf("sender %d: %d messages taken at once by a sleeping receiver, then "
		       "-FI_EAGAIN %ld times; all %d received in order\n", k, refused_at[k],
		       refused_tries[k], NMSG);
	printf("RNR NAKs while it slept: %ld\n", rnr0 >= 0 ? rnr1 - rnr0 : -1L);
	for (k = 0; k < NSEND; k++)
		rdmt_ep_close(&s[k]);
	rdmt_ep_close(&r);
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_overdraft");
}
