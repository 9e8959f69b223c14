/* Memory registration on an RDM domain. Each registration is a verbs one
 * underneath, wrapped so that the layer knows its regions: a peer's atomic
 * request names a key, and the target applies it only inside a region of
 * this domain registered with the access it needs (fdm_atomic.c).
 *
 * The wrapper's key and descriptor are the verbs region's own: fi_mr_key
 * gives the rkey peers read and write with (RMA stays verbs RDMA), and
 * fi_mr_desc the verbs descriptor, which the layer and the direct build's
 * inline verbs calls use unchanged. The layer's own registrations (pool,
 * bounce buffers, buffers of a rendezvous) are made on the verbs domain
 * directly and are not in the table: no peer's atomic reaches them.
 *
 * Local access is always granted underneath. The domain has no
 * FI_MR_LOCAL, so the local access bits an application passes mean
 * nothing to it (fabtests registers the buffer it reads into with
 * FI_REMOTE_READ alone), yet the layer uses any descriptor it is given
 * for the device's local side: an RDMA read of more than a bounce buffer
 * lands in the application's region, and so does a rendezvous receive.
 * Without local write there the device refuses the write and the
 * operation ends in FI_EACCES (issue 21). Only local rights are added:
 * what peers may do stays exactly the access asked for. */
#include <stdlib.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm.h"

struct fdm_mr {
	struct fid_mr mr_fid;
	struct fdm_domain *domain;
	struct fid_mr *vmr;
	uint64_t access;
	uint64_t base;		/* the region's virtual addresses */
	uint64_t len;
	struct fdm_mr *next;	/* hash chain */
};

static size_t fdm_mr_bucket(const struct fdm_domain *d, uint64_t key)
{
	/* keys of one device differ in few bits: spread them */
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (d->mr_nbuckets - 1);
}

static int fdm_mr_insert(struct fdm_domain *d, struct fdm_mr *mr)
{
	size_t b;

	if (d->mr_count >= d->mr_nbuckets) {
		size_t n = d->mr_nbuckets ? d->mr_nbuckets * 2 : 64;
		struct fdm_mr **tab = calloc(n, sizeof(*tab));
		struct fdm_mr **old = d->mr_tab;
		size_t oldn = d->mr_nbuckets;

		if (!tab)
			return -FI_ENOMEM;
		d->mr_tab = tab;
		d->mr_nbuckets = n;
		for (size_t i = 0; i < oldn; i++) {
			while (old[i]) {
				struct fdm_mr *m = old[i];

				old[i] = m->next;
				b = fdm_mr_bucket(d, m->mr_fid.key);
				m->next = tab[b];
				tab[b] = m;
			}
		}
		free(old);
	}
	b = fdm_mr_bucket(d, mr->mr_fid.key);
	mr->next = d->mr_tab[b];
	d->mr_tab[b] = mr;
	d->mr_count++;
	return 0;
}

static void fdm_mr_remove(struct fdm_domain *d, struct fdm_mr *mr)
{
	for (struct fdm_mr **p = &d->mr_tab[fdm_mr_bucket(d, mr->mr_fid.key)]; *p;
	     p = &(*p)->next) {
		if (*p == mr) {
			*p = mr->next;
			d->mr_count--;
			return;
		}
	}
}

void *fdm_mr_target(struct fdm_domain *d, uint64_t key, uint64_t addr, size_t len,
		    uint64_t access)
{
	struct fdm_mr *mr;

	if (!d->mr_count)
		return NULL;
	for (mr = d->mr_tab[fdm_mr_bucket(d, key)]; mr; mr = mr->next)
		if (mr->mr_fid.key == key)
			break;
	if (!mr || (mr->access & access) != access)
		return NULL;
	/* [addr, addr + len) inside [base, base + len), without overflow */
	if (addr < mr->base || len > mr->len || addr - mr->base > mr->len - len)
		return NULL;
	return (void *)(uintptr_t)addr;
}

