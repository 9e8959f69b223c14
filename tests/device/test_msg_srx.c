/* Shared receive context on MSG endpoints (fi_srx_context over an SRQ).
 *
 * Three clients connect to one server whose three endpoints are bound to
 * one SRX; every receive is posted to the SRX before any connection
 * exists. Checked:
 * - getinfo accepts rx_ctx_cnt FI_SHARED_CONTEXT and reports a shared
 *   receive context per endpoint;
 * - every message lands in a receive of the pool, the completion carries
 *   the context of the receive whose buffer holds it (fi_recv, fi_recvv
 *   with two pieces and fi_recvmsg posts), length and flags right, every
 *   byte checked; one connection's messages consume the pool in posting
 *   order;
 * - fi_recv on an endpoint bound to an SRX and fi_send on the SRX are
 *   refused (-FI_EOPNOTSUPP);
 * - closing one endpoint leaves the pool to the others: a receive posted
 *   before the close takes another client's later message;
 * - a message longer than the receive: FI_ETRUNC with that receive's
 *   context;
 * - fi_close of the SRX while endpoints are bound is -FI_EBUSY; after they
 *   are gone it closes with receives still posted;
 * - bad sizes, iov limits, caps and flags of fi_srx_context and bad binds
 *   get their error codes. */
#include <unistd.h>

#include "fdt.h"

#define NCLIENTS 3
#define PER_CLIENT 4
#define MSG_LEN 200
#define RECV_LEN 256
#define NRECV (NCLIENTS * PER_CLIENT + 4)

static uint32_t seed_of(int client, int n)
{
	return 0x5100u + (uint32_t)client * 64u + (uint32_t)n;
}

/* ---- client ---- */

struct client_state {
	char go[16];
	struct fid_mr *go_mr;
	char *out;
	struct fid_mr *out_mr;
};

static void client_pre(struct fdt_side *side, void *arg)
{
	struct client_state *cs = arg;

	cs->go_mr = fdt_reg(side, cs->go, sizeof(cs->go), FI_RECV);
	FDT_OK(fi_recv(side->ep, cs->go, sizeof(cs->go), fi_mr_desc(cs->go_mr), 0, cs->go));
}

static void client_send(struct fdt_side *side, struct client_state *cs,
			size_t len, uint32_t seed, int may_fail)
{
	struct fi_cq_data_entry ce;
	struct fi_cq_err_entry err;
	int rc;

	/* first 4 bytes: who and which, the rest the pattern */
	memcpy(cs->out, &seed, sizeof(seed));
	fdt_fill(cs->out + 4, len - 4, seed);
	FDT_OK(fi_send(side->ep, cs->out, len, fi_mr_desc(cs->out_mr), 0, cs));
	rc = fdt_wait_cq(side->txcq, &ce, &err);
	if (!may_fail)
		FDT_ASSERT(rc == 1 && ce.op_context == cs, "send completion: rc %d", rc);
}

static int client(struct fdt_side *side, void *arg)
{
	struct client_state cs = { 0 };
	struct fi_cq_data_entry ce;
	struct fi_cq_err_entry err;
	int me = side->client_index;
	uint8_t who = (uint8_t)me;
	struct fdt_cm_data data = { &who, 1 };

	(void)arg;
	side->cq_format = FI_CQ_FORMAT_DATA;
	fdt_client_connect(side, &data, NULL, client_pre, &cs);
	cs.out = calloc(1, 2 * RECV_LEN);
	cs.out_mr = fdt_reg(side, cs.out, 2 * RECV_LEN, FI_SEND);
	for (int n = 0; n < PER_CLIENT; n++)
		client_send(side, &cs, MSG_LEN, seed_of(me, n), 0);
	if (me == 1) {
		/* the server closes this connection */
		fdt_wait_shutdown(side);
	} else {
		FDT_ASSERT(fdt_wait_cq(side->rxcq, &ce, &err) == 1 && ce.op_context == cs.go,
			   "client %d: no go message", me);
		if (me == 2)
			client_send(side, &cs, MSG_LEN, seed_of(me, PER_CLIENT), 0);
		else	/* longer than any receive of the pool */
			client_send(side, &cs, RECV_LEN + 100, seed_of(me, PER_CLIENT), 1);
		/* stay connected until the server has seen it */
		if (me == 2)
			fdt_wait_shutdown(side);
		else
			sleep(1);
	}
	fi_close(&cs.go_mr->fid);
	fi_close(&cs.out_mr->fid);
	free(cs.out);
	fdt_close_side(side);
	return 0;
}

