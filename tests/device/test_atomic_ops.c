/* Semantics of each supported atomic, in every call form, on 64-bit words
 * the server exposes (FI_REMOTE_READ | FI_REMOTE_WRITE):
 *   fi_fetch_atomic FI_SUM (INT64 and UINT64, carries across 32 bits,
 *     negative operands) returns the old value and adds the operand's value;
 *   FI_ATOMIC_READ returns the value and leaves it alone;
 *   fi_compare_atomic FI_CSWAP returns the old value whether it matched or
 *     not, and swaps only on a match;
 *   fi_atomic FI_SUM / FI_ATOMIC_WRITE and fi_inject_atomic change the word
 *     and, for the inject, complete nothing;
 *   the v and msg forms do the same.
 * After each operation the client reads the word back with fi_read and
 * compares with its own model; the server compares its memory with the
 * same model at the end. Completion flags: FI_ATOMIC | FI_READ for the
 * fetching forms, FI_ATOMIC | FI_WRITE for the others (fi_cq(3)). */
#define _POSIX_C_SOURCE 200112L	/* posix_memalign */
#include "fdt.h"

#include <rdma/fi_atomic.h>

#define N_WORDS 16

static const uint64_t initial[N_WORDS] = {
	0x00000000fffffffdull, 0x7fffffffffffffffull, 0xfffffffffffffff0ull, 42,
	0x0123456789abcdefull, 0, 1, 0x8000000000000000ull,
	5, 6, 7, 8, 9, 10, 11, 12,
};

/* The client's model of the server's words, sent back at the end so the
 * server can compare its memory with it. */
struct model {
	uint64_t w[N_WORDS];
};

struct server_state {
	uint64_t *words;
	struct fid_mr *mr, *model_mr;
	struct model model;
	struct fi_context rctx;
	uint8_t reply[FDT_REGION_WIRE];
};

static void server_pre(struct fdt_side *s, void *arg)
{
	struct server_state *st = arg;

	FDT_ASSERT(!posix_memalign((void **)&st->words, 64, N_WORDS * 8), "alloc");
	memcpy(st->words, initial, sizeof(initial));
	st->mr = fdt_reg(s, st->words, N_WORDS * 8, FI_REMOTE_READ | FI_REMOTE_WRITE);
	st->model_mr = fdt_reg(s, &st->model, sizeof(st->model), FI_RECV);
	fdt_region_pack(st->reply, st->words, N_WORDS * 8, st->mr);
	FDT_OK(fi_recv(s->ep, &st->model, sizeof(st->model), fi_mr_desc(st->model_mr), 0,
		       &st->rctx));
}

static int server(struct fdt_side *s, void *arg)
{
	struct server_state st;
	struct fdt_cm_data reply = { st.reply, sizeof(st.reply) };
	struct fi_cq_data_entry e;

	(void)arg;
	memset(&st, 0, sizeof(st));
	fdt_server_accept(s, NULL, &reply, server_pre, &st);
	FDT_ASSERT(fdt_wait_cq_ms(s->rxcq, &e, NULL, 60000) == 1, "model");
	for (int i = 0; i < N_WORDS; i++)
		FDT_ASSERT(st.words[i] == st.model.w[i], "word %d: 0x%llx, model 0x%llx", i,
			   (unsigned long long)st.words[i], (unsigned long long)st.model.w[i]);
	fdt_wait_shutdown(s);
	FDT_OK(fi_close(&st.mr->fid));
	FDT_OK(fi_close(&st.model_mr->fid));
	fdt_close_side(s);
	free(st.words);
	printf("server: all %d words match the client's model\n", N_WORDS);
	return 0;
}

/* ---- client ---- */

/* Registered scratch: operand, compare, result, read-back. */
struct scratch {
	uint64_t operand, compare, result, readback;
	uint64_t pad[4];
};

struct client {
	struct fdt_side *s;
	struct fdt_region r;
	struct scratch *x;
	struct fid_mr *mr;
	void *desc;
	struct model m;
	struct fi_context ctx;
	int ops;
	/* Wrong completion flags are counted, not fatal at once, so one run
	 * also shows whether the data semantics are right; the test still
	 * fails at the end. */
	int bad_flags;
	char first_bad[160];
};

static uint64_t waddr(struct client *c, int w)
{
	return c->r.addr + (uint64_t)w * 8;
}

