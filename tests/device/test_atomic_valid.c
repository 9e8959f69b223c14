/* fi_atomicvalid, fi_fetch_atomicvalid, fi_compare_atomicvalid and
 * fi_query_atomic tell the truth, and bad atomic requests are refused.
 *
 * For every operation and datatype and each of the three kinds:
 *   - valid returns 0 (count >= 1) or -FI_EOPNOTSUPP, nothing else, and
 *     fi_query_atomic gives the same answer, the datatype's size and the
 *     same count;
 *   - a combination claimed valid is performed on the server's memory and
 *     its result and effect are compared with a model of the operation
 *     (a claim the test has no model for fails it);
 *   - an unclaimed combination is refused when posted and has no effect.
 * The minimum this provider promises is checked explicitly: FI_SUM and
 * FI_ATOMIC_READ with fetch, FI_CSWAP with compare, on INT64 and UINT64.
 * Requests verbs cannot do are refused at post time with no effect: a
 * target not 8-byte aligned (-FI_EINVAL), count 0 or more than valid's
 * count, vector forms whose counts disagree. The target words are set and read back with fi_write/fi_read. */
#define _POSIX_C_SOURCE 200112L	/* posix_memalign */
#include "fdt.h"

#include <rdma/fi_atomic.h>

#define TARGET_LEN 256
#define T0 0x8000000000000005ull	/* negative as INT64 */
#define OPND 0x0000000700000003ull

/* ---- the model ---- */

static size_t dt_size(int dt)
{
	switch (dt) {
	case FI_INT8: case FI_UINT8: return 1;
	case FI_INT16: case FI_UINT16: return 2;
	case FI_INT32: case FI_UINT32: case FI_FLOAT: return 4;
	case FI_INT64: case FI_UINT64: case FI_DOUBLE: case FI_FLOAT_COMPLEX: return 8;
	case FI_DOUBLE_COMPLEX: case FI_LONG_DOUBLE: return 16;
	case FI_LONG_DOUBLE_COMPLEX: return 32;
	case FI_INT128: case FI_UINT128: return 16;
	default: return 0;
	}
}

static int dt_is_int(int dt)
{
	return dt >= FI_INT8 && dt <= FI_UINT64;
}

static int dt_signed(int dt)
{
	return dt == FI_INT8 || dt == FI_INT16 || dt == FI_INT32 || dt == FI_INT64;
}

static uint64_t mask_of(int dt)
{
	size_t n = dt_size(dt);

	return n >= 8 ? UINT64_MAX : (1ull << (8 * n)) - 1;
}

/* sign-extended value of the low bits, for ordering comparisons */
static int64_t sval(int dt, uint64_t v)
{
	size_t bits = 8 * dt_size(dt);

	if (bits >= 64)
		return (int64_t)v;
	v &= mask_of(dt);
	if (v >> (bits - 1))
		v |= ~mask_of(dt);
	return (int64_t)v;
}

/* a < b in the datatype's order */
static int lt(int dt, uint64_t a, uint64_t b)
{
	if (dt_signed(dt))
		return sval(dt, a) < sval(dt, b);
	return (a & mask_of(dt)) < (b & mask_of(dt));
}

/* The new target value for (op, target t, operand o, compare c); returns
 * 0 if the model does not know the operation. */
static int model(int dt, int op, uint64_t t, uint64_t o, uint64_t c, uint64_t *out)
{
	uint64_t m = mask_of(dt), r;

	t &= m;
	o &= m;
	c &= m;
	switch (op) {
	case FI_MIN: r = lt(dt, o, t) ? o : t; break;
	case FI_MAX: r = lt(dt, t, o) ? o : t; break;
	case FI_SUM: r = t + o; break;
	case FI_PROD: r = t * o; break;
	case FI_LOR: r = (t || o); break;
	case FI_LAND: r = (t && o); break;
	case FI_BOR: r = t | o; break;
	case FI_BAND: r = t & o; break;
	case FI_LXOR: r = (!t != !o); break;
	case FI_BXOR: r = t ^ o; break;
	case FI_ATOMIC_READ: r = t; break;
	case FI_ATOMIC_WRITE: r = o; break;
	case FI_CSWAP: r = c == t ? o : t; break;
	case FI_CSWAP_NE: r = c != t ? o : t; break;
	case FI_CSWAP_LE: r = (c == t || lt(dt, c, t)) ? o : t; break;
	case FI_CSWAP_LT: r = lt(dt, c, t) ? o : t; break;
	case FI_CSWAP_GE: r = (c == t || lt(dt, t, c)) ? o : t; break;
	case FI_CSWAP_GT: r = lt(dt, t, c) ? o : t; break;
	case FI_MSWAP: r = (o & c) | (t & ~c); break;
	default: return 0;
	}
	*out = r & m;
	return 1;
}