/* ---- server ---- */

struct pool {
	char *buf;		/* NRECV x RECV_LEN */
	struct fid_mr *mr;
	int ctx[NRECV];		/* the receive contexts: &ctx[i] */
	int done[NRECV];
};

static int ctx_index(struct pool *p, void *ctx)
{
	int *c = ctx;

	FDT_ASSERT(c >= p->ctx && c < p->ctx + NRECV, "foreign context %p", ctx);
	return (int)(c - p->ctx);
}

static void post_pool(struct fid_ep *srx, struct pool *p, int from, int to)
{
	for (int i = from; i < to; i++) {
		char *b = p->buf + (size_t)i * RECV_LEN;
		void *desc[2] = { fi_mr_desc(p->mr), fi_mr_desc(p->mr) };

		if (i % 3 == 0) {
			FDT_OK(fi_recv(srx, b, RECV_LEN, desc[0], FI_ADDR_UNSPEC, &p->ctx[i]));
		} else if (i % 3 == 1) {
			struct iovec iov[2] = { { b, 100 }, { b + 100, RECV_LEN - 100 } };

			FDT_OK(fi_recvv(srx, iov, desc, 2, FI_ADDR_UNSPEC, &p->ctx[i]));
		} else {
			struct iovec iov = { b, RECV_LEN };
			struct fi_msg msg = { .msg_iov = &iov, .desc = desc, .iov_count = 1,
					      .addr = FI_ADDR_UNSPEC, .context = &p->ctx[i] };

			FDT_OK(fi_recvmsg(srx, &msg, 0));
		}
	}
}

/* Reap one message; returns the client that sent it and checks its bytes. */
static int reap_one(struct fid_cq *cq, struct pool *p, int *which_msg, int *index)
{
	struct fi_cq_data_entry ce;
	struct fi_cq_err_entry err;
	uint32_t seed;
	char *b;
	int i;

	FDT_ASSERT(fdt_wait_cq(cq, &ce, &err) == 1, "receive failed: %s",
		   fi_strerror(err.err));
	i = ctx_index(p, ce.op_context);
	FDT_ASSERT(!p->done[i], "receive %d completed twice", i);
	p->done[i] = 1;
	FDT_ASSERT(ce.len == MSG_LEN, "receive %d: len %zu", i, ce.len);
	FDT_ASSERT((ce.flags & (FI_RECV | FI_MSG)) == (FI_RECV | FI_MSG),
		   "receive %d: flags %#llx", i, (unsigned long long)ce.flags);
	b = p->buf + (size_t)i * RECV_LEN;
	memcpy(&seed, b, sizeof(seed));
	FDT_ASSERT(seed >= 0x5100u && seed < 0x5100u + NCLIENTS * 64u,
		   "receive %d: bad header %#x", i, seed);
	FDT_ASSERT(fdt_check(b + 4, MSG_LEN - 4, seed),
		   "receive %d: payload of %#x corrupt", i, seed);
	*which_msg = (int)((seed - 0x5100u) % 64u);
	*index = i;
	return (int)((seed - 0x5100u) / 64u);
}

