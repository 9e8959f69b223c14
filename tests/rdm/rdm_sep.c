/* Scalable endpoints on RDM (issue 25): two processes, each with a
 * scalable endpoint of 4 transmit and 4 receive contexts, every context
 * with a CQ of its own, one name each (fi_getname of the SEP).
 *
 * fi_getinfo: FI_NAMED_RX_CTX and tx/rx_ctx_cnt 4 asked are reported
 * back, max_ep_tx_ctx / max_ep_rx_ctx say 16, 17 contexts get no entry.
 *
 * Round 1 (FI_THREAD_DOMAIN, one thread): every transmit context sends
 * to every receive context of the peer, addressed with fi_rx_addr: a
 * tagged message (tag names sender and receiver context), an untagged
 * one, and one 100000-byte tagged rendezvous from context 3 to context
 * 1, and a plain endpoint of the peer (on the same AV) sends one to
 * context 2. Each arrives at exactly the addressed context's CQ, with the right
 * bytes and fi_cq_readfrom naming the peer's SEP; each send completes on
 * its own context's CQ; nothing arrives anywhere else. Bad input:
 * context index 4 and -1 (-FI_EINVAL), a receive context bound with
 * FI_TRANSMIT (-FI_EBADFLAGS), a send to receive context 16 (-FI_EINVAL),
 * receives on a transmit context and sends on a receive context
 * (-FI_ENOSYS), closing the SEP under open contexts (-FI_EBUSY).
 *
 * Round 2 (FI_THREAD_SAFE): four threads per process, thread i using
 * only transmit context i, receive context i and their CQs, exchange 200
 * messages with the peer's thread i (every 50th a 64 KiB rendezvous):
 * each in order, bytes checked. In the tsan subset too. */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "rdmt.h"

#define NCTX 4
#define CTX_BITS 5
#define SMALL 1000
#define BIG 100000
#define TMSG 200
#define TLEN 512
#define TBIG 65536

struct side {
	struct rdmt_dom dom;
	struct fid_ep *sep;
	struct fid_av *av;
	struct fid_ep *tx[NCTX], *rx[NCTX];
	struct rdmt_cq *txcq[NCTX], *rxcq[NCTX];
	fi_addr_t peer;
};

static struct fi_info *sep_hints(int threading)
{
	struct fi_info *h = rdmt_hints(FI_MSG | FI_TAGGED | FI_NAMED_RX_CTX);

	h->domain_attr->threading = threading;
	h->ep_attr->tx_ctx_cnt = NCTX;
	h->ep_attr->rx_ctx_cnt = NCTX;
	return h;
}

static void check_getinfo(void)
{
	struct fi_info *h = sep_hints(FI_THREAD_DOMAIN), *info = NULL;
	int ret;

	FDT_OK(fi_getinfo(FI_VERSION(1, 17), fdt_addr(), NULL, FI_SOURCE, h, &info));
	FDT_ASSERT(info->caps & FI_NAMED_RX_CTX, "FI_NAMED_RX_CTX not reported");
	FDT_ASSERT(info->ep_attr->tx_ctx_cnt == NCTX && info->ep_attr->rx_ctx_cnt == NCTX,
		   "ctx counts %zu %zu", info->ep_attr->tx_ctx_cnt, info->ep_attr->rx_ctx_cnt);
	FDT_ASSERT(info->domain_attr->max_ep_tx_ctx >= 16 &&
		   info->domain_attr->max_ep_rx_ctx >= 16, "max_ep ctx %zu %zu",
		   info->domain_attr->max_ep_tx_ctx, info->domain_attr->max_ep_rx_ctx);
	FDT_ASSERT(info->domain_attr->tx_ctx_cnt > 1 && info->domain_attr->rx_ctx_cnt > 1,
		   "domain ctx counts %zu %zu", info->domain_attr->tx_ctx_cnt,
		   info->domain_attr->rx_ctx_cnt);
	fi_freeinfo(info);
	info = NULL;
	h->ep_attr->tx_ctx_cnt = 17;
	ret = fi_getinfo(FI_VERSION(1, 17), fdt_addr(), NULL, FI_SOURCE, h, &info);
	FDT_ASSERT(ret == -FI_ENODATA, "17 tx contexts: %d", ret);
	fi_freeinfo(h);
}

