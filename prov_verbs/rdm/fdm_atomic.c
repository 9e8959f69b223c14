/* Atomics on RDM endpoints, in software at the target, as upstream's rxm
 * does them: the initiator sends an atomic request (FDM_OP_ATOMIC_REQ:
 * operation, datatype, count, address, key, operand and compare data, in
 * one eager buffer), the target applies it during its progress and
 * answers (FDM_OP_ATOMIC_RESP: a status and, for the fetch and compare
 * forms, the old values). Every atomic of the layer goes this way, so all
 * atomics on a location are atomic against each other: mixing the
 * device's fetch-add with a software swap on one location would not be.
 * docs/rdm-protocol.md, "Atomics".
 *
 * The target needs the key to name a region registered on its RDM domain
 * (fdm_mr.c) with FI_REMOTE_WRITE for anything that modifies and
 * FI_REMOTE_READ for anything that returns data, holding every element;
 * otherwise it answers FI_EACCES (upstream's status) and the initiator's
 * completion is an error with that err. */
#include <stdlib.h>
#include <string.h>

#include "fd_core.h"
#include "fdm.h"

#define FDM_ATOMIC_FLAGS (FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | \
			  FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_MORE | \
			  FI_FENCE)

/* ---- initiator ---- */

/* One call, whatever its form. */
struct fdm_aop {
	uint8_t kind;			/* enum fdm_atomic_kind */
	const struct fi_ioc *src;	/* operand (addresses NULL for FI_ATOMIC_READ) */
	size_t nsrc;
	const struct fi_ioc *cmp;	/* FDM_AK_COMPARE */
	size_t ncmp;
	struct fi_ioc *res;		/* FDM_AK_FETCH, FDM_AK_COMPARE */
	size_t nres;
	size_t rcount;			/* msg forms: the remote ioc's count */
	fi_addr_t dest;
	uint64_t addr, key;
	enum fi_datatype dt;
	enum fi_op op;
	uint64_t flags;
	void *context;
};

/* Elements in iocs; 0 for anything malformed (no elements, too many
 * iocs, a NULL buffer with elements unless null_ok). */
static size_t fdm_ioc_total(const struct fi_ioc *ioc, size_t n, bool null_ok)
{
	size_t total = 0;

	if (!ioc || !n || n > FDM_IOV_LIMIT)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if ((!ioc[i].addr && ioc[i].count && !null_ok) ||
		    ioc[i].count > ((size_t)1 << 32) - total)
			return 0;
		total += ioc[i].count;
	}
	return total;
}

/* Copy the iocs' elements to p in wire byte order; returns the end. */
static uint8_t *fdm_ioc_gather(uint8_t *p, const struct fi_ioc *ioc, size_t n,
			       enum fi_datatype dt, size_t size)
{
	uint8_t *start = p;

	for (size_t i = 0; i < n; i++) {
		if (ioc[i].count)
			memcpy(p, ioc[i].addr, ioc[i].count * size);
		p += ioc[i].count * size;
	}
	fdm_atomic_swab(start, (size_t)(p - start) / size, dt);
	return p;
}

