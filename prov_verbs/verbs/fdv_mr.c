/* Memory registration. The access a region grants is exactly what the
 * application asked for, translated to verbs bits: nothing is widened, so a
 * region registered FI_REMOTE_READ only cannot be written by a peer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdv_internal.h"

#define FDV_MR_ACCESS (FI_SEND | FI_RECV | FI_READ | FI_WRITE | \
		       FI_REMOTE_READ | FI_REMOTE_WRITE)

/* verbs needs local write for anything the device writes into: received
 * messages (FI_RECV), data fetched by RDMA read (FI_READ) and remote writes
 * and atomics landing here (FI_REMOTE_WRITE). Remote atomics come with
 * remote write rights, as libfabric defines atomic targets, and only on a
 * device that does atomics at all: some refuse the bit in a registration. */
static int fdv_mr_ibv_access(const struct fdv_domain *dom, uint64_t access)
{
	int ibv = 0;

	if (access & (FI_RECV | FI_READ | FI_REMOTE_WRITE))
		ibv |= IBV_ACCESS_LOCAL_WRITE;
	if (access & FI_REMOTE_WRITE) {
		ibv |= IBV_ACCESS_REMOTE_WRITE;
		if (dom->dev_attr.atomic_cap != IBV_ATOMIC_NONE)
			ibv |= IBV_ACCESS_REMOTE_ATOMIC;
	}
	if (access & FI_REMOTE_READ)
		ibv |= IBV_ACCESS_REMOTE_READ;
	return ibv;
}

static int fdv_mr_close(struct fid *fid)
{
	struct fdv_mr_full *mr = FDV_OBJ(struct fdv_mr_full, mr.mr_fid.fid, fid);
	int ret;

	ret = ibv_dereg_mr(mr->ibmr);
	if (ret) {
		FD_WARN(FD_LOG_MR, "ibv_dereg_mr: %s", strerror(ret));
		return -fd_errno_to_fi(ret);
	}
	atomic_fetch_sub(&mr->domain->refs, 1);
	free(mr);
	return 0;
}

static struct fi_ops fdv_mr_fid_ops =
	FD_FI_OPS(fdv_mr_close, fd_no_fid_bind, fd_no_fid_control, NULL);

static int fdv_mr_register(struct fid *fid, const void *buf, size_t len,
			   uint64_t access, uint64_t flags,
			   struct fid_mr **mr_out, void *context)
{
	struct fdv_domain *dom;
	struct fdv_mr_full *mr;

	if (!fid || fid->fclass != FI_CLASS_DOMAIN || !mr_out)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	if (access & ~FDV_MR_ACCESS) {
		FD_WARN(FD_LOG_MR, "unsupported access bits 0x%llx",
			(unsigned long long)(access & ~FDV_MR_ACCESS));
		return -FI_EINVAL;
	}
	if (!buf && len)
		return -FI_EINVAL;
	dom = FDV_OBJ(struct fdv_domain, domain_fid.fid, fid);
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->ibmr = ibv_reg_mr(dom->pd, (void *)buf, len, fdv_mr_ibv_access(dom, access));
	if (!mr->ibmr) {
		int err = errno;

		FD_WARN(FD_LOG_MR, "ibv_reg_mr(%p, %zu): %s", buf, len, strerror(err));
		free(mr);
		return -fd_errno_to_fi(err);
	}
	mr->domain = dom;
	mr->access = access;
	mr->mr.lkey = mr->ibmr->lkey;
	fd_fid_init(&mr->mr.mr_fid.fid, FI_CLASS_MR, context, &fdv_mr_fid_ops);
	mr->mr.mr_fid.mem_desc = &mr->mr.lkey;
	mr->mr.mr_fid.key = mr->ibmr->rkey;
	atomic_fetch_add(&dom->refs, 1);
	*mr_out = &mr->mr.mr_fid;
	return 0;
}

static int fdv_mr_reg(struct fid *fid, const void *buf, size_t len,
		      uint64_t access, uint64_t offset, uint64_t requested_key,
		      uint64_t flags, struct fid_mr **mr, void *context)
{
	(void)offset;		/* FI_MR_VIRT_ADDR: peers use virtual addresses */
	(void)requested_key;	/* FI_MR_PROV_KEY: the device picks the key */
	return fdv_mr_register(fid, buf, len, access, flags, mr, context);
}

static int fdv_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		       uint64_t access, uint64_t offset, uint64_t requested_key,
		       uint64_t flags, struct fid_mr **mr, void *context)
{
	(void)offset;
	(void)requested_key;
	/* One verbs MR covers one virtually contiguous range (mr_iov_limit
	 * 1): joining several ranges under one key is not something verbs
	 * registration does, so more than one is not supported, not wrong. */
	if (!count || !iov)
		return -FI_EINVAL;
	if (count > 1)
		return -FI_ENOSYS;
	return fdv_mr_register(fid, iov[0].iov_base, iov[0].iov_len, access,
			       flags, mr, context);
}

static int fdv_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
			  uint64_t flags, struct fid_mr **mr)
{
	if (!attr)
		return -FI_EINVAL;
	/* iface/device are read only for applications granted FI_HMEM,
	 * which this provider never grants; older binaries' fi_mr_attr
	 * ends before them (drop-in libfabric.so.1, docs/dropin.md). */
	return fdv_mr_regv(fid, attr->mr_iov, attr->iov_count, attr->access,
			   attr->offset, attr->requested_key, flags, mr,
			   attr->context);
}

struct fi_ops_mr fdv_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = fdv_mr_reg,
	.regv = fdv_mr_regv,
	.regattr = fdv_mr_regattr,
};