/* ---- server: a target region and nothing else ---- */

struct server_state {
	uint8_t *t;
	struct fid_mr *mr;
	uint8_t reply[FDT_REGION_WIRE];
};

static void server_pre(struct fdt_side *s, void *arg)
{
	struct server_state *st = arg;

	FDT_ASSERT(!posix_memalign((void **)&st->t, 64, TARGET_LEN), "alloc");
	memset(st->t, 0, TARGET_LEN);
	st->mr = fdt_reg(s, st->t, TARGET_LEN, FI_REMOTE_READ | FI_REMOTE_WRITE);
	fdt_region_pack(st->reply, st->t, TARGET_LEN, st->mr);
}

static int server(struct fdt_side *s, void *arg)
{
	struct server_state st;
	struct fdt_cm_data reply = { st.reply, sizeof(st.reply) };
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	uint32_t ev;
	ssize_t rc;

	(void)arg;
	memset(&st, 0, sizeof(st));
	fdt_server_accept(s, NULL, &reply, server_pre, &st);
	/* the client may take a while: wait for its shutdown in steps */
	do {
		rc = fi_eq_sread(s->eq, &ev, buf, sizeof(buf), 1000, 0);
	} while (rc == -FI_EAGAIN || rc == -FI_ETIMEDOUT);
	FDT_ASSERT(rc > 0 && ev == FI_SHUTDOWN, "server: eq rc %zd event %u", rc, ev);
	FDT_OK(fi_close(&st.mr->fid));
	fdt_close_side(s);
	free(st.t);
	printf("server: ok\n");
	return 0;
}

/* ---- client ---- */

struct client {
	struct fdt_side *s;
	struct fdt_region r;
	uint8_t *x;		/* operand | compare | result | scratch, 64 B each */
	struct fid_mr *mr;
	void *desc;
	struct fi_context ctx;
	int claimed, refused, performed;
};

#define OPERAND(c) ((c)->x)
#define COMPARE(c) ((c)->x + 64)
#define RESULT(c) ((c)->x + 128)
#define SCRATCH(c) ((c)->x + 192)

static void wait_ok(struct client *c, const char *what)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;

	if (fdt_wait_cq_ms(c->s->txcq, &e, &err, 30000) != 1)
		FDT_FAIL("%s: error %d (%s)", what, err.err, fi_strerror(err.err));
	FDT_ASSERT(e.op_context == &c->ctx, "%s: context", what);
}

static void set_target(struct client *c, size_t off, uint64_t v, size_t n)
{
	memcpy(SCRATCH(c), &v, n);
	FDT_OK(fi_write(c->s->ep, SCRATCH(c), n, c->desc, 0, c->r.addr + off, c->r.key,
			&c->ctx));
	wait_ok(c, "set target");
}

static uint64_t get_target(struct client *c, size_t off, size_t n)
{
	uint64_t v = 0;

	memset(SCRATCH(c), 0xdd, 8);
	FDT_OK(fi_read(c->s->ep, SCRATCH(c), n, c->desc, 0, c->r.addr + off, c->r.key,
		       &c->ctx));
	wait_ok(c, "get target");
	memcpy(&v, SCRATCH(c), n);
	return v;
}

enum kind { K_WRITE, K_FETCH, K_COMPARE };
static const char *const kname[] = { "atomic", "fetch_atomic", "compare_atomic" };

