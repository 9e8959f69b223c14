/* A completion read that finds an error behind a success keeps the error
 * (and whatever was polled after it) in the CQ's backlog; the next reads
 * must take them from there, in order, before polling the device again.
 * Since issue 23 the direct build's fi_cq_read decides "CONTEXT CQ with
 * nothing held back" from one word that the backlog's changes keep up to
 * date (fdv_cq_set_backlog): if that word missed a change, the read after
 * the success would poll the (empty) device CQ and answer -FI_EAGAIN,
 * losing the error. The server's receive CQ is a CONTEXT CQ: a 64-byte
 * receive (succeeds) and a 16-byte one (truncated by the client's second
 * 64-byte send), both completed before the first read. */
#include "fdt.h"

static uint8_t rbuf[64], small[16], sbuf[64];
static struct fid_mr *rmr, *smr;

static void pre_post(struct fdt_side *s, void *arg)
{
	(void)arg;
	rmr = fdt_reg(s, rbuf, sizeof(rbuf), FI_RECV);
	smr = fdt_reg(s, small, sizeof(small), FI_RECV);
	FDT_OK(fi_recv(s->ep, rbuf, sizeof(rbuf), fi_mr_desc(rmr), 0, rbuf));
	FDT_OK(fi_recv(s->ep, small, sizeof(small), fi_mr_desc(smr), 0, small));
}

static int server(struct fdt_side *s, void *arg)
{
	struct fi_cq_entry e[16];
	struct fi_cq_err_entry err;
	struct fi_eq_cm_entry cm;

	(void)arg;
	s->cq_format = FI_CQ_FORMAT_CONTEXT;
	fdt_server_accept(s, NULL, NULL, pre_post, NULL);
	/* The client disconnects once its second send has completed (with
	 * the error the truncation sends back): by then both receives have
	 * completed here, so one read polls both. */
	fdt_wait_event(s, FI_SHUTDOWN, &cm, sizeof(cm));
	FDT_EXPECT(fi_cq_read(s->rxcq, e, 16), 1);
	FDT_ASSERT(e[0].op_context == rbuf, "first completion: the 64-byte receive");
	FDT_ASSERT(fdt_check(rbuf, 64, 11), "payload of the first send");
	/* the error waits in the backlog */
	FDT_EXPECT(fi_cq_read(s->rxcq, e, 16), -FI_EAVAIL);
	FDT_EXPECT(fi_cq_read(s->rxcq, e, 1), -FI_EAVAIL);
	FDT_EXPECT(fi_cq_readerr(s->rxcq, &err, 0), 1);
	FDT_ASSERT(err.op_context == small && err.err == FI_ETRUNC,
		   "backlog error: context %p err %d", err.op_context, err.err);
	/* drained: reads are plain again */
	FDT_EXPECT(fi_cq_read(s->rxcq, e, 16), -FI_EAGAIN);
	FDT_EXPECT(fi_cq_readerr(s->rxcq, &err, 0), -FI_EAGAIN);
	FDT_OK(fi_close(&rmr->fid));
	FDT_OK(fi_close(&smr->fid));
	fdt_close_side(s);
	printf("server: the error behind a success came from the backlog\n");
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	struct fid_mr *mr;

	(void)arg;
	fdt_client_connect(s, NULL, NULL, NULL, NULL);
	mr = fdt_reg(s, sbuf, sizeof(sbuf), FI_SEND);
	fdt_fill(sbuf, 64, 11);
	FDT_OK(fi_send(s->ep, sbuf, 64, fi_mr_desc(mr), 0, sbuf));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, &err) == 1, "first send");
	FDT_OK(fi_send(s->ep, sbuf, 64, fi_mr_desc(mr), 0, sbuf + 1));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, &err) == -FI_EAVAIL, "second send: the peer's error");
	FDT_OK(fi_close(&mr->fid));
	fdt_close_side(s);
	printf("client: sent one message that fits and one that does not\n");
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc = fdt_run_pair(hints, server, client, NULL);

	fi_freeinfo(hints);
	return rc;
}
