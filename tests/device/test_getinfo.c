/*
 * fi_getinfo with real verbs devices (Soft-RoCE in the test VM): entries,
 * names, attributes, defaults and FI_VERBS_* overrides, and the address
 * cases (list, passive, active, FI_ADDR_STR node, hints addresses,
 * wildcard).  Exits 77 when there is no verbs device.
 *
 * Uses FD_RXE_ADDR0 / FD_RXE_DEV0 / FD_RXE_NETDEV0 from tests/rxe/run (an
 * IPv4 address, the device that owns it and its network interface); the
 * checks needing them are skipped when they are not set.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <fdv/fdv_config.h>
#include "fdt_check.h"

#define V117 FI_VERSION(1, 17)
#define MR_NEEDED (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
		   FI_MR_PROV_KEY)

static const char *addr0, *dev0, *netdev0;
static char devnames[16][64];
static int ndev;

static int count(const struct fi_info *fi)
{
	int n = 0;

	for (; fi; fi = fi->next)
		n++;
	return n;
}

static int count_type(const struct fi_info *fi, enum fi_ep_type type)
{
	int n = 0;

	for (; fi; fi = fi->next)
		n += fi->ep_attr->type == type;
	return n;
}

/* Every MSG entry before any other: a program that takes the first
 * answer to a typeless request keeps getting what it got before. */
static int msg_first(const struct fi_info *fi)
{
	for (; fi && fi->ep_attr->type == FI_EP_MSG; fi = fi->next)
		;
	for (; fi; fi = fi->next)
		if (fi->ep_attr->type == FI_EP_MSG)
			return 0;
	return 1;
}

/* Entries of the verbs provider itself: without hints, layers built on it
 * (verbs;rstream) answer too. */
static int count_verbs(const struct fi_info *fi)
{
	int n = 0;

	/* FI_EP_MSG entries: NULL hints also list FI_EP_DGRAM ones
	 * (test_dgram checks those), counted apart. */
	for (; fi; fi = fi->next)
		n += !strcmp(fi->fabric_attr->prov_name, "verbs") &&
		     fi->ep_attr->type == FI_EP_MSG;
	return n;
}

static int is_device(const char *name)
{
	for (int i = 0; i < ndev; i++)
		if (!strcmp(devnames[i], name))
			return 1;
	return 0;
}

