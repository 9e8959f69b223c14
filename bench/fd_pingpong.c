/* fd_pingpong: the ping-pong benchmark over the public libfabric API.
 *
 * One source, three builds:
 *   direct    this project with FABRIC_DIRECT (fi_send & co. inline);
 *   off       this project through the ops tables;
 *   upstream  Debian's libfabric 1.17 (system headers only, -lfabric).
 * Nothing here may depend on which one it is, except the default label.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "bench.h"

#if defined(BENCH_UPSTREAM) && (defined(FABRIC_DIRECT) || defined(FDV_EP_H))
#error "the upstream variant picked up fabric-direct's headers"
#endif

#if defined(BENCH_VARIANT)
#define BK_VARIANT BENCH_VARIANT
#elif defined(FABRIC_DIRECT)
#define BK_VARIANT "direct"
#else
#define BK_VARIANT "off"
#endif

#define BK_CQ_SIZE 1024
#define BK_FI_VERSION FI_VERSION(1, 17)

/* What the server hands back in its accept: where the client may read,
 * write and add. */
struct bk_peer_info {
	uint64_t rx_addr, rx_key;	/* write / writedata / atomic target */
	uint64_t tx_addr, tx_key;	/* read source */
};

/* The CQs use FI_CQ_FORMAT_CONTEXT, yet entries are read into room for the
 * largest format: with the direct build gcc sees every format's store in
 * the provider's inline fi_cq_read and, given a fi_cq_entry, warns about
 * the ones that would not fit (-Warray-bounds), though they cannot run. */
union bk_cq_entry {
	struct fi_cq_entry ctx;
	struct fi_cq_tagged_entry largest;
};

struct bk {
	struct fi_info *hints, *info;
	struct fid_fabric *fabric;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_domain *domain;
	struct fid_cq *txcq, *rxcq;
	struct fid_cq *probecq;	/* bound to nothing: always empty */
	struct fid_ep *ep;
	struct fid_mr *rxmr, *txmr;
	void *rx_desc, *tx_desc;
	uint8_t *rx, *tx;
	size_t buflen;
	struct bk_peer_info peer;
	struct fi_context tx_ctx;
	/* Operations in flight at once each get their own context, as
	 * FI_CONTEXT mode allows the provider to use it until completion. */
	struct fi_context bw_ctx[BM_MAX_WINDOW];
	struct fi_context rx_ctx[BM_MAX_WINDOW + 2];
	unsigned int rx_next;
	uint64_t operand;	/* fetch-add of 1 */
	int atomic_ok;
	char desc[256];
};

#define BK_CHECK(call)							\
	do {								\
		long bk_rc_ = (long)(call);				\
		if (bk_rc_ < 0)						\
			bu_die("%s: %s (%ld)", #call,			\
			       fi_strerror((int)-bk_rc_), bk_rc_);	\
	} while (0)

static struct fi_info *bk_hints(void)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		bu_die("fi_allocinfo");
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA | FI_ATOMIC;
	h->mode = FI_CONTEXT | FI_RX_CQ_DATA;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				  FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->fabric_attr->prov_name = strdup("verbs");
	return h;
}

/* Some providers (and builds) may not offer atomics at all: retry without
 * them so the other tests still run. */
static int bk_getinfo(struct bk *b, const char *node, const char *service,
		      uint64_t flags)
{
	int rc;

	b->hints = bk_hints();
	rc = fi_getinfo(BK_FI_VERSION, node, service, flags, b->hints, &b->info);
	if (rc == -FI_ENODATA) {
		b->hints->caps &= ~FI_ATOMIC;
		rc = fi_getinfo(BK_FI_VERSION, node, service, flags, b->hints, &b->info);
	}
	if (rc)
		bu_die("fi_getinfo(%s, %s): %s", node ? node : "NULL",
		       service ? service : "NULL", fi_strerror(-rc));
	return 0;
}

static void bk_open_fabric(struct bk *b)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };

	BK_CHECK(fi_fabric(b->info->fabric_attr, &b->fabric, NULL));
	BK_CHECK(fi_eq_open(b->fabric, &ea, &b->eq, NULL));
}

