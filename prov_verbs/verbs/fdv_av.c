/* Address vectors of UD addresses for FI_EP_DGRAM endpoints: one ibv_ah
 * per inserted name. FI_AV_MAP and FI_AV_TABLE behave alike: fi_addr_t
 * values are indices handed out in insertion order (a map's values are
 * the provider's to choose), so every value a send receives can be
 * checked against the table before it is used. */
#include <arpa/inet.h>
#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fdv_dgram_int.h"

static struct fdv_av_full *fdv_av_full_of(struct fid_av *av_fid)
{
	return fdv_container_of(av_fid, struct fdv_av_full, av.av_fid);
}

/* The port a domain's datagram endpoints use, and the GID they send
 * from: the first IPv4-mapped GID of the port when there is one (RoCE v2
 * over IPv4: what the IP route of the address reaches), else the
 * FI_VERBS_GID_IDX one. */
int fdv_dgram_port(struct fdv_domain *dom, uint8_t *port_num, uint8_t *sgid_index,
		   union ibv_gid *gid, uint16_t *lid, bool *global)
{
	const struct fdv_device_info *dev;
	struct ibv_port_attr pa;
	union ibv_gid g;
	int i;

	dev = fdv_device_lookup(ibv_get_device_name(dom->verbs->device));
	if (!dev)
		return -FI_ENODEV;
	*port_num = dev->port_num;
	if (ibv_query_port(dom->verbs, dev->port_num, &pa))
		return -fd_errno_to_fi(errno);
	*lid = pa.lid;
	*global = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	*sgid_index = (uint8_t)dom->params.gid_idx;
	if (ibv_query_gid(dom->verbs, dev->port_num, dom->params.gid_idx, gid))
		memset(gid, 0, sizeof(*gid));
	for (i = 0; *global && i < pa.gid_tbl_len && i < 256; i++) {
		if (ibv_query_gid(dom->verbs, dev->port_num, i, &g))
			break;
		if (fdv_gid_is_v4_mapped(g.raw)) {
			*sgid_index = (uint8_t)i;
			*gid = g;
			break;
		}
	}
	return 0;
}

/* An untrusted name: 0 when it is one of ours, with its fields. */
static int fdv_ud_name_parse(const void *addr, struct fdv_ud_dest *out)
{
	struct fdv_ud_name n;

	memcpy(&n, addr, sizeof(n));
	if (be16toh(n.magic_be) != FDV_UD_NAME_MAGIC || n.zero)
		return -FI_EINVAL;
	out->qpn = be32toh(n.qpn_be);
	out->qkey = be32toh(n.qkey_be);
	out->lid = be16toh(n.lid_be);
	/* 24-bit QP numbers; 0 and 1 are the management QPs; a qkey with bit
	 * 31 set is privileged and refused by the device for user QPs. */
	if (out->qpn > 0xffffff || out->qpn < 2 || (out->qkey & 0x80000000u))
		return -FI_EINVAL;
	memcpy(out->gid, n.gid, sizeof(out->gid));
	return 0;
}

static struct ibv_ah *fdv_av_make_ah(struct fdv_av_full *av, const struct fdv_ud_dest *to)
{
	struct ibv_ah_attr a;

	memset(&a, 0, sizeof(a));
	a.dlid = to->lid;
	a.port_num = av->port_num;
	if (av->global || !to->lid) {
		a.is_global = 1;
		memcpy(a.grh.dgid.raw, to->gid, sizeof(to->gid));
		a.grh.sgid_index = av->sgid_index;
		a.grh.hop_limit = 64;
	}
	return ibv_create_ah(av->domain->pd, &a);
}