static uint16_t port_of(const void *sa)
{
	const struct sockaddr *s = sa;

	if (s->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
}

/* Is sa the IPv4 address 'ip' with port 'port'? */
static int is_addr(const void *sa, size_t len, const char *ip, int port)
{
	const struct sockaddr_in *sin = sa;
	struct in_addr want;

	if (!sa || len != sizeof(*sin) || sin->sin_family != AF_INET ||
	    inet_pton(AF_INET, ip, &want) != 1)
		return 0;
	return sin->sin_addr.s_addr == want.s_addr &&
	       (port < 0 || ntohs(sin->sin_port) == port);
}

static int is_wildcard(const void *sa)
{
	const struct sockaddr *s = sa;

	if (s->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return s->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* Hints of an RMA application that supports the verbs modes. */
static struct fi_info *hints_rma(void)
{
	struct fi_info *h = fi_allocinfo();

	h->caps = FI_MSG | FI_RMA;
	h->mode = FI_CONTEXT | FI_RX_CQ_DATA;
	h->ep_attr->type = FI_EP_MSG;
	h->domain_attr->mr_mode = MR_NEEDED;
	return h;
}

/* What every verbs entry must say. */
static void check_entry(const struct fi_info *fi, const char *what)
{
	const char *fab = fi->fabric_attr->name;

	CHECK(!strcmp(fi->fabric_attr->prov_name, "verbs"), "%s: prov", what);
	CHECK(fi->fabric_attr->prov_version == FI_VERSION(117, 0),
	      "%s: prov_version", what);
	CHECK(fi->fabric_attr->api_version == V117, "%s: api", what);
	CHECK(fi->domain_attr->name && is_device(fi->domain_attr->name),
	      "%s: domain %s", what, fi->domain_attr->name);
	CHECK(fab && (!strncmp(fab, "IB-0x", 5) ||
		      !strcmp(fab, "Ethernet-iWARP")), "%s: fabric %s", what,
	      fab ? fab : "NULL");
	CHECK(fi->ep_attr->type == FI_EP_MSG, "%s: type", what);
	CHECK(fi->ep_attr->protocol == FI_PROTO_RDMA_CM_IB_RC ||
	      fi->ep_attr->protocol == FI_PROTO_IWARP, "%s: protocol", what);
	CHECK(fi->ep_attr->max_msg_size >= 1024, "%s: max_msg_size %zu", what,
	      fi->ep_attr->max_msg_size);
	CHECK(fi->domain_attr->threading == FI_THREAD_DOMAIN ||
	      fi->domain_attr->threading == FI_THREAD_SAFE, "%s: threading",
	      what);
	CHECK(fi->domain_attr->data_progress == FI_PROGRESS_AUTO &&
	      fi->domain_attr->control_progress == FI_PROGRESS_AUTO,
	      "%s: progress", what);
	CHECK(fi->domain_attr->mr_key_size == 4, "%s: key size", what);
	CHECK(fi->addr_format == FI_SOCKADDR_IN ||
	      fi->addr_format == FI_SOCKADDR_IN6, "%s: addr_format %u", what,
	      fi->addr_format);
	if (fi->src_addr)
		CHECK(((const struct sockaddr *)fi->src_addr)->sa_family ==
		      (fi->addr_format == FI_SOCKADDR_IN ? AF_INET : AF_INET6),
		      "%s: src family", what);
	CHECK(fi->tx_attr->rma_iov_limit == 1, "%s: rma_iov_limit", what);
	CHECK(fi->tx_attr->inject_size > 0 && fi->tx_attr->inject_size <= 4096,
	      "%s: inject %zu", what, fi->tx_attr->inject_size);
	CHECK(fi->nic && fi->nic->device_attr && fi->nic->link_attr &&
	      fi->nic->bus_attr, "%s: nic", what);
	if (fi->nic && fi->nic->device_attr && fi->nic->link_attr) {
		CHECK(fi->nic->device_attr->name &&
		      !strcmp(fi->nic->device_attr->name, fi->domain_attr->name),
		      "%s: nic name", what);
		CHECK(fi->nic->link_attr->state == FI_LINK_UP &&
		      fi->nic->link_attr->mtu >= 256 &&
		      fi->nic->link_attr->network_type, "%s: nic link", what);
	}
}

static void test_list(void)
{
	struct fi_info *h = hints_rma(), *info = NULL, *fi;
	const char *prev_dom = NULL;
	int found0 = 0, n, ndgram;

	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0, "list");
	n = count(info);
	CHECK(n >= 1, "entries %d", n);
	for (fi = info; fi; fi = fi->next) {
		check_entry(fi, "list");
		CHECK(fi->src_addr && fi->src_addrlen && !fi->dest_addr,
		      "list: only src_addr");
		if (fi->src_addr)
			CHECK(port_of(fi->src_addr) == 0, "list: port 0");
		CHECK(fi->caps == (FI_MSG | FI_RMA | FI_SEND | FI_RECV |
				   FI_READ | FI_WRITE | FI_REMOTE_READ |
				   FI_REMOTE_WRITE | FI_LOCAL_COMM |
				   FI_REMOTE_COMM | FI_FENCE), "list: caps 0x%llx",
		      (unsigned long long)fi->caps);
		CHECK(fi->mode == FI_RX_CQ_DATA &&
		      fi->rx_attr->mode == FI_RX_CQ_DATA, "list: mode");
		CHECK(fi->domain_attr->cq_data_size == 4 ||
		      fi->ep_attr->protocol == FI_PROTO_IWARP, "cq data");
		CHECK(fi->domain_attr->mr_mode == MR_NEEDED, "list: mr_mode 0x%x",
		      fi->domain_attr->mr_mode);
		CHECK(fi->tx_attr->size == 384 && fi->rx_attr->size == 384,
		      "list: default sizes %zu/%zu", fi->tx_attr->size,
		      fi->rx_attr->size);
		CHECK(fi->tx_attr->iov_limit == 4 && fi->rx_attr->iov_limit == 4,
		      "list: iov limits");
		CHECK(fi->tx_attr->inject_size <= 256, "list: inject %zu",
		      fi->tx_attr->inject_size);
		/* Entries of one device come together. */
		if (prev_dom && strcmp(prev_dom, fi->domain_attr->name)) {
			for (struct fi_info *g = fi; g; g = g->next)
				CHECK(strcmp(g->domain_attr->name, prev_dom),
				      "device %s split", prev_dom);
		}
		prev_dom = fi->domain_attr->name;
		if (addr0 && is_addr(fi->src_addr, fi->src_addrlen, addr0, 0)) {
			found0 = 1;
			if (dev0)
				CHECK(!strcmp(fi->domain_attr->name, dev0),
				      "%s on %s, expected %s", addr0,
				      fi->domain_attr->name, dev0);
		}
	}
	if (addr0)
		CHECK(found0, "no entry for %s", addr0);
	printf("list: %d entries, first:\n%s", n,
	       info ? fi_tostr(info, FI_TYPE_INFO) : "(none)\n");
	fi_freeinfo(info);

	/* NULL hints: everything the provider has. */
	CHECK(fi_getinfo(V117, NULL, NULL, 0, NULL, &info) == 0 &&
	      count_verbs(info) == n, "NULL hints: %d", count_verbs(info));
	ndgram = 0;
	for (fi = info; fi; fi = fi->next) {
		if (strcmp(fi->fabric_attr->prov_name, "verbs"))
			continue;
		if (fi->ep_attr->type == FI_EP_DGRAM) {
			ndgram++;
			continue;
		}
		check_entry(fi, "null hints");
		CHECK(fi->caps & FI_ATOMIC, "all caps");
	}
	/* one FI_EP_DGRAM entry per (IB or RoCE) device, as upstream */
	CHECK(ndgram == ndev, "NULL hints: %d FI_EP_DGRAM entries for %d devices", ndgram, ndev);
	fi_freeinfo(info);
	fi_freeinfo(h);
}

static void test_rx_cq_data(void)
{
	struct fi_info *h = hints_rma(), *info = NULL;

	/* Not accepting FI_RX_CQ_DATA: no remote CQ data then. */
	h->mode = FI_CONTEXT;
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0, "no RX_CQ_DATA");
	for (struct fi_info *fi = info; fi; fi = fi->next)
		CHECK(fi->domain_attr->cq_data_size == 0 &&
		      !(fi->mode & FI_RX_CQ_DATA) &&
		      !(fi->rx_attr->mode & FI_RX_CQ_DATA), "no cq data");
	fi_freeinfo(info);

	h->domain_attr->cq_data_size = 4;
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == -FI_ENODATA,
	      "cq data without the mode");
	/* Accepting it through rx_attr->mode only is enough. */
	h->rx_attr->mode = FI_RX_CQ_DATA;
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0, "rx mode");
	for (struct fi_info *fi = info; fi; fi = fi->next)
		CHECK(fi->domain_attr->cq_data_size == 4 &&
		      (fi->rx_attr->mode & FI_RX_CQ_DATA) &&
		      !(fi->mode & FI_RX_CQ_DATA), "rx mode only");
	fi_freeinfo(info);
	fi_freeinfo(h);
}