static void side_open(struct side *s, int threading, int to_peer, int from_peer)
{
	struct fi_info *h = sep_hints(threading);
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .rx_ctx_bits = CTX_BITS };
	struct fid_ep *bad;
	uint8_t name[256], peer_name[256], ctxname[256];
	size_t len = sizeof(name), clen = sizeof(ctxname);
	struct rdmt_ep fake;
	int i;

	memset(s, 0, sizeof(*s));
	rdmt_dom_open(&s->dom, h);
	fi_freeinfo(h);
	FDT_OK(fi_scalable_ep(s->dom.domain, s->dom.info, &s->sep, s));
	FDT_OK(fi_av_open(s->dom.domain, &av_attr, &s->av, NULL));
	FDT_OK(fi_scalable_ep_bind(s->sep, &s->av->fid, 0));
	FDT_EXPECT(fi_tx_context(s->sep, NCTX, NULL, &bad, NULL), -FI_EINVAL);
	FDT_EXPECT(fi_rx_context(s->sep, NCTX, NULL, &bad, NULL), -FI_EINVAL);
	FDT_EXPECT(fi_tx_context(s->sep, -1, NULL, &bad, NULL), -FI_EINVAL);
	FDT_EXPECT(fi_rx_context(s->sep, -1, NULL, &bad, NULL), -FI_EINVAL);
	for (i = 0; i < NCTX; i++) {
		FDT_OK(fi_tx_context(s->sep, i, NULL, &s->tx[i], &s->tx[i]));
		FDT_OK(fi_rx_context(s->sep, i, NULL, &s->rx[i], &s->rx[i]));
		s->txcq[i] = rdmt_cq_open(&s->dom);
		s->rxcq[i] = rdmt_cq_open(&s->dom);
		FDT_EXPECT(fi_ep_bind(s->rx[i], &s->rxcq[i]->cq->fid, FI_TRANSMIT), -FI_EBADFLAGS);
		FDT_EXPECT(fi_ep_bind(s->tx[i], &s->txcq[i]->cq->fid, FI_RECV), -FI_EBADFLAGS);
		FDT_OK(fi_ep_bind(s->tx[i], &s->txcq[i]->cq->fid, FI_TRANSMIT));
		FDT_OK(fi_ep_bind(s->rx[i], &s->rxcq[i]->cq->fid, FI_RECV));
	}
	FDT_EXPECT(fi_tx_context(s->sep, 0, NULL, &bad, NULL), -FI_EBUSY);
	/* contexts first, then the SEP, as fabtests' scalable_ep does */
	for (i = 0; i < NCTX; i++) {
		FDT_OK(fi_enable(s->tx[i]));
		FDT_OK(fi_enable(s->rx[i]));
	}
	FDT_OK(fi_enable(s->sep));
	FDT_OK(fi_getname(&s->sep->fid, name, &len));
	FDT_OK(fi_getname(&s->rx[2]->fid, ctxname, &clen));
	FDT_ASSERT(clen == len && !memcmp(name, ctxname, len), "a context's name is not the SEP's");
	memset(&fake, 0, sizeof(fake));
	memcpy(fake.name, name, len);
	fake.namelen = len;
	rdmt_send_name(to_peer, &fake);
	rdmt_recv_name(from_peer, peer_name);
	FDT_ASSERT(fi_av_insert(s->av, peer_name, 1, &s->peer, 0, NULL) == 1, "av insert");
}

static void side_close(struct side *s)
{
	int i;

	FDT_EXPECT(fi_close(&s->sep->fid), -FI_EBUSY);
	for (i = 0; i < NCTX; i++) {
		FDT_OK(fi_close(&s->tx[i]->fid));
		FDT_OK(fi_close(&s->rx[i]->fid));
		rdmt_cq_close(s->txcq[i]);
		rdmt_cq_close(s->rxcq[i]);
	}
	FDT_OK(fi_close(&s->sep->fid));
	FDT_OK(fi_close(&s->av->fid));
	rdmt_dom_close(&s->dom);
}

