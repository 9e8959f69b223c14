/* Completion queue: open/close, and the out-of-line halves of reading
 * (errors, silent completions, the backlog they leave, blocking reads). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fdv_internal.h"
#include "fdv_dgram_int.h"

static struct fdv_cq_full *fdv_cq_full_of(struct fdv_cq *cq)
{
	return fdv_container_of(cq, struct fdv_cq_full, cq);
}

/* Whether an error completion belongs to a receive. verbs leaves the
 * opcode of an error completion undefined, so this rests on what the CQ
 * serves: a CQ that only receive queues feed holds only receives, and a
 * length error can only happen to a receive. */
static bool fdv_wc_err_is_recv(const struct fdv_cq_full *full,
			       const struct ibv_wc *wc)
{
	return wc->status == IBV_WC_LOC_LEN_ERR ||
	       (full->serves_recv && !full->serves_send);
}

/* A receive shorter than the message: verbs drivers disagree on the
 * status (mlx5: local length error; rxe: local QP operation error). */
static int fdv_wc_err_to_fi(const struct fdv_cq_full *full,
			    const struct ibv_wc *wc)
{
	if (fdv_wc_err_is_recv(full, wc) &&
	    (wc->status == IBV_WC_LOC_LEN_ERR || wc->status == IBV_WC_LOC_QP_OP_ERR))
		return FI_ETRUNC;
	return fdv_wc_status_to_fi(wc->status);
}

/* ---- completion slots: which endpoint a completion came from ---- */

static struct fdv_cq_qp *fdv_cq_find_qp(struct fdv_cq_full *full,
					uint32_t qp_num, uint32_t *at)
{
	uint32_t lo = 0, hi = full->nqps;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (full->qps[mid].qp_num < qp_num)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at)
		*at = lo;
	return lo < full->nqps && full->qps[lo].qp_num == qp_num ?
		&full->qps[lo] : NULL;
}

int fdv_cq_add_qp(struct fdv_cq_full *full, uint32_t qp_num, struct fdv_ep *ep)
{
	uint32_t at;
	int ret = 0;

	fdv_lock(&full->cq.lock);
	if (fdv_cq_find_qp(full, qp_num, &at)) {
		full->qps[at].ep = ep;	/* a number the device reused */
		goto out;
	}
	if (full->nqps == full->qps_cap) {
		uint32_t cap = full->qps_cap ? 2 * full->qps_cap : 8;
		struct fdv_cq_qp *qps = realloc(full->qps, cap * sizeof(*qps));

		if (!qps) {
			ret = -FI_ENOMEM;
			goto out;
		}
		full->qps = qps;
		full->qps_cap = cap;
	}
	memmove(&full->qps[at + 1], &full->qps[at],
		(full->nqps - at) * sizeof(full->qps[0]));
	full->qps[at].qp_num = qp_num;
	full->qps[at].ep = ep;
	full->nqps++;
out:
	fdv_unlock(&full->cq.lock);
	return ret;
}

void fdv_cq_del_qp(struct fdv_cq_full *full, uint32_t qp_num)
{
	uint32_t at;

	fdv_lock(&full->cq.lock);
	if (fdv_cq_find_qp(full, qp_num, &at)) {
		memmove(&full->qps[at], &full->qps[at + 1],
			(full->nqps - at - 1) * sizeof(full->qps[0]));
		full->nqps--;
	}
	fdv_unlock(&full->cq.lock);
}

/* The slot a tagged completion names, or NULL when its endpoint is gone
 * (closed while the completion was still queued) or the index lies outside
 * its ring. Called with the CQ lock held. */
static struct fdv_wr_slot *fdv_cq_slot_of(struct fdv_cq_full *full,
					  const struct ibv_wc *wc)
{
	struct fdv_cq_qp *qp;
	uint64_t i;

	if (wc->wr_id < FDV_WR_ID_TAGGED || wc->wr_id == FDV_WR_ID_SILENT)
		return NULL;
	qp = fdv_cq_find_qp(full, wc->qp_num, NULL);
	i = wc->wr_id - FDV_WR_ID_TAGGED;
	if (!qp || i >= qp->ep->slot_count)
		return NULL;
	return &qp->ep->slots[i];
}

