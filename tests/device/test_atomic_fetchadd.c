/* Concurrent fetch-adds from two endpoints on one 64-bit counter.
 *
 * Two client processes connect to the server, which exposes one counter
 * (FI_REMOTE_WRITE) starting just below 2^32, so the sum crosses the 32-bit
 * boundary. When the server says go, each client posts 5,000 fi_fetch_atomic
 * FI_SUM on it, up to WINDOW at a time, each with its own operand (1..13,
 * from a formula both sides know) and its own result slot, and sends the
 * fetched old values back. The server then checks the exact outcome: sorted
 * by old value, the 10,000 (old, operand) pairs must chain - the first old
 * value is the initial counter, each next one is the previous plus its
 * operand, and the final counter is the last plus its operand. So every
 * fetched value is distinct, no add was lost or applied twice, and each
 * added its operand's value (not, say, the operand's address). */
#define _POSIX_C_SOURCE 200112L	/* posix_memalign */
#include "fdt.h"

#include <rdma/fi_atomic.h>

#define N_CLIENTS 2
#define N_PER 5000
#define WINDOW 16
#define INITIAL 0xFFFFB000ull

static uint64_t operand(int client, int i)
{
	return 1 + (uint64_t)((i * 7 + client * 3) % 13);
}

struct server_state {
	uint64_t *counter;	/* 64-byte aligned allocation */
	struct fid_mr *counter_mr;
	uint64_t *olds;		/* N_CLIENTS x N_PER, received */
	struct fid_mr *olds_mr;
	uint64_t go;
	struct fid_mr *go_mr;
	struct fi_context rctx[N_CLIENTS];
	uint8_t reply[FDT_REGION_WIRE];
};

static void server_pre(struct fdt_side *c, void *arg)
{
	struct server_state *st = arg;

	if (!st->counter) {
		FDT_ASSERT(!posix_memalign((void **)&st->counter, 64, 64), "alloc");
		*st->counter = INITIAL;
		st->counter_mr = fdt_reg(c, st->counter, sizeof(uint64_t),
					 FI_REMOTE_READ | FI_REMOTE_WRITE);
		fdt_region_pack(st->reply, st->counter, sizeof(uint64_t), st->counter_mr);
		st->olds = calloc(N_CLIENTS * N_PER, sizeof(uint64_t));
		FDT_ASSERT(st->olds, "calloc");
		st->olds_mr = fdt_reg(c, st->olds, N_CLIENTS * N_PER * sizeof(uint64_t),
				      FI_RECV);
		st->go = 0x60;
		st->go_mr = fdt_reg(c, &st->go, sizeof(st->go), FI_SEND);
	}
	/* Slot i belongs to the i-th accepted connection, which need not be
	 * client i: the client names itself in the send's CQ data. */
	FDT_OK(fi_recv(c->ep, st->olds + (size_t)c->client_index * N_PER,
		       N_PER * sizeof(uint64_t), fi_mr_desc(st->olds_mr), 0,
		       &st->rctx[c->client_index]));
}

struct pair {
	uint64_t old, add;
	int who;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return x->old < y->old ? -1 : x->old > y->old;
}

