/* Access violations in RMA and atomics complete with an error on the
 * initiator and never touch the target. Each case runs on a fresh
 * connection: after such an error verbs moves the RC queue pair to the
 * error state (and, for a remote error, the peer's too), so the test also
 * checks that a valid write posted right after it does not land either.
 *
 * The server exposes, once for all connections:
 *   RO    64 KiB, FI_REMOTE_READ only, holding a pattern
 *   WO    64 KiB, FI_REMOTE_WRITE only
 *   RW    64 KiB, FI_REMOTE_READ | FI_REMOTE_WRITE, inside a larger
 *         unregistered buffer whose guard bytes are checked too
 *   STALE 4 KiB, registered then closed before any client connects
 * and sends the case's region and RW in its accept data. After the client
 * has seen the error and disconnected, the server checks that every byte
 * of every region is still what it was. */
#include "fdt.h"

#include <rdma/fi_atomic.h>

#define REG 65536
#define GUARD 4096
#define STALE_LEN 4096
#define BG 0xEE
#define RO_SEED 77u
#define FOLLOW_VALUE 0x0123456789abcdefull

enum region { R_RO, R_WO, R_RW, R_STALE };
enum op {
	OP_WRITE, OP_READ, OP_INJECT, OP_WRITEDATA, OP_FETCH_ADD, OP_CSWAP,
	OP_ATOMIC_SUM, OP_READ_LOCAL_RO,
};

struct vcase {
	const char *name;
	enum region region;
	enum op op;
	int64_t off;		/* from the region's start */
	size_t len;
	uint64_t key_xor;	/* non-zero: a key that was never issued */
};

