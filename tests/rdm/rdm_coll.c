/* Collectives on RDM endpoints (issue 25; before, FI_COLLECTIVE found no
 * RDM entry and every collective said -FI_ENOSYS). Groups of 2, 3 and 4
 * ranks, each a process (rdmt_spawn; names exchanged over pipes), every
 * result compared with what the test computes on the host:
 * - fi_getinfo with FI_COLLECTIVE: the entry has it and a 63-bit tag
 *   format; FI_COLLECTIVE with a 64-bit format: no entry;
 * - fi_join_collective of an FI_UNIVERSE AV set: FI_JOIN_COMPLETE with
 *   the join's context on the endpoint's EQ;
 * - fi_barrier; fi_broadcast from every root (int32 x 1000, and 80 000
 *   doubles, a rendezvous); fi_allreduce of 7 elements for every
 *   datatype FI_INT8..FI_DOUBLE and every op FI_MIN..FI_BXOR: where
 *   fi_query_collective serves the pair the result equals the host's
 *   fold in rank order, where it does not the call says -FI_EINVAL;
 *   fi_allgather (uint64); fi_scatter from every root (uint16);
 * - a set built with fi_av_set_insert in reverse order: allgather
 *   results follow the set's order (a member's rank is its position);
 * - a receive the application posted with an ignore mask of all ones
 *   takes none of the collective messages (it is still there to cancel);
 * - untrusted sizes: a broadcast whose root sends fewer bytes than the
 *   others expect fails there with FI_EIO, more with FI_ETRUNC, not a
 *   crash, and the group works afterwards;
 * - bad input: a pair with no meaning (FI_BAND of FI_FLOAT, FI_CSWAP):
 *   -FI_EINVAL, for fi_reduce too; a root not in the group (broadcast,
 *   gather), an unknown group address, a closed group, alltoall without
 *   input: -FI_EINVAL; flags on barrier2 and alltoall: -FI_EBADFLAGS;
 *   fi_join without FI_COLLECTIVE: -FI_ENOSYS; an endpoint without
 *   FI_COLLECTIVE: fi_barrier -FI_ENOSYS;
 * - fi_alltoall (int32, into another buffer and in place), fi_gather to
 *   every root (uint16; the others' result untouched), fi_reduce_scatter
 *   and fi_reduce (root moving round) of every served datatype x op pair
 *   against the host's fold in rank order, the rest -FI_EINVAL;
 *   fi_query_collective answers FI_REDUCE_SCATTER, FI_REDUCE and
 *   FI_ALLREDUCE with FI_SCATTER alike, FI_GATHER and FI_ALLTOALL with
 *   the element size (before: -FI_ENOSYS for all four). */
#include <stdbool.h>
#include <unistd.h>
#include <rdma/fi_collective.h>

#include "rdmt.h"

#define MAXR 4
#define AR_COUNT 7
#define BIG 80000

struct rank {
	int r, n;
	int to[1], from[1];		/* pipes to main */
	struct rdmt_dom dom;
	struct rdmt_cq *cq;
	struct fid_ep *ep;
	struct fid_av *av;
	struct fid_eq *eq;
	fi_addr_t addr[MAXR];
	uint8_t names[MAXR][256];
};

/* Every rank is a child of main, which relays (names, this barrier). */
static void sync_all(struct rank *k)
{
	uint8_t t = 0;

	rdmt_write_all(k->to[0], &t, 1);
	rdmt_read_all(k->from[0], &t, 1);
}

static void wait_coll(struct rank *k, void *ctx, int want_err, const char *what)
{
	struct rdmt_comp c;

	rdmt_wait(k->cq, &c);
	FDT_ASSERT(c.e.op_context == ctx, "%s (rank %d): context %p, expected %p", what, k->r,
		   c.e.op_context, ctx);
	FDT_ASSERT(c.err == want_err, "%s (rank %d): error %d (%s), expected %d", what, k->r,
		   c.err, fi_strerror(c.err), want_err);
	if (!want_err)
		FDT_ASSERT(c.e.flags & FI_COLLECTIVE, "%s: flags %#llx", what,
			   (unsigned long long)c.e.flags);
}