static ssize_t fdm_atomic_submit(struct fdm_ep *ep, const struct fdm_aop *a)
{
	struct fdm_domain *d = ep->domain;
	struct fdm_atomic_req req = {
		.kind = a->kind, .op = (uint8_t)a->op, .dt = (uint8_t)a->dt,
		.addr = a->addr, .key = a->key,
	};
	struct fdm_hdr h = { .op = FDM_OP_ATOMIC_REQ };
	bool operand = a->op != FI_ATOMIC_READ;
	struct fdm_conn *conn;
	struct fdm_tx *tx;
	size_t size, count;
	uint8_t *p;
	int err;

	if (!fdm_atomic_ok(a->kind, a->op, a->dt))
		return -FI_EOPNOTSUPP;
	if (a->flags & ~(uint64_t)FDM_ATOMIC_FLAGS)
		return -FI_EBADFLAGS;
	size = fdm_atomic_dt_size(a->dt);
	/* a read needs no operand buffers: its results say how many */
	if (operand || a->src)
		count = fdm_ioc_total(a->src, a->nsrc, !operand);
	else
		count = fdm_ioc_total(a->res, a->nres, false);
	if (!count || count > fdm_atomic_max_count(a->kind, a->dt) ||
	    (a->rcount != SIZE_MAX && a->rcount != count))
		return -FI_EINVAL;
	if (a->kind != FDM_AK_WRITE && fdm_ioc_total(a->res, a->nres, false) != count)
		return -FI_EINVAL;
	if (a->kind == FDM_AK_COMPARE && fdm_ioc_total(a->cmp, a->ncmp, false) != count)
		return -FI_EINVAL;
	err = fdm_rma_begin(ep, a->dest, a->context, a->flags, FDM_TX_ATOMIC, &conn, &tx);
	if (err)
		return err;
	tx->cntr = a->kind == FDM_AK_WRITE ? FDM_CNTR_WRITE : FDM_CNTR_READ;
	tx->rma.op = a->kind;
	tx->rma.dt = a->dt;
	tx->rma.aop = a->op;
	tx->rma.acount = count;
	tx->rma.status = 0;
	tx->rma.flags = a->flags;
	/* where the old values go when the answer comes */
	tx->rma.count = a->kind == FDM_AK_WRITE ? 0 : a->nres;
	for (size_t i = 0; i < tx->rma.count; i++) {
		tx->rma.iov[i].iov_base = a->res[i].addr;
		tx->rma.iov[i].iov_len = a->res[i].count * size;
	}
	/* the data is copied now: every form is an inject for its buffers */
	req.count = (uint32_t)count;
	p = tx->buf + FDM_HDR_LEN;
	fdm_atomic_req_encode(p, &req);
	p += FDM_ATOMIC_DESC_LEN;
	if (operand)
		p = fdm_ioc_gather(p, a->src, a->nsrc, a->dt, size);
	if (a->kind == FDM_AK_COMPARE)
		p = fdm_ioc_gather(p, a->cmp, a->ncmp, a->dt, size);
	h.tag = (uint64_t)tx->gen << 32 | tx->idx;
	h.size = (uint64_t)(p - (tx->buf + FDM_HDR_LEN));
	fdm_hdr_encode(tx->buf, &h);
	tx->wire_len = (uint32_t)(p - tx->buf);
	if (fdv_unlikely(!tx->report)) {
		/* fi_inject_atomic (or no FI_COMPLETION asked): the program
		 * has no completion to wait for, so it may make no further
		 * call; queued, the request could wait for ever. On the wire
		 * now (the answer still comes back to this tx), or refused. */
		ssize_t ret = fdm_conn_send_unreported(ep, conn, tx);

		fdm_unlock(d);
		return ret;
	}
	fdm_conn_submit(conn, tx);
	fdm_unlock(d);
	return 0;
}

void fdm_atomic_tx_done(struct fdm_ep *ep, struct fdm_tx *tx, int err)
{
	uint64_t flags = FI_ATOMIC | (tx->rma.op == FDM_AK_WRITE ? FI_WRITE : FI_READ);

	if (!err && !tx->rts_done) {
		tx->rts_done = true;
		if (!tx->done_rcvd)
			return;		/* the answer is on its way */
	}
	fdm_rma_complete(ep, tx, flags, err ? err : (int)tx->rma.status);
}

void fdm_atomic_handle_resp(struct fdm_ep *ep, struct fdm_conn *conn,
			    const struct fdm_hdr *h, uint8_t *payload, size_t len)
{
	uint32_t idx = (uint32_t)h->tag, gen = (uint32_t)(h->tag >> 32);
	struct fdm_tx *tx = idx < ep->ntx ? &ep->txs[idx] : NULL;
	uint32_t status = (uint32_t)h->data;
	size_t want;

	if (!tx || !tx->in_use || tx->kind != FDM_TX_ATOMIC || tx->gen != gen ||
	    tx->conn != conn || tx->done_rcvd) {
		FD_WARN(FD_LOG_EP_DATA, "atomic answer for an unknown request: dropped");
		return;
	}
	want = tx->rma.op == FDM_AK_WRITE ? 0 :
		tx->rma.acount * fdm_atomic_dt_size(tx->rma.dt);
	if (status != 0 && status != FI_EACCES && status != FI_EINVAL) {
		FD_WARN(FD_LOG_EP_DATA, "atomic answer with status %u: failed", status);
		status = FI_EIO;
	} else if (len != (status ? 0 : want)) {
		FD_WARN(FD_LOG_EP_DATA, "atomic answer of %zu bytes for %zu: failed", len,
			status ? (size_t)0 : want);
		status = FI_EIO;
	} else if (!status && want) {
		size_t done = 0;

		fdm_atomic_swab(payload, tx->rma.acount, tx->rma.dt);
		for (size_t i = 0; i < tx->rma.count; i++) {
			if (tx->rma.iov[i].iov_len)
				memcpy(tx->rma.iov[i].iov_base, payload + done,
				       tx->rma.iov[i].iov_len);
			done += tx->rma.iov[i].iov_len;
		}
	}
	tx->rma.status = status;
	tx->done_rcvd = true;
	if (tx->rts_done)
		fdm_atomic_tx_done(ep, tx, 0);
}

