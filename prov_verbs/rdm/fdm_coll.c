/* Collectives of RDM endpoints (fi_collective(3)), in software over the
 * endpoint's own tagged messages, as upstream's verbs;ofi_rxm does them.
 *
 * A group is joined from an AV set (fi_join_collective); a member's rank is
 * its position in the set. Every operation is one round: each rank posts
 * all its receives, then all its sends, at once (n - 1 messages each way
 * at most), and the operation completes when all of them did. The data
 * needs no second round: allreduce has every rank send its input to every
 * other, and each reduces all n inputs in rank order (so floating-point
 * results are the same on every rank). That is O(n^2) messages, fine for
 * the groups of a few ranks this is for (docs/fi_rdm.7.md).
 *
 * Tags (FDM_COLL_TAG_BIT set: the application's are 63 bits wide, and its
 * receives never match these, fdm_coll_ignore_mask):
 *   bit 63: 1 | 62..40: group id | 39..16: sequence | 15..0: sender's rank
 * The group id is a hash of the members' addresses in order plus the
 * number of earlier joins of the same member list on this endpoint, so
 * every member computes it alone; the sequence counts the group's
 * operations (the join's barrier is 0), which every member issues in the
 * same order. A message for a group not joined yet waits in the
 * unexpected queue like any early tagged message.
 *
 * The transfers' completions never reach the application's CQs: their
 * contexts are the entries of this endpoint's xfer table, which
 * fdm_cq_write(_err) hands here first (fdm_coll_divert). Data from the
 * network is untrusted: each receive is posted for exactly the bytes the
 * operation expects, and a message of another size fails the operation
 * (FI_ETRUNC from the matcher when longer, FI_EIO here when shorter). */
#include <stdlib.h>
#include <string.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm.h"

#define FDM_COLL_MAX_MEMBERS	65536u	/* the rank field */
#define FDM_COLL_GID_BITS	23
#define FDM_COLL_SEQ_BITS	24
#define FDM_COLL_XFERS		1024u	/* transfers in flight per endpoint */

enum fdm_coll_kind {
	FDM_CK_JOIN, FDM_CK_BARRIER, FDM_CK_BROADCAST, FDM_CK_ALLREDUCE,
	FDM_CK_ALLGATHER, FDM_CK_SCATTER, FDM_CK_ALLTOALL, FDM_CK_REDUCE_SCATTER,
	FDM_CK_REDUCE, FDM_CK_GATHER,
};

struct fdm_coll_mc;

struct fdm_coll_op {
	struct fdm_coll_mc *mc;
	enum fdm_coll_kind kind;
	void *context;
	size_t outstanding;		/* transfers, + 1 while posting */
	int err;			/* the first failure (positive) */
	/* allreduce, reduce-scatter, reduce at the root: every rank's
	 * input (its slice), in rank order, reduced into result (reduce
	 * set); alltoall: a copy of the input, sent from there */
	bool reduce;
	uint8_t *slots;
	void *result;
	size_t count, bytes;
	enum fi_datatype dt;
	enum fi_op aop;
};

struct fdm_coll_xfer {
	struct fdm_coll_op *op;		/* NULL: free */
	bool recv;
	size_t expect;			/* bytes a receive must get */
};

struct fdm_coll_mc {
	struct fid_mc mc_fid;
	struct fdm_coll_ep *cep;
	struct fdm_coll_mc *next;
	fi_addr_t *members;
	size_t n, rank;
	uint64_t gid;
	uint32_t seq;
	bool joined;			/* FI_JOIN_COMPLETE written */
	size_t active;			/* operations not completed */
};

struct fdm_coll_ep {
	struct fdm_coll_ep *next;	/* domain's list */
	struct fdm_ep *ep;
	struct fdm_eq *eq;
	struct fdm_coll_mc *groups;
	struct fdm_coll_xfer xfers[FDM_COLL_XFERS];
	uint32_t xfree[FDM_COLL_XFERS];
	uint32_t nxfree;
	/* hashes of the member lists joined so far (group ids) */
	uint64_t *hist;
	size_t nhist, hist_cap;
};

/* ---- the endpoint's collective state ---- */

static struct fdm_coll_ep *fdm_coll_ep_find(struct fdm_ep *ep)
{
	for (struct fdm_coll_ep *c = ep->domain->coll_eps; c; c = c->next)
		if (c->ep == ep)
			return c;
	return NULL;
}

/* Lock held. */
static struct fdm_coll_ep *fdm_coll_ep_get(struct fdm_ep *ep)
{
	struct fdm_coll_ep *c = fdm_coll_ep_find(ep);

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ep = ep;
	for (uint32_t i = 0; i < FDM_COLL_XFERS; i++)
		c->xfree[i] = FDM_COLL_XFERS - 1 - i;
	c->nxfree = FDM_COLL_XFERS;
	c->next = ep->domain->coll_eps;
	ep->domain->coll_eps = c;
	return c;
}