static struct fid_mc *join(struct rank *k, struct fid_av_set *set, void *ctx)
{
	struct fid_mc *mc;
	fi_addr_t ca;
	struct fi_eq_entry e;
	uint32_t event;
	long end = rdmt_now_ms() + RDMT_WAIT_MS;
	ssize_t n;

	FDT_OK(fi_av_set_addr(set, &ca));
	FDT_OK(fi_join_collective(k->ep, ca, set, 0, &mc, ctx));
	for (;;) {
		rdmt_progress();	/* the join is a barrier: progress it */
		n = fi_eq_read(k->eq, &event, &e, sizeof(e), 0);
		if (n != -FI_EAGAIN)
			break;
		FDT_ASSERT(rdmt_now_ms() < end, "rank %d: no FI_JOIN_COMPLETE", k->r);
	}
	FDT_ASSERT(n == (ssize_t)sizeof(e) && event == FI_JOIN_COMPLETE,
		   "rank %d: join event %u, %zd", k->r, event, n);
	FDT_ASSERT(e.context == ctx && e.fid == &mc->fid, "join entry's context / fid");
	return mc;
}

/* ---- host side of allreduce ---- */
static bool dt_signed(enum fi_datatype dt)
{
	return dt == FI_INT8 || dt == FI_INT16 || dt == FI_INT32 || dt == FI_INT64;
}

static bool dt_real(enum fi_datatype dt)
{
	return dt == FI_FLOAT || dt == FI_DOUBLE;
}

static size_t dt_size(enum fi_datatype dt)
{
	static const size_t s[] = { [FI_INT8] = 1, [FI_UINT8] = 1, [FI_INT16] = 2,
		[FI_UINT16] = 2, [FI_INT32] = 4, [FI_UINT32] = 4, [FI_INT64] = 8,
		[FI_UINT64] = 8, [FI_FLOAT] = 4, [FI_DOUBLE] = 8 };
	return s[dt];
}

static double val(int rank, int i, enum fi_datatype dt, enum fi_op op)
{
	if (op == FI_PROD)
		return (rank + i) % 3 + 1;
	if (op == FI_LOR || op == FI_LAND || op == FI_LXOR)
		return (rank + i) % 2;
	return ((rank * 5 + i * 3) % 9) - (dt_signed(dt) || dt_real(dt) ? 4 : 0);
}

static void put(void *buf, int i, enum fi_datatype dt, double v)
{
	switch (dt) {
	case FI_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
	case FI_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
	case FI_INT16: ((int16_t *)buf)[i] = (int16_t)v; break;
	case FI_UINT16: ((uint16_t *)buf)[i] = (uint16_t)v; break;
	case FI_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
	case FI_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
	case FI_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
	case FI_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
	case FI_FLOAT: ((float *)buf)[i] = (float)v; break;
	case FI_DOUBLE: ((double *)buf)[i] = v; break;
	default: FDT_FAIL("type %d", dt);
	}
}

static double get(const void *buf, int i, enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT8: return ((const int8_t *)buf)[i];
	case FI_UINT8: return ((const uint8_t *)buf)[i];
	case FI_INT16: return ((const int16_t *)buf)[i];
	case FI_UINT16: return ((const uint16_t *)buf)[i];
	case FI_INT32: return ((const int32_t *)buf)[i];
	case FI_UINT32: return ((const uint32_t *)buf)[i];
	case FI_INT64: return (double)((const int64_t *)buf)[i];
	case FI_UINT64: return (double)((const uint64_t *)buf)[i];
	case FI_FLOAT: return ((const float *)buf)[i];
	case FI_DOUBLE: return ((const double *)buf)[i];
	default: FDT_FAIL("type %d", dt);
	}
	return 0;
}

/* a op b as fi_atomic(3) defines it, in the element's type (the values
 * are small: no overflow) */
