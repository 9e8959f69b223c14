/* Address vectors of RDM endpoints. An entry is a peer endpoint's name (a
 * sockaddr, as fi_getname gives it); fi_addr_t is the entry's index in
 * both FI_AV_TABLE and FI_AV_MAP, so a lookup is one bounds check. Indexes
 * are never reused after fi_av_remove: a stale fi_addr_t fails cleanly
 * instead of reaching another peer. */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm.h"

#define FDM_AV_FLAGS (FI_MORE | FI_SYNC_ERR)

static struct fdm_av *fdm_av_of(struct fid_av *av)
{
	return fdv_container_of(av, struct fdm_av, av_fid);
}

const struct fdm_name *fdm_av_name(struct fdm_av *av, fi_addr_t addr)
{
	if (!av || addr >= av->count || !av->tab[addr].valid)
		return NULL;
	return &av->tab[addr].name;
}

fi_addr_t fdm_av_find(struct fdm_av *av, const struct fdm_name *name)
{
	if (!av)
		return FI_ADDR_NOTAVAIL;
	for (size_t i = 0; i < av->count; i++)
		if (av->tab[i].valid && fdm_name_eq(&av->tab[i].name, name))
			return i;
	return FI_ADDR_NOTAVAIL;
}

/* Bytes per address in an insert batch. */
static size_t fdm_av_stride(const struct fdm_av *av, const void *first)
{
	switch (av->addr_format) {
	case FI_SOCKADDR_IN:
		return sizeof(struct sockaddr_in);
	case FI_SOCKADDR_IN6:
		return sizeof(struct sockaddr_in6);
	default:
		return ((const struct sockaddr *)first)->sa_family == AF_INET6 ?
			sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	}
}

static int fdm_av_grow(struct fdm_av *av, size_t need)
{
	struct fdm_av_entry *t;
	size_t cap = av->cap ? av->cap : 16;

	while (cap < need)
		cap *= 2;
	if (cap == av->cap)
		return 0;
	t = realloc(av->tab, cap * sizeof(*t));
	if (!t)
		return -FI_ENOMEM;
	av->tab = t;
	av->cap = cap;
	return 0;
}

static int fdm_av_insert(struct fid_av *av_fid, const void *addr, size_t count,
			 fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct fdm_av *av = fdm_av_of(av_fid);
	struct fdm_domain *d = av->domain;
	int *errs = (flags & FI_SYNC_ERR) ? context : NULL;
	size_t stride;
	int done = 0, ret;

	if (flags & ~(uint64_t)FDM_AV_FLAGS)
		return -FI_EBADFLAGS;
	if (!count)
		return 0;
	if (!addr)
		return -FI_EINVAL;
	stride = fdm_av_stride(av, addr);
	fdm_lock(d);
	ret = fdm_av_grow(av, av->count + count);
	if (ret) {
		fdm_unlock(d);
		return ret;
	}
	for (size_t i = 0; i < count; i++) {
		struct fdm_name n;
		int r = fdm_name_parse(&n, (const uint8_t *)addr + i * stride, stride);

		if (!r && n.len != stride)
			r = -FI_EINVAL;
		if (r) {
			FD_WARN(FD_LOG_AV, "fi_av_insert: entry %zu is not an address of "
				"this AV's format", i);
			if (fi_addr)
				fi_addr[i] = FI_ADDR_NOTAVAIL;
			if (errs)
				errs[i] = -r;
			continue;
		}
		av->tab[av->count].name = n;
		av->tab[av->count].valid = true;
		if (fi_addr)
			fi_addr[i] = av->count;
		if (errs)
			errs[i] = 0;
		av->count++;
		done++;
	}
	fdm_unlock(d);
	return done;
}

static int fdm_av_insertsvc(struct fid_av *av_fid, const char *node,
			    const char *service, fi_addr_t *fi_addr,
			    uint64_t flags, void *context)
{
	struct fdm_av *av = fdm_av_of(av_fid);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	int ret;

	if (!node || !service)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FDM_AV_FLAGS)
		return -FI_EBADFLAGS;
	hints.ai_family = av->addr_format == FI_SOCKADDR_IN6 ? AF_INET6 :
		av->addr_format == FI_SOCKADDR_IN ? AF_INET : AF_UNSPEC;
	if (getaddrinfo(node, service, &hints, &res) || !res) {
		FD_WARN(FD_LOG_AV, "fi_av_insertsvc: cannot resolve %s:%s", node, service);
		if (fi_addr)
			*fi_addr = FI_ADDR_NOTAVAIL;
		return -FI_EINVAL;
	}
	ret = fdm_av_insert(av_fid, res->ai_addr, 1, fi_addr, flags, context);
	freeaddrinfo(res);
	return ret;
}

