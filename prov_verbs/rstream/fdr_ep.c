/* rstream endpoints: creation, options, enabling (the internal verbs
 * endpoint, CQ, EQ and the registered rings), close, and the data path:
 * fi_send / fi_recv with stream semantics, progress, credits, readiness.
 *
 * Locking: one mutex per endpoint guards the rings, the flow state and the
 * internal objects, whose own data-path locks may be compiled out
 * (FDV_THREAD_SAFE 0): everything that touches them holds ep->lock. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fd_enosys.h"
#include "fdr.h"
#include <fdv/fdv_msg.h>
#include <fdv/fdv_rma.h>

/* Work-request contexts carry what their completion needs, not a
 * pointer: a tag in the low two bits and a value above it. */
enum { FDR_CTX_RX = 1, FDR_CTX_DATA = 2, FDR_CTX_CTRL = 3 };

static void *fdr_ctx(unsigned tag, uint64_t val)
{
	return (void *)(uintptr_t)(val << 2 | tag);
}

static struct fdr_ep *fdr_ep_of(struct fid_ep *ep_fid)
{
	return fdv_container_of(ep_fid, struct fdr_ep, ep_fid);
}

static uint32_t fdr_load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void fdr_store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* ---- errors ---- */

/* The connection is unusable from now on; the first cause sticks. */
void fdr_set_error(struct fdr_ep *ep, int err)
{
	if (!ep->err) {
		ep->err = err;
		FD_INFO(FD_LOG_EP_DATA, "rstream connection failed: %s",
			fi_strerror(-err));
	}
	ep->qp_dead = true;
}

static void fdr_protocol_error(struct fdr_ep *ep, int why)
{
	FD_WARN(FD_LOG_EP_DATA, "rstream peer broke the protocol: %s; "
		"connection dropped", fdr_bad_str(why));
	fdr_set_error(ep, -FI_EIO);
	if (ep->iep)
		fi_shutdown(ep->iep, 0);
}

/* ---- readiness ----
 *
 * The wait fd (FI_GETWAIT) is an epoll set of the CQ's completion
 * channel, the internal EQ and an eventfd. The channel and the EQ wake a
 * poller when something new arrives; the eventfd covers what another
 * thread's progress already consumed: it is kept readable while a caller
 * that got -FI_EAGAIN could now make progress, so a sender blocked on
 * credits wakes even when the receiving thread reaped the credit. */

static bool fdr_terminal(const struct fdr_ep *ep)
{
	return ep->err || ep->local_shutdown || ep->flow.fin_rcvd ||
	       ep->state == FDR_CLOSED;
}

static bool fdr_tx_ready(const struct fdr_ep *ep)
{
	if (fdr_terminal(ep))
		return true;
	return ep->state == FDR_CONNECTED && fdr_flow_data_ok(&ep->flow) &&
	       fdr_flow_tx_room(&ep->flow) > 0;
}

static bool fdr_rx_ready(const struct fdr_ep *ep)
{
	if (fdr_terminal(ep))
		return true;
	return ep->state == FDR_CONNECTED && fdr_flow_rx_avail(&ep->flow) > 0;
}

void fdr_wait_update(struct fdr_ep *ep)
{
	bool want = (ep->tx_waiting && fdr_tx_ready(ep)) ||
		    (ep->rx_waiting && fdr_rx_ready(ep));
	uint64_t v = 1;

	if (want == ep->efd_set)
		return;
	if (want ? write(ep->efd, &v, sizeof(v)) < 0 : read(ep->efd, &v, sizeof(v)) < 0)
		FD_DBG(FD_LOG_EP_DATA, "eventfd: %s", strerror(errno));
	ep->efd_set = want;
}

/* ---- posting ---- */

static void fdr_post_failed(struct fdr_ep *ep, ssize_t ret, const char *what)
{
	FD_WARN(FD_LOG_EP_DATA, "rstream: posting %s failed: %s", what,
		fi_strerror((int)-ret));
	fdr_set_error(ep, ret == -FI_ENOTCONN ? -FI_ECONNRESET : (int)ret);
}

static int fdr_post_rx(struct fdr_ep *ep, uint32_t slot)
{
	ssize_t ret;

	if (ep->iwarp)
		ret = fdv_msg_recv(ep->iep, ep->rx_slots + 4 * (size_t)slot, 4,
				   ep->desc, 0, fdr_ctx(FDR_CTX_RX, slot));
	else
		ret = fdv_msg_recv(ep->iep, NULL, 0, NULL, 0,
				   fdr_ctx(FDR_CTX_RX, slot));
	return (int)ret;
}