static double fold(enum fi_op op, enum fi_datatype dt, double a, double b)
{
	uint8_t tmp[8];
	int64_t x = (int64_t)a, y = (int64_t)b;

	switch (op) {
	case FI_MIN: return a < b ? a : b;
	case FI_MAX: return a > b ? a : b;
	case FI_SUM: return a + b;
	case FI_PROD: return a * b;
	case FI_LOR: return (a != 0) || (b != 0);
	case FI_LAND: return (a != 0) && (b != 0);
	case FI_LXOR: return (a != 0) != (b != 0);
	case FI_BOR: put(tmp, 0, dt, (double)(x | y)); return get(tmp, 0, dt);
	case FI_BAND: put(tmp, 0, dt, (double)(x & y)); return get(tmp, 0, dt);
	case FI_BXOR: put(tmp, 0, dt, (double)(x ^ y)); return get(tmp, 0, dt);
	default: FDT_FAIL("op %d", op);
	}
	return 0;
}

static void run_allreduce(struct rank *k, fi_addr_t g)
{
	static struct fi_context ctx;
	uint8_t in[AR_COUNT * 8], out[AR_COUNT * 8];
	int served = 0;

	for (int dt = FI_INT8; dt <= FI_DOUBLE; dt++) {
		for (int op = FI_MIN; op <= FI_BXOR; op++) {
			struct fi_collective_attr attr = { .op = op, .datatype = dt };
			int q = fi_query_collective(k->dom.domain, FI_ALLREDUCE, &attr, 0);
			ssize_t ret;

			for (int i = 0; i < AR_COUNT; i++)
				put(in, i, dt, val(k->r, i, dt, op));
			memset(out, 0xee, sizeof(out));
			ret = fi_allreduce(k->ep, in, AR_COUNT, NULL, out, NULL, g, dt, op, 0, &ctx);
			if (q) {
				FDT_ASSERT(q == -FI_EOPNOTSUPP, "query dt %d op %d = %d", dt, op, q);
				FDT_ASSERT(ret == -FI_EINVAL, "allreduce dt %d op %d = %zd, "
					   "expected -FI_EINVAL", dt, op, ret);
				continue;
			}
			FDT_ASSERT(ret == 0, "allreduce dt %d op %d = %zd (%s)", dt, op, ret,
				   fi_strerror((int)-ret));
			FDT_ASSERT(attr.datatype_attr.size == dt_size(dt), "query size");
			wait_coll(k, &ctx, 0, "allreduce");
			for (int i = 0; i < AR_COUNT; i++) {
				double want = val(0, i, dt, op);

				for (int r = 1; r < k->n; r++)
					want = fold(op, dt, want, val(r, i, dt, op));
				FDT_ASSERT(get(out, i, dt) == want,
					   "allreduce n %d rank %d dt %d op %d [%d]: %g, expected %g",
					   k->n, k->r, dt, op, i, get(out, i, dt), want);
			}
			served++;
		}
	}
	/* sum/prod/min/max on 10 types, bitwise on 8, logical on 10 */
	FDT_ASSERT(served == 4 * 10 + 3 * 8 + 3 * 10, "%d pairs served", served);
}

/* fi_alltoall, fi_reduce_scatter, fi_reduce, fi_gather against the host
 * (issue 25's second part: before, each said -FI_ENOSYS). */
