/* An inject that the call accepted is on its way without the sender's
 * help: fi_inject and fi_tinject report no completion, so a program has
 * no reason to call the library again after them (MPICH's MPI_Bsend and
 * MPI_Finalize: the sender sits in a PMI barrier while the receiver waits
 * for the message). When a message cannot be posted at once (no credit
 * left at the peer, the overdraft an inject may take spent too:
 * rdm_overdraft; connection not made yet, send queue full), the call
 * must say -FI_EAGAIN instead of parking it for a later progress call
 * that may never come.
 *
 * The sender injects NMSG messages (far more than one connection's
 * credits) to a receiver that does not read for STALL_MS, retrying each
 * -FI_EAGAIN with fi_cq_read as the API asks; then it stops calling the
 * library and waits on a pipe. The receiver must get every message, in
 * order, every byte right. Tagged and untagged, with and without remote
 * CQ data. */
#include <poll.h>
#include <unistd.h>

#include "rdmt.h"

#define NMSG		400
#define MSGLEN		40
#define STALL_MS	600
#define DRAIN_MS	5000	/* the receiver gives up after this long idle */

enum { KIND_TINJECT, KIND_INJECT, KIND_TINJECTDATA, KIND_N };
static const char *const kind_name[KIND_N] = { "fi_tinject", "fi_inject", "fi_tinjectdata" };

static uint8_t sbuf[NMSG][MSGLEN], rbuf[NMSG][MSGLEN];
static struct fi_context rctx[NMSG];

static ssize_t inject_one(struct rdmt_ep *e, int kind, int i, fi_addr_t peer)
{
	switch (kind) {
	case KIND_TINJECT:
		return fi_tinject(e->ep, sbuf[i], MSGLEN, peer, 7);
	case KIND_INJECT:
		return fi_inject(e->ep, sbuf[i], MSGLEN, peer);
	default:
		return fi_tinjectdata(e->ep, sbuf[i], MSGLEN, (uint64_t)i, peer, 7);
	}
}

static void open_side(struct rdmt_dom *dom, struct rdmt_ep *e, int to_peer, int from_peer,
		      fi_addr_t *peer)
{
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED);
	uint8_t peer_name[256];

	rdmt_dom_open(dom, hints);
	fi_freeinfo(hints);
	rdmt_ep_open(dom, e, NULL, FI_AV_TABLE);
	rdmt_send_name(to_peer, e);
	rdmt_recv_name(from_peer, peer_name);
	*peer = rdmt_insert_name(e, peer_name);
}

static void sender(int to_peer, int from_peer, int kind)
{
	struct rdmt_dom dom;
	struct rdmt_ep e;
	struct pollfd pfd = { .fd = from_peer, .events = POLLIN };
	fi_addr_t peer;
	uint8_t token = 0;
	uint32_t got = 0;
	long eagain = 0;
	int i;

	open_side(&dom, &e, to_peer, from_peer, &peer);
	rdmt_read_all(from_peer, &token, 1);	/* the receives are posted */
	for (i = 0; i < NMSG; i++) {
		ssize_t rc;
		long end = rdmt_now_ms() + RDMT_WAIT_MS;

		fdt_fill(sbuf[i], MSGLEN, (uint32_t)(kind * 10000 + i));
		while ((rc = inject_one(&e, kind, i, peer)) == -FI_EAGAIN) {
			eagain++;
			rdmt_progress();
			FDT_ASSERT(rdmt_now_ms() < end, "%s %d: -FI_EAGAIN for %d ms",
				   kind_name[kind], i, RDMT_WAIT_MS);
		}
		FDT_ASSERT(rc == 0, "%s %d = %zd (%s)", kind_name[kind], i, rc,
			   fi_strerror((int)-rc));
		/* the buffer is ours again at once: scribble over it */
		memset(sbuf[i], 0xee, MSGLEN);
	}
	/* From here on the sender does not call the library until the
	 * receiver has everything (or gave up). */
	rdmt_write_all(to_peer, &token, 1);
	FDT_ASSERT(poll(&pfd, 1, DRAIN_MS + STALL_MS + RDMT_WAIT_MS) == 1,
		   "%s: the receiver never answered", kind_name[kind]);
	rdmt_read_all(from_peer, &got, sizeof(got));
	FDT_ASSERT(got == NMSG, "%s: the receiver got %u of %d injected messages (the rest "
		   "waited for a progress call of the sender's; -FI_EAGAIN seen %ld times)",
		   kind_name[kind], got, NMSG, eagain);
	printf("%s: %d messages, -FI_EAGAIN %ld times\n", kind_name[kind], NMSG, eagain);
	rdmt_write_all(to_peer, &token, 1);
	rdmt_ep_close(&e);
	rdmt_dom_close(&dom);
}