/* ---- target ---- */

/* A request that found no transmit request free for its answer: an
 * atomic request, or an FI_DELIVERY_COMPLETE message's acknowledgement
 * (ack; no payload). One list keeps all answers owed in arrival order. */
struct fdm_atomic_wait {
	struct fdm_node node;
	struct fdm_conn *conn;
	uint64_t req_id;
	bool ack;
	size_t len;
	uint8_t payload[];
};

/* Where the request's elements are, or an error status. */
static uint32_t fdm_atomic_locate(struct fdm_ep *ep, const struct fdm_atomic_req *r,
				  void **dst)
{
	size_t len = (size_t)r->count * fdm_atomic_dt_size(r->dt);
	uint64_t access = 0;

	if (r->op != FI_ATOMIC_READ)
		access |= FI_REMOTE_WRITE;
	if (r->kind != FDM_AK_WRITE)
		access |= FI_REMOTE_READ;
	*dst = fdm_mr_target(ep->domain, r->key, r->addr, len, access);
	if (!*dst) {
		FD_INFO(FD_LOG_EP_DATA, "atomic request outside the regions its key "
			"allows: refused");
		return FI_EACCES;
	}
	if (r->addr % fdm_atomic_align(r->dt))
		return FI_EINVAL;	/* no atomic update of a split element */
	return 0;
}

/* Apply a request and queue its answer; false (nothing done) if no
 * transmit request is free for the answer. */
static bool fdm_atomic_answer(struct fdm_ep *ep, struct fdm_conn *conn, uint64_t req_id,
			      struct fdm_atomic_req *r)
{
	struct fdm_hdr h = { .op = FDM_OP_ATOMIC_RESP, .tag = req_id };
	struct fdm_tx *tx;
	uint8_t *result = NULL;
	void *dst;
	uint32_t status;

	if (conn->state != FDM_C_CONNECTED && conn->state != FDM_C_ACCEPTING) {
		/* the connection broke: the initiator fails the operation, and
		 * nothing is applied that it cannot hear of */
		FD_INFO(FD_LOG_EP_DATA, "atomic request on a closed connection: dropped");
		return true;
	}
	tx = fdm_tx_get(ep);
	if (!tx)
		return false;
	status = fdm_atomic_locate(ep, r, &dst);
	if (!status) {
		size_t n = r->count;

		if (r->operand)
			fdm_atomic_swab(r->operand, n, r->dt);
		if (r->compare)
			fdm_atomic_swab(r->compare, n, r->dt);
		if (r->kind != FDM_AK_WRITE)
			result = tx->buf + FDM_HDR_LEN;
		fdm_atomic_apply(r->op, r->dt, dst, r->operand, r->compare, result, n);
		if (result) {
			h.size = n * fdm_atomic_dt_size(r->dt);
			fdm_atomic_swab(result, n, r->dt);
		}
		/* the target counts it itself: no RMA event message */
		fdm_count(ep, r->kind == FDM_AK_WRITE ? FDM_CNTR_RWRITE : FDM_CNTR_RREAD, 0);
	}
	h.data = status;
	fdm_hdr_encode(tx->buf, &h);
	tx->kind = FDM_TX_CTRL;
	tx->wire_len = (uint32_t)(FDM_HDR_LEN + h.size);
	fdm_conn_submit(conn, tx);
	return true;
}

void fdm_atomic_handle_req(struct fdm_ep *ep, struct fdm_conn *conn,
			   const struct fdm_hdr *h, uint8_t *payload, size_t len)
{
	struct fdm_atomic_req r;
	struct fdm_atomic_wait *w;

	if (fdm_atomic_req_decode(&r, payload, len)) {
		FD_WARN(FD_LOG_EP_DATA, "malformed atomic request: connection dropped");
		fdm_conn_fail(conn, FI_EIO);
		return;
	}
	/* in arrival order: behind any request already waiting */
	if (fdm_list_empty(&ep->atomic_wait) && fdm_atomic_answer(ep, conn, h->tag, &r))
		return;
	w = malloc(sizeof(*w) + len);
	if (!w) {
		FD_WARN(FD_LOG_EP_DATA, "out of memory: an atomic request is lost");
		return;
	}
	w->conn = conn;
	w->req_id = h->tag;
	w->ack = false;
	w->len = len;
	memcpy(w->payload, payload, len);
	fdm_list_add_tail(&ep->atomic_wait, &w->node);
	ep->work = 1;
}