int fdm_coll_bind_eq(struct fdm_ep *ep, struct fid *eq_fid)
{
	struct fdm_eq *eq = fdm_eq_from_fid(eq_fid);
	struct fdm_coll_ep *c;
	int ret = 0;

	/* an EQ of another fabric cannot take the layer's events; before
	 * issue 25 any EQ was accepted and never written: keep accepting,
	 * and a join on such an endpoint says -FI_ENOEQ */
	if (!eq)
		return 0;
	/* only a collective endpoint has events to report; the others keep
	 * the CQs' diversion test off (fdm_cq_write) */
	if (!(ep->info->caps & FI_COLLECTIVE))
		return 0;
	fdm_lock(ep->domain);
	c = fdm_coll_ep_get(ep);
	if (!c)
		ret = -FI_ENOMEM;
	else if (c->eq)
		ret = -FI_EINVAL;
	else {
		c->eq = eq;
		fdm_eq_ref(eq, 1);
	}
	fdm_unlock(ep->domain);
	return ret;
}

int fdm_coll_ep_close(struct fdm_ep *ep)
{
	struct fdm_coll_ep **pp, *c;

	fdm_lock(ep->domain);
	for (pp = &ep->domain->coll_eps; (c = *pp); pp = &c->next)
		if (c->ep == ep)
			break;
	if (!c) {
		fdm_unlock(ep->domain);
		return 0;
	}
	if (c->groups) {
		fdm_unlock(ep->domain);
		return -FI_EBUSY;
	}
	*pp = c->next;
	fdm_unlock(ep->domain);
	if (c->eq)
		fdm_eq_ref(c->eq, -1);
	free(c->hist);
	free(c);
	return 0;
}

/* ---- operations ---- */

static uint64_t fdm_coll_tag(const struct fdm_coll_mc *mc, uint32_t seq, size_t src_rank)
{
	return FDM_COLL_TAG_BIT | mc->gid << 40 |
	       (uint64_t)(seq & ((1u << FDM_COLL_SEQ_BITS) - 1)) << 16 | (uint64_t)src_rank;
}

static void fdm_coll_op_free(struct fdm_coll_op *op)
{
	free(op->slots);
	free(op);
}

/* Every transfer of op is done: the result, then the completion (the
 * application's CQ, or for a join the EQ). Lock held. */
static void fdm_coll_finish(struct fdm_coll_op *op)
{
	struct fdm_coll_mc *mc = op->mc;
	struct fdm_coll_ep *c = mc->cep;
	struct fdm_ep *ep = c->ep;

	if (!op->err && op->reduce) {
		memcpy(op->result, op->slots, op->bytes);
		for (size_t r = 1; r < mc->n; r++)
			fdm_atomic_apply(op->aop, op->dt, op->result,
					 op->slots + r * op->bytes, NULL, NULL, op->count);
	}
	mc->active--;
	if (op->kind == FDM_CK_JOIN) {
		struct fi_eq_entry e = { .fid = &mc->mc_fid.fid, .context = op->context };

		if (op->err) {
			fdm_eq_write_error(c->eq, &mc->mc_fid.fid, op->context, 0, op->err);
		} else {
			mc->joined = true;
			fdm_eq_write_event(c->eq, FI_JOIN_COMPLETE, &e, sizeof(e));
		}
	} else if (op->err) {
		fdm_cq_write_err(ep->tx_cq, op->context, FI_COLLECTIVE, op->err, 0,
				 0, 0, 0, 0);
	} else {
		fdm_cq_write(ep->tx_cq, op->context, FI_COLLECTIVE, 0, NULL, 0, 0,
			     FI_ADDR_NOTAVAIL);
	}
	fdm_coll_op_free(op);
}

/* One transfer (or the posting hold) is over. Lock held. */
static void fdm_coll_put(struct fdm_coll_op *op, int err)
{
	if (err && !op->err)
		op->err = err;
	if (!--op->outstanding)
		fdm_coll_finish(op);
}

bool fdm_coll_divert(struct fdm_domain *d, void *context, size_t len, int err)
{
	uintptr_t p = (uintptr_t)context;

	for (struct fdm_coll_ep *c = d->coll_eps; c; c = c->next) {
		struct fdm_coll_xfer *x;
		struct fdm_coll_op *op;

		/* an address compare only: the application's contexts are
		 * never read */
		if (p < (uintptr_t)c->xfers || p >= (uintptr_t)(c->xfers + FDM_COLL_XFERS))
			continue;
		x = context;
		op = x->op;
		if (!op)
			return true;	/* not ours any more: nothing to tell */
		/* a peer's message of another size than the operation's */
		if (!err && x->recv && len != x->expect)
			err = FI_EIO;
		x->op = NULL;
		c->xfree[c->nxfree++] = (uint32_t)(x - c->xfers);
		fdm_coll_put(op, err);
		return true;
	}
	return false;
}

/* What one operation moves: to and from whom, where. */
struct fdm_coll_plan {
	size_t nsend, nrecv;
	struct fdm_coll_io {
		size_t peer;
		void *buf;
		size_t len;
	} *send, *recv;
};

