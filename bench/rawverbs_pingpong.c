/* rawverbs_pingpong: the floor. The same loops as fd_pingpong (the shared
 * driver), straight over rdma-core: an RC QP made through rdma_cm with the
 * shape the fabric-direct verbs provider uses by default (384 send and
 * receive slots, 4 SGEs, 256 bytes inline, sq_sig_all 0, sends up to the
 * inline size go inline, unsignaled injects with one request in every
 * sq/2 signaled), work requests built once and only patched per post.
 * What it costs per operation is what any verbs application must spend. */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "bench.h"

#define BK_CQ_SIZE 1024
#define BK_WR_SILENT UINT64_MAX
#define BK_TIMEOUT_MS 5000

struct bk_peer_info {
	uint64_t rx_addr, rx_key;
	uint64_t tx_addr, tx_key;
};

struct bk {
	const struct bm_opts *o;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen_id, *id;
	struct ibv_pd *pd;
	struct ibv_cq *txcq, *rxcq;
	struct ibv_cq *probecq;	/* bound to nothing: always empty */
	struct ibv_qp *qp;
	struct ibv_mr *rxmr, *txmr;
	uint8_t *rx, *tx;
	size_t buflen;
	uint32_t inline_size, signal_every, unsignaled;
	uint8_t peer_initiator_depth, peer_responder_resources;
	struct bk_peer_info peer;
	/* One prebuilt request per test, plus the barrier's. */
	struct ibv_send_wr wr[BM_NTESTS + 1];
	struct ibv_sge sge[BM_NTESTS + 1];
	struct ibv_recv_wr rwr;
	struct ibv_sge rsge;
	char desc[256];
};

static void bk_expect_event(struct bk *b, enum rdma_cm_event_type want,
			    struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(b->ec, &ev))
		bu_die("rdma_get_cm_event: %s", strerror(errno));
	if (ev->event != want)
		bu_die("expected %s, got %s (status %d)", rdma_event_str(want),
		       rdma_event_str(ev->event), ev->status);
	if (out)
		*out = ev;
	else
		rdma_ack_cm_event(ev);
}

static struct addrinfo *bk_resolve(const char *node, const char *port, int passive)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	int rc;

	if (passive)
		hints.ai_flags = AI_PASSIVE;
	rc = getaddrinfo(node, port, &hints, &ai);
	if (rc)
		bu_die("getaddrinfo(%s, %s): %s", node ? node : "*", port, gai_strerror(rc));
	return ai;
}

static void bk_alloc_bufs(struct bk *b, size_t len)
{
	b->buflen = len < 4096 ? 4096 : (len + 4095) & ~(size_t)4095;
	if (posix_memalign((void **)&b->rx, 4096, b->buflen) ||
	    posix_memalign((void **)&b->tx, 4096, b->buflen))
		bu_die("cannot allocate 2 x %zu bytes", b->buflen);
	memset(b->rx, 0, b->buflen);
	memset(b->tx, 0, b->buflen);
}

