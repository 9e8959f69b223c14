/* Flow control: a fast sender must not drive a receiver that stops
 * reading into RNR retries, and nothing may be lost or reordered while it
 * waits (docs/rdm-protocol.md, "Flow control").
 *
 * Phase 1: one sender streams NMSG tagged messages (more than any eager
 * pool holds) to a receiver that does not progress at all for STALL_MS.
 * The sender must see back-pressure (-FI_EAGAIN) and the device must
 * count no RNR NAK (rxe's hw_counters rcvd_rnr_err / send_rnr_err, when
 * the device has them). Then the receiver posts its receives and drains:
 * every message arrives once, in order, every byte right, and every send
 * completes without error.
 *
 * Phase 2: NPEER more senders connect to the same receiver, so the later
 * connections get the smallest grants (down to one message), and each
 * sends PEER_MSGS messages while the receiver reads normally: each
 * grant's reports come back, nothing stalls, nothing is lost.
 *
 * Phase 3: two endpoints each post rendezvous sends to the other until
 * the call says -FI_EAGAIN, before either has posted a receive: every
 * transmit request the application may take is then waiting for the
 * peer's "done". When the receives come, both sides must still find
 * room to answer (the layer keeps a reserve for its own messages), and
 * every message arrives whole. */
#include <errno.h>

#include "rdmt.h"

#define NMSG		1500
#define MSGLEN		2048
#define STALL_MS	1500
#define NPEER		24
#define PEER_MSGS	40
#define PEER_LEN	512

static uint8_t sbuf[NMSG][MSGLEN], rbuf[NMSG][MSGLEN];
static struct fi_context sctx[NMSG], rctx[NMSG];
#define XLEN		9000	/* over the eager limit: rendezvous */
#define XMAX		300	/* more than any endpoint's transmit requests */
static uint8_t xbuf[2][XMAX][XLEN], xrbuf[2][XMAX][XLEN];
static struct fi_context xctx[2][XMAX], xrctx[2][XMAX];
static uint8_t pbuf[NPEER][PEER_MSGS][PEER_LEN];
static uint8_t prbuf[NPEER * PEER_MSGS][PEER_LEN];
static struct fi_context pctx[NPEER][PEER_MSGS], prctx[NPEER * PEER_MSGS];

/* Read the sender's own CQ only (the harness's rdmt_progress would read
 * the receiver's too, and so progress it). */
static int reap_sends(struct rdmt_ep *s)
{
	struct fi_cq_tagged_entry e[16];
	ssize_t n = fi_cq_read(s->cq->cq, e, 16);

	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err;

		memset(&err, 0, sizeof(err));
		fi_cq_readerr(s->cq->cq, &err, 0);
		FDT_FAIL("send error %d (%s) while the receiver stalls", err.err,
			 fi_strerror(err.err));
	}
	if (n == -FI_EAGAIN)
		return 0;
	FDT_ASSERT(n > 0, "fi_cq_read = %zd (%s)", n, fi_strerror((int)-n));
	return (int)n;
}

