/* FI_EP_DGRAM over verbs UD (issue 25): two datagram endpoints on one
 * device (Soft-RoCE loops traffic between QPs of one device; rxe0 and
 * rxe1 in one kernel do not reach each other, tests/rxe/README.md).
 *  - fi_getinfo: a DGRAM entry per device for ep_type FI_EP_DGRAM and for
 *    no ep_type, with caps FI_MSG|FI_SEND|FI_RECV (no RMA, tagged or
 *    atomics), mode FI_MSG_PREFIX, msg_prefix_size 40, max_msg_size the
 *    port's MTU, address format FI_ADDR_IB_UD; none without FI_MSG_PREFIX
 *    in hints->mode, none when RMA is asked for; node/service choose the
 *    device (a local address with FI_SOURCE, a peer's without) and the
 *    entries carry no destination; 127.0.0.1 has none; a peer's name as
 *    hints->dest_addr comes back as dest_addr, a name as src_addr picks
 *    its device and comes back as src_addr, bytes that are no name give
 *    none; every other entry's src_addr is its device's name with QP
 *    number 0, which as hints->src_addr picks that device alone;
 *  - names and AVs: fi_getname (-FI_ETOOSMALL for a short buffer),
 *    fi_av_insert into an FI_AV_TABLE and an FI_AV_MAP, a name that is
 *    not ours refused with -FI_EINVAL, fi_av_lookup returns the inserted
 *    bytes, fi_av_straddr, fi_av_remove then a send to the removed
 *    address refused;
 *  - ping-pong of every size from 0 to max_msg_size (a selection around
 *    the inline limit and the MTU), each byte compared, the received
 *    length the prefix plus the payload, fi_cq_readfrom's source the
 *    peer's fi_addr_t in both directions;
 *  - fi_sendv / fi_recvv, fi_sendmsg / fi_recvmsg, fi_senddata and
 *    fi_injectdata (the receiver sees FI_REMOTE_CQ_DATA and the data),
 *    fi_inject;
 *  - refused: a send above max_msg_size (-FI_EINVAL), to an fi_addr_t
 *    the AV never gave (-FI_ENOENT), a receive buffer shorter than the
 *    prefix (-FI_EINVAL), a receive of the prefix split over two iovs;
 *  - short receive buffers: a datagram that fits is delivered whole; one
 *    longer than the posted receive completes it with FI_ETRUNC, olen
 *    the bytes cut off and the part that fits in the buffer, and the
 *    endpoint still works (a device's own length error would have moved
 *    the UD QP to the error state: on rxe nothing arrives after it). */
#include <arpa/inet.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fdt.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>

#define PREFIX 40
#define BUF 8192

struct node {
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *txcq, *rxcq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	uint8_t name[64];
	size_t namelen;
	uint8_t sbuf[BUF], rbuf[BUF];
	void *desc;
};

static struct fi_info *dgram_hints(void)
{
	struct fi_info *h = fi_allocinfo();

	FDT_ASSERT(h, "fi_allocinfo");
	h->ep_attr->type = FI_EP_DGRAM;
	h->caps = FI_MSG;
	h->mode = FI_MSG_PREFIX | FI_CONTEXT;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
				  FI_MR_VIRT_ADDR;
	h->fabric_attr->prov_name = strdup("verbs");
	return h;
}

