/* FI_MORE: requests posted with it wait on the endpoint and go to the
 * device, in order, with the next call that does not carry it.
 *
 *   phase 1  ten sends, an FI_INJECT send (its buffer scribbled over at
 *            return), a 3000-byte send with CQ data, an RMA write with CQ
 *            data and a non-fetching atomic, all with FI_MORE: nothing
 *            completes for 300 ms; then one plain fi_send. The server
 *            receives all of them in order with the right bytes, data and
 *            flags; the client's completions come in posting order with
 *            the right contexts and flags; the atomic landed.
 *   phase 2  100 sends with FI_MORE (more than the provider holds at once)
 *            and one without: all 101 arrive in order, all complete.
 *   phase 3  flags no verbs request can honour get -FI_EBADFLAGS on the
 *            msg forms (FI_TRIGGER, FI_DELIVERY_COMPLETE, FI_MULTI_RECV on
 *            a receive) and post nothing.
 *   phase 4  three FI_MORE sends, then shutdown, then a plain send: it
 *            fails (-FI_ENOTCONN) and the three held ones, accepted with
 *            0, complete in order with FI_ECANCELED instead of vanishing;
 *            the peer never sees them (its remaining receives only
 *            flush). An FI_MORE send after that fails at once too. */
#define _POSIX_C_SOURCE 200112L	/* nanosleep */
#include "fdt.h"

#include <time.h>

#include <rdma/fi_atomic.h>

#define N_RECV 128
#define RBUF 4096
#define T_SIZE 4096
#define P1_SENDS 10
#define P2_SENDS 100
#define BIG 3000
#define CQDATA 0xabc
#define WDATA 0x77
#define W_OFF 64
#define W_LEN 100
#define A_OFF 512

static size_t msg_len(int k)
{
	return 16 + (size_t)(k % 7) * 5;
}

struct server_state {
	uint8_t *t, *rbuf;
	struct fid_mr *tmr, *rmr;
	struct fi_context rctx[N_RECV];
	int next;
	uint8_t reply[FDT_REGION_WIRE];
};

static void server_pre(struct fdt_side *s, void *arg)
{
	struct server_state *st = arg;

	st->t = calloc(1, T_SIZE);
	st->rbuf = malloc((size_t)N_RECV * RBUF);
	FDT_ASSERT(st->t && st->rbuf, "malloc");
	st->tmr = fdt_reg(s, st->t, T_SIZE, FI_REMOTE_READ | FI_REMOTE_WRITE);
	st->rmr = fdt_reg(s, st->rbuf, (size_t)N_RECV * RBUF, FI_RECV);
	fdt_region_pack(st->reply, st->t, T_SIZE, st->tmr);
	for (int i = 0; i < N_RECV; i++)
		FDT_OK(fi_recv(s->ep, st->rbuf + (size_t)i * RBUF, RBUF, fi_mr_desc(st->rmr),
			       0, &st->rctx[i]));
}

/* The next receive completion, which must be receive number st->next. */
static void expect_recv(struct fdt_side *s, struct server_state *st, size_t len,
			uint32_t seed, uint64_t flags, uint64_t data)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	int i = st->next++;

	if (fdt_wait_cq_ms(s->rxcq, &e, &err, 30000) != 1)
		FDT_FAIL("receive %d: error %d (%s)", i, err.err, fi_strerror(err.err));
	FDT_ASSERT(e.op_context == &st->rctx[i], "receive %d: context %p out of order",
		   i, e.op_context);
	FDT_ASSERT(e.flags == flags, "receive %d: flags 0x%llx, expected 0x%llx", i,
		   (unsigned long long)e.flags, (unsigned long long)flags);
	/* (A write's length at the target is the driver's choice.) */
	FDT_ASSERT(!(flags & FI_MSG) || e.len == len, "receive %d: %zu bytes, expected %zu",
		   i, e.len, len);
	if (flags & FI_REMOTE_CQ_DATA)
		FDT_ASSERT(e.data == data, "receive %d: data 0x%llx", i,
			   (unsigned long long)e.data);
	if (flags & FI_MSG)
		FDT_ASSERT(fdt_check(st->rbuf + (size_t)i * RBUF, len, seed),
			   "receive %d: wrong bytes", i);
}

