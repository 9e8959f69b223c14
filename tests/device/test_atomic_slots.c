/* Completion slots under load: more than 65,536 non-fetching atomics with
 * completions unread at once in one process, each completion checked.
 *
 * A non-fetching atomic is a verbs fetch-add underneath; its completion
 * must still say FI_ATOMIC | FI_WRITE and carry the caller's context,
 * which the provider keeps in a completion slot. The server accepts
 * N_CONN connections (one client process each) with a DEPTH-deep send
 * queue and a CQ per connection, then posts DEPTH FI_ATOMIC_WRITEs of
 * 0, 1, 2, ... to a counter of each client (fi_atomicmsg, FI_MORE on 15 of
 * every 16 so that one doorbell carries 16), each with its own context,
 * before reading any completion: N_CONN x DEPTH = 66,048 slot-using
 * requests in flight (a single process-wide ring of 65,536 slots would
 * hand later requests' contexts to earlier completions). Then it reads
 * every completion and checks that each context comes exactly once, in
 * posting order on its own connection, with flags FI_ATOMIC | FI_WRITE.
 * Each client finally checks that its counter holds the last value
 * written. (Atomic writes, not fetch-adds: a fetch-add waits for its
 * response under the device's few outstanding-atomic credits, and 66,048
 * of them take minutes in an emulated guest; the slot handling is the
 * same for both.) */
#define _POSIX_C_SOURCE 200112L	/* posix_memalign */
#include "fdt.h"

#include <time.h>

#include <rdma/fi_atomic.h>

#define N_CONN 6
#define DEPTH 11008
#define CLIENT_DEPTH 64

struct server_state {
	uint8_t regions[N_CONN][FDT_REGION_WIRE];
	struct fid_mr *regions_mr;
	struct fi_context rctx[N_CONN];
	uint64_t done;
	struct fid_mr *done_mr;
	struct fi_context *ctx;		/* N_CONN x DEPTH */
	unsigned char *seen;
};

static void server_pre(struct fdt_side *c, void *arg)
{
	struct server_state *st = arg;

	if (!st->regions_mr)
		st->regions_mr = fdt_reg(c, st->regions, sizeof(st->regions), FI_RECV);
	FDT_OK(fi_recv(c->ep, st->regions[c->client_index], FDT_REGION_WIRE,
		       fi_mr_desc(st->regions_mr), 0, &st->rctx[c->client_index]));
}

static int ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

static void pause_briefly(void)
{
	struct timespec ts = { 0, 100000 };

	nanosleep(&ts, NULL);
}

static int server(struct fdt_side *s, void *arg)
{
	struct server_state st;
	struct fdt_side conns[N_CONN];
	struct fdt_region r[N_CONN];
	struct timespec t0;
	long total = 0, eagain = 0;

	(void)arg;
	memset(&st, 0, sizeof(st));
	st.ctx = calloc((size_t)N_CONN * DEPTH, sizeof(*st.ctx));
	st.seen = calloc((size_t)N_CONN * DEPTH, 1);
	FDT_ASSERT(st.ctx && st.seen, "calloc");
	s->cq_format = FI_CQ_FORMAT_DATA;
	s->cq_size = DEPTH + 64;	/* every completion of a connection fits */
	fdt_server_accept_many(s, conns, N_CONN, NULL, server_pre, &st);
	/* The region each client sends names its own index first. */
	for (int i = 0; i < N_CONN; i++) {
		struct fi_cq_data_entry e;

		FDT_ASSERT(fdt_wait_cq(conns[i].rxcq, &e, NULL) == 1, "region of %d", i);
	}
	for (int i = 0; i < N_CONN; i++)
		fdt_region_unpack(&r[i], st.regions[i]);

	/* Post everything, reading no completion. A full send queue says
	 * -FI_EAGAIN until the device has worked through it; the CQ keeps
	 * the completions. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int k = 0; k < DEPTH; k++) {
		for (int i = 0; i < N_CONN; i++) {
			uint64_t v = (uint64_t)k;
			struct fi_ioc ioc = { &v, 1 };
			struct fi_rma_ioc rioc = { r[i].addr, 1, r[i].key };
			struct fi_msg_atomic m = { .msg_iov = &ioc, .iov_count = 1,
						   .rma_iov = &rioc, .rma_iov_count = 1,
						   .datatype = FI_UINT64, .op = FI_ATOMIC_WRITE,
						   .context = &st.ctx[(size_t)i * DEPTH + k] };
			ssize_t rc;

			while ((rc = fi_atomicmsg(conns[i].ep, &m,
						  k % 16 != 15 && k != DEPTH - 1 ? FI_MORE : 0))
			       == -FI_EAGAIN) {
				eagain++;
				pause_briefly();
			}
			FDT_OK(rc);
			total++;
		}
	}
	FDT_ASSERT(total > 65536, "only %ld requests", total);
	printf("server: %ld posted in %d ms\n", total, ms_since(&t0));
	fflush(stdout);

	for (int i = 0; i < N_CONN; i++) {
		int got = 0;

		while (got < DEPTH) {
			struct fi_cq_data_entry e[64];
			ssize_t n = fi_cq_read(conns[i].txcq, e, 64);

			if (n == -FI_EAGAIN)
				continue;
			if (n == -FI_EAVAIL) {
				struct fi_cq_err_entry err = { 0 };

				fi_cq_readerr(conns[i].txcq, &err, 0);
				FDT_FAIL("connection %d: error completion %s after %d", i,
					 fi_strerror(err.err), got);
			}
			FDT_ASSERT(n > 0, "fi_cq_read = %zd", n);
			for (ssize_t k = 0; k < n; k++) {
				struct fi_context *c = e[k].op_context;
				ptrdiff_t at = c - st.ctx;

				FDT_ASSERT(at >= (ptrdiff_t)i * DEPTH &&
					   at < (ptrdiff_t)(i + 1) * DEPTH,
					   "connection %d: completion %d has context %p, "
					   "not one of this connection's", i, got, (void *)c);
				FDT_ASSERT(!st.seen[at], "connection %d: context %td twice", i,
					   at - (ptrdiff_t)i * DEPTH);
				/* RC completes in order: the k-th completion is the
				 * k-th request. */
				FDT_ASSERT(at - (ptrdiff_t)i * DEPTH == got,
					   "connection %d: completion %d is request %td", i,
					   got, at - (ptrdiff_t)i * DEPTH);
				FDT_ASSERT(e[k].flags == (FI_ATOMIC | FI_WRITE),
					   "connection %d: flags 0x%llx", i,
					   (unsigned long long)e[k].flags);
				st.seen[at] = 1;
				got++;
			}
		}
	}

	/* Tell every client to check its counter. */
	st.done = DEPTH;	/* "check your counter" */
	st.done_mr = fdt_reg(s, &st.done, sizeof(st.done), FI_SEND);
	for (int i = 0; i < N_CONN; i++) {
		struct fi_cq_data_entry e;

		FDT_OK(fi_send(conns[i].ep, &st.done, sizeof(st.done), fi_mr_desc(st.done_mr),
			       0, &st.done));
		FDT_ASSERT(fdt_wait_cq(conns[i].txcq, &e, NULL) == 1, "done send");
		FDT_ASSERT(e.op_context == &st.done, "done send context");
	}
	for (int i = 0; i < N_CONN; i++)
		fdt_wait_shutdown(s);
	for (int i = 0; i < N_CONN; i++)
		fdt_close_conn(&conns[i]);
	FDT_OK(fi_close(&st.regions_mr->fid));
	FDT_OK(fi_close(&st.done_mr->fid));
	fdt_close_side(s);
	free(st.ctx);
	free(st.seen);
	printf("server: drained in %d ms\n", ms_since(&t0));
	printf("server: %ld non-fetching atomics in flight on %d endpoints (%d each; "
	       "%ld posts met a full send queue), every completion's context and "
	       "flags right\n", total, N_CONN, DEPTH, eagain);
	return 0;
}