static ssize_t fdm_coll_post_one(struct fdm_coll_ep *c, struct fdm_coll_op *op,
				 bool recv, const struct fdm_coll_io *io, uint64_t tag)
{
	struct fdm_ep *ep = c->ep;
	struct fdm_coll_mc *mc = op->mc;
	struct fdm_coll_xfer *x;
	struct iovec iov = { .iov_base = io->buf, .iov_len = io->len };
	struct fi_msg_tagged m = {
		.msg_iov = &iov, .iov_count = 1, .addr = mc->members[io->peer],
		.tag = tag,
	};
	ssize_t ret;

	fdm_lock(ep->domain);
	if (!c->nxfree) {
		/* another thread's operation took them since the check */
		fdm_coll_put(op, FI_EAGAIN);
		fdm_unlock(ep->domain);
		return -FI_EAGAIN;
	}
	x = &c->xfers[c->xfree[--c->nxfree]];
	x->op = op;
	x->recv = recv;
	x->expect = io->len;
	fdm_unlock(ep->domain);
	m.context = x;
	ret = recv ? fdm_tagged_ops.recvmsg(&ep->ep_fid, &m, FI_COMPLETION) :
		     fdm_tagged_ops.sendmsg(&ep->ep_fid, &m, FI_COMPLETION);
	if (ret) {
		fdm_lock(ep->domain);
		x->op = NULL;
		c->xfree[c->nxfree++] = (uint32_t)(x - c->xfers);
		fdm_coll_put(op, (int)-ret);
		fdm_unlock(ep->domain);
	}
	return ret;
}

/* Start op on mc with plan: -FI_EAGAIN (nothing started) when the
 * endpoint lacks the requests for all of it; else 0, and the completion
 * tells how it went. Takes op. */
static ssize_t fdm_coll_start(struct fdm_coll_mc *mc, struct fdm_coll_op *op,
			      const struct fdm_coll_plan *p)
{
	struct fdm_coll_ep *c = mc->cep;
	struct fdm_ep *ep = c->ep;
	uint32_t seq;

	fdm_lock(ep->domain);
	if (c->nxfree < p->nsend + p->nrecv ||
	    ep->tx_nfree < ep->tx_reserve + p->nsend || ep->rx_nfree < p->nrecv) {
		fdm_unlock(ep->domain);
		fdm_coll_op_free(op);
		return -FI_EAGAIN;
	}
	seq = mc->seq++;
	op->mc = mc;
	op->outstanding = p->nsend + p->nrecv + 1;
	mc->active++;
	fdm_unlock(ep->domain);
	/* receives first: a peer's message finds its receive posted */
	for (size_t i = 0; i < p->nrecv; i++)
		fdm_coll_post_one(c, op, true, &p->recv[i],
				  fdm_coll_tag(mc, seq, p->recv[i].peer));
	for (size_t i = 0; i < p->nsend; i++)
		fdm_coll_post_one(c, op, false, &p->send[i], fdm_coll_tag(mc, seq, mc->rank));
	fdm_lock(ep->domain);
	fdm_coll_put(op, 0);
	fdm_unlock(ep->domain);
	return 0;
}

/* The group behind coll_addr on ep, joined; NULL when there is none. */
static struct fdm_coll_mc *fdm_coll_group(struct fdm_ep *ep, fi_addr_t coll_addr,
					  int *err)
{
	struct fdm_coll_ep *c;
	struct fdm_coll_mc *mc = NULL;

	*err = -FI_EINVAL;
	if (!ep->enabled || !ep->tx_cq || !ep->rx_cq)
		return NULL;
	fdm_lock(ep->domain);
	c = fdm_coll_ep_find(ep);
	for (mc = c ? c->groups : NULL; mc; mc = mc->next)
		if ((fi_addr_t)(uintptr_t)mc == coll_addr)
			break;
	if (mc && !mc->joined) {
		*err = -FI_EOPBADSTATE;
		mc = NULL;
	}
	fdm_unlock(ep->domain);
	return mc;
}

static int fdm_coll_rank_of(const struct fdm_coll_mc *mc, fi_addr_t addr, size_t *rank)
{
	for (size_t i = 0; i < mc->n; i++) {
		if (mc->members[i] == addr) {
			*rank = i;
			return 0;
		}
	}
	return -FI_EINVAL;
}

/* Bytes of count elements of dt, or an error for a type the layer does
 * not move (void, long double) or a size past the largest message. */
static int fdm_coll_bytes(enum fi_datatype dt, size_t count, size_t nslices, size_t *bytes)
{
	size_t size = fdm_atomic_dt_size(dt);

	if (!size)
		return -FI_EINVAL;
	if (count > FDM_MAX_MSG_SIZE / size / (nslices ? nslices : 1))
		return -FI_EMSGSIZE;
	*bytes = count * size;
	return 0;
}

/* A plan with room for n - 1 sends and receives. */
static int fdm_coll_plan_alloc(struct fdm_coll_plan *p, size_t n)
{
	p->nsend = p->nrecv = 0;
	p->send = calloc(2 * (n ? n : 1), sizeof(*p->send));
	p->recv = p->send ? p->send + (n ? n : 1) : NULL;
	return p->send ? 0 : -FI_ENOMEM;
}