static void barrier(int to_peer, int from_peer)
{
	uint8_t t = 0;

	rdmt_write_all(to_peer, &t, 1);
	rdmt_read_all(from_peer, &t, 1);
}

static uint32_t seed_of(int me, int i, int j, int kind)
{
	return (uint32_t)(me * 100000 + i * 1000 + j * 10 + kind);
}

/* ---- round 1 ---- */

static void round1(int to_peer, int from_peer, int me)
{
	static uint8_t tbuf[NCTX][NCTX][SMALL], mbuf[NCTX][NCTX][SMALL], big[BIG];
	static uint8_t rt[NCTX][NCTX][SMALL], rm[NCTX][NCTX][SMALL], rbig[BIG];
	static struct fi_context tctx[NCTX][NCTX], mctx[NCTX][NCTX], bctx;
	static struct fi_context rtctx[NCTX][NCTX], rmctx[NCTX][NCTX], rbctx;
	static struct fi_context spctx, rpctx;
	static uint8_t splain[300], rplain[300];
	struct fid_ep *plain;
	struct rdmt_cq *pcq;
	struct side s;
	struct rdmt_comp c;
	int i, j, peer = 1 - me;
	ssize_t ret;

	side_open(&s, FI_THREAD_DOMAIN, to_peer, from_peer);
	/* receives: per receive context j, a tagged one per peer sender i,
	 * NCTX untagged ones, and on context 1 the rendezvous */
	for (j = 0; j < NCTX; j++) {
		for (i = 0; i < NCTX; i++) {
			RDMT_POST(fi_trecv(s.rx[j], rt[i][j], SMALL, NULL, FI_ADDR_UNSPEC,
					   (uint64_t)(i << 8 | j), 0, &rtctx[i][j]));
			RDMT_POST(fi_recv(s.rx[j], rm[i][j], SMALL, NULL, FI_ADDR_UNSPEC,
					  &rmctx[i][j]));
		}
	}
	RDMT_POST(fi_trecv(s.rx[1], rbig, BIG, NULL, FI_ADDR_UNSPEC, 0x10000 | 3 << 8 | 1, 0,
			   &rbctx));
	/* and from a plain endpoint of the peer, to context 2 */
	RDMT_POST(fi_trecv(s.rx[2], rplain, sizeof(rplain), NULL, FI_ADDR_UNSPEC, 0x20000, 0,
			   &rpctx));
	/* the wrong directions */
	FDT_EXPECT(fi_recv(s.tx[0], rm[0][0], 8, NULL, FI_ADDR_UNSPEC, NULL), -FI_ENOSYS);
	FDT_EXPECT(fi_send(s.rx[0], tbuf[0][0], 8, NULL, s.peer, NULL), -FI_ENOSYS);
	FDT_EXPECT(fi_tsend(s.tx[0], tbuf[0][0], 8, NULL, fi_rx_addr(s.peer, 16, CTX_BITS), 1,
			    NULL), -FI_EINVAL);
	barrier(to_peer, from_peer);
	for (i = 0; i < NCTX; i++) {
		for (j = 0; j < NCTX; j++) {
			fi_addr_t dst = fi_rx_addr(s.peer, j, CTX_BITS);

			fdt_fill(tbuf[i][j], SMALL, seed_of(me, i, j, 0));
			fdt_fill(mbuf[i][j], SMALL, seed_of(me, i, j, 1));
			mbuf[i][j][0] = (uint8_t)i;	/* the untagged one names its sender */
			mbuf[i][j][1] = (uint8_t)j;
			RDMT_POST(fi_tsend(s.tx[i], tbuf[i][j], SMALL, NULL, dst,
					   (uint64_t)(i << 8 | j), &tctx[i][j]));
			RDMT_POST(fi_send(s.tx[i], mbuf[i][j], SMALL, NULL, dst, &mctx[i][j]));
		}
	}
	/* a plain endpoint on the same AV reaches the peer's context 2 too */
	FDT_OK(fi_endpoint(s.dom.domain, s.dom.info, &plain, NULL));
	pcq = rdmt_cq_open(&s.dom);
	FDT_OK(fi_ep_bind(plain, &pcq->cq->fid, FI_TRANSMIT | FI_RECV));
	FDT_OK(fi_ep_bind(plain, &s.av->fid, 0));
	FDT_OK(fi_enable(plain));
	fdt_fill(splain, sizeof(splain), seed_of(me, 9, 2, 3));
	RDMT_POST(fi_tsend(plain, splain, sizeof(splain), NULL, fi_rx_addr(s.peer, 2, CTX_BITS),
			   0x20000, &spctx));
	fdt_fill(big, BIG, seed_of(me, 3, 1, 2));
	RDMT_POST(fi_tsend(s.tx[3], big, BIG, NULL, fi_rx_addr(s.peer, 1, CTX_BITS),
			   0x10000 | 3 << 8 | 1, &bctx));

	/* every send on its own context's CQ */
	for (i = 0; i < NCTX; i++) {
		int want = 2 * NCTX + (i == 3), seen[NCTX][2] = { { 0 } }, sawbig = 0;

		for (int n = 0; n < want; n++) {
			rdmt_wait_ok(s.txcq[i], &c);
			FDT_ASSERT(c.e.flags & FI_SEND, "tx ctx %d: not a send", i);
			if (c.e.op_context == &bctx) {
				FDT_ASSERT(i == 3 && !sawbig, "the rendezvous on tx ctx %d", i);
				sawbig = 1;
				continue;
			}
			ret = -1;
			for (j = 0; j < NCTX; j++) {
				if (c.e.op_context == &tctx[i][j])
					ret = 0;
				else if (c.e.op_context == &mctx[i][j])
					ret = 1;
				if (ret >= 0)
					break;
			}
			FDT_ASSERT(ret >= 0 && j < NCTX, "tx ctx %d: a completion of another context", i);
			FDT_ASSERT(!seen[j][ret]++, "tx ctx %d: a send completed twice", i);
		}
	}
	rdmt_wait_ok(pcq, &c);
	FDT_ASSERT(c.e.op_context == &spctx && (c.e.flags & FI_SEND), "the plain endpoint's send");
	/* every message at exactly its receive context */
	for (j = 0; j < NCTX; j++) {
		int tagged = 0, untagged = 0, from[NCTX] = { 0 };
		int want = 2 * NCTX + (j == 1) + (j == 2);

		for (int n = 0; n < want; n++) {
			rdmt_wait_ok(s.rxcq[j], &c);
			if (c.e.op_context == &rpctx) {
				/* the peer's plain endpoint is not in our AV */
				FDT_ASSERT(j == 2 && c.src == FI_ADDR_NOTAVAIL, "the plain endpoint's "
					   "message at rx ctx %d, source %llu", j,
					   (unsigned long long)c.src);
				rdmt_check_recv(&c, &rpctx, FI_TAGGED | FI_RECV, sizeof(rplain), 0x20000);
				FDT_ASSERT(fdt_check(rplain, sizeof(rplain), seed_of(peer, 9, 2, 3)),
					   "the plain endpoint's bytes");
				continue;
			}
			FDT_ASSERT(c.src == s.peer, "rx ctx %d: source %llu, not the peer's SEP %llu",
				   j, (unsigned long long)c.src, (unsigned long long)s.peer);
			if (c.e.op_context == &rbctx) {
				FDT_ASSERT(j == 1, "the rendezvous at rx ctx %d", j);
				rdmt_check_recv(&c, &rbctx, FI_TAGGED | FI_RECV, BIG,
						0x10000 | 3 << 8 | 1);
				FDT_ASSERT(fdt_check(rbig, BIG, seed_of(peer, 3, 1, 2)), "rendezvous bytes");
				continue;
			}
			if (c.e.flags & FI_TAGGED) {
				i = (int)(c.e.tag >> 8);
				FDT_ASSERT(i >= 0 && i < NCTX && (int)(c.e.tag & 0xff) == j,
					   "rx ctx %d: tag 0x%llx", j, (unsigned long long)c.e.tag);
				rdmt_check_recv(&c, &rtctx[i][j], FI_TAGGED | FI_RECV, SMALL,
						(uint64_t)(i << 8 | j));
				FDT_ASSERT(fdt_check(rt[i][j], SMALL, seed_of(peer, i, j, 0)),
					   "rx ctx %d: tagged bytes from tx ctx %d", j, i);
				tagged++;
				continue;
			}
			/* untagged: take the receives in posting order */
			FDT_ASSERT(c.e.op_context == &rmctx[untagged][j],
				   "rx ctx %d: untagged completion out of order", j);
			{
				uint8_t *b = rm[untagged][j];
				uint8_t want_buf[SMALL];

				i = b[0];
				FDT_ASSERT(i < NCTX && b[1] == j && c.e.len == SMALL,
					   "rx ctx %d: untagged message for ctx %d from %d", j, b[1], i);
				FDT_ASSERT(!from[i]++, "rx ctx %d: two untagged from tx ctx %d", j, i);
				fdt_fill(want_buf, SMALL, seed_of(peer, i, j, 1));
				FDT_ASSERT(!memcmp(b + 2, want_buf + 2, SMALL - 2),
					   "rx ctx %d: untagged bytes from tx ctx %d", j, i);
			}
			untagged++;
		}
		FDT_ASSERT(tagged == NCTX && untagged == NCTX, "rx ctx %d: %d tagged %d untagged",
			   j, tagged, untagged);
	}
	barrier(to_peer, from_peer);
	for (j = 0; j < NCTX; j++) {
		rdmt_quiet(s.rxcq[j], j ? 0 : 200, "an extra receive completion");
		rdmt_quiet(s.txcq[j], 0, "an extra send completion");
	}
	barrier(to_peer, from_peer);
	FDT_OK(fi_close(&plain->fid));
	rdmt_cq_close(pcq);
	side_close(&s);
}

