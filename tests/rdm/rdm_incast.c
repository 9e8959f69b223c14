/* 64-peer incast: NPROC processes with EPS_PER endpoints each (64
 * senders) all send NMSG tagged messages at once to one receiver, which
 * has every receive posted with a wildcard tag. Each sender's messages
 * carry its index as the tag and a sequence number in the payload: the
 * receiver must get exactly NMSG from each, in order per sender, every
 * byte right, with fi_cq_readfrom naming the sender it came from. */
#include <unistd.h>

#include "rdmt.h"

#define NPROC 4
#define MAX_EPS_PER 16
#define NSEND_MAX (NPROC * MAX_EPS_PER)
/* RDMT_INCAST_EPS: endpoints per sender process (default 16: 64 peers) */
static int EPS_PER = MAX_EPS_PER;
#define NSEND (NPROC * EPS_PER)
#define NMSG 8
#define MSGLEN 1024

static uint32_t seed_of(int sender, int seq)
{
	return (uint32_t)(sender * 1000 + seq);
}

static int sender_main(int to_parent, int from_parent, void *arg)
{
	int base = (int)(intptr_t)arg, i, j, done = 0;
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED);
	static struct rdmt_ep e[MAX_EPS_PER];
	static uint8_t buf[MAX_EPS_PER][NMSG][MSGLEN];
	static struct fi_context ctx[MAX_EPS_PER][NMSG];
	struct rdmt_dom dom;
	struct rdmt_cq *cq;
	uint8_t rname[256], token;
	fi_addr_t r[MAX_EPS_PER];
	struct rdmt_comp c;

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	cq = rdmt_cq_open(&dom);
	for (i = 0; i < EPS_PER; i++) {
		rdmt_ep_open(&dom, &e[i], cq, FI_AV_TABLE);
		rdmt_send_name(to_parent, &e[i]);
	}
	rdmt_recv_name(from_parent, rname);
	for (i = 0; i < EPS_PER; i++)
		r[i] = rdmt_insert_name(&e[i], rname);
	for (i = 0; i < EPS_PER; i++)
		for (j = 0; j < NMSG; j++)
			fdt_fill(buf[i][j], MSGLEN, seed_of(base + i, j));
	rdmt_read_all(from_parent, &token, 1);	/* go */
	/* round-robin over the endpoints, so all 64 connect at once */
	for (j = 0; j < NMSG; j++)
		for (i = 0; i < EPS_PER; i++)
			RDMT_POST(fi_tsend(e[i].ep, buf[i][j], MSGLEN, NULL, r[i],
					   (uint64_t)(base + i), &ctx[i][j]));
	while (done < EPS_PER * NMSG) {
		if (!rdmt_poll(cq, &c, RDMT_WAIT_MS))
			FDT_FAIL("sender process %d: %d of %d sends completed", base / EPS_PER,
				 done, EPS_PER * NMSG);
		FDT_ASSERT(!c.err, "sender process %d: send error %d (%s)", base / EPS_PER,
			   c.err, fi_strerror(c.err));
		done++;
	}
	rdmt_read_all(from_parent, &token, 1);	/* the receiver has all */
	for (i = 0; i < EPS_PER; i++)
		rdmt_ep_close(&e[i]);
	rdmt_cq_close(cq);
	rdmt_dom_close(&dom);
	return 0;
}

int main(void)
{
	static uint8_t rbuf[NSEND_MAX * NMSG][MSGLEN];
	static struct fi_context rctx[NSEND_MAX * NMSG];
	int to[NPROC], from[NPROC], next[NSEND_MAX], p, i, rc, failed = 0;
	fi_addr_t addr[NSEND_MAX];
	uint8_t name[256], token = 0;
	struct fi_info *hints;
	struct rdmt_dom dom;
	struct rdmt_ep e;
	struct rdmt_comp c;
	pid_t pid[NPROC];
	long t0;

	(void)fdt_addr();
	if (getenv("RDMT_INCAST_EPS"))
		EPS_PER = atoi(getenv("RDMT_INCAST_EPS"));
	FDT_ASSERT(EPS_PER >= 1 && EPS_PER <= MAX_EPS_PER, "RDMT_INCAST_EPS 1..%d", MAX_EPS_PER);
	for (p = 0; p < NPROC; p++)
		pid[p] = rdmt_spawn(sender_main, (void *)(intptr_t)(p * EPS_PER), &to[p], &from[p]);
	hints = rdmt_hints(FI_MSG | FI_TAGGED | FI_SOURCE);
	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	rdmt_ep_open(&dom, &e, NULL, FI_AV_TABLE);
	for (p = 0; p < NPROC; p++) {
		for (i = 0; i < EPS_PER; i++) {
			rdmt_recv_name(from[p], name);
			addr[p * EPS_PER + i] = rdmt_insert_name(&e, name);
		}
		rdmt_send_name(to[p], &e);
	}
	for (i = 0; i < NSEND * NMSG; i++)
		RDMT_POST(fi_trecv(e.ep, rbuf[i], MSGLEN, NULL, FI_ADDR_UNSPEC, 0, ~0ull, &rctx[i]));
	memset(next, 0, sizeof(next));
	t0 = rdmt_now_ms();
	for (p = 0; p < NPROC; p++)
		rdmt_write_all(to[p], &token, 1);
	for (i = 0; i < NSEND * NMSG; i++) {
		int s, idx;

		if (!rdmt_poll(e.cq, &c, RDMT_WAIT_MS))
			FDT_FAIL("receiver: %d of %d messages arrived", i, NSEND * NMSG);
		FDT_ASSERT(!c.err, "receiver: error %d (%s)", c.err, fi_strerror(c.err));
		idx = (int)((struct fi_context *)c.e.op_context - rctx);
		FDT_ASSERT(idx >= 0 && idx < NSEND * NMSG, "unknown context");
		FDT_ASSERT(c.e.tag < (uint64_t)NSEND, "tag %llu is no sender", (unsigned long long)c.e.tag);
		s = (int)c.e.tag;
		FDT_ASSERT(c.src == addr[s], "sender %d's message from fi_addr %llu, expected %llu",
			   s, (unsigned long long)c.src, (unsigned long long)addr[s]);
		FDT_ASSERT(c.e.len == MSGLEN, "len %zu", c.e.len);
		FDT_ASSERT(next[s] < NMSG, "sender %d: more than %d messages", s, NMSG);
		FDT_ASSERT(fdt_check(rbuf[idx], MSGLEN, seed_of(s, next[s])),
			   "sender %d: message %d wrong or out of order", s, next[s]);
		next[s]++;
	}
	printf("%d messages from %d senders in %ld ms\n", NSEND * NMSG, NSEND,
	       rdmt_now_ms() - t0);
	for (i = 0; i < NSEND; i++)
		FDT_ASSERT(next[i] == NMSG, "sender %d: %d messages", i, next[i]);
	rdmt_quiet(e.cq, 100, "after all messages");
	for (p = 0; p < NPROC; p++)
		rdmt_write_all(to[p], &token, 1);
	for (p = 0; p < NPROC; p++) {
		rc = rdmt_reap(pid[p]);
		if (rc)
			failed = rc;
	}
	FDT_ASSERT(!failed, "a sender failed (%d)", failed);
	rdmt_ep_close(&e);
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_incast");
}