static ssize_t fdm_coll_run(struct fdm_coll_mc *mc, struct fdm_coll_op *op,
			    struct fdm_coll_plan *p)
{
	ssize_t ret = fdm_coll_start(mc, op, p);

	free(p->send);
	return ret;
}

static struct fdm_coll_op *fdm_coll_op_new(enum fdm_coll_kind kind, void *context)
{
	struct fdm_coll_op *op = calloc(1, sizeof(*op));

	if (op) {
		op->kind = kind;
		op->context = context;
	}
	return op;
}

/* Zero bytes to and from every other member. */
static ssize_t fdm_coll_barrier_on(struct fdm_coll_mc *mc, enum fdm_coll_kind kind,
				   void *context)
{
	struct fdm_coll_plan p;
	struct fdm_coll_op *op = fdm_coll_op_new(kind, context);

	if (!op || fdm_coll_plan_alloc(&p, mc->n)) {
		free(op);
		return -FI_ENOMEM;
	}
	for (size_t r = 0; r < mc->n; r++) {
		if (r == mc->rank)
			continue;
		p.send[p.nsend++] = (struct fdm_coll_io){ r, NULL, 0 };
		p.recv[p.nrecv++] = (struct fdm_coll_io){ r, NULL, 0 };
	}
	return fdm_coll_run(mc, op, &p);
}

static ssize_t fdm_coll_barrier2(struct fid_ep *ep_fid, fi_addr_t coll_addr,
				 uint64_t flags, void *context)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);
	struct fdm_coll_mc *mc;
	int err;

	if (flags)
		return -FI_EBADFLAGS;
	mc = fdm_coll_group(ep, coll_addr, &err);
	if (!mc)
		return err;
	return fdm_coll_barrier_on(mc, FDM_CK_BARRIER, context);
}

static ssize_t fdm_coll_barrier(struct fid_ep *ep, fi_addr_t coll_addr, void *context)
{
	return fdm_coll_barrier2(ep, coll_addr, 0, context);
}

static ssize_t fdm_coll_broadcast(struct fid_ep *ep_fid, void *buf, size_t count,
				  void *desc, fi_addr_t coll_addr, fi_addr_t root_addr,
				  enum fi_datatype dt, uint64_t flags, void *context)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);
	struct fdm_coll_mc *mc;
	struct fdm_coll_plan p;
	struct fdm_coll_op *op;
	size_t root, bytes;
	int err;

	(void)desc;
	if (flags)
		return -FI_EBADFLAGS;
	mc = fdm_coll_group(ep, coll_addr, &err);
	if (!mc)
		return err;
	err = fdm_coll_bytes(dt, count, 1, &bytes);
	if (!err)
		err = fdm_coll_rank_of(mc, root_addr, &root);
	if (err)
		return err;
	if (bytes && !buf)
		return -FI_EINVAL;
	op = fdm_coll_op_new(FDM_CK_BROADCAST, context);
	if (!op || fdm_coll_plan_alloc(&p, mc->n)) {
		free(op);
		return -FI_ENOMEM;
	}
	if (mc->rank == root) {
		for (size_t r = 0; r < mc->n; r++)
			if (r != root)
				p.send[p.nsend++] = (struct fdm_coll_io){ r, buf, bytes };
	} else {
		p.recv[p.nrecv++] = (struct fdm_coll_io){ root, buf, bytes };
	}
	return fdm_coll_run(mc, op, &p);
}

static ssize_t fdm_coll_allreduce(struct fid_ep *ep_fid, const void *buf, size_t count,
				  void *desc, void *result, void *result_desc,
				  fi_addr_t coll_addr, enum fi_datatype dt, enum fi_op aop,
				  uint64_t flags, void *context)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);
	struct fdm_coll_mc *mc;
	struct fdm_coll_plan p;
	struct fdm_coll_op *op;
	size_t bytes;
	int err;

	(void)desc;
	(void)result_desc;
	if (flags)
		return -FI_EBADFLAGS;
	mc = fdm_coll_group(ep, coll_addr, &err);
	if (!mc)
		return err;
	/* the reductions fi_atomic(3) defines for dt */
	if ((unsigned)aop > FI_BXOR || !fdm_atomic_ok(FDM_AK_WRITE, aop, dt))
		return -FI_EINVAL;
	err = fdm_coll_bytes(dt, count, mc->n, &bytes);
	if (err)
		return err;
	if (bytes && (!buf || !result))
		return -FI_EINVAL;
	op = fdm_coll_op_new(FDM_CK_ALLREDUCE, context);
	if (!op)
		return -FI_ENOMEM;
	op->slots = malloc(bytes ? mc->n * bytes : 1);
	if (!op->slots || fdm_coll_plan_alloc(&p, mc->n)) {
		fdm_coll_op_free(op);
		return -FI_ENOMEM;
	}
	op->reduce = true;
	op->result = result;
	op->count = count;
	op->bytes = bytes;
	op->dt = dt;
	op->aop = aop;
	/* our own input is copied: result may be buf */
	if (bytes)
		memcpy(op->slots + mc->rank * bytes, buf, bytes);
	for (size_t r = 0; r < mc->n; r++) {
		if (r == mc->rank)
			continue;
		p.send[p.nsend++] = (struct fdm_coll_io){ r, op->slots + mc->rank * bytes, bytes };
		p.recv[p.nrecv++] = (struct fdm_coll_io){ r, op->slots + r * bytes, bytes };
	}
	return fdm_coll_run(mc, op, &p);
}