static void test_addresses(void)
{
	struct fi_info *h = hints_rma(), *info = NULL;
	struct sockaddr_in sin;
	char node[128];
	int ndevs_seen;

	if (!addr0) {
		printf("note: FD_RXE_ADDR0 unset, address checks skipped\n");
		fi_freeinfo(h);
		return;
	}

	/* Passive: node/service are the local address. */
	CHECK(fi_getinfo(V117, addr0, "7471", FI_SOURCE | FI_NUMERICHOST, h,
			 &info) == 0 && count(info) == 1, "passive");
	if (info) {
		check_entry(info, "passive");
		CHECK(is_addr(info->src_addr, info->src_addrlen, addr0, 7471),
		      "passive src");
		CHECK(!info->dest_addr && !info->dest_addrlen, "passive dest");
		if (dev0)
			CHECK(!strcmp(info->domain_attr->name, dev0),
			      "passive device %s", info->domain_attr->name);
	}
	fi_freeinfo(info);

	/* Active: node/service are the peer. */
	CHECK(fi_getinfo(V117, addr0, "7471", FI_NUMERICHOST, h, &info) == 0 &&
	      count(info) == 1, "active");
	if (info) {
		check_entry(info, "active");
		CHECK(is_addr(info->dest_addr, info->dest_addrlen, addr0, 7471),
		      "active dest");
		CHECK(info->src_addr && port_of(info->src_addr) == 0,
		      "active src");
		if (dev0)
			CHECK(!strcmp(info->domain_attr->name, dev0),
			      "active device %s", info->domain_attr->name);
	}
	fi_freeinfo(info);

	/* Node as an FI_ADDR_STR address. */
	snprintf(node, sizeof(node), "fi_sockaddr_in://%s:7472", addr0);
	CHECK(fi_getinfo(V117, node, NULL, FI_SOURCE, h, &info) == 0 &&
	      info && is_addr(info->src_addr, info->src_addrlen, addr0, 7472),
	      "FI_ADDR_STR node");
	fi_freeinfo(info);
	CHECK(fi_getinfo(V117, node, "1", FI_SOURCE, h, &info) == -FI_ENODATA,
	      "FI_ADDR_STR node with a service");

	/* Addresses given only in the hints. */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	inet_pton(AF_INET, addr0, &sin.sin_addr);
	h->src_addr = &sin;
	h->src_addrlen = sizeof(sin);
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0 &&
	      count(info) == 1 && is_addr(info->src_addr, info->src_addrlen,
					  addr0, 0), "hints src_addr");
	if (info && dev0)
		CHECK(!strcmp(info->domain_attr->name, dev0), "hints src dev");
	fi_freeinfo(info);
	h->src_addr = NULL;
	h->src_addrlen = 0;
	sin.sin_port = htons(7473);
	h->dest_addr = &sin;
	h->dest_addrlen = sizeof(sin);
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0 &&
	      count(info) == 1 && is_addr(info->dest_addr, info->dest_addrlen,
					  addr0, 7473) && info->src_addr,
	      "hints dest_addr");
	fi_freeinfo(info);
	h->dest_addr = NULL;
	h->dest_addrlen = 0;

	/* A bare service is a port to listen on, on every device. */
	CHECK(fi_getinfo(V117, NULL, "7474", FI_SOURCE, h, &info) == 0,
	      "wildcard");
	ndevs_seen = count(info);
	CHECK(ndevs_seen == ndev, "one per device: %d of %d", ndevs_seen, ndev);
	for (struct fi_info *fi = info; fi; fi = fi->next)
		CHECK(fi->src_addr && is_wildcard(fi->src_addr) &&
		      port_of(fi->src_addr) == 7474 && !fi->dest_addr,
		      "wildcard src");
	fi_freeinfo(info);
	CHECK(fi_getinfo(V117, NULL, "7474", 0, h, &info) == 0 &&
	      count(info) == ndevs_seen, "service only, no FI_SOURCE");
	fi_freeinfo(info);

	/* Family and name restrictions. */
	h->addr_format = FI_SOCKADDR_IN6;
	CHECK(fi_getinfo(V117, addr0, "7471", FI_NUMERICHOST, h, &info) ==
	      -FI_ENODATA, "IPv6 asked, IPv4 node");
	h->addr_format = FI_SOCKADDR_IN;
	CHECK(fi_getinfo(V117, addr0, "7471", FI_NUMERICHOST, h, &info) == 0 &&
	      info && info->addr_format == FI_SOCKADDR_IN, "IPv4 asked");
	fi_freeinfo(info);
	h->addr_format = FI_FORMAT_UNSPEC;
	CHECK(fi_getinfo(V117, "localhost", "7471", FI_NUMERICHOST, h, &info) ==
	      -FI_ENODATA, "FI_NUMERICHOST with a name");
	/* TEST-NET-2: no route, so no device. */
	CHECK(fi_getinfo(V117, "198.51.100.1", "7471", FI_NUMERICHOST, h,
			 &info) == -FI_ENODATA, "unroutable peer");
	fi_freeinfo(h);
}