/* The fixed part of every work request. */
static void bk_prebuild(struct bk *b)
{
	for (int t = 0; t <= BM_NTESTS; t++) {
		struct ibv_send_wr *wr = &b->wr[t];
		struct ibv_sge *sge = &b->sge[t];

		memset(wr, 0, sizeof(*wr));
		sge->addr = (uintptr_t)b->tx;
		sge->lkey = b->txmr->lkey;
		wr->wr_id = (uintptr_t)wr;
		wr->sg_list = sge;
		wr->num_sge = 1;
		wr->send_flags = IBV_SEND_SIGNALED;
		switch (t) {
		case BM_SEND:
			wr->opcode = IBV_WR_SEND;
			break;
		case BM_INJECT:
			/* Only the periodic signaled one completes, and nobody
			 * waits for it. */
			wr->opcode = IBV_WR_SEND;
			wr->wr_id = BK_WR_SILENT;
			break;
		case BM_SEND_BW:
			wr->opcode = IBV_WR_SEND;
			break;
		case BM_WRITE_BW:
			wr->opcode = IBV_WR_RDMA_WRITE;
			wr->wr.rdma.remote_addr = b->peer.rx_addr;
			wr->wr.rdma.rkey = (uint32_t)b->peer.rx_key;
			break;
		case BM_READ_BW:
		case BM_READ:
			wr->opcode = IBV_WR_RDMA_READ;
			sge->addr = (uintptr_t)b->rx;
			sge->lkey = b->rxmr->lkey;
			wr->wr.rdma.remote_addr = b->peer.tx_addr;
			wr->wr.rdma.rkey = (uint32_t)b->peer.tx_key;
			break;
		case BM_WRITE:
		case BM_WRITEDATA:
			wr->opcode = t == BM_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
			wr->wr.rdma.remote_addr = b->peer.rx_addr;
			wr->wr.rdma.rkey = (uint32_t)b->peer.rx_key;
			break;
		case BM_ATOMIC:
			wr->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			sge->addr = (uintptr_t)b->rx;
			sge->lkey = b->rxmr->lkey;
			sge->length = sizeof(uint64_t);
			wr->wr.atomic.remote_addr = b->peer.rx_addr;
			wr->wr.atomic.rkey = (uint32_t)b->peer.rx_key;
			wr->wr.atomic.compare_add = 1;
			break;
		case BM_NTESTS:	/* barrier: zero-length send */
			wr->opcode = IBV_WR_SEND;
			wr->num_sge = 0;
			break;
		default:
			break;
		}
	}
	b->rsge.addr = (uintptr_t)b->rx;
	b->rsge.length = (uint32_t)b->buflen;
	b->rsge.lkey = b->rxmr->lkey;
	b->rwr.wr_id = (uintptr_t)&b->rwr;
	b->rwr.sg_list = &b->rsge;
	b->rwr.num_sge = 1;
}

/* PD, CQs, QP, memory on the device rdma_cm picked; ends with one receive
 * posted. */
static void bk_open_qp(struct bk *b)
{
	struct ibv_qp_init_attr attr;
	struct ibv_recv_wr *bad;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	b->pd = ibv_alloc_pd(b->id->verbs);
	if (!b->pd)
		bu_die("ibv_alloc_pd: %s", strerror(errno));
	b->txcq = ibv_create_cq(b->id->verbs, BK_CQ_SIZE, NULL, NULL, 0);
	b->rxcq = ibv_create_cq(b->id->verbs, BK_CQ_SIZE, NULL, NULL, 0);
	b->probecq = ibv_create_cq(b->id->verbs, BK_CQ_SIZE, NULL, NULL, 0);
	if (!b->txcq || !b->rxcq || !b->probecq)
		bu_die("ibv_create_cq: %s", strerror(errno));
	memset(&attr, 0, sizeof(attr));
	attr.send_cq = b->txcq;
	attr.recv_cq = b->rxcq;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 0;
	attr.cap.max_send_wr = b->o->sq_size;
	attr.cap.max_recv_wr = b->o->rq_size;
	attr.cap.max_send_sge = b->o->sge;
	attr.cap.max_recv_sge = b->o->sge;
	attr.cap.max_inline_data = b->o->max_inline;
	if (rdma_create_qp(b->id, b->pd, &attr))
		bu_die("rdma_create_qp: %s", strerror(errno));
	b->qp = b->id->qp;
	b->inline_size = b->o->max_inline < attr.cap.max_inline_data ?
			 b->o->max_inline : attr.cap.max_inline_data;
	b->signal_every = b->o->sq_size / 2 ? b->o->sq_size / 2 : 1;
	b->rxmr = ibv_reg_mr(b->pd, b->rx, b->buflen, access);
	b->txmr = ibv_reg_mr(b->pd, b->tx, b->buflen, access);
	if (!b->rxmr || !b->txmr)
		bu_die("ibv_reg_mr: %s", strerror(errno));
	snprintf(b->desc, sizeof(b->desc),
		 "raw verbs, device %s, RC QP via rdma_cm, sq %u rq %u sge %u, "
		 "inline %u (driver gave %u), signal every %u unsignaled, "
		 "min_rnr_timer 12",
		 ibv_get_device_name(b->id->verbs->device), b->o->sq_size,
		 b->o->rq_size, b->o->sge, b->inline_size,
		 attr.cap.max_inline_data, b->signal_every);
	bk_prebuild(b);
	if (ibv_post_recv(b->qp, &b->rwr, &bad))
		bu_die("ibv_post_recv: %s", strerror(errno));
}