static void wait_ok(struct client *c, uint64_t flags, const char *what)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;

	if (fdt_wait_cq_ms(c->s->txcq, &e, &err, 30000) != 1)
		FDT_FAIL("%s: error %d (%s), prov_errno %d", what, err.err,
			 fi_strerror(err.err), err.prov_errno);
	FDT_ASSERT(e.op_context == &c->ctx, "%s: context %p", what, e.op_context);
	if (e.flags != flags) {
		fprintf(stderr, "%s: flags 0x%llx, expected 0x%llx\n", what,
			(unsigned long long)e.flags, (unsigned long long)flags);
		if (!c->bad_flags++)
			snprintf(c->first_bad, sizeof(c->first_bad),
				 "%s: flags 0x%llx, expected 0x%llx", what,
				 (unsigned long long)e.flags, (unsigned long long)flags);
	}
	c->ops++;
}

/* fi_read the word and compare with the model. */
static void check_word(struct client *c, int w, const char *what)
{
	c->x->readback = 0xdddddddddddddddd;
	FDT_OK(fi_read(c->s->ep, &c->x->readback, 8, c->desc, 0, waddr(c, w), c->r.key,
		       &c->ctx));
	wait_ok(c, FI_RMA | FI_READ, "read back");
	c->ops--;
	FDT_ASSERT(c->x->readback == c->m.w[w], "%s: word %d is 0x%llx, expected 0x%llx",
		   what, w, (unsigned long long)c->x->readback,
		   (unsigned long long)c->m.w[w]);
}

enum form { PLAIN, VEC, MSG };
static const char *const fname[] = { "", "v", "msg" };

static void fetch_op(struct client *c, enum form f, int w, enum fi_datatype dt,
		     enum fi_op op, uint64_t operand)
{
	char what[64];
	uint64_t old = c->m.w[w];
	struct fi_ioc ioc = { &c->x->operand, 1 }, res = { &c->x->result, 1 };
	struct fi_rma_ioc rma = { waddr(c, w), 1, c->r.key };
	struct fi_msg_atomic msg = {
		.msg_iov = &ioc, .desc = &c->desc, .iov_count = 1,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = dt, .op = op,
		.context = &c->ctx,
	};

	snprintf(what, sizeof(what), "fi_fetch_atomic%s %s %s", fname[f],
		 op == FI_SUM ? "FI_SUM" : "FI_ATOMIC_READ", dt == FI_INT64 ? "INT64" : "UINT64");
	c->x->operand = operand;
	c->x->result = 0xeeeeeeeeeeeeeeee;
	/* FI_ATOMIC_READ takes no operand: pass none where the API allows */
	switch (f) {
	case PLAIN:
		FDT_OK(fi_fetch_atomic(c->s->ep, op == FI_ATOMIC_READ ? NULL : &c->x->operand,
				       1, c->desc, &c->x->result, c->desc, 0, waddr(c, w),
				       c->r.key, dt, op, &c->ctx));
		break;
	case VEC:
		FDT_OK(fi_fetch_atomicv(c->s->ep, &ioc, &c->desc, 1, &res, &c->desc, 1, 0,
					waddr(c, w), c->r.key, dt, op, &c->ctx));
		break;
	case MSG:
		FDT_OK(fi_fetch_atomicmsg(c->s->ep, &msg, &res, &c->desc, 1, FI_COMPLETION));
		break;
	}
	wait_ok(c, FI_ATOMIC | FI_READ, what);
	FDT_ASSERT(c->x->result == old, "%s: fetched 0x%llx, expected 0x%llx", what,
		   (unsigned long long)c->x->result, (unsigned long long)old);
	if (op == FI_SUM)
		c->m.w[w] = old + operand;
	check_word(c, w, what);
}