static void check_entry(const struct fi_info *fi)
{
	const char *dn = fi->domain_attr->name;

	FDT_ASSERT(fi->ep_attr->type == FI_EP_DGRAM, "type %d", fi->ep_attr->type);
	FDT_ASSERT(fi->caps & FI_MSG, "caps 0x%llx", (unsigned long long)fi->caps);
	FDT_ASSERT(!(fi->caps & (FI_RMA | FI_TAGGED | FI_ATOMIC | FI_READ | FI_WRITE |
				 FI_REMOTE_READ | FI_REMOTE_WRITE)),
		   "caps 0x%llx", (unsigned long long)fi->caps);
	FDT_ASSERT(fi->mode & FI_MSG_PREFIX, "mode");
	FDT_ASSERT(fi->ep_attr->msg_prefix_size == PREFIX, "prefix %zu",
		   fi->ep_attr->msg_prefix_size);
	FDT_ASSERT(fi->ep_attr->max_msg_size >= 256 && fi->ep_attr->max_msg_size <= 4096 &&
		   !(fi->ep_attr->max_msg_size & (fi->ep_attr->max_msg_size - 1)),
		   "max_msg_size %zu", fi->ep_attr->max_msg_size);
	FDT_ASSERT(!fi->nic || !fi->nic->link_attr->mtu ||
		   fi->nic->link_attr->mtu == fi->ep_attr->max_msg_size,
		   "mtu %zu vs %zu", fi->nic->link_attr->mtu, fi->ep_attr->max_msg_size);
	FDT_ASSERT(fi->addr_format == FI_ADDR_IB_UD, "addr_format %u", fi->addr_format);
	FDT_ASSERT(strlen(dn) > 6 && !strcmp(dn + strlen(dn) - 6, "-dgram"), "domain %s", dn);
}

/* Every entry carries a source address, as upstream's do (fabtests'
 * getinfo_test fails an entry without): the name given in the hints, or
 * the device's own with QP number 0 (no QP before fi_enable), which
 * passed back as hints->src_addr picks the same device and nothing else.
 * (Before, DGRAM entries had no src_addr.) */
static void check_source(const struct fi_info *h, const struct fi_info *fi)
{
	struct fi_info *back = NULL, *again = NULL;
	static const uint8_t zero_qpn[4];

	FDT_ASSERT(fi->src_addr && fi->src_addrlen, "%s: an entry without src_addr",
		   fi->domain_attr->name);
	if (h->src_addr) {
		FDT_ASSERT(fi->src_addrlen == h->src_addrlen &&
			   !memcmp(fi->src_addr, h->src_addr, h->src_addrlen),
			   "%s: src_addr is not the name given in the hints",
			   fi->domain_attr->name);
		return;
	}
	FDT_ASSERT(fi->src_addrlen > 20 &&
		   !memcmp((const uint8_t *)fi->src_addr + 16, zero_qpn, sizeof(zero_qpn)),
		   "%s: the device's name in src_addr names a QP", fi->domain_attr->name);
	back = fi_dupinfo(h);
	FDT_ASSERT(back, "fi_dupinfo");
	back->src_addr = malloc(fi->src_addrlen);
	memcpy(back->src_addr, fi->src_addr, fi->src_addrlen);
	back->src_addrlen = fi->src_addrlen;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, back, &again));
	FDT_ASSERT(again && !again->next && !strcmp(again->domain_attr->name,
						    fi->domain_attr->name),
		   "%s: its src_addr as hints picks %s%s", fi->domain_attr->name,
		   again ? again->domain_attr->name : "nothing",
		   again && again->next ? " and more" : "");
	fi_freeinfo(again);
	fi_freeinfo(back);
}

/* A peer named by its IPv4 address (node, no FI_SOURCE) comes back as
 * fi_getinfo(3) wants it, as dest_addr (fabtests' getinfo_test no_hints5
 * fails an entry without): a UD name of the peer's RoCE port, its GID
 * the IPv4-mapped address, QP number 0 since no endpoint is known.
 * (Before, DGRAM entries for a peer had no dest_addr.) */
static void check_peer_dest(const struct fi_info *fi, const char *node)
{
	uint8_t gid[16] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t zero_qpn[4];
	const uint8_t *d = fi->dest_addr;

	FDT_ASSERT(d && fi->dest_addrlen == fi->src_addrlen,
		   "peer %s: dest_addr %p, %zu bytes", node, fi->dest_addr, fi->dest_addrlen);
	FDT_ASSERT(inet_pton(AF_INET, node, gid + 12) == 1, "node %s is no IPv4 address", node);
	FDT_ASSERT(!memcmp(d, gid, 16), "peer %s: dest_addr's GID is not ::ffff:%s", node, node);
	FDT_ASSERT(!memcmp(d + 16, zero_qpn, 4), "peer %s: dest_addr names a QP", node);
}