struct client_state {
	uint64_t *counter, done;
	struct fid_mr *counter_mr, *done_mr;
	struct fi_context done_ctx;
};

static void client_pre(struct fdt_side *s, void *arg)
{
	struct client_state *c = arg;

	c->done_mr = fdt_reg(s, &c->done, sizeof(c->done), FI_RECV);
	FDT_OK(fi_recv(s->ep, &c->done, sizeof(c->done), fi_mr_desc(c->done_mr), 0,
		       &c->done_ctx));
}

static int client(struct fdt_side *s, void *arg)
{
	struct client_state c;
	uint8_t wire[FDT_REGION_WIRE];
	struct fid_mr *wire_mr;
	struct fi_cq_data_entry e;
	struct fi_context sctx;

	(void)arg;
	memset(&c, 0, sizeof(c));
	FDT_ASSERT(!posix_memalign((void **)&c.counter, 64, 64), "alloc");
	*c.counter = 0;
	s->cq_format = FI_CQ_FORMAT_DATA;
	/* Only the server needs the deep send queue (this is a forked child:
	 * the change stays here). */
	s->hints->tx_attr->size = CLIENT_DEPTH;
	fdt_client_connect(s, NULL, NULL, client_pre, &c);
	c.counter_mr = fdt_reg(s, c.counter, sizeof(uint64_t),
			       FI_REMOTE_READ | FI_REMOTE_WRITE);
	fdt_region_pack(wire, c.counter, sizeof(uint64_t), c.counter_mr);
	wire_mr = fdt_reg(s, wire, sizeof(wire), FI_SEND);
	FDT_OK(fi_send(s->ep, wire, sizeof(wire), fi_mr_desc(wire_mr), 0, &sctx));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1, "region send");
	FDT_ASSERT(fdt_wait_cq_ms(s->rxcq, &e, NULL, 120000) == 1, "done message");
	FDT_ASSERT(e.op_context == &c.done_ctx && c.done == DEPTH, "done message");
	/* RC places the writes in order: the last one stays. */
	FDT_ASSERT(*(volatile uint64_t *)c.counter == DEPTH - 1,
		   "client %d: counter %llu after %d writes", s->client_index,
		   (unsigned long long)*c.counter, DEPTH);
	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_OK(fi_close(&c.counter_mr->fid));
	FDT_OK(fi_close(&wire_mr->fid));
	fdt_close_conn(s);
	FDT_OK(fi_close(&c.done_mr->fid));
	fdt_close_side(s);
	free(c.counter);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	hints->caps |= FI_ATOMIC;
	hints->tx_attr->size = DEPTH;
	/* atomics need no inline room: smaller work queue entries, a
	 * quicker QP set-up for the deep queues */
	hints->tx_attr->inject_size = 16;
	rc = fdt_run_multi(hints, server, client, N_CONN, NULL);
	fi_freeinfo(hints);
	return rc;
}