static void test_hints(void)
{
	struct fi_info *h = hints_rma(), *info = NULL;
	int all;

	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0, "base");
	all = count(info);
	fi_freeinfo(info);

	if (dev0) {
		h->domain_attr->name = strdup(dev0);
		CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0, "by name");
		for (struct fi_info *fi = info; fi; fi = fi->next)
			CHECK(!strcmp(fi->domain_attr->name, dev0), "name kept");
		CHECK(count(info) <= all, "subset");
		fi_freeinfo(info);
		free(h->domain_attr->name);
	}
	h->domain_attr->name = strdup("nope0");
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == -FI_ENODATA,
	      "unknown domain");
	free(h->domain_attr->name);
	h->domain_attr->name = NULL;

	h->tx_attr->size = 100;
	h->tx_attr->inject_size = 16;
	h->rx_attr->iov_limit = 2;
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0 && info &&
	      info->tx_attr->size == 100 && info->tx_attr->inject_size == 16 &&
	      info->rx_attr->iov_limit == 2 && info->rx_attr->size == 384,
	      "hint sizes");
	fi_freeinfo(info);
	h->tx_attr->size = 1U << 30;
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == -FI_ENODATA,
	      "too deep");
	h->tx_attr->size = 0;
	h->tx_attr->inject_size = 1U << 20;
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == -FI_ENODATA,
	      "inject too big");
	h->tx_attr->inject_size = 0;
	h->rx_attr->iov_limit = 0;

	h->ep_attr->type = FI_EP_RDM;
