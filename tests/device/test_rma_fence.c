/* FI_FENCE: a request that uses what an earlier RDMA read brought in.
 *
 * The client reads the server's 64 KiB pattern into a local buffer that
 * holds filler, then at once posts a fenced request whose source is that
 * same buffer: a send (fi_sendmsg), an RMA write back to the server
 * (fi_writemsg) or an 8-byte atomic write (fi_atomicmsg). Without the
 * fence the device may gather the source before the read's response has
 * landed and ship the filler; with it (IBV_SEND_FENCE) the request waits
 * for the read. The server checks every byte it received or that was
 * written into its memory. The info must also report FI_FENCE. */
#include "fdt.h"

#include <rdma/fi_atomic.h>

#define LEN (64 * 1024)
#define ROUNDS 8
#define SEED 4242
#define FILLER 0xEE

enum { FORM_SEND, FORM_WRITE, FORM_ATOMIC, N_FORMS };
static const char *const form_name[N_FORMS] = { "fi_sendmsg", "fi_writemsg", "fi_atomicmsg" };

struct server_state {
	uint8_t *src, *dst, *rbuf;	/* read source, write target, receives */
	struct fid_mr *src_mr, *dst_mr, *rmr;
	struct fi_context rctx[ROUNDS + 1];
	uint8_t reply[2 * FDT_REGION_WIRE];
};

static void server_pre(struct fdt_side *s, void *arg)
{
	struct server_state *st = arg;

	st->src = malloc(LEN);
	st->dst = calloc(1, LEN);
	st->rbuf = malloc((size_t)(ROUNDS + 1) * LEN);
	FDT_ASSERT(st->src && st->dst && st->rbuf, "malloc");
	fdt_fill(st->src, LEN, SEED);
	st->src_mr = fdt_reg(s, st->src, LEN, FI_REMOTE_READ);
	st->dst_mr = fdt_reg(s, st->dst, LEN, FI_REMOTE_READ | FI_REMOTE_WRITE);
	st->rmr = fdt_reg(s, st->rbuf, (size_t)(ROUNDS + 1) * LEN, FI_RECV);
	fdt_region_pack(st->reply, st->src, LEN, st->src_mr);
	fdt_region_pack(st->reply + FDT_REGION_WIRE, st->dst, LEN, st->dst_mr);
	for (int i = 0; i <= ROUNDS; i++)
		FDT_OK(fi_recv(s->ep, st->rbuf + (size_t)i * LEN, LEN, fi_mr_desc(st->rmr), 0,
			       &st->rctx[i]));
}

static int server(struct fdt_side *s, void *arg)
{
	struct server_state st;
	struct fdt_cm_data reply = { st.reply, sizeof(st.reply) };
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;

	(void)arg;
	memset(&st, 0, sizeof(st));
	fdt_server_accept(s, NULL, &reply, server_pre, &st);
	FDT_ASSERT((s->info->caps & FI_FENCE) && (s->info->tx_attr->caps & FI_FENCE),
		   "FI_FENCE not reported (caps 0x%llx)", (unsigned long long)s->info->caps);
	/* The fenced sends; the last receive is the client's "writes done". */
	for (int i = 0; i <= ROUNDS; i++) {
		if (fdt_wait_cq_ms(s->rxcq, &e, &err, 30000) != 1)
			FDT_FAIL("receive %d: error %d (%s)", i, err.err, fi_strerror(err.err));
		FDT_ASSERT(e.op_context == &st.rctx[i], "receive %d out of order", i);
		if (i == ROUNDS)
			break;
		FDT_ASSERT(e.len == LEN, "receive %d: %zu bytes", i, e.len);
		FDT_ASSERT(fdt_check(st.rbuf + (size_t)i * LEN, LEN, SEED),
			   "fenced send %d carried bytes other than the read's (first byte "
			   "0x%02x)", i, st.rbuf[(size_t)i * LEN]);
	}
	/* The fenced writes and atomics put the pattern into dst. */
	FDT_ASSERT(fdt_check(st.dst, LEN, SEED), "fenced RMA writes / atomics: wrong bytes "
		   "in the target (first byte 0x%02x)", st.dst[0]);
	fdt_wait_shutdown(s);
	FDT_OK(fi_close(&st.src_mr->fid));
	FDT_OK(fi_close(&st.dst_mr->fid));
	FDT_OK(fi_close(&st.rmr->fid));
	fdt_close_side(s);
	free(st.src);
	free(st.dst);
	free(st.rbuf);
	printf("server: %d fenced sends carried the read's %d bytes; fenced writes and "
	       "atomics placed them\n", ROUNDS, LEN);
	return 0;
}

