/* fi_inject_atomic goes on the wire in the call, as fi_inject does
 * (issue 22; docs/rdm-protocol.md "Overdraft").
 *
 * An inject reports no completion, so a program that injects may make no
 * further call for a long time (MPICH: inject, then wait in a PMI barrier
 * for the peer). A request the library only queued would then never
 * leave. Before, an fi_inject_atomic past the connection's 64 credits
 * was queued and returned 0: the target never saw it while the initiator
 * made no call. Now it is posted at once, overdrawing the credits as the
 * message injects do, or refused with -FI_EAGAIN.
 *
 * Target T makes no call while initiator I issues NOPS atomic adds of 1
 * (fi_inject_atomic, FI_SUM on one uint64). Then I makes no call at all,
 * and T reads its own CQ (which drives only T) until its word says
 * NOPS: every add reached it with the initiator silent. Then I reads
 * again: the answers free its requests, no completion is reported for
 * the injects, and a fetch-add of 0 with a completion reads NOPS back. */
#include "rdmt.h"

#define NOPS		150	/* > 64 credits, < 64 + 128 of overdraft */
#define POOL		"256"	/* T's receive pool holds all of them */
#define SILENT_MS	3000	/* T waits this long for the adds */

static volatile uint64_t word;

/* Read only T's CQ: that drives T's endpoint, not I's. */
static void drive_target(struct rdmt_ep *t)
{
	struct fi_cq_tagged_entry e[8];
	ssize_t n = fi_cq_read(t->cq->cq, e, 8);

	FDT_ASSERT(n == -FI_EAGAIN, "target: fi_cq_read = %zd with nothing posted on it", n);
}

int main(void)
{
	struct rdmt_dom dom;
	struct rdmt_ep t, i;
	struct rdmt_comp c;
	struct fi_info *hints;
	struct fid_mr *mr;
	struct fi_context ctx[3];
	uint64_t one = 1, zero = 0, old = 0, key, raddr, seen;
	uint8_t wbuf[2][8];
	fi_addr_t to;
	long end;

	setenv("FI_VERBS_RX_SIZE", POOL, 1);
	hints = rdmt_hints(FI_MSG | FI_TAGGED | FI_ATOMIC);
	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	rdmt_ep_open(&dom, &t, NULL, FI_AV_TABLE);
	rdmt_ep_open(&dom, &i, NULL, FI_AV_TABLE);
	to = rdmt_insert(&i, &t);
	FDT_OK(fi_mr_reg(dom.domain, (void *)&word, sizeof(word),
			 FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL));
	key = fi_mr_key(mr);
	raddr = (uint64_t)(uintptr_t)&word;

	/* the connection up, both sides progressing: one message */
	RDMT_POST(fi_trecv(t.ep, wbuf[1], 8, NULL, FI_ADDR_UNSPEC, 7, 0, &ctx[1]));
	RDMT_POST(fi_tsend(i.ep, wbuf[0], 8, NULL, to, 7, &ctx[0]));
	rdmt_wait_ok(t.cq, &c);
	rdmt_check_recv(&c, &ctx[1], FI_TAGGED | FI_RECV, 8, 7);
	rdmt_wait_ok(i.cq, &c);
	FDT_ASSERT(c.e.op_context == &ctx[0], "warm-up send: context");

	/* ---- T makes no call: I injects ---- */
	for (int k = 0; k < NOPS; k++) {
		ssize_t rc = fi_inject_atomic(i.ep, &one, 1, to, raddr, key, FI_UINT64, FI_SUM);

		FDT_ASSERT(rc == 0, "fi_inject_atomic %d to a target making no call = %zd (%s): "
			   "an inject may overdraw the 64 credits by 128", k, rc,
			   fi_strerror((int)-rc));
	}

	/* ---- I makes no call from here: T alone ---- */
	end = rdmt_now_ms() + SILENT_MS;
	while ((seen = word) != NOPS && rdmt_now_ms() < end)
		drive_target(&t);
	FDT_ASSERT(seen == NOPS, "%llu of %d fi_inject_atomic adds reached the target in %d ms "
		   "while the initiator made no call (the rest were left queued)",
		   (unsigned long long)seen, NOPS, SILENT_MS);

	/* ---- both again: the answers come back; no completion for an
	 * inject, one for the fetch ---- */
	RDMT_POST(fi_fetch_atomic(i.ep, &zero, 1, NULL, &old, NULL, to, raddr, key, FI_UINT64,
				  FI_SUM, &ctx[2]));
	rdmt_wait_ok(i.cq, &c);
	FDT_ASSERT(c.e.op_context == &ctx[2], "initiator: a completion for context %p, not "
		   "the fetch (an inject reports none)", c.e.op_context);
	FDT_ASSERT(old == NOPS, "fetch-add of 0 read %llu, want %d", (unsigned long long)old,
		   NOPS);
	rdmt_quiet(i.cq, 100, "a completion after the fetch");
	printf("%d fi_inject_atomic adds reached a target while their initiator made no "
	       "call\n", NOPS);
	FDT_OK(fi_close(&mr->fid));
	rdmt_ep_close(&i);
	rdmt_ep_close(&t);
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_inject_atomic");
}