static void compare_op(struct client *c, enum form f, int w, enum fi_datatype dt,
		       uint64_t compare, uint64_t swap)
{
	char what[80];
	uint64_t old = c->m.w[w];
	struct fi_ioc ioc = { &c->x->operand, 1 }, cmp = { &c->x->compare, 1 },
		      res = { &c->x->result, 1 };
	struct fi_rma_ioc rma = { waddr(c, w), 1, c->r.key };
	struct fi_msg_atomic msg = {
		.msg_iov = &ioc, .desc = &c->desc, .iov_count = 1,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = dt, .op = FI_CSWAP,
		.context = &c->ctx,
	};

	snprintf(what, sizeof(what), "fi_compare_atomic%s CSWAP %s (%s)", fname[f],
		 dt == FI_INT64 ? "INT64" : "UINT64", compare == old ? "match" : "no match");
	c->x->operand = swap;
	c->x->compare = compare;
	c->x->result = 0xeeeeeeeeeeeeeeee;
	switch (f) {
	case PLAIN:
		FDT_OK(fi_compare_atomic(c->s->ep, &c->x->operand, 1, c->desc, &c->x->compare,
					 c->desc, &c->x->result, c->desc, 0, waddr(c, w),
					 c->r.key, dt, FI_CSWAP, &c->ctx));
		break;
	case VEC:
		FDT_OK(fi_compare_atomicv(c->s->ep, &ioc, &c->desc, 1, &cmp, &c->desc, 1, &res,
					  &c->desc, 1, 0, waddr(c, w), c->r.key, dt,
					  FI_CSWAP, &c->ctx));
		break;
	case MSG:
		FDT_OK(fi_compare_atomicmsg(c->s->ep, &msg, &cmp, &c->desc, 1, &res, &c->desc,
					    1, FI_COMPLETION));
		break;
	}
	wait_ok(c, FI_ATOMIC | FI_READ, what);
	FDT_ASSERT(c->x->result == old, "%s: returned 0x%llx, expected the old value "
		   "0x%llx", what, (unsigned long long)c->x->result, (unsigned long long)old);
	if (compare == old)
		c->m.w[w] = swap;
	check_word(c, w, what);
}

static void write_op(struct client *c, enum form f, int w, enum fi_datatype dt,
		     enum fi_op op, uint64_t operand, int inject)
{
	char what[80];
	struct fi_ioc ioc = { &c->x->operand, 1 };
	struct fi_rma_ioc rma = { waddr(c, w), 1, c->r.key };
	struct fi_msg_atomic msg = {
		.msg_iov = &ioc, .desc = &c->desc, .iov_count = 1,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = dt, .op = op,
		.context = &c->ctx,
	};

	snprintf(what, sizeof(what), "fi_%satomic%s %s %s", inject ? "inject_" : "",
		 fname[f], op == FI_SUM ? "FI_SUM" : "FI_ATOMIC_WRITE",
		 dt == FI_INT64 ? "INT64" : "UINT64");
	c->x->operand = operand;
	if (inject && op == FI_ATOMIC_WRITE && c->s->info->tx_attr->inject_size < 8) {
		/* 8 bytes to inject but a smaller inject_size: refused */
		ssize_t rc = fi_inject_atomic(c->s->ep, &c->x->operand, 1, 0, waddr(c, w),
					      c->r.key, dt, op);

		FDT_ASSERT(rc < 0 && rc != -FI_EAGAIN, "%s with inject_size %zu = %zd", what,
			   c->s->info->tx_attr->inject_size, rc);
		check_word(c, w, what);
		return;
	}
	if (inject) {
		FDT_OK(fi_inject_atomic(c->s->ep, &c->x->operand, 1, 0, waddr(c, w), c->r.key,
					dt, op));
		/* the buffer is free at once */
		c->x->operand = 0x5555555555555555;
	} else {
		switch (f) {
		case PLAIN:
			FDT_OK(fi_atomic(c->s->ep, &c->x->operand, 1, c->desc, 0, waddr(c, w),
					 c->r.key, dt, op, &c->ctx));
			break;
		case VEC:
			FDT_OK(fi_atomicv(c->s->ep, &ioc, &c->desc, 1, 0, waddr(c, w), c->r.key,
					  dt, op, &c->ctx));
			break;
		case MSG:
			FDT_OK(fi_atomicmsg(c->s->ep, &msg, FI_COMPLETION));
			break;
		}
		wait_ok(c, FI_ATOMIC | FI_WRITE, what);
	}
	c->m.w[w] = op == FI_SUM ? c->m.w[w] + operand : operand;
	/* an inject completes nothing: the read back is the first completion */
	check_word(c, w, what);
}