static int valid(struct client *c, enum kind k, int dt, int op, size_t *count)
{
	switch (k) {
	case K_WRITE:
		return fi_atomicvalid(c->s->ep, (enum fi_datatype)dt, (enum fi_op)op, count);
	case K_FETCH:
		return fi_fetch_atomicvalid(c->s->ep, (enum fi_datatype)dt, (enum fi_op)op, count);
	default:
		return fi_compare_atomicvalid(c->s->ep, (enum fi_datatype)dt, (enum fi_op)op,
					      count);
	}
}

static ssize_t post(struct client *c, enum kind k, int dt, int op, size_t count,
		    uint64_t addr)
{
	switch (k) {
	case K_WRITE:
		return fi_atomic(c->s->ep, OPERAND(c), count, c->desc, 0, addr, c->r.key,
				 (enum fi_datatype)dt, (enum fi_op)op, &c->ctx);
	case K_FETCH:
		return fi_fetch_atomic(c->s->ep, OPERAND(c), count, c->desc, RESULT(c), c->desc,
				       0, addr, c->r.key, (enum fi_datatype)dt,
				       (enum fi_op)op, &c->ctx);
	default:
		return fi_compare_atomic(c->s->ep, OPERAND(c), count, c->desc, COMPARE(c),
					 c->desc, RESULT(c), c->desc, 0, addr, c->r.key,
					 (enum fi_datatype)dt, (enum fi_op)op, &c->ctx);
	}
}

/* Perform a claimed combination with compare value cmp and check it. */
static void perform(struct client *c, enum kind k, int dt, int op, uint64_t cmp)
{
	size_t n = dt_size(dt);
	uint64_t expect, got, res = 0;
	char what[96];

	snprintf(what, sizeof(what), "fi_%s op %d datatype %d (%s)", kname[k], op, dt,
		 fi_tostr(&op, FI_TYPE_ATOMIC_OP));
	if (!dt_is_int(dt) || !model(dt, op, T0, OPND, cmp, &expect))
		FDT_FAIL("%s claimed valid: this test has no model for it", what);
	set_target(c, 0, T0, n);
	memset(OPERAND(c), 0, 64);
	memset(COMPARE(c), 0, 64);
	memcpy(OPERAND(c), &(uint64_t){ OPND }, n);
	memcpy(COMPARE(c), &cmp, n);
	memset(RESULT(c), 0xee, 64);
	FDT_OK(post(c, k, dt, op, 1, c->r.addr));
	wait_ok(c, what);
	got = get_target(c, 0, n);
	FDT_ASSERT(got == expect, "%s: target 0x%llx, model 0x%llx", what,
		   (unsigned long long)got, (unsigned long long)expect);
	if (k != K_WRITE) {
		memcpy(&res, RESULT(c), n);
		FDT_ASSERT(res == (T0 & mask_of(dt)), "%s: fetched 0x%llx, expected 0x%llx",
			   what, (unsigned long long)res,
			   (unsigned long long)(T0 & mask_of(dt)));
	}
	/* nothing beyond the datatype's size changed */
	if (n < 8) {
		uint64_t whole = get_target(c, 0, 8);

		FDT_ASSERT((whole & ~mask_of(dt)) == (T0 & ~mask_of(dt)),
			   "%s: bytes past the datatype changed", what);
	}
	c->performed++;
}