static int fdm_av_remove(struct fid_av *av_fid, fi_addr_t *fi_addr, size_t count,
			 uint64_t flags)
{
	struct fdm_av *av = fdm_av_of(av_fid);
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	if (count && !fi_addr)
		return -FI_EINVAL;
	fdm_lock(av->domain);
	for (size_t i = 0; i < count; i++) {
		if (fi_addr[i] >= av->count || !av->tab[fi_addr[i]].valid) {
			ret = -FI_EINVAL;
			continue;
		}
		av->tab[fi_addr[i]].valid = false;
	}
	av->gen++;
	fdm_unlock(av->domain);
	return ret;
}

static int fdm_av_lookup(struct fid_av *av_fid, fi_addr_t fi_addr, void *addr,
			 size_t *addrlen)
{
	struct fdm_av *av = fdm_av_of(av_fid);
	const struct fdm_name *n;
	int ret = 0;

	if (!addrlen)
		return -FI_EINVAL;
	fdm_lock(av->domain);
	n = fdm_av_name(av, fi_addr);
	if (!n) {
		ret = -FI_EINVAL;
	} else {
		if (addr)
			memcpy(addr, &n->u, *addrlen < n->len ? *addrlen : n->len);
		*addrlen = n->len;
	}
	fdm_unlock(av->domain);
	return ret;
}

static const char *fdm_av_straddr(struct fid_av *av_fid, const void *addr,
				  char *buf, size_t *len)
{
	struct fdm_av *av = fdm_av_of(av_fid);
	struct fdm_name n;
	char tmp[128];
	size_t need;

	if (!addr || !buf || !len)
		return NULL;
	if (fdm_name_parse(&n, addr, fdm_av_stride(av, addr)))
		snprintf(tmp, sizeof(tmp), "(invalid address)");
	else
		fd_addr_str(tmp, sizeof(tmp), fd_sockaddr_format(&n.u.sa), &n.u, n.len);
	need = strlen(tmp) + 1;
	if (*len) {
		size_t n_copy = need < *len ? need : *len;

		memcpy(buf, tmp, n_copy);
		buf[n_copy - 1] = '\0';
	}
	*len = need;
	return buf;
}

static int fdm_av_close(struct fid *fid)
{
	struct fdm_av *av = fdv_container_of(fid, struct fdm_av, av_fid.fid);

	if (av->refs)
		return -FI_EBUSY;
	__atomic_fetch_sub(&av->domain->refs, 1, __ATOMIC_RELAXED);
	free(av->tab);
	free(av);
	return 0;
}

static struct fi_ops fdm_av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fdm_av_close,
	.bind = fd_no_fid_bind,
	.control = fd_no_fid_control,
	.ops_open = fd_no_fid_ops_open,
	.tostr = fd_no_fid_tostr,
	.ops_set = fd_no_fid_ops_set,
};

static struct fi_ops_av fdm_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = fdm_av_insert,
	.insertsvc = fdm_av_insertsvc,
	.insertsym = fd_no_av_insertsym,
	.remove = fdm_av_remove,
	.lookup = fdm_av_lookup,
	.straddr = fdm_av_straddr,
	.av_set = fd_no_av_av_set,
};

int fdm_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av_out, void *context)
{
	struct fdm_domain *d = fdv_container_of(domain, struct fdm_domain, domain_fid);
	struct fdm_av *av;

	if (!attr || !av_out)
		return -FI_EINVAL;
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_TABLE &&
	    attr->type != FI_AV_MAP)
		return -FI_EINVAL;
	/* rx_ctx_bits reserves the top of an fi_addr_t for a scalable
	 * endpoint's receive context (fi_rx_addr). There are none here, so
	 * the only context is 0 and an address with bits there names no
	 * entry; but a program that reserves them (MPICH's verbs;ofi_rxm set
	 * asks for 8) must get its AV. */
	if (attr->rx_ctx_bits < 0 || attr->rx_ctx_bits > 32)
		return -FI_EINVAL;
	if (attr->name || (attr->flags & ~(uint64_t)FI_SYMMETRIC))
		return -FI_ENOSYS;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->domain = d;
	av->type = attr->type == FI_AV_UNSPEC ? FI_AV_TABLE : attr->type;
	attr->type = av->type;
	av->addr_format = d->info->addr_format;
	if (attr->count && fdm_av_grow(av, attr->count)) {
		free(av);
		return -FI_ENOMEM;
	}
	av->av_fid.fid.fclass = FI_CLASS_AV;
	av->av_fid.fid.context = context;
	av->av_fid.fid.ops = &fdm_av_fi_ops;
	av->av_fid.ops = &fdm_av_ops;
	__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
	*av_out = &av->av_fid;
	return 0;
}
