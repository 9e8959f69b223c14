/* rstream endpoints, the stream data path: fi_send / fi_recv with stream
 * semantics, progress (the internal CQ and EQ), credits, readiness, and the
 * orderly end (fi_shutdown). Creation, options, enabling and close are in
 * fdr_ep.c.
 *
 * Locking: one lock per endpoint (fd_lock.h) guards the rings, the flow
 * state and the internal objects, whose own data-path locks may be
 * compiled out (FDV_THREAD_SAFE 0): everything that touches them holds
 * ep->lock. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fdr.h"

/* Completions taken from the CQ per read. */
#define FDR_CQ_BATCH 16

/* Work-request contexts carry what their completion needs, not a
 * pointer: a tag in the low two bits and a value above it. */
enum { FDR_CTX_RX = 1, FDR_CTX_DATA = 2, FDR_CTX_CTRL = 3 };

static void *fdr_ctx(unsigned tag, uint64_t val)
{
	return (void *)(uintptr_t)(val << 2 | tag);
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

int fdr_post_rx(struct fdr_ep *ep, uint32_t slot)
{
	ssize_t ret;

	if (ep->iwarp)
		ret = fi_recv(ep->iep, ep->rx_slots + 4 * (size_t)slot, 4,
				   ep->desc, 0, fdr_ctx(FDR_CTX_RX, slot));
	else
		ret = fi_recv(ep->iep, NULL, 0, NULL, 0,
				   fdr_ctx(FDR_CTX_RX, slot));
	return (int)ret;
}

static int fdr_post_word(struct fdr_ep *ep, uint32_t word)
{
	ssize_t ret;

	if (ep->iwarp) {
		uint8_t *slot = ep->tx_slots + 4 * (size_t)(ep->tx_slot_next++ % ep->tx_size);

		fd_put_be32(slot, word);
		ret = fi_send(ep->iep, slot, 4, ep->desc, 0,
				   fdr_ctx(FDR_CTX_CTRL, 0));
	} else {
		ret = fi_senddata(ep->iep, NULL, 0, NULL, word, 0,
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
	word = kind == FDR_RX_SEND ? fd_get_be32(ep->rx_slots + 4 * (size_t)slot) :
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

/* Returns whether it read anything (completions or errors). */
static bool fdr_pump_cq(struct fdr_ep *ep)
{
	struct fi_cq_data_entry e[FDR_CQ_BATCH];
	bool any = false;
	ssize_t n;

	if (!ep->icq)
		return false;
	for (;;) {
		n = fi_cq_read(ep->icq, e, FDR_CQ_BATCH);
		if (n == -FI_EAGAIN)
			break;
		ep->cq_armed = false;	/* its event may have fired */
		any = true;
		if (n > 0) {
			for (ssize_t i = 0; i < n; i++)
				fdr_handle_comp(ep, &e[i]);
			continue;
		}
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err;

			memset(&err, 0, sizeof(err));
			if (fi_cq_readerr(ep->icq, &err, 0) == 1) {
				fdr_handle_comp_err(ep, &err);
				continue;
			}
		} else {
			fdr_set_error(ep, -FI_EIO);
		}
		break;
	}
	return any;
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
	/* A control message waits only for what completions bring (credits,
	 * send-queue slots) or for reading, which flushes by itself: with
	 * no completion there is nothing new to flush. */
	if ((ep->state == FDR_CONNECTED || (ep->state == FDR_CLOSED && ep->flow.rx_ring)) &&
	    fdr_pump_cq(ep))
		fdr_flush_ctrl(ep);
	/* The caller updates the wait fd once it knows its own outcome. */
}

/* Nothing can move: make sure the wait fd will turn readable when
 * something does. 0: armed and nothing pending; -FI_EAGAIN: something
 * came in meanwhile, try again.
 *
 * Both checks cost system calls, so the data path makes them only when
 * they can tell something new. The CQ is re-armed (its channel read, the
 * notification requested) only if a completion was read since it was last
 * armed, and only once the application holds the wait fd (wait_used):
 * before that nobody can sleep on it, and a caller that spins on
 * -FI_EAGAIN, as rsockets' non-blocking calls do, makes no system call
 * for it (rsockets arms its CQ only in rpoll). The connection's events (a
 * read of the rdma_cm channel) are looked at while the connection is not
 * established, on the slow paths (`always`), and otherwise on every
 * FDR_EQ_CHECK_EVERY-th (fd holders) or FDR_EQ_CHECK_SPIN-th (spinners)
 * call in a row that found nothing: a reset shows only there, and the
 * verbs EQ's fd, part of the wait fd, wakes a waiter at once. */
static int fdr_arm(struct fdr_ep *ep, bool always)
{
	if (always || ep->state != FDR_CONNECTED ||
	    ++ep->idle_calls % (ep->wait_used ? FDR_EQ_CHECK_EVERY : FDR_EQ_CHECK_SPIN) == 0) {
		enum fdr_state state = ep->state;
		int err = ep->err;

		fdr_ep_pump_eq(ep);
		/* A connection event changes the answer: look again. */
		if (ep->state != state || ep->err != err)
			return -FI_EAGAIN;
	}
	if (!always && !ep->wait_used)
		return 0;
	if (ep->icq && !ep->cq_armed) {
		struct fid *cq = &ep->icq->fid;
		int ret = fi_trywait(ep->domain->fabric->lower, &cq, 1);

		if (ret == -FI_EAGAIN)
			return -FI_EAGAIN;
		ep->cq_armed = !ret;
	}
	return 0;
}

/* The application got the wait fd and may sleep on it at once, after
 * calls that left the CQ unarmed: arm it now, and if something is already
 * waiting to be read, make the fd readable (fdr_wait_update clears it
 * once a call has looked). Lock held. */
void fdr_wait_fd_used(struct fdr_ep *ep)
{
	uint64_t v = 1;

	if (ep->wait_used)
		return;
	ep->wait_used = true;
	if (fdr_arm(ep, true) != -FI_EAGAIN || ep->efd_set)
		return;
	if (write(ep->efd, &v, sizeof(v)) < 0)
		FD_DBG(FD_LOG_EP_DATA, "eventfd: %s", strerror(errno));
	else
		ep->efd_set = true;
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
		ret = fi_writedata(ep->iep, buf, len, ep->desc, 0, 0, raddr,
					ep->peer.rkey, fdr_ctx(FDR_CTX_DATA, len));
		if (!ret)
			ep->sq_free--;
		return ret;
	}
	ret = fi_write(ep->iep, buf, len, ep->desc, 0, raddr, ep->peer.rkey,
			    fdr_ctx(FDR_CTX_DATA, len));
	if (ret)
		return ret;
	ep->sq_free--;
	/* The length message is what tells the peer; RC keeps it behind
	 * the write it describes. Its credit is the data's credit. */
	{
		uint8_t *slot = ep->tx_slots + 4 * (size_t)(ep->tx_slot_next++ % ep->tx_size);

		fd_put_be32(slot, fdr_word_data(len));
		ret = fi_send(ep->iep, slot, 4, ep->desc, 0,
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
	fd_mutex_lock(&ep->lock);
	/* A few rounds at most: each arm that finds new completions
	 * earns another look, but a caller that got nothing is told so
	 * promptly; the wait fd is armed either way. */
	for (int round = 0;; round++) {
		fdr_progress(ep);
		ret = try_op(ep, iov, count, total, (flags & FI_PEEK) != 0);
		if (ret != -FI_EAGAIN || round == 3)
			break;
		if (!fdr_arm(ep, false))
			break;
	}
	if (ret != -FI_EAGAIN)
		ep->idle_calls = 0;	/* the spin phase starts again */
	if (tx)
		ep->tx_waiting = ret == -FI_EAGAIN;
	else
		ep->rx_waiting = ret == -FI_EAGAIN;
	fdr_wait_update(ep);
	fd_mutex_unlock(&ep->lock);
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

	if (fdr_arm(ep, true))
		return;
	fd_mutex_unlock(&ep->lock);
	if (poll(&pfd, 1, ms < 50 ? ms : 50) < 0 && errno != EINTR)
		FD_DBG(FD_LOG_EP_DATA, "poll: %s", strerror(errno));
	fd_mutex_lock(&ep->lock);
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