#if FD_HAVE_RDM
	/* served by the RDM layer over verbs, under its own name */
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0 && info &&
	      info->ep_attr->type == FI_EP_RDM &&
	      !strcmp(info->fabric_attr->prov_name, "verbs;ofi_rxm"), "RDM");
	fi_freeinfo(info);
#else
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == -FI_ENODATA, "RDM");
#endif
	h->ep_attr->type = FI_EP_UNSPEC;
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0 &&
	      count_type(info, FI_EP_MSG) == all && info->ep_attr->type == FI_EP_MSG &&
	      msg_first(info), "UNSPEC");
#if FD_HAVE_RDM
	/* no type named: the RDM layer's entries follow the MSG ones */
	CHECK(count_type(info, FI_EP_RDM) > 0, "UNSPEC lists RDM");
#endif
	fi_freeinfo(info);
	h->ep_attr->type = FI_EP_MSG;

	h->caps = FI_TAGGED;
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == -FI_ENODATA,
	      "tagged");
	h->ep_attr->type = FI_EP_UNSPEC;
#if FD_HAVE_RDM
	/* a tagged program that names no type finds RDM only */
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0 &&
	      count_type(info, FI_EP_RDM) == count(info), "tagged, UNSPEC");
	fi_freeinfo(info);
#else
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == -FI_ENODATA,
	      "tagged, UNSPEC");
#endif
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED;
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0 && info &&
	      info->domain_attr->mr_mode == (FI_MR_LOCAL | FI_MR_ALLOCATED) &&
	      !(info->caps & FI_RMA), "messages only");
	fi_freeinfo(info);

	CHECK(fi_getinfo(V117, NULL, NULL, FI_PROV_ATTR_ONLY, NULL, &info) ==
	      0 && count_verbs(info) == 1, "attr only");
	fi_freeinfo(info);
	fi_freeinfo(h);
}

/*
 * The threading levels each build serves (docs/fi_direct_verbs.7.md,
 * "Threading"): with no lock on the inline path (direct, domain threading)
 * DOMAIN and COMPLETION; with locks compiled in (threading=safe) or
 * chosen at open time (the OFF build's locked ops tables) every level.
 * A served level comes back as asked and opens a domain and a CQ that
 * reads; in the OFF build ENDPOINT and up get the locked CQ table and
 * DOMAIN/COMPLETION the lock-free one. An unserved level finds nothing,
 * and fi_domain refuses an info that claims it.
 */