static int fdv_av_insert(struct fid_av *av_fid, const void *addr, size_t count,
			 fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct fdv_av_full *av = fdv_av_full_of(av_fid);
	int done = 0;

	(void)context;
	if (!addr && count)
		return -FI_EINVAL;
	if (flags & ~FI_MORE)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&av->lock);
	for (size_t i = 0; i < count; i++) {
		const uint8_t *name = (const uint8_t *)addr + i * sizeof(struct fdv_ud_name);
		uint32_t at = av->av.count;
		struct fdv_ud_dest to, *slot;
		struct fdv_ud_dest **page = &av->av.pages[at >> FDV_AV_PAGE_SHIFT];

		if (fi_addr)
			fi_addr[i] = FI_ADDR_NOTAVAIL;
		memset(&to, 0, sizeof(to));
		if (fdv_ud_name_parse(name, &to)) {
			FD_INFO(FD_LOG_AV, "address %zu: not a verbs UD name", i);
			continue;
		}
		if ((at >> FDV_AV_PAGE_SHIFT) >= FDV_AV_PAGES) {
			FD_WARN(FD_LOG_AV, "address vector full (%u)", at);
			continue;
		}
		if (!*page) {
			*page = calloc(FDV_AV_PAGE_MASK + 1, sizeof(**page));
			if (!*page)
				continue;
		}
		to.ah = fdv_av_make_ah(av, &to);
		if (!to.ah) {
			FD_WARN(FD_LOG_AV, "ibv_create_ah: %s", strerror(errno));
			continue;
		}
		slot = &(*page)[at & FDV_AV_PAGE_MASK];
		*slot = to;
		/* the entry before the count that makes it reachable */
		__atomic_store_n(&av->av.count, at + 1, __ATOMIC_RELEASE);
		if (fi_addr)
			fi_addr[i] = at;
		done++;
	}
	pthread_mutex_unlock(&av->lock);
	/* Nothing usable at all: say why, rather than "0 inserted". */
	return count && !done ? -FI_EINVAL : done;
}

static struct fdv_ud_dest *fdv_av_entry(struct fdv_av_full *av, fi_addr_t a)
{
	struct fdv_ud_dest *e;

	if (a >= av->av.count)
		return NULL;
	e = &av->av.pages[a >> FDV_AV_PAGE_SHIFT][a & FDV_AV_PAGE_MASK];
	return e->ah ? e : NULL;
}

static int fdv_av_remove(struct fid_av *av_fid, fi_addr_t *fi_addr, size_t count,
			 uint64_t flags)
{
	struct fdv_av_full *av = fdv_av_full_of(av_fid);
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	if (!fi_addr && count)
		return -FI_EINVAL;
	pthread_mutex_lock(&av->lock);
	for (size_t i = 0; i < count; i++) {
		struct fdv_ud_dest *e = fdv_av_entry(av, fi_addr[i]);

		if (!e) {
			ret = -FI_EINVAL;
			continue;
		}
		/* The slot stays taken: its value is never handed out again,
		 * so a stale fi_addr_t cannot reach a new peer. */
		ibv_destroy_ah(e->ah);
		e->ah = NULL;
	}
	pthread_mutex_unlock(&av->lock);
	return ret;
}

static void fdv_ud_name_of(const struct fdv_ud_dest *e, struct fdv_ud_name *n)
{
	memset(n, 0, sizeof(*n));
	memcpy(n->gid, e->gid, sizeof(n->gid));
	n->qpn_be = htobe32(e->qpn);
	n->qkey_be = htobe32(e->qkey);
	n->lid_be = htobe16(e->lid);
	n->magic_be = htobe16(FDV_UD_NAME_MAGIC);
}

static int fdv_av_lookup(struct fid_av *av_fid, fi_addr_t fi_addr, void *addr,
			 size_t *addrlen)
{
	struct fdv_av_full *av = fdv_av_full_of(av_fid);
	struct fdv_ud_dest *e;
	struct fdv_ud_name n;

	if (!addrlen || (!addr && *addrlen))
		return -FI_EINVAL;
	pthread_mutex_lock(&av->lock);
	e = fdv_av_entry(av, fi_addr);
	if (e)
		fdv_ud_name_of(e, &n);
	pthread_mutex_unlock(&av->lock);
	if (!e)
		return -FI_EINVAL;
	memcpy(addr, &n, *addrlen < sizeof(n) ? *addrlen : sizeof(n));
	*addrlen = sizeof(n);
	return 0;
}