static void bk_alloc_bufs(struct bk *b, size_t len)
{
	/* At least a page, and room for the 8-byte atomic target. */
	b->buflen = len < 4096 ? 4096 : (len + 4095) & ~(size_t)4095;
	if (posix_memalign((void **)&b->rx, 4096, b->buflen) ||
	    posix_memalign((void **)&b->tx, 4096, b->buflen))
		bu_die("cannot allocate 2 x %zu bytes", b->buflen);
	memset(b->rx, 0, b->buflen);
	memset(b->tx, 0, b->buflen);
}

/* Domain, CQs, endpoint, memory; ends with one receive posted. */
static void bk_open_ep(struct bk *b, struct fi_info *info)
{
	struct fi_cq_attr ca = { 0 };
	uint64_t access = FI_SEND | FI_RECV | FI_READ | FI_WRITE |
			  FI_REMOTE_READ | FI_REMOTE_WRITE;

	BK_CHECK(fi_domain(b->fabric, info, &b->domain, NULL));
	ca.size = BK_CQ_SIZE;
	ca.format = FI_CQ_FORMAT_CONTEXT;
	ca.wait_obj = FI_WAIT_NONE;
	BK_CHECK(fi_cq_open(b->domain, &ca, &b->txcq, NULL));
	BK_CHECK(fi_cq_open(b->domain, &ca, &b->rxcq, NULL));
	BK_CHECK(fi_cq_open(b->domain, &ca, &b->probecq, NULL));
	BK_CHECK(fi_endpoint(b->domain, info, &b->ep, NULL));
	BK_CHECK(fi_ep_bind(b->ep, &b->eq->fid, 0));
	BK_CHECK(fi_ep_bind(b->ep, &b->txcq->fid, FI_TRANSMIT));
	BK_CHECK(fi_ep_bind(b->ep, &b->rxcq->fid, FI_RECV));
	BK_CHECK(fi_enable(b->ep));
	BK_CHECK(fi_mr_reg(b->domain, b->rx, b->buflen, access, 0, 0, 0, &b->rxmr, NULL));
	BK_CHECK(fi_mr_reg(b->domain, b->tx, b->buflen, access, 0, 0, 0, &b->txmr, NULL));
	b->rx_desc = fi_mr_desc(b->rxmr);
	b->tx_desc = fi_mr_desc(b->txmr);
	b->operand = 1;
	b->atomic_ok = (info->caps & FI_ATOMIC) != 0;
	if (b->atomic_ok) {
		size_t count = 0;

		b->atomic_ok = fi_fetch_atomicvalid(b->ep, FI_UINT64, FI_SUM, &count) == 0 &&
			       count >= 1;
	}
	snprintf(b->desc, sizeof(b->desc),
		 "provider %s %u.%u, fabric %s, domain %s, api %u.%u, inject_size %zu, "
		 "tx size %zu, rx size %zu, tx iov %zu, cq format context",
		 info->fabric_attr->prov_name,
		 FI_MAJOR(info->fabric_attr->prov_version),
		 FI_MINOR(info->fabric_attr->prov_version),
		 info->fabric_attr->name, info->domain_attr->name,
		 FI_MAJOR(fi_version()), FI_MINOR(fi_version()),
		 info->tx_attr->inject_size, info->tx_attr->size,
		 info->rx_attr->size, info->tx_attr->iov_limit);
	BK_CHECK(fi_recv(b->ep, b->rx, b->buflen, b->rx_desc, 0, &b->rx_ctx[0]));
}

/* Generous timeouts: under valgrind a peer may need minutes to get here. */
static ssize_t bk_wait_event(struct bk *b, uint32_t want, void *buf, size_t len)
{
	uint32_t ev;
	ssize_t rc = fi_eq_sread(b->eq, &ev, buf, len, 600000, 0);

	if (rc == -FI_EAVAIL) {
		struct fi_eq_err_entry err = { 0 };

		fi_eq_readerr(b->eq, &err, 0);
		bu_die("connection event error: %s (provider errno %d)",
		       fi_strerror(err.err), err.prov_errno);
	}
	if (rc < 0)
		bu_die("fi_eq_sread: %s", fi_strerror((int)-rc));
	if (ev != want)
		bu_die("expected connection event %u, got %u", want, ev);
	return rc;
}