static ssize_t fdm_coll_allgather(struct fid_ep *ep_fid, const void *buf, size_t count,
				  void *desc, void *result, void *result_desc,
				  fi_addr_t coll_addr, enum fi_datatype dt, uint64_t flags,
				  void *context)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);
	struct fdm_coll_mc *mc;
	struct fdm_coll_plan p;
	struct fdm_coll_op *op;
	uint8_t *res = result;
	size_t bytes;
	int err;

	(void)desc;
	(void)result_desc;
	if (flags)
		return -FI_EBADFLAGS;
	mc = fdm_coll_group(ep, coll_addr, &err);
	if (!mc)
		return err;
	err = fdm_coll_bytes(dt, count, mc->n, &bytes);
	if (err)
		return err;
	if (bytes && (!buf || !result))
		return -FI_EINVAL;
	op = fdm_coll_op_new(FDM_CK_ALLGATHER, context);
	if (!op || fdm_coll_plan_alloc(&p, mc->n)) {
		free(op);
		return -FI_ENOMEM;
	}
	/* our own slice first, from buf, which then goes out from there */
	if (bytes)
		memmove(res + mc->rank * bytes, buf, bytes);
	for (size_t r = 0; r < mc->n; r++) {
		if (r == mc->rank)
			continue;
		p.send[p.nsend++] = (struct fdm_coll_io){ r, res + mc->rank * bytes, bytes };
		p.recv[p.nrecv++] = (struct fdm_coll_io){ r, res + r * bytes, bytes };
	}
	return fdm_coll_run(mc, op, &p);
}

static ssize_t fdm_coll_scatter(struct fid_ep *ep_fid, const void *buf, size_t count,
				void *desc, void *result, void *result_desc,
				fi_addr_t coll_addr, fi_addr_t root_addr,
				enum fi_datatype dt, uint64_t flags, void *context)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);
	struct fdm_coll_mc *mc;
	struct fdm_coll_plan p;
	struct fdm_coll_op *op;
	size_t root, bytes;
	int err;

	(void)desc;
	(void)result_desc;
	if (flags)
		return -FI_EBADFLAGS;
	mc = fdm_coll_group(ep, coll_addr, &err);
	if (!mc)
		return err;
	err = fdm_coll_bytes(dt, count, mc->n, &bytes);
	if (!err)
		err = fdm_coll_rank_of(mc, root_addr, &root);
	if (err)
		return err;
	if (bytes && (!result || (mc->rank == root && !buf)))
		return -FI_EINVAL;
	op = fdm_coll_op_new(FDM_CK_SCATTER, context);
	if (!op || fdm_coll_plan_alloc(&p, mc->n)) {
		free(op);
		return -FI_ENOMEM;
	}
	if (mc->rank == root) {
		const uint8_t *src = buf;

		if (bytes)
			memmove(result, src + root * bytes, bytes);
		for (size_t r = 0; r < mc->n; r++)
			if (r != root)
				p.send[p.nsend++] = (struct fdm_coll_io){
					r, (void *)(uintptr_t)(src + r * bytes), bytes };
	} else {
		p.recv[p.nrecv++] = (struct fdm_coll_io){ root, result, bytes };
	}
	return fdm_coll_run(mc, op, &p);
}

/* Slice r of the input goes to rank r, slice r of the result comes from
 * rank r (count elements each: buf and result hold n slices). The input
 * is copied first, so result may be buf. */
static ssize_t fdm_coll_alltoall(struct fid_ep *ep_fid, const void *buf, size_t count,
				 void *desc, void *result, void *result_desc,
				 fi_addr_t coll_addr, enum fi_datatype dt, uint64_t flags,
				 void *context)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);
	struct fdm_coll_mc *mc;
	struct fdm_coll_plan p;
	struct fdm_coll_op *op;
	uint8_t *res = result;
	size_t bytes;
	int err;

	(void)desc;
	(void)result_desc;
	if (flags)
		return -FI_EBADFLAGS;
	mc = fdm_coll_group(ep, coll_addr, &err);
	if (!mc)
		return err;
	err = fdm_coll_bytes(dt, count, mc->n, &bytes);
	if (err)
		return err;
	if (bytes && (!buf || !result))
		return -FI_EINVAL;
	op = fdm_coll_op_new(FDM_CK_ALLTOALL, context);
	if (!op)
		return -FI_ENOMEM;
	op->slots = malloc(bytes ? mc->n * bytes : 1);
	if (!op->slots || fdm_coll_plan_alloc(&p, mc->n)) {
		fdm_coll_op_free(op);
		return -FI_ENOMEM;
	}
	if (bytes) {
		memcpy(op->slots, buf, mc->n * bytes);
		memcpy(res + mc->rank * bytes, op->slots + mc->rank * bytes, bytes);
	}
	for (size_t r = 0; r < mc->n; r++) {
		if (r == mc->rank)
			continue;
		p.send[p.nsend++] = (struct fdm_coll_io){ r, op->slots + r * bytes, bytes };
		p.recv[p.nrecv++] = (struct fdm_coll_io){ r, res + r * bytes, bytes };
	}
	return fdm_coll_run(mc, op, &p);
}