/* "fi_addr_ib_ud://GID/QPN/QKEY/LID" (the GID as an IPv6 address). */
static const char *fdv_av_straddr(struct fid_av *av_fid, const void *addr,
				  char *buf, size_t *len)
{
	char tmp[128], gid[INET6_ADDRSTRLEN];
	struct fdv_ud_dest e;

	(void)av_fid;
	if (!addr || !buf || !len)
		return NULL;
	if (fdv_ud_name_parse(addr, &e) ||
	    !inet_ntop(AF_INET6, e.gid, gid, sizeof(gid)))
		snprintf(tmp, sizeof(tmp), "(invalid address)");
	else
		snprintf(tmp, sizeof(tmp), "fi_addr_ib_ud://%s/%" PRIu32 "/0x%" PRIx32
			 "/%u", gid, e.qpn, e.qkey, (unsigned int)e.lid);
	return fd_straddr_out(buf, len, tmp);
}

fi_addr_t fdv_av_find(struct fdv_av_full *av, const uint8_t *gid, bool has_gid,
		      uint16_t lid, uint32_t qpn)
{
	uint32_t n = __atomic_load_n(&av->av.count, __ATOMIC_ACQUIRE);

	/* A linear search: readfrom's source lookup is per received
	 * datagram, and cheap next to the system call rxe costs; a hash of
	 * (gid, qpn) would be the next step for large vectors. */
	for (uint32_t a = 0; a < n; a++) {
		const struct fdv_ud_dest *e =
			&av->av.pages[a >> FDV_AV_PAGE_SHIFT][a & FDV_AV_PAGE_MASK];

		if (!e->ah || e->qpn != qpn)
			continue;
		if (has_gid ? !memcmp(e->gid, gid, sizeof(e->gid)) : e->lid == lid)
			return a;
	}
	return FI_ADDR_NOTAVAIL;
}

static int fdv_av_close(struct fid *fid)
{
	struct fdv_av_full *av = fdv_container_of(fid, struct fdv_av_full, av.av_fid.fid);

	if (atomic_load(&av->refs))
		return -FI_EBUSY;
	for (uint32_t a = 0; a < av->av.count; a++) {
		struct fdv_ud_dest *e = fdv_av_entry(av, a);

		if (e)
			ibv_destroy_ah(e->ah);
	}
	for (uint32_t p = 0; p < FDV_AV_PAGES; p++)
		free(av->av.pages[p]);
	pthread_mutex_destroy(&av->lock);
	atomic_fetch_sub(&av->domain->refs, 1);
	free(av);
	return 0;
}

static struct fi_ops fdv_av_fid_ops =
	FD_FI_OPS(fdv_av_close, fd_no_fid_bind, fd_no_fid_control, fd_no_fid_tostr);

static struct fi_ops_av fdv_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = fdv_av_insert,
	.insertsvc = fd_no_av_insertsvc,
	.insertsym = fd_no_av_insertsym,
	.remove = fdv_av_remove,
	.lookup = fdv_av_lookup,
	.straddr = fdv_av_straddr,
	.av_set = fd_no_av_av_set,
};

int fdv_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av_out, void *context)
{
	struct fdv_domain *dom;
	struct fdv_av_full *av;
	union ibv_gid gid;
	uint16_t lid;
	int ret;

	if (!domain || !attr || !av_out)
		return -FI_EINVAL;
	dom = FDV_OBJ(struct fdv_domain, domain_fid, domain);
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP &&
	    attr->type != FI_AV_TABLE)
		return -FI_EINVAL;
	/* No event queue (asynchronous inserts), no shared or named AVs,
	 * no symmetric inserts. */
	if (attr->flags & ~(uint64_t)FI_READ)
		return -FI_ENOSYS;
	if (attr->name || attr->rx_ctx_bits)
		return -FI_ENOSYS;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	ret = fdv_dgram_port(dom, &av->port_num, &av->sgid_index, &gid, &lid, &av->global);
	if (ret) {
		free(av);
		return ret;
	}
	av->domain = dom;
	av->type = attr->type == FI_AV_UNSPEC ? FI_AV_MAP : attr->type;
	attr->type = av->type;
	pthread_mutex_init(&av->lock, NULL);
	fd_fid_init(&av->av.av_fid.fid, FI_CLASS_AV, context, &fdv_av_fid_ops);
	av->av.av_fid.ops = &fdv_av_ops;
	atomic_fetch_add(&dom->refs, 1);
	*av_out = &av->av.av_fid;
	return 0;
}