/* The entries fi_getinfo gives for node/service/flags: each a DGRAM one
 * on device dev (when given), a peer as dest_addr (check_peer_dest), no
 * endpoint's name (one exists only after fi_enable); how many. */
static int named_entries(struct fi_info *h, const char *node, const char *service,
			 uint64_t flags, const char *dev)
{
	struct fi_info *info = NULL, *fi;
	int n = 0;

	FDT_OK(fi_getinfo(FI_VERSION(1, 17), node, service, flags, h, &info));
	for (fi = info; fi; fi = fi->next, n++) {
		check_entry(fi);
		FDT_ASSERT(!dev || !strncmp(fi->domain_attr->name, dev, strlen(dev)),
			   "node %s, service %s, flags %#llx: an entry of %s, not of %s", node,
			   service ? service : "-", (unsigned long long)flags,
			   fi->domain_attr->name, dev);
		if (node && !(flags & FI_SOURCE))
			check_peer_dest(fi, node);
		else
			FDT_ASSERT(!fi->dest_addr, "node %s, flags %#llx: an entry with a "
				   "destination", node ? node : "-", (unsigned long long)flags);
		check_source(h, fi);
	}
	fi_freeinfo(info);
	return n;
}

/* node and service choose the device, as fi_pingpong -e dgram uses them
 * (it exchanges the names over its own socket): the server passes its
 * port with FI_SOURCE, the client the server's address and port. Before,
 * any node or service gave -FI_ENODATA. */
static void node_service_checks(struct fi_info *h)
{
	const char *a0 = getenv("FD_RXE_ADDR0"), *a1 = getenv("FD_RXE_ADDR1");
	const char *d0 = getenv("FD_RXE_DEV0"), *d1 = getenv("FD_RXE_DEV1");
	struct fi_info *info = NULL;
	int n;

	if (!a0 || !d0) {
		printf("getinfo: node/service checks need FD_RXE_ADDR0/DEV0: not run\n");
		return;
	}
	n = named_entries(h, a0, "47990", FI_SOURCE, d0);
	FDT_ASSERT(n == 1, "local node %s with FI_SOURCE: %d entries", a0, n);
	n = named_entries(h, a0, NULL, FI_SOURCE | FI_NUMERICHOST, d0);
	FDT_ASSERT(n == 1, "local node %s alone: %d entries", a0, n);
	n = named_entries(h, NULL, "47990", FI_SOURCE, NULL);
	FDT_ASSERT(n >= 1, "a bare service with FI_SOURCE: %d entries", n);
	if (a1 && d1) {
		n = named_entries(h, a1, "47990", 0, NULL);
		FDT_ASSERT(n == 1, "peer node %s: %d entries", a1, n);
		n = named_entries(h, a1, NULL, FI_SOURCE, d1);
		FDT_ASSERT(n == 1, "the other device's address %s: %d entries", a1, n);
	}
	/* an address on no RDMA device */
	FDT_EXPECT(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "47990", FI_SOURCE, h, &info),
		   -FI_ENODATA);
	printf("getinfo: node/service choose the device (%s%s%s)\n", d0, d1 ? ", " : "",
	       d1 ? d1 : "");
}

/* Names in the hints, as fi_pingpong -e dgram's client gives the
 * server's name it received over its socket: a destination name comes
 * back as the entries' dest_addr, a source name picks its own device,
 * bytes that are no name of ours give none. (Before, any address in the
 * hints gave -FI_ENODATA.) */
