/*
 * Entry points for binaries linked against libfabric's older ABI versions
 * (FABRIC_1.0 - FABRIC_1.2).  Only the drop-in libfabric.so.1 carries
 * them (src/dropin/libfabric.map names the nodes); the static library and
 * programs built against our own headers never see this file.
 *
 * Every 1.x ABI change appended fields to structures and never moved or
 * resized one, so an old structure is a prefix of today's and its size is
 * the offset of the first field that ABI lacked:
 *
 *   ABI         fi_info    tx_attr    ep_attr         domain_attr       fabric_attr
 *   FABRIC_1.0  to handle  to rma_iov to rx_ctx_cnt   to max_ep_srx_ctx to prov_version
 *   FABRIC_1.1  to handle  to rma_iov whole           to mr_cnt         whole
 *   FABRIC_1.2  whole      to rma_iov whole           to mr_cnt         whole
 *   FABRIC_1.3  whole (the default version, the plain functions)
 *
 * rx_attr has not changed since 1.0.  (1.0 is API 1.0 - 1.4; 1.1 added the
 * API 1.5 fields: auth keys, api_version, the domain's counts/caps/mode;
 * 1.2 the nic of API 1.7; 1.3 the traffic classes of API 1.9.)
 *
 * Going in, a caller may have built its hints itself with structures only
 * as large as it knew them: only the prefix is read, into full-size copies
 * on the stack, and the ordinary functions do the work.  Coming out, lists
 * are allocated in today's layout (the caller reads its prefix) with
 * everything beyond that prefix zero, so the old fi_freeinfo frees exactly
 * the pointers the old layout has.  That also lets it free lists a caller
 * assembled itself with malloc, as fi_freeinfo permits.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

/* How large each structure was in one ABI version. */
struct fd_abi {
	size_t info;
	size_t tx;
	size_t ep;
	size_t domain;
	size_t fabric;
};

static const struct fd_abi fd_abi_1_0 = {
	.info = offsetof(struct fi_info, nic),
	.tx = offsetof(struct fi_tx_attr, tclass),
	.ep = offsetof(struct fi_ep_attr, auth_key_size),
	.domain = offsetof(struct fi_domain_attr, cntr_cnt),
	.fabric = offsetof(struct fi_fabric_attr, api_version),
};

static const struct fd_abi fd_abi_1_1 = {
	.info = offsetof(struct fi_info, nic),
	.tx = offsetof(struct fi_tx_attr, tclass),
	.ep = sizeof(struct fi_ep_attr),
	.domain = offsetof(struct fi_domain_attr, tclass),
	.fabric = sizeof(struct fi_fabric_attr),
};

static const struct fd_abi fd_abi_1_2 = {
	.info = sizeof(struct fi_info),
	.tx = offsetof(struct fi_tx_attr, tclass),
	.ep = sizeof(struct fi_ep_attr),
	.domain = offsetof(struct fi_domain_attr, tclass),
	.fabric = sizeof(struct fi_fabric_attr),
};

/* A full-size copy of one old-layout entry and its attributes. */
struct fd_shadow {
	struct fi_info info;
	struct fi_tx_attr tx;
	struct fi_rx_attr rx;
	struct fi_ep_attr ep;
	struct fi_domain_attr domain;
	struct fi_fabric_attr fabric;
};

/* Copy 'len' bytes of *src into a zeroed *dst; dst, or NULL for no src. */
static void *fd_prefix(void *dst, size_t size, const void *src, size_t len)
{
	if (!src)
		return NULL;
	memset(dst, 0, size);
	memcpy(dst, src, len);
	return dst;
}

/*
 * Shallow: the shadow points at the caller's strings and addresses, which
 * is all fi_getinfo (const hints) and fi_dupinfo (copies them) need.
 */
static struct fi_info *fd_abi_import(const struct fd_abi *abi,
				     const void *old, struct fd_shadow *s)
{
	struct fi_info *fi = &s->info;

	fd_prefix(fi, sizeof(*fi), old, abi->info);
	fi->next = NULL;
	fi->tx_attr = fd_prefix(&s->tx, sizeof(s->tx), fi->tx_attr, abi->tx);
	fi->rx_attr = fd_prefix(&s->rx, sizeof(s->rx), fi->rx_attr,
				sizeof(s->rx));
	fi->ep_attr = fd_prefix(&s->ep, sizeof(s->ep), fi->ep_attr, abi->ep);
	fi->domain_attr = fd_prefix(&s->domain, sizeof(s->domain),
				    fi->domain_attr, abi->domain);
	fi->fabric_attr = fd_prefix(&s->fabric, sizeof(s->fabric),
				    fi->fabric_attr, abi->fabric);
	return fi;
}

static void fd_zero_tail(void *obj, size_t size, size_t keep)
{
	if (obj && keep < size)
		memset((char *)obj + keep, 0, size - keep);
}

/* Release and clear, in a list this library allocated, what the old ABI
 * cannot see. */
static void fd_abi_trim(const struct fd_abi *abi, struct fi_info *list)
{
	for (struct fi_info *fi = list; fi; fi = fi->next) {
		if (abi->info <= offsetof(struct fi_info, nic) && fi->nic) {
			if (fi->nic->fid.ops && fi->nic->fid.ops->close)
				fi->nic->fid.ops->close(&fi->nic->fid);
		}
		fd_zero_tail(fi, sizeof(*fi), abi->info);
		fd_zero_tail(fi->tx_attr, sizeof(*fi->tx_attr), abi->tx);
		if (fi->ep_attr &&
		    abi->ep <= offsetof(struct fi_ep_attr, auth_key))
			free(fi->ep_attr->auth_key);
		fd_zero_tail(fi->ep_attr, sizeof(*fi->ep_attr), abi->ep);
		if (fi->domain_attr &&
		    abi->domain <= offsetof(struct fi_domain_attr, auth_key))
			free(fi->domain_attr->auth_key);
		fd_zero_tail(fi->domain_attr, sizeof(*fi->domain_attr),
			     abi->domain);
		fd_zero_tail(fi->fabric_attr, sizeof(*fi->fabric_attr),
			     abi->fabric);
	}
}