#if FDV_THREAD_SAFE || FDV_OPS_LOCKED
#define STRONGEST 5
#else
#define STRONGEST 2
#endif

static void test_threading(void)
{
	static const struct {
		enum fi_threading level;
		int strength;
		const char *name;
	} levels[] = {
		{ FI_THREAD_DOMAIN, 1, "FI_THREAD_DOMAIN" },
		{ FI_THREAD_COMPLETION, 2, "FI_THREAD_COMPLETION" },
		{ FI_THREAD_ENDPOINT, 3, "FI_THREAD_ENDPOINT" },
		{ FI_THREAD_FID, 4, "FI_THREAD_FID" },
		{ FI_THREAD_SAFE, 5, "FI_THREAD_SAFE" },
	};
	struct fi_ops_cq *lockfree_ops = NULL;
	struct fi_info *h = hints_rma(), *info = NULL, *served = NULL;

	/* Nobody asking: the cheapest level the build has. */
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0 && info,
	      "threading unspecified");
	for (struct fi_info *fi = info; fi; fi = fi->next)
		CHECK(fi->domain_attr->threading ==
		      (FDV_THREAD_SAFE ? FI_THREAD_SAFE : FI_THREAD_DOMAIN),
		      "unspecified: threading %d", fi->domain_attr->threading);
	if (info)
		served = fi_dupinfo(info);
	fi_freeinfo(info);
	info = NULL;

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		struct fid_fabric *fab = NULL;
		struct fid_domain *dom = NULL;
		struct fid_cq *cq = NULL;
		struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
		struct fi_cq_entry e;
		int rc;

		h->domain_attr->threading = levels[i].level;
		rc = fi_getinfo(V117, NULL, NULL, 0, h, &info);
		if (levels[i].strength > STRONGEST) {
			CHECK(rc == -FI_ENODATA, "%s not served, got %d",
			      levels[i].name, rc);
			fi_freeinfo(info);
			info = NULL;
			if (served) {
				served->domain_attr->threading = levels[i].level;
				CHECK(fi_fabric(served->fabric_attr, &fab, NULL) == 0,
				      "fabric");
				if (fab) {
					rc = fi_domain(fab, served, &dom, NULL);
					CHECK(rc == -FI_ENODATA,
					      "fi_domain at %s: %d", levels[i].name, rc);
					if (!rc)
						fi_close(&dom->fid);
					fi_close(&fab->fid);
				}
			}
			continue;
		}
		CHECK(rc == 0 && info, "%s served: %d", levels[i].name, rc);
		for (struct fi_info *fi = info; fi; fi = fi->next)
			CHECK(fi->domain_attr->threading == levels[i].level,
			      "%s: came back as %d", levels[i].name,
			      fi->domain_attr->threading);
		if (!info)
			continue;
		CHECK(fi_fabric(info->fabric_attr, &fab, NULL) == 0, "fabric");
		if (fab)
			CHECK(fi_domain(fab, info, &dom, NULL) == 0,
			      "domain at %s", levels[i].name);
		if (dom)
			CHECK(fi_cq_open(dom, &cq_attr, &cq, NULL) == 0, "cq");
		if (cq) {
			CHECK(fi_cq_read(cq, &e, 1) == -FI_EAGAIN,
			      "empty cq at %s", levels[i].name);
			if (!lockfree_ops)
				lockfree_ops = cq->ops;	/* FI_THREAD_DOMAIN's */
#if FDV_OPS_LOCKED
			CHECK((cq->ops == lockfree_ops) == (levels[i].strength <= 2),
			      "%s: %s ops table", levels[i].name,
			      levels[i].strength <= 2 ? "lock-free" : "locked");
#else
			CHECK(cq->ops == lockfree_ops, "%s: one ops table",
			      levels[i].name);
#endif
			fi_close(&cq->fid);
		}
		if (dom)
			CHECK(fi_close(&dom->fid) == 0, "domain close");
		if (fab)
			fi_close(&fab->fid);
		fi_freeinfo(info);
		info = NULL;
	}
	fi_freeinfo(served);
	fi_freeinfo(h);
}