static void name_hint_checks(const struct node *peer, const char *dev)
{
	struct fi_info *h = dgram_hints(), *info = NULL, *fi;
	uint8_t junk[sizeof(peer->name)];
	int n = 0;

	h->dest_addr = malloc(peer->namelen);
	memcpy(h->dest_addr, peer->name, peer->namelen);
	h->dest_addrlen = peer->namelen;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info));
	for (fi = info; fi; fi = fi->next, n++) {
		check_entry(fi);
		check_source(h, fi);
		FDT_ASSERT(fi->dest_addrlen == peer->namelen && fi->dest_addr &&
			   !memcmp(fi->dest_addr, peer->name, peer->namelen),
			   "%s: dest_addr is not the name given in the hints",
			   fi->domain_attr->name);
	}
	FDT_ASSERT(n >= 1, "no entry for a peer's name as dest_addr");
	fi_freeinfo(info);
	info = NULL;
	/* the same bytes as the source: only the device that has them */
	h->src_addr = h->dest_addr;
	h->src_addrlen = h->dest_addrlen;
	h->dest_addr = NULL;
	h->dest_addrlen = 0;
	n = named_entries(h, NULL, NULL, 0, dev);
	FDT_ASSERT(n == 1, "the device of a source name: %d entries", n);
	/* not a name: a short one, then bytes of the right length */
	h->src_addrlen = peer->namelen - 1;
	FDT_EXPECT(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info), -FI_ENODATA);
	memset(junk, 0x5a, sizeof(junk));
	memcpy(h->src_addr, junk, peer->namelen);
	h->src_addrlen = peer->namelen;
	FDT_EXPECT(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info), -FI_ENODATA);
	fi_freeinfo(h);
	printf("getinfo: a UD name as dest_addr comes back in the entries, as src_addr "
	       "picks %s\n", dev);
}

static struct fi_info *getinfo_checks(void)
{
	struct fi_info *h = dgram_hints(), *info = NULL, *fi, *pick = NULL;
	const char *dev0 = getenv("FD_RXE_DEV0");
	int n = 0, found = 0;

	/* no FI_MSG_PREFIX in the offer: no datagram entry */
	h->mode = FI_CONTEXT;
	FDT_EXPECT(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info), -FI_ENODATA);
	/* RMA over UD: none either */
	h->mode = FI_MSG_PREFIX;
	h->caps = FI_MSG | FI_RMA;
	FDT_EXPECT(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info), -FI_ENODATA);
	/* no ep_type: MSG and DGRAM entries both */
	h->caps = FI_MSG;
	h->ep_attr->type = FI_EP_UNSPEC;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info));
	for (fi = info; fi; fi = fi->next)
		found |= fi->ep_attr->type == FI_EP_DGRAM ? 2 :
			 fi->ep_attr->type == FI_EP_MSG ? 1 : 0;
	FDT_ASSERT(found == 3, "kinds of entries without ep_type: %d", found);
	fi_freeinfo(info);
	info = NULL;

	h->ep_attr->type = FI_EP_DGRAM;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info));
	for (fi = info; fi; fi = fi->next, n++) {
		check_entry(fi);
		check_source(h, fi);
		if (!pick || (dev0 && !strncmp(fi->domain_attr->name, dev0, strlen(dev0))))
			pick = fi;
	}
	FDT_ASSERT(n >= 1, "no entry");
	pick = fi_dupinfo(pick);
	fi_freeinfo(info);
	node_service_checks(h);
	fi_freeinfo(h);
	printf("getinfo: %d DGRAM entries, using %s, max_msg_size %zu, inject %zu\n", n,
	       pick->domain_attr->name, pick->ep_attr->max_msg_size,
	       pick->tx_attr->inject_size);
	return pick;
}

static void node_open(struct node *nd, struct fid_fabric *fabric, struct fi_info *info,
		      enum fi_av_type avt)
{
	struct fi_cq_attr ca = { .size = 256, .format = FI_CQ_FORMAT_DATA };
	struct fi_av_attr aa = { .type = avt };
	uint8_t tiny[4];
	size_t len;