/* fi_freeinfo for an old layout: read only the prefix of each piece. */
static void fd_abi_free(const struct fd_abi *abi, void *list)
{
	while (list) {
		struct fi_info e;
		struct fi_ep_attr ep;
		struct fi_domain_attr dom;
		struct fi_fabric_attr fab;

		fd_prefix(&e, sizeof(e), list, abi->info);
		if (fd_prefix(&ep, sizeof(ep), e.ep_attr, abi->ep))
			free(ep.auth_key);	/* NULL before 1.1 */
		if (fd_prefix(&dom, sizeof(dom), e.domain_attr, abi->domain)) {
			free(dom.name);
			free(dom.auth_key);
		}
		if (fd_prefix(&fab, sizeof(fab), e.fabric_attr, abi->fabric)) {
			free(fab.name);
			free(fab.prov_name);
		}
		if (e.nic && e.nic->fid.ops && e.nic->fid.ops->close)
			e.nic->fid.ops->close(&e.nic->fid);
		free(e.src_addr);
		free(e.dest_addr);
		free(e.tx_attr);
		free(e.rx_attr);
		free(e.ep_attr);
		free(e.domain_attr);
		free(e.fabric_attr);
		free(list);
		list = e.next;
	}
}

static void *fd_abi_dupinfo(const struct fd_abi *abi, const void *old)
{
	struct fd_shadow s;
	struct fi_info *dup;

	if (!old)
		return fi_dupinfo(NULL);
	dup = fi_dupinfo(fd_abi_import(abi, old, &s));
	fd_abi_trim(abi, dup);
	return dup;
}

static int fd_abi_getinfo(const struct fd_abi *abi, uint32_t version,
			  const char *node, const char *service,
			  uint64_t flags, const void *hints, void **info)
{
	struct fd_shadow s;
	struct fi_info *list = NULL;
	int ret;

	if (!info)
		return -FI_EINVAL;
	ret = fi_getinfo(version, node, service, flags,
			 hints ? fd_abi_import(abi, hints, &s) : NULL, &list);
	fd_abi_trim(abi, list);
	*info = list;
	return ret;
}

/*
 * The exported old versions.  They are global only so .symver can name
 * them; the version script keeps the fd_compat_* names themselves local.
 */
#define FD_SYMVER(impl, name, node) \
	__asm__(".symver " #impl ", " #name "@" #node)

#define FD_INFO_COMPAT(ver)						\
	int fd_compat_getinfo_##ver(uint32_t version, const char *node,	\
				    const char *service, uint64_t flags,	\
				    const void *hints, void **info);	\
	int fd_compat_getinfo_##ver(uint32_t version, const char *node,	\
				    const char *service, uint64_t flags,	\
				    const void *hints, void **info)	\
	{								\
		return fd_abi_getinfo(&fd_abi_##ver, version, node,	\
				      service, flags, hints, info);	\
	}								\
	void *fd_compat_dupinfo_##ver(const void *info);		\
	void *fd_compat_dupinfo_##ver(const void *info)			\
	{								\
		return fd_abi_dupinfo(&fd_abi_##ver, info);		\
	}								\
	void fd_compat_freeinfo_##ver(void *info);			\
	void fd_compat_freeinfo_##ver(void *info)			\
	{								\
		fd_abi_free(&fd_abi_##ver, info);			\
	}

FD_INFO_COMPAT(1_0)
FD_INFO_COMPAT(1_1)
FD_INFO_COMPAT(1_2)

FD_SYMVER(fd_compat_getinfo_1_0, fi_getinfo, FABRIC_1.0);
FD_SYMVER(fd_compat_dupinfo_1_0, fi_dupinfo, FABRIC_1.0);
FD_SYMVER(fd_compat_freeinfo_1_0, fi_freeinfo, FABRIC_1.0);
FD_SYMVER(fd_compat_getinfo_1_1, fi_getinfo, FABRIC_1.1);
FD_SYMVER(fd_compat_dupinfo_1_1, fi_dupinfo, FABRIC_1.1);
FD_SYMVER(fd_compat_freeinfo_1_1, fi_freeinfo, FABRIC_1.1);
FD_SYMVER(fd_compat_getinfo_1_2, fi_getinfo, FABRIC_1.2);
FD_SYMVER(fd_compat_dupinfo_1_2, fi_dupinfo, FABRIC_1.2);
FD_SYMVER(fd_compat_freeinfo_1_2, fi_freeinfo, FABRIC_1.2);

/*
 * fi_fabric before API 1.5 had no api_version in its attributes.  Such a
 * caller spoke some API from 1.0 to 1.4, which this library treats alike
 * (pre-1.5 registration and CQ rules), so say 1.4.
 */
int fd_compat_fabric_1_0(const void *attr, struct fid_fabric **fabric,
			 void *context);
int fd_compat_fabric_1_0(const void *attr, struct fid_fabric **fabric,
			 void *context)
{
	struct fi_fabric_attr full;

	if (!attr)
		return -FI_EINVAL;
	fd_prefix(&full, sizeof(full), attr, fd_abi_1_0.fabric);
	full.api_version = FI_VERSION(1, 4);
	return fi_fabric(&full, fabric, context);
}
FD_SYMVER(fd_compat_fabric_1_0, fi_fabric, FABRIC_1.0);