/* Hand a slot back to its endpoint's ring once its completion is out. */
static void fdv_wr_slot_free(struct fdv_wr_slot *slot)
{
	__atomic_store_n(&slot->flags, 0, __ATOMIC_RELEASE);
}

/* Write one successful, non-silent completion in the CQ's format, and
 * its source into *src when src is not NULL. False when it has nobody
 * left to go to: a slot-carrying completion of an endpoint already
 * closed, whose context went with the endpoint. A datagram endpoint's
 * receives carry slots (fdv_dgram.h): their source is read from the GRH
 * before the slot is freed. */
static bool fdv_cq_fill(struct fdv_cq_full *full, void *buf, size_t i,
			const struct ibv_wc *wc, fi_addr_t *src)
{
	uint32_t format = full->cq.format;
	struct fdv_wr_slot *slot;
	struct fdv_cq_qp *qp;
	uint64_t flags;

	if (src)
		*src = FI_ADDR_NOTAVAIL;
	if (wc->wr_id < FDV_WR_ID_TAGGED) {
		fdv_cq_fill_as(format, buf, i, wc, (void *)(uintptr_t)wc->wr_id,
			       format == FI_CQ_FORMAT_CONTEXT ? 0 : fdv_wc_flags(wc));
		return true;
	}
	slot = fdv_cq_slot_of(full, wc);
	if (!slot) {
		FD_DBG(FD_LOG_CQ, "completion of qp %u for a closed endpoint dropped",
		       wc->qp_num);
		return false;
	}
	flags = slot->flags;
	qp = fdv_cq_find_qp(full, wc->qp_num, NULL);
	if (qp->ep->kind == FDV_EP_KIND_DGRAM) {
		flags &= ~FDV_SLOT_BOUNCED;
		flags |= fdv_wc_flags(wc) & FI_REMOTE_CQ_DATA;
		if (src)
			*src = fdv_dgram_src(qp->ep, (uint32_t)(wc->wr_id - FDV_WR_ID_TAGGED), wc);
	}
	fdv_cq_fill_as(format, buf, i, wc, slot->context, flags);
	fdv_wr_slot_free(slot);
	return true;
}

/* Deliver what a poll returned after the inline loop met an error or a
 * silent completion at wc[0]. Successful silent completions vanish; the
 * first real error and everything polled after it wait in the backlog, in
 * order, so nothing is lost or reordered. Called with the CQ lock held. */
/* What the device just gave, before anything is delivered or held back:
 * a datagram endpoint's bounced receives are copied to their buffers
 * (fdv_dgram_rx_polled). Only slot-carrying completions are looked at. */
static void fdv_cq_polled(struct fdv_cq_full *full, struct ibv_wc *wc, int n)
{
	for (int i = 0; i < n; i++) {
		struct fdv_cq_qp *qp;

		if (wc[i].wr_id < FDV_WR_ID_TAGGED || wc[i].wr_id == FDV_WR_ID_SILENT)
			continue;
		qp = fdv_cq_find_qp(full, wc[i].qp_num, NULL);
		if (qp && qp->ep->kind == FDV_EP_KIND_DGRAM)
			fdv_dgram_rx_polled(qp->ep, (uint32_t)(wc[i].wr_id - FDV_WR_ID_TAGGED),
					    &wc[i]);
	}
}

ssize_t fdv_cq_deliver_slow(struct fdv_cq *cq, struct ibv_wc *wc, int n,
			    void *buf, size_t done, fi_addr_t *src_addr)
{
	struct fdv_cq_full *full = fdv_cq_full_of(cq);
	int i;

	fdv_cq_polled(full, wc, n);

	for (i = 0; i < n; i++) {
		if (wc[i].status == IBV_WC_SUCCESS) {
			if (wc[i].wr_id == FDV_WR_ID_SILENT ||
			    !fdv_cq_fill(full, buf, done, &wc[i],
					 src_addr ? &src_addr[done] : NULL))
				continue;
			done++;
			continue;
		}
		/* A request nobody waits for that was merely flushed by an
		 * earlier error or a disconnect has nothing to report. */
		if (wc[i].wr_id == FDV_WR_ID_SILENT &&
		    wc[i].status == IBV_WC_WR_FLUSH_ERR)
			continue;
		full->backlog_head = 0;
		fdv_cq_set_backlog(cq, (uint32_t)(n - i));
		memcpy(full->backlog_wc, &wc[i], sizeof(*wc) * (size_t)(n - i));
		break;
	}
	if (done)
		return (ssize_t)done;
	return cq->backlog ? -FI_EAVAIL : -FI_EAGAIN;
}