	FDT_OK(fi_domain(fabric, info, &nd->domain, NULL));
	FDT_OK(fi_av_open(nd->domain, &aa, &nd->av, NULL));
	FDT_OK(fi_cq_open(nd->domain, &ca, &nd->txcq, NULL));
	FDT_OK(fi_cq_open(nd->domain, &ca, &nd->rxcq, NULL));
	FDT_OK(fi_endpoint(nd->domain, info, &nd->ep, NULL));
	FDT_OK(fi_ep_bind(nd->ep, &nd->av->fid, 0));
	FDT_OK(fi_ep_bind(nd->ep, &nd->txcq->fid, FI_TRANSMIT));
	FDT_OK(fi_ep_bind(nd->ep, &nd->rxcq->fid, FI_RECV));
	/* before fi_enable there is no QP, hence no name */
	len = sizeof(nd->name);
	FDT_EXPECT(fi_getname(&nd->ep->fid, nd->name, &len), -FI_EOPBADSTATE);
	FDT_OK(fi_enable(nd->ep));
	len = sizeof(tiny);
	FDT_EXPECT(fi_getname(&nd->ep->fid, tiny, &len), -FI_ETOOSMALL);
	FDT_ASSERT(len > sizeof(tiny) && len <= sizeof(nd->name), "name length %zu", len);
	nd->namelen = sizeof(nd->name);
	FDT_OK(fi_getname(&nd->ep->fid, nd->name, &nd->namelen));
	FDT_ASSERT(nd->namelen == len, "name length %zu vs %zu", nd->namelen, len);
	FDT_OK(fi_mr_reg(nd->domain, nd->sbuf, sizeof(nd->sbuf) + 0, FI_SEND, 0, 0, 0,
			 &nd->mr, NULL));
	nd->desc = fi_mr_desc(nd->mr);
}

static struct fid_mr *rmr_of(struct node *nd, struct fid_mr **keep)
{
	if (!*keep)
		FDT_OK(fi_mr_reg(nd->domain, nd->rbuf, sizeof(nd->rbuf), FI_RECV, 0, 1, 0,
				 keep, NULL));
	return *keep;
}

static void node_close(struct node *nd, struct fid_mr *rmr)
{
	FDT_OK(fi_close(&nd->ep->fid));
	FDT_OK(fi_close(&nd->mr->fid));
	if (rmr)
		FDT_OK(fi_close(&rmr->fid));
	FDT_OK(fi_close(&nd->av->fid));
	FDT_OK(fi_close(&nd->txcq->fid));
	FDT_OK(fi_close(&nd->rxcq->fid));
	FDT_OK(fi_close(&nd->domain->fid));
}

/* One completion from cq within ~5 s: 1, or -FI_EAVAIL with *err filled,
 * or -FI_EAGAIN when nothing came. */
static int wait_from(struct fid_cq *cq, struct fi_cq_data_entry *e, fi_addr_t *src,
		     struct fi_cq_err_entry *err, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ssize_t r = src ? fi_cq_readfrom(cq, e, 1, src) : fi_cq_read(cq, e, 1);

		if (r == 1)
			return 1;
		if (r == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			FDT_ASSERT(fi_cq_readerr(cq, err, 0) == 1, "readerr");
			return -FI_EAVAIL;
		}
		FDT_ASSERT(r == -FI_EAGAIN, "fi_cq_read = %zd", r);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return -FI_EAGAIN;
	}
}

static void expect_send_done(struct node *nd, void *ctx)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	int r = wait_from(nd->txcq, &e, NULL, &err, 5000);

	FDT_ASSERT(r == 1, "send completion: %d (err %d)", r, r == -FI_EAVAIL ? err.err : 0);
	FDT_ASSERT(e.op_context == ctx, "send context");
	FDT_ASSERT((e.flags & (FI_MSG | FI_SEND)) == (FI_MSG | FI_SEND), "send flags");
}