static int receiver(int to_peer, int from_peer, void *arg)
{
	int kind = (int)(intptr_t)arg;
	struct rdmt_dom dom;
	struct rdmt_ep e;
	struct rdmt_comp c;
	fi_addr_t peer;
	uint8_t token = 0;
	uint32_t got = 0;
	int i;

	open_side(&dom, &e, to_peer, from_peer, &peer);
	for (i = 0; i < NMSG; i++) {
		if (kind == KIND_INJECT)
			RDMT_POST(fi_recv(e.ep, rbuf[i], MSGLEN, NULL, peer, &rctx[i]));
		else
			RDMT_POST(fi_trecv(e.ep, rbuf[i], MSGLEN, NULL, peer, 7, 0, &rctx[i]));
	}
	rdmt_write_all(to_peer, &token, 1);
	usleep(STALL_MS * 1000);	/* no reads: the sender runs out of credit */
	while (got < NMSG && rdmt_poll(e.cq, &c, DRAIN_MS)) {
		FDT_ASSERT(!c.err, "%s: receive %u failed: %s", kind_name[kind], got,
			   fi_strerror(c.err));
		rdmt_check_recv(&c, &rctx[got], (kind == KIND_INJECT ? FI_MSG : FI_TAGGED) | FI_RECV,
				MSGLEN, kind == KIND_INJECT ? 0 : 7);
		FDT_ASSERT(fdt_check(rbuf[got], MSGLEN, (uint32_t)(kind * 10000 + got)),
			   "%s: message %u's bytes", kind_name[kind], got);
		if (kind == KIND_TINJECTDATA)
			FDT_ASSERT((c.e.flags & FI_REMOTE_CQ_DATA) && c.e.data == got,
				   "message %u: data %llu", got, (unsigned long long)c.e.data);
		got++;
	}
	rdmt_read_all(from_peer, &token, 1);	/* the sender has returned from them all */
	rdmt_write_all(to_peer, &got, sizeof(got));
	rdmt_read_all(from_peer, &token, 1);
	rdmt_ep_close(&e);
	rdmt_dom_close(&dom);
	return 0;
}

/* One process pair per call: a process that has used the device forks
 * no receiver (rdmt_spawn's rule). */
static int one_kind(int kind)
{
	int to_child, from_child, rc;
	pid_t pid = rdmt_spawn(receiver, (void *)(intptr_t)kind, &to_child, &from_child);

	sender(to_child, from_child, kind);
	rc = rdmt_reap(pid);
	FDT_ASSERT(rc == 0, "%s: the receiver failed (%d)", kind_name[kind], rc);
	return 0;
}

int main(void)
{
	(void)fdt_addr();	/* skip before forking */
	for (int kind = 0; kind < KIND_N; kind++) {
		pid_t pid;

		fflush(stdout);
		pid = fork();
		FDT_ASSERT(pid >= 0, "fork");
		if (pid == 0)
			exit(one_kind(kind));
		FDT_ASSERT(rdmt_reap(pid) == 0, "%s failed", kind_name[kind]);
	}
	return rdmt_pass("rdm_inject");
}