#define RS_COUNT 3
static void run_more(struct rank *k, fi_addr_t g)
{
	static struct fi_context ctx;
	int32_t a_in[MAXR * 3], a_out[MAXR * 3];
	uint16_t g_in[5], g_out[MAXR * 5];
	uint8_t in[MAXR * RS_COUNT * 8], out[MAXR * RS_COUNT * 8];
	int served = 0, pair = 0;

	/* alltoall: slice d of rank s goes to slice s of rank d; then in place */
	for (int inplace = 0; inplace < 2; inplace++) {
		int32_t *res = inplace ? a_in : a_out;

		for (int d = 0; d < k->n; d++)
			for (int i = 0; i < 3; i++)
				a_in[d * 3 + i] = k->r * 1000 + d * 10 + i;
		memset(a_out, 0, sizeof(a_out));
		RDMT_POST(fi_alltoall(k->ep, a_in, 3, NULL, res, NULL, g, FI_INT32, 0, &ctx));
		wait_coll(k, &ctx, 0, "alltoall");
		for (int s = 0; s < k->n; s++)
			for (int i = 0; i < 3; i++)
				FDT_ASSERT(res[s * 3 + i] == s * 1000 + k->r * 10 + i,
					   "alltoall%s n %d rank %d [%d][%d] = %d", inplace ?
					   " in place" : "", k->n, k->r, s, i, res[s * 3 + i]);
	}

	/* gather to every root; the others' result is not written */
	for (int root = 0; root < k->n; root++) {
		for (int i = 0; i < 5; i++)
			g_in[i] = (uint16_t)(k->r * 100 + root * 10 + i);
		memset(g_out, 0xee, sizeof(g_out));
		RDMT_POST(fi_gather(k->ep, g_in, 5, NULL, g_out, NULL, g, k->addr[root],
				    FI_UINT16, 0, &ctx));
		wait_coll(k, &ctx, 0, "gather");
		for (int r = 0; r < k->n; r++)
			for (int i = 0; i < 5; i++)
				FDT_ASSERT(k->r == root ? g_out[r * 5 + i] == r * 100 + root * 10 + i :
					   g_out[r * 5 + i] == 0xeeee,
					   "gather root %d rank %d [%d][%d] = %u", root, k->r, r, i,
					   g_out[r * 5 + i]);
	}

	/* reduce-scatter and reduce of every pair the query serves (reduce's
	 * root moves round), the others -FI_EINVAL */
	for (int dt = FI_INT8; dt <= FI_DOUBLE; dt++) {
		for (int op = FI_MIN; op <= FI_BXOR; op++) {
			struct fi_collective_attr attr = { .op = op, .datatype = dt };
			struct fi_collective_attr a2 = { .op = op, .datatype = dt };
			struct fi_collective_attr a3 = { .op = op, .datatype = dt };
			int q = fi_query_collective(k->dom.domain, FI_REDUCE_SCATTER, &attr, 0);
			int q2 = fi_query_collective(k->dom.domain, FI_REDUCE, &a2, 0);
			int q3 = fi_query_collective(k->dom.domain, FI_ALLREDUCE, &a3, FI_SCATTER);
			int root = pair++ % k->n;
			ssize_t ret;

			FDT_ASSERT(q == q2 && q == q3, "queries dt %d op %d: %d %d %d", dt, op, q, q2, q3);
			for (int i = 0; i < k->n * RS_COUNT; i++)
				put(in, i, dt, val(k->r, i, dt, op));
			memset(out, 0xee, sizeof(out));
			ret = fi_reduce_scatter(k->ep, in, RS_COUNT, NULL, out, NULL, g, dt, op, 0,
						&ctx);
			if (q) {
				FDT_ASSERT(q == -FI_EOPNOTSUPP, "query dt %d op %d = %d", dt, op, q);
				FDT_ASSERT(ret == -FI_EINVAL, "reduce_scatter dt %d op %d = %zd", dt,
					   op, ret);
				ret = fi_reduce(k->ep, in, RS_COUNT, NULL, out, NULL, g, k->addr[0],
						dt, op, 0, &ctx);
				FDT_ASSERT(ret == -FI_EINVAL, "reduce dt %d op %d = %zd", dt, op, ret);
				continue;
			}
			FDT_ASSERT(ret == 0, "reduce_scatter dt %d op %d = %zd (%s)", dt, op, ret,
				   fi_strerror((int)-ret));
			FDT_ASSERT(attr.datatype_attr.size == dt_size(dt), "query size");
			wait_coll(k, &ctx, 0, "reduce_scatter");
			for (int i = 0; i < RS_COUNT; i++) {
				int at = k->r * RS_COUNT + i;
				double want = val(0, at, dt, op);

				for (int r = 1; r < k->n; r++)
					want = fold(op, dt, want, val(r, at, dt, op));
				FDT_ASSERT(get(out, i, dt) == want,
					   "reduce_scatter n %d rank %d dt %d op %d [%d]: %g, expected %g",
					   k->n, k->r, dt, op, i, get(out, i, dt), want);
			}
			FDT_ASSERT(out[RS_COUNT * dt_size(dt)] == 0xee, "reduce_scatter wrote past");

			memset(out, 0xee, sizeof(out));
			RDMT_POST(fi_reduce(k->ep, in, RS_COUNT, NULL, out, NULL, g, k->addr[root],
					    dt, op, 0, &ctx));
			wait_coll(k, &ctx, 0, "reduce");
			for (int i = 0; i < RS_COUNT; i++) {
				double want = val(0, i, dt, op);

				for (int r = 1; r < k->n; r++)
					want = fold(op, dt, want, val(r, i, dt, op));
				if (k->r == root)
					FDT_ASSERT(get(out, i, dt) == want,
						   "reduce n %d root %d dt %d op %d [%d]: %g, expected %g",
						   k->n, root, dt, op, i, get(out, i, dt), want);
			}
			if (k->r != root)
				FDT_ASSERT(out[0] == 0xee, "reduce wrote a non-root's result");
			served++;
		}
	}
	FDT_ASSERT(served == 4 * 10 + 3 * 8 + 3 * 10, "%d pairs served", served);
}