/* The reductions fi_atomic(3) defines for dt (as allreduce). */
static bool fdm_coll_op_ok(enum fi_op aop, enum fi_datatype dt)
{
	return (unsigned)aop <= FI_BXOR && fdm_atomic_ok(FDM_AK_WRITE, aop, dt);
}

/* Every rank's input is n slices of count elements; rank r's result
 * (count elements) is slice r of all inputs reduced in rank order. */
static ssize_t fdm_coll_reduce_scatter(struct fid_ep *ep_fid, const void *buf, size_t count,
				       void *desc, void *result, void *result_desc,
				       fi_addr_t coll_addr, enum fi_datatype dt,
				       enum fi_op aop, uint64_t flags, void *context)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);
	const uint8_t *in = buf;
	struct fdm_coll_mc *mc;
	struct fdm_coll_plan p;
	struct fdm_coll_op *op;
	size_t bytes;
	int err;

	(void)desc;
	(void)result_desc;
	if (flags)
		return -FI_EBADFLAGS;
	mc = fdm_coll_group(ep, coll_addr, &err);
	if (!mc)
		return err;
	if (!fdm_coll_op_ok(aop, dt))
		return -FI_EINVAL;
	err = fdm_coll_bytes(dt, count, mc->n, &bytes);
	if (err)
		return err;
	if (bytes && (!buf || !result))
		return -FI_EINVAL;
	op = fdm_coll_op_new(FDM_CK_REDUCE_SCATTER, context);
	if (!op)
		return -FI_ENOMEM;
	/* slots: what every rank gives for our slice; then the input's
	 * other slices, which go out from this copy (result may be buf) */
	op->slots = malloc(bytes ? 2 * mc->n * bytes : 1);
	if (!op->slots || fdm_coll_plan_alloc(&p, mc->n)) {
		fdm_coll_op_free(op);
		return -FI_ENOMEM;
	}
	op->reduce = true;
	op->result = result;
	op->count = count;
	op->bytes = bytes;
	op->dt = dt;
	op->aop = aop;
	if (bytes) {
		memcpy(op->slots + mc->n * bytes, in, mc->n * bytes);
		memcpy(op->slots + mc->rank * bytes, in + mc->rank * bytes, bytes);
	}
	for (size_t r = 0; r < mc->n; r++) {
		if (r == mc->rank)
			continue;
		p.send[p.nsend++] = (struct fdm_coll_io){
			r, op->slots + (mc->n + r) * bytes, bytes };
		p.recv[p.nrecv++] = (struct fdm_coll_io){ r, op->slots + r * bytes, bytes };
	}
	return fdm_coll_run(mc, op, &p);
}

/* The root's result is every rank's input (count elements) reduced in
 * rank order; the others only send (their result is not touched). */
static ssize_t fdm_coll_reduce(struct fid_ep *ep_fid, const void *buf, size_t count,
			       void *desc, void *result, void *result_desc,
			       fi_addr_t coll_addr, fi_addr_t root_addr,
			       enum fi_datatype dt, enum fi_op aop, uint64_t flags,
			       void *context)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);
	struct fdm_coll_mc *mc;
	struct fdm_coll_plan p;
	struct fdm_coll_op *op;
	size_t root, bytes;
	int err;

	(void)desc;
	(void)result_desc;
	if (flags)
		return -FI_EBADFLAGS;
	mc = fdm_coll_group(ep, coll_addr, &err);
	if (!mc)
		return err;
	if (!fdm_coll_op_ok(aop, dt))
		return -FI_EINVAL;
	err = fdm_coll_bytes(dt, count, mc->n, &bytes);
	if (!err)
		err = fdm_coll_rank_of(mc, root_addr, &root);
	if (err)
		return err;
	if (bytes && (!buf || (mc->rank == root && !result)))
		return -FI_EINVAL;
	op = fdm_coll_op_new(FDM_CK_REDUCE, context);
	if (!op || fdm_coll_plan_alloc(&p, mc->n)) {
		free(op);
		return -FI_ENOMEM;
	}
	if (mc->rank != root) {
		p.send[p.nsend++] = (struct fdm_coll_io){ root, (void *)(uintptr_t)buf, bytes };
		return fdm_coll_run(mc, op, &p);
	}
	op->slots = malloc(bytes ? mc->n * bytes : 1);
	if (!op->slots) {
		free(p.send);
		fdm_coll_op_free(op);
		return -FI_ENOMEM;
	}
	op->reduce = true;
	op->result = result;
	op->count = count;
	op->bytes = bytes;
	op->dt = dt;
	op->aop = aop;
	if (bytes)
		memcpy(op->slots + root * bytes, buf, bytes);
	for (size_t r = 0; r < mc->n; r++)
		if (r != root)
			p.recv[p.nrecv++] = (struct fdm_coll_io){ r, op->slots + r * bytes, bytes };
	return fdm_coll_run(mc, op, &p);
}