ssize_t fdv_cq_read_slow(struct fdv_cq *cq, void *buf, size_t count,
			 fi_addr_t *src_addr)
{
	struct fdv_cq_full *full = fdv_cq_full_of(cq);
	ssize_t ret;
	size_t done = 0;
	struct ibv_wc *wc;

	if (!buf && count)
		return -FI_EINVAL;
	if (!count)
		return 0;
	fdv_lock(&cq->lock);
	while (cq->backlog && done < count) {
		wc = &full->backlog_wc[full->backlog_head];
		if (wc->status != IBV_WC_SUCCESS &&
		    !(wc->wr_id == FDV_WR_ID_SILENT && wc->status == IBV_WC_WR_FLUSH_ERR))
			break;	/* an error: fi_cq_readerr takes it */
		if (wc->status == IBV_WC_SUCCESS && wc->wr_id != FDV_WR_ID_SILENT &&
		    fdv_cq_fill(full, buf, done, wc, src_addr ? &src_addr[done] : NULL))
			done++;
		full->backlog_head++;
		fdv_cq_set_backlog(cq, cq->backlog - 1);
	}
	if (done) {
		fdv_unlock(&cq->lock);
		return (ssize_t)done;
	}
	ret = cq->backlog ? -FI_EAVAIL : 0;
	fdv_unlock(&cq->lock);
	if (ret)
		return ret;
	/* Backlog drained: an ordinary read now. */
	return fdv_cq_readfrom(&cq->cq_fid, buf, count, src_addr);
}

ssize_t fdv_cq_poll_failed(struct fdv_cq *cq, int ret)
{
	(void)cq;
	FD_WARN(FD_LOG_CQ, "ibv_poll_cq failed: %d", ret);
	return -FI_EIO;
}

ssize_t fdv_cq_readerr(struct fid_cq *cq_fid, struct fi_cq_err_entry *buf,
		       uint64_t flags)
{
	struct fdv_cq *cq;
	struct fdv_cq_full *full;
	struct fdv_wr_slot *slot;
	struct ibv_wc *wc;
	size_t user_err_size = 0;
	void *user_err_data = NULL;

	if (!cq_fid || !buf)
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	cq = fdv_cq_of(cq_fid);
	full = fdv_cq_full_of(cq);
	/* From API 1.5 a caller may pass its own err_data buffer. */
	if (FI_VERSION_GE(full->domain->version, FI_VERSION(1, 5))) {
		user_err_size = buf->err_data_size;
		user_err_data = buf->err_data;
	}
	fdv_lock(&cq->lock);
	if (!cq->backlog ||
	    full->backlog_wc[full->backlog_head].status == IBV_WC_SUCCESS) {
		fdv_unlock(&cq->lock);
		return -FI_EAGAIN;
	}
	wc = &full->backlog_wc[full->backlog_head];
	memset(buf, 0, sizeof(*buf));
	/* A library-owned wr_id is no context: silent requests have none,
	 * and a slot's endpoint may be gone. */
	buf->op_context = wc->wr_id >= FDV_WR_ID_TAGGED ? NULL :
			  (void *)(uintptr_t)wc->wr_id;
	buf->flags = fdv_wc_err_is_recv(full, wc) ? FI_MSG | FI_RECV : 0;
	slot = fdv_cq_slot_of(full, wc);
	if (slot) {
		struct fdv_cq_qp *qp = fdv_cq_find_qp(full, wc->qp_num, NULL);

		buf->op_context = slot->context;
		buf->flags = slot->flags;
		if (qp->ep->kind == FDV_EP_KIND_DGRAM) {
			buf->flags &= ~FDV_SLOT_BOUNCED;
			/* a datagram cut at the end of its buffers */
			buf->olen = fdv_dgram_olen(qp->ep,
						   (uint32_t)(wc->wr_id - FDV_WR_ID_TAGGED), wc);
		}
		if (!(flags & FI_PEEK))
			fdv_wr_slot_free(slot);
	}
	buf->err = fdv_wc_err_to_fi(full, wc);
	buf->prov_errno = (int)wc->status;
	/* verbs does not say how long a truncated message was (a datagram's
	 * olen, set above, is the library's own count) */
	/* The device's own code for the failure travels as err_data, 32 bits
	 * in host order, as upstream's verbs provider passes it: into the
	 * caller's buffer when it brought one that holds it (fi_cq_strerror
	 * reads all 32 bits back), else into the CQ's. */
	if (user_err_data && user_err_size >= sizeof(wc->vendor_err)) {
		memcpy(user_err_data, &wc->vendor_err, sizeof(wc->vendor_err));
		buf->err_data = user_err_data;
		buf->err_data_size = sizeof(wc->vendor_err);
	} else {
		full->err_vendor = wc->vendor_err;
		buf->err_data = &full->err_vendor;
		buf->err_data_size = sizeof(full->err_vendor);
	}
	if (!(flags & FI_PEEK)) {
		full->backlog_head++;
		fdv_cq_set_backlog(cq, cq->backlog - 1);
	}
	fdv_unlock(&cq->lock);
	return 1;
}

