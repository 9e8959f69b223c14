/* Receives posted to a shared receive context once the connection is up,
 * the way fabtests' fi_shared_ctx -e msg --no-tx-shared-ctx does (issue 21:
 * its first fi_recv on the SRX was -FI_EINVAL on both sides). That test's
 * MSG path never allocates its message buffers (ft_alloc_msgs runs in its
 * RDM path only), so it posts fi_recv(srx, NULL, 1024, NULL, ...) and
 * sends zero-length messages; upstream 1.17 takes such a receive (a
 * receive with no memory: only an empty message fits it).
 *
 * Both sides open the SRX with the rx_attr fi_getinfo (client) or the
 * connection request (server) gave them, bind their endpoint to it with
 * fi_ep_bind(ep, &srx->fid, 0), connect, and only then post to the SRX:
 * fabtests' receive (no buffer, no descriptor, length 1024), then fi_recv,
 * fi_recvv of two pieces and fi_recvmsg of real buffers. The peer sends an
 * empty message (NULL buffer, no descriptor) and three of 300 bytes; each
 * completion must carry its receive's context and length (0 for the
 * first), every byte is checked. Last, 8 bytes sent into one more receive
 * with no memory complete it with an error. In this library a NULL buffer
 * with a descriptor, and a buffer without one, stay -FI_EINVAL. Client first,
 * then the server answers, so each side's receives are posted before its
 * messages come. */
#include "fdt.h"

#define MSG_LEN 300
#define NMSG 4
#define FT_LEN 1024	/* fabtests' receive length (FT_MAX_CTRL_MSG) */

struct side_state {
	struct fid_ep *srx;
	uint8_t rbuf[NMSG][MSG_LEN];
	uint8_t sbuf[NMSG][MSG_LEN];
	struct fid_mr *rmr, *smr;
	int ctx[NMSG + 1];	/* the last: a receive with no memory for a real message */
};

/* The receive side's objects: SRX from attr, endpoint bound to it. */
static void open_srx_ep(struct fdt_side *s, struct side_state *st, struct fi_info *info)
{
	struct fi_cq_attr ca = { .size = 64, .format = FI_CQ_FORMAT_DATA,
				 .wait_obj = FI_WAIT_UNSPEC };

	FDT_ASSERT(info->ep_attr->rx_ctx_cnt == FI_SHARED_CONTEXT, "rx_ctx_cnt %zu",
		   info->ep_attr->rx_ctx_cnt);
	FDT_OK(fi_domain(s->fabric, info, &s->domain, NULL));
	FDT_OK(fi_srx_context(s->domain, info->rx_attr, &st->srx, NULL));
	FDT_OK(fi_cq_open(s->domain, &ca, &s->txcq, NULL));
	FDT_OK(fi_cq_open(s->domain, &ca, &s->rxcq, NULL));
	FDT_OK(fi_endpoint(s->domain, info, &s->ep, NULL));
	FDT_OK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	FDT_OK(fi_ep_bind(s->ep, &s->txcq->fid, FI_TRANSMIT));
	FDT_OK(fi_ep_bind(s->ep, &s->rxcq->fid, FI_RECV));
	FDT_OK(fi_ep_bind(s->ep, &st->srx->fid, 0));
	FDT_OK(fi_enable(s->ep));
	st->rmr = fdt_reg(s, st->rbuf, sizeof(st->rbuf), FI_RECV);
	st->smr = fdt_reg(s, st->sbuf, sizeof(st->sbuf), FI_SEND);
}

/* fabtests' receive, then the three forms of receive of real buffers, on
 * the SRX of a connected endpoint. */
static void post_receives(struct side_state *st)
{
	void *desc[2] = { fi_mr_desc(st->rmr), fi_mr_desc(st->rmr) };
	struct iovec two[2] = { { st->rbuf[2], 100 }, { st->rbuf[2] + 100, MSG_LEN - 100 } };
	struct iovec one = { st->rbuf[3], MSG_LEN };
	struct fi_msg msg = { .msg_iov = &one, .desc = desc, .iov_count = 1,
			      .addr = FI_ADDR_UNSPEC, .context = &st->ctx[3] };

	memset(st->rbuf, 0, sizeof(st->rbuf));
#ifndef FDT_UPSTREAM
	/* Half a buffer is still a mistake: nothing is posted. */
	FDT_EXPECT(fi_recv(st->srx, NULL, MSG_LEN, desc[0], FI_ADDR_UNSPEC, &st->ctx[0]),
		   -FI_EINVAL);
	FDT_EXPECT(fi_recv(st->srx, st->rbuf[0], MSG_LEN, NULL, FI_ADDR_UNSPEC, &st->ctx[0]),
		   -FI_EINVAL);
#endif
	FDT_OK(fi_recv(st->srx, NULL, FT_LEN, NULL, FI_ADDR_UNSPEC, &st->ctx[0]));
	FDT_OK(fi_recv(st->srx, st->rbuf[1], MSG_LEN, desc[0], FI_ADDR_UNSPEC, &st->ctx[1]));
	FDT_OK(fi_recvv(st->srx, two, desc, 2, FI_ADDR_UNSPEC, &st->ctx[2]));
	FDT_OK(fi_recvmsg(st->srx, &msg, 0));
}

