/* Receive-side matching between two senders (A1, A2) and one receiver
 * (B): directed receives (FI_DIRECTED_RECV) take only their peer's
 * message while FI_ADDR_UNSPEC takes anyone's; fi_cq_readfrom reports the
 * source fi_addr_t (FI_SOURCE); messages that arrive before their receive
 * wait in the unexpected queue, small and large (rendezvous) alike, and
 * are matched by tag in whatever order receives come; messages with one
 * tag from one sender complete in send order, whether the receives were
 * posted before or after. */
#include "rdmt.h"

static struct rdmt_dom dom;
static struct rdmt_ep A1, A2, B;
static fi_addr_t a1_to_b, a2_to_b, b_to_a1, b_to_a2;

static void directed(void)
{
	static uint8_t s1[512], s2[512], r1[512], r2[512];
	struct fi_context sc1, sc2, rc1, rc2;
	struct rdmt_comp c;

	fdt_fill(s1, sizeof(s1), 1);
	fdt_fill(s2, sizeof(s2), 2);
	/* tagged: the directed receive for A2 must not take A1's message,
	 * although A1's is sent (and acknowledged) first */
	RDMT_POST(fi_trecv(B.ep, r1, sizeof(r1), NULL, b_to_a2, 5, 0, &rc1));
	RDMT_POST(fi_tsend(A1.ep, s1, sizeof(s1), NULL, a1_to_b, 5, &sc1));
	rdmt_wait_ok(A1.cq, &c);
	FDT_ASSERT(c.e.op_context == &sc1, "A1 send context");
	rdmt_quiet(B.cq, 200, "directed receive took another peer's message");
	RDMT_POST(fi_tsend(A2.ep, s2, sizeof(s2), NULL, a2_to_b, 5, &sc2));
	rdmt_wait_ok(B.cq, &c);
	rdmt_check_recv(&c, &rc1, FI_TAGGED | FI_RECV, sizeof(s2), 5);
	FDT_ASSERT(c.src == b_to_a2, "source %llu, expected A2 = %llu",
		   (unsigned long long)c.src, (unsigned long long)b_to_a2);
	FDT_ASSERT(fdt_check(r1, sizeof(r1), 2), "directed receive: wrong bytes");
	rdmt_wait_ok(A2.cq, &c);
	/* A1's message waits unexpected; FI_ADDR_UNSPEC takes it */
	RDMT_POST(fi_trecv(B.ep, r2, sizeof(r2), NULL, FI_ADDR_UNSPEC, 5, 0, &rc2));
	rdmt_wait_ok(B.cq, &c);
	rdmt_check_recv(&c, &rc2, FI_TAGGED | FI_RECV, sizeof(s1), 5);
	FDT_ASSERT(c.src == b_to_a1, "source %llu, expected A1 = %llu",
		   (unsigned long long)c.src, (unsigned long long)b_to_a1);
	FDT_ASSERT(fdt_check(r2, sizeof(r2), 1), "wildcard receive: wrong bytes");

	/* untagged: the same with fi_recv */
	memset(r1, 0, sizeof(r1));
	memset(r2, 0, sizeof(r2));
	RDMT_POST(fi_recv(B.ep, r1, sizeof(r1), NULL, b_to_a1, &rc1));
	RDMT_POST(fi_send(A2.ep, s2, 100, NULL, a2_to_b, &sc2));
	rdmt_wait_ok(A2.cq, &c);
	rdmt_quiet(B.cq, 200, "directed fi_recv took another peer's message");
	RDMT_POST(fi_send(A1.ep, s1, 200, NULL, a1_to_b, &sc1));
	rdmt_wait_ok(A1.cq, &c);
	rdmt_wait_ok(B.cq, &c);
	rdmt_check_recv(&c, &rc1, FI_MSG | FI_RECV, 200, 0);
	FDT_ASSERT(c.src == b_to_a1, "untagged source");
	FDT_ASSERT(fdt_check(r1, 200, 1), "directed fi_recv: wrong bytes");
	RDMT_POST(fi_recv(B.ep, r2, sizeof(r2), NULL, FI_ADDR_UNSPEC, &rc2));
	rdmt_wait_ok(B.cq, &c);
	rdmt_check_recv(&c, &rc2, FI_MSG | FI_RECV, 100, 0);
	FDT_ASSERT(c.src == b_to_a2, "untagged wildcard source");
	FDT_ASSERT(fdt_check(r2, 100, 2), "wildcard fi_recv: wrong bytes");
}

/* sizes from a few bytes to past any eager limit */
#define NUNEXP 8
static const size_t unexp_len[NUNEXP] = { 1, 64, 1000, 4096, 16384, 65536, 300000, 1 << 20 };