static void run_group(struct rank *k)
{
	static struct fi_context c1, c2, c3, user_ctx, jctx, jctx2;
	struct fi_av_set_attr uattr = {
		.start_addr = FI_ADDR_NOTAVAIL, .end_addr = FI_ADDR_NOTAVAIL,
		.flags = FI_UNIVERSE,
	};
	struct fi_av_set_attr eattr = {
		.start_addr = FI_ADDR_NOTAVAIL, .end_addr = FI_ADDR_NOTAVAIL,
	};
	struct fid_av_set *set, *rev;
	struct fid_mc *mc, *mc2;
	fi_addr_t g, g2;
	int32_t ib[1000];
	double *big = malloc(BIG * sizeof(double));
	uint64_t ag[MAXR * 3], mine[3];
	uint16_t sc_in[MAXR * 5], sc_out[5];
	uint8_t user_buf[64];
	struct fi_collective_attr attr;
	struct rdmt_comp c;
	ssize_t ret;

	FDT_ASSERT(big, "malloc");
	/* an application receive matching every tag: must take nothing */
	RDMT_POST(fi_trecv(k->ep, user_buf, sizeof(user_buf), NULL, FI_ADDR_UNSPEC, 0,
			   ~0ULL, &user_ctx));

	FDT_OK(fi_av_set(k->av, &uattr, &set, NULL));
	mc = join(k, set, &jctx);
	g = fi_mc_addr(mc);

	for (int i = 0; i < 3; i++) {
		RDMT_POST(fi_barrier(k->ep, g, &c1));
		wait_coll(k, &c1, 0, "barrier");
	}
	for (int root = 0; root < k->n; root++) {
		for (int i = 0; i < 1000; i++)
			ib[i] = k->r == root ? root * 100000 + i : -1;
		RDMT_POST(fi_broadcast(k->ep, ib, 1000, NULL, g, k->addr[root], FI_INT32, 0, &c2));
		wait_coll(k, &c2, 0, "broadcast");
		for (int i = 0; i < 1000; i++)
			FDT_ASSERT(ib[i] == root * 100000 + i, "broadcast root %d rank %d [%d] = %d",
				   root, k->r, i, ib[i]);
	}
	for (int i = 0; i < BIG; i++)
		big[i] = k->r == 1 ? i * 0.5 : -1.0;
	RDMT_POST(fi_broadcast(k->ep, big, BIG, NULL, g, k->addr[1], FI_DOUBLE, 0, &c2));
	wait_coll(k, &c2, 0, "large broadcast");
	for (int i = 0; i < BIG; i++)
		FDT_ASSERT(big[i] == i * 0.5, "large broadcast rank %d [%d]", k->r, i);

	run_allreduce(k, g);

	for (int i = 0; i < 3; i++)
		mine[i] = (uint64_t)k->r * 100 + (uint64_t)i;
	memset(ag, 0, sizeof(ag));
	RDMT_POST(fi_allgather(k->ep, mine, 3, NULL, ag, NULL, g, FI_UINT64, 0, &c3));
	wait_coll(k, &c3, 0, "allgather");
	for (int r = 0; r < k->n; r++)
		for (int i = 0; i < 3; i++)
			FDT_ASSERT(ag[r * 3 + i] == (uint64_t)r * 100 + (uint64_t)i,
				   "allgather rank %d [%d][%d]", k->r, r, i);

	for (int root = 0; root < k->n; root++) {
		for (int i = 0; i < k->n * 5; i++)
			sc_in[i] = k->r == root ? (uint16_t)(root * 1000 + i) : 0;
		memset(sc_out, 0, sizeof(sc_out));
		RDMT_POST(fi_scatter(k->ep, sc_in, 5, NULL, sc_out, NULL, g, k->addr[root],
				     FI_UINT16, 0, &c3));
		wait_coll(k, &c3, 0, "scatter");
		for (int i = 0; i < 5; i++)
			FDT_ASSERT(sc_out[i] == root * 1000 + k->r * 5 + i,
				   "scatter root %d rank %d [%d] = %u", root, k->r, i, sc_out[i]);
	}

	run_more(k, g);

	/* ---- a member's rank is its place in the set ---- */
	FDT_OK(fi_av_set(k->av, &eattr, &rev, NULL));
	for (int r = k->n - 1; r >= 0; r--)
		FDT_OK(fi_av_set_insert(rev, k->addr[r]));
	mc2 = join(k, rev, &jctx2);
	g2 = fi_mc_addr(mc2);
	FDT_ASSERT(g2 != g, "two groups, two addresses");
	memset(ag, 0, sizeof(ag));
	RDMT_POST(fi_allgather(k->ep, mine, 3, NULL, ag, NULL, g2, FI_UINT64, 0, &c3));
	wait_coll(k, &c3, 0, "allgather, reversed set");
	for (int j = 0; j < k->n; j++)
		FDT_ASSERT(ag[j * 3] == (uint64_t)(k->n - 1 - j) * 100,
			   "reversed set: place %d holds rank %llu's data", j,
			   (unsigned long long)ag[j * 3] / 100);

	/* ---- untrusted sizes ---- */
	RDMT_POST(fi_broadcast(k->ep, ib, k->r == 0 ? 64 : 128, NULL, g, k->addr[0],
			       FI_INT32, 0, &c2));
	wait_coll(k, &c2, k->r == 0 ? 0 : FI_EIO, "short broadcast");
	RDMT_POST(fi_broadcast(k->ep, ib, k->r == 0 ? 128 : 64, NULL, g, k->addr[0],
			       FI_INT32, 0, &c2));
	wait_coll(k, &c2, k->r == 0 ? 0 : FI_ETRUNC, "long broadcast");
	RDMT_POST(fi_barrier(k->ep, g, &c1));
	wait_coll(k, &c1, 0, "barrier after the errors");

	/* ---- bad input (local: no traffic) ---- */
	ret = fi_allreduce(k->ep, ib, 4, NULL, ib, NULL, g, FI_FLOAT, FI_BAND, 0, &c1);
	FDT_ASSERT(ret == -FI_EINVAL, "FI_BAND of FI_FLOAT = %zd", ret);
	ret = fi_allreduce(k->ep, ib, 4, NULL, ib, NULL, g, FI_INT32, FI_CSWAP, 0, &c1);
	FDT_ASSERT(ret == -FI_EINVAL, "FI_CSWAP = %zd", ret);
	ret = fi_reduce(k->ep, ib, 4, NULL, ib, NULL, g, k->addr[0], FI_FLOAT, FI_BAND, 0, &c1);
	FDT_ASSERT(ret == -FI_EINVAL, "reduce: FI_BAND of FI_FLOAT = %zd", ret);
	ret = fi_gather(k->ep, ib, 4, NULL, ib, NULL, g, 99, FI_INT32, 0, &c1);
	FDT_ASSERT(ret == -FI_EINVAL, "gather: a root outside the group = %zd", ret);
	ret = fi_alltoall(k->ep, ib, 4, NULL, ib, NULL, g, FI_INT32, 1, &c1);
	FDT_ASSERT(ret == -FI_EBADFLAGS, "alltoall flags = %zd", ret);
	ret = fi_alltoall(k->ep, NULL, 4, NULL, ib, NULL, g, FI_INT32, 0, &c1);
	FDT_ASSERT(ret == -FI_EINVAL, "alltoall without input = %zd", ret);
	ret = fi_broadcast(k->ep, ib, 4, NULL, g, 99, FI_INT32, 0, &c1);
	FDT_ASSERT(ret == -FI_EINVAL, "a root outside the group = %zd", ret);
	ret = fi_barrier(k->ep, g + 8, &c1);
	FDT_ASSERT(ret == -FI_EINVAL, "unknown group address = %zd", ret);
	ret = fi_barrier2(k->ep, g, 1, &c1);
	FDT_ASSERT(ret == -FI_EBADFLAGS, "barrier2 flags = %zd", ret);
	{
		struct fi_collective_addr ca = { .set = set, .coll_addr = FI_ADDR_NOTAVAIL };
		struct fid_mc *x;
		int r = fi_join(k->ep, &ca, 0, &x, NULL);

		FDT_ASSERT(r == -FI_ENOSYS, "fi_join without FI_COLLECTIVE = %d", r);
	}
	memset(&attr, 0, sizeof(attr));
	attr.datatype = FI_INT32;
	FDT_OK(fi_query_collective(k->dom.domain, FI_GATHER, &attr, 0));
	FDT_ASSERT(attr.datatype_attr.size == 4, "query FI_GATHER size");
	FDT_OK(fi_query_collective(k->dom.domain, FI_ALLTOALL, &attr, 0));
	FDT_ASSERT(fi_query_collective(k->dom.domain, FI_BROADCAST, &attr, 1) == -FI_EBADFLAGS,
		   "query flags");
	FDT_OK(fi_query_collective(k->dom.domain, FI_BROADCAST, &attr, 0));
	FDT_ASSERT(attr.datatype_attr.size == 4 && attr.max_members >= MAXR, "query attrs");

	/* the application's receive took none of it */
	FDT_OK(fi_cancel(&k->ep->fid, &user_ctx));
	rdmt_wait(k->cq, &c);
	FDT_ASSERT(c.err == FI_ECANCELED && c.e.op_context == &user_ctx,
		   "rank %d: the match-all receive: err %d", k->r, c.err);

	sync_all(k);
	FDT_OK(fi_close(&mc2->fid));
	FDT_OK(fi_close(&mc->fid));
	ret = fi_barrier(k->ep, g, &c1);
	FDT_ASSERT(ret == -FI_EINVAL, "barrier on a closed group = %zd", ret);
	FDT_OK(fi_close(&rev->fid));
	FDT_OK(fi_close(&set->fid));
	free(big);
}