void fdm_owe_ack(struct fdm_ep *ep, struct fdm_conn *conn, uint64_t req_id)
{
	struct fdm_atomic_wait *w;

	if (fdm_list_empty(&ep->atomic_wait) && fdm_send_ack(ep, conn, req_id))
		return;
	w = malloc(sizeof(*w));
	if (!w) {
		/* the sender would wait for ever: fail its connection */
		FD_WARN(FD_LOG_EP_DATA, "out of memory: a delivery acknowledgement is lost");
		fdm_conn_fail(conn, FI_ENOMEM);
		return;
	}
	w->conn = conn;
	w->req_id = req_id;
	w->ack = true;
	w->len = 0;
	fdm_list_add_tail(&ep->atomic_wait, &w->node);
	ep->work = 1;
}

void fdm_atomic_pump(struct fdm_ep *ep)
{
	while (!fdm_list_empty(&ep->atomic_wait)) {
		struct fdm_atomic_wait *w = fdm_entry(ep->atomic_wait.next,
						      struct fdm_atomic_wait, node);
		struct fdm_atomic_req r;

		if (w->ack) {
			if (!fdm_send_ack(ep, w->conn, w->req_id))
				return;
		} else if (!fdm_atomic_req_decode(&r, w->payload, w->len) &&
			   !fdm_atomic_answer(ep, w->conn, w->req_id, &r)) {
			/* validated on arrival; decoding again sets the
			 * pointers */
			return;
		}
		fdm_list_del(&w->node);
		free(w);
	}
}

void fdm_atomic_drop(struct fdm_ep *ep)
{
	while (!fdm_list_empty(&ep->atomic_wait)) {
		struct fdm_atomic_wait *w = fdm_entry(ep->atomic_wait.next,
						      struct fdm_atomic_wait, node);

		fdm_list_del(&w->node);
		free(w);
	}
}

/* ---- the fi_atomic calls ---- */

/* The endpoint's operation flags, as far as atomics heed them (the msg
 * forms' own flags are checked instead). */
static uint64_t fdm_atomic_opflags(struct fid_ep *ep)
{
	return fdm_ep_of(ep)->tx_op_flags & FDM_ATOMIC_FLAGS;
}

static ssize_t fdm_atomic_write(struct fid_ep *ep, const void *buf, size_t count, void *desc,
				fi_addr_t dest, uint64_t addr, uint64_t key,
				enum fi_datatype dt, enum fi_op op, void *context)
{
	struct fi_ioc ioc = { (void *)(uintptr_t)buf, count };
	struct fdm_aop a = {
		.kind = FDM_AK_WRITE, .src = &ioc, .nsrc = 1, .dest = dest, .addr = addr,
		.key = key, .dt = dt, .op = op, .flags = fdm_atomic_opflags(ep),
		.context = context, .rcount = SIZE_MAX,
	};

	(void)desc;
	return fdm_atomic_submit(fdm_ep_of(ep), &a);
}

static ssize_t fdm_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
				 size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
				 enum fi_datatype dt, enum fi_op op, void *context)
{
	struct fdm_aop a = {
		.kind = FDM_AK_WRITE, .src = iov, .nsrc = count, .dest = dest, .addr = addr,
		.key = key, .dt = dt, .op = op, .flags = fdm_atomic_opflags(ep),
		.context = context, .rcount = SIZE_MAX,
	};

	(void)desc;
	return fdm_atomic_submit(fdm_ep_of(ep), &a);
}

/* What the msg forms share: one remote ioc (rma_iov_limit 1). */
static int fdm_atomic_from_msg(struct fdm_aop *a, uint8_t kind, const struct fi_msg_atomic *msg,
			       uint64_t flags)
{
	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov)
		return -FI_EINVAL;
	a->kind = kind;
	/* it must say what the local iocs hold */
	a->rcount = msg->rma_iov->count;
	a->src = msg->msg_iov;
	a->nsrc = msg->iov_count;
	a->dest = msg->addr;
	a->addr = msg->rma_iov->addr;
	a->key = msg->rma_iov->key;
	a->dt = msg->datatype;
	a->op = msg->op;
	a->flags = flags;
	a->context = msg->context;
	return 0;
}