static int fdr_post_word(struct fdr_ep *ep, uint32_t word)
{
	ssize_t ret;

	if (ep->iwarp) {
		uint8_t *slot = ep->tx_slots + 4 * (size_t)(ep->tx_slot_next++ % ep->tx_size);

		fdr_store_be32(slot, word);
		ret = fdv_msg_send(ep->iep, slot, 4, ep->desc, 0,
				   fdr_ctx(FDR_CTX_CTRL, 0));
	} else {
		ret = fdv_msg_senddata(ep->iep, NULL, 0, NULL, word, 0,
				       fdr_ctx(FDR_CTX_CTRL, 0));
	}
	if (ret) {
		fdr_post_failed(ep, ret, "a control message");
		return (int)ret;
	}
	ep->sq_free--;
	return 0;
}

/* Report credits and freed ring space while it is due and allowed. */
static void fdr_flush_ctrl(struct fdr_ep *ep)
{
	while (ep->state == FDR_CONNECTED && !ep->qp_dead &&
	       !ep->local_shutdown && ep->sq_free > 0 &&
	       fdr_flow_ctrl_due(&ep->flow) && fdr_flow_ctrl_ok(&ep->flow, 0)) {
		if (fdr_post_word(ep, fdr_flow_ctrl_take(&ep->flow, 0)))
			return;
	}
}

static int fdr_post_fin(struct fdr_ep *ep)
{
	if (ep->sq_free == 0 || !fdr_flow_ctrl_ok(&ep->flow, 1))
		return -FI_EAGAIN;
	return fdr_post_word(ep, fdr_flow_ctrl_take(&ep->flow, 1));
}

/* ---- completions ---- */

static void fdr_handle_recv(struct fdr_ep *ep, const struct fi_cq_data_entry *e)
{
	uintptr_t ctx = (uintptr_t)e->op_context;
	uint32_t slot = (uint32_t)(ctx >> 2);
	enum fdr_rx_kind kind;
	struct fdr_msg m;
	uint32_t word;
	int why;

	if ((ctx & 3) != FDR_CTX_RX || slot >= ep->rx_size) {
		fdr_protocol_error(ep, FDR_BAD_KIND);
		return;
	}
	if (e->flags & FI_REMOTE_WRITE)
		kind = FDR_RX_WRITE_IMM;
	else if (e->flags & FI_REMOTE_CQ_DATA)
		kind = FDR_RX_SEND_IMM;
	else
		kind = FDR_RX_SEND;
	word = kind == FDR_RX_SEND ? fdr_load_be32(ep->rx_slots + 4 * (size_t)slot) :
				     (uint32_t)e->data;
	why = fdr_msg_decode(&m, ep->iwarp, kind,
			     e->len > UINT32_MAX ? UINT32_MAX : (uint32_t)e->len, word);
	if (!why)
		why = fdr_flow_rx_apply(&ep->flow, &m);
	if (why) {
		fdr_protocol_error(ep, why);
		return;
	}
	/* Every receive goes straight back: the credit it stands for is
	 * returned to the peer with the next control message. */
	if (!m.fin && !ep->qp_dead) {
		int ret = fdr_post_rx(ep, slot);

		if (ret)
			fdr_post_failed(ep, ret, "a receive");
	}
}

static void fdr_handle_comp(struct fdr_ep *ep, const struct fi_cq_data_entry *e)
{
	uintptr_t ctx = (uintptr_t)e->op_context;

	if (e->flags & (FI_RECV | FI_REMOTE_WRITE)) {
		fdr_handle_recv(ep, e);
		return;
	}
	ep->sq_free++;
	if ((ctx & 3) == FDR_CTX_DATA &&
	    fdr_flow_tx_complete(&ep->flow, (uint32_t)(ctx >> 2)))
		fdr_protocol_error(ep, FDR_BAD_FREED);	/* our own bug */
}

static void fdr_handle_comp_err(struct fdr_ep *ep, const struct fi_cq_err_entry *err)
{
	/* Flushed requests after an orderly end are expected. */
	if (err->err == FI_ECANCELED &&
	    (ep->local_shutdown || ep->flow.fin_rcvd || ep->qp_dead)) {
		ep->qp_dead = true;
		return;
	}
	FD_INFO(FD_LOG_EP_DATA, "rstream: completion error %d (%s), status %d",
		err->err, fi_strerror(err->err), err->prov_errno);
	if (err->err == FI_ECANCELED || err->err == FI_ETIMEDOUT ||
	    err->err == FI_EREMOTEIO)
		fdr_set_error(ep, -FI_ECONNRESET);
	else
		fdr_set_error(ep, -FI_EIO);
}

