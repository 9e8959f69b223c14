/* Address vectors of RDM endpoints. An entry is a peer endpoint's name (a
 * sockaddr, as fi_getname gives it); fi_addr_t is the entry's index in
 * both FI_AV_TABLE and FI_AV_MAP, so a lookup is one bounds check. Indexes
 * are never reused after fi_av_remove: a stale fi_addr_t fails cleanly
 * instead of reaching another peer. */
#include <errno.h>
#include <netdb.h>
#include <arpa/inet.h>
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

/* One insert call (fi_av_insert, insertsvc, insertsym): where each
 * entry's outcome goes. A synchronous AV returns the count and writes
 * FI_SYNC_ERR's array; an FI_EVENT AV queues an error entry per failed
 * address (data: its index in the call) and then one FI_AV_COMPLETE
 * whose data is the count, both with the call's context (fi_av(3)). */
struct fdm_av_call {
	struct fdm_av *av;
	fi_addr_t *fi_addr;
	int *errs;
	void *context;
	size_t done;
};

static int fdm_av_call_start(struct fdm_av_call *c, struct fdm_av *av, fi_addr_t *fi_addr,
			     uint64_t flags, void *context)
{
	if (flags & ~(uint64_t)FDM_AV_FLAGS)
		return -FI_EBADFLAGS;
	if (av->async) {
		/* FI_SYNC_ERR is for synchronous inserts only */
		if (flags & FI_SYNC_ERR)
			return -FI_EBADFLAGS;
		if (!av->eq)
			return -FI_ENOEQ;
	}
	c->av = av;
	c->fi_addr = fi_addr;
	c->errs = (flags & FI_SYNC_ERR) ? context : NULL;
	c->context = context;
	c->done = 0;
	return 0;
}

/* Entry i of the call: n inserted, or (n NULL) failed with err (< 0).
 * The domain lock is held. */
static void fdm_av_call_put(struct fdm_av_call *c, size_t i, const struct fdm_name *n,
			    int err)
{
	struct fdm_av *av = c->av;

	if (n && fdm_av_grow(av, av->count + 1))
		err = -FI_ENOMEM, n = NULL;
	if (!n) {
		if (c->fi_addr)
			c->fi_addr[i] = FI_ADDR_NOTAVAIL;
		if (c->errs)
			c->errs[i] = -err;
		if (av->async)
			fdm_eq_write_error(av->eq, &av->av_fid.fid, c->context, i, -err);
		return;
	}
	av->tab[av->count].name = *n;
	av->tab[av->count].valid = true;
	if (c->fi_addr)
		c->fi_addr[i] = av->count;
	if (c->errs)
		c->errs[i] = 0;
	av->count++;
	c->done++;
}

static int fdm_av_call_end(struct fdm_av_call *c)
{
	struct fdm_av *av = c->av;
	struct fi_eq_entry e = {
		.fid = &av->av_fid.fid, .context = c->context, .data = c->done,
	};

	if (!av->async)
		return (int)c->done;
	/* the insert is done when this call returns; the event says so */
	return fdm_eq_write_event(av->eq, FI_AV_COMPLETE, &e, sizeof(e));
}

static int fdm_av_insert(struct fid_av *av_fid, const void *addr, size_t count,
			 fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct fdm_av *av = fdm_av_of(av_fid);
	struct fdm_domain *d = av->domain;
	struct fdm_av_call c;
	size_t stride;
	int ret;

	ret = fdm_av_call_start(&c, av, fi_addr, flags, context);
	if (ret)
		return ret;
	if (count && !addr)
		return -FI_EINVAL;
	stride = count ? fdm_av_stride(av, addr) : 0;
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
		if (r)
			FD_WARN(FD_LOG_AV, "fi_av_insert: entry %zu is not an address of "
				"this AV's format", i);
		fdm_av_call_put(&c, i, r ? NULL : &n, r);
	}
	fdm_unlock(d);
	return fdm_av_call_end(&c);
}

/* node:service resolved to one name of this AV's format. */
static int fdm_av_resolve(struct fdm_av *av, const char *node, const char *service,
			  struct fdm_name *n)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	int ret;

	hints.ai_family = av->addr_format == FI_SOCKADDR_IN6 ? AF_INET6 :
		av->addr_format == FI_SOCKADDR_IN ? AF_INET : AF_UNSPEC;
	if (getaddrinfo(node, service, &hints, &res) || !res) {
		FD_WARN(FD_LOG_AV, "cannot resolve %s:%s", node, service);
		return -FI_EINVAL;
	}
	ret = fdm_name_parse(n, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return ret;
}