static void rank_main(struct rank *k)
{
	struct fi_info *hints = rdmt_hints(FI_TAGGED | FI_COLLECTIVE);
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	uint8_t name[256];
	size_t len = sizeof(name);

	rdmt_dom_open(&k->dom, hints);
	fi_freeinfo(hints);
	FDT_ASSERT(k->dom.info->caps & FI_COLLECTIVE, "no FI_COLLECTIVE in the entry");
	FDT_ASSERT(k->dom.info->ep_attr->mem_tag_format &&
		   !(k->dom.info->ep_attr->mem_tag_format >> 63),
		   "tag format %#llx with FI_COLLECTIVE",
		   (unsigned long long)k->dom.info->ep_attr->mem_tag_format);
	k->cq = rdmt_cq_open(&k->dom);
	FDT_OK(fi_eq_open(k->dom.fabric, &eq_attr, &k->eq, NULL));
	FDT_OK(fi_av_open(k->dom.domain, &av_attr, &k->av, NULL));
	FDT_OK(fi_endpoint(k->dom.domain, k->dom.info, &k->ep, NULL));
	FDT_OK(fi_ep_bind(k->ep, &k->cq->cq->fid, FI_TRANSMIT | FI_RECV));
	FDT_OK(fi_ep_bind(k->ep, &k->av->fid, 0));
	FDT_OK(fi_ep_bind(k->ep, &k->eq->fid, 0));
	FDT_OK(fi_enable(k->ep));
	FDT_OK(fi_getname(&k->ep->fid, name, &len));
	FDT_ASSERT(len <= 256, "name length");
	/* every rank inserts every name in rank order: same AV everywhere */
	rdmt_write_all(k->to[0], name, 256);
	rdmt_read_all(k->from[0], k->names, sizeof(k->names));
	for (int i = 0; i < k->n; i++)
		FDT_ASSERT(fi_av_insert(k->av, k->names[i], 1, &k->addr[i], 0, NULL) == 1,
			   "insert %d", i);

	run_group(k);

	FDT_OK(fi_close(&k->ep->fid));
	FDT_OK(fi_close(&k->av->fid));
	FDT_OK(fi_close(&k->eq->fid));
	rdmt_cq_close(k->cq);
	rdmt_dom_close(&k->dom);
}