static void phase_stall(struct rdmt_dom *dom, struct rdmt_ep *r, const char *dev)
{
	struct rdmt_ep s;
	struct rdmt_comp c;
	fi_addr_t to_r;
	long rnr0, rnr1, end;
	int posted = 0, rposted, done = 0, eagain = 0, i;

	rdmt_ep_open(dom, &s, NULL, FI_AV_TABLE);
	to_r = rdmt_insert(&s, r);
	for (i = 0; i < NMSG; i++)
		fdt_fill(sbuf[i], MSGLEN, (uint32_t)(7000 + i));

	/* the connection up (the receiver must read to accept it) */
	RDMT_POST(fi_trecv(r->ep, rbuf[0], MSGLEN, NULL, FI_ADDR_UNSPEC, 0, ~0ull, &rctx[0]));
	RDMT_POST(fi_tsend(s.ep, sbuf[0], MSGLEN, NULL, to_r, 0, &sctx[0]));
	rdmt_wait_ok(r->cq, &c);
	rdmt_check_recv(&c, &rctx[0], FI_TAGGED | FI_RECV, MSGLEN, 0);
	FDT_ASSERT(fdt_check(rbuf[0], MSGLEN, 7000), "message 0 wrong");
	rdmt_wait_ok(s.cq, &c);
	posted = done = 1;

	/* the receiver stops; the sender goes on as fast as it can */
	rnr0 = rdmt_rnr_count(dev);
	end = rdmt_now_ms() + STALL_MS;
	while (rdmt_now_ms() < end) {
		if (posted < NMSG) {
			ssize_t rc = fi_tsend(s.ep, sbuf[posted], MSGLEN, NULL, to_r,
					      (uint64_t)posted, &sctx[posted]);

			if (rc == 0) {
				posted++;
				continue;
			}
			FDT_ASSERT(rc == -FI_EAGAIN, "fi_tsend = %zd (%s)", rc,
				   fi_strerror((int)-rc));
			eagain++;
		}
		done += reap_sends(&s);
	}
	rnr1 = rdmt_rnr_count(dev);
	printf("stalled receiver: %d posted, %d completed, %d x -FI_EAGAIN; RNR NAKs %ld -> %ld\n",
	       posted, done, eagain, rnr0, rnr1);
	FDT_ASSERT(posted < NMSG && eagain > 0,
		   "the sender never waited (%d of %d posted) with the receiver stopped",
		   posted, NMSG);
	/* Soft-RoCE always has them: there the check must run */
	FDT_ASSERT(rnr0 >= 0 || strncmp(dev, "rxe", 3),
		   "no RNR counters for %s in /sys/class/infiniband", dev);
	if (rnr0 >= 0)
		FDT_ASSERT(rnr1 == rnr0, "%ld RNR NAKs while the receiver stalled", rnr1 - rnr0);
	else
		printf("(%s has no RNR counters: that part is not checked)\n", dev);

	/* the receiver comes back: everything arrives, once, in order */
	for (i = 1, rposted = 1; i < NMSG; i++) {
		/* receives ahead (within the endpoint's rx_attr size) */
		while (rposted < NMSG && rposted <= i + 512) {
			RDMT_POST(fi_trecv(r->ep, rbuf[rposted], MSGLEN, NULL, FI_ADDR_UNSPEC,
					   0, ~0ull, &rctx[rposted]));
			rposted++;
		}
		while (posted < NMSG && posted <= i + 256) {
			RDMT_POST(fi_tsend(s.ep, sbuf[posted], MSGLEN, NULL, to_r,
					   (uint64_t)posted, &sctx[posted]));
			posted++;
		}
		rdmt_wait_ok(r->cq, &c);
		rdmt_check_recv(&c, &rctx[i], FI_TAGGED | FI_RECV, MSGLEN, (uint64_t)i);
		FDT_ASSERT(fdt_check(rbuf[i], MSGLEN, (uint32_t)(7000 + i)),
			   "message %d wrong", i);
	}
	for (; done < NMSG; done++)
		rdmt_wait_ok(s.cq, &c);
	rdmt_quiet(r->cq, 100, "after the stream");
	if (rnr0 >= 0) {
		rnr1 = rdmt_rnr_count(dev);
		FDT_ASSERT(rnr1 == rnr0, "%ld RNR NAKs in the whole stream", rnr1 - rnr0);
	}
	rdmt_ep_close(&s);
}

static void phase_many(struct rdmt_dom *dom, struct rdmt_ep *r)
{
	static struct rdmt_ep p[NPEER];
	int next[NPEER], got, i, j, total = NPEER * PEER_MSGS;
	struct rdmt_cq *pcq = rdmt_cq_open(dom);
	fi_addr_t to_r[NPEER];
	struct rdmt_comp c;

	for (i = 0; i < NPEER; i++) {
		rdmt_ep_open(dom, &p[i], pcq, FI_AV_TABLE);
		to_r[i] = rdmt_insert(&p[i], r);
		next[i] = 0;
		for (j = 0; j < PEER_MSGS; j++)
			fdt_fill(pbuf[i][j], PEER_LEN, (uint32_t)(i * 100 + j));
	}
	for (i = 0; i < total; i++)
		RDMT_POST(fi_trecv(r->ep, prbuf[i], PEER_LEN, NULL, FI_ADDR_UNSPEC, 0, ~0ull,
				   &prctx[i]));
	for (j = 0; j < PEER_MSGS; j++)
		for (i = 0; i < NPEER; i++)
			RDMT_POST(fi_tsend(p[i].ep, pbuf[i][j], PEER_LEN, NULL, to_r[i],
					   (uint64_t)i, &pctx[i][j]));
	for (got = 0; got < total; got++) {
		int idx, s;

		rdmt_wait_ok(r->cq, &c);
		idx = (int)((struct fi_context *)c.e.op_context - prctx);
		FDT_ASSERT(idx >= 0 && idx < total, "unknown receive context");
		FDT_ASSERT(c.e.tag < NPEER && c.e.len == PEER_LEN, "tag %llu len %zu",
			   (unsigned long long)c.e.tag, c.e.len);
		s = (int)c.e.tag;
		FDT_ASSERT(next[s] < PEER_MSGS &&
			   fdt_check(prbuf[idx], PEER_LEN, (uint32_t)(s * 100 + next[s])),
			   "peer %d: message %d wrong, doubled or out of order", s, next[s]);
		next[s]++;
	}
	for (i = 0; i < total; i++)
		rdmt_wait_ok(pcq, &c);
	for (i = 0; i < NPEER; i++)
		FDT_ASSERT(next[i] == PEER_MSGS, "peer %d: %d messages", i, next[i]);
	printf("%d peers x %d messages through grants down to one message: all arrived\n",
	       NPEER, PEER_MSGS);
	for (i = 0; i < NPEER; i++)
		rdmt_ep_close(&p[i]);
	rdmt_cq_close(pcq);
}