const char *fdv_cq_strerror(struct fid_cq *cq, int prov_errno,
			    const void *err_data, char *buf, size_t len)
{
	const char *s = ibv_wc_status_str((enum ibv_wc_status)prov_errno);
	uint32_t vendor_err;

	(void)cq;
	if (buf && len) {
		/* err_data as fi_cq_readerr filled it: the vendor_err */
		if (err_data) {
			memcpy(&vendor_err, err_data, sizeof(vendor_err));
			snprintf(buf, len, "%s (vendor_err 0x%x)", s, vendor_err);
		} else {
			snprintf(buf, len, "%s", s);
		}
		return buf;
	}
	return s;
}

int fdv_cq_signal(struct fid_cq *cq_fid)
{
	struct fdv_cq_full *full;
	uint64_t one = 1;

	if (!cq_fid)
		return -FI_EINVAL;
	full = fdv_cq_full_of(fdv_cq_of(cq_fid));
	if (full->signal_fd < 0)
		return -FI_ENOSYS;
	if (write(full->signal_fd, &one, sizeof(one)) != sizeof(one))
		return -fd_errno_to_fi(errno);
	return 0;
}

/* Drain the channel's events so its fd only turns readable for new ones. */
static void fdv_cq_drain_channel(struct fdv_cq_full *full)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	while (!ibv_get_cq_event(full->channel, &ev_cq, &ev_ctx)) {
		ibv_ack_cq_events(ev_cq, 1);
		full->armed = false;
	}
}

/* Arm the CQ for the next completion and make sure none slipped in before
 * arming: polled entries go to the backlog and the caller is told to read. */
int fdv_cq_trywait(struct fdv_cq_full *full)
{
	struct fdv_cq *cq = &full->cq;
	int n;

	if (!full->channel)
		return -FI_EINVAL;
	fdv_lock(&cq->lock);
	if (cq->backlog) {
		fdv_unlock(&cq->lock);
		return -FI_EAGAIN;
	}
	fdv_cq_drain_channel(full);
	if (!full->armed) {
		if (ibv_req_notify_cq(cq->ibcq, 0)) {
			fdv_unlock(&cq->lock);
			return -FI_EIO;
		}
		full->armed = true;
	}
	n = ibv_poll_cq(cq->ibcq, FDV_CQ_BATCH, full->backlog_wc);
	if (n > 0) {
		fdv_cq_polled(full, full->backlog_wc, n);
		full->backlog_head = 0;
		fdv_cq_set_backlog(cq, (uint32_t)n);
	}
	fdv_unlock(&cq->lock);
	return n > 0 ? -FI_EAGAIN : (n < 0 ? -FI_EIO : 0);
}