/* The root's result is n slices, slice r rank r's input (count elements
 * each); the others only send. */
static ssize_t fdm_coll_gather(struct fid_ep *ep_fid, const void *buf, size_t count,
			       void *desc, void *result, void *result_desc,
			       fi_addr_t coll_addr, fi_addr_t root_addr,
			       enum fi_datatype dt, uint64_t flags, void *context)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);
	struct fdm_coll_mc *mc;
	struct fdm_coll_plan p;
	struct fdm_coll_op *op;
	uint8_t *res = result;
	size_t root, bytes;
	int err;

	(void)desc;
	(void)result_desc;
	if (flags)
		return -FI_EBADFLAGS;
	mc = fdm_coll_group(ep, coll_addr, &err);
	if (!mc)
		return err;
	err = fdm_coll_bytes(dt, count, mc->n, &bytes);
	if (!err)
		err = fdm_coll_rank_of(mc, root_addr, &root);
	if (err)
		return err;
	if (bytes && (!buf || (mc->rank == root && !result)))
		return -FI_EINVAL;
	op = fdm_coll_op_new(FDM_CK_GATHER, context);
	if (!op || fdm_coll_plan_alloc(&p, mc->n)) {
		free(op);
		return -FI_ENOMEM;
	}
	if (mc->rank != root) {
		p.send[p.nsend++] = (struct fdm_coll_io){ root, (void *)(uintptr_t)buf, bytes };
	} else {
		if (bytes)
			memmove(res + root * bytes, buf, bytes);
		for (size_t r = 0; r < mc->n; r++)
			if (r != root)
				p.recv[p.nrecv++] = (struct fdm_coll_io){ r, res + r * bytes, bytes };
	}
	return fdm_coll_run(mc, op, &p);
}

/* ---- groups ---- */

static uint64_t fdm_coll_hash(struct fdm_av *av, const fi_addr_t *m, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (size_t i = 0; i < n; i++) {
		const struct fdm_name *nm = fdm_av_name(av, m[i]);
		const uint8_t *b = (const uint8_t *)&nm->u;

		for (uint32_t k = 0; k < nm->len; k++)
			h = (h ^ b[k]) * 0x100000001b3ULL;
		h = (h ^ 0xff) * 0x100000001b3ULL;
	}
	return h;
}

static int fdm_coll_mc_close(struct fid *fid)
{
	struct fdm_coll_mc *mc = fdv_container_of(fid, struct fdm_coll_mc, mc_fid.fid);
	struct fdm_coll_ep *c = mc->cep;
	struct fdm_domain *d = c->ep->domain;
	struct fdm_coll_mc **pp;

	fdm_lock(d);
	if (mc->active) {
		fdm_unlock(d);
		return -FI_EBUSY;
	}
	for (pp = &c->groups; *pp; pp = &(*pp)->next) {
		if (*pp == mc) {
			*pp = mc->next;
			break;
		}
	}
	fdm_unlock(d);
	if (c->eq)
		fdm_eq_forget(c->eq, &mc->mc_fid.fid);
	free(mc->members);
	free(mc);
	return 0;
}

static struct fi_ops fdm_coll_mc_fi_ops =
	FD_FI_OPS(fdm_coll_mc_close, fd_no_fid_bind, fd_no_fid_control, fd_no_fid_tostr);

/* fi_join_collective: addr is a struct fi_collective_addr naming an AV set
 * of this endpoint's AV (coll_addr its fi_av_set_addr, or
 * FI_ADDR_NOTAVAIL); the endpoint must be a member. The join is itself a
 * barrier of the members; FI_JOIN_COMPLETE (or an error entry) comes on
 * the endpoint's EQ. */