static void unexpected(void)
{
	static struct fi_context sctx[NUNEXP], rctx[NUNEXP];
	uint8_t *sbuf[NUNEXP], *rbuf[NUNEXP];
	struct rdmt_comp c;
	int i, sends = 0;

	for (i = 0; i < NUNEXP; i++) {
		sbuf[i] = malloc(unexp_len[i]);
		rbuf[i] = calloc(1, unexp_len[i]);
		FDT_ASSERT(sbuf[i] && rbuf[i], "out of memory");
		fdt_fill(sbuf[i], unexp_len[i], 100 + i);
		RDMT_POST(fi_tsend(A1.ep, sbuf[i], unexp_len[i], NULL, a1_to_b,
				   0x100 + i, &sctx[i]));
	}
	/* let them all arrive before any receive exists */
	while (rdmt_poll(A1.cq, &c, 300)) {
		FDT_ASSERT(!c.err, "send error %d", c.err);
		sends++;
	}
	for (i = NUNEXP - 1; i >= 0; i--) {
		RDMT_POST(fi_trecv(B.ep, rbuf[i], unexp_len[i], NULL, FI_ADDR_UNSPEC,
				   0x100 + i, 0, &rctx[i]));
		rdmt_wait_ok(B.cq, &c);
		rdmt_check_recv(&c, &rctx[i], FI_TAGGED | FI_RECV, unexp_len[i], 0x100 + i);
		FDT_ASSERT(c.src == b_to_a1, "source");
		FDT_ASSERT(fdt_check(rbuf[i], unexp_len[i], 100 + i),
			   "unexpected message %d (%zu bytes): wrong bytes", i, unexp_len[i]);
	}
	while (sends < NUNEXP) {
		rdmt_wait_ok(A1.cq, &c);
		sends++;
	}
	rdmt_quiet(B.cq, 50, "after the unexpected messages");
	for (i = 0; i < NUNEXP; i++) {
		free(sbuf[i]);
		free(rbuf[i]);
	}
}

#define NORDER 200
static void ordering(void)
{
	static struct fi_context sctx[NORDER], rctx[NORDER];
	static uint32_t sbuf[NORDER][16], rbuf[NORDER][16];
	struct rdmt_comp c;
	int i, j, sent = 0;

	for (i = 0; i < NORDER / 2; i++)
		RDMT_POST(fi_trecv(B.ep, rbuf[i], sizeof(rbuf[i]), NULL, FI_ADDR_UNSPEC,
				   7, 0, &rctx[i]));
	for (i = 0; i < NORDER; i++) {
		for (j = 0; j < 16; j++)
			sbuf[i][j] = (uint32_t)(i * 16 + j);
		RDMT_POST(fi_tsend(A1.ep, sbuf[i], sizeof(sbuf[i]), NULL, a1_to_b, 7, &sctx[i]));
	}
	for (i = NORDER / 2; i < NORDER; i++)
		RDMT_POST(fi_trecv(B.ep, rbuf[i], sizeof(rbuf[i]), NULL, FI_ADDR_UNSPEC,
				   7, 0, &rctx[i]));
	for (i = 0; i < NORDER; i++) {
		rdmt_wait_ok(B.cq, &c);
		FDT_ASSERT(c.e.op_context == &rctx[i], "receive %d completed out of order", i);
		for (j = 0; j < 16; j++)
			FDT_ASSERT(rbuf[i][j] == (uint32_t)(i * 16 + j),
				   "receive %d holds message %u: send order lost", i,
				   rbuf[i][j] / 16);
	}
	while (sent < NORDER) {
		rdmt_wait_ok(A1.cq, &c);
		FDT_ASSERT(c.e.op_context == &sctx[sent], "send %d completed out of order", sent);
		sent++;
	}
}

int main(void)
{
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED | FI_DIRECTED_RECV | FI_SOURCE);

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	FDT_ASSERT(dom.info->caps & FI_DIRECTED_RECV, "no FI_DIRECTED_RECV");
	FDT_ASSERT(dom.info->caps & FI_SOURCE, "no FI_SOURCE");
	rdmt_ep_open(&dom, &A1, NULL, FI_AV_TABLE);
	rdmt_ep_open(&dom, &A2, NULL, FI_AV_TABLE);
	rdmt_ep_open(&dom, &B, NULL, FI_AV_TABLE);
	a1_to_b = rdmt_insert(&A1, &B);
	a2_to_b = rdmt_insert(&A2, &B);
	b_to_a1 = rdmt_insert(&B, &A1);
	b_to_a2 = rdmt_insert(&B, &A2);
	FDT_ASSERT(b_to_a1 != b_to_a2, "two peers, one fi_addr_t");

	directed();
	unexpected();
	ordering();

#ifdef FDT_UPSTREAM
	/* upstream 1.17 crashes in fi_close of these endpoints (SIGSEGV in
	 * libfabric, whatever the order): the checks above are done */
	return rdmt_pass("rdm_match");
#endif
	rdmt_ep_close(&B);
	rdmt_ep_close(&A2);
	rdmt_ep_close(&A1);
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_match");
}