/* Blocking poll for set-up only. */
static void bk_setup_wait(struct fid_cq *cq)
{
	union bk_cq_entry e;
	ssize_t rc;

	while ((rc = fi_cq_read(cq, &e, 1)) == -FI_EAGAIN)
		;
	if (rc != 1)
		bu_die("set-up completion failed: %s", fi_strerror((int)-rc));
}

/* The client's buffers go to the server in the first message (the
 * connect request's private data is full with the config). */
static void bk_send_my_info(struct bk *b)
{
	struct bk_peer_info me = {
		(uintptr_t)b->rx, fi_mr_key(b->rxmr), (uintptr_t)b->tx, fi_mr_key(b->txmr)
	};

	memcpy(b->tx, &me, sizeof(me));
	BK_CHECK(fi_send(b->ep, b->tx, sizeof(me), b->tx_desc, 0, &b->tx_ctx));
	bk_setup_wait(b->txcq);
	memset(b->tx, 0, sizeof(me));
}

static void bk_recv_peer_info(struct bk *b)
{
	bk_setup_wait(b->rxcq);
	memcpy(&b->peer, b->rx, sizeof(b->peer));
	memset(b->rx, 0, sizeof(b->peer));
	BK_CHECK(fi_recv(b->ep, b->rx, b->buflen, b->rx_desc, 0, &b->rx_ctx[0]));
}

struct bk *bk_listen(const struct bm_opts *o, char *port, size_t portlen)
{
	struct bk *b = calloc(1, sizeof(*b));
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss);

	if (!b)
		bu_die("out of memory");
	bk_getinfo(b, o->bind, o->port, FI_SOURCE);
	bk_open_fabric(b);
	BK_CHECK(fi_passive_ep(b->fabric, b->info, &b->pep, NULL));
	BK_CHECK(fi_pep_bind(b->pep, &b->eq->fid, 0));
	BK_CHECK(fi_listen(b->pep));
	BK_CHECK(fi_getname(&b->pep->fid, &ss, &sslen));
	if (ss.ss_family == AF_INET6)
		snprintf(port, portlen, "%u", ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
	else
		snprintf(port, portlen, "%u", ntohs(((struct sockaddr_in *)&ss)->sin_port));
	return b;
}

int bk_accept(struct bk *b, struct bm_config *cfg)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)buf;
	struct bk_peer_info me;
	ssize_t n;

	n = bk_wait_event(b, FI_CONNREQ, buf, sizeof(buf));
	if ((size_t)n < sizeof(*e) + sizeof(*cfg))
		bu_die("connection request without a benchmark config");
	memcpy(cfg, e->data, sizeof(*cfg));
	if (bm_config_check(cfg))
		bu_die("connection request from something that is not fd_pingpong");
	bk_alloc_bufs(b, (size_t)bm_max_size(cfg));
	bk_open_ep(b, e->info);
	fi_freeinfo(e->info);
	me.rx_addr = (uintptr_t)b->rx;
	me.rx_key = fi_mr_key(b->rxmr);
	me.tx_addr = (uintptr_t)b->tx;
	me.tx_key = fi_mr_key(b->txmr);
	BK_CHECK(fi_accept(b->ep, &me, sizeof(me)));
	bk_wait_event(b, FI_CONNECTED, buf, sizeof(buf));
	bk_recv_peer_info(b);
	return 0;
}

struct bk *bk_connect(const struct bm_opts *o, const struct bm_config *cfg)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)buf;
	struct bk *b = calloc(1, sizeof(*b));
	ssize_t n;

	if (!b)
		bu_die("out of memory");
	bk_getinfo(b, o->dst, o->port, 0);
	bk_open_fabric(b);
	bk_alloc_bufs(b, (size_t)bm_max_size(cfg));
	bk_open_ep(b, b->info);
	BK_CHECK(fi_connect(b->ep, b->info->dest_addr, cfg, sizeof(*cfg)));
	n = bk_wait_event(b, FI_CONNECTED, buf, sizeof(buf));
	if ((size_t)n < sizeof(*e) + sizeof(b->peer))
		bu_die("the server's accept carried no buffer information");
	memcpy(&b->peer, e->data, sizeof(b->peer));
	bk_send_my_info(b);
	return b;
}