/* ---- round 2: a thread per context pair ---- */

struct worker {
	struct side *s;
	int i, me;
	const char *fail;
	pthread_t t;
};

static uint8_t *tsend[NCTX][TMSG], *trecv[NCTX][TMSG];
static struct fi_context tsctx[NCTX][TMSG], trctx[NCTX][TMSG];

static size_t tlen(int n)
{
	return n % 50 == 49 ? TBIG : TLEN;
}

/* Read both CQs of this thread's pair. Matching is in order (receive n
 * must hold message n: the seed says which), completions need not be (a
 * rendezvous completes after the eager messages behind it). */
static uint8_t sdone[NCTX][TMSG], rdone[NCTX][TMSG];

static const char *drain(struct worker *w, int *sent, int *rcvd)
{
	struct fi_cq_tagged_entry e[8];
	fi_addr_t src[8];
	ssize_t n;
	int peer = 1 - w->me;

	while ((n = fi_cq_read(w->s->txcq[w->i]->cq, e, 8)) > 0) {
		for (ssize_t k = 0; k < n; k++) {
			struct fi_context *c = e[k].op_context;
			long r = c - tsctx[w->i];

			if (r < 0 || r >= TMSG || sdone[w->i][r]++)
				return "a send completion not of this context, or twice";
			(*sent)++;
		}
	}
	if (n != -FI_EAGAIN)
		return "fi_cq_read (tx) failed";
	while ((n = fi_cq_readfrom(w->s->rxcq[w->i]->cq, e, 8, src)) > 0) {
		for (ssize_t k = 0; k < n; k++) {
			struct fi_context *c = e[k].op_context;
			long r = c - trctx[w->i];

			if (r < 0 || r >= TMSG || rdone[w->i][r]++)
				return "a receive completion not of this context, or twice";
			if (e[k].len != tlen((int)r) || e[k].tag != (uint64_t)w->i ||
			    src[k] != w->s->peer)
				return "receive completion: length, tag or source wrong";
			if (!fdt_check(trecv[w->i][r], tlen((int)r), seed_of(peer, w->i, (int)r, 5)))
				return "received bytes wrong";
			(*rcvd)++;
		}
	}
	if (n != -FI_EAGAIN)
		return "fi_cq_read (rx) failed";
	return NULL;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct side *s = w->s;
	int sent = 0, rcvd = 0, posted = 0;
	long end = rdmt_now_ms() + 30000;
	fi_addr_t dst = fi_rx_addr(s->peer, w->i, CTX_BITS);

	for (int n = 0; n < TMSG; n++) {
		tsend[w->i][n] = malloc(tlen(n));
		trecv[w->i][n] = malloc(tlen(n));
		if (!tsend[w->i][n] || !trecv[w->i][n]) {
			w->fail = "malloc";
			return NULL;
		}
		if (fi_trecv(s->rx[w->i], trecv[w->i][n], tlen(n), NULL, FI_ADDR_UNSPEC,
			     (uint64_t)w->i, 0, &trctx[w->i][n])) {
			w->fail = "fi_trecv";
			return NULL;
		}
		fdt_fill(tsend[w->i][n], tlen(n), seed_of(w->me, w->i, n, 5));
	}
	while (sent < TMSG || rcvd < TMSG) {
		while (posted < TMSG) {
			ssize_t r = fi_tsend(s->tx[w->i], tsend[w->i][posted], tlen(posted), NULL,
					     dst, (uint64_t)w->i, &tsctx[w->i][posted]);

			if (r == -FI_EAGAIN)
				break;
			if (r) {
				w->fail = "fi_tsend";
				return NULL;
			}
			posted++;
		}
		w->fail = drain(w, &sent, &rcvd);
		if (w->fail)
			return NULL;
		if (rdmt_now_ms() > end) {
			w->fail = "timed out";
			return NULL;
		}
	}
	return NULL;
}