static void fdr_pump_cq(struct fdr_ep *ep)
{
	struct fi_cq_data_entry e[FDV_CQ_BATCH];
	ssize_t n;

	if (!ep->icq)
		return;
	for (;;) {
		n = fdv_cq_read(ep->icq, e, FDV_CQ_BATCH);
		if (n > 0) {
			for (ssize_t i = 0; i < n; i++)
				fdr_handle_comp(ep, &e[i]);
			continue;
		}
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err;

			memset(&err, 0, sizeof(err));
			if (fdv_cq_readerr(ep->icq, &err, 0) == 1) {
				fdr_handle_comp_err(ep, &err);
				continue;
			}
		} else if (n != -FI_EAGAIN) {
			fdr_set_error(ep, -FI_EIO);
		}
		break;
	}
}

void fdr_drain_after_close(struct fdr_ep *ep)
{
	ep->qp_dead = true;
	if (ep->flow.rx_ring)
		fdr_pump_cq(ep);
}

/* Drive everything that can move without the caller's buffers. Before the
 * connection is up the CQ is left alone: completions (the peer's first
 * data) can only be understood once the peer's ring is known. */
void fdr_progress(struct fdr_ep *ep)
{
	if (ep->state == FDR_CONNECTING)
		fdr_ep_pump_eq(ep);
	if (ep->state == FDR_CONNECTED || (ep->state == FDR_CLOSED && ep->flow.rx_ring)) {
		fdr_pump_cq(ep);
		fdr_flush_ctrl(ep);
	}
	fdr_wait_update(ep);
}

/* Nothing can move: make sure the wait fd will turn readable when
 * something does. 0: armed and nothing pending; -FI_EAGAIN: completions
 * came in meanwhile, try again. */
static int fdr_arm(struct fdr_ep *ep)
{
	enum fdr_state state = ep->state;
	int err = ep->err, ret = 0;

	/* A connection event changes the answer: look again at once. */
	fdr_ep_pump_eq(ep);
	if (ep->state != state || ep->err != err)
		return -FI_EAGAIN;
	if (ep->icq)
		ret = fdv_cq_trywait(FDV_OBJ(struct fdv_cq_full, cq.cq_fid, ep->icq));
	return ret == -FI_EAGAIN ? -FI_EAGAIN : 0;
}

/* ---- the data path ---- */

static size_t fdr_iov_total(const struct iovec *iov, size_t count)
{
	size_t total = 0;

	for (size_t i = 0; i < count; i++) {
		if (iov[i].iov_len > SIZE_MAX - total)
			return SIZE_MAX;
		total += iov[i].iov_len;
	}
	return total;
}

static int fdr_iov_ok(const struct iovec *iov, size_t count)
{
	if (count > FDR_IOV_LIMIT || (count && !iov))
		return 0;
	for (size_t i = 0; i < count; i++)
		if (iov[i].iov_len && !iov[i].iov_base)
			return 0;
	return 1;
}

/* Gather n bytes starting `skip` bytes into the iov. */
static void fdr_iov_gather(uint8_t *dst, const struct iovec *iov, size_t count,
			   size_t skip, size_t n)
{
	for (size_t i = 0; i < count && n; i++) {
		size_t len = iov[i].iov_len, take;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		take = len - skip < n ? len - skip : n;
		memcpy(dst, (const uint8_t *)iov[i].iov_base + skip, take);
		dst += take;
		n -= take;
		skip = 0;
	}
}

static ssize_t fdr_not_connected(const struct fdr_ep *ep)
{
	switch (ep->state) {
	case FDR_CONNECTING:
		return -FI_EAGAIN;	/* the FI_CONNECTED event is on its way */
	case FDR_CLOSED:
		return ep->err ? ep->err : -FI_ESHUTDOWN;
	default:
		return -FI_ENOTCONN;
	}
}

static ssize_t fdr_post_data(struct fdr_ep *ep, uint32_t len, uint32_t tx_off,
			     uint32_t peer_off)
{
	uint64_t raddr = ep->peer.ring_addr + peer_off;
	uint8_t *buf = ep->tx_ring + tx_off;
	ssize_t ret;

	if (!ep->iwarp) {
		ret = fdv_rma_writedata(ep->iep, buf, len, ep->desc, 0, 0, raddr,
					ep->peer.rkey, fdr_ctx(FDR_CTX_DATA, len));
		if (!ret)
			ep->sq_free--;
		return ret;
	}
	ret = fdv_rma_write(ep->iep, buf, len, ep->desc, 0, raddr, ep->peer.rkey,
			    fdr_ctx(FDR_CTX_DATA, len));
	if (ret)
		return ret;
	ep->sq_free--;
	/* The length message is what tells the peer; RC keeps it behind
	 * the write it describes. Its credit is the data's credit. */
	{
		uint8_t *slot = ep->tx_slots + 4 * (size_t)(ep->tx_slot_next++ % ep->tx_size);

		fdr_store_be32(slot, fdr_word_data(len));
		ret = fdv_msg_send(ep->iep, slot, 4, ep->desc, 0,
				   fdr_ctx(FDR_CTX_CTRL, 0));
	}
	if (ret)
		return ret;	/* the write went alone: fatal for the caller */
	ep->sq_free--;
	return 0;
}

