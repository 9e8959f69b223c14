/* Load: 256 MSG connections open at once between two processes (on one
 * Soft-RoCE device: both ends share rxe0), every one of them carrying
 * checked traffic both ways.
 *
 * The client opens 256 endpoints and connects them all before waiting for
 * any; the server accepts them as the requests come. Each side has one
 * domain, one EQ and one transmit and one receive CQ shared by all its
 * endpoints (a CQ per endpoint would cost 512 completion channels, i.e.
 * file descriptors). The client then posts ROUNDS messages on every
 * endpoint at once; the server checks each (endpoint, round, contents),
 * answers it with a transformed copy, and the client checks the answers.
 * Ordering per endpoint is checked too: RC delivers in order.
 * At the end the device's QP/MR/CQ/cm_id counts must be back where they
 * started.
 *
 *   test_load_256eps [NEPS]    (default 256) */
#define _GNU_SOURCE
#include <unistd.h>

#include "flt.h"

#define MAX_EPS 1024
#define ROUNDS 4
#define MSG 1024
#define LIMIT_MS 240000

static int neps = 256;

struct side_bufs {
	uint8_t (*rx)[ROUNDS][MSG];
	uint8_t (*tx)[ROUNDS][MSG];
	struct fid_mr *rx_mr, *tx_mr;
	struct fid_ep *ep[MAX_EPS];
	int next_rx[MAX_EPS];	/* rounds received per endpoint */
};

static uint32_t seed_of(int ep, int round, int answer)
{
	return (uint32_t)(ep * 1000 + round) ^ (answer ? 0x5a5a5a5au : 0);
}

static void *ctx_of(int ep, int round)
{
	return (void *)(uintptr_t)(1 + ep * ROUNDS + round);
}

static void ctx_split(void *ctx, int *ep, int *round)
{
	int v = (int)(uintptr_t)ctx - 1;

	FDT_ASSERT(v >= 0 && v < neps * ROUNDS, "completion with context %p", ctx);
	*ep = v / ROUNDS;
	*round = v % ROUNDS;
}

static void bufs_alloc(struct fdt_side *s, struct side_bufs *b)
{
	size_t sz = (size_t)neps * ROUNDS * MSG;

	b->rx = calloc(1, sz);
	b->tx = calloc(1, sz);
	FDT_ASSERT(b->rx && b->tx, "out of memory");
	FDT_OK(fi_mr_reg(s->domain, b->rx, sz, FI_RECV, 0, 0, 0, &b->rx_mr, NULL));
	FDT_OK(fi_mr_reg(s->domain, b->tx, sz, FI_SEND, 0, 0, 0, &b->tx_mr, NULL));
}

static void bufs_free(struct side_bufs *b)
{
	FDT_OK(fi_close(&b->rx_mr->fid));
	FDT_OK(fi_close(&b->tx_mr->fid));
	free(b->rx);
	free(b->tx);
}

static void open_shared(struct fdt_side *s, struct fi_info *info)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_UNSPEC };

	FDT_OK(fi_domain(s->fabric, info, &s->domain, NULL));
	ca.size = (size_t)neps * ROUNDS * 2;
	FDT_OK(fi_cq_open(s->domain, &ca, &s->txcq, NULL));
	FDT_OK(fi_cq_open(s->domain, &ca, &s->rxcq, NULL));
}

static struct fid_ep *open_ep(struct fdt_side *s, struct fi_info *info, struct side_bufs *b,
			      int i)
{
	struct fid_ep *ep;

	FDT_OK(fi_endpoint(s->domain, info, &ep, (void *)(uintptr_t)(i + 1)));
	FDT_OK(fi_ep_bind(ep, &s->eq->fid, 0));
	FDT_OK(fi_ep_bind(ep, &s->txcq->fid, FI_TRANSMIT));
	FDT_OK(fi_ep_bind(ep, &s->rxcq->fid, FI_RECV));
	FDT_OK(fi_enable(ep));
	for (int r = 0; r < ROUNDS; r++)
		FDT_OK(fi_recv(ep, b->rx[i][r], MSG, fi_mr_desc(b->rx_mr), 0, ctx_of(i, r)));
	return ep;
}

/* Which of our endpoints an EQ entry names. */
static int ep_index(struct side_bufs *b, fid_t fid)
{
	for (int i = 0; i < neps; i++)
		if (b->ep[i] && &b->ep[i]->fid == fid)
			return i;
	FDT_FAIL("EQ entry for an unknown endpoint");
}