static int client(struct fdt_side *s, void *arg)
{
	struct client c;
	uint8_t reply[FDT_REGION_WIRE];
	static const enum fi_datatype dts[] = { FI_UINT64, FI_INT64 };
	size_t inject;

	(void)arg;
	memset(&c, 0, sizeof(c));
	c.s = s;
	FDT_ASSERT(fdt_client_connect_reply(s, NULL, reply, sizeof(reply), NULL, NULL)
		   == sizeof(reply), "accept data");
	fdt_region_unpack(&c.r, reply);
	FDT_ASSERT(c.r.len == N_WORDS * 8, "region");
	FDT_ASSERT(!posix_memalign((void **)&c.x, 64, sizeof(*c.x)), "alloc");
	c.mr = fdt_reg(s, c.x, sizeof(*c.x), FI_READ | FI_WRITE | FI_SEND);
	c.desc = fi_mr_desc(c.mr);
	memcpy(c.m.w, initial, sizeof(initial));

	for (int f = PLAIN; f <= MSG; f++) {
		for (int d = 0; d < 2; d++) {
			enum fi_datatype dt = dts[d];
			int b = f * 4 + d * 2;	/* words b, b+1 for this round */

			/* SUM: carry out of the low 32 bits, wrap, negative */
			fetch_op(&c, f, 0, dt, FI_SUM, 5);
			fetch_op(&c, f, 1, dt, FI_SUM, 1);
			fetch_op(&c, f, 2, dt, FI_SUM, (uint64_t)-7);
			fetch_op(&c, f, 2, dt, FI_SUM, 0x100000000ull);
			fetch_op(&c, f, 3, dt, FI_ATOMIC_READ, 0x999);
			fetch_op(&c, f, 4, dt, FI_ATOMIC_READ, 0);

			/* CSWAP: miss (high half differs, then low half), hit, miss */
			compare_op(&c, f, 4, dt, c.m.w[4] ^ 0x100000000ull, 0xdead);
			compare_op(&c, f, 4, dt, c.m.w[4] ^ 1, 0xdead);
			compare_op(&c, f, 4, dt, c.m.w[4], 0x1111222233334444ull + (uint64_t)b);
			compare_op(&c, f, 4, dt, 0, 0xbeef);
			compare_op(&c, f, 5, dt, c.m.w[5], (uint64_t)-1);
			compare_op(&c, f, 5, dt, c.m.w[5], c.m.w[5]);

			/* non-fetching forms and injects */
			write_op(&c, f, 8 + d, dt, FI_SUM, 0x10000000full, 0);
			write_op(&c, f, 10 + d, dt, FI_ATOMIC_WRITE,
				 0xa5a5a5a5a5a5a5a5ull ^ (uint64_t)b, 0);
			write_op(&c, f, 12 + d, dt, FI_SUM, (uint64_t)-3, 1);
			write_op(&c, f, 14 + d, dt, FI_ATOMIC_WRITE, 0xfeedfacecafebeefull, 1);
		}
	}
	fdt_cq_expect_quiet(s->txcq, 100, "client tx CQ at the end");

	/* hand the model to the server for its own comparison */
	{
		struct model *m;
		struct fid_mr *mmr;

		m = malloc(sizeof(*m));
		FDT_ASSERT(m, "malloc");
		*m = c.m;
		mmr = fdt_reg(s, m, sizeof(*m), FI_SEND);
		FDT_OK(fi_send(s->ep, m, sizeof(*m), fi_mr_desc(mmr), 0, &c.ctx));
		wait_ok(&c, FI_MSG | FI_SEND, "model send");
		FDT_OK(fi_shutdown(s->ep, 0));
		FDT_OK(fi_close(&mmr->fid));
		free(m);
	}
	FDT_OK(fi_close(&c.mr->fid));
	inject = s->info->tx_attr->inject_size;
	fdt_close_side(s);
	free(c.x);
	printf("client: inject_size %zu: %d atomic operations, results and memory as "
	       "modelled\n", inject, c.ops - 1);
	if (c.bad_flags) {
		printf("client: %d completions with wrong flags; first: %s\n", c.bad_flags,
		       c.first_bad);
		return 1;
	}
	return 0;
}

static int run(void *arg)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	hints->caps |= FI_ATOMIC | FI_RMA;
	hints->tx_attr->inject_size = *(size_t *)arg;
	rc = fdt_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	return rc;
}

/* Twice: with the default inject size, and with one too small for an
 * inline 8-byte value, where FI_ATOMIC_WRITE must take the registered
 * operand buffer instead (and an injected one is refused). */
int main(void)
{
	size_t dflt = 0, small = 4;
	int rc, rc2;

	rc = fdt_run_isolated(run, &dflt);
	if (rc == FDT_SKIP)
		return rc;
	printf("again with inject_size 4\n");
	rc2 = fdt_run_isolated(run, &small);
	return rc ? rc : rc2;
}