static void round2(int to_peer, int from_peer, int me)
{
	struct side s;
	struct worker w[NCTX];
	int i;

	side_open(&s, FI_THREAD_SAFE, to_peer, from_peer);
	memset(sdone, 0, sizeof(sdone));
	memset(rdone, 0, sizeof(rdone));
	barrier(to_peer, from_peer);
	for (i = 0; i < NCTX; i++) {
		w[i] = (struct worker){ .s = &s, .i = i, .me = me };
		FDT_ASSERT(!pthread_create(&w[i].t, NULL, worker_run, &w[i]), "pthread_create");
	}
	for (i = 0; i < NCTX; i++) {
		pthread_join(w[i].t, NULL);
		FDT_ASSERT(!w[i].fail, "side %d thread %d: %s", me, i, w[i].fail);
	}
	/* the peer may still need us to progress its last sends' acks */
	rdmt_write_all(to_peer, "x", 1);
	{
		uint8_t t;
		long end = rdmt_now_ms() + 10000;
		int fl = fcntl(from_peer, F_GETFL);

		fcntl(from_peer, F_SETFL, fl | O_NONBLOCK);
		while (read(from_peer, &t, 1) != 1) {
			rdmt_progress();
			FDT_ASSERT(rdmt_now_ms() < end, "the peer never finished");
			usleep(1000);
		}
		fcntl(from_peer, F_SETFL, fl);
	}
	side_close(&s);
	for (i = 0; i < NCTX; i++) {
		for (int n = 0; n < TMSG; n++) {
			free(tsend[i][n]);
			free(trecv[i][n]);
		}
	}
}

static int child(int to_parent, int from_parent, void *arg)
{
	(void)arg;
	round1(to_parent, from_parent, 1);
	round2(to_parent, from_parent, 1);
	return 0;
}

int main(void)
{
	int to_child, from_child, rc;
	pid_t pid;

	(void)fdt_addr();	/* skip before forking */
	pid = rdmt_spawn(child, NULL, &to_child, &from_child);
	check_getinfo();
	round1(to_child, from_child, 0);
	printf("round 1 (addressing, one thread) passed\n");
	round2(to_child, from_child, 0);
	printf("round 2 (a thread per context) passed\n");
	rc = rdmt_reap(pid);
	FDT_ASSERT(rc == 0, "the other side failed (%d)", rc);
	return rdmt_pass("rdm_sep");
}