static int server(struct fdt_side *s, void *arg)
{
	struct server_state st;
	struct fdt_side conns[N_CLIENTS];
	struct fdt_cm_data reply = { st.reply, sizeof(st.reply) };
	struct pair *pairs;
	uint64_t final, expect_sum = 0;
	int seen[N_CLIENTS] = { 0 }, switches = 0;

	(void)arg;
	memset(&st, 0, sizeof(st));
	FDT_ASSERT(s->info->domain_attr->cq_data_size >= 1, "no CQ data for the results");
	fdt_server_accept_many(s, conns, N_CLIENTS, &reply, server_pre, &st);
	for (int i = 0; i < N_CLIENTS; i++)
		FDT_OK(fi_send(conns[i].ep, &st.go, sizeof(st.go), fi_mr_desc(st.go_mr), 0,
			       &st.go));
	for (int i = 0; i < N_CLIENTS; i++) {
		struct fi_cq_data_entry e;

		FDT_ASSERT(fdt_wait_cq(conns[i].txcq, &e, NULL) == 1, "go send");
	}
	/* Collect (old value, operand) pairs; operands follow from the
	 * client's index, which comes as CQ data with its results. */
	pairs = malloc(N_CLIENTS * N_PER * sizeof(*pairs));
	FDT_ASSERT(pairs, "malloc");
	for (int i = 0; i < N_CLIENTS; i++) {
		struct fi_cq_data_entry e;
		struct fi_cq_err_entry err;
		int who;

		if (fdt_wait_cq_ms(conns[i].rxcq, &e, &err, 120000) != 1)
			FDT_FAIL("results from connection %d: error %d (%s)", i, err.err,
				 fi_strerror(err.err));
		FDT_ASSERT(e.len == N_PER * sizeof(uint64_t), "results length %zu", e.len);
		FDT_ASSERT(e.flags & FI_REMOTE_CQ_DATA, "results without client index");
		who = (int)e.data;
		FDT_ASSERT(who >= 0 && who < N_CLIENTS && !seen[who], "client index %d", who);
		seen[who] = 1;
		for (int k = 0; k < N_PER; k++) {
			pairs[who * N_PER + k].old = st.olds[(size_t)i * N_PER + k];
			pairs[who * N_PER + k].add = operand(who, k);
			pairs[who * N_PER + k].who = who;
			expect_sum += operand(who, k);
		}
	}
	final = *(volatile uint64_t *)st.counter;
	qsort(pairs, N_CLIENTS * N_PER, sizeof(*pairs), cmp_pair);
	FDT_ASSERT(pairs[0].old == INITIAL, "lowest fetched value 0x%llx, initial 0x%llx",
		   (unsigned long long)pairs[0].old, (unsigned long long)INITIAL);
	for (int k = 1; k < N_CLIENTS * N_PER; k++)
		FDT_ASSERT(pairs[k].old == pairs[k - 1].old + pairs[k - 1].add,
			   "fetched values do not chain at %d: 0x%llx + %llu != 0x%llx%s", k,
			   (unsigned long long)pairs[k - 1].old,
			   (unsigned long long)pairs[k - 1].add,
			   (unsigned long long)pairs[k].old,
			   pairs[k].old == pairs[k - 1].old ? " (duplicate)" : "");
	{
		struct pair *last = &pairs[N_CLIENTS * N_PER - 1];

		FDT_ASSERT(final == last->old + last->add, "final counter 0x%llx, expected "
			   "0x%llx", (unsigned long long)final,
			   (unsigned long long)(last->old + last->add));
	}
	/* how often the counter passed from one client to the other: 1 would
	 * mean the two ran one after the other */
	for (int k = 1; k < N_CLIENTS * N_PER; k++)
		switches += pairs[k].who != pairs[k - 1].who;
	FDT_ASSERT(final == INITIAL + expect_sum, "final counter 0x%llx != initial + sum 0x%llx",
		   (unsigned long long)final, (unsigned long long)(INITIAL + expect_sum));

	for (int i = 0; i < N_CLIENTS; i++)
		fdt_wait_shutdown(s);
	for (int i = 0; i < N_CLIENTS; i++)
		fdt_close_conn(&conns[i]);
	FDT_OK(fi_close(&st.counter_mr->fid));
	FDT_OK(fi_close(&st.olds_mr->fid));
	FDT_OK(fi_close(&st.go_mr->fid));
	fdt_close_side(s);
	free(st.counter);
	free(st.olds);
	free(pairs);
	printf("server: %d fetch-adds from %d endpoints: counter 0x%llx -> 0x%llx "
	       "(sum %llu), all fetched values distinct and chained; the counter "
	       "changed hands %d times\n",
	       N_CLIENTS * N_PER, N_CLIENTS, (unsigned long long)INITIAL,
	       (unsigned long long)final, (unsigned long long)expect_sum, switches);
	return 0;
}

struct client_state {
	uint64_t *adds, *olds, go;
	struct fid_mr *adds_mr, *olds_mr, *go_mr;
	struct fi_context *ctx;
	struct fi_context go_ctx;
};

static void client_pre(struct fdt_side *s, void *arg)
{
	struct client_state *c = arg;

	c->go_mr = fdt_reg(s, &c->go, sizeof(c->go), FI_RECV);
	FDT_OK(fi_recv(s->ep, &c->go, sizeof(c->go), fi_mr_desc(c->go_mr), 0, &c->go_ctx));
}