/* fi_poll: whether a read would find something, without taking it:
 * what the device has goes to the backlog the read path serves first. */
static int fdv_cq_ready(struct fid *fid)
{
	struct fdv_cq_full *full = FDV_OBJ(struct fdv_cq_full, cq.cq_fid.fid, fid);
	struct fdv_cq *cq = &full->cq;
	int n = 0;

	if (full->mt_locked)
		pthread_mutex_lock(&full->mt_lock);
	fdv_lock(&cq->lock);
	if (!cq->backlog) {
		n = ibv_poll_cq(cq->ibcq, FDV_CQ_BATCH, full->backlog_wc);
		if (n > 0) {
			fdv_cq_polled(full, full->backlog_wc, n);
			full->backlog_head = 0;
			fdv_cq_set_backlog(cq, (uint32_t)n);
		}
	}
	n = n < 0 ? -FI_EIO : cq->backlog != 0;
	fdv_unlock(&cq->lock);
	if (full->mt_locked)
		pthread_mutex_unlock(&full->mt_lock);
	return n;
}

/* A wait set's trywait: as fi_trywait, under the locked build's lock. */
static int fdv_cq_set_trywait(struct fid *fid)
{
	struct fdv_cq_full *full = FDV_OBJ(struct fdv_cq_full, cq.cq_fid.fid, fid);
	int ret;

	if (full->mt_locked)
		pthread_mutex_lock(&full->mt_lock);
	ret = fdv_cq_trywait(full);
	if (full->mt_locked)
		pthread_mutex_unlock(&full->mt_lock);
	return ret;
}

static int fdv_elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int)((now.tv_sec - start->tv_sec) * 1000 +
		     (now.tv_nsec - start->tv_nsec) / 1000000);
}

static size_t fdv_cq_entry_size(uint32_t format)
{
	switch (format) {
	case FI_CQ_FORMAT_CONTEXT: return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG: return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA: return sizeof(struct fi_cq_data_entry);
	default: return sizeof(struct fi_cq_tagged_entry);
	}
}

/* How many completions a blocking read waits for: one, or with
 * FI_CQ_COND_THRESHOLD the caller's threshold (at most count). */
static size_t fdv_cq_sread_want(const struct fdv_cq_full *full, size_t count,
				const void *cond)
{
	size_t threshold;

	if (full->wait_cond != FI_CQ_COND_THRESHOLD || !cond)
		return 1;
	threshold = *(const size_t *)cond;
	if (!threshold)
		return 1;
	return threshold < count ? threshold : count;
}

/* Blocks until a completion (or the threshold's worth) has been read,
 * fi_cq_signal is called, or timeout ms pass. Entries read while waiting
 * for a threshold stay in buf: a timeout or a signal then returns them
 * (fewer than asked) rather than lose them, and an error behind them is
 * reported by the next call. */
