/* fi_inject_write and fi_inject_writedata: no completion at the initiator,
 * the source buffer is reusable the moment the call returns, and the data
 * lands. Checked three ways: the server checks its memory when a later
 * write with remote CQ data arrives (RC places writes in order, so earlier
 * injects are in place by then), the client reads the target back, and
 * the client's transmit CQ shows only the completions it asked for.
 *
 *   phase 1  injects of sizes 0 .. inject_size at unaligned offsets,
 *            the source scribbled over right after each call;
 *   phase 2  several times the transmit queue depth of 8-byte injects
 *            (the provider must recycle send-queue slots without ever
 *            reporting a completion), -FI_EAGAIN handled by reading the CQ;
 *   phase 3  fi_inject_writedata: the target gets the data in a receive
 *            completion, the bytes are in place;
 *   phase 4  an inject over inject_size is refused and changes nothing. */
#include "fdt.h"

#define T_SIZE (64 * 1024)
#define BACKGROUND 0xEE
#define N_RECV 64
#define RBUF 16
#define P1_BASE 1	/* phase 1 area (odd on purpose) */
#define P2_BASE 16384	/* phase 2: 64 slots of 8 bytes */
#define P2_SLOTS 64
#define P3_BASE 20001
#define P4_BASE 40001

enum { MARK_P1 = 0x1001, MARK_P2 = 0x1002, MARK_P4 = 0x1004 };

/* The inject size comes from the connection; both sides derive the same
 * case list from it. */
static size_t p1_sizes(size_t inject, size_t *out)
{
	static const size_t want[] = { 0, 1, 2, 7, 8, 31, 64, 100, 255, 256 };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (want[i] <= inject)
			out[n++] = want[i];
	if (inject > 1)
		out[n++] = inject - 1;
	out[n++] = inject;
	return n;
}

/* Phase 1 case i: length and offset inside the phase 1 area. */
static size_t p1_off(const size_t *len, size_t i)
{
	size_t off = P1_BASE;

	for (size_t j = 0; j < i; j++)
		off += len[j] + 3;
	return off;
}

static uint64_t p2_count(size_t tx_size)
{
	return 3 * tx_size + 17;
}

static uint64_t p2_value(uint64_t i)
{
	return 0x5555000000000000ull | i;
}

static const uint32_t p3_data[] = { 0, 1, 0xfffffffe, 0x13572468 };
#define P3_N (sizeof(p3_data) / sizeof(p3_data[0]))

static size_t p3_len(size_t i, size_t inject)
{
	size_t l = i * 5;

	return l <= inject ? l : inject;
}

struct server_state {
	uint8_t *t, *rbuf;
	struct fid_mr *tmr, *rmr;
	struct fi_context rctx[N_RECV];
	int next_recv;
	uint8_t reply[FDT_REGION_WIRE];
};

static void server_pre(struct fdt_side *s, void *arg)
{
	struct server_state *st = arg;

	st->t = malloc(T_SIZE);
	st->rbuf = malloc(N_RECV * RBUF);
	FDT_ASSERT(st->t && st->rbuf, "malloc");
	memset(st->t, BACKGROUND, T_SIZE);
	st->tmr = fdt_reg(s, st->t, T_SIZE, FI_REMOTE_READ | FI_REMOTE_WRITE);
	st->rmr = fdt_reg(s, st->rbuf, N_RECV * RBUF, FI_RECV);
	fdt_region_pack(st->reply, st->t, T_SIZE, st->tmr);
	for (int i = 0; i < N_RECV; i++)
		FDT_OK(fi_recv(s->ep, st->rbuf + i * RBUF, RBUF, fi_mr_desc(st->rmr),
			       0, &st->rctx[i]));
}

/* Wait for the target completion of a write with data `data`. */
static void server_expect(struct fdt_side *s, struct server_state *st, uint64_t data)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;

	if (fdt_wait_cq_ms(s->rxcq, &e, &err, 30000) != 1)
		FDT_FAIL("waiting for data 0x%llx: error %d (%s)",
			 (unsigned long long)data, err.err, fi_strerror(err.err));
	FDT_ASSERT(e.flags == (FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA),
		   "flags 0x%llx", (unsigned long long)e.flags);
	FDT_ASSERT(e.data == data, "data 0x%llx, expected 0x%llx",
		   (unsigned long long)e.data, (unsigned long long)data);
	FDT_ASSERT(e.op_context == &st->rctx[st->next_recv], "receive context");
	st->next_recv++;
}

static void check_range(const uint8_t *t, size_t off, size_t len, uint32_t seed,
			const char *what)
{
	uint8_t *pat = malloc(len + 1);

	FDT_ASSERT(pat, "malloc");
	fdt_fill(pat, len, seed);
	FDT_ASSERT(!memcmp(t + off, pat, len), "%s: %zu bytes at %zu wrong", what, len, off);
	FDT_ASSERT(t[off - 1] == BACKGROUND && t[off + len] == BACKGROUND,
		   "%s: bytes around %zu+%zu changed", what, off, len);
	free(pat);
}