static ssize_t fdr_try_send(struct fdr_ep *ep, const struct iovec *iov,
			    size_t count, size_t total, int peek)
{
	uint32_t need = ep->iwarp ? 2 : 1;
	size_t done = 0;

	if (ep->err)
		return ep->err;
	if (ep->local_shutdown || ep->flow.fin_rcvd)
		return -FI_ESHUTDOWN;
	if (ep->state != FDR_CONNECTED)
		return fdr_not_connected(ep);
	if (peek) {
		uint64_t room = fdr_flow_data_ok(&ep->flow) && ep->sq_free > need ?
				fdr_flow_tx_room(&ep->flow) : 0;

		if (!room)
			return -FI_EAGAIN;
		if (total && total < room)
			room = total;
		return room > SSIZE_MAX ? SSIZE_MAX : (ssize_t)room;
	}
	if (!total)
		return 0;
	/* One control slot stays free in the send queue. */
	while (done < total && fdr_flow_data_ok(&ep->flow) && ep->sq_free > need) {
		uint32_t tx_off, peer_off, len;
		ssize_t ret;

		len = fdr_flow_tx_piece(&ep->flow, total - done, &tx_off, &peer_off);
		if (!len)
			break;
		fdr_iov_gather(ep->tx_ring + tx_off, iov, count, done, len);
		ret = fdr_post_data(ep, len, tx_off, peer_off);
		if (ret) {
			fdr_post_failed(ep, ret, "data");
			return done ? (ssize_t)done : ep->err;
		}
		fdr_flow_tx_commit(&ep->flow, len);
		done += len;
	}
	return done ? (ssize_t)done : -FI_EAGAIN;
}

static ssize_t fdr_try_recv(struct fdr_ep *ep, const struct iovec *iov,
			    size_t count, size_t total, int peek)
{
	uint64_t avail = ep->flow.rx_ring ? fdr_flow_rx_avail(&ep->flow) : 0;
	uint32_t off;
	size_t n, done = 0;

	if (!avail) {
		if (ep->flow.fin_rcvd || ep->local_shutdown)
			return 0;	/* end of stream */
		if (ep->err)
			return ep->err;
		if (ep->state != FDR_CONNECTED)
			return fdr_not_connected(ep);
		return total || peek ? -FI_EAGAIN : 0;
	}
	if (!total)
		return peek ? (avail > SSIZE_MAX ? SSIZE_MAX : (ssize_t)avail) : 0;
	n = avail < total ? (size_t)avail : total;
	off = fdr_flow_rx_off(&ep->flow);
	for (size_t i = 0; i < count && done < n; i++) {
		size_t take = iov[i].iov_len < n - done ? iov[i].iov_len : n - done;

		if (!take)
			continue;
		fdr_ring_get(ep->rx_ring, ep->flow.rx_ring,
			     (uint32_t)((off + done) % ep->flow.rx_ring),
			     iov[i].iov_base, take);
		done += take;
	}
	if (!peek) {
		fdr_flow_rx_consume(&ep->flow, n);
		fdr_flush_ctrl(ep);
	}
	return (ssize_t)n;
}

typedef ssize_t (*fdr_try_fn)(struct fdr_ep *ep, const struct iovec *iov,
			      size_t count, size_t total, int peek);