static int server(struct fdt_side *base, void *arg)
{
	uint8_t evbuf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *entry = (struct fi_eq_cm_entry *)evbuf;
	struct fi_cq_attr ca = { .size = 256, .format = FI_CQ_FORMAT_DATA,
				 .wait_obj = FI_WAIT_UNSPEC };
	struct fi_rx_attr rxa = { .size = 64 };
	struct fid_ep *ep[NCLIENTS] = { 0 }, *srx;
	struct fid_cq *txcq, *rxcq;
	struct pool p = { 0 };
	char go[NCLIENTS][16];
	struct fid_mr *go_mr;
	int last[NCLIENTS], last_index[NCLIENTS], connected = 0, accepted = 0;
	struct fi_cq_err_entry err;
	struct fi_cq_data_entry ce;
	uint32_t event;
	char dummy[8];

	(void)arg;
	FDT_ASSERT(base->info->ep_attr->rx_ctx_cnt == FI_SHARED_CONTEXT,
		   "rx_ctx_cnt %zu", base->info->ep_attr->rx_ctx_cnt);
	FDT_ASSERT(base->info->domain_attr->max_ep_srx_ctx >= 1, "max_ep_srx_ctx %zu",
		   base->info->domain_attr->max_ep_srx_ctx);
	FDT_OK(fi_domain(base->fabric, base->info, &base->domain, NULL));
	FDT_OK(fi_cq_open(base->domain, &ca, &txcq, NULL));
	FDT_OK(fi_cq_open(base->domain, &ca, &rxcq, NULL));
	/* bad requests first: each a clear error, nothing created */
	{
		struct fi_rx_attr bad = { .size = (size_t)1 << 40 };

		FDT_EXPECT(fi_srx_context(base->domain, &bad, &srx, NULL), -FI_EINVAL);
		bad.size = 16;
		bad.iov_limit = 9;
		FDT_EXPECT(fi_srx_context(base->domain, &bad, &srx, NULL), -FI_EINVAL);
		bad.iov_limit = 1;
		bad.caps = FI_TAGGED;	/* needs matching in software: RDM's job */
		FDT_EXPECT(fi_srx_context(base->domain, &bad, &srx, NULL), -FI_EOPNOTSUPP);
		bad.caps = 0;
		bad.op_flags = FI_MULTI_RECV;
		FDT_EXPECT(fi_srx_context(base->domain, &bad, &srx, NULL), -FI_EBADFLAGS);
		FDT_EXPECT(fi_srx_context(base->domain, &rxa, NULL, NULL), -FI_EINVAL);
	}
	FDT_OK(fi_srx_context(base->domain, &rxa, &srx, NULL));
	FDT_EXPECT(fi_send(srx, dummy, 0, NULL, 0, NULL), -FI_EOPNOTSUPP);
	{	/* no CM call applies to a context */
		char name[64];
		size_t namelen = sizeof(name);

		FDT_EXPECT(fi_getname(&srx->fid, name, &namelen), -FI_EOPNOTSUPP);
		FDT_EXPECT(fi_connect(srx, name, NULL, 0), -FI_EOPNOTSUPP);
		FDT_EXPECT(fi_shutdown(srx, 0), -FI_EOPNOTSUPP);
	}
	FDT_EXPECT(fi_ep_bind(srx, &rxcq->fid, FI_RECV), -FI_EINVAL);

	p.buf = calloc(NRECV, RECV_LEN);
	p.mr = fdt_reg(base, p.buf, (size_t)NRECV * RECV_LEN, FI_RECV);
	go_mr = fdt_reg(base, go, sizeof(go), FI_SEND);
	/* one receive per message of phase 1, plus two for phase 2 */
	post_pool(srx, &p, 0, NCLIENTS * PER_CLIENT + 2);

	while (connected < NCLIENTS) {
		ssize_t rc = fi_eq_sread(base->eq, &event, evbuf, sizeof(evbuf), 30000, 0);

		FDT_ASSERT(rc > 0, "fi_eq_sread: %s", fi_strerror((int)-rc));
		if (event == FI_CONNREQ) {
			struct fid_ep *e;
			int who;

			FDT_ASSERT(accepted < NCLIENTS, "too many requests");
			FDT_ASSERT((size_t)rc == sizeof(*entry) + 1, "request data %zd", rc);
			who = entry->data[0];
			FDT_ASSERT(who < NCLIENTS && !ep[who], "client index %d", who);
			FDT_OK(fi_endpoint(base->domain, entry->info, &e, NULL));
			fi_freeinfo(entry->info);
			FDT_OK(fi_ep_bind(e, &base->eq->fid, 0));
			FDT_OK(fi_ep_bind(e, &txcq->fid, FI_TRANSMIT));
			FDT_OK(fi_ep_bind(e, &rxcq->fid, FI_RECV));
			FDT_EXPECT(fi_ep_bind(e, &srx->fid, FI_RECV), -FI_EBADFLAGS);
			FDT_OK(fi_ep_bind(e, &srx->fid, 0));
			FDT_EXPECT(fi_ep_bind(e, &srx->fid, 0), -FI_EINVAL);	/* twice */
			FDT_OK(fi_enable(e));
			FDT_EXPECT(fi_ep_bind(e, &srx->fid, 0), -FI_EOPBADSTATE);
			FDT_EXPECT(fi_recv(e, dummy, 0, NULL, 0, NULL), -FI_EOPNOTSUPP);
			FDT_OK(fi_accept(e, NULL, 0));
			ep[who] = e;
			accepted++;
		} else {
			FDT_ASSERT(event == FI_CONNECTED, "event %u", event);
			connected++;
		}
	}

	/* Phase 1: 12 messages from 3 clients into the pool. */
	for (int c = 0; c < NCLIENTS; c++)
		last[c] = -1, last_index[c] = -1;
	for (int k = 0; k < NCLIENTS * PER_CLIENT; k++) {
		int n, i, c = reap_one(rxcq, &p, &n, &i);

		FDT_ASSERT(n == last[c] + 1, "client %d: message %d after %d", c, n, last[c]);
		FDT_ASSERT(i > last_index[c], "client %d: receive %d after %d (not in posting order)",
			   c, i, last_index[c]);
		last[c] = n;
		last_index[c] = i;
	}
	for (int i = 0; i < NCLIENTS * PER_CLIENT; i++)
		FDT_ASSERT(p.done[i], "receive %d (posted early) unused while later ones were", i);

	/* Phase 2: client 1's endpoint goes; the pool stays for the others. */
	FDT_OK(fi_close(&ep[1]->fid));
	ep[1] = NULL;
	FDT_OK(fi_send(ep[2], go[2], sizeof(go[2]), fi_mr_desc(go_mr), 0, go[2]));
	FDT_ASSERT(fdt_wait_cq(txcq, &ce, &err) == 1 && ce.op_context == go[2], "go 2");
	{
		int n, i, c = reap_one(rxcq, &p, &n, &i);

		FDT_ASSERT(c == 2 && n == PER_CLIENT, "phase 2: client %d message %d", c, n);
		FDT_ASSERT(i == NCLIENTS * PER_CLIENT,
			   "phase 2: took receive %d, not the oldest posted (%d)",
			   i, NCLIENTS * PER_CLIENT);
	}
	/* Truncation: client 0 sends more than a receive holds. */
	FDT_OK(fi_send(ep[0], go[0], sizeof(go[0]), fi_mr_desc(go_mr), 0, go[0]));
	FDT_ASSERT(fdt_wait_cq(txcq, &ce, &err) == 1 && ce.op_context == go[0], "go 0");
	memset(&err, 0, sizeof(err));
	FDT_EXPECT(fdt_wait_cq(rxcq, &ce, &err), -FI_EAVAIL);
	FDT_ASSERT(err.err == FI_ETRUNC, "long message: err %d (%s), not FI_ETRUNC",
		   err.err, fi_strerror(err.err));
	FDT_ASSERT(err.op_context == &p.ctx[NCLIENTS * PER_CLIENT + 1],
		   "truncated receive: context %p, expected receive %d",
		   err.op_context, NCLIENTS * PER_CLIENT + 1);

	/* Closing: refused while bound, fine after, with receives posted. */
	post_pool(srx, &p, NCLIENTS * PER_CLIENT + 2, NRECV);
	FDT_EXPECT(fi_close(&srx->fid), -FI_EBUSY);
	FDT_OK(fi_close(&ep[0]->fid));
	FDT_OK(fi_close(&ep[2]->fid));
	FDT_OK(fi_close(&srx->fid));
	FDT_OK(fi_close(&txcq->fid));
	FDT_OK(fi_close(&rxcq->fid));
	FDT_OK(fi_close(&p.mr->fid));
	FDT_OK(fi_close(&go_mr->fid));
	FDT_OK(fi_close(&base->domain->fid));
	base->domain = NULL;
	free(p.buf);
	printf("srx: %d messages from %d endpoints through one SRX, in order; truncation and close checked\n",
	       NCLIENTS * PER_CLIENT + 1, NCLIENTS);
	return 0;
}

int main(void)
{
	struct fi_info *hints;
	int rc;

	fdt_addr();
	hints = fdt_hints();
	hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	rc = fdt_run_multi(hints, server, client, NCLIENTS, NULL);
	fi_freeinfo(hints);
	return rc;
}