/* Read src into local, then the fenced request from local; wait for both. */
static void round_trip(struct fdt_side *s, int form, uint8_t *local, void *desc,
		       const struct fdt_region *src, const struct fdt_region *dst,
		       size_t off)
{
	struct fi_context rctx, fctx;
	struct iovec iov = { local, LEN };
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	ssize_t rc = 0;

	memset(local, FILLER, LEN);
	FDT_OK(fi_read(s->ep, local, LEN, desc, 0, src->addr, src->key, &rctx));
	switch (form) {
	case FORM_SEND: {
		struct fi_msg m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
				    .context = &fctx };

		rc = fi_sendmsg(s->ep, &m, FI_FENCE);
		break;
	}
	case FORM_WRITE: {
		struct fi_rma_iov rma = { dst->addr, LEN, dst->key };
		struct fi_msg_rma m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
					.rma_iov = &rma, .rma_iov_count = 1, .context = &fctx };

		rc = fi_writemsg(s->ep, &m, FI_FENCE);
		break;
	}
	default: {
		/* 8 bytes of the read's data, at their own offset */
		struct fi_ioc ioc = { local + off, 1 };
		struct fi_rma_ioc rioc = { dst->addr + off, 1, dst->key };
		struct fi_msg_atomic m = { .msg_iov = &ioc, .desc = &desc, .iov_count = 1,
					   .rma_iov = &rioc, .rma_iov_count = 1,
					   .datatype = FI_UINT64, .op = FI_ATOMIC_WRITE,
					   .context = &fctx };

		rc = fi_atomicmsg(s->ep, &m, FI_FENCE);
		break;
	}
	}
	FDT_OK(rc);
	for (int k = 0; k < 2; k++) {
		if (fdt_wait_cq_ms(s->txcq, &e, &err, 30000) != 1)
			FDT_FAIL("%s round: completion %d error %d (%s)", form_name[form], k,
				 err.err, fi_strerror(err.err));
		FDT_ASSERT(e.op_context == (k ? &fctx : &rctx), "%s: completion order",
			   form_name[form]);
	}
}

static int client(struct fdt_side *s, void *arg)
{
	uint8_t reply[2 * FDT_REGION_WIRE];
	struct fdt_region src, dst;
	uint8_t *local;
	struct fid_mr *mr;
	struct fi_context dctx;
	struct fi_cq_data_entry e;

	(void)arg;
	FDT_ASSERT(fdt_client_connect_reply(s, NULL, reply, sizeof(reply), NULL, NULL) ==
		   sizeof(reply), "accept data");
	fdt_region_unpack(&src, reply);
	fdt_region_unpack(&dst, reply + FDT_REGION_WIRE);
	local = malloc(LEN);
	FDT_ASSERT(local, "malloc");
	mr = fdt_reg(s, local, LEN, FI_READ | FI_WRITE | FI_SEND);
	for (int i = 0; i < ROUNDS; i++)
		round_trip(s, FORM_SEND, local, fi_mr_desc(mr), &src, &dst, 0);
	/* The write covers the target once; the atomics then rewrite their
	 * 8 bytes with the same values, each after its own fenced read. */
	round_trip(s, FORM_WRITE, local, fi_mr_desc(mr), &src, &dst, 0);
	for (size_t off = 0; off < LEN; off += LEN / ROUNDS)
		round_trip(s, FORM_ATOMIC, local, fi_mr_desc(mr), &src, &dst, off);
	FDT_OK(fi_send(s->ep, NULL, 0, NULL, 0, &dctx));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1 && e.op_context == &dctx, "done send");
	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_OK(fi_close(&mr->fid));
	fdt_close_side(s);
	free(local);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	hints->caps |= FI_RMA | FI_ATOMIC | FI_FENCE;
	rc = fdt_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	return rc;
}