/* Blocking poll for set-up only. */
static void bk_setup_wait(struct bk *b, struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		;
	if (n < 0 || wc.status != IBV_WC_SUCCESS)
		bu_die("set-up completion failed: %s",
		       n < 0 ? "ibv_poll_cq" : ibv_wc_status_str(wc.status));
	(void)b;
}

/* The client's buffers go to the server in the first message (the
 * connect request's private data is full with the config). */
static void bk_send_my_info(struct bk *b)
{
	struct bk_peer_info me = {
		(uintptr_t)b->rx, b->rxmr->rkey, (uintptr_t)b->tx, b->txmr->rkey
	};
	struct ibv_sge sge = { (uintptr_t)b->tx, sizeof(me), b->txmr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	memcpy(b->tx, &me, sizeof(me));
	if (ibv_post_send(b->qp, &wr, &bad))
		bu_die("sending the buffer information failed");
	bk_setup_wait(b, b->txcq);
	memset(b->tx, 0, sizeof(me));
}

static void bk_recv_peer_info(struct bk *b)
{
	struct ibv_recv_wr *bad;

	bk_setup_wait(b, b->rxcq);
	memcpy(&b->peer, b->rx, sizeof(b->peer));
	memset(b->rx, 0, sizeof(b->peer));
	if (ibv_post_recv(b->qp, &b->rwr, &bad))
		bu_die("ibv_post_recv: %s", strerror(errno));
	bk_prebuild(b);
}

/*
 * rdma_cm moves the QP to RTR with a receiver-not-ready timer of 0, which
 * the IB encoding reads as 655 ms: one RNR NAK (a send arriving before its
 * receive is reposted) stalls the sender that long. The provider sets 12
 * (0.64 ms, upstream's FI_VERBS_MIN_RNR_TIMER default) with an RTS -> RTS
 * modify once connected; the reference does the same, or its message
 * rates depend on how many RNR NAKs a run happens to get.
 */
static void bk_set_min_rnr_timer(struct bk *b)
{
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.min_rnr_timer = 12;
	if (ibv_modify_qp(b->qp, &attr, IBV_QP_MIN_RNR_TIMER))
		bu_die("ibv_modify_qp(min_rnr_timer): %s", strerror(errno));
}

static void bk_conn_param(struct bk *b, struct rdma_conn_param *cp,
			  const void *priv, size_t len, int passive)
{
	struct ibv_device_attr da;

	if (ibv_query_device(b->id->verbs, &da))
		bu_die("ibv_query_device: %s", strerror(errno));
	memset(cp, 0, sizeof(*cp));
	cp->private_data = priv;
	cp->private_data_len = (uint8_t)len;
	cp->responder_resources = (uint8_t)(da.max_qp_rd_atom < 255 ? da.max_qp_rd_atom : 255);
	cp->initiator_depth = (uint8_t)(da.max_qp_init_rd_atom < 255 ? da.max_qp_init_rd_atom : 255);
	if (passive) {
		if (cp->responder_resources > b->peer_initiator_depth)
			cp->responder_resources = b->peer_initiator_depth;
		if (cp->initiator_depth > b->peer_responder_resources)
			cp->initiator_depth = b->peer_responder_resources;
	}
	cp->flow_control = 1;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

struct bk *bk_listen(const struct bm_opts *o, char *port, size_t portlen)
{
	struct bk *b = calloc(1, sizeof(*b));
	struct addrinfo *ai;

	if (!b)
		bu_die("out of memory");
	b->o = o;
	b->ec = rdma_create_event_channel();
	if (!b->ec)
		bu_die("rdma_create_event_channel: %s", strerror(errno));
	if (rdma_create_id(b->ec, &b->listen_id, NULL, RDMA_PS_TCP))
		bu_die("rdma_create_id: %s", strerror(errno));
	ai = bk_resolve(o->bind, o->port, 1);
	if (rdma_bind_addr(b->listen_id, ai->ai_addr))
		bu_die("rdma_bind_addr: %s", strerror(errno));
	freeaddrinfo(ai);
	if (rdma_listen(b->listen_id, 1))
		bu_die("rdma_listen: %s", strerror(errno));
	snprintf(port, portlen, "%u", ntohs(rdma_get_src_port(b->listen_id)));
	return b;
}

int bk_accept(struct bk *b, struct bm_config *cfg)
{
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct bk_peer_info me;

	bk_expect_event(b, RDMA_CM_EVENT_CONNECT_REQUEST, &ev);
	if (ev->param.conn.private_data_len < sizeof(*cfg))
		bu_die("connection request without a benchmark config");
	memcpy(cfg, ev->param.conn.private_data, sizeof(*cfg));
	b->id = ev->id;
	b->peer_initiator_depth = ev->param.conn.initiator_depth;
	b->peer_responder_resources = ev->param.conn.responder_resources;
	rdma_ack_cm_event(ev);
	if (bm_config_check(cfg))
		bu_die("connection request from something that is not a ping-pong client");
	bk_alloc_bufs(b, (size_t)bm_max_size(cfg));
	bk_open_qp(b);
	me.rx_addr = (uintptr_t)b->rx;
	me.rx_key = b->rxmr->rkey;
	me.tx_addr = (uintptr_t)b->tx;
	me.tx_key = b->txmr->rkey;
	bk_conn_param(b, &cp, &me, sizeof(me), 1);
	if (rdma_accept(b->id, &cp))
		bu_die("rdma_accept: %s", strerror(errno));
	bk_expect_event(b, RDMA_CM_EVENT_ESTABLISHED, NULL);
	bk_set_min_rnr_timer(b);
	bk_recv_peer_info(b);
	return 0;
}

struct bk *bk_connect(const struct bm_opts *o, const struct bm_config *cfg)
{
	struct bk *b = calloc(1, sizeof(*b));
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct addrinfo *ai;

	if (!b)
		bu_die("out of memory");
	b->o = o;
	b->ec = rdma_create_event_channel();
	if (!b->ec)
		bu_die("rdma_create_event_channel: %s", strerror(errno));
	if (rdma_create_id(b->ec, &b->id, NULL, RDMA_PS_TCP))
		bu_die("rdma_create_id: %s", strerror(errno));
	ai = bk_resolve(o->dst, o->port, 0);
	if (rdma_resolve_addr(b->id, NULL, ai->ai_addr, BK_TIMEOUT_MS))
		bu_die("rdma_resolve_addr: %s", strerror(errno));
	freeaddrinfo(ai);
	bk_expect_event(b, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
	if (rdma_resolve_route(b->id, BK_TIMEOUT_MS))
		bu_die("rdma_resolve_route: %s", strerror(errno));
	bk_expect_event(b, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
	bk_alloc_bufs(b, (size_t)bm_max_size(cfg));
	bk_open_qp(b);
	bk_conn_param(b, &cp, cfg, sizeof(*cfg), 0);
	if (rdma_connect(b->id, &cp))
		bu_die("rdma_connect: %s", strerror(errno));
	bk_expect_event(b, RDMA_CM_EVENT_ESTABLISHED, &ev);
	if (ev->param.conn.private_data_len < sizeof(b->peer))
		bu_die("the server's accept carried no buffer information");
	memcpy(&b->peer, ev->param.conn.private_data, sizeof(b->peer));
	rdma_ack_cm_event(ev);
	bk_set_min_rnr_timer(b);
	bk_prebuild(b);	/* again, now that the peer's addresses are known */
	bk_send_my_info(b);
	return b;
}

void bk_close(struct bk *b)
{
	if (b->id)
		rdma_disconnect(b->id);
	if (b->qp)
		rdma_destroy_qp(b->id);
	if (b->rxmr)
		ibv_dereg_mr(b->rxmr);
	if (b->txmr)
		ibv_dereg_mr(b->txmr);
	if (b->txcq)
		ibv_destroy_cq(b->txcq);
	if (b->rxcq)
		ibv_destroy_cq(b->rxcq);
	if (b->probecq)
		ibv_destroy_cq(b->probecq);
	if (b->pd)
		ibv_dealloc_pd(b->pd);
	if (b->id)
		rdma_destroy_id(b->id);
	if (b->listen_id)
		rdma_destroy_id(b->listen_id);
	if (b->ec)
		rdma_destroy_event_channel(b->ec);
	free(b->rx);
	free(b->tx);
	free(b);
}

const char *bk_describe(struct bk *b)
{
	return b->desc;
}

size_t bk_inject_size(struct bk *b)
{
	return b->inline_size;
}

volatile uint8_t *bk_rx(struct bk *b)
{
	return b->rx;
}

uint8_t *bk_tx(struct bk *b)
{
	return b->tx;
}

int bk_supports(struct bk *b, enum bm_test t, const char **why)
{
	if (t == BM_INJECT && !b->inline_size) {
		*why = "the QP has no inline data";
		return -1;
	}
	if (t == BM_RSTREAM) {
		*why = "a stream test has no raw-verbs counterpart (see rstream(1))";
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Data path. Inside each bracket: the per-post patching of the prebuilt
 * request and ibv_post_send / ibv_post_recv / ibv_poll_cq.
 * ---------------------------------------------------------------------- */
static inline int bk_send_flags(struct bk *b, size_t len)
{
	return len <= b->inline_size ? IBV_SEND_SIGNALED | IBV_SEND_INLINE :
				       IBV_SEND_SIGNALED;
}

BM_NOINLINE int bk_post(struct bk *b, enum bm_test t, size_t len, uint32_t seq)
{
	struct ibv_send_wr *wr = &b->wr[t], *bad;
	int rc;

	switch (t) {
	case BM_SEND:
	case BM_WRITE:
	case BM_SEND_BW:
	case BM_WRITE_BW: {
		/* Every bandwidth request is signaled, like every libfabric
		 * operation with a completion. */
		BM_CG_BEGIN();
		b->sge[t].length = (uint32_t)len;
		wr->send_flags = bk_send_flags(b, len);
		rc = ibv_post_send(b->qp, wr, &bad);
		BM_CG_END();
		break;
	}
	case BM_INJECT: {
		BM_CG_BEGIN();
		uint32_t unsignaled = b->unsignaled + 1;

		b->sge[t].length = (uint32_t)len;
		if (unsignaled >= b->signal_every) {
			wr->send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
			unsignaled = 0;
		} else {
			wr->send_flags = IBV_SEND_INLINE;
		}
		rc = ibv_post_send(b->qp, wr, &bad);
		if (!rc)
			b->unsignaled = unsignaled;
		BM_CG_END();
		break;
	}
	case BM_WRITEDATA: {
		BM_CG_BEGIN();
		b->sge[t].length = (uint32_t)len;
		wr->send_flags = bk_send_flags(b, len);
		wr->imm_data = htonl(seq);
		rc = ibv_post_send(b->qp, wr, &bad);
		BM_CG_END();
		break;
	}
	case BM_READ:
	case BM_READ_BW: {
		BM_CG_BEGIN();
		b->sge[t].length = (uint32_t)len;
		rc = ibv_post_send(b->qp, wr, &bad);
		BM_CG_END();
		break;
	}
	case BM_ATOMIC: {
		BM_CG_BEGIN();
		rc = ibv_post_send(b->qp, wr, &bad);
		BM_CG_END();
		break;
	}
	case BM_CTRL:
		rc = ibv_post_send(b->qp, wr, &bad);
		break;
	default:
		bu_die("no post for test %d", t);
	}
	if (rc == ENOMEM)
		return -EAGAIN;
	if (rc)
		bu_die("ibv_post_send (%s, %zu bytes): %s", t < BM_NTESTS ?
		       bm_test_names[t] : "barrier", len, strerror(rc));
	return 0;
}

/* send_bw --batch: n copies of the prebuilt send, chained, one
 * ibv_post_send (perftest's --post_list). A partial post counts what the
 * driver took. */
BM_NOINLINE int bk_post_batch(struct bk *b, size_t len, uint32_t seq, uint32_t n)
{
	struct ibv_send_wr wr[BM_MAX_BATCH], *bad = NULL;
	struct ibv_sge sge = b->sge[BM_SEND_BW];
	int rc;

	(void)seq;
	sge.length = (uint32_t)len;
	for (uint32_t i = 0; i < n; i++) {
		wr[i] = b->wr[BM_SEND_BW];
		wr[i].sg_list = &sge;
		wr[i].send_flags = bk_send_flags(b, len);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	{
		/* Counted: the post of the chain, as perftest's --post_list
		 * posts a list it built once; the copies above stand in for
		 * that one-time build. */
		BM_CG_BEGIN();
		rc = ibv_post_send(b->qp, wr, &bad);
		BM_CG_END();
	}
	if (!rc)
		return (int)n;
	if (rc == ENOMEM && bad)
		return (int)(bad - wr);
	bu_die("ibv_post_send (send_bw batch of %u): %s", n, strerror(rc));
}

BM_NOINLINE int bk_post_recv(struct bk *b)
{
	struct ibv_recv_wr *bad;
	int rc;

	BM_CG_BEGIN();
	rc = ibv_post_recv(b->qp, &b->rwr, &bad);
	BM_CG_END();
	if (rc)
		bu_die("ibv_post_recv: %s", strerror(rc));
	return 0;
}

static int bk_poll_result(int n, const struct ibv_wc *wc, int tx)
{
	if (n < 0)
		bu_die("ibv_poll_cq: %d", n);
	if (!n)
		return 0;
	if (wc->status != IBV_WC_SUCCESS)
		bu_die("%s completion: %s (vendor error 0x%x)", tx ? "send" : "receive",
		       ibv_wc_status_str(wc->status), wc->vendor_err);
	return wc->wr_id != BK_WR_SILENT;
}

BM_NOINLINE int bk_poll(struct bk *b, int tx)
{
	struct ibv_cq *cq = tx ? b->txcq : b->rxcq;
	struct ibv_wc wc;
	int n;

	BM_CG_BEGIN();
	n = ibv_poll_cq(cq, 1, &wc);
	BM_CG_END();
	return bk_poll_result(n, &wc, tx);
}

static unsigned long bk_empty_calls;

BM_NOINLINE int bk_poll_empty(struct bk *b, int tx)
{
	struct ibv_cq *cq = b->probecq;
	struct ibv_wc wc;
	int n;

	bk_empty_calls++;
	BM_CG_BEGIN();
	n = ibv_poll_cq(cq, 1, &wc);
	BM_CG_END();
	return bk_poll_result(n, &wc, tx);
}

BM_NOINLINE void bk_nop(void)
{
	BM_CG_BEGIN();
	__asm__ __volatile__("" ::: "memory");
	BM_CG_END();
}

int main(int argc, char **argv)
{
	return bm_main(argc, argv, "rawverbs");
}