static const struct vcase cases[] = {
	{ "write to FI_REMOTE_READ-only region", R_RO, OP_WRITE, 0, 8, 0 },
	{ "64 KiB write to FI_REMOTE_READ-only region", R_RO, OP_WRITE, 0, REG, 0 },
	{ "inject_write to FI_REMOTE_READ-only region", R_RO, OP_INJECT, 16, 8, 0 },
	{ "writedata to FI_REMOTE_READ-only region", R_RO, OP_WRITEDATA, 0, 64, 0 },
	{ "read from FI_REMOTE_WRITE-only region", R_WO, OP_READ, 0, 8, 0 },
	{ "fetch-add on FI_REMOTE_READ-only region", R_RO, OP_FETCH_ADD, 8, 8, 0 },
	{ "compare-swap on FI_REMOTE_READ-only region", R_RO, OP_CSWAP, 8, 8, 0 },
	{ "atomic add on FI_REMOTE_READ-only region", R_RO, OP_ATOMIC_SUM, 8, 8, 0 },
	{ "write with a wrong key", R_RW, OP_WRITE, 0, 8, 0xA5 },
	{ "read with a wrong key", R_RW, OP_READ, 0, 8, 0xA5 },
	{ "fetch-add with a wrong key", R_RW, OP_FETCH_ADD, 0, 8, 0xA5 },
	{ "write with the key of a closed region", R_STALE, OP_WRITE, 0, 8, 0 },
	{ "write straddling the end", R_RW, OP_WRITE, REG - 4, 8, 0 },
	{ "write just past the end", R_RW, OP_WRITE, REG, 1, 0 },
	{ "write before the start", R_RW, OP_WRITE, -8, 8, 0 },
	{ "read straddling the start", R_RW, OP_READ, -8, 16, 0 },
	{ "read straddling the end", R_RW, OP_READ, REG - 100, 200, 0 },
	{ "fetch-add past the end", R_RW, OP_FETCH_ADD, REG, 8, 0 },
	{ "read into a local buffer registered without FI_READ", R_RW, OP_READ_LOCAL_RO,
	  0, 64, 0 },
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

struct server_state {
	uint8_t *ro, *wo, *big, *stale;
	struct fid_mr *ro_mr, *wo_mr, *rw_mr, *rx_mr;
	uint8_t rxbuf[64];
	uint64_t stale_key;
	size_t k;
	uint8_t reply[2 * FDT_REGION_WIRE];
};

static uint8_t *rw_of(struct server_state *st)
{
	return st->big + GUARD;
}

static void pack_key(uint8_t *wire, const void *buf, size_t len, uint64_t key)
{
	/* same layout as fdt_region_pack, for a key with no live fid_mr */
	for (int i = 0; i < 8; i++) {
		wire[7 - i] = (uint8_t)((uint64_t)(uintptr_t)buf >> (8 * i));
		wire[15 - i] = (uint8_t)(key >> (8 * i));
		wire[23 - i] = (uint8_t)((uint64_t)len >> (8 * i));
	}
}

static void server_pre(struct fdt_side *s, void *arg)
{
	struct server_state *st = arg;
	const struct vcase *c = &cases[st->k];

	if (!st->ro) {
		struct fid_mr *mr;

		st->ro = malloc(REG);
		st->wo = malloc(REG);
		st->big = malloc(REG + 2 * GUARD);
		st->stale = malloc(STALE_LEN);
		FDT_ASSERT(st->ro && st->wo && st->big && st->stale, "malloc");
		fdt_fill(st->ro, REG, RO_SEED);
		memset(st->wo, BG, REG);
		memset(st->big, BG, REG + 2 * GUARD);
		memset(st->stale, BG, STALE_LEN);
		st->ro_mr = fdt_reg(s, st->ro, REG, FI_REMOTE_READ);
		st->wo_mr = fdt_reg(s, st->wo, REG, FI_REMOTE_WRITE);
		st->rw_mr = fdt_reg(s, rw_of(st), REG, FI_REMOTE_READ | FI_REMOTE_WRITE);
		mr = fdt_reg(s, st->stale, STALE_LEN, FI_REMOTE_READ | FI_REMOTE_WRITE);
		st->stale_key = fi_mr_key(mr);
		FDT_OK(fi_close(&mr->fid));
		st->rx_mr = fdt_reg(s, st->rxbuf, sizeof(st->rxbuf), FI_RECV);
	}
	/* A write with data needs a receive, or the target would answer
	 * "not ready" forever instead of checking the key. */
	FDT_OK(fi_recv(s->ep, st->rxbuf, sizeof(st->rxbuf), fi_mr_desc(st->rx_mr), 0,
		       st->rxbuf));
	switch (c->region) {
	case R_RO:
		fdt_region_pack(st->reply, st->ro, REG, st->ro_mr);
		break;
	case R_WO:
		fdt_region_pack(st->reply, st->wo, REG, st->wo_mr);
		break;
	case R_RW:
		fdt_region_pack(st->reply, rw_of(st), REG, st->rw_mr);
		break;
	case R_STALE:
		pack_key(st->reply, st->stale, STALE_LEN, st->stale_key);
		break;
	}
	fdt_region_pack(st->reply + FDT_REGION_WIRE, rw_of(st), REG, st->rw_mr);
}

static void server_check(struct server_state *st, const char *name)
{
	FDT_ASSERT(fdt_check(st->ro, REG, RO_SEED), "%s: RO region modified", name);
	for (size_t i = 0; i < REG; i++)
		FDT_ASSERT(st->wo[i] == BG, "%s: WO region byte %zu modified", name, i);
	for (size_t i = 0; i < REG + 2 * GUARD; i++)
		FDT_ASSERT(st->big[i] == BG, "%s: RW region or its guard modified at %lld",
			   name, (long long)i - GUARD);
	for (size_t i = 0; i < STALE_LEN; i++)
		FDT_ASSERT(st->stale[i] == BG, "%s: closed region modified", name);
}

static int server(struct fdt_side *s, void *arg)
{
	struct server_state st;
	struct fdt_cm_data reply = { st.reply, sizeof(st.reply) };

	(void)arg;
	memset(&st, 0, sizeof(st));
	for (st.k = 0; st.k < N_CASES; st.k++) {
		fdt_server_accept(s, NULL, &reply, server_pre, &st);
		/* the client disconnects once it has seen the error */
		fdt_wait_shutdown(s);
		server_check(&st, cases[st.k].name);
		fdt_close_conn(s);
	}
	FDT_OK(fi_close(&st.ro_mr->fid));
	FDT_OK(fi_close(&st.wo_mr->fid));
	FDT_OK(fi_close(&st.rw_mr->fid));
	FDT_OK(fi_close(&st.rx_mr->fid));
	fdt_close_side(s);
	free(st.ro);
	free(st.wo);
	free(st.big);
	free(st.stale);
	printf("server: %zu violations, no region modified\n", N_CASES);
	return 0;
}

struct client_state {
	uint8_t *buf, *local_ro;
	struct fid_mr *mr, *ro_mr;
	struct fi_context ctx, fctx;
};

static void post_violation(struct fdt_side *s, struct client_state *cl,
			   const struct vcase *c, const struct fdt_region *r)
{
	uint64_t addr = r->addr + (uint64_t)c->off;
	uint64_t key = r->key ^ c->key_xor;
	void *desc = fi_mr_desc(cl->mr);
	uint64_t *operand = (uint64_t *)cl->buf;
	uint64_t *compare = operand + 1;
	uint64_t *result = operand + 2;

	switch (c->op) {
	case OP_WRITE:
		memset(cl->buf, 0x42, c->len);
		FDT_OK(fi_write(s->ep, cl->buf, c->len, desc, 0, addr, key, &cl->ctx));
		break;
	case OP_WRITEDATA:
		memset(cl->buf, 0x42, c->len);
		FDT_OK(fi_writedata(s->ep, cl->buf, c->len, desc, 7, 0, addr, key, &cl->ctx));
		break;
	case OP_INJECT:
		memset(cl->buf, 0x42, c->len);
		FDT_OK(fi_inject_write(s->ep, cl->buf, c->len, 0, addr, key));
		break;
	case OP_READ:
		FDT_OK(fi_read(s->ep, cl->buf, c->len, desc, 0, addr, key, &cl->ctx));
		break;
	case OP_READ_LOCAL_RO:
		FDT_OK(fi_read(s->ep, cl->local_ro, c->len, fi_mr_desc(cl->ro_mr), 0, addr,
			       key, &cl->ctx));
		break;
	case OP_FETCH_ADD:
		*operand = 1;
		FDT_OK(fi_fetch_atomic(s->ep, operand, 1, desc, result, desc, 0, addr, key,
				       FI_UINT64, FI_SUM, &cl->ctx));
		break;
	case OP_ATOMIC_SUM:
		*operand = 1;
		FDT_OK(fi_atomic(s->ep, operand, 1, desc, 0, addr, key, FI_UINT64, FI_SUM,
				 &cl->ctx));
		break;
	case OP_CSWAP:
		/* *compare holds what RO really has there: only the missing
		 * rights may refuse the swap */
		*operand = 0x4242424242424242ull;
		FDT_OK(fi_compare_atomic(s->ep, operand, 1, desc, compare, desc, result, desc,
					 0, addr, key, FI_UINT64, FI_CSWAP, &cl->ctx));
		break;
	}
}

static int client(struct fdt_side *s, void *arg)
{
	struct client_state cl;
	int follow_failed_post = 0, follow_flushed = 0;

	(void)arg;
	memset(&cl, 0, sizeof(cl));
	for (size_t k = 0; k < N_CASES; k++) {
		const struct vcase *c = &cases[k];
		uint8_t reply[2 * FDT_REGION_WIRE];
		struct fdt_region r, rw;
		struct fi_cq_data_entry e;
		struct fi_cq_err_entry err;
		char pe[128];
		int rc;

		FDT_ASSERT(fdt_client_connect_reply(s, NULL, reply, sizeof(reply), NULL, NULL)
			   == sizeof(reply), "accept data");
		fdt_region_unpack(&r, reply);
		fdt_region_unpack(&rw, reply + FDT_REGION_WIRE);
		if (!cl.mr) {
			cl.buf = malloc(REG);
			cl.local_ro = malloc(REG);
			FDT_ASSERT(cl.buf && cl.local_ro, "malloc");
			cl.mr = fdt_reg(s, cl.buf, REG, FI_READ | FI_WRITE);
			/* a local buffer the device may read but not write */
			cl.ro_mr = fdt_reg(s, cl.local_ro, REG, FI_WRITE);
		}
		if (c->op == OP_CSWAP) {
			/* compare value = what the RO region holds there */
			uint8_t *ro_pat = malloc(REG);

			FDT_ASSERT(ro_pat, "malloc");
			fdt_fill(ro_pat, REG, RO_SEED);
			memcpy(cl.buf + 8, ro_pat + c->off, 8);
			free(ro_pat);
		}
		memset(cl.local_ro, 0x33, REG);
		post_violation(s, &cl, c, &r);

		rc = fdt_wait_cq_ms(s->txcq, &e, &err, 30000);
		if (rc == 1)
			FDT_FAIL("%s: completed successfully (flags 0x%llx)", c->name,
				 (unsigned long long)e.flags);
		fi_cq_strerror(s->txcq, err.prov_errno, err.err_data, pe, sizeof(pe));
		printf("client: %-52s -> err %d (%s), prov_errno %d (%s)\n", c->name,
		       err.err, fi_strerror(err.err), err.prov_errno, pe);
		FDT_ASSERT(err.err == FI_EACCES, "%s: err %d (%s), expected FI_EACCES",
			   c->name, err.err, fi_strerror(err.err));
		FDT_ASSERT(err.op_context == (c->op == OP_INJECT ? NULL : (void *)&cl.ctx),
			   "%s: error context %p", c->name, err.op_context);
		if (c->op == OP_READ_LOCAL_RO)
			for (size_t i = 0; i < c->len; i++)
				FDT_ASSERT(cl.local_ro[i] == 0x33, "%s: local buffer written", c->name);

		/* The queue pair is in the error state now: a valid write to RW
		 * must not land (the server checks) and must not complete
		 * successfully (it is flushed, or refused at post time). */
		memcpy(cl.buf, &(uint64_t){ FOLLOW_VALUE }, 8);
		if (fi_write(s->ep, cl.buf, 8, fi_mr_desc(cl.mr), 0, rw.addr, rw.key,
			     &cl.fctx) < 0) {
			follow_failed_post++;
		} else {
			rc = fdt_wait_cq_ms(s->txcq, &e, &err, 30000);
			FDT_ASSERT(rc != 1, "%s: a write after the error succeeded", c->name);
			FDT_ASSERT(err.op_context == &cl.fctx, "%s: follow-up context", c->name);
			follow_flushed++;
		}
		fdt_cq_expect_quiet(s->txcq, 20, c->name);
		FDT_OK(fi_shutdown(s->ep, 0));
		fdt_client_reset(s);
	}
	FDT_OK(fi_close(&cl.mr->fid));
	FDT_OK(fi_close(&cl.ro_mr->fid));
	fdt_close_side(s);
	free(cl.buf);
	free(cl.local_ro);
	printf("client: %zu violations reported; follow-up write refused at post %d, "
	       "flushed %d\n", N_CASES, follow_failed_post, follow_flushed);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	hints->caps |= FI_RMA | FI_ATOMIC;
	hints->mode |= FI_RX_CQ_DATA;
	hints->rx_attr->mode |= FI_RX_CQ_DATA;
	rc = fdt_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	return rc;
}