static int nranks;
static void no_group_checks(void);

static int child(int to_parent, int from_parent, void *arg)
{
	struct rank *k = calloc(1, sizeof(*k));

	k->r = (int)(intptr_t)arg;
	k->n = nranks;
	k->to[0] = to_parent;
	k->from[0] = from_parent;
	if (k->n == 2 && k->r == 0)
		no_group_checks();
	rank_main(k);
	free(k);
	return 0;
}

/* The negative cases that need no group, in rank 0 of the first round. */
static void no_group_checks(void)
{
	struct fi_info *hints = rdmt_hints(FI_TAGGED | FI_COLLECTIVE), *info = NULL;
	struct rdmt_dom d;
	struct rdmt_ep e;
	int ret;

	hints->ep_attr->mem_tag_format = ~0ULL;
	ret = fi_getinfo(FI_VERSION(1, 17), fdt_addr(), NULL, FI_SOURCE, hints, &info);
	FDT_ASSERT(ret == -FI_ENODATA, "FI_COLLECTIVE with a 64-bit tag format = %d", ret);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	hints = rdmt_hints(FI_TAGGED);
	rdmt_dom_open(&d, hints);
	fi_freeinfo(hints);
	FDT_ASSERT(!(d.info->caps & FI_COLLECTIVE), "FI_COLLECTIVE not asked, given");
	rdmt_ep_open(&d, &e, NULL, FI_AV_TABLE);
	ret = (int)fi_barrier(e.ep, 0, NULL);
	FDT_ASSERT(ret == -FI_ENOSYS, "barrier without FI_COLLECTIVE = %d", ret);
	rdmt_ep_close(&e);
	rdmt_dom_close(&d);
}