/* from sends len bytes (seed) to dest; to has a receive posted at rbuf. */
static void expect_recv(struct node *to, size_t len, uint32_t seed, void *ctx,
			fi_addr_t want_src, uint64_t want_data)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	fi_addr_t src = 12345;
	int r = wait_from(to->rxcq, &e, &src, &err, 5000);

	FDT_ASSERT(r == 1, "receive of %zu bytes: %d (err %d)", len, r,
		   r == -FI_EAVAIL ? err.err : 0);
	FDT_ASSERT(e.op_context == ctx, "receive context");
	FDT_ASSERT(e.len == PREFIX + len, "received length %zu for %zu", e.len, len);
	FDT_ASSERT((e.flags & (FI_MSG | FI_RECV)) == (FI_MSG | FI_RECV), "flags 0x%llx",
		   (unsigned long long)e.flags);
	FDT_ASSERT(src == want_src, "source %llu, expected %llu", (unsigned long long)src,
		   (unsigned long long)want_src);
	if (want_data) {
		FDT_ASSERT(e.flags & FI_REMOTE_CQ_DATA, "no FI_REMOTE_CQ_DATA");
		FDT_ASSERT(e.data == want_data, "data 0x%llx", (unsigned long long)e.data);
	}
	FDT_ASSERT(fdt_check(to->rbuf + PREFIX, len, seed), "payload of %zu bytes differs",
		   len);
}