static int server(struct fdt_side *s, void *arg)
{
	struct server_state st;
	struct fdt_cm_data reply = { st.reply, sizeof(st.reply) };
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	int flushed = 0;
	ssize_t rc;

	(void)arg;
	memset(&st, 0, sizeof(st));
	fdt_server_accept(s, NULL, &reply, server_pre, &st);

	/* phase 1 */
	for (int k = 0; k < P1_SENDS; k++)
		expect_recv(s, &st, msg_len(k), (uint32_t)k, FI_MSG | FI_RECV, 0);
	expect_recv(s, &st, 24, 1000, FI_MSG | FI_RECV, 0);		/* the inject */
	expect_recv(s, &st, BIG, 1001, FI_MSG | FI_RECV | FI_REMOTE_CQ_DATA, CQDATA);
	expect_recv(s, &st, 0, 0, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA, WDATA);
	FDT_ASSERT(fdt_check(st.t + W_OFF, W_LEN, 1002), "RMA write bytes");
	expect_recv(s, &st, msg_len(3), 1003, FI_MSG | FI_RECV, 0);	/* the plain send */
	/* RC executes in order: the atomic before the plain send is done. */
	FDT_ASSERT(*(volatile uint64_t *)(st.t + A_OFF) == 5, "atomic result %llu",
		   (unsigned long long)*(uint64_t *)(st.t + A_OFF));

	/* phase 2 */
	for (int k = 0; k <= P2_SENDS; k++)
		expect_recv(s, &st, msg_len(k), (uint32_t)(2000 + k), FI_MSG | FI_RECV, 0);

	/* phases 3 and 4: nothing more arrives; the remaining receives
	 * flush when the client goes. */
	fdt_wait_shutdown(s);
	for (int quiet = 0; quiet < 500;) {
		rc = fi_cq_read(s->rxcq, &e, 1);
		if (rc == -FI_EAGAIN) {
			struct timespec ts = { 0, 1000000 };

			nanosleep(&ts, NULL);
			quiet++;
			continue;
		}
		FDT_ASSERT(rc == -FI_EAVAIL, "a receive completed after phase 2 (context %p)",
			   e.op_context);
		memset(&err, 0, sizeof(err));
		FDT_ASSERT(fi_cq_readerr(s->rxcq, &err, 0) == 1, "fi_cq_readerr");
		FDT_ASSERT(err.err == FI_ECANCELED, "receive error %d (%s)", err.err,
			   fi_strerror(err.err));
		flushed++;
		quiet = 0;
	}
	FDT_ASSERT(flushed <= N_RECV - st.next, "%d flushed receives", flushed);
	FDT_OK(fi_close(&st.tmr->fid));
	FDT_OK(fi_close(&st.rmr->fid));
	fdt_close_side(s);
	free(st.t);
	free(st.rbuf);
	printf("server: %d receives in posting order with the right bytes; %d flushed "
	       "at the end, none from held requests\n", st.next, flushed);
	return 0;
}

static ssize_t sendmsg_one(struct fid_ep *ep, void *buf, size_t len, void *desc,
			   void *ctx, uint64_t data, uint64_t flags)
{
	struct iovec iov = { buf, len };
	struct fi_msg m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
			    .context = ctx, .data = data };

	return fi_sendmsg(ep, &m, flags);
}

/* n completions, which must name ctx[0..n) in order with these flags. */
static void expect_tx(struct fdt_side *s, struct fi_context *const *ctx,
		      const uint64_t *flags, int n)
{
	for (int i = 0; i < n; i++) {
		struct fi_cq_data_entry e;
		struct fi_cq_err_entry err;

		if (fdt_wait_cq_ms(s->txcq, &e, &err, 30000) != 1)
			FDT_FAIL("send completion %d: error %d (%s)", i, err.err,
				 fi_strerror(err.err));
		FDT_ASSERT(e.op_context == ctx[i], "completion %d: context %p, expected %p",
			   i, e.op_context, (void *)ctx[i]);
		FDT_ASSERT(e.flags == flags[i], "completion %d: flags 0x%llx, expected 0x%llx",
			   i, (unsigned long long)e.flags, (unsigned long long)flags[i]);
	}
}

