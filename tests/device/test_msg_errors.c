/* Bad input and wrong states get clear errors, never a crash:
 * before enable, before connect, bad buffers/lengths/iov counts, inject over
 * inject_size, missing descriptors, binding rules, closing in use. Then
 * a receive smaller than the message completes with FI_ETRUNC. */
#include "fdt.h"

static uint8_t small[16], big[8192];
static struct fid_mr *small_mr, *big_mr;

static void pre_post_small(struct fdt_side *s, void *arg)
{
	(void)arg;
	small_mr = fdt_reg(s, small, sizeof(small), FI_RECV);
	FDT_OK(fi_recv(s->ep, small, sizeof(small), fi_mr_desc(small_mr), 0, small));
}

static int server(struct fdt_side *s, void *arg)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	char buf[128];

	(void)arg;
	fdt_server_accept(s, NULL, NULL, pre_post_small, NULL);
	/* the client sends 64 bytes into our 16-byte buffer */
	FDT_ASSERT(fdt_wait_cq(s->rxcq, &e, &err) == -FI_EAVAIL, "expected an error completion");
	FDT_ASSERT(err.err == FI_ETRUNC, "err %d (%s) prov_errno %d", err.err, fi_strerror(err.err), err.prov_errno);
	FDT_ASSERT(err.op_context == small, "truncation context");
	FDT_ASSERT(err.flags & FI_RECV, "truncation flags");
	FDT_ASSERT(fi_cq_strerror(s->rxcq, err.prov_errno, err.err_data, buf, sizeof(buf)) == buf &&
		   buf[0], "cq strerror");
	FDT_EXPECT(fi_cq_readerr(s->rxcq, &err, 0), -FI_EAGAIN);
	FDT_OK(fi_close(&small_mr->fid));
	fdt_close_side(s);
	printf("server: truncation reported as FI_ETRUNC\n");
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_MSG, .size = 64 };
	struct fid_cq *cq2;
	struct fid_ep *ep;
	struct fid_mr *mr;
	struct iovec iov[16];
	void *desc[16];
	size_t inject = s->info->tx_attr->inject_size;
	uint8_t *inj = calloc(1, inject + 1);

	(void)arg;
	FDT_OK(fi_domain(s->fabric, s->info, &s->domain, NULL));
	/* objects and binding rules */
	FDT_EXPECT(fi_mr_reg(s->domain, big, sizeof(big), 1ULL << 60, 0, 0, 0, &mr, NULL), -FI_EINVAL);
	FDT_EXPECT(fi_mr_reg(s->domain, big, sizeof(big), FI_SEND, 0, 0, 1ULL << 40, &mr, NULL), -FI_EBADFLAGS);
	ca.format = (enum fi_cq_format)99;
	FDT_EXPECT(fi_cq_open(s->domain, &ca, &cq2, NULL), -FI_ENOSYS);
	ca.format = FI_CQ_FORMAT_MSG;
	FDT_OK(fi_cq_open(s->domain, &ca, &cq2, NULL));
	FDT_OK(fi_endpoint(s->domain, s->info, &ep, NULL));
	FDT_EXPECT(fi_send(ep, big, 8, NULL, 0, NULL), -FI_EOPBADSTATE);
	FDT_EXPECT(fi_recv(ep, big, 0, NULL, 0, NULL), -FI_EOPBADSTATE);
	FDT_EXPECT(fi_enable(ep), -FI_ENOEQ);
	FDT_OK(fi_ep_bind(ep, &s->eq->fid, 0));
	FDT_EXPECT(fi_enable(ep), -FI_ENOCQ);
	FDT_EXPECT(fi_ep_bind(ep, &cq2->fid, 0), -FI_EINVAL);
	FDT_EXPECT(fi_ep_bind(ep, &cq2->fid, FI_TRANSMIT | (1ULL << 50)), -FI_EBADFLAGS);
	FDT_OK(fi_ep_bind(ep, &cq2->fid, FI_TRANSMIT | FI_RECV));
	FDT_EXPECT(fi_ep_bind(ep, &cq2->fid, FI_TRANSMIT), -FI_EINVAL);
	FDT_EXPECT(fi_close(&cq2->fid), -FI_EBUSY);
	FDT_EXPECT(fi_close(&s->eq->fid), -FI_EBUSY);
	FDT_EXPECT(fi_close(&s->domain->fid), -FI_EBUSY);
	FDT_EXPECT(fi_close(&s->fabric->fid), -FI_EBUSY);
	FDT_OK(fi_enable(ep));
	FDT_EXPECT(fi_enable(ep), -FI_EOPBADSTATE);
	FDT_EXPECT(fi_ep_bind(ep, &cq2->fid, FI_RECV), -FI_EOPBADSTATE);
	/* enabled, not connected: sends refused, receives may be pre-posted */
	FDT_EXPECT(fi_send(ep, big, 8, NULL, 0, NULL), -FI_ENOTCONN);
	FDT_EXPECT(fi_inject(ep, big, 8, 0), -FI_ENOTCONN);
	FDT_EXPECT(fi_shutdown(ep, 0), -FI_ENOTCONN);
	{
		struct fi_cq_msg_entry m;

		FDT_EXPECT(fi_cq_read(cq2, &m, 1), -FI_EAGAIN);
		FDT_EXPECT(fi_cq_read(cq2, NULL, 1), -FI_EINVAL);
		FDT_EXPECT(fi_cq_sread(cq2, &m, 1, NULL, 0), -FI_ENOSYS); /* FI_WAIT_NONE */
	}
	FDT_OK(fi_close(&ep->fid));
	FDT_OK(fi_close(&cq2->fid));

	/* a connected endpoint */
	fdt_client_connect(s, NULL, NULL, NULL, NULL);
	big_mr = fdt_reg(s, big, sizeof(big), FI_SEND | FI_RECV);
	FDT_EXPECT(fi_send(s->ep, NULL, 8, NULL, 0, NULL), -FI_EINVAL);
	FDT_EXPECT(fi_send(s->ep, big, sizeof(big), NULL, 0, NULL), -FI_EINVAL); /* no desc */
	FDT_EXPECT(fi_send(s->ep, big, (size_t)1 << 32, fi_mr_desc(big_mr), 0, NULL), -FI_EINVAL);
	FDT_EXPECT(fi_inject(s->ep, inj, inject + 1, 0), -FI_EINVAL);
	FDT_EXPECT(fi_recv(s->ep, big, 64, NULL, 0, NULL), -FI_EINVAL);
	for (int i = 0; i < 16; i++) {
		iov[i].iov_base = big + i;
		iov[i].iov_len = 1;
		desc[i] = fi_mr_desc(big_mr);
	}
	FDT_EXPECT(fi_sendv(s->ep, iov, desc, s->info->tx_attr->iov_limit + 1, 0, NULL), -FI_EINVAL);
	FDT_EXPECT(fi_recvv(s->ep, iov, desc, s->info->rx_attr->iov_limit + 1, 0, NULL), -FI_EINVAL);
	{
		struct fi_msg msg = { .msg_iov = iov, .desc = desc, .iov_count = 1 };

		FDT_EXPECT(fi_recvmsg(s->ep, &msg, FI_PEEK), -FI_EBADFLAGS);
		FDT_EXPECT(fi_sendmsg(s->ep, NULL, 0), -FI_EINVAL);
	}
	/* too big for the peer's 16-byte receive */
	fdt_fill(big, 64, 7);
	FDT_OK(fi_send(s->ep, big, 64, fi_mr_desc(big_mr), 0, big));
	{
		struct fi_cq_data_entry e;
		struct fi_cq_err_entry err;

		/* RC reports the receiver's length error back as an error too */
		FDT_ASSERT(fdt_wait_cq(s->txcq, &e, &err) == -FI_EAVAIL, "sender error completion");
		FDT_ASSERT(err.op_context == big, "sender error context");
	}
	FDT_OK(fi_close(&big_mr->fid));
	free(inj);
	fdt_close_side(s);
	printf("client: every bad input refused with the documented error\n");
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc = fdt_run_pair(hints, server, client, NULL);

	fi_freeinfo(hints);
	return rc;
}