int main(void)
{
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct node *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct fid_mr *armr = NULL, *brmr = NULL;
	fi_addr_t to_b, to_a, bad;
	uint8_t junk[64], back[64];
	size_t max, inj, len;
	char str[128];
	int ctx[4];

	(void)fdt_addr();	/* exits 77 without a device */
	info = getinfo_checks();
	max = info->ep_attr->max_msg_size;
	inj = info->tx_attr->inject_size;
	FDT_OK(fi_fabric(info->fabric_attr, &fabric, NULL));
	node_open(a, fabric, info, FI_AV_TABLE);
	node_open(b, fabric, info, FI_AV_MAP);
	rmr_of(a, &armr);
	rmr_of(b, &brmr);
	name_hint_checks(b, info->domain_attr->name);

	/* ---- address vectors ---- */
	FDT_ASSERT(fi_av_insert(a->av, b->name, 1, &to_b, 0, NULL) == 1, "insert b");
	FDT_ASSERT(fi_av_insert(b->av, a->name, 1, &to_a, 0, NULL) == 1, "insert a");
	memset(junk, 0xab, sizeof(junk));
	bad = 7;
	FDT_EXPECT(fi_av_insert(a->av, junk, 1, &bad, 0, NULL), -FI_EINVAL);
	FDT_ASSERT(bad == FI_ADDR_NOTAVAIL, "refused name got %llu", (unsigned long long)bad);
	len = sizeof(back);
	FDT_OK(fi_av_lookup(a->av, to_b, back, &len));
	FDT_ASSERT(len == b->namelen && !memcmp(back, b->name, len), "lookup");
	len = sizeof(back);
	FDT_EXPECT(fi_av_lookup(a->av, to_b + 100, back, &len), -FI_EINVAL);
	len = sizeof(str);
	FDT_ASSERT(fi_av_straddr(a->av, b->name, str, &len) == str, "straddr");
	FDT_ASSERT(!strncmp(str, "fi_addr_ib_ud://", 16), "straddr %s", str);
	printf("b is %s\n", str);

	/* ---- refusals ---- */
	FDT_EXPECT(fi_send(a->ep, a->sbuf, max + 1, a->desc, to_b, &ctx[0]), -FI_EINVAL);
	FDT_EXPECT(fi_send(a->ep, a->sbuf, 8, a->desc, to_b + 1000, &ctx[0]), -FI_ENOENT);
	FDT_EXPECT(fi_inject(a->ep, a->sbuf, 8, (fi_addr_t)-2), -FI_ENOENT);
	FDT_EXPECT(fi_recv(b->ep, b->rbuf, PREFIX - 1, fi_mr_desc(brmr), 0, &ctx[1]),
		   -FI_EINVAL);
	{
		struct iovec iov[2] = { { b->rbuf, 20 }, { b->rbuf + 20, 100 } };
		void *d[2] = { fi_mr_desc(brmr), fi_mr_desc(brmr) };

		FDT_EXPECT(fi_recvv(b->ep, iov, d, 2, 0, &ctx[1]), -FI_EINVAL);
	}

	/* ---- ping-pong, sizes 0 .. max ---- */
	{
		size_t sizes[] = { 0, 1, 7, 64, inj ? inj - 1 : 1, inj, inj + 1, 333,
				   max / 2, max - 1, max };
		uint32_t seed = 1;

		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++, seed += 2) {
			size_t s = sizes[i];

			FDT_OK(fi_recv(b->ep, b->rbuf, PREFIX + max, fi_mr_desc(brmr), 0,
				       &ctx[1]));
			FDT_OK(fi_recv(a->ep, a->rbuf, PREFIX + max, fi_mr_desc(armr), 0,
				       &ctx[2]));
			fdt_fill(a->sbuf, s, seed);
			FDT_OK(fi_send(a->ep, a->sbuf, s, a->desc, to_b, &ctx[0]));
			expect_send_done(a, &ctx[0]);
			expect_recv(b, s, seed, &ctx[1], to_a, 0);
			fdt_fill(b->sbuf, s, seed + 1);
			FDT_OK(fi_send(b->ep, b->sbuf, s, b->desc, to_a, &ctx[3]));
			expect_send_done(b, &ctx[3]);
			expect_recv(a, s, seed + 1, &ctx[2], to_b, 0);
		}
		printf("ping-pong: %zu sizes up to %zu bytes\n", sizeof(sizes) / sizeof(sizes[0]),
		       max);
	}

	/* ---- the other forms ---- */
	{
		struct iovec siov[2] = { { a->sbuf, 100 }, { a->sbuf + 100, 200 } };
		void *sd[2] = { a->desc, a->desc };
		struct iovec riov[2] = { { b->rbuf, PREFIX + 50 }, { b->rbuf + PREFIX + 50, 1000 } };
		void *rd[2] = { fi_mr_desc(brmr), fi_mr_desc(brmr) };
		struct fi_msg m = { .msg_iov = siov, .desc = sd, .iov_count = 2, .addr = to_b,
				    .context = &ctx[0] };
		struct fi_msg rm = { .msg_iov = riov, .desc = rd, .iov_count = 2,
				     .context = &ctx[1] };

		FDT_OK(fi_recvv(b->ep, riov, rd, 2, 0, &ctx[1]));
		fdt_fill(a->sbuf, 300, 77);
		FDT_OK(fi_sendv(a->ep, siov, sd, 2, to_b, &ctx[0]));
		expect_send_done(a, &ctx[0]);
		expect_recv(b, 300, 77, &ctx[1], to_a, 0);

		FDT_OK(fi_recvmsg(b->ep, &rm, FI_COMPLETION));
		fdt_fill(a->sbuf, 300, 78);
		FDT_OK(fi_sendmsg(a->ep, &m, FI_COMPLETION));
		expect_send_done(a, &ctx[0]);
		expect_recv(b, 300, 78, &ctx[1], to_a, 0);

		FDT_OK(fi_recv(b->ep, b->rbuf, PREFIX + max, fi_mr_desc(brmr), 0, &ctx[1]));
		fdt_fill(a->sbuf, 99, 79);
		FDT_OK(fi_senddata(a->ep, a->sbuf, 99, a->desc, 0xfeedbeef, to_b, &ctx[0]));
		expect_send_done(a, &ctx[0]);
		expect_recv(b, 99, 79, &ctx[1], to_a, 0xfeedbeef);

		if (inj) {
			size_t s = inj < 16 ? inj : 16;

			FDT_OK(fi_recv(b->ep, b->rbuf, PREFIX + max, fi_mr_desc(brmr), 0,
				       &ctx[1]));
			fdt_fill(a->sbuf, s, 80);
			FDT_OK(fi_inject(a->ep, a->sbuf, s, to_b));
			memset(a->sbuf, 0, s);	/* reusable at return */
			expect_recv(b, s, 80, &ctx[1], to_a, 0);
			FDT_EXPECT(fi_inject(a->ep, a->sbuf, inj + 1, to_b), -FI_EINVAL);

			FDT_OK(fi_recv(b->ep, b->rbuf, PREFIX + max, fi_mr_desc(brmr), 0,
				       &ctx[1]));
			fdt_fill(a->sbuf, s, 84);
			FDT_OK(fi_injectdata(a->ep, a->sbuf, s, 0x1234567, to_b));
			expect_recv(b, s, 84, &ctx[1], to_a, 0x1234567);
		}
	}

	/* ---- truncation ---- */
	{
		struct fi_cq_data_entry e;
		struct fi_cq_err_entry err;
		int r;

		FDT_OK(fi_recv(b->ep, b->rbuf, PREFIX + 16, fi_mr_desc(brmr), 0, &ctx[1]));
		fdt_fill(a->sbuf, 100, 81);
		FDT_OK(fi_send(a->ep, a->sbuf, 100, a->desc, to_b, &ctx[0]));
		expect_send_done(a, &ctx[0]);
		r = wait_from(b->rxcq, &e, NULL, &err, 3000);
		FDT_ASSERT(r == -FI_EAVAIL, "a datagram too long for its receive: %d", r);
		FDT_ASSERT(err.err == FI_ETRUNC, "err %d (%s), prov_errno %d", err.err,
			   fi_strerror(err.err), err.prov_errno);
		FDT_ASSERT(err.op_context == &ctx[1], "truncated receive's context");
		FDT_ASSERT(err.olen == 100 - 16, "olen %zu", err.olen);
		FDT_ASSERT(fdt_check(b->rbuf + PREFIX, 16, 81), "the part that fits");
		printf("truncation: FI_ETRUNC, olen %zu\n", err.olen);
		/* a short buffer the datagram fits: delivered whole */
		FDT_OK(fi_recv(b->ep, b->rbuf, PREFIX + 200, fi_mr_desc(brmr), 0, &ctx[1]));
		fdt_fill(a->sbuf, 150, 83);
		FDT_OK(fi_send(a->ep, a->sbuf, 150, a->desc, to_b, &ctx[0]));
		expect_send_done(a, &ctx[0]);
		expect_recv(b, 150, 83, &ctx[1], to_a, 0);
		/* the same through fi_recvv: scattered over two short buffers */
		{
			struct iovec riov[2] = { { b->rbuf, PREFIX + 10 },
						 { b->rbuf + PREFIX + 10, 50 } };
			void *rd[2] = { fi_mr_desc(brmr), fi_mr_desc(brmr) };

			memset(b->rbuf, 0, PREFIX + 100);
			FDT_OK(fi_recvv(b->ep, riov, rd, 2, 0, &ctx[1]));
			fdt_fill(a->sbuf, 60, 85);
			FDT_OK(fi_send(a->ep, a->sbuf, 60, a->desc, to_b, &ctx[0]));
			expect_send_done(a, &ctx[0]);
			expect_recv(b, 60, 85, &ctx[1], to_a, 0);
			FDT_ASSERT(b->rbuf[PREFIX + 60] == 0, "wrote past the buffers");
		}
		/* still usable */
		FDT_OK(fi_recv(b->ep, b->rbuf, PREFIX + max, fi_mr_desc(brmr), 0, &ctx[1]));
		fdt_fill(a->sbuf, 50, 82);
		FDT_OK(fi_send(a->ep, a->sbuf, 50, a->desc, to_b, &ctx[0]));
		expect_send_done(a, &ctx[0]);
		expect_recv(b, 50, 82, &ctx[1], to_a, 0);
	}

	/* ---- removal ---- */
	FDT_OK(fi_av_remove(a->av, &to_b, 1, 0));
	FDT_EXPECT(fi_send(a->ep, a->sbuf, 8, a->desc, to_b, &ctx[0]), -FI_ENOENT);
	FDT_EXPECT(fi_av_remove(a->av, &to_b, 1, 0), -FI_EINVAL);

	node_close(a, armr);
	node_close(b, brmr);
	FDT_OK(fi_close(&fabric->fid));
	fi_freeinfo(info);
	free(a);
	free(b);
	printf("test_dgram: ok\n");
	return 0;
}