static int fdm_mr_close(struct fid *fid)
{
	struct fdm_mr *mr = fdv_container_of(fid, struct fdm_mr, mr_fid.fid);
	struct fdm_domain *d = mr->domain;
	int ret;

	/* out of the table first: no atomic touches the memory after this */
	fdm_lock(d);
	fdm_mr_remove(d, mr);
	fdm_unlock(d);
	ret = fi_close(&mr->vmr->fid);
	if (ret) {
		fdm_lock(d);
		if (fdm_mr_insert(d, mr))
			FD_WARN(FD_LOG_MR, "a region that failed to close is lost to atomics");
		fdm_unlock(d);
		return ret;
	}
	__atomic_fetch_sub(&d->refs, 1, __ATOMIC_RELAXED);
	free(mr);
	return 0;
}

static struct fi_ops fdm_mr_fi_ops =
	FD_FI_OPS(fdm_mr_close, fd_no_fid_bind, fd_no_fid_control, fd_no_fid_tostr);

/* Wrap a verbs registration of iov (one range, or none known). */
static int fdm_mr_wrap(struct fdm_domain *d, struct fid_mr *vmr, const struct iovec *iov,
		       size_t count, uint64_t access, void *context, struct fid_mr **out)
{
	struct fdm_mr *mr = calloc(1, sizeof(*mr));
	int ret;

	if (!mr) {
		fi_close(&vmr->fid);
		return -FI_ENOMEM;
	}
	mr->domain = d;
	mr->vmr = vmr;
	mr->access = access;
	if (count == 1) {
		mr->base = (uint64_t)(uintptr_t)iov[0].iov_base;
		mr->len = iov[0].iov_len;
	}
	fd_fid_init(&mr->mr_fid.fid, FI_CLASS_MR, context, &fdm_mr_fi_ops);
	mr->mr_fid.mem_desc = vmr->mem_desc;
	mr->mr_fid.key = vmr->key;
	fdm_lock(d);
	ret = fdm_mr_insert(d, mr);
	fdm_unlock(d);
	if (ret) {
		fi_close(&vmr->fid);
		free(mr);
		return ret;
	}
	__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
	*out = &mr->mr_fid;
	return 0;
}

#define FDM_MR_LOCAL_ACCESS (FI_SEND | FI_RECV | FI_READ | FI_WRITE)

static int fdm_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
			  uint64_t flags, struct fid_mr **mr)
{
	struct fdm_domain *d = fdv_container_of(fid, struct fdm_domain, domain_fid.fid);
	struct fi_mr_attr local;
	struct fid_mr *vmr;
	int ret;

	if (!attr || !mr)
		return -FI_EINVAL;
	/* field by field: an older program's fi_mr_attr ends before iface
	 * (docs/dropin.md), and verbs reads nothing past context */
	local = (struct fi_mr_attr){
		.mr_iov = attr->mr_iov, .iov_count = attr->iov_count,
		.access = attr->access | FDM_MR_LOCAL_ACCESS, .offset = attr->offset,
		.requested_key = attr->requested_key, .context = attr->context,
	};
	ret = fi_mr_regattr(d->vdomain, &local, flags, &vmr);
	/* Pages that cannot be written (read-only mappings) cannot take
	 * local write either: registered as asked, they still serve as a
	 * send's source or a peer's read target. */
	if (ret && local.access != attr->access)
		ret = fi_mr_regattr(d->vdomain, attr, flags, &vmr);
	if (ret)
		return ret;
	return fdm_mr_wrap(d, vmr, attr->mr_iov, attr->iov_count, attr->access,
			   attr->context, mr);
}

static int fdm_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		       uint64_t access, uint64_t offset, uint64_t requested_key,
		       uint64_t flags, struct fid_mr **mr, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov, .iov_count = count, .access = access, .offset = offset,
		.requested_key = requested_key, .context = context,
	};

	return fdm_mr_regattr(fid, &attr, flags, mr);
}

static int fdm_mr_reg(struct fid *fid, const void *buf, size_t len,
		      uint64_t access, uint64_t offset, uint64_t requested_key,
		      uint64_t flags, struct fid_mr **mr, void *context)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };

	return fdm_mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr, context);
}

struct fi_ops_mr fdm_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = fdm_mr_reg,
	.regv = fdm_mr_regv,
	.regattr = fdm_mr_regattr,
};

void fdm_mr_table_free(struct fdm_domain *d)
{
	free(d->mr_tab);
	d->mr_tab = NULL;
	d->mr_nbuckets = 0;
}