static int client(struct fdt_side *s, void *arg)
{
	uint8_t reply[FDT_REGION_WIRE];
	struct fdt_region r;
	uint8_t *buf;
	struct fid_mr *mr;
	struct fi_context ctx[P2_SENDS + 1];
	struct fi_context *want[P2_SENDS + 1];
	uint64_t wflags[P2_SENDS + 1];
	uint8_t inject_buf[24];
	uint64_t add = 5;
	int n = 0;

	(void)arg;
	FDT_ASSERT(fdt_client_connect_reply(s, NULL, reply, sizeof(reply), NULL, NULL) ==
		   sizeof(reply), "accept data");
	fdt_region_unpack(&r, reply);
	buf = malloc((size_t)(P2_SENDS + 1) * RBUF);
	FDT_ASSERT(buf, "malloc");
	mr = fdt_reg(s, buf, (size_t)(P2_SENDS + 1) * RBUF, FI_SEND | FI_WRITE);

	/* ---- phase 1 ---- */
	for (int k = 0; k < P1_SENDS; k++) {
		fdt_fill(buf + (size_t)k * RBUF, msg_len(k), (uint32_t)k);
		FDT_OK(sendmsg_one(s->ep, buf + (size_t)k * RBUF, msg_len(k), fi_mr_desc(mr),
				   &ctx[n], 0, FI_MORE));
		want[n] = &ctx[n];
		wflags[n++] = FI_MSG | FI_SEND;
	}
	fdt_fill(inject_buf, sizeof(inject_buf), 1000);
	FDT_OK(sendmsg_one(s->ep, inject_buf, sizeof(inject_buf), NULL, &ctx[n], 0,
			   FI_INJECT | FI_MORE));
	memset(inject_buf, 0xEE, sizeof(inject_buf));	/* reusable at return */
	want[n] = &ctx[n];
	wflags[n++] = FI_MSG | FI_SEND;
	fdt_fill(buf + 10 * RBUF, BIG, 1001);
	FDT_OK(sendmsg_one(s->ep, buf + 10 * RBUF, BIG, fi_mr_desc(mr), &ctx[n], CQDATA,
			   FI_MORE | FI_REMOTE_CQ_DATA));
	want[n] = &ctx[n];
	wflags[n++] = FI_MSG | FI_SEND;
	{
		void *desc = fi_mr_desc(mr);
		struct iovec iov = { buf + 11 * RBUF, W_LEN };
		struct fi_rma_iov rma = { r.addr + W_OFF, W_LEN, r.key };
		struct fi_msg_rma m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
					.rma_iov = &rma, .rma_iov_count = 1,
					.context = &ctx[n], .data = WDATA };

		fdt_fill(buf + 11 * RBUF, W_LEN, 1002);
		FDT_OK(fi_writemsg(s->ep, &m, FI_MORE | FI_REMOTE_CQ_DATA));
		want[n] = &ctx[n];
		wflags[n++] = FI_RMA | FI_WRITE;
	}
	{
		struct fi_ioc ioc = { &add, 1 };
		struct fi_rma_ioc rioc = { r.addr + A_OFF, 1, r.key };
		struct fi_msg_atomic m = { .msg_iov = &ioc, .iov_count = 1,
					   .rma_iov = &rioc, .rma_iov_count = 1,
					   .datatype = FI_UINT64, .op = FI_SUM,
					   .context = &ctx[n] };

		FDT_OK(fi_atomicmsg(s->ep, &m, FI_MORE));
		want[n] = &ctx[n];
		wflags[n++] = FI_ATOMIC | FI_WRITE;
	}
	fdt_cq_expect_quiet(s->txcq, 300, "requests held by FI_MORE");
	fdt_fill(buf + 12 * RBUF, msg_len(3), 1003);
	FDT_OK(fi_send(s->ep, buf + 12 * RBUF, msg_len(3), fi_mr_desc(mr), 0, &ctx[n]));
	want[n] = &ctx[n];
	wflags[n++] = FI_MSG | FI_SEND;
	expect_tx(s, want, wflags, n);

	/* ---- phase 2 ---- */
	for (int k = 0; k <= P2_SENDS; k++) {
		uint8_t *b = buf + (size_t)k * RBUF;

		fdt_fill(b, msg_len(k), (uint32_t)(2000 + k));
		FDT_OK(sendmsg_one(s->ep, b, msg_len(k), fi_mr_desc(mr), &ctx[k], 0,
				   k < P2_SENDS ? FI_MORE : 0));
		want[k] = &ctx[k];
		wflags[k] = FI_MSG | FI_SEND;
	}
	expect_tx(s, want, wflags, P2_SENDS + 1);

	/* ---- phase 3 ---- */
	FDT_EXPECT(sendmsg_one(s->ep, buf, 8, fi_mr_desc(mr), &ctx[0], 0, FI_TRIGGER),
		   -FI_EBADFLAGS);
	FDT_EXPECT(sendmsg_one(s->ep, buf, 8, fi_mr_desc(mr), &ctx[0], 0,
			       FI_MORE | FI_DELIVERY_COMPLETE), -FI_EBADFLAGS);
	{
		void *desc = fi_mr_desc(mr);
		struct iovec iov = { buf, 8 };
		struct fi_rma_iov rma = { r.addr, 8, r.key };
		struct fi_msg_rma m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
					.rma_iov = &rma, .rma_iov_count = 1, .context = &ctx[0] };
		struct fi_msg rm = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
				     .context = &ctx[0] };

		FDT_EXPECT(fi_writemsg(s->ep, &m, FI_TRIGGER), -FI_EBADFLAGS);
		FDT_EXPECT(fi_readmsg(s->ep, &m, FI_COMMIT_COMPLETE), -FI_EBADFLAGS);
		FDT_EXPECT(fi_recvmsg(s->ep, &rm, FI_MULTI_RECV), -FI_EBADFLAGS);
	}
	fdt_cq_expect_quiet(s->txcq, 100, "refused requests");

	/* ---- phase 4 ---- */
	for (int k = 0; k < 3; k++)
		FDT_OK(sendmsg_one(s->ep, buf, 8, fi_mr_desc(mr), &ctx[k], 0, FI_MORE));
	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_EXPECT(fi_send(s->ep, buf, 8, fi_mr_desc(mr), 0, &ctx[3]), -FI_ENOTCONN);
	for (int k = 0; k < 3; k++) {
		struct fi_cq_data_entry e;
		struct fi_cq_err_entry err;

		FDT_ASSERT(fdt_wait_cq_ms(s->txcq, &e, &err, 10000) == -FI_EAVAIL,
			   "held send %d after shutdown: a success completion", k);
		FDT_ASSERT(err.err == FI_ECANCELED && err.op_context == &ctx[k],
			   "held send %d after shutdown: error %d context %p (want %p)",
			   k, err.err, err.op_context, (void *)&ctx[k]);
	}
	fdt_cq_expect_quiet(s->txcq, 200, "a completion for the refused send");
	/* nothing is held now and nothing can be */
	FDT_EXPECT(sendmsg_one(s->ep, buf, 8, fi_mr_desc(mr), &ctx[0], 0, FI_MORE),
		   -FI_ENOTCONN);
	FDT_OK(fi_close(&mr->fid));
	fdt_close_side(s);
	free(buf);
	printf("client: %d FI_MORE requests held and sent with the next call, "
	       "%d in a long chain; bad flags refused; held requests flushed as FI_ECANCELED after shutdown\n",
	       n - 1, P2_SENDS);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	hints->caps |= FI_ATOMIC | FI_RMA;
	hints->mode |= FI_RX_CQ_DATA;
	hints->rx_attr->mode |= FI_RX_CQ_DATA;
	rc = fdt_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	return rc;
}