static void test_env(void)
{
	struct fi_info *h = hints_rma(), *info = NULL;

	setenv("FI_VERBS_TX_SIZE", "100", 1);
	setenv("FI_VERBS_RX_IOV_LIMIT", "1", 1);
	setenv("FI_VERBS_INLINE_SIZE", "32", 1);
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0 && info &&
	      info->tx_attr->size == 100 && info->rx_attr->iov_limit == 1 &&
	      info->tx_attr->inject_size <= 32, "FI_VERBS_* defaults");
	fi_freeinfo(info);
	setenv("FI_VERBS_TX_SIZE", "-5", 1);
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0 && info &&
	      info->tx_attr->size == 384, "bad value ignored");
	fi_freeinfo(info);
	unsetenv("FI_VERBS_TX_SIZE");
	unsetenv("FI_VERBS_RX_IOV_LIMIT");
	unsetenv("FI_VERBS_INLINE_SIZE");

	setenv("FI_VERBS_DEVICE_NAME", "nope", 1);
	CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == -FI_ENODATA,
	      "FI_VERBS_DEVICE_NAME filters");
	unsetenv("FI_VERBS_DEVICE_NAME");

	if (netdev0 && dev0) {
		setenv("FI_VERBS_IFACE", netdev0, 1);
		CHECK(fi_getinfo(V117, NULL, NULL, 0, h, &info) == 0, "iface");
		for (struct fi_info *fi = info; fi; fi = fi->next)
			CHECK(!strcmp(fi->domain_attr->name, dev0),
			      "FI_VERBS_IFACE=%s gave %s", netdev0,
			      fi->domain_attr->name);
		fi_freeinfo(info);
		unsetenv("FI_VERBS_IFACE");
	}
	fi_freeinfo(h);
}

/* Which side a capability belongs to (fi_endpoint(3): the transmit and
 * receive context attributes), as fabtests' getinfo_test checks it. */
#define TX_SIDE (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_MULTICAST | \
		 FI_NAMED_RX_CTX | FI_HMEM | FI_COLLECTIVE | FI_SEND | FI_READ | \
		 FI_WRITE | FI_TRIGGER | FI_FENCE | FI_RMA_PMEM)
#define RX_SIDE (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_DIRECTED_RECV | \
		 FI_VARIABLE_MSG | FI_HMEM | FI_COLLECTIVE | FI_RECV | \
		 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RMA_PMEM | FI_SOURCE | \
		 FI_SOURCE_ERR | FI_RMA_EVENT | FI_MULTI_RECV | FI_TRIGGER)
/* The primary capabilities an RDM request can combine. */
static const uint64_t rdm_primary[] = {
	FI_MSG, FI_TAGGED, FI_RMA, FI_ATOMIC, FI_DIRECTED_RECV,
	FI_NAMED_RX_CTX, FI_COLLECTIVE,
};
#define N_RDM_PRIMARY (sizeof(rdm_primary) / sizeof(rdm_primary[0]))

static void check_sides(const struct fi_info *fi, uint64_t asked)
{
	const char *what = fi->fabric_attr->prov_name;

	CHECK(fi->src_addr && fi->src_addrlen, "%s %s: no src_addr", what,
		   fi->domain_attr->name);
	CHECK(!(fi->tx_attr->caps & ~(uint64_t)TX_SIDE), "%s: tx_attr->caps %#llx "
		   "holds receive-side bits", what,
		   (unsigned long long)(fi->tx_attr->caps & ~(uint64_t)TX_SIDE));
	CHECK(!(fi->rx_attr->caps & ~(uint64_t)RX_SIDE), "%s: rx_attr->caps %#llx "
		   "holds transmit-side bits", what,
		   (unsigned long long)(fi->rx_attr->caps & ~(uint64_t)RX_SIDE));
	CHECK(!(fi->rx_attr->caps & ~fi->caps), "%s: rx_attr->caps beyond caps", what);
	CHECK((fi->caps & asked) == asked, "%s: caps %#llx lack asked %#llx", what,
		   (unsigned long long)fi->caps, (unsigned long long)asked);
	CHECK((fi->tx_attr->caps & asked & TX_SIDE) == (asked & TX_SIDE) &&
		   (fi->rx_attr->caps & asked & RX_SIDE) == (asked & RX_SIDE),
		   "%s: asked %#llx, tx_attr %#llx, rx_attr %#llx", what,
		   (unsigned long long)asked, (unsigned long long)fi->tx_attr->caps,
		   (unsigned long long)fi->rx_attr->caps);
}