static int fdm_av_insertsvc(struct fid_av *av_fid, const char *node,
			    const char *service, fi_addr_t *fi_addr,
			    uint64_t flags, void *context)
{
	struct fdm_av *av = fdm_av_of(av_fid);
	struct fdm_av_call c;
	struct fdm_name n;
	int ret;

	if (!node || !service)
		return -FI_EINVAL;
	ret = fdm_av_call_start(&c, av, fi_addr, flags, context);
	if (ret)
		return ret;
	ret = fdm_av_resolve(av, node, service, &n);
	if (ret && !av->async) {
		/* as before issue 25: a name that does not resolve is the
		 * caller's mistake, said by the return value */
		if (fi_addr)
			*fi_addr = FI_ADDR_NOTAVAIL;
		return ret;
	}
	fdm_lock(av->domain);
	fdm_av_call_put(&c, 0, ret ? NULL : &n, ret);
	fdm_unlock(av->domain);
	return fdm_av_call_end(&c);
}

/* fi_av_insertsym's k-th node after node (fi_av(3)): a numeric IPv4 or
 * IPv6 address counts up (IPv6 in its low 64 bits), a name counts up its
 * numeric suffix keeping the suffix's width ("host10", "n007"). */
static int fdm_av_sym_node(const char *node, size_t k, char *out, size_t outlen)
{
	struct in_addr a4;
	struct in6_addr a6;
	size_t len = strlen(node), p = len;
	unsigned long long v;

	if (inet_pton(AF_INET, node, &a4) == 1) {
		uint64_t h = ntohl(a4.s_addr) + (uint64_t)k;

		if (h > UINT32_MAX)
			return -FI_EINVAL;
		a4.s_addr = htonl((uint32_t)h);
		return inet_ntop(AF_INET, &a4, out, (socklen_t)outlen) ? 0 : -FI_EINVAL;
	}
	if (inet_pton(AF_INET6, node, &a6) == 1) {
		uint64_t lo = 0, nlo;

		for (int i = 8; i < 16; i++)
			lo = lo << 8 | a6.s6_addr[i];
		nlo = lo + k;
		if (nlo < lo)
			return -FI_EINVAL;
		for (int i = 15; i >= 8; i--, nlo >>= 8)
			a6.s6_addr[i] = (uint8_t)nlo;
		return inet_ntop(AF_INET6, &a6, out, (socklen_t)outlen) ? 0 : -FI_EINVAL;
	}
	while (p > 0 && node[p - 1] >= '0' && node[p - 1] <= '9')
		p--;
	if (p == len || len - p > 19) {
		if (k)
			return -FI_EINVAL;	/* a range needs a numeric suffix */
		if (len >= outlen)
			return -FI_EINVAL;
		memcpy(out, node, len + 1);
		return 0;
	}
	v = strtoull(node + p, NULL, 10);
	if (v + k < v)
		return -FI_EINVAL;
	if ((size_t)snprintf(out, outlen, "%.*s%0*llu", (int)p, node, (int)(len - p),
			     v + (unsigned long long)k) >= outlen)
		return -FI_EINVAL;
	return 0;
}

/* fi_av_insertsym: nodecnt x svccnt addresses, every service of a node
 * before the next node. Services count up from a numeric service; a
 * named one is taken as it is when svccnt is 1. */
