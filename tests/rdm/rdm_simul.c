/* Both sides send first, at the same moment: two processes that have
 * never talked exchange names, meet at a pipe barrier, and each at once
 * sends NMSG tagged messages to the other; the connection is made by
 * both at the same time. Each side must receive exactly NMSG messages,
 * in order, every byte right, none lost or duplicated (a second
 * connection delivering a copy shows up as an extra completion), and then
 * a ping-pong must still work. Two rounds, fresh endpoints each time. */
#include <unistd.h>

#include "rdmt.h"

#define NMSG 64
#define ROUNDS 2
#define MSGLEN 256

static void one_side(int to_peer, int from_peer, int me, int round)
{
	static struct fi_context sctx[NMSG], rctx[NMSG + 1];
	static uint8_t sbuf[NMSG][MSGLEN], rbuf[NMSG + 1][MSGLEN];
	struct rdmt_dom dom;
	struct rdmt_ep e;
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED);
	uint8_t peer_name[256], token = 0;
	struct rdmt_comp c;
	fi_addr_t peer;
	int i, sends = 0, recvs = 0;
	uint32_t seed = (uint32_t)(round * 1000 + me * 100);
	uint32_t peer_seed = (uint32_t)(round * 1000 + (1 - me) * 100);

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	rdmt_ep_open(&dom, &e, NULL, FI_AV_TABLE);
	rdmt_send_name(to_peer, &e);
	rdmt_recv_name(from_peer, peer_name);
	peer = rdmt_insert_name(&e, peer_name);
	for (i = 0; i <= NMSG; i++)
		RDMT_POST(fi_trecv(e.ep, rbuf[i], MSGLEN, NULL, FI_ADDR_UNSPEC, 1, 0, &rctx[i]));
	for (i = 0; i < NMSG; i++)
		fdt_fill(sbuf[i], MSGLEN, seed + i);
	/* barrier: both are ready, then both go */
	rdmt_write_all(to_peer, &token, 1);
	rdmt_read_all(from_peer, &token, 1);
	for (i = 0; i < NMSG; i++)
		RDMT_POST(fi_tsend(e.ep, sbuf[i], MSGLEN, NULL, peer, 1, &sctx[i]));
	while (sends < NMSG || recvs < NMSG) {
		rdmt_wait_ok(e.cq, &c);
		if (c.e.flags & FI_SEND) {
			FDT_ASSERT(c.e.op_context == &sctx[sends], "send %d out of order", sends);
			sends++;
			continue;
		}
		rdmt_check_recv(&c, &rctx[recvs], FI_TAGGED | FI_RECV, MSGLEN, 1);
		FDT_ASSERT(fdt_check(rbuf[recvs], MSGLEN, peer_seed + recvs),
			   "side %d round %d: message %d is not the peer's message %d", me,
			   round, recvs, recvs);
		recvs++;
	}
	/* nothing more may arrive: the extra receive stays empty (both
	 * sides are past their sends before either looks) */
	rdmt_write_all(to_peer, &token, 1);
	rdmt_read_all(from_peer, &token, 1);
	rdmt_quiet(e.cq, 300, "a duplicate message");
	rdmt_write_all(to_peer, &token, 1);
	rdmt_read_all(from_peer, &token, 1);
	/* and the connection works both ways afterwards */
	if (me == 0) {
		int got_send = 0, got_pong = 0;

		RDMT_POST(fi_tsend(e.ep, sbuf[0], MSGLEN, NULL, peer, 1, &sctx[0]));
		/* the ping's send completion waits for its ACK, which the peer
		 * may send after its pong: the two come in either order */
		for (i = 0; i < 2; i++) {
			rdmt_wait_ok(e.cq, &c);
			if (c.e.flags & FI_SEND) {
				FDT_ASSERT(!got_send && c.e.op_context == &sctx[0], "ping");
				got_send = 1;
				continue;
			}
			FDT_ASSERT(!got_pong, "a second pong");
			rdmt_check_recv(&c, &rctx[NMSG], FI_TAGGED | FI_RECV, MSGLEN, 1);
			FDT_ASSERT(fdt_check(rbuf[NMSG], MSGLEN, peer_seed + 1), "pong bytes");
			got_pong = 1;
		}
	} else {
		rdmt_wait_ok(e.cq, &c);
		rdmt_check_recv(&c, &rctx[NMSG], FI_TAGGED | FI_RECV, MSGLEN, 1);
		FDT_ASSERT(fdt_check(rbuf[NMSG], MSGLEN, peer_seed), "ping bytes");
		RDMT_POST(fi_tsend(e.ep, sbuf[1], MSGLEN, NULL, peer, 1, &sctx[0]));
		rdmt_wait_ok(e.cq, &c);
		FDT_ASSERT(c.e.flags & FI_SEND, "pong");
	}
	/* close only after both are done */
	rdmt_write_all(to_peer, &token, 1);
	rdmt_read_all(from_peer, &token, 1);
	rdmt_ep_close(&e);
	rdmt_dom_close(&dom);
}

static int child(int to_parent, int from_parent, void *arg)
{
	int round;

	(void)arg;
	for (round = 0; round < ROUNDS; round++)
		one_side(to_parent, from_parent, 1, round);
	return 0;
}

int main(void)
{
	int to_child, from_child, round, rc;
	pid_t pid;

	(void)fdt_addr();	/* skip before forking */
	pid = rdmt_spawn(child, NULL, &to_child, &from_child);
	for (round = 0; round < ROUNDS; round++)
		one_side(to_child, from_child, 0, round);
	rc = rdmt_reap(pid);
	FDT_ASSERT(rc == 0, "the other side failed (%d)", rc);
	return rdmt_pass("rdm_simul");
}