static ssize_t fdr_stream_op(struct fid_ep *ep_fid, const struct iovec *iov,
			     size_t count, uint64_t flags, int tx)
{
	struct fdr_ep *ep;
	fdr_try_fn try_op = tx ? fdr_try_send : fdr_try_recv;
	size_t total;
	ssize_t ret;

	if (!ep_fid)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EBADFLAGS;
	if (!fdr_iov_ok(iov, count))
		return -FI_EINVAL;
	total = fdr_iov_total(iov, count);
	if (total > SSIZE_MAX)
		total = SSIZE_MAX;
	ep = fdr_ep_of(ep_fid);
	pthread_mutex_lock(&ep->lock);
	/* A few rounds at most: each arm that finds new completions
	 * earns another look, but a caller that got nothing is told so
	 * promptly; the wait fd is armed either way. */
	for (int round = 0;; round++) {
		fdr_progress(ep);
		ret = try_op(ep, iov, count, total, (flags & FI_PEEK) != 0);
		if (ret != -FI_EAGAIN || round == 3)
			break;
		if (!fdr_arm(ep))
			break;
	}
	if (tx)
		ep->tx_waiting = ret == -FI_EAGAIN;
	else
		ep->rx_waiting = ret == -FI_EAGAIN;
	fdr_wait_update(ep);
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

ssize_t fdr_stream_send(struct fid_ep *ep, const struct iovec *iov,
			size_t count, uint64_t flags)
{
	return fdr_stream_op(ep, iov, count, flags, 1);
}

ssize_t fdr_stream_recv(struct fid_ep *ep, const struct iovec *iov,
			size_t count, uint64_t flags)
{
	return fdr_stream_op(ep, iov, count, flags, 0);
}

/* ---- waiting inside the library (fi_shutdown, close) ---- */

static int fdr_ms_left(const struct timespec *deadline)
{
	struct timespec now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (deadline->tv_sec - now.tv_sec) * 1000 +
	     (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : (int)ms;
}

/* Wait (lock dropped) until the wait fd fires or ms pass. */
static void fdr_wait_a_little(struct fdr_ep *ep, int ms)
{
	struct pollfd pfd = { .fd = ep->waitfd, .events = POLLIN };

	if (fdr_arm(ep))
		return;
	pthread_mutex_unlock(&ep->lock);
	if (poll(&pfd, 1, ms < 50 ? ms : 50) < 0 && errno != EINTR)
		FD_DBG(FD_LOG_EP_DATA, "poll: %s", strerror(errno));
	pthread_mutex_lock(&ep->lock);
}

/* Our side of the stream ends: a FIN behind all data, once it has a
 * credit; then, once everything sent has completed, the verbs connection
 * goes. A peer that never returns a credit gets a plain disconnect after
 * FDR_FIN_WAIT_MS, which it reads as a reset. Lock held. */
int fdr_ep_shutdown_locked(struct fdr_ep *ep)
{
	struct timespec deadline;

	if (ep->local_shutdown)
		return 0;
	if (ep->state != FDR_CONNECTED)
		return ep->state == FDR_CLOSED ? 0 : -FI_ENOTCONN;
	ep->local_shutdown = true;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += FDR_FIN_WAIT_MS / 1000;
	deadline.tv_nsec += (long)(FDR_FIN_WAIT_MS % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	while (!ep->qp_dead && !ep->cm_closed && !ep->flow.fin_sent) {
		fdr_pump_cq(ep);
		if (ep->qp_dead || !fdr_post_fin(ep) || !fdr_ms_left(&deadline))
			break;
		fdr_wait_a_little(ep, fdr_ms_left(&deadline));
	}
	while (ep->flow.fin_sent && !ep->qp_dead && !ep->cm_closed &&
	       ep->sq_free < ep->tx_size && fdr_ms_left(&deadline)) {
		fdr_pump_cq(ep);
		if (ep->sq_free < ep->tx_size)
			fdr_wait_a_little(ep, fdr_ms_left(&deadline));
	}
	if (!ep->flow.fin_sent)
		FD_INFO(FD_LOG_EP_CTRL, "rstream: no credit for FIN; the peer "
			"will see a reset");
	if (ep->iep && !ep->cm_closed)
		fi_shutdown(ep->iep, 0);
	ep->state = FDR_CLOSED;
	fdr_wait_update(ep);
	return 0;
}

/* ---- options ---- */

static int fdr_opt_value(const void *optval, size_t optlen, size_t *out)
{
	if (!optval)
		return -FI_EINVAL;
	/* size_t is what the man page says; int is what most callers
	 * pass. Both are taken, told apart by the length. */
	if (optlen == sizeof(size_t)) {
		memcpy(out, optval, sizeof(size_t));
		return 0;
	}
	if (optlen == sizeof(int)) {
		int v;

		memcpy(&v, optval, sizeof(v));
		if (v < 0)
			return -FI_EINVAL;
		*out = (size_t)v;
		return 0;
	}
	return -FI_EINVAL;
}

static int fdr_opt_put(void *optval, size_t *optlen, size_t v)
{
	if (!optval || !optlen)
		return -FI_EINVAL;
	if (*optlen >= sizeof(size_t)) {
		memcpy(optval, &v, sizeof(v));
		*optlen = sizeof(size_t);
		return 0;
	}
	if (*optlen == sizeof(int)) {
		int i = v > INT32_MAX ? INT32_MAX : (int)v;

		memcpy(optval, &i, sizeof(i));
		return 0;
	}
	*optlen = sizeof(size_t);
	return -FI_ETOOSMALL;
}

static int fdr_ep_setopt(fid_t fid, int level, int optname,
			 const void *optval, size_t optlen)
{
	struct fdr_ep *ep = fdr_ep_of(fdv_container_of(fid, struct fid_ep, fid));
	size_t v;
	int ret;

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_SEND_BUF_SIZE:
	case FI_OPT_RECV_BUF_SIZE:
	case FI_OPT_TX_SIZE:
	case FI_OPT_RX_SIZE:
		break;
	case FI_OPT_CM_DATA_SIZE:
		return -FI_ENOSYS;	/* fixed by the transport */
	default:
		return -FI_ENOPROTOOPT;
	}
	ret = fdr_opt_value(optval, optlen, &v);
	if (ret)
		return ret;
	if (optname == FI_OPT_SEND_BUF_SIZE || optname == FI_OPT_RECV_BUF_SIZE) {
		if (v < FDR_RING_MIN || v > FDR_RING_MAX)
			return -FI_EINVAL;
	} else if (v < FDR_MIN_QUEUE_SIZE || v > FDR_MAX_QUEUE_SIZE ||
		   v > (size_t)ep->domain->dev_attr.max_qp_wr) {
		return -FI_EINVAL;
	}
	pthread_mutex_lock(&ep->lock);
	if (ep->state != FDR_IDLE) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_EOPBADSTATE;	/* the rings exist already */
	}
	switch (optname) {
	case FI_OPT_SEND_BUF_SIZE:
		ep->tx_buf = (uint32_t)v;
		break;
	case FI_OPT_RECV_BUF_SIZE:
		ep->rx_buf = (uint32_t)v;
		break;
	case FI_OPT_TX_SIZE:
		ep->tx_size = (uint32_t)v;
		break;
	default:
		ep->rx_size = (uint32_t)v;
		break;
	}
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

static int fdr_ep_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	struct fdr_ep *ep = fdr_ep_of(fdv_container_of(fid, struct fid_ep, fid));

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_SEND_BUF_SIZE:
		return fdr_opt_put(optval, optlen, ep->tx_buf);
	case FI_OPT_RECV_BUF_SIZE:
		return fdr_opt_put(optval, optlen, ep->rx_buf);
	case FI_OPT_TX_SIZE:
		return fdr_opt_put(optval, optlen, ep->tx_size);
	case FI_OPT_RX_SIZE:
		return fdr_opt_put(optval, optlen, ep->rx_size);
	case FI_OPT_CM_DATA_SIZE:
		return fdr_opt_put(optval, optlen, FDR_CM_DATA_MAX);
	default:
		return -FI_ENOPROTOOPT;
	}
}