ssize_t fdv_cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			 fi_addr_t *src_addr, const void *cond, int timeout)
{
	struct fdv_cq_full *full;
	struct pollfd pfd[2];
	struct timespec start;
	size_t want, done = 0, esize;
	ssize_t ret;
	int wait_ms, rc;

	if (!cq_fid)
		return -FI_EINVAL;
	full = fdv_cq_full_of(fdv_cq_of(cq_fid));
	if (!full->channel)
		return -FI_ENOSYS;	/* opened with FI_WAIT_NONE */
	if (!count)
		return cq_fid->ops->readfrom(cq_fid, buf, count, src_addr);
	want = fdv_cq_sread_want(full, count, cond);
	esize = fdv_cq_entry_size(full->cq.format);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		/* Through the CQ's own table: a locked CQ's read takes its
		 * lock, and this wait must not hold it while it sleeps. */
		ret = cq_fid->ops->readfrom(cq_fid, buf ? (char *)buf + done * esize : NULL,
					    count - done, src_addr ? src_addr + done : NULL);
		if (ret > 0) {
			done += (size_t)ret;
			if (done >= want)
				return (ssize_t)done;
			continue;	/* more may be polled already */
		}
		if (ret != -FI_EAGAIN)
			return done ? (ssize_t)done : ret;
		if (full->mt_locked)
			pthread_mutex_lock(&full->mt_lock);
		rc = fdv_cq_trywait(full);
		if (full->mt_locked)
			pthread_mutex_unlock(&full->mt_lock);
		if (rc == -FI_EAGAIN)
			continue;
		if (rc)
			return done ? (ssize_t)done : rc;
		wait_ms = -1;
		if (timeout >= 0) {
			wait_ms = timeout - fdv_elapsed_ms(&start);
			if (wait_ms <= 0)
				return done ? (ssize_t)done : -FI_EAGAIN;
		}
		pfd[0].fd = full->channel->fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = full->signal_fd;
		pfd[1].events = POLLIN;
		rc = poll(pfd, 2, wait_ms);
		if (rc < 0 && errno != EINTR)
			return done ? (ssize_t)done : -fd_errno_to_fi(errno);
		if (rc > 0 && (pfd[1].revents & POLLIN)) {
			uint64_t v;

			if (read(full->signal_fd, &v, sizeof(v)) < 0)
				FD_DBG(FD_LOG_CQ, "signal fd: %s", strerror(errno));
			/* fi_cq_signal: wake up with what there is */
			return done ? (ssize_t)done : -FI_EAGAIN;
		}
	}
}

ssize_t fdv_cq_sread(struct fid_cq *cq, void *buf, size_t count,
		     const void *cond, int timeout)
{
	return fdv_cq_sreadfrom(cq, buf, count, NULL, cond, timeout);
}

static int fdv_cq_close(struct fid *fid)
{
	struct fdv_cq_full *full = FDV_OBJ(struct fdv_cq_full, cq.cq_fid.fid, fid);
	struct fid_wait *ws;
	int ret;

	if (atomic_load(&full->refs) || fd_waitable_busy(&full->waitable))
		return -FI_EBUSY;
	/* out of its wait set first: a waiter on the set must not arm a
	 * destroyed CQ; back in if the CQ stays */
	ws = full->waitable.wait_set;
	fd_wait_leave(&full->waitable, fid);
	if (full->channel)
		fdv_cq_drain_channel(full);
	ret = ibv_destroy_cq(full->cq.ibcq);
	if (ret) {
		FD_WARN(FD_LOG_CQ, "ibv_destroy_cq: %s", strerror(ret));
		if (ws && fd_wait_join(&full->waitable, ws, fid))
			FD_WARN(FD_LOG_CQ, "CQ %p left its wait set", (void *)full);
		return -fd_errno_to_fi(ret);
	}
	fd_waitable_fini(&full->waitable, fid);
	if (full->channel)
		ibv_destroy_comp_channel(full->channel);
	if (full->signal_fd >= 0)
		close(full->signal_fd);
	fdv_lock_destroy(&full->cq.lock);
	if (full->mt_locked)
		pthread_mutex_destroy(&full->mt_lock);
	atomic_fetch_sub(&full->domain->refs, 1);
	free(full->qps);
	free(full);
	return 0;
}

static int fdv_cq_control(struct fid *fid, int command, void *arg)
{
	struct fdv_cq_full *full = FDV_OBJ(struct fdv_cq_full, cq.cq_fid.fid, fid);

	return fd_waitable_control(command, arg, &full->waitable,
				   full->channel ? full->channel->fd : -1,
				   full->channel ? FI_WAIT_FD : FI_WAIT_NONE);
}

static struct fi_ops fdv_cq_fid_ops =
	FD_FI_OPS(fdv_cq_close, fd_no_fid_bind, fdv_cq_control, NULL);