static int server(struct fdt_side *s, void *arg)
{
	struct server_state st;
	struct fdt_cm_data reply = { st.reply, sizeof(st.reply) };
	size_t inject = s->info->tx_attr->inject_size;
	uint64_t count = p2_count(s->info->tx_attr->size);
	size_t len[16], n;

	(void)arg;
	memset(&st, 0, sizeof(st));
	fdt_server_accept(s, NULL, &reply, server_pre, &st);

	n = p1_sizes(inject, len);
	FDT_ASSERT(p1_off(len, n) < P2_BASE, "inject_size %zu too big for the layout", inject);
	server_expect(s, &st, MARK_P1);
	for (size_t i = 0; i < n; i++)
		check_range(st.t, p1_off(len, i), len[i], (uint32_t)(100 + i), "phase 1");

	server_expect(s, &st, MARK_P2);
	for (uint64_t slot = 0; slot < P2_SLOTS; slot++) {
		uint64_t last = count - 1 - ((count - 1 - slot) % P2_SLOTS);
		uint64_t v;

		memcpy(&v, st.t + P2_BASE + slot * 8, 8);
		FDT_ASSERT(v == p2_value(last), "phase 2 slot %llu: 0x%llx, expected 0x%llx",
			   (unsigned long long)slot, (unsigned long long)v,
			   (unsigned long long)p2_value(last));
	}

	for (size_t i = 0; i < P3_N; i++) {
		server_expect(s, &st, p3_data[i]);
		check_range(st.t, P3_BASE + i * 64, p3_len(i, inject), (uint32_t)(300 + i),
			    "phase 3");
	}

	server_expect(s, &st, MARK_P4);
	for (size_t i = 0; i < 2048; i++)
		FDT_ASSERT(st.t[P4_BASE + i] == BACKGROUND, "refused inject wrote byte %zu", i);

	fdt_cq_expect_quiet(s->rxcq, 100, "target rx CQ at the end");
	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_OK(fi_close(&st.tmr->fid));
	FDT_OK(fi_close(&st.rmr->fid));
	fdt_close_side(s);
	free(st.t);
	free(st.rbuf);
	printf("server: inject_size %zu: %zu phase-1 injects, %llu phase-2 injects, "
	       "%zu inject_writedata placed right\n", inject, n,
	       (unsigned long long)count, P3_N);
	return 0;
}

/* Retry an inject while the provider asks for progress. The CQ read in
 * between must never return an entry: nothing here asked for one. */
#define INJECT_RETRY(s, call)							\
	do {									\
		ssize_t rc_;							\
		while ((rc_ = (call)) == -FI_EAGAIN) {				\
			struct fi_cq_data_entry e_;				\
			ssize_t r_ = fi_cq_read((s)->txcq, &e_, 1);		\
			FDT_ASSERT(r_ == -FI_EAGAIN, "inject progress: fi_cq_read " \
				   "= %zd, context %p", r_,			\
				   r_ == 1 ? e_.op_context : NULL);		\
		}								\
		FDT_OK(rc_);							\
	} while (0)

struct client_state {
	uint8_t *src, *dst;
	struct fid_mr *dst_mr;
	struct fdt_region t;
	struct fi_context rctx;
};

/* Read [off, off+len) of T: the first completion must be this read. */
static void read_back(struct fdt_side *s, struct client_state *c, size_t off, size_t len)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;

	FDT_OK(fi_read(s->ep, c->dst, len, fi_mr_desc(c->dst_mr), 0, c->t.addr + off,
		       c->t.key, &c->rctx));
	if (fdt_wait_cq_ms(s->txcq, &e, &err, 30000) != 1)
		FDT_FAIL("read back: error %d (%s)", err.err, fi_strerror(err.err));
	FDT_ASSERT(e.op_context == &c->rctx, "first tx completion is not the read "
		   "(context %p, flags 0x%llx): an inject completed", e.op_context,
		   (unsigned long long)e.flags);
	FDT_ASSERT(e.flags == (FI_RMA | FI_READ), "read flags");
}