static void wait_connected(struct fdt_side *s, struct side_bufs *b, int want,
			   int *connreqs, struct fi_info **reqs)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)buf;
	int connected = 0;
	long t0 = flt_now_ms();

	while (connected < want) {
		uint32_t ev;
		ssize_t rc = fi_eq_sread(s->eq, &ev, buf, sizeof(buf), 1000, 0);

		if (rc == -FI_EAGAIN || rc == -FI_ETIMEDOUT) {
			FDT_ASSERT(flt_now_ms() - t0 < LIMIT_MS,
				   "%d of %d connected after %d s", connected, want,
				   LIMIT_MS / 1000);
			continue;
		}
		if (rc == -FI_EAVAIL) {
			struct fi_eq_err_entry err = { 0 };

			fi_eq_readerr(s->eq, &err, 0);
			FDT_FAIL("%s: connection error %s (prov_errno %d) after %d connected",
				 s->is_server ? "server" : "client", fi_strerror(err.err),
				 err.prov_errno, connected);
		}
		FDT_ASSERT(rc > 0, "fi_eq_sread: %zd", rc);
		if (ev == FI_CONNREQ) {
			FDT_ASSERT(connreqs && *connreqs < neps, "unexpected FI_CONNREQ");
			reqs[(*connreqs)++] = e->info;
			continue;
		}
		FDT_ASSERT(ev == FI_CONNECTED, "event %u while connecting", ev);
		(void)ep_index(b, e->fid);
		connected++;
	}
}

static void drain(struct fid_cq *cq, int n, const char *what,
		  void (*each)(void *ctx, size_t len, void *arg), void *arg)
{
	struct fi_cq_data_entry ce[16];
	long t0 = flt_now_ms();
	int got = 0;

	while (got < n) {
		ssize_t rc = fi_cq_read(cq, ce, 16);

		if (rc == -FI_EAGAIN) {
			FDT_ASSERT(flt_now_ms() - t0 < LIMIT_MS, "%s: %d of %d after %d s",
				   what, got, n, LIMIT_MS / 1000);
			continue;
		}
		if (rc == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			fi_cq_readerr(cq, &err, 0);
			FDT_FAIL("%s: error completion %s after %d", what, fi_strerror(err.err), got);
		}
		FDT_ASSERT(rc > 0, "%s: fi_cq_read %zd", what, rc);
		for (int k = 0; k < rc; k++)
			if (each)
				each(ce[k].op_context, ce[k].len, arg);
		got += (int)rc;
	}
}

static void post_send(struct fid_ep *ep, struct side_bufs *b, int i, int r)
{
	ssize_t rc;

	do
		rc = fi_send(ep, b->tx[i][r], MSG, fi_mr_desc(b->tx_mr), 0, ctx_of(i, r));
	while (rc == -FI_EAGAIN);
	FDT_OK(rc);
}

/* Server: check a message, answer it. */
static void server_got(void *ctx, size_t len, void *arg)
{
	struct side_bufs *b = arg;
	int i, r;

	ctx_split(ctx, &i, &r);
	FDT_ASSERT(r == b->next_rx[i], "endpoint %d: round %d arrived before %d", i, r,
		   b->next_rx[i]);
	b->next_rx[i]++;
	FDT_ASSERT(len == MSG && fdt_check(b->rx[i][r], MSG, seed_of(i, r, 0)),
		   "endpoint %d round %d: %zu bytes, wrong contents", i, r, len);
	fdt_fill(b->tx[i][r], MSG, seed_of(i, r, 1));
	post_send(b->ep[i], b, i, r);
}

static void client_got(void *ctx, size_t len, void *arg)
{
	struct side_bufs *b = arg;
	int i, r;

	ctx_split(ctx, &i, &r);
	FDT_ASSERT(r == b->next_rx[i], "endpoint %d: answer %d arrived before %d", i, r,
		   b->next_rx[i]);
	b->next_rx[i]++;
	FDT_ASSERT(len == MSG && fdt_check(b->rx[i][r], MSG, seed_of(i, r, 1)),
		   "endpoint %d answer %d: %zu bytes, wrong contents", i, r, len);
}

static void close_all(struct side_bufs *b)
{
	for (int i = 0; i < neps; i++)
		FDT_OK(fi_close(&b->ep[i]->fid));
	bufs_free(b);
}