static int fdm_av_insertsym(struct fid_av *av_fid, const char *node, size_t nodecnt,
			    const char *service, size_t svccnt, fi_addr_t *fi_addr,
			    uint64_t flags, void *context)
{
	struct fdm_av *av = fdm_av_of(av_fid);
	struct fdm_av_call c;
	unsigned long port = 0;
	bool numeric;
	char *end;
	int ret;

	if (!node || !service || !nodecnt || !svccnt || nodecnt > SIZE_MAX / svccnt)
		return -FI_EINVAL;
	errno = 0;
	port = strtoul(service, &end, 10);
	numeric = *service && !*end && !errno;
	if ((!numeric && svccnt > 1) || (numeric && (port > 65535 || svccnt - 1 > 65535 - port)))
		return -FI_EINVAL;
	/* the whole range is checked before anything goes in */
	{
		char last[INET6_ADDRSTRLEN + 64];

		if (strlen(node) >= sizeof(last) ||
		    fdm_av_sym_node(node, nodecnt - 1, last, sizeof(last)))
			return -FI_EINVAL;
	}
	ret = fdm_av_call_start(&c, av, fi_addr, flags, context);
	if (ret)
		return ret;
	for (size_t i = 0; i < nodecnt; i++) {
		char host[INET6_ADDRSTRLEN + 64];

		fdm_av_sym_node(node, i, host, sizeof(host));
		for (size_t j = 0; j < svccnt; j++) {
			char svc[16];
			const char *s = service;
			struct fdm_name n;
			int r;

			if (numeric) {
				snprintf(svc, sizeof(svc), "%lu", port + j);
				s = svc;
			}
			r = fdm_av_resolve(av, host, s, &n);
			fdm_lock(av->domain);
			fdm_av_call_put(&c, i * svccnt + j, r ? NULL : &n, r);
			fdm_unlock(av->domain);
		}
	}
	return fdm_av_call_end(&c);
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

	if (!addr || !buf || !len)
		return NULL;
	if (fdm_name_parse(&n, addr, fdm_av_stride(av, addr)))
		snprintf(tmp, sizeof(tmp), "(invalid address)");
	else
		fd_addr_str(tmp, sizeof(tmp), fd_sockaddr_format(&n.u.sa), &n.u, n.len);
	return fd_straddr_out(buf, len, tmp);
}

static int fdm_av_close(struct fid *fid)
{
	struct fdm_av *av = fdv_container_of(fid, struct fdm_av, av_fid.fid);

	if (av->refs)
		return -FI_EBUSY;
	if (av->eq) {
		fdm_eq_forget(av->eq, &av->av_fid.fid);
		fdm_eq_ref(av->eq, -1);
	}
	__atomic_fetch_sub(&av->domain->refs, 1, __ATOMIC_RELAXED);
	free(av->tab);
	free(av);
	return 0;
}

/* fi_av_bind: the EQ an FI_EVENT AV reports its inserts to (a synchronous
 * AV takes one too and never writes to it). One EQ, of this fabric. */
static int fdm_av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fdm_av *av = fdv_container_of(fid, struct fdm_av, av_fid.fid);
	struct fdm_eq *eq = fdm_eq_from_fid(bfid);

	if (flags)
		return -FI_EBADFLAGS;
	if (!eq || av->eq)
		return -FI_EINVAL;
	fdm_lock(av->domain);
	av->eq = eq;
	fdm_eq_ref(eq, 1);
	fdm_unlock(av->domain);
	return 0;
}

static struct fi_ops fdm_av_fi_ops =
	FD_FI_OPS(fdm_av_close, fdm_av_bind, fd_no_fid_control, fd_no_fid_tostr);

static struct fi_ops_av fdm_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = fdm_av_insert,
	.insertsvc = fdm_av_insertsvc,
	.insertsym = fdm_av_insertsym,
	.remove = fdm_av_remove,
	.lookup = fdm_av_lookup,
	.straddr = fdm_av_straddr,
	.av_set = fdm_av_set_open,
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
	 * endpoint's receive context (fi_rx_addr): index k there reaches
	 * the peer's context pair k (fdm_conn_for_addr, fdm_sep.c). */
	if (attr->rx_ctx_bits < 0 || attr->rx_ctx_bits > 32)
		return -FI_EINVAL;
	if (attr->name || (attr->flags & ~(uint64_t)(FI_SYMMETRIC | FI_EVENT)))
		return -FI_ENOSYS;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->domain = d;
	av->async = !!(attr->flags & FI_EVENT);
	av->rx_ctx_bits = attr->rx_ctx_bits;
	av->type = attr->type == FI_AV_UNSPEC ? FI_AV_TABLE : attr->type;
	attr->type = av->type;
	av->addr_format = d->info->addr_format;
	if (attr->count && fdm_av_grow(av, attr->count)) {
		free(av);
		return -FI_ENOMEM;
	}
	fd_fid_init(&av->av_fid.fid, FI_CLASS_AV, context, &fdm_av_fi_ops);
	av->av_fid.ops = &fdm_av_ops;
	__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
	*av_out = &av->av_fid;
	return 0;
}