void bk_close(struct bk *b)
{
	if (b->ep)
		fi_shutdown(b->ep, 0);
	if (b->ep)
		fi_close(&b->ep->fid);
	if (b->rxmr)
		fi_close(&b->rxmr->fid);
	if (b->txmr)
		fi_close(&b->txmr->fid);
	if (b->txcq)
		fi_close(&b->txcq->fid);
	if (b->rxcq)
		fi_close(&b->rxcq->fid);
	if (b->probecq)
		fi_close(&b->probecq->fid);
	if (b->pep)
		fi_close(&b->pep->fid);
	if (b->domain)
		fi_close(&b->domain->fid);
	if (b->eq)
		fi_close(&b->eq->fid);
	if (b->fabric)
		fi_close(&b->fabric->fid);
	fi_freeinfo(b->info);
	fi_freeinfo(b->hints);
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
	return b->info->tx_attr->inject_size;
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
	switch (t) {
	case BM_INJECT:
		if (!bk_inject_size(b)) {
			*why = "inject_size is 0";
			return -1;
		}
		return 0;
	case BM_ATOMIC:
		if (!b->atomic_ok) {
			*why = "no 64-bit fetch-add (FI_ATOMIC / fi_fetch_atomicvalid)";
			return -1;
		}
		return 0;
	case BM_RSTREAM:
		/* A stream endpoint has no CQ and no MR: fd_rstream measures
		 * it with its own loop. */
		*why = "FI_EP_SOCK_STREAM is measured by fd_rstream";
		return -1;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------------
 * Data path: exactly one libfabric call inside each bracket.
 * ---------------------------------------------------------------------- */
BM_NOINLINE int bk_post(struct bk *b, enum bm_test t, size_t len, uint32_t seq)
{
	ssize_t rc;

	switch (t) {
	case BM_SEND: {
		BM_CG_BEGIN();
		rc = fi_send(b->ep, b->tx, len, b->tx_desc, 0, &b->tx_ctx);
		BM_CG_END();
		break;
	}
	case BM_INJECT: {
		BM_CG_BEGIN();
		rc = fi_inject(b->ep, b->tx, len, 0);
		BM_CG_END();
		break;
	}
	case BM_WRITE: {
		BM_CG_BEGIN();
		rc = fi_write(b->ep, b->tx, len, b->tx_desc, 0, b->peer.rx_addr,
			      b->peer.rx_key, &b->tx_ctx);
		BM_CG_END();
		break;
	}
	case BM_WRITEDATA: {
		BM_CG_BEGIN();
		rc = fi_writedata(b->ep, b->tx, len, b->tx_desc, seq, 0,
				  b->peer.rx_addr, b->peer.rx_key, &b->tx_ctx);
		BM_CG_END();
		break;
	}
	case BM_READ: {
		BM_CG_BEGIN();
		rc = fi_read(b->ep, b->rx, len, b->rx_desc, 0, b->peer.tx_addr,
			     b->peer.tx_key, &b->tx_ctx);
		BM_CG_END();
		break;
	}
	case BM_ATOMIC: {
		BM_CG_BEGIN();
		rc = fi_fetch_atomic(b->ep, &b->operand, 1, NULL, b->rx, b->rx_desc,
				     0, b->peer.rx_addr, b->peer.rx_key,
				     FI_UINT64, FI_SUM, &b->tx_ctx);
		BM_CG_END();
		break;
	}
	case BM_SEND_BW: {
		struct fi_context *ctx = &b->bw_ctx[seq % BM_MAX_WINDOW];

		BM_CG_BEGIN();
		rc = fi_send(b->ep, b->tx, len, b->tx_desc, 0, ctx);
		BM_CG_END();
		break;
	}
	case BM_WRITE_BW: {
		struct fi_context *ctx = &b->bw_ctx[seq % BM_MAX_WINDOW];

		BM_CG_BEGIN();
		rc = fi_write(b->ep, b->tx, len, b->tx_desc, 0, b->peer.rx_addr,
			      b->peer.rx_key, ctx);
		BM_CG_END();
		break;
	}
	case BM_READ_BW: {
		struct fi_context *ctx = &b->bw_ctx[seq % BM_MAX_WINDOW];

		BM_CG_BEGIN();
		rc = fi_read(b->ep, b->rx, len, b->rx_desc, 0, b->peer.tx_addr,
			     b->peer.tx_key, ctx);
		BM_CG_END();
		break;
	}
	case BM_CTRL:
		rc = fi_send(b->ep, NULL, 0, NULL, 0, &b->tx_ctx);
		break;
	default:
		bu_die("no post for test %d", t);
	}
	if (rc == -FI_EAGAIN)
		return -EAGAIN;
	if (rc)
		bu_die("posting %s of %zu bytes: %s", t < BM_NTESTS ?
		       bm_test_names[t] : "barrier", len, fi_strerror((int)-rc));
	return 0;
}

/* send_bw --batch: FI_MORE tells the provider more sends follow at once;
 * the last call goes without it and rings the doorbell for all. */
BM_NOINLINE int bk_post_batch(struct bk *b, size_t len, uint32_t seq, uint32_t n)
{
	struct iovec iov = { b->tx, len };
	void *desc = b->tx_desc;
	struct fi_msg m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1 };
	uint32_t i;

	for (i = 0; i < n; i++) {
		ssize_t rc;

		m.context = &b->bw_ctx[(seq + i) % BM_MAX_WINDOW];
		{
			BM_CG_BEGIN();
			rc = fi_sendmsg(b->ep, &m, i + 1 < n ? FI_MORE : 0);
			BM_CG_END();
		}
		if (rc == -FI_EAGAIN)
			break;
		if (rc)
			bu_die("fi_sendmsg of %zu bytes: %s", len, fi_strerror((int)-rc));
	}
	return (int)i;
}

BM_NOINLINE int bk_post_recv(struct bk *b)
{
	struct fi_context *ctx = &b->rx_ctx[b->rx_next++ % (BM_MAX_WINDOW + 2)];
	ssize_t rc;

	BM_CG_BEGIN();
	rc = fi_recv(b->ep, b->rx, b->buflen, b->rx_desc, 0, ctx);
	BM_CG_END();
	if (rc)
		bu_die("fi_recv: %s", fi_strerror((int)-rc));
	return 0;
}

static BM_NOINLINE void bk_cq_error(struct fid_cq *cq, const char *which)
{
	struct fi_cq_err_entry err;

	memset(&err, 0, sizeof(err));
	if (fi_cq_readerr(cq, &err, 0) != 1)
		bu_die("%s CQ: error, and fi_cq_readerr failed", which);
	bu_die("%s CQ: %s (provider errno %d: %s)", which, fi_strerror(err.err),
	       err.prov_errno, fi_cq_strerror(cq, err.prov_errno, err.err_data, NULL, 0));
}

static int bk_poll_result(struct fid_cq *cq, ssize_t rc, int tx)
{
	if (rc == 1)
		return 1;
	if (rc == -FI_EAGAIN)
		return 0;
	if (rc == -FI_EAVAIL)
		bk_cq_error(cq, tx ? "send" : "receive");
	bu_die("fi_cq_read: %s", fi_strerror((int)-rc));
}

BM_NOINLINE int bk_poll(struct bk *b, int tx)
{
	struct fid_cq *cq = tx ? b->txcq : b->rxcq;
	union bk_cq_entry e;
	ssize_t rc;

	BM_CG_BEGIN();
	rc = fi_cq_read(cq, &e, 1);
	BM_CG_END();
	return bk_poll_result(cq, rc, tx);
}

/* A separate function, so callgrind attributes its cost separately; the
 * counter keeps the compiler from folding the two into one. */
static unsigned long bk_empty_calls;

BM_NOINLINE int bk_poll_empty(struct bk *b, int tx)
{
	struct fid_cq *cq = b->probecq;
	union bk_cq_entry e;
	ssize_t rc;

	bk_empty_calls++;
	BM_CG_BEGIN();
	rc = fi_cq_read(cq, &e, 1);
	BM_CG_END();
	return bk_poll_result(cq, rc, tx) ? 1 : 0;
}

BM_NOINLINE void bk_nop(void)
{
	BM_CG_BEGIN();
	__asm__ __volatile__("" ::: "memory");
	BM_CG_END();
}

int main(int argc, char **argv)
{
	return bm_main(argc, argv, BK_VARIANT);
}
