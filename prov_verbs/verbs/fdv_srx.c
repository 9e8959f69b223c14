/* Shared receive contexts (fi_srx_context) over an ibv SRQ: many MSG
 * endpoints draw their receives from one pool, so receive memory does not
 * grow with the number of connections.
 *
 * The context is an endpoint object whose data path is the MSG one: its
 * fi_recv/fi_recvv/fi_recvmsg build the same work request as on a MSG
 * endpoint and, finding no qp_rx, take the out-of-line fdv_ep_recv_no_qp,
 * which posts to the SRQ. Transmit calls find no qp_tx and fail with
 * -FI_EOPNOTSUPP. A receive's completion arrives on the receive CQ of
 * whichever endpoint the message came in on, with the context given to
 * the SRX.
 *
 * Closing: an SRQ cannot be destroyed while a QP uses it, so fi_close
 * refuses (-FI_EBUSY) while endpoints are bound. Closing one endpoint
 * leaves the shared receives in place for the others (verbs does not flush
 * an SRQ when one of its QPs goes away). Receives still posted when the
 * SRX itself closes are returned to the application without completions,
 * as upstream's verbs provider does: no CQ is left that could carry them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdv_internal.h"

/* Used when the application gives no size: a pool of the default receive
 * queue's depth, within what the device allows. */
#define FDV_SRX_DEFAULT_SIZE 384

static int fdv_srx_close(struct fid *fid)
{
	struct fdv_srx *srx = fdv_srx_of_fid(fid);
	int ret;

	if (atomic_load(&srx->refs)) {
		FD_WARN(FD_LOG_EP_CTRL, "fi_close of a shared receive context with %d endpoint(s) still bound",
			atomic_load(&srx->refs));
		return -FI_EBUSY;
	}
	ret = ibv_destroy_srq(srx->ep.srq);
	if (ret) {
		FD_WARN(FD_LOG_EP_CTRL, "ibv_destroy_srq: %s", strerror(ret));
		return -fd_errno_to_fi(ret);
	}
	atomic_fetch_sub(&srx->domain->refs, 1);
	fdv_lock_destroy(&srx->ep.lock);
	free(srx);
	return 0;
}

/* Nothing binds to a shared receive context; endpoints bind to it. */
static int fdv_srx_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid;
	(void)bfid;
	(void)flags;
	return -FI_EINVAL;
}