static int server(struct fdt_side *s, void *arg)
{
	static struct side_bufs b;
	static struct fi_info *reqs[MAX_EPS];
	static int req_index[MAX_EPS];
	int nreq = 0, accepted = 0, early = 0;
	long t0 = flt_now_ms();

	(void)arg;
	/* Accept as the requests come; the FI_CONNECTEDs are counted after.
	 * Requests arrive in the order rdma_cm resolves the client's
	 * endpoints, not the order they were connected in, so each carries
	 * its client endpoint's index in its CM data. */
	while (accepted < neps) {
		while (accepted < nreq) {
			struct fi_info *info = reqs[accepted];
			int i = req_index[accepted];

			if (!s->domain) {
				open_shared(s, info);
				bufs_alloc(s, &b);
			}
			b.ep[i] = open_ep(s, info, &b, i);
			FDT_OK(fi_accept(b.ep[i], NULL, 0));
			fi_freeinfo(info);
			accepted++;
		}
		if (accepted < neps) {
			uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
			struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)buf;
			uint32_t ev;
			ssize_t rc = fi_eq_sread(s->eq, &ev, buf, sizeof(buf), 1000, 0);

			if (rc == -FI_EAGAIN || rc == -FI_ETIMEDOUT) {
				FDT_ASSERT(flt_now_ms() - t0 < LIMIT_MS, "server: %d requests",
					   nreq);
				continue;
			}
			FDT_ASSERT(rc > 0, "server EQ: %zd", rc);
			if (ev == FI_CONNREQ) {
				uint32_t idx;

				FDT_ASSERT((size_t)rc >= sizeof(*e) + sizeof(idx),
					   "server: request without its endpoint index");
				memcpy(&idx, e->data, sizeof(idx));
				FDT_ASSERT(idx < (uint32_t)neps && !b.ep[idx] && nreq < neps,
					   "server: request for endpoint %u", idx);
				for (int k = 0; k < nreq; k++)
					FDT_ASSERT(req_index[k] != (int)idx,
						   "server: endpoint %u requested twice", idx);
				req_index[nreq] = (int)idx;
				reqs[nreq++] = e->info;
				continue;
			}
			/* a connection accepted earlier is up already */
			FDT_ASSERT(ev == FI_CONNECTED, "server: event %u", ev);
			(void)ep_index(&b, e->fid);
			early++;
		}
	}
	wait_connected(s, &b, neps - early, NULL, NULL);
	printf("server: %d connections established after %ld ms\n", neps, flt_now_ms() - t0);
	t0 = flt_now_ms();
	drain(s->rxcq, neps * ROUNDS, "server receives", server_got, &b);
	drain(s->txcq, neps * ROUNDS, "server answers", NULL, NULL);
	printf("server: %d messages checked and answered in %ld ms\n", neps * ROUNDS,
	       flt_now_ms() - t0);
	/* the client closes first; its disconnects reach us as FI_SHUTDOWN */
	for (int n = 0; n < neps; n++) {
		uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
		struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)buf;
		uint32_t ev;
		ssize_t rc = fi_eq_sread(s->eq, &ev, buf, sizeof(buf), 60000, 0);

		FDT_ASSERT(rc > 0 && ev == FI_SHUTDOWN, "shutdown %d: rc %zd event %u", n, rc, ev);
		(void)ep_index(&b, e->fid);
	}
	close_all(&b);
	fdt_close_side(s);
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	static struct side_bufs b;
	long t0 = flt_now_ms();

	(void)arg;
	open_shared(s, s->info);
	bufs_alloc(s, &b);
	for (int i = 0; i < neps; i++) {
		uint32_t idx = (uint32_t)i;

		b.ep[i] = open_ep(s, s->info, &b, i);
		FDT_OK(fi_connect(b.ep[i], s->info->dest_addr, &idx, sizeof(idx)));
	}
	wait_connected(s, &b, neps, NULL, NULL);
	printf("client: %d connections established after %ld ms\n", neps, flt_now_ms() - t0);
	t0 = flt_now_ms();
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < neps; i++) {
			fdt_fill(b.tx[i][r], MSG, seed_of(i, r, 0));
			post_send(b.ep[i], &b, i, r);
		}
	drain(s->txcq, neps * ROUNDS, "client sends", NULL, NULL);
	drain(s->rxcq, neps * ROUNDS, "client answers", client_got, &b);
	printf("client: %d answers checked in %ld ms\n", neps * ROUNDS, flt_now_ms() - t0);
	for (int i = 0; i < neps; i++)
		FDT_ASSERT(b.next_rx[i] == ROUNDS, "endpoint %d: %d answers", i, b.next_rx[i]);
	for (int i = 0; i < neps; i++)
		FDT_OK(fi_shutdown(b.ep[i], 0));
	close_all(&b);
	fdt_close_side(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct flt_res before;
	struct fi_info *hints;
	long t0 = flt_now_ms();
	int rc;

	if (argc > 1)
		neps = atoi(argv[1]);
	FDT_ASSERT(neps > 0 && neps <= MAX_EPS, "1..%d endpoints", MAX_EPS);
	fdt_addr();
	setvbuf(stdout, NULL, _IOLBF, 0);
	flt_res_read(&before);
	hints = fdt_hints();
	/* small queues: 512 QPs share the device */
	hints->tx_attr->size = ROUNDS * 2;
	hints->rx_attr->size = ROUNDS * 2;
	rc = fdt_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	if (rc)
		return rc;
	flt_res_expect(&before, 20000, "load");
	printf("load: %d endpoints, pass in %ld ms\n", neps, flt_now_ms() - t0);
	return 0;
}