static void check_combo(struct client *c, enum kind k, int dt, int op)
{
	static const uint64_t flags_of[] = { 0, FI_FETCH_ATOMIC, FI_COMPARE_ATOMIC };
	struct fi_atomic_attr attr = { 0, 0 };
	size_t count = 12345;
	int v, q;

	v = valid(c, k, dt, op, &count);
	FDT_ASSERT(v == 0 || v == -FI_EOPNOTSUPP, "fi_%svalid(dt %d, op %d) = %d", kname[k],
		   dt, op, v);
	q = fi_query_atomic(c->s->domain, (enum fi_datatype)dt, (enum fi_op)op, &attr,
			    flags_of[k]);
	FDT_ASSERT(q == v, "fi_query_atomic(dt %d, op %d, %s) = %d but fi_%svalid = %d",
		   dt, op, kname[k], q, kname[k], v);
	if (v == 0) {
		FDT_ASSERT(count >= 1 && count != 12345, "fi_%svalid count %zu", kname[k], count);
		FDT_ASSERT(attr.count == count && attr.size == dt_size(dt),
			   "fi_query_atomic: count %zu size %zu, expected %zu and %zu",
			   attr.count, attr.size, count, dt_size(dt));
		c->claimed++;
		if (k == K_COMPARE) {
			/* a compare that holds and one that does not, in both
			 * directions for the ordered compares */
			perform(c, k, dt, op, T0);
			perform(c, k, dt, op, T0 + 1);
			perform(c, k, dt, op, T0 - 1);
		} else {
			perform(c, k, dt, op, 0);
		}
	} else {
		ssize_t rc = post(c, k, dt, op, 1, c->r.addr);

		FDT_ASSERT(rc < 0 && rc != -FI_EAGAIN, "fi_%s(dt %d, op %d) not valid, but "
			   "posting it returned %zd", kname[k], dt, op, rc);
		c->refused++;
	}
}

/* Requests that must be refused up front, whatever the combination. */
static void bad_requests(struct client *c)
{
	static const int misalign[] = { 1, 2, 4, 7 };
	uint64_t before;
	size_t count = 0;

	set_target(c, 0, 0x1122334455667788ull, 8);
	set_target(c, 8, 0x99aabbccddeeff00ull, 8);
	memcpy(OPERAND(c), &(uint64_t){ 1 }, 8);
	memcpy(COMPARE(c), &(uint64_t){ 0x1122334455667788ull }, 8);
	for (size_t i = 0; i < sizeof(misalign) / sizeof(misalign[0]); i++) {
		uint64_t a = c->r.addr + (uint64_t)misalign[i];

		FDT_EXPECT(post(c, K_WRITE, FI_UINT64, FI_SUM, 1, a), -FI_EINVAL);
		FDT_EXPECT(post(c, K_WRITE, FI_UINT64, FI_ATOMIC_WRITE, 1, a), -FI_EINVAL);
		FDT_EXPECT(post(c, K_FETCH, FI_UINT64, FI_SUM, 1, a), -FI_EINVAL);
		FDT_EXPECT(post(c, K_FETCH, FI_INT64, FI_ATOMIC_READ, 1, a), -FI_EINVAL);
		FDT_EXPECT(post(c, K_COMPARE, FI_UINT64, FI_CSWAP, 1, a), -FI_EINVAL);
		FDT_EXPECT(fi_inject_atomic(c->s->ep, OPERAND(c), 1, 0, a, c->r.key, FI_UINT64,
					    FI_SUM), -FI_EINVAL);
	}
	/* count 0 and count above what valid allows */
	FDT_OK(fi_fetch_atomicvalid(c->s->ep, FI_UINT64, FI_SUM, &count));
	FDT_ASSERT(post(c, K_FETCH, FI_UINT64, FI_SUM, 0, c->r.addr) < 0, "fetch count 0");
	FDT_ASSERT(post(c, K_FETCH, FI_UINT64, FI_SUM, count + 1, c->r.addr) < 0,
		   "fetch count %zu", count + 1);
	FDT_OK(fi_atomicvalid(c->s->ep, FI_UINT64, FI_SUM, &count));
	FDT_ASSERT(post(c, K_WRITE, FI_UINT64, FI_SUM, 0, c->r.addr) < 0, "atomic count 0");
	FDT_ASSERT(post(c, K_WRITE, FI_UINT64, FI_SUM, count + 1, c->r.addr) < 0,
		   "atomic count %zu", count + 1);
	FDT_OK(fi_compare_atomicvalid(c->s->ep, FI_UINT64, FI_CSWAP, &count));
	FDT_ASSERT(post(c, K_COMPARE, FI_UINT64, FI_CSWAP, 0, c->r.addr) < 0, "cswap count 0");
	FDT_ASSERT(post(c, K_COMPARE, FI_UINT64, FI_CSWAP, count + 1, c->r.addr) < 0,
		   "cswap count %zu", count + 1);
	/* vector forms whose operand, compare and result counts disagree */
	{
		struct fi_ioc op1 = { OPERAND(c), 1 }, cmp1 = { COMPARE(c), 1 },
			      res1 = { RESULT(c), 1 }, res2 = { RESULT(c), 2 },
			      cmp2 = { COMPARE(c), 2 };

		FDT_ASSERT(fi_fetch_atomicv(c->s->ep, &op1, &c->desc, 1, &res2, &c->desc, 1, 0,
					    c->r.addr, c->r.key, FI_UINT64, FI_SUM,
					    &c->ctx) < 0, "fetch_atomicv result count 2");
		FDT_ASSERT(fi_compare_atomicv(c->s->ep, &op1, &c->desc, 1, &cmp2, &c->desc, 1,
					      &res1, &c->desc, 1, 0, c->r.addr, c->r.key,
					      FI_UINT64, FI_CSWAP, &c->ctx) < 0,
			   "compare_atomicv compare count 2");
		FDT_ASSERT(fi_compare_atomicv(c->s->ep, &op1, &c->desc, 1, &cmp1, &c->desc, 1,
					      &res2, &c->desc, 1, 0, c->r.addr, c->r.key,
					      FI_UINT64, FI_CSWAP, &c->ctx) < 0,
			   "compare_atomicv result count 2");
	}
	/* none of it reached the target or the CQ */
	fdt_cq_expect_quiet(c->s->txcq, 100, "refused requests");
	before = get_target(c, 0, 8);
	FDT_ASSERT(before == 0x1122334455667788ull, "word 0 changed: 0x%llx",
		   (unsigned long long)before);
	FDT_ASSERT(get_target(c, 8, 8) == 0x99aabbccddeeff00ull, "word 1 changed");
}