static int fdv_srx_control(struct fid *fid, int command, void *arg)
{
	struct fdv_srx *srx = fdv_srx_of_fid(fid);

	switch (command) {
	case FI_ENABLE:
		return 0;	/* usable from creation */
	case FI_GETOPSFLAG:
		if (!arg)
			return -FI_EINVAL;
		if (!(*(uint64_t *)arg & FI_RECV))
			return -FI_EINVAL;
		*(uint64_t *)arg = srx->attr.op_flags;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops fdv_srx_fid_ops =
	FD_FI_OPS(fdv_srx_close, fdv_srx_bind, fdv_srx_control, NULL);

static int fdv_srx_getopt(fid_t fid, int level, int optname, void *optval,
			  size_t *optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOPROTOOPT;
}

static int fdv_srx_setopt(fid_t fid, int level, int optname,
			  const void *optval, size_t optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOPROTOOPT;
}

static struct fi_ops_ep fdv_srx_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fd_no_ep_cancel,
	.getopt = fdv_srx_getopt,
	.setopt = fdv_srx_setopt,
	.tx_ctx = fd_no_ep_tx_ctx,
	.rx_ctx = fd_no_ep_rx_ctx,
	.rx_size_left = fd_no_ep_rx_size_left,
	.tx_size_left = fd_no_ep_tx_size_left,
};

int fdv_srx_open(struct fid_domain *domain, struct fi_rx_attr *attr,
		 struct fid_ep **rx_ep, void *context)
{
	struct ibv_srq_init_attr srq_attr;
	struct fdv_domain *dom;
	struct fdv_srx *srx;
	size_t size, iov_limit;
	int ret;

	if (!domain || !rx_ep)
		return -FI_EINVAL;
	dom = FDV_OBJ(struct fdv_domain, domain_fid, domain);
	if (dom->dev_attr.max_srq <= 0) {
		FD_WARN(FD_LOG_EP_CTRL, "device %s has no shared receive queues",
			ibv_get_device_name(dom->verbs->device));
		return -FI_ENOSYS;
	}
	size = attr && attr->size ? attr->size : FDV_SRX_DEFAULT_SIZE;
	iov_limit = attr && attr->iov_limit ? attr->iov_limit :
		    dom->dev_attr.max_srq_sge < FDV_IOV_MAX ?
		    (size_t)dom->dev_attr.max_srq_sge : FDV_IOV_MAX;
	if (size > (size_t)dom->dev_attr.max_srq_wr) {
		if (attr && attr->size)
			return -FI_EINVAL;	/* more than the device can hold */
		size = (size_t)dom->dev_attr.max_srq_wr;
	}
	if (iov_limit > FDV_IOV_MAX || iov_limit > (size_t)dom->dev_attr.max_srq_sge)
		return -FI_EINVAL;
	/* Matching, peeking and multi-receive buffers need software the SRQ
	 * does not have: FI_EP_RDM offers them. */
	if (attr && (attr->caps & ~(uint64_t)(FI_MSG | FI_RECV | FI_RMA |
					       FI_ATOMIC | FI_REMOTE_READ |
					       FI_REMOTE_WRITE | FI_SOURCE)))
		return -FI_EOPNOTSUPP;
	if (attr && (attr->op_flags & ~(uint64_t)FI_COMPLETION))
		return -FI_EBADFLAGS;

	srx = calloc(1, sizeof(*srx));
	if (!srx)
		return -FI_ENOMEM;
	memset(&srq_attr, 0, sizeof(srq_attr));
	srq_attr.srq_context = srx;
	srq_attr.attr.max_wr = (uint32_t)size;
	srq_attr.attr.max_sge = (uint32_t)iov_limit;
	srx->ep.srq = ibv_create_srq(dom->pd, &srq_attr);
	if (!srx->ep.srq) {
		ret = errno;
		FD_WARN(FD_LOG_EP_CTRL, "ibv_create_srq (%zu entries, %zu sge): %s",
			size, iov_limit, strerror(ret));
		free(srx);
		return -fd_errno_to_fi(ret);
	}
	if (attr)
		srx->attr = *attr;
	srx->attr.size = srq_attr.attr.max_wr;
	srx->attr.iov_limit = iov_limit;
	srx->domain = dom;
	fdv_lock_init(&srx->ep.lock);
	fdv_ep_prebuild(&srx->ep);
	srx->ep.kind = FDV_EP_KIND_MSG;
	srx->ep.rx_iov_limit = (uint32_t)iov_limit;
	/* A shared receive is always reported: the selective-completion
	 * choice belongs to each endpoint's CQ binding, and the SRQ cannot
	 * know which endpoint a message will arrive on. */
	srx->ep.rx_comp = FI_COMPLETION;
	/* no CM call applies to a context without a connection */
	fd_ep_fid_init(&srx->ep.ep_fid, FI_CLASS_SRX_CTX, context, &fdv_srx_fid_ops,
		       &fdv_srx_ep_ops, &fd_eopnotsupp_ops_cm);
	srx->ep.ep_fid.msg = &fdv_msg_ops_msg;
	srx->ep.ep_fid.rma = &fdv_msg_ops_rma;
	srx->ep.ep_fid.atomic = &fdv_msg_ops_atomic;
	atomic_fetch_add(&dom->refs, 1);
	*rx_ep = &srx->ep.ep_fid;
	FD_DBG(FD_LOG_EP_CTRL, "srq on %s: %u entries, %zu sge",
	       ibv_get_device_name(dom->verbs->device), srq_attr.attr.max_wr,
	       iov_limit);
	return 0;
}