int fdv_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq_out, void *context)
{
	struct fdv_domain *dom;
	struct fdv_cq_full *full;
	enum fi_cq_format format;
	size_t size;
	enum fi_wait_obj wait = FI_WAIT_NONE;
	int err;

	if (!domain || !cq_out)
		return -FI_EINVAL;
	dom = FDV_OBJ(struct fdv_domain, domain_fid, domain);
	format = attr ? attr->format : FI_CQ_FORMAT_CONTEXT;
	if (format == FI_CQ_FORMAT_UNSPEC)
		format = FI_CQ_FORMAT_CONTEXT;
	if (format != FI_CQ_FORMAT_CONTEXT && format != FI_CQ_FORMAT_MSG &&
	    format != FI_CQ_FORMAT_DATA && format != FI_CQ_FORMAT_TAGGED)
		return -FI_ENOSYS;
	if (attr) {
		if (attr->wait_cond != FI_CQ_COND_NONE &&
		    attr->wait_cond != FI_CQ_COND_THRESHOLD)
			return -FI_ENOSYS;
		if (attr->flags & ~(uint64_t)FI_AFFINITY)
			return -FI_EBADFLAGS;
		/* FI_WAIT_SET: an fd of its own, in the set (src/fd_sets.c) */
		err = fd_wait_obj_check(attr->wait_obj, attr->wait_set, false);
		if (err)
			return err;
		if (attr->wait_obj != FI_WAIT_NONE)
			wait = FI_WAIT_FD;
	}
	/* FI_VERBS_CQ_SIZE sets the default; an explicit size wins over it. */
	size = dom->params.cq_size;
	if (attr && attr->size)
		size = attr->size;
	if (!size || size > (size_t)dom->dev_attr.max_cqe)
		return -FI_EINVAL;

	full = calloc(1, sizeof(*full));
	if (!full)
		return -FI_ENOMEM;
	full->signal_fd = -1;
	full->domain = dom;
	full->wait_obj = wait;
	full->wait_cond = attr ? attr->wait_cond : FI_CQ_COND_NONE;
	if (wait == FI_WAIT_FD) {
		full->channel = ibv_create_comp_channel(dom->verbs);
		if (!full->channel) {
			err = errno;
			goto err_free;
		}
		if (fcntl(full->channel->fd, F_SETFL,
			  fcntl(full->channel->fd, F_GETFL) | O_NONBLOCK)) {
			err = errno;
			goto err_channel;
		}
		full->signal_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (full->signal_fd < 0) {
			err = errno;
			goto err_channel;
		}
	}
	full->cq.ibcq = ibv_create_cq(dom->verbs, (int)size, full, full->channel, 0);
	if (!full->cq.ibcq) {
		err = errno;
		FD_WARN(FD_LOG_CQ, "ibv_create_cq(%zu): %s", size, strerror(err));
		goto err_channel;
	}
	full->cq.format = (uint32_t)format;
	fdv_cq_set_backlog(&full->cq, 0);
	fdv_lock_init(&full->cq.lock);
	fd_fid_init(&full->cq.cq_fid.fid, FI_CLASS_CQ, context, &fdv_cq_fid_ops);
	full->cq.cq_fid.ops = &fdv_ops_cq;
#if FDV_OPS_LOCKED
	if (fdv_threading_locked(dom->threading)) {
		pthread_mutex_init(&full->mt_lock, NULL);
		full->mt_locked = true;
		full->cq.cq_fid.ops = &fdv_ops_locked_cq;
	}
#endif
	err = -fd_waitable_open(&full->waitable, &full->cq.cq_fid.fid, fdv_cq_ready,
				fdv_cq_set_trywait,
				attr && attr->wait_obj == FI_WAIT_SET ? attr->wait_set : NULL);
	if (err) {
		ibv_destroy_cq(full->cq.ibcq);
		fdv_lock_destroy(&full->cq.lock);
		if (full->mt_locked)
			pthread_mutex_destroy(&full->mt_lock);
		goto err_channel;
	}
	atomic_fetch_add(&dom->refs, 1);
	*cq_out = &full->cq.cq_fid;
	return 0;

err_channel:
	if (full->signal_fd >= 0)
		close(full->signal_fd);
	if (full->channel)
		ibv_destroy_comp_channel(full->channel);
err_free:
	free(full);
	return -fd_errno_to_fi(err);
}