static int client(struct fdt_side *s, void *arg)
{
	struct client c;
	uint8_t reply[FDT_REGION_WIRE];
	static const int dts[] = {
		FI_INT8, FI_UINT8, FI_INT16, FI_UINT16, FI_INT32, FI_UINT32, FI_INT64,
		FI_UINT64, FI_FLOAT, FI_DOUBLE, FI_FLOAT_COMPLEX, FI_DOUBLE_COMPLEX,
		FI_LONG_DOUBLE, FI_LONG_DOUBLE_COMPLEX, FI_INT128, FI_UINT128,
	};
	size_t count;

	(void)arg;
	memset(&c, 0, sizeof(c));
	c.s = s;
	FDT_ASSERT(fdt_client_connect_reply(s, NULL, reply, sizeof(reply), NULL, NULL)
		   == sizeof(reply), "accept data");
	fdt_region_unpack(&c.r, reply);
	FDT_ASSERT(!posix_memalign((void **)&c.x, 64, 256), "alloc");
	c.mr = fdt_reg(s, c.x, 256, FI_READ | FI_WRITE);
	c.desc = fi_mr_desc(c.mr);

	/* what this provider promises */
	for (int i = 0; i < 2; i++) {
		enum fi_datatype dt = i ? FI_INT64 : FI_UINT64;

		count = 0;
		FDT_OK(fi_fetch_atomicvalid(s->ep, dt, FI_SUM, &count));
		FDT_ASSERT(count >= 1, "count");
		FDT_OK(fi_fetch_atomicvalid(s->ep, dt, FI_ATOMIC_READ, &count));
		FDT_OK(fi_compare_atomicvalid(s->ep, dt, FI_CSWAP, &count));
		FDT_OK(fi_atomicvalid(s->ep, dt, FI_SUM, &count));
	}

	for (int k = K_WRITE; k <= K_COMPARE; k++)
		for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++)
			for (int op = FI_MIN; op < FI_ATOMIC_OP_LAST; op++)
				check_combo(&c, (enum kind)k, dts[d], op);
	fdt_cq_expect_quiet(s->txcq, 100, "after the refused combinations");
	bad_requests(&c);

	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_OK(fi_close(&c.mr->fid));
	fdt_close_side(s);
	free(c.x);
	printf("client: %d combinations claimed and performed right (%d runs), %d refused "
	       "as claimed; misaligned and bad counts refused\n", c.claimed, c.performed,
	       c.refused);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	hints->caps |= FI_ATOMIC | FI_RMA;
	rc = fdt_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	return rc;
}