static ssize_t fdm_atomic_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
				   uint64_t flags)
{
	struct fdm_aop a = { 0 };
	int ret = fdm_atomic_from_msg(&a, FDM_AK_WRITE, msg, flags);

	return ret ? ret : fdm_atomic_submit(fdm_ep_of(ep), &a);
}

static ssize_t fdm_atomic_inject(struct fid_ep *ep, const void *buf, size_t count,
				 fi_addr_t dest, uint64_t addr, uint64_t key,
				 enum fi_datatype dt, enum fi_op op)
{
	struct fi_ioc ioc = { (void *)(uintptr_t)buf, count };
	struct fdm_aop a = {
		.kind = FDM_AK_WRITE, .src = &ioc, .nsrc = 1, .dest = dest, .addr = addr,
		.key = key, .dt = dt, .op = op, .flags = FI_INJECT, .rcount = SIZE_MAX,
	};

	return fdm_atomic_submit(fdm_ep_of(ep), &a);
}

static ssize_t fdm_atomic_readwrite(struct fid_ep *ep, const void *buf, size_t count,
				    void *desc, void *result, void *result_desc,
				    fi_addr_t dest, uint64_t addr, uint64_t key,
				    enum fi_datatype dt, enum fi_op op, void *context)
{
	struct fi_ioc ioc = { (void *)(uintptr_t)buf, count };
	struct fi_ioc res = { result, count };
	struct fdm_aop a = {
		.kind = FDM_AK_FETCH, .src = &ioc, .nsrc = 1, .res = &res, .nres = 1,
		.dest = dest, .addr = addr, .key = key, .dt = dt, .op = op,
		.flags = fdm_atomic_opflags(ep), .context = context,
		.rcount = SIZE_MAX,
	};

	(void)desc;
	(void)result_desc;
	return fdm_atomic_submit(fdm_ep_of(ep), &a);
}

static ssize_t fdm_atomic_readwritev(struct fid_ep *ep, const struct fi_ioc *iov,
				     void **desc, size_t count, struct fi_ioc *resultv,
				     void **result_desc, size_t result_count,
				     fi_addr_t dest, uint64_t addr, uint64_t key,
				     enum fi_datatype dt, enum fi_op op, void *context)
{
	struct fdm_aop a = {
		.kind = FDM_AK_FETCH, .src = iov, .nsrc = count, .res = resultv,
		.nres = result_count, .dest = dest, .addr = addr, .key = key, .dt = dt,
		.op = op, .flags = fdm_atomic_opflags(ep), .context = context,
		.rcount = SIZE_MAX,
	};

	(void)desc;
	(void)result_desc;
	return fdm_atomic_submit(fdm_ep_of(ep), &a);
}

static ssize_t fdm_atomic_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
				       struct fi_ioc *resultv, void **result_desc,
				       size_t result_count, uint64_t flags)
{
	struct fdm_aop a = { 0 };
	int ret = fdm_atomic_from_msg(&a, FDM_AK_FETCH, msg, flags);

	(void)result_desc;
	a.res = resultv;
	a.nres = result_count;
	return ret ? ret : fdm_atomic_submit(fdm_ep_of(ep), &a);
}

static ssize_t fdm_atomic_compwrite(struct fid_ep *ep, const void *buf, size_t count,
				    void *desc, const void *compare, void *compare_desc,
				    void *result, void *result_desc, fi_addr_t dest,
				    uint64_t addr, uint64_t key, enum fi_datatype dt,
				    enum fi_op op, void *context)
{
	struct fi_ioc ioc = { (void *)(uintptr_t)buf, count };
	struct fi_ioc cmp = { (void *)(uintptr_t)compare, count };
	struct fi_ioc res = { result, count };
	struct fdm_aop a = {
		.kind = FDM_AK_COMPARE, .src = &ioc, .nsrc = 1, .cmp = &cmp, .ncmp = 1,
		.res = &res, .nres = 1, .dest = dest, .addr = addr, .key = key, .dt = dt,
		.op = op, .flags = fdm_atomic_opflags(ep), .context = context,
		.rcount = SIZE_MAX,
	};

	(void)desc;
	(void)compare_desc;
	(void)result_desc;
	return fdm_atomic_submit(fdm_ep_of(ep), &a);
}