static int client(struct fdt_side *s, void *arg)
{
	struct client_state c;
	uint8_t reply[FDT_REGION_WIRE];
	size_t inject = s->info->tx_attr->inject_size;
	size_t len[16], n;
	uint64_t count;

	(void)arg;
	memset(&c, 0, sizeof(c));
	FDT_ASSERT(fdt_client_connect_reply(s, NULL, reply, sizeof(reply), NULL, NULL)
		   == sizeof(reply), "accept data");
	fdt_region_unpack(&c.t, reply);
	FDT_ASSERT(inject >= 8, "inject_size %zu: too small for this test", inject);
	/* injected sources are never registered */
	c.src = malloc(inject + 64);
	c.dst = malloc(T_SIZE);
	FDT_ASSERT(c.src && c.dst, "malloc");
	c.dst_mr = fdt_reg(s, c.dst, T_SIZE, FI_READ);

	/* phase 1 */
	n = p1_sizes(inject, len);
	for (size_t i = 0; i < n; i++) {
		uint8_t *buf = c.src + (i % 5);

		fdt_fill(buf, len[i], (uint32_t)(100 + i));
		INJECT_RETRY(s, fi_inject_write(s->ep, buf, len[i], 0,
						c.t.addr + p1_off(len, i), c.t.key));
		memset(c.src, 0xA5, inject + 64);	/* the data is gone now */
	}
	INJECT_RETRY(s, fi_inject_writedata(s->ep, c.src, 0, MARK_P1, 0, c.t.addr, c.t.key));
	read_back(s, &c, 0, p1_off(len, n) + 1);
	for (size_t i = 0; i < n; i++) {
		size_t off = p1_off(len, i);

		fdt_fill(c.src, len[i], (uint32_t)(100 + i));
		FDT_ASSERT(!memcmp(c.dst + off, c.src, len[i]), "phase 1 read back, case %zu "
			   "(%zu bytes)", i, len[i]);
		FDT_ASSERT(c.dst[off + len[i]] == BACKGROUND, "phase 1 overrun, case %zu", i);
	}

	/* phase 2 */
	count = p2_count(s->info->tx_attr->size);
	for (uint64_t i = 0; i < count; i++) {
		uint64_t v = p2_value(i);

		INJECT_RETRY(s, fi_inject_write(s->ep, &v, 8, 0,
						c.t.addr + P2_BASE + (i % P2_SLOTS) * 8,
						c.t.key));
	}
	INJECT_RETRY(s, fi_inject_writedata(s->ep, c.src, 0, MARK_P2, 0, c.t.addr, c.t.key));
	read_back(s, &c, P2_BASE, P2_SLOTS * 8);
	for (uint64_t slot = 0; slot < P2_SLOTS; slot++) {
		uint64_t last = count - 1 - ((count - 1 - slot) % P2_SLOTS), v;

		memcpy(&v, c.dst + slot * 8, 8);
		FDT_ASSERT(v == p2_value(last), "phase 2 read back slot %llu",
			   (unsigned long long)slot);
	}

	/* phase 3 */
	for (size_t i = 0; i < P3_N; i++) {
		size_t l = p3_len(i, inject);

		fdt_fill(c.src + 3, l, (uint32_t)(300 + i));
		INJECT_RETRY(s, fi_inject_writedata(s->ep, c.src + 3, l, p3_data[i], 0,
						    c.t.addr + P3_BASE + i * 64, c.t.key));
		memset(c.src, 0xA5, inject + 64);
	}

	/* phase 4: one byte over the limit is refused, nothing is sent */
	{
		uint8_t *big = malloc(inject + 1);
		ssize_t rc;

		FDT_ASSERT(big, "malloc");
		memset(big, 0x42, inject + 1);
		rc = fi_inject_write(s->ep, big, inject + 1, 0, c.t.addr + P4_BASE, c.t.key);
		FDT_ASSERT(rc < 0 && rc != -FI_EAGAIN, "inject of inject_size + 1 = %zd", rc);
		rc = fi_inject_writedata(s->ep, big, inject + 1, 99, 0, c.t.addr + P4_BASE,
					 c.t.key);
		FDT_ASSERT(rc < 0 && rc != -FI_EAGAIN, "inject_writedata of inject_size + 1 "
			   "= %zd", rc);
		free(big);
	}
	INJECT_RETRY(s, fi_inject_writedata(s->ep, c.src, 0, MARK_P4, 0, c.t.addr, c.t.key));
	read_back(s, &c, P4_BASE, 2048);
	for (size_t i = 0; i < 2048; i++)
		FDT_ASSERT(c.dst[i] == BACKGROUND, "refused inject landed (byte %zu)", i);

	fdt_cq_expect_quiet(s->txcq, 100, "initiator tx CQ after the injects");
	fdt_wait_shutdown(s);
	FDT_OK(fi_close(&c.dst_mr->fid));
	fdt_close_side(s);
	free(c.src);
	free(c.dst);
	printf("client: inject_size %zu, %zu + %llu + %zu injects, no completions, "
	       "data read back\n", inject, n, (unsigned long long)count, P3_N);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	hints->caps |= FI_RMA;
	hints->mode |= FI_RX_CQ_DATA;
	hints->rx_attr->mode |= FI_RX_CQ_DATA;
	rc = fdt_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	return rc;
}
