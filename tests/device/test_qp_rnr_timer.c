/* FI_VERBS_MIN_RNR_TIMER reaches the QPs of both sides of a connection.
 *
 * The receiver-not-ready timer is how long a sender waits before it
 * retries a send that found no receive posted. rdma_cm leaves the kernel
 * CM's value on the QP, so the provider sets the configured one once a
 * connection is up. Nothing in the libfabric
 * API shows a QP, so this test looks through the endpoint at its QP (a
 * white-box test: it includes the provider's private header) and asks the
 * device with ibv_query_qp, on the accepting and the connecting side:
 *  - no variable: the default, 12 (0.64 ms);
 *  - FI_VERBS_MIN_RNR_TIMER=5: 5 on both sides;
 *  - FI_VERBS_MIN_RNR_TIMER=40 (out of range): a warning and the default.
 * Each case runs in a fresh process pair (the variable is read at
 * fi_domain). */
#include <stddef.h>
#include <stdlib.h>

#include "fdt.h"
#include "fdv_internal.h"

static int rnr_timer_of(struct fid_ep *ep_fid)
{
	struct fdv_msg_ep *ep = (struct fdv_msg_ep *)(void *)
		((char *)ep_fid - offsetof(struct fdv_msg_ep, ep.ep_fid));
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;

	FDT_ASSERT(ep->id && ep->id->qp, "endpoint without a QP");
	memset(&attr, 0xff, sizeof(attr));
	FDT_ASSERT(!ibv_query_qp(ep->id->qp, &attr, IBV_QP_MIN_RNR_TIMER | IBV_QP_STATE,
				 &init), "ibv_query_qp: %s", strerror(errno));
	FDT_ASSERT(attr.qp_state == IBV_QPS_RTS, "qp state %d, not RTS", attr.qp_state);
	return attr.min_rnr_timer;
}

static int check_side(struct fdt_side *s, int expect)
{
	int got = rnr_timer_of(s->ep);

	printf("%s: min_rnr_timer %d (expected %d)\n", s->is_server ? "server" : "client",
	       got, expect);
	FDT_ASSERT(got == expect, "%s QP min_rnr_timer %d, expected %d",
		   s->is_server ? "server" : "client", got, expect);
	return 0;
}

/* Each side checks its QP while the connection is certainly up: the
 * client checks, then sends; the server checks, waits for that message and
 * answers; the client closes only after the answer. */
struct sync_state {
	char rbuf[8], sbuf[8];
	struct fid_mr *rmr, *smr;
	struct fi_context rctx, sctx;
};

static void post_sync_recv(struct fdt_side *s, void *arg)
{
	struct sync_state *st = arg;

	st->rmr = fdt_reg(s, st->rbuf, sizeof(st->rbuf), FI_RECV);
	st->smr = fdt_reg(s, st->sbuf, sizeof(st->sbuf), FI_SEND);
	FDT_OK(fi_recv(s->ep, st->rbuf, sizeof(st->rbuf), fi_mr_desc(st->rmr), 0, &st->rctx));
}

static void sync_send(struct fdt_side *s, struct sync_state *st)
{
	struct fi_cq_entry e;
	struct fi_cq_err_entry err;

	FDT_OK(fi_send(s->ep, st->sbuf, sizeof(st->sbuf), fi_mr_desc(st->smr), 0, &st->sctx));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, &err) == 1, "send: %d", err.err);
}

static void sync_recv(struct fdt_side *s)
{
	struct fi_cq_entry e;
	struct fi_cq_err_entry err;

	FDT_ASSERT(fdt_wait_cq(s->rxcq, &e, &err) == 1, "recv: %d", err.err);
}

static void close_sync(struct sync_state *st)
{
	fi_close(&st->rmr->fid);
	fi_close(&st->smr->fid);
}

static int server(struct fdt_side *s, void *arg)
{
	struct sync_state st;

	memset(&st, 0, sizeof(st));
	fdt_server_accept(s, NULL, NULL, post_sync_recv, &st);
	check_side(s, *(int *)arg);
	sync_recv(s);
	sync_send(s, &st);
	fdt_wait_shutdown(s);
	close_sync(&st);
	fdt_close_side(s);
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	struct sync_state st;

	memset(&st, 0, sizeof(st));
	fdt_client_connect(s, NULL, NULL, post_sync_recv, &st);
	check_side(s, *(int *)arg);
	sync_send(s, &st);
	sync_recv(s);
	close_sync(&st);
	fdt_close_side(s);
	return 0;
}

static int run_case(const char *env, int expect)
{
	struct fi_info *hints = fdt_hints();
	int ret;

	if (env)
		setenv("FI_VERBS_MIN_RNR_TIMER", env, 1);
	else
		unsetenv("FI_VERBS_MIN_RNR_TIMER");
	printf("FI_VERBS_MIN_RNR_TIMER=%s\n", env ? env : "(unset)");
	ret = fdt_run_pair_fresh(hints, server, client, &expect);
	fi_freeinfo(hints);
	return ret;
}

int main(void)
{
	int ret;

	fdt_addr();	/* exits 77 without a device */
	ret = run_case(NULL, 12);
	if (!ret)
		ret = run_case("5", 5);
	if (!ret)
		ret = run_case("40", 12);
	return ret;
}