static ssize_t fdm_atomic_compwritev(struct fid_ep *ep, const struct fi_ioc *iov,
				     void **desc, size_t count,
				     const struct fi_ioc *comparev, void **compare_desc,
				     size_t compare_count, struct fi_ioc *resultv,
				     void **result_desc, size_t result_count,
				     fi_addr_t dest, uint64_t addr, uint64_t key,
				     enum fi_datatype dt, enum fi_op op, void *context)
{
	struct fdm_aop a = {
		.kind = FDM_AK_COMPARE, .src = iov, .nsrc = count, .cmp = comparev,
		.ncmp = compare_count, .res = resultv, .nres = result_count,
		.dest = dest, .addr = addr, .key = key, .dt = dt, .op = op,
		.flags = fdm_atomic_opflags(ep), .context = context,
		.rcount = SIZE_MAX,
	};

	(void)desc;
	(void)compare_desc;
	(void)result_desc;
	return fdm_atomic_submit(fdm_ep_of(ep), &a);
}

static ssize_t fdm_atomic_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
				       const struct fi_ioc *comparev, void **compare_desc,
				       size_t compare_count, struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       uint64_t flags)
{
	struct fdm_aop a = { 0 };
	int ret = fdm_atomic_from_msg(&a, FDM_AK_COMPARE, msg, flags);

	(void)compare_desc;
	(void)result_desc;
	a.cmp = comparev;
	a.ncmp = compare_count;
	a.res = resultv;
	a.nres = result_count;
	return ret ? ret : fdm_atomic_submit(fdm_ep_of(ep), &a);
}

/* ---- what is supported ---- */

static int fdm_atomic_valid(uint8_t kind, enum fi_datatype dt, enum fi_op op,
			    size_t *count)
{
	if (!count)
		return -FI_EINVAL;
	if (!fdm_atomic_ok(kind, op, dt)) {
		*count = 0;
		return -FI_EOPNOTSUPP;
	}
	*count = fdm_atomic_max_count(kind, dt);
	return 0;
}

static int fdm_atomic_writevalid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op,
				 size_t *count)
{
	(void)ep;
	return fdm_atomic_valid(FDM_AK_WRITE, dt, op, count);
}

static int fdm_atomic_readwritevalid(struct fid_ep *ep, enum fi_datatype dt,
				     enum fi_op op, size_t *count)
{
	(void)ep;
	return fdm_atomic_valid(FDM_AK_FETCH, dt, op, count);
}

static int fdm_atomic_compwritevalid(struct fid_ep *ep, enum fi_datatype dt,
				     enum fi_op op, size_t *count)
{
	(void)ep;
	return fdm_atomic_valid(FDM_AK_COMPARE, dt, op, count);
}

int fdm_atomic_query(struct fid_domain *domain, enum fi_datatype dt, enum fi_op op,
		     struct fi_atomic_attr *attr, uint64_t flags)
{
	uint8_t kind = FDM_AK_WRITE;
	size_t count;
	int ret;

	(void)domain;
	if (!attr)
		return -FI_EINVAL;
	if ((flags & ~(uint64_t)(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC)) ||
	    ((flags & FI_FETCH_ATOMIC) && (flags & FI_COMPARE_ATOMIC)))
		return -FI_EBADFLAGS;
	if (flags & FI_FETCH_ATOMIC)
		kind = FDM_AK_FETCH;
	else if (flags & FI_COMPARE_ATOMIC)
		kind = FDM_AK_COMPARE;
	ret = fdm_atomic_valid(kind, dt, op, &count);
	if (ret)
		return ret;
	attr->size = fdm_atomic_dt_size(dt);
	attr->count = count;
	return 0;
}

struct fi_ops_atomic fdm_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = fdm_atomic_write,
	.writev = fdm_atomic_writev,
	.writemsg = fdm_atomic_writemsg,
	.inject = fdm_atomic_inject,
	.readwrite = fdm_atomic_readwrite,
	.readwritev = fdm_atomic_readwritev,
	.readwritemsg = fdm_atomic_readwritemsg,
	.compwrite = fdm_atomic_compwrite,
	.compwritev = fdm_atomic_compwritev,
	.compwritemsg = fdm_atomic_compwritemsg,
	.writevalid = fdm_atomic_writevalid,
	.readwritevalid = fdm_atomic_readwritevalid,
	.compwritevalid = fdm_atomic_compwritevalid,
};
