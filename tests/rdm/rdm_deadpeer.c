/* A peer that dies fails only what is addressed to it. Three processes:
 * the receiver R (this one), a live peer L that echoes, and a peer D that
 * talks to R once and is then SIGKILLed. Afterwards R's sends to D must
 * end in error completions within RDMT_WAIT_MS, while a ping-pong with L
 * running at the same time completes every round with the right bytes,
 * and R can still receive from L. */
#include <signal.h>
#include <unistd.h>

#include "rdmt.h"

#define PINGS 20
#define TO_DEAD 3

enum { TAG_HELLO = 1, TAG_PING = 2, TAG_END = 3 };

static int peer_main(int to_parent, int from_parent, void *arg)
{
	int dead = arg != NULL;
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED);
	static uint8_t buf[1024];
	struct rdmt_dom dom;
	struct rdmt_ep e;
	uint8_t rname[256], token = 0;
	struct fi_context sctx, rctx;
	struct rdmt_comp c;
	fi_addr_t r;

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	rdmt_ep_open(&dom, &e, NULL, FI_AV_TABLE);
	rdmt_send_name(to_parent, &e);
	rdmt_recv_name(from_parent, rname);
	r = rdmt_insert_name(&e, rname);
	if (dead) {
		fdt_fill(buf, 100, 0xdead);
		RDMT_POST(fi_tsend(e.ep, buf, 100, NULL, r, TAG_HELLO, &sctx));
		rdmt_wait_ok(e.cq, &c);
		rdmt_write_all(to_parent, &token, 1);
		for (;;)	/* keep the connection up until the SIGKILL */
			rdmt_progress();
	}
	/* echo every ping until the end tag */
	for (;;) {
		RDMT_POST(fi_trecv(e.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, 0, ~0ull, &rctx));
		rdmt_wait_ok(e.cq, &c);
		if (c.e.tag == TAG_END)
			break;
		RDMT_POST(fi_tsend(e.ep, buf, c.e.len, NULL, r, TAG_PING, &sctx));
		rdmt_wait_ok(e.cq, &c);
	}
	rdmt_ep_close(&e);
	rdmt_dom_close(&dom);
	return 0;
}

int main(void)
{
	int to_l, from_l, to_d, from_d, i, rc, dead_errors = 0, pongs = 0;
	static uint8_t ping[512], pong[512], hello[128], to_dead[TO_DEAD][64];
	struct fi_context sctx, rctx, dctx[TO_DEAD];
	struct fi_info *hints;
	struct rdmt_dom dom;
	struct rdmt_ep e;
	uint8_t name[256], token;
	struct rdmt_comp c;
	fi_addr_t l, d;
	pid_t lpid, dpid;
	long t_kill;

	(void)fdt_addr();
	lpid = rdmt_spawn(peer_main, NULL, &to_l, &from_l);
	dpid = rdmt_spawn(peer_main, (void *)1, &to_d, &from_d);

	hints = rdmt_hints(FI_MSG | FI_TAGGED | FI_DIRECTED_RECV | FI_SOURCE);
	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	rdmt_ep_open(&dom, &e, NULL, FI_AV_TABLE);
	rdmt_recv_name(from_l, name);
	l = rdmt_insert_name(&e, name);
	rdmt_recv_name(from_d, name);
	d = rdmt_insert_name(&e, name);
	rdmt_send_name(to_l, &e);
	rdmt_send_name(to_d, &e);

	/* D says hello, so R and D are connected when D dies */
	RDMT_POST(fi_trecv(e.ep, hello, sizeof(hello), NULL, d, TAG_HELLO, 0, &rctx));
	rdmt_wait_ok(e.cq, &c);
	rdmt_check_recv(&c, &rctx, FI_TAGGED | FI_RECV, 100, TAG_HELLO);
	FDT_ASSERT(fdt_check(hello, 100, 0xdead), "hello bytes");
	rdmt_read_all(from_d, &token, 1);
	kill(dpid, SIGKILL);
	rc = rdmt_reap(dpid);
	t_kill = rdmt_now_ms();

	for (i = 0; i < TO_DEAD; i++)
		RDMT_POST(fi_tsend(e.ep, to_dead[i], sizeof(to_dead[i]), NULL, d, TAG_PING, &dctx[i]));
	for (i = 0; i < PINGS; i++) {
		fdt_fill(ping, sizeof(ping), 500 + i);
		memset(pong, 0, sizeof(pong));
		RDMT_POST(fi_trecv(e.ep, pong, sizeof(pong), NULL, l, TAG_PING, 0, &rctx));
		RDMT_POST(fi_tsend(e.ep, ping, sizeof(ping), NULL, l, TAG_PING, &sctx));
		while (pongs == i) {
			rdmt_wait(e.cq, &c);
			if (c.err) {
				FDT_ASSERT(c.errent.op_context >= (void *)&dctx[0] &&
					   c.errent.op_context <= (void *)&dctx[TO_DEAD - 1],
					   "an operation to the live peer failed: %d (%s)",
					   c.err, fi_strerror(c.err));
				printf("send to the dead peer: %s after %ld ms\n",
				       fi_strerror(c.err), rdmt_now_ms() - t_kill);
				dead_errors++;
				continue;
			}
			FDT_ASSERT(c.e.op_context != &dctx[0] && c.e.op_context != &dctx[1] &&
				   c.e.op_context != &dctx[2], "a send to the dead peer succeeded");
			if (c.e.op_context == &rctx) {
				rdmt_check_recv(&c, &rctx, FI_TAGGED | FI_RECV, sizeof(ping), TAG_PING);
				FDT_ASSERT(c.src == l, "pong source");
				FDT_ASSERT(fdt_check(pong, sizeof(pong), 500 + i), "pong %d bytes", i);
				pongs++;
			}
		}
	}
	while (dead_errors < TO_DEAD) {
		rdmt_wait(e.cq, &c);
		if (c.e.op_context == &sctx && !c.err)
			continue;	/* the last ping's send completion */
		FDT_ASSERT(c.err, "a send to the dead peer succeeded (ctx %p)", c.e.op_context);
		printf("send to the dead peer: %s after %ld ms\n", fi_strerror(c.err),
		       rdmt_now_ms() - t_kill);
		dead_errors++;
	}
	RDMT_POST(fi_tsend(e.ep, ping, 1, NULL, l, TAG_END, &sctx));
	rdmt_wait_ok(e.cq, &c);
	rc = rdmt_reap(lpid);
	FDT_ASSERT(rc == 0, "the live peer failed (%d)", rc);
	rdmt_ep_close(&e);
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_deadpeer");
}