static void phase_crossed(struct rdmt_dom *dom)
{
	struct rdmt_ep e[2];
	struct rdmt_comp c;
	fi_addr_t to[2];
	int posted[2] = { 0, 0 }, i, k;

	rdmt_ep_open(dom, &e[0], NULL, FI_AV_TABLE);
	rdmt_ep_open(dom, &e[1], NULL, FI_AV_TABLE);
	to[0] = rdmt_insert(&e[0], &e[1]);
	to[1] = rdmt_insert(&e[1], &e[0]);
	for (k = 0; k < 2; k++)
		for (i = 0; i < XMAX; i++)
			fdt_fill(xbuf[k][i], XLEN, (uint32_t)(50000 + k * 1000 + i));
	/* both connections up first: one eager message each way */
	for (k = 0; k < 2; k++) {
		RDMT_POST(fi_trecv(e[1 - k].ep, xrbuf[1 - k][0], XLEN, NULL, FI_ADDR_UNSPEC,
				   0, ~0ull, &xrctx[1 - k][0]));
		RDMT_POST(fi_tsend(e[k].ep, xbuf[k][0], 64, NULL, to[k], 0, &xctx[k][0]));
		rdmt_wait_ok(e[1 - k].cq, &c);
		rdmt_wait_ok(e[k].cq, &c);
	}
	/* each fills its transmit requests with rendezvous sends */
	for (k = 0; k < 2; k++) {
		for (i = 0; i < XMAX; i++) {
			ssize_t rc = fi_tsend(e[k].ep, xbuf[k][i], XLEN, NULL, to[k],
					      (uint64_t)i, &xctx[k][i]);

			if (rc == -FI_EAGAIN)
				break;
			FDT_ASSERT(rc == 0, "fi_tsend = %zd (%s)", rc, fi_strerror((int)-rc));
		}
		posted[k] = i;
		FDT_ASSERT(posted[k] > 0 && posted[k] < XMAX,
			   "endpoint %d took %d rendezvous sends without -FI_EAGAIN", k, i);
	}
	printf("crossed rendezvous: %d and %d sends each way before -FI_EAGAIN\n",
	       posted[0], posted[1]);
	/* now the receives: everything must come through */
	for (k = 0; k < 2; k++)
		for (i = 0; i < posted[1 - k]; i++)
			RDMT_POST(fi_trecv(e[k].ep, xrbuf[k][i], XLEN, NULL, FI_ADDR_UNSPEC,
					   (uint64_t)i, 0, &xrctx[k][i]));
	/* each endpoint: its own sends complete, the peer's all arrive */
	for (k = 0; k < 2; k++) {
		int sends = 0, recvs = 0;

		while (sends < posted[k] || recvs < posted[1 - k]) {
			int idx;

			rdmt_wait_ok(e[k].cq, &c);
			if (c.e.flags & FI_SEND) {
				sends++;
				continue;
			}
			idx = (int)((struct fi_context *)c.e.op_context - xrctx[k]);
			FDT_ASSERT(idx >= 0 && idx < posted[1 - k] && c.e.len == XLEN &&
				   c.e.tag == (uint64_t)idx &&
				   fdt_check(xrbuf[k][idx], XLEN,
					     (uint32_t)(50000 + (1 - k) * 1000 + idx)),
				   "endpoint %d: rendezvous message %d wrong", k, idx);
			recvs++;
		}
		FDT_ASSERT(sends == posted[k] && recvs == posted[1 - k],
			   "endpoint %d: %d sends, %d receives", k, sends, recvs);
	}
	rdmt_quiet(e[0].cq, 100, "after the crossed rendezvous");
	rdmt_quiet(e[1].cq, 100, "after the crossed rendezvous");
	rdmt_ep_close(&e[0]);
	rdmt_ep_close(&e[1]);
}

int main(void)
{
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED);
	struct rdmt_dom dom;
	struct rdmt_ep r;
	const char *dev;

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	dev = dom.info->domain_attr->name;
	rdmt_ep_open(&dom, &r, NULL, FI_AV_TABLE);
	phase_stall(&dom, &r, dev);
	phase_many(&dom, &r);
	rdmt_ep_close(&r);
	phase_crossed(&dom);
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_flow");
}