int fdm_coll_join(struct fid_ep *ep_fid, const void *addr, uint64_t flags,
		  struct fid_mc **mc_out, void *context)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);
	const struct fi_collective_addr *ca = addr;
	const struct fdm_av_set *set;
	struct fdm_coll_ep *c;
	struct fdm_coll_mc *mc;
	uint64_t h;
	size_t again = 0;
	ssize_t ret;

	if (!(flags & FI_COLLECTIVE) || !(ep->info->caps & FI_COLLECTIVE))
		return -FI_ENOSYS;	/* multicast groups: not served */
	if (flags & ~(uint64_t)(FI_COLLECTIVE | FI_SEND | FI_RECV))
		return -FI_EBADFLAGS;
	if (!ca || !mc_out)
		return -FI_EINVAL;
	set = fdm_av_set_of(ca->set);
	if (!set || set->av != ep->av ||
	    (ca->coll_addr != FI_ADDR_NOTAVAIL && ca->coll_addr != (fi_addr_t)(uintptr_t)set))
		return -FI_EINVAL;
	if (!ep->enabled || !ep->tx_cq || !ep->rx_cq)
		return -FI_EOPBADSTATE;
	if (!set->n || set->n > FDM_COLL_MAX_MEMBERS)
		return -FI_EINVAL;
	mc = calloc(1, sizeof(*mc));
	if (!mc)
		return -FI_ENOMEM;
	mc->members = malloc(set->n * sizeof(*mc->members));
	if (!mc->members) {
		free(mc);
		return -FI_ENOMEM;
	}
	memcpy(mc->members, set->members, set->n * sizeof(*mc->members));
	mc->n = set->n;
	mc->rank = SIZE_MAX;
	fdm_lock(ep->domain);
	c = fdm_coll_ep_find(ep);
	ret = !c || !c->eq ? -FI_ENOEQ : 0;
	for (size_t i = 0; !ret && i < mc->n; i++) {
		const struct fdm_name *nm = fdm_av_name(ep->av, mc->members[i]);

		if (!nm)
			ret = -FI_EINVAL;	/* removed from the AV since */
		else if (fdm_name_eq(nm, &ep->name))
			mc->rank = i;
	}
	if (!ret && mc->rank == SIZE_MAX)
		ret = -FI_EINVAL;		/* we are not a member */
	if (!ret) {
		h = fdm_coll_hash(ep->av, mc->members, mc->n);
		for (size_t i = 0; i < c->nhist; i++)
			again += c->hist[i] == h;
		if (c->nhist == c->hist_cap) {
			size_t cap = c->hist_cap ? 2 * c->hist_cap : 8;
			uint64_t *t = realloc(c->hist, cap * sizeof(*t));

			if (!t)
				ret = -FI_ENOMEM;
			else
				c->hist = t, c->hist_cap = cap;
		}
	}
	if (ret) {
		fdm_unlock(ep->domain);
		free(mc->members);
		free(mc);
		return (int)ret;
	}
	c->hist[c->nhist++] = h;
	mc->gid = (h + again * 0x9e3779b97f4a7c15ULL) >> (64 - FDM_COLL_GID_BITS);
	mc->cep = c;
	fd_fid_init(&mc->mc_fid.fid, FI_CLASS_MC, context, &fdm_coll_mc_fi_ops);
	mc->mc_fid.fi_addr = (fi_addr_t)(uintptr_t)mc;
	mc->next = c->groups;
	c->groups = mc;
	fdm_unlock(ep->domain);
	ret = fdm_coll_barrier_on(mc, FDM_CK_JOIN, context);
	if (ret) {
		/* not joined: a retry must get the same group id */
		fdm_lock(ep->domain);
		for (size_t i = c->nhist; i-- > 0;) {
			if (c->hist[i] == h) {
				memmove(&c->hist[i], &c->hist[i + 1],
					(c->nhist - i - 1) * sizeof(*c->hist));
				c->nhist--;
				break;
			}
		}
		fdm_unlock(ep->domain);
		fdm_coll_mc_close(&mc->mc_fid.fid);
		return (int)ret;
	}
	*mc_out = &mc->mc_fid;
	return 0;
}

/* ---- fi_query_collective ---- */

int fdm_coll_query(struct fid_domain *domain, enum fi_collective_op coll,
		   struct fi_collective_attr *attr, uint64_t flags)
{
	size_t size = 0;

	(void)domain;
	if (!attr)
		return -FI_EINVAL;
	/* fi_collective(3): the flag FI_SCATTER asks about reduce-scatter
	 * (the header defines no other value for it than the enum's), of
	 * the reduction coll names */
	if (flags == (uint64_t)FI_SCATTER && (coll == FI_ALLREDUCE || coll == FI_REDUCE_SCATTER))
		coll = FI_REDUCE_SCATTER;
	else if (flags)
		return -FI_EBADFLAGS;
	switch (coll) {
	case FI_BARRIER:
		break;
	case FI_BROADCAST:
	case FI_ALLGATHER:
	case FI_SCATTER:
	case FI_ALLTOALL:
	case FI_GATHER:
		size = fdm_atomic_dt_size(attr->datatype);
		if (!size)
			return -FI_EOPNOTSUPP;
		break;
	case FI_ALLREDUCE:
	case FI_REDUCE_SCATTER:
	case FI_REDUCE:
		if (!fdm_coll_op_ok(attr->op, attr->datatype))
			return -FI_EOPNOTSUPP;
		size = fdm_atomic_dt_size(attr->datatype);
		break;
	default:
		return -FI_ENOSYS;
	}
	attr->datatype_attr.size = size;
	attr->datatype_attr.count = size ? FDM_MAX_MSG_SIZE / size : 0;
	attr->max_members = FDM_COLL_MAX_MEMBERS;
	attr->mode = 0;
	return 0;
}

struct fi_ops_collective fdm_coll_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = fdm_coll_barrier,
	.broadcast = fdm_coll_broadcast,
	.alltoall = fdm_coll_alltoall,
	.allreduce = fdm_coll_allreduce,
	.allgather = fdm_coll_allgather,
	.reduce_scatter = fdm_coll_reduce_scatter,
	.reduce = fdm_coll_reduce,
	.scatter = fdm_coll_scatter,
	.gather = fdm_coll_gather,
	.msg = fd_no_collective_msg,
	.barrier2 = fdm_coll_barrier2,
};