static void send_all(struct fdt_side *s, struct side_state *st, uint32_t seed)
{
	struct fi_cq_data_entry e;

	/* fabtests' message: no buffer at all */
	FDT_OK(fi_send(s->ep, NULL, 0, NULL, 0, st->sbuf[0]));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1 && e.op_context == st->sbuf[0],
		   "empty send");
	for (int i = 1; i < NMSG; i++) {
		fdt_fill(st->sbuf[i], MSG_LEN, seed + (uint32_t)i);
		FDT_OK(fi_send(s->ep, st->sbuf[i], MSG_LEN, fi_mr_desc(st->smr), 0, st->sbuf[i]));
		FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1 && e.op_context == st->sbuf[i],
			   "send %d", i);
	}
}

/* Messages arrive in order on one connection, receives are taken from
 * the pool in posting order: message i lands in receive i. */
static void reap_all(struct fdt_side *s, struct side_state *st, uint32_t seed)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;

	for (int i = 0; i < NMSG; i++) {
		FDT_ASSERT(fdt_wait_cq(s->rxcq, &e, &err) == 1, "receive %d: %s", i,
			   fi_strerror(err.err));
		FDT_ASSERT(e.op_context == &st->ctx[i], "receive %d: context %p, posted %p",
			   i, e.op_context, (void *)&st->ctx[i]);
		FDT_ASSERT(e.len == (i ? MSG_LEN : 0) &&
			   (e.flags & (FI_RECV | FI_MSG)) == (FI_RECV | FI_MSG),
			   "receive %d: len %zu flags %#llx", i, e.len,
			   (unsigned long long)e.flags);
		FDT_ASSERT(!i || fdt_check(st->rbuf[i], MSG_LEN, seed + (uint32_t)i),
			   "receive %d: bytes differ", i);
	}
}

static void close_state(struct fdt_side *s, struct side_state *st)
{
	FDT_OK(fi_close(&s->ep->fid));
	s->ep = NULL;
	FDT_OK(fi_close(&st->srx->fid));
	fi_close(&st->rmr->fid);
	fi_close(&st->smr->fid);
	fdt_close_side(s);
}

static int server(struct fdt_side *s, void *arg)
{
	static struct side_state st;
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_eq_cm_entry *entry = (struct fi_eq_cm_entry *)(void *)buf;
	char go = 0;

	(void)arg;
	fdt_wait_event(s, FI_CONNREQ, buf, sizeof(buf));
	open_srx_ep(s, &st, entry->info);
	fi_freeinfo(entry->info);
	FDT_OK(fi_accept(s->ep, NULL, 0));
	fdt_wait_event(s, FI_CONNECTED, buf, sizeof(buf));
	post_receives(&st);
	/* tell the client its messages have somewhere to go */
	FDT_OK(fi_inject(s->ep, &go, 1, 0));
	reap_all(s, &st, 0x2100);
	/* A message with data for a receive with no memory: an error
	 * completion of that receive (which also ends the connection), never
	 * bytes written anywhere. */
	FDT_OK(fi_recv(st.srx, NULL, FT_LEN, NULL, FI_ADDR_UNSPEC, &st.ctx[NMSG]));
	send_all(s, &st, 0x2200);
	{
		struct fi_cq_data_entry e;
		struct fi_cq_err_entry err = { 0 };
		int rc = fdt_wait_cq(s->rxcq, &e, &err);

		FDT_ASSERT(rc == -FI_EAVAIL && err.op_context == &st.ctx[NMSG],
			   "data into a receive with no memory: rc %d context %p", rc,
			   rc == 1 ? e.op_context : err.op_context);
		printf("server: 8 bytes into the receive with no memory: error completion, %s\n",
		       fi_strerror(err.err));
	}
	fdt_wait_shutdown(s);
	close_state(s, &st);
	printf("server: SRX receives after connecting: the one with no buffer took the empty "
	       "message; fi_recv, fi_recvv, fi_recvmsg: 3 messages checked\n");
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	static struct side_state st;
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_cq_data_entry e;
	char go[8];
	void *go_desc;
	struct fid_mr *go_mr;

	(void)arg;
	open_srx_ep(s, &st, s->info);
	go_mr = fdt_reg(s, go, sizeof(go), FI_RECV);
	go_desc = fi_mr_desc(go_mr);
	/* The server's go message: a receive on the SRX before connecting. */
	FDT_OK(fi_recv(st.srx, go, sizeof(go), go_desc, FI_ADDR_UNSPEC, go));
	FDT_OK(fi_connect(s->ep, s->info->dest_addr, NULL, 0));
	fdt_wait_event(s, FI_CONNECTED, buf, sizeof(buf));
	FDT_ASSERT(fdt_wait_cq(s->rxcq, &e, NULL) == 1 && e.op_context == go && e.len == 1,
		   "go message");
	post_receives(&st);
	send_all(s, &st, 0x2100);
	reap_all(s, &st, 0x2200);
	/* into the server's receive with no memory: the send may fail too */
	FDT_OK(fi_send(s->ep, st.sbuf[1], 8, fi_mr_desc(st.smr), 0, st.sbuf[1]));
	{
		struct fi_cq_err_entry err;

		(void)fdt_wait_cq(s->txcq, &e, &err);
	}
	FDT_OK(fi_shutdown(s->ep, 0));
	fi_close(&go_mr->fid);
	close_state(s, &st);
	printf("client: SRX receives after connecting: the one with no buffer took the empty "
	       "message; fi_recv, fi_recvv, fi_recvmsg: 3 messages checked\n");
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	rc = fdt_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	return rc;
}