/* Each capability on its own side, every entry with a source address,
 * as fabtests' getinfo_test (no_hints*, caps1, caps2) checks them: with
 * no hints (every endpoint type and layer), and for RDM every combination
 * of its primary capabilities. Before: RDM put FI_NAMED_RX_CTX on the
 * receive side and FI_COLLECTIVE only on the transmit side, and DGRAM
 * entries had no src_addr. */
static void test_caps_sides(void)
{
	struct fi_info *info = NULL, *fi;
	int n = 0, served = 0;

	CHECK_EQ(fi_getinfo(V117, NULL, NULL, 0, NULL, &info), 0);
	for (fi = info; fi; fi = fi->next, n++)
		check_sides(fi, 0);
	fi_freeinfo(info);
	for (unsigned m = 1; m < 1u << N_RDM_PRIMARY; m++) {
		struct fi_info *h = fi_allocinfo();
		uint64_t asked = 0;
		int ret;

		for (unsigned b = 0; b < N_RDM_PRIMARY; b++)
			if (m & (1u << b))
				asked |= rdm_primary[b];
		h->ep_attr->type = FI_EP_RDM;
		h->caps = asked;
		h->mode = ~0ULL;
		h->domain_attr->mr_mode = MR_NEEDED;
		info = NULL;
		ret = fi_getinfo(V117, NULL, NULL, 0, h, &info);
		CHECK(ret == 0 || ret == -FI_ENODATA, "RDM caps %#llx: %d",
			   (unsigned long long)asked, ret);
		for (fi = info; fi; fi = fi->next)
			check_sides(fi, asked);
		served += ret == 0;
		fi_freeinfo(info);
		fi_freeinfo(h);
	}
	/* everything but a 64-bit tag format with collectives is served */
	CHECK(served == (1 << N_RDM_PRIMARY) - 1, "RDM: %d of %d capability "
		   "combinations served", served, (1 << N_RDM_PRIMARY) - 1);
	printf("caps sides: %d entries without hints, %d RDM combinations\n", n, served);
}

int main(void)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && ndev < 16; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct ibv_port_attr pa;
		int active = 0;

		if (!ctx)
			continue;
		for (int p = 1; p <= 2; p++)
			if (!ibv_query_port(ctx, (uint8_t)p, &pa) &&
			    pa.state == IBV_PORT_ACTIVE)
				active = 1;
		ibv_close_device(ctx);
		if (active)
			snprintf(devnames[ndev++], sizeof(devnames[0]), "%s",
				 ibv_get_device_name(list[i]));
	}
	if (list)
		ibv_free_device_list(list);
	if (!ndev) {
		printf("SKIP: no verbs device with an active port\n");
		return 77;
	}
	addr0 = getenv("FD_RXE_ADDR0");
	dev0 = getenv("FD_RXE_DEV0");
	netdev0 = getenv("FD_RXE_NETDEV0");

	test_list();
	test_rx_cq_data();
	test_addresses();
	test_hints();
	test_threading();
	test_env();
	test_caps_sides();

	if (fdt_check_failures) {
		printf("test_getinfo: %d fdt_check_failures\n", fdt_check_failures);
		return 1;
	}
	printf("test_getinfo: ok (%d device%s)\n", ndev, ndev > 1 ? "s" : "");
	return 0;
}