/* Forks every rank before any verbs call of its own (rdmt_spawn), and
 * relays the names and the closing barrier. */
int main(void)
{
	(void)fdt_addr();	/* skip before forking */
	for (nranks = 2; nranks <= MAXR; nranks++) {
		int to[MAXR], from[MAXR];
		uint8_t names[MAXR][256], t;
		pid_t pids[MAXR];

		for (int i = 0; i < nranks; i++)
			pids[i] = rdmt_spawn(child, (void *)(intptr_t)i, &to[i], &from[i]);
		for (int i = 0; i < nranks; i++)
			rdmt_read_all(from[i], names[i], 256);
		for (int i = 0; i < nranks; i++)
			rdmt_write_all(to[i], names, sizeof(names));
		for (int i = 0; i < nranks; i++)
			rdmt_read_all(from[i], &t, 1);
		for (int i = 0; i < nranks; i++)
			rdmt_write_all(to[i], &t, 1);
		for (int i = 0; i < nranks; i++) {
			int rc = rdmt_reap(pids[i]);

			FDT_ASSERT(rc == 0, "%d ranks: rank %d failed (%d)", nranks, i, rc);
			close(to[i]);
			close(from[i]);
		}
		printf("rdm_coll: %d ranks pass\n", nranks);
	}
	return rdmt_pass("rdm_coll");
}