static struct fi_ops_ep fdr_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fd_no_ep_cancel,
	.getopt = fdr_ep_getopt,
	.setopt = fdr_ep_setopt,
	.tx_ctx = fd_no_ep_tx_ctx,
	.rx_ctx = fd_no_ep_rx_ctx,
	.rx_size_left = fd_no_ep_rx_size_left,
	.tx_size_left = fd_no_ep_tx_size_left,
};

/* ---- enable ---- */

static size_t fdr_align(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static int fdr_ep_enable(struct fdr_ep *ep)
{
	struct fdv_msg_ep *core = FDV_OBJ(struct fdv_msg_ep, ep.ep_fid, ep->iep);
	struct fi_cq_attr cq_attr;
	struct epoll_event ev;
	size_t tx_at, rx_at, rxs_at, txs_at;
	int ret, fd;

	if (ep->state != FDR_IDLE)
		return -FI_EOPBADSTATE;
	if (!ep->ueq)
		return -FI_ENOEQ;

	/* One region, one registration: [tx ring | rx ring | receive
	 * slots | send slots], the slots holding iWARP's 4-byte words. */
	tx_at = 0;
	rx_at = fdr_align(tx_at + ep->tx_buf, 64);
	rxs_at = fdr_align(rx_at + ep->rx_buf, 64);
	txs_at = fdr_align(rxs_at + 4 * (size_t)ep->rx_size, 64);
	ep->region_len = fdr_align(txs_at + 4 * (size_t)ep->tx_size, 4096);
	if (posix_memalign((void **)&ep->region, 4096, ep->region_len)) {
		ep->region = NULL;
		return -FI_ENOMEM;
	}
	memset(ep->region, 0, ep->region_len);
	ep->tx_ring = ep->region + tx_at;
	ep->rx_ring = ep->region + rx_at;
	ep->rx_slots = ep->region + rxs_at;
	ep->tx_slots = ep->region + txs_at;
	ret = fdv_mr_ops.reg(&ep->domain->domain_fid.fid, ep->region,
			     ep->region_len, FI_SEND | FI_RECV | FI_WRITE |
			     FI_REMOTE_WRITE, 0, 0, 0, &ep->imr, NULL);
	if (ret)
		goto err;
	ep->desc = fi_mr_desc(ep->imr);

	memset(&cq_attr, 0, sizeof(cq_attr));
	cq_attr.size = (size_t)ep->tx_size + ep->rx_size + 8;
	cq_attr.format = FI_CQ_FORMAT_DATA;
	cq_attr.wait_obj = FI_WAIT_FD;
	ret = fdv_cq_open(&ep->domain->domain_fid, &cq_attr, &ep->icq, ep);
	if (ret)
		goto err;
	ret = fi_ep_bind(ep->iep, &ep->icq->fid, FI_TRANSMIT | FI_RECV);
	if (ret)
		goto err;
	core->info->tx_attr->size = ep->tx_size;
	core->info->rx_attr->size = ep->rx_size;
	ret = fi_enable(ep->iep);
	if (ret)
		goto err;
	ret = fi_control(&ep->icq->fid, FI_GETWAIT, &fd);
	if (ret)
		goto err;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	if (epoll_ctl(ep->waitfd, EPOLL_CTL_ADD, fd, &ev)) {
		ret = -fdv_errno_to_fi(errno);
		goto err;
	}
	/* Every credit the peer will be given is a receive posted now. */
	for (uint32_t i = 0; i < ep->rx_size; i++) {
		ret = fdr_post_rx(ep, i);
		if (ret)
			goto err;
	}
	ep->sq_free = ep->tx_size;
	ep->state = FDR_ENABLED;
	return 0;
err:
	/* What was created stays for close to release; the endpoint
	 * cannot be enabled twice. */
	FD_WARN(FD_LOG_EP_CTRL, "rstream: enabling the endpoint failed: %s",
		fi_strerror(-ret));
	ep->state = FDR_CLOSED;
	return ret;
}

/* ---- fid ops ---- */

static int fdr_ep_control(struct fid *fid, int command, void *arg)
{
	struct fdr_ep *ep = fdr_ep_of(fdv_container_of(fid, struct fid_ep, fid));
	int ret;

	switch (command) {
	case FI_ENABLE:
		pthread_mutex_lock(&ep->lock);
		ret = fdr_ep_enable(ep);
		pthread_mutex_unlock(&ep->lock);
		return ret;
	case FI_GETWAIT:
		if (!arg)
			return -FI_EINVAL;
		*(int *)arg = ep->waitfd;
		return 0;
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		*(enum fi_wait_obj *)arg = FI_WAIT_FD;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static int fdr_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fdr_ep *ep = fdr_ep_of(fdv_container_of(fid, struct fid_ep, fid));
	struct fdv_eq *eq, *ieq;
	int ret;

	if (!bfid)
		return -FI_EINVAL;
	switch (bfid->fclass) {
	case FI_CLASS_EQ:
		break;
	case FI_CLASS_CQ:
	case FI_CLASS_CNTR:
	case FI_CLASS_SRX_CTX:
	case FI_CLASS_STX_CTX:
		/* A stream reports nothing per operation. */
		return -FI_ENOSYS;
	default:
		return -FI_EINVAL;
	}
	if (flags)
		return -FI_EBADFLAGS;
	eq = FDV_OBJ(struct fdv_eq, eq_fid.fid, bfid);
	ieq = FDV_OBJ(struct fdv_eq, eq_fid, ep->ieq);
	pthread_mutex_lock(&ep->lock);
	if (ep->ueq || ep->state != FDR_IDLE) {
		pthread_mutex_unlock(&ep->lock);
		return ep->ueq ? -FI_EINVAL : -FI_EOPBADSTATE;
	}
	/* Reading the user's EQ runs our translation of the internal one,
	 * and the internal EQ's fd wakes the user's waiters. */
	ret = fdv_eq_add_hook(eq, fdr_ep_eq_hook, ep, ieq->epfd);
	if (!ret) {
		ep->ueq = eq;
		atomic_fetch_add(&eq->refs, 1);
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

static int fdr_ep_close(struct fid *fid)
{
	struct fdr_ep *ep = fdr_ep_of(fdv_container_of(fid, struct fid_ep, fid));

	pthread_mutex_lock(&ep->lock);
	/* Closing a connected stream ends it in order, as close(2) does. */
	if (ep->state == FDR_CONNECTED)
		fdr_ep_shutdown_locked(ep);
	pthread_mutex_unlock(&ep->lock);
	if (ep->ueq) {
		fdv_eq_del_hook(ep->ueq, ep);
		fdv_eq_forget(ep->ueq, &ep->ep_fid.fid);
		atomic_fetch_sub(&ep->ueq->refs, 1);
	}
	if (ep->iep)
		fi_close(&ep->iep->fid);
	if (ep->imr)
		fi_close(&ep->imr->fid);
	if (ep->icq)
		fi_close(&ep->icq->fid);
	if (ep->ieq)
		fi_close(&ep->ieq->fid);
	free(ep->region);
	if (ep->efd >= 0)
		close(ep->efd);
	if (ep->waitfd >= 0)
		close(ep->waitfd);
	atomic_fetch_sub(&ep->domain->refs, 1);
	fi_freeinfo(ep->info);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
	return 0;
}

static struct fi_ops fdr_ep_fid_ops = {
	.size = sizeof(struct fi_ops),
	.close = fdr_ep_close,
	.bind = fdr_ep_bind,
	.control = fdr_ep_control,
	.ops_open = fd_no_fid_ops_open,
	.tostr = NULL,
	.ops_set = NULL,
};

/* ---- creation ---- */

static uint32_t fdr_queue_size(size_t asked)
{
	if (!asked)
		return FDR_DEF_QUEUE_SIZE;
	if (asked < FDR_MIN_QUEUE_SIZE)
		return FDR_MIN_QUEUE_SIZE;
	return asked > FDR_MAX_QUEUE_SIZE ? FDR_MAX_QUEUE_SIZE : (uint32_t)asked;
}

int fdr_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep_out, void *context)
{
	struct fdr_connreq *req = NULL;
	struct fdv_domain *dom;
	struct fi_info *core = NULL;
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_FD };
	struct epoll_event ev;
	struct fdr_ep *ep;
	int ret;

	if (!domain || !info || !ep_out)
		return -FI_EINVAL;
	if (!info->ep_attr || info->ep_attr->type != FI_EP_SOCK_STREAM)
		return -FI_EINVAL;
	if (info->handle) {
		req = fdr_connreq_of(info->handle);
		if (!req)
			return -FI_EINVAL;	/* not one of our connection requests */
	}
	dom = FDV_OBJ(struct fdv_domain, domain_fid, domain);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	pthread_mutex_init(&ep->lock, NULL);
	ep->domain = dom;
	ep->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ep->waitfd = epoll_create1(EPOLL_CLOEXEC);
	ep->info = fi_dupinfo(info);
	if (ep->efd < 0 || ep->waitfd < 0) {
		ret = -fdv_errno_to_fi(errno);
		goto err;
	}
	if (!ep->info) {
		ret = -FI_ENOMEM;
		goto err;
	}
	ep->info->handle = NULL;
	ep->iwarp = fdr_info_iwarp(info);
	ep->tx_buf = FDR_DEF_BUF_SIZE;
	ep->rx_buf = FDR_DEF_BUF_SIZE;
	ep->tx_size = fdr_queue_size(info->tx_attr ? info->tx_attr->size : 0);
	ep->rx_size = fdr_queue_size(info->rx_attr ? info->rx_attr->size : 0);
	if (ep->tx_size > (uint32_t)dom->dev_attr.max_qp_wr)
		ep->tx_size = (uint32_t)dom->dev_attr.max_qp_wr;
	if (ep->rx_size > (uint32_t)dom->dev_attr.max_qp_wr)
		ep->rx_size = (uint32_t)dom->dev_attr.max_qp_wr;

	ret = fdv_eq_open(&dom->fabric->fabric_fid, &eq_attr, &ep->ieq, ep);
	if (ret)
		goto err;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	if (epoll_ctl(ep->waitfd, EPOLL_CTL_ADD, ep->efd, &ev) ||
	    epoll_ctl(ep->waitfd, EPOLL_CTL_ADD,
		      FDV_OBJ(struct fdv_eq, eq_fid, ep->ieq)->epfd, &ev)) {
		ret = -fdv_errno_to_fi(errno);
		goto err;
	}

	if (req) {
		/* The passive side: the verbs endpoint adopts the request. */
		core = req->core_info;
		req->core_info = NULL;
		ep->peer = req->peer;
		ep->passive = true;
	} else {
		core = fdr_core_info(info);
		if (!core) {
			ret = -FI_ENOMEM;
			goto err;
		}
	}
	ret = fdv_ep_open(domain, core, &ep->iep, ep);
	if (ret) {
		if (req)
			req->core_info = core;	/* still the user's to reject */
		else
			fi_freeinfo(core);
		goto err;
	}
	fi_freeinfo(core);
	if (req) {
		/* Consumed: the verbs endpoint owns the request's id now. */
		free(req);
		info->handle = NULL;
	}
	ret = fi_ep_bind(ep->iep, &ep->ieq->fid, 0);
	if (ret)
		goto err;

	ep->kind = FDV_EP_KIND_STREAM;
	ep->state = FDR_IDLE;
	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &fdr_ep_fid_ops;
	ep->ep_fid.ops = &fdr_ep_ops;
	ep->ep_fid.cm = &fdr_ep_cm_ops;
	ep->ep_fid.msg = &fdv_rstream_ops_msg;
	ep->ep_fid.rma = &fdv_rstream_ops_rma;
	ep->ep_fid.atomic = &fdv_rstream_ops_atomic;
	ep->ep_fid.tagged = &fdv_rstream_ops_tagged;
	ep->ep_fid.collective = &fdv_rstream_ops_collective;
	atomic_fetch_add(&dom->refs, 1);
	*ep_out = &ep->ep_fid;
	return 0;
err:
	if (ep->iep)
		fi_close(&ep->iep->fid);
	if (ep->ieq)
		fi_close(&ep->ieq->fid);
	if (ep->efd >= 0)
		close(ep->efd);
	if (ep->waitfd >= 0)
		close(ep->waitfd);
	fi_freeinfo(ep->info);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
	return ret;
}
