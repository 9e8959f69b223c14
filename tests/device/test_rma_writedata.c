/* Remote CQ data with RMA writes: fi_writedata and fi_writemsg with
 * FI_REMOTE_CQ_DATA. The provider reports FI_RX_CQ_DATA, so each such write
 * consumes one posted receive at the target and completes there as an
 * FI_CQ_FORMAT_DATA entry with FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
 * the immediate data, and the consumed receive's context; the receive
 * buffer itself is not written. Plain fi_write in between must consume no
 * receive and produce no target completion. When the target sees the
 * completion, the written bytes are in place: the server checks them
 * there, and checks the bytes around them are untouched. */
#include "fdt.h"

#define T_SIZE (3 * 1024 * 1024)
#define BACKGROUND 0xEE
#define N_RECV 32
#define RBUF 64

enum kind { K_WRITEDATA, K_WRITEMSG, K_PLAIN };

struct wcase {
	enum kind kind;
	size_t len;
	size_t roff;
	uint64_t data;
};

/* Remote offsets are odd on purpose and the ranges never overlap, so the
 * server can check every case at the end as well as on arrival. */
static const struct wcase cases[] = {
	{ K_WRITEDATA, 0, 1, 0 },
	{ K_WRITEDATA, 1, 3, 1 },
	{ K_WRITEDATA, 13, 7, 0xdeadbeef },
	{ K_PLAIN, 100, 41, 0 },
	{ K_WRITEDATA, 256, 201, 0xffffffff },
	{ K_WRITEMSG, 257, 501, 0x80000000 },
	{ K_WRITEDATA, 4099, 1001, 0x12345678 },
	{ K_PLAIN, 7, 5201, 0 },
	{ K_WRITEMSG, 65536 + 3, 6001, 7 },
	{ K_WRITEDATA, 1024 * 1024 + 5, 80001, 0xcafef00d },
	{ K_WRITEMSG, 1024 * 1024, 1200001, 0x0badf00d },
	{ K_WRITEMSG, 0, 2400001, 42 },
	{ K_WRITEDATA, 8, 2400011, 0x7fffffff },
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static uint32_t case_seed(size_t i)
{
	return (uint32_t)(500 + i);
}

struct server_state {
	uint8_t *t, *rbuf;
	struct fid_mr *tmr, *rmr;
	struct fi_context rctx[N_RECV];
	uint8_t reply[FDT_REGION_WIRE];
};

static void server_pre(struct fdt_side *s, void *arg)
{
	struct server_state *st = arg;

	st->t = malloc(T_SIZE);
	st->rbuf = malloc(N_RECV * RBUF);
	FDT_ASSERT(st->t && st->rbuf, "malloc");
	memset(st->t, BACKGROUND, T_SIZE);
	memset(st->rbuf, 0x77, N_RECV * RBUF);
	st->tmr = fdt_reg(s, st->t, T_SIZE, FI_REMOTE_WRITE);
	st->rmr = fdt_reg(s, st->rbuf, N_RECV * RBUF, FI_RECV);
	fdt_region_pack(st->reply, st->t, T_SIZE, st->tmr);
	/* posted before the connection exists: no write can find none */
	for (int i = 0; i < N_RECV; i++)
		FDT_OK(fi_recv(s->ep, st->rbuf + i * RBUF, RBUF, fi_mr_desc(st->rmr),
			       0, &st->rctx[i]));
}

static void check_placed(const struct server_state *st, size_t i)
{
	const struct wcase *c = &cases[i];
	uint8_t *pat = malloc(c->len + 1);

	FDT_ASSERT(pat, "malloc");
	fdt_fill(pat, c->len, case_seed(i));
	FDT_ASSERT(!memcmp(st->t + c->roff, pat, c->len),
		   "case %zu: %zu bytes at %zu not as written", i, c->len, c->roff);
	FDT_ASSERT(st->t[c->roff - 1] == BACKGROUND && st->t[c->roff + c->len] == BACKGROUND,
		   "case %zu: bytes around the target range changed", i);
	free(pat);
}

static int server(struct fdt_side *s, void *arg)
{
	struct server_state st;
	struct fdt_cm_data reply = { st.reply, sizeof(st.reply) };
	int used = 0;
	size_t first_len = SIZE_MAX;

	(void)arg;
	memset(&st, 0, sizeof(st));
	FDT_ASSERT((s->info->mode | s->info->rx_attr->mode) & FI_RX_CQ_DATA,
		   "FI_RX_CQ_DATA not reported");
	FDT_ASSERT(s->info->domain_attr->cq_data_size >= 4, "cq_data_size %zu",
		   s->info->domain_attr->cq_data_size);
	fdt_server_accept(s, NULL, &reply, server_pre, &st);

	for (size_t i = 0; i < N_CASES; i++) {
		struct fi_cq_data_entry e;
		struct fi_cq_err_entry err;

		if (cases[i].kind == K_PLAIN)
			continue;	/* checked with the next data write */
		if (fdt_wait_cq_ms(s->rxcq, &e, &err, 30000) != 1)
			FDT_FAIL("case %zu: target error %d (%s)", i, err.err,
				 fi_strerror(err.err));
		FDT_ASSERT(e.flags == (FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA),
			   "case %zu: flags 0x%llx", i, (unsigned long long)e.flags);
		FDT_ASSERT(e.data == cases[i].data, "case %zu: data 0x%llx, expected 0x%llx",
			   i, (unsigned long long)e.data, (unsigned long long)cases[i].data);
		/* FI_RX_CQ_DATA: the entry belongs to the receive it consumed,
		 * and receives are consumed in the order they were posted. */
		FDT_ASSERT(e.op_context == &st.rctx[used], "case %zu: context %p, "
			   "expected receive %d (%p)", i, e.op_context, used,
			   (void *)&st.rctx[used]);
		if (first_len == SIZE_MAX && cases[i].len)
			first_len = e.len;
		used++;
		/* everything up to here, plain writes included, is in place */
		for (size_t j = 0; j <= i; j++)
			check_placed(&st, j);
	}
	fdt_cq_expect_quiet(s->rxcq, 100, "target rx CQ after the last data write");
	for (int i = 0; i < N_RECV * RBUF; i++)
		FDT_ASSERT(st.rbuf[i] == 0x77, "receive buffer byte %d written", i);

	/* the server ends the connection once it has seen everything */
	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_OK(fi_close(&st.tmr->fid));
	FDT_OK(fi_close(&st.rmr->fid));
	fdt_close_side(s);
	free(st.t);
	free(st.rbuf);
	printf("server: %d data writes consumed %d receives in order, data and "
	       "bytes right (entry len for a write with data: %zu)\n", used, used,
	       first_len);
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	uint8_t reply[FDT_REGION_WIRE];
	struct fdt_region t;
	uint8_t *src;
	struct fid_mr *mr;
	struct fi_context ctx;
	size_t max = 0;

	(void)arg;
	FDT_ASSERT(fdt_client_connect_reply(s, NULL, reply, sizeof(reply), NULL, NULL)
		   == sizeof(reply), "accept data");
	fdt_region_unpack(&t, reply);
	for (size_t i = 0; i < N_CASES; i++)
		if (cases[i].len > max)
			max = cases[i].len;
	src = malloc(max + 16);
	FDT_ASSERT(src, "malloc");
	mr = fdt_reg(s, src, max + 16, FI_WRITE);

	for (size_t i = 0; i < N_CASES; i++) {
		const struct wcase *c = &cases[i];
		uint8_t *buf = src + (i % 8);	/* unaligned local side too */
		struct fi_cq_data_entry e;
		struct fi_cq_err_entry err;

		FDT_ASSERT(c->roff + c->len < t.len, "case table overflows T");
		fdt_fill(buf, c->len, case_seed(i));
		if (c->kind == K_WRITEDATA) {
			FDT_OK(fi_writedata(s->ep, buf, c->len, fi_mr_desc(mr), c->data, 0,
					    t.addr + c->roff, t.key, &ctx));
		} else if (c->kind == K_PLAIN) {
			FDT_OK(fi_write(s->ep, buf, c->len, fi_mr_desc(mr), 0,
					t.addr + c->roff, t.key, &ctx));
		} else {
			struct iovec iov = { buf, c->len };
			void *desc = fi_mr_desc(mr);
			struct fi_rma_iov rma = { t.addr + c->roff, c->len, t.key };
			struct fi_msg_rma msg = {
				.msg_iov = &iov, .desc = &desc, .iov_count = 1,
				.rma_iov = &rma, .rma_iov_count = 1,
				.context = &ctx, .data = c->data,
			};

			FDT_OK(fi_writemsg(s->ep, &msg, FI_REMOTE_CQ_DATA | FI_COMPLETION));
		}
		if (fdt_wait_cq_ms(s->txcq, &e, &err, 30000) != 1)
			FDT_FAIL("case %zu: initiator error %d (%s)", i, err.err,
				 fi_strerror(err.err));
		FDT_ASSERT(e.op_context == &ctx, "case %zu: context", i);
		FDT_ASSERT(e.flags == (FI_RMA | FI_WRITE), "case %zu: initiator flags 0x%llx",
			   i, (unsigned long long)e.flags);
		/* the writes of a remote-data entry carry no data to the initiator */
		FDT_ASSERT(!(e.flags & FI_REMOTE_CQ_DATA), "case %zu", i);
	}
	/* No receive was posted here: nothing may complete on this side. */
	fdt_cq_expect_quiet(s->rxcq, 50, "initiator rx CQ");
	fdt_wait_shutdown(s);
	FDT_OK(fi_close(&mr->fid));
	fdt_close_side(s);
	free(src);
	printf("client: %zu writes (with and without data) ok\n", N_CASES);
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