/* Reap what has completed; returns how many. */
static int reap(struct fdt_side *s, struct client_state *c, int *done_flags)
{
	struct fi_cq_data_entry e[WINDOW];
	ssize_t n = fi_cq_read(s->txcq, e, WINDOW);

	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		fi_cq_readerr(s->txcq, &err, 0);
		FDT_FAIL("fetch-add error %d (%s), prov_errno %d", err.err,
			 fi_strerror(err.err), err.prov_errno);
	}
	FDT_ASSERT(n > 0, "fi_cq_read = %zd", n);
	for (ssize_t k = 0; k < n; k++) {
		struct fi_context *ctx = e[k].op_context;
		ptrdiff_t i = ctx - c->ctx;

		FDT_ASSERT(i >= 0 && i < N_PER && !done_flags[i], "completion context %p", (void *)ctx);
#ifndef FDT_UPSTREAM
		FDT_ASSERT(e[k].flags == (FI_ATOMIC | FI_READ), "fetch-add flags 0x%llx",
			   (unsigned long long)e[k].flags);
#else
		/* upstream 1.17 verbs leaves FI_READ out */
		FDT_ASSERT(e[k].flags & FI_ATOMIC, "fetch-add flags 0x%llx",
			   (unsigned long long)e[k].flags);
#endif
		done_flags[i] = 1;
	}
	return (int)n;
}

static int client(struct fdt_side *s, void *arg)
{
	struct client_state c;
	uint8_t reply[FDT_REGION_WIRE];
	struct fdt_region r;
	struct fi_cq_data_entry e;
	int me = s->client_index, posted = 0, done = 0, *done_flags;
	struct fi_context sctx;

	(void)arg;
	memset(&c, 0, sizeof(c));
	FDT_ASSERT(fdt_client_connect_reply(s, NULL, reply, sizeof(reply), client_pre, &c)
		   == sizeof(reply), "accept data");
	fdt_region_unpack(&r, reply);
	c.adds = malloc(N_PER * sizeof(uint64_t));
	c.olds = malloc(N_PER * sizeof(uint64_t));
	c.ctx = calloc(N_PER, sizeof(*c.ctx));
	done_flags = calloc(N_PER, sizeof(int));
	FDT_ASSERT(c.adds && c.olds && c.ctx && done_flags, "malloc");
	for (int i = 0; i < N_PER; i++) {
		c.adds[i] = operand(me, i);
		c.olds[i] = 0xBADBADBADBADBADull;
	}
	c.adds_mr = fdt_reg(s, c.adds, N_PER * sizeof(uint64_t), FI_WRITE);
	c.olds_mr = fdt_reg(s, c.olds, N_PER * sizeof(uint64_t), FI_READ | FI_SEND);

	FDT_ASSERT(fdt_wait_cq_ms(s->rxcq, &e, NULL, 60000) == 1, "go");
	FDT_ASSERT(e.op_context == &c.go_ctx && c.go == 0x60, "go message");

	while (done < N_PER) {
		while (posted < N_PER && posted - done < WINDOW) {
			ssize_t rc = fi_fetch_atomic(s->ep, &c.adds[posted], 1,
						     fi_mr_desc(c.adds_mr), &c.olds[posted],
						     fi_mr_desc(c.olds_mr), 0, r.addr, r.key,
						     FI_UINT64, FI_SUM, &c.ctx[posted]);
			if (rc == -FI_EAGAIN)
				break;
			FDT_OK(rc);
			posted++;
		}
		done += reap(s, &c, done_flags);
	}
	for (int i = 0; i < N_PER; i++)
		FDT_ASSERT(c.olds[i] != 0xBADBADBADBADBADull, "result %d never written", i);

	/* results to the server; the CQ data says which client we are */
	FDT_OK(fi_senddata(s->ep, c.olds, N_PER * sizeof(uint64_t), fi_mr_desc(c.olds_mr),
			   (uint64_t)me, 0, &sctx));
	FDT_ASSERT(fdt_wait_cq_ms(s->txcq, &e, NULL, 60000) == 1, "results send");
	FDT_ASSERT(e.op_context == &sctx, "results send context");
	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_OK(fi_close(&c.adds_mr->fid));
	FDT_OK(fi_close(&c.olds_mr->fid));
	fdt_close_conn(s);
	FDT_OK(fi_close(&c.go_mr->fid));
	fdt_close_side(s);
	printf("client %d: %d fetch-adds, window %d, ok\n", me, N_PER, WINDOW);
	free(c.adds);
	free(c.olds);
	free(c.ctx);
	free(done_flags);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	hints->caps |= FI_ATOMIC;
	/* the results carry the client's index as CQ data */
	hints->mode |= FI_RX_CQ_DATA;
	hints->rx_attr->mode |= FI_RX_CQ_DATA;
	rc = fdt_run_multi(hints, server, client, N_CLIENTS, NULL);
	fi_freeinfo(hints);
	return rc;
}
