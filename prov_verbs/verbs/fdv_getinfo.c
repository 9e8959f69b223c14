/*
 * Verbs provider: fi_getinfo for FI_EP_MSG.
 *
 * For each device discovery found (fdv_device.c) an fi_info template is
 * built once, holding the device's maxima. fi_getinfo matches hints
 * against the templates with the core's fd_info_check, narrows a copy
 * with fd_info_narrow, then fills in the provider defaults (FI_VERBS_*,
 * fdv_param.c) and the addresses.
 *
 * Addresses decide the device: rdma_cm is asked which device a local
 * address is bound to (rdma_bind_addr) or which device routes to a peer
 * (rdma_resolve_addr), exactly as the connection will later be made.
 *
 * Addressing, as fi_getinfo(3) describes:
 *  - node/service (+ FI_NUMERICHOST) go through rdma_getaddrinfo; node may
 *    also be an FI_ADDR_STR sockaddr ("fi_sockaddr_in://10.0.0.1:7471").
 *  - Without FI_SOURCE they name the peer: the route to it picks the
 *    device; entries carry dest_addr and the local src_addr (port 0 unless
 *    hints->src_addr gave one).  A service without node and without any
 *    destination is taken as a local port to listen on.
 *  - With FI_SOURCE they name the local address (passive side): entries
 *    carry src_addr only (plus hints->dest_addr if given).  A wildcard
 *    address gives one entry per device, each with the wildcard address.
 *  - With neither, hints->src_addr / hints->dest_addr are used the same
 *    way, and with no address at all there is one entry per IP address of
 *    each device (src_addr = that address, port 0), IPv4 first.
 * Returns one entry per matching device and address, best first, or
 * -FI_ENODATA.  FI_PROV_ATTR_ONLY returns exactly one generic entry.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define FD_LOG_PROV "verbs"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <fdv/fdv_config.h>
#include <fdv/fdv_ep.h>

#include "fd_attr.h"
#include "fd_core.h"
#include "fd_util.h"
#include "fdv_device.h"
#include "fdv_layer.h"
#include "fdv_param.h"
#include "fdv_threading.h"

#ifndef FDV_THREAD_SAFE
#error "fdv_config.h must define FDV_THREAD_SAFE"
#endif

/* What an MSG endpoint over an RC QP can do. FI_FENCE is a transmit
 * capability (IBV_SEND_FENCE on the fenced request). */
#define FDV_TX_CAPS	(FI_MSG | FI_SEND | FI_RMA | FI_READ | FI_WRITE | \
			 FI_ATOMIC | FI_FENCE)
#define FDV_RX_CAPS	(FI_MSG | FI_RECV | FI_RMA | FI_REMOTE_READ | \
			 FI_REMOTE_WRITE | FI_ATOMIC)
#define FDV_DOMAIN_CAPS	(FI_LOCAL_COMM | FI_REMOTE_COMM)
#define FDV_CAPS	(FDV_TX_CAPS | FDV_RX_CAPS | FDV_DOMAIN_CAPS)

/* An RC QP executes in order except that a read may pass a write; the
 * RMA and atomic variants of the same pairs hold for the same reason. */
#define FDV_MSG_ORDER	(FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_RAS |	\
			 FI_ORDER_WAW | FI_ORDER_WAS | FI_ORDER_SAW |	\
			 FI_ORDER_SAS | FI_ORDER_RMA_RAR |		\
			 FI_ORDER_RMA_RAW | FI_ORDER_RMA_WAW |		\
			 FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW |	\
			 FI_ORDER_ATOMIC_WAW)

/* iWARP has no immediate data, so no transmit-complete via it either. */
#define FDV_TX_OP_FLAGS_IWARP (FI_INJECT | FI_INJECT_COMPLETE | FI_COMPLETION)
#define FDV_TX_OP_FLAGS	(FDV_TX_OP_FLAGS_IWARP | FI_TRANSMIT_COMPLETE)

/* Registration as verbs does it: local buffers need an lkey, peers use
 * our virtual addresses and the rkeys the device picks.  FI_MR_BASIC
 * here means "legacy basic registration accepted". */
#define FDV_MR_MODE	(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
			 FI_MR_PROV_KEY | FI_MR_BASIC)

/* Names of the fabrics it reports. */
#define FDV_IB_FABRIC_PREFIX	"IB-0x"		/* + GID subnet prefix */
#define FDV_IWARP_FABRIC	"Ethernet-iWARP"

#define FDV_MAX_TX_RX_CTX	1024
#define FDV_MAX_ERR_DATA	255	/* rdma_cm private data fits in it */

#if FDV_THREAD_SAFE
#define FDV_THREADING FI_THREAD_SAFE
#else
#define FDV_THREADING FI_THREAD_DOMAIN
#endif


/* ------------------------------------------------------------------------
 * Templates
 * ---------------------------------------------------------------------- */


/* ------------------------------------------------------------------------
 * Templates
 * ---------------------------------------------------------------------- */

/* The parts of a template that do not depend on the device; what
 * differs on iWARP is fdv_iwarp_attrs. */
static const struct fd_attrs fdv_common_attrs = {
	.prov_name = FDV_PROV_NAME,
	FD_ATTR(caps, FDV_CAPS),
	/* A write with immediate data consumes a receive at the target. */
	FD_ATTR(mode, FI_RX_CQ_DATA),
	FD_ATTR(addr_format, FI_SOCKADDR),

	FD_ATTR(tx_caps, FDV_TX_CAPS),
	FD_ATTR(tx_mode, 0),
	FD_ATTR(tx_op_flags, FDV_TX_OP_FLAGS),
	FD_ATTR(tx_msg_order, FDV_MSG_ORDER),
	FD_ATTR(tx_comp_order, FI_ORDER_STRICT),
	/* One remote region per RMA: a work request has one rkey. */
	FD_ATTR(tx_rma_iov_limit, 1),

	FD_ATTR(rx_caps, FDV_RX_CAPS),
	FD_ATTR(rx_mode, FI_RX_CQ_DATA),
	FD_ATTR(rx_op_flags, FI_COMPLETION),
	FD_ATTR(rx_msg_order, FDV_MSG_ORDER),
	FD_ATTR(rx_comp_order, FI_ORDER_STRICT | FI_ORDER_DATA),

	FD_ATTR(ep_type, FI_EP_MSG),
	FD_ATTR(ep_protocol, FI_PROTO_RDMA_CM_IB_RC),
	FD_ATTR(ep_protocol_version, 1),
	FD_ATTR(ep_tx_ctx_cnt, 1),
	FD_ATTR(ep_rx_ctx_cnt, 1),

	FD_ATTR(dom_threading, FDV_THREADING),
	FD_ATTR(dom_control_progress, FI_PROGRESS_AUTO),
	FD_ATTR(dom_data_progress, FI_PROGRESS_AUTO),
	FD_ATTR(dom_resource_mgmt, FI_RM_ENABLED),
	FD_ATTR(dom_av_type, FI_AV_UNSPEC),
	FD_ATTR(dom_mr_mode, FDV_MR_MODE),
	FD_ATTR(dom_mr_key_size, sizeof(uint32_t)),	/* rkey */
	FD_ATTR(dom_cq_data_size, sizeof(uint32_t)),
	FD_ATTR(dom_max_ep_tx_ctx, 1),
	FD_ATTR(dom_max_ep_rx_ctx, 1),
	FD_ATTR(dom_mr_iov_limit, 1),
	FD_ATTR(dom_caps, FDV_DOMAIN_CAPS),
	FD_ATTR(dom_max_err_data, FDV_MAX_ERR_DATA),

	FD_ATTR(fab_prov_version, FD_PROV_VERSION),
};

/* iWARP has no immediate data: no receive consumed by a write, no
 * transmit-complete through it, no remote CQ data. */
static const struct fd_attrs fdv_iwarp_attrs = {
	FD_ATTR(mode, 0),
	FD_ATTR(rx_mode, 0),
	FD_ATTR(tx_op_flags, FDV_TX_OP_FLAGS_IWARP),
	FD_ATTR(ep_protocol, FI_PROTO_IWARP),
	FD_ATTR(dom_cq_data_size, 0),
};

static int fdv_fill_common(struct fi_info *fi, int iwarp)
{
	if (fd_attrs_apply(fi, &fdv_common_attrs))
		return -FI_ENOMEM;
	return iwarp ? fd_attrs_apply(fi, &fdv_iwarp_attrs) : 0;
}


/* Data rate of one lane in bit/s (after line coding), by IB speed code. */
static uint64_t fdv_lane_rate(uint8_t speed)
{
	switch (speed) {
	case 1:		return 2000000000ULL;	/* SDR */
	case 2:		return 4000000000ULL;	/* DDR */
	case 4:		return 8000000000ULL;	/* QDR */
	case 8:		return 10000000000ULL;	/* FDR10 */
	case 16:	return 13636363636ULL;	/* FDR */
	case 32:	return 25000000000ULL;	/* EDR */
	case 64:	return 50000000000ULL;	/* HDR */
	case 128:	return 100000000000ULL;	/* NDR */
	default:	return 0;
	}
}

static unsigned int fdv_lanes(uint8_t width)
{
	switch (width) {
	case 1:		return 1;
	case 16:	return 2;
	case 2:		return 4;
	case 4:		return 8;
	case 8:		return 12;
	default:	return 0;
	}
}

static size_t fdv_mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ?
	       (size_t)128 << mtu : 0;
}

/* The PCI function behind a device, from its sysfs link; rxe has none. */
static void fdv_pci_bus(const char *name, struct fi_bus_attr *bus)
{
	char path[256], target[256], *base;
	unsigned int dom, b, d, f;
	ssize_t n;

	bus->bus_type = FI_BUS_UNKNOWN;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", name);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (sscanf(base, "%x:%x:%x.%x", &dom, &b, &d, &f) != 4)
		return;
	bus->bus_type = FI_BUS_PCI;
	bus->attr.pci.domain_id = (uint16_t)dom;
	bus->attr.pci.bus_id = (uint8_t)b;
	bus->attr.pci.device_id = (uint8_t)d;
	bus->attr.pci.function_id = (uint8_t)f;
}

/* fi_info->nic: what the device and its active port look like. */
static struct fid_nic *fdv_build_nic(const struct fdv_device_info *dev)
{
	const struct ibv_device_attr *da = &dev->attr;
	const struct ibv_port_attr *pa = &dev->port_attr;
	struct fid_nic *nic = fd_nic_alloc();
	struct fi_device_attr *d;
	int ok;

	if (!nic)
		return NULL;
	d = nic->device_attr;
	ok = asprintf(&d->device_id, "0x%04x", da->vendor_part_id) >= 0;
	if (!ok)
		d->device_id = NULL;
	if (asprintf(&d->vendor_id, "0x%04x", da->vendor_id) < 0) {
		d->vendor_id = NULL;
		ok = 0;
	}
	if (asprintf(&d->device_version, "%u", da->hw_ver) < 0) {
		d->device_version = NULL;
		ok = 0;
	}
	d->name = strdup(dev->name);
	d->firmware = strdup(da->fw_ver);
	nic->link_attr->network_type =
		strdup(dev->link_layer == IBV_LINK_LAYER_ETHERNET ?
		       "Ethernet" : "InfiniBand");
	if (!ok || !d->name || !d->firmware || !nic->link_attr->network_type) {
		nic->fid.ops->close(&nic->fid);
		return NULL;
	}
	nic->link_attr->mtu = fdv_mtu_bytes(pa->active_mtu);
	nic->link_attr->speed = (size_t)(fdv_lane_rate(pa->active_speed) *
					 fdv_lanes(pa->active_width));
	nic->link_attr->state = pa->state == IBV_PORT_ACTIVE ? FI_LINK_UP :
				FI_LINK_DOWN;
	fdv_pci_bus(dev->name, nic->bus_attr);
	return nic;
}

static struct fi_info *fdv_build_template(const struct fdv_device_info *dev)
{
	const struct ibv_device_attr *da = &dev->attr;
	int iwarp = dev->transport == IBV_TRANSPORT_IWARP;
	struct fi_info *fi;
	size_t max_ctx;
	char name[64];

	fi = fi_allocinfo();
	if (!fi)
		return NULL;
	if (fdv_fill_common(fi, iwarp))
		goto err;
	/* A device without verbs atomics offers no FI_ATOMIC at all. */
	if (da->atomic_cap == IBV_ATOMIC_NONE) {
		fi->caps &= ~(uint64_t)FI_ATOMIC;
		fi->tx_attr->caps &= ~(uint64_t)FI_ATOMIC;
		fi->rx_attr->caps &= ~(uint64_t)FI_ATOMIC;
	}

	fi->tx_attr->size = (size_t)da->max_qp_wr;
	/* The data path builds scatter lists on its stack, FDV_IOV_MAX long. */
	fi->tx_attr->iov_limit = (size_t)(da->max_sge < FDV_IOV_MAX ? da->max_sge : FDV_IOV_MAX);
	fi->tx_attr->inject_size = dev->max_inline;
	fi->rx_attr->size = (size_t)da->max_qp_wr;
	fi->rx_attr->iov_limit = (size_t)(da->max_sge < FDV_IOV_MAX ? da->max_sge : FDV_IOV_MAX);

	fi->ep_attr->max_msg_size = dev->port_attr.max_msg_sz;
	fi->ep_attr->max_order_raw_size = dev->port_attr.max_msg_sz;
	fi->ep_attr->max_order_waw_size = dev->port_attr.max_msg_sz;

	max_ctx = da->max_qp > 0 ? (size_t)da->max_qp : 0;
	fi->domain_attr->cq_cnt = da->max_cq > 0 ? (size_t)da->max_cq : 0;
	fi->domain_attr->ep_cnt = max_ctx;
	fi->domain_attr->tx_ctx_cnt = max_ctx < FDV_MAX_TX_RX_CTX ?
				      max_ctx : FDV_MAX_TX_RX_CTX;
	fi->domain_attr->rx_ctx_cnt = fi->domain_attr->tx_ctx_cnt;
	fi->domain_attr->mr_cnt = da->max_mr > 0 ? (size_t)da->max_mr : 0;
	/* One shared receive context per endpoint, over an SRQ. */
	fi->domain_attr->max_ep_srx_ctx = da->max_srq > 0 ? 1 : 0;

	fi->domain_attr->name = strdup(dev->name);
	if (iwarp)
		snprintf(name, sizeof(name), "%s", FDV_IWARP_FABRIC);
	else
		snprintf(name, sizeof(name), FDV_IB_FABRIC_PREFIX "%" PRIx64,
			 (uint64_t)be64toh(dev->gid.global.subnet_prefix));
	fi->fabric_attr->name = strdup(name);
	fi->nic = fdv_build_nic(dev);
	if (!fi->domain_attr->name || !fi->fabric_attr->name || !fi->nic)
		goto err;
	return fi;
err:
	fi_freeinfo(fi);
	return NULL;
}

/* The templates, one per device of fdv_devices_get, in its order; NULL
 * where one could not be built (out of memory): that device is skipped.
 * Built once, never rebuilt, like the device cache. */
static pthread_once_t fdv_templates_once = PTHREAD_ONCE_INIT;
static const struct fdv_device_info *fdv_devices;
static struct fi_info **fdv_templates;
static int fdv_ndevices;

static void fdv_templates_build(void)
{
	const struct fdv_device_info *devs;
	int n;

	devs = fdv_devices_get(&n);
	if (n <= 0)
		return;
	fdv_templates = calloc((size_t)n, sizeof(*fdv_templates));
	if (!fdv_templates)
		return;
	for (int i = 0; i < n; i++) {
		fdv_templates[i] = fdv_build_template(&devs[i]);
		if (fdv_templates[i])
			FD_INFO(FD_LOG_FABRIC, "device %s: fabric %s", devs[i].name,
				fdv_templates[i]->fabric_attr->name);
		else
			FD_WARN(FD_LOG_FABRIC, "device %s: no template, skipped",
				devs[i].name);
	}
	fdv_devices = devs;
	fdv_ndevices = n;
}

static void fdv_templates_init(void)
{
	pthread_once(&fdv_templates_once, fdv_templates_build);
}

/* dev is one of fdv_devices (fdv_device_lookup returns those). */
static const struct fi_info *fdv_template_of(const struct fdv_device_info *dev)
{
	return fdv_templates[dev - fdv_devices];
}

/* The FI_EP_MSG template of device i of fdv_devices_get, from which
 * fdv_dgram.c derives its FI_EP_DGRAM one; NULL when it has none. */
const struct fi_info *fdv_msg_template(int i, const struct fdv_device_info **dev)
{
	fdv_templates_init();
	if (i < 0 || i >= fdv_ndevices)
		return NULL;
	*dev = &fdv_devices[i];
	return fdv_templates[i];
}

#ifdef FDV_TEST_SEAMS
const struct fi_info *fdv_test_template(const char *domain_name)
{
	const struct fdv_device_info *dev = fdv_device_lookup(domain_name);

	fdv_templates_init();
	return dev && fdv_templates ? fdv_template_of(dev) : NULL;
}
#endif


/* ------------------------------------------------------------------------
 * Addresses
 * ---------------------------------------------------------------------- */

/* One (device, local address, peer address) combination to report. */
struct fdv_cand {
	const struct fdv_device_info	*dev;
	struct sockaddr_storage		src;
	struct sockaddr_storage		dst;
	socklen_t			srclen;
	socklen_t			dstlen;
};

struct fdv_cands {
	struct fdv_cand	*v;
	size_t		n, cap;
};

static struct fdv_cand *fdv_cand_add(struct fdv_cands *c)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		struct fdv_cand *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		c->v = v;
		c->cap = cap;
	}
	memset(&c->v[c->n], 0, sizeof(c->v[0]));
	return &c->v[c->n++];
}

static void fdv_set_port(struct sockaddr *sa, uint16_t port_be)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = port_be;
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = port_be;
}

static int fdv_is_wildcard(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
			&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return 0;
}

/* Copy an IP sockaddr given by the application, checking it is one. */
static int fdv_copy_sockaddr(const void *addr, size_t len,
			     struct sockaddr_storage *out, socklen_t *outlen)
{
	sa_family_t family;
	size_t need;

	if (!addr || len < sizeof(family))
		return -FI_EINVAL;
	memcpy(&family, addr, sizeof(family));
	if (family != AF_INET && family != AF_INET6)
		return -FI_EINVAL;
	need = family == AF_INET ? sizeof(struct sockaddr_in) :
				   sizeof(struct sockaddr_in6);
	if (len < need)
		return -FI_EINVAL;
	memset(out, 0, sizeof(*out));
	memcpy(out, addr, need);
	*outlen = (socklen_t)need;
	return 0;
}

static int fdv_family_of_format(uint32_t fmt)
{
	switch (fmt) {
	case FI_SOCKADDR_IN:
		return AF_INET;
	case FI_SOCKADDR_IN6:
		return AF_INET6;
	default:
		return AF_UNSPEC;
	}
}

/*
 * node/service -> one sockaddr: the local one (passive) or the peer's.
 * node may be an FI_ADDR_STR sockaddr, then service must be NULL.
 */
static int fdv_resolve(const char *node, const char *service, uint64_t flags,
		       int passive, int family, struct sockaddr_storage *out,
		       socklen_t *outlen)
{
	struct rdma_addrinfo hints, *res = NULL;
	int ret = -FI_ENODATA;

	if (node && !strncmp(node, "fi_sockaddr", 11)) {
		uint32_t fmt;
		size_t len;

		if (service) {
			FD_INFO(FD_LOG_CORE, "node %s is a full address: "
				"service %s not allowed", node, service);
			return -FI_EINVAL;
		}
		memset(out, 0, sizeof(*out));
		if (fd_str_to_sockaddr(node, &fmt, out, &len)) {
			FD_INFO(FD_LOG_CORE, "cannot parse address %s", node);
			return -FI_EINVAL;
		}
		if (family != AF_UNSPEC && out->ss_family != family)
			return -FI_ENODATA;
		*outlen = (socklen_t)len;
		return 0;
	}

	memset(&hints, 0, sizeof(hints));
	if (passive)
		hints.ai_flags |= RAI_PASSIVE;
	if (flags & FI_NUMERICHOST)
		hints.ai_flags |= RAI_NUMERICHOST;
	if (family != AF_UNSPEC) {
		hints.ai_family = family;
		hints.ai_flags |= RAI_FAMILY;
	}
	hints.ai_qp_type = IBV_QPT_RC;
	hints.ai_port_space = RDMA_PS_TCP;

	if (rdma_getaddrinfo(node, service, &hints, &res)) {
		FD_INFO(FD_LOG_CORE, "rdma_getaddrinfo(%s, %s): %s",
			node ? node : "NULL", service ? service : "NULL",
			strerror(errno));
		return -FI_ENODATA;
	}
	for (struct rdma_addrinfo *ai = res; ai; ai = ai->ai_next) {
		const struct sockaddr *sa = passive ? ai->ai_src_addr :
					    ai->ai_dst_addr;
		socklen_t len = passive ? ai->ai_src_len : ai->ai_dst_len;

		if (sa && !fdv_copy_sockaddr(sa, len, out, outlen)) {
			ret = 0;
			break;
		}
	}
	rdma_freeaddrinfo(res);
	return ret;
}

/* The device a local IP address belongs to, if any. */
static const struct fdv_device_info *fdv_dev_of_src(const struct sockaddr *sa)
{
	const struct fdv_device_info *dev = NULL;
	struct sockaddr_storage tmp;
	struct rdma_cm_id *id;

	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP))
		return NULL;
	/* Port 0: the asked port may already be taken by a listener. */
	memcpy(&tmp, sa, fd_sockaddr_len(sa));
	fdv_set_port((struct sockaddr *)&tmp, 0);
	if (!rdma_bind_addr(id, (struct sockaddr *)&tmp) && id->verbs)
		dev = fdv_device_lookup(ibv_get_device_name(id->verbs->device));
	rdma_destroy_id(id);
	return dev;
}

/* The device that routes to a peer, and the local address it uses. */
static const struct fdv_device_info *
fdv_dev_of_dst(const struct sockaddr *src, const struct sockaddr *dst,
	       struct sockaddr_storage *local, socklen_t *local_len)
{
	const struct fdv_device_info *dev = NULL;
	struct sockaddr_storage s;
	struct rdma_cm_id *id;
	struct sockaddr *la;

	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP))
		return NULL;
	if (src) {
		memcpy(&s, src, fd_sockaddr_len(src));
		fdv_set_port((struct sockaddr *)&s, 0);
	}
	/* No event channel: the call waits for the resolution itself. */
	if (rdma_resolve_addr(id, src ? (struct sockaddr *)&s : NULL,
			      (struct sockaddr *)dst, FDV_RESOLVE_TIMEOUT_MS)) {
		FD_INFO(FD_LOG_CORE, "no RDMA route to the destination: %s",
			strerror(errno));
		goto out;
	}
	if (!id->verbs)
		goto out;
	dev = fdv_device_lookup(ibv_get_device_name(id->verbs->device));
	la = rdma_get_local_addr(id);
	if (dev && la && !fdv_copy_sockaddr(la, fd_sockaddr_len(la), local,
					    local_len))
		fdv_set_port((struct sockaddr *)local, 0);
	else
		*local_len = 0;
out:
	rdma_destroy_id(id);
	return dev;
}

static int fdv_iface_selected(const char *ifname, const char *want,
			      int exact_exists)
{
	if (!want)
		return 1;
	if (exact_exists)
		return !strcmp(ifname, want);
	return !strncmp(ifname, want, strlen(want));
}

/* Rank for ordering: IPv4, then global IPv6, then link-local IPv6. */
static int fdv_addr_rank(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return 0;
	if (IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)sa)->sin6_addr))
		return 2;
	return 1;
}

/* Every IP address of every device: device order first, then IPv4,
 * global IPv6, link-local IPv6, each in interface order. */
static int fdv_list_addrs(const struct fdv_params *prm, int family,
			  struct fdv_cands *out)
{
	struct fdv_cands found = { 0 };
	struct ifaddrs *ifa_list, *ifa;
	int exact = 0, ret = 0;

	if (getifaddrs(&ifa_list))
		return 0;
	if (prm->iface)
		for (ifa = ifa_list; ifa && !exact; ifa = ifa->ifa_next)
			exact = !strcmp(ifa->ifa_name, prm->iface);

	/* One rdma_cm lookup per address... */
	for (ifa = ifa_list; ifa; ifa = ifa->ifa_next) {
		const struct sockaddr *sa = ifa->ifa_addr;
		const struct fdv_device_info *dev;
		struct fdv_cand *c;

		if (!sa || (sa->sa_family != AF_INET &&
			    sa->sa_family != AF_INET6) ||
		    (family != AF_UNSPEC && sa->sa_family != family) ||
		    !(ifa->ifa_flags & IFF_UP) ||
		    (ifa->ifa_flags & IFF_LOOPBACK) ||
		    !fdv_iface_selected(ifa->ifa_name, prm->iface, exact))
			continue;
		dev = fdv_dev_of_src(sa);
		if (!dev)
			continue;
		c = fdv_cand_add(&found);
		if (!c) {
			ret = -FI_ENOMEM;
			goto out;
		}
		c->dev = dev;
		fdv_copy_sockaddr(sa, fd_sockaddr_len(sa), &c->src, &c->srclen);
		fdv_set_port((struct sockaddr *)&c->src, 0);
	}

	/* ... then put them in order. */
	for (int d = 0; d < fdv_ndevices; d++) {
		for (int rank = 0; rank < 3; rank++) {
			for (size_t i = 0; i < found.n; i++) {
				struct fdv_cand *c;

				if (found.v[i].dev != &fdv_devices[d] ||
				    fdv_addr_rank((struct sockaddr *)
						  &found.v[i].src) != rank)
					continue;
				c = fdv_cand_add(out);
				if (!c) {
					ret = -FI_ENOMEM;
					goto out;
				}
				*c = found.v[i];
			}
		}
	}
out:
	free(found.v);
	freeifaddrs(ifa_list);
	return ret;
}

/* ------------------------------------------------------------------------
 * fi_getinfo
 * ---------------------------------------------------------------------- */

/* Does the application accept that remote CQ data consumes receives? */
static int fdv_app_takes_rx_cq_data(const struct fi_info *hints)
{
	return !hints || (hints->mode & FI_RX_CQ_DATA) ||
	       (hints->rx_attr && (hints->rx_attr->mode & FI_RX_CQ_DATA));
}

static size_t fdv_min(size_t a, size_t b)
{
	return a < b ? a : b;
}

static int fdv_set_addr(void **addr, size_t *addrlen,
			const struct sockaddr_storage *ss, socklen_t len)
{
	void *p;

	free(*addr);
	*addr = NULL;
	*addrlen = 0;
	if (!len)
		return 0;
	p = malloc(len);
	if (!p)
		return -FI_ENOMEM;
	memcpy(p, ss, len);
	*addr = p;
	*addrlen = len;
	return 0;
}

/* Match one candidate and append its fi_info; 0 also when it does not
 * match. */
static int fdv_emit(uint32_t version, const struct fi_info *hints,
		    const struct fdv_params *prm, const struct fdv_cand *c,
		    struct fi_info ***tail)
{
	const struct fi_info *tmpl = fdv_template_of(c->dev);
	struct fi_domain_attr dom;
	struct fi_rx_attr rx;
	struct fi_info t, *fi;
	int family = c->srclen ? c->src.ss_family :
		     c->dstlen ? c->dst.ss_family : AF_UNSPEC;

	if (!tmpl)
		return 0;
	if (prm->device_name &&
	    strncasecmp(c->dev->name, prm->device_name,
			strlen(prm->device_name))) {
		FD_DBG(FD_LOG_FABRIC, "device %s: not FI_VERBS_DEVICE_NAME=%s",
		       c->dev->name, prm->device_name);
		return 0;
	}
	if (hints && fdv_family_of_format(hints->addr_format) != AF_UNSPEC &&
	    family != AF_UNSPEC &&
	    fdv_family_of_format(hints->addr_format) != family)
		return 0;

	/*
	 * FI_RX_CQ_DATA matters only to applications using remote CQ data.
	 * Others are not asked for it, and are told cq_data_size 0; asking
	 * for CQ data without accepting the mode still fails the match.
	 */
	t = *tmpl;
	rx = *tmpl->rx_attr;
	dom = *tmpl->domain_attr;
	t.rx_attr = &rx;
	t.domain_attr = &dom;
	if (hints && !(hints->mode & FI_RX_CQ_DATA))
		t.mode &= ~FI_RX_CQ_DATA;	/* rx_attr->mode decides */
	if ((rx.mode & FI_RX_CQ_DATA) && !fdv_app_takes_rx_cq_data(hints) &&
	    !(hints && hints->domain_attr && hints->domain_attr->cq_data_size)) {
		rx.mode &= ~FI_RX_CQ_DATA;
		dom.cq_data_size = 0;
	}

	/* The template names the level served when nobody asks (the cheapest
	 * the build has); a hint may ask for any level up to the strongest
	 * the build serves, and the narrowed info then carries the hint's. */
	if (hints && hints->domain_attr &&
	    hints->domain_attr->threading != FI_THREAD_UNSPEC)
		dom.threading = fdv_threading_max();

	if (fd_info_check(version, &t, hints))
		return 0;
	fi = fd_info_narrow(version, &t, hints);
	if (!fi)
		return -FI_ENOMEM;

	/* Provider defaults for what the hints left open; the template
	 * says what the device could do at most. */
	fd_info_size_defaults(fi, hints, &(struct fd_size_defaults){
		.tx_size = fdv_min(prm->tx_size, tmpl->tx_attr->size),
		.tx_iov_limit = fdv_min(prm->tx_iov_limit, tmpl->tx_attr->iov_limit),
		.inject_size = fdv_min(prm->inline_size, tmpl->tx_attr->inject_size),
		.rx_size = fdv_min(prm->rx_size, tmpl->rx_attr->size),
		.rx_iov_limit = fdv_min(prm->rx_iov_limit, tmpl->rx_attr->iov_limit),
	});

	if (fdv_set_addr(&fi->src_addr, &fi->src_addrlen, &c->src, c->srclen) ||
	    fdv_set_addr(&fi->dest_addr, &fi->dest_addrlen, &c->dst,
			 c->dstlen)) {
		fi_freeinfo(fi);
		return -FI_ENOMEM;
	}
	if (family == AF_INET)
		fi->addr_format = FI_SOCKADDR_IN;
	else if (family == AF_INET6)
		fi->addr_format = FI_SOCKADDR_IN6;
	else if (fi->addr_format == FI_SOCKADDR ||
		 fi->addr_format == FI_FORMAT_UNSPEC)
		fi->addr_format = FI_SOCKADDR_IN;

	**tail = fi;
	*tail = &fi->next;
	return 0;
}

/* FI_PROV_ATTR_ONLY: what the provider is, without looking at devices. */
static int fdv_prov_attr_info(uint32_t version, struct fi_info **info)
{
	struct fi_info *fi = fi_allocinfo();

	if (!fi)
		return -FI_ENOMEM;
	if (fdv_fill_common(fi, 0)) {
		fi_freeinfo(fi);
		return -FI_ENOMEM;
	}
	fi->addr_format = FI_SOCKADDR_IN;
	fi->tx_attr->size = FDV_DEF_TX_SIZE;
	fi->tx_attr->iov_limit = FDV_DEF_TX_IOV_LIMIT;
	fi->tx_attr->inject_size = FDV_DEF_INLINE_SIZE;
	fi->tx_attr->op_flags = 0;
	fi->rx_attr->size = FDV_DEF_RX_SIZE;
	fi->rx_attr->iov_limit = FDV_DEF_RX_IOV_LIMIT;
	fi->rx_attr->op_flags = 0;
	fi->domain_attr->mr_mode &= ~(FI_MR_BASIC | FI_MR_SCALABLE);
	fi->fabric_attr->api_version = version;
	*info = fi;
	return 0;
}

static int fdv_msg_getinfo(uint32_t version, const char *node, const char *service,
			   uint64_t flags, const struct fi_info *hints,
			   struct fi_info **info);

/* FI_EP_MSG entries first, then FI_EP_DGRAM ones (fdv_dgram.c). */
int fdv_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info)
{
	enum fi_ep_type type = hints && hints->ep_attr ? hints->ep_attr->type :
			       FI_EP_UNSPEC;
	struct fi_info **tail;
	int ret;

	if (!info)
		return -FI_EINVAL;
	*info = NULL;
	ret = fdv_abi_check();
	if (ret)
		return ret;
	if (type != FI_EP_UNSPEC && type != FI_EP_MSG && type != FI_EP_DGRAM) {
		FD_DBG(FD_LOG_CORE, "only FI_EP_MSG and FI_EP_DGRAM endpoints");
		return -FI_ENODATA;
	}
	ret = type == FI_EP_DGRAM ? -FI_ENODATA :
	      fdv_msg_getinfo(version, node, service, flags, hints, info);
	if (ret && ret != -FI_ENODATA)
		return ret;
	if (type == FI_EP_MSG || (flags & FI_PROV_ATTR_ONLY))
		return ret;
	for (tail = info; *tail; tail = &(*tail)->next)
		;
	ret = fdv_dgram_getinfo(version, node, service, flags, hints, &tail);
	if (ret && ret != -FI_ENODATA) {
		fi_freeinfo(*info);
		*info = NULL;
		return ret;
	}
	return *info ? 0 : -FI_ENODATA;
}

static int fdv_msg_getinfo(uint32_t version, const char *node, const char *service,
			   uint64_t flags, const struct fi_info *hints,
			   struct fi_info **info)
{
	struct fdv_cands cands = { 0 };
	struct fi_info *head = NULL, **tail = &head;
	struct sockaddr_storage src, dst;
	socklen_t srclen = 0, dstlen = 0;
	struct fdv_params prm;
	int passive = (flags & FI_SOURCE) != 0;
	int family, ret = 0;

	if (flags & FI_PROV_ATTR_ONLY)
		return fdv_prov_attr_info(version, info);

	fdv_read_params(&prm);
	fdv_templates_init();
	if (!fdv_ndevices) {
		FD_INFO(FD_LOG_FABRIC, "no RDMA device with an active port");
		return -FI_ENODATA;
	}

	family = hints ? fdv_family_of_format(hints->addr_format) : AF_UNSPEC;
	if (hints && hints->addr_format != FI_FORMAT_UNSPEC &&
	    hints->addr_format != FI_SOCKADDR && family == AF_UNSPEC) {
		FD_INFO(FD_LOG_CORE, "address format %s not supported",
			fi_tostr(&hints->addr_format, FI_TYPE_ADDR_FORMAT));
		return -FI_ENODATA;
	}

	/* Work out the local and the peer address. */
	if (node || service) {
		/* A bare service with nowhere to go is a port to listen on. */
		if (!node && !passive && !(hints && hints->dest_addr))
			passive = 1;
		ret = fdv_resolve(node, service, flags, passive, family,
				  passive ? &src : &dst,
				  passive ? &srclen : &dstlen);
		if (ret)
			return -FI_ENODATA;
		if (passive && hints && hints->dest_addr)
			ret = fdv_copy_sockaddr(hints->dest_addr,
						hints->dest_addrlen, &dst,
						&dstlen);
		else if (!passive && hints && hints->src_addr)
			ret = fdv_copy_sockaddr(hints->src_addr,
						hints->src_addrlen, &src,
						&srclen);
	} else if (hints) {
		if (hints->src_addr)
			ret = fdv_copy_sockaddr(hints->src_addr,
						hints->src_addrlen, &src,
						&srclen);
		if (!ret && hints->dest_addr)
			ret = fdv_copy_sockaddr(hints->dest_addr,
						hints->dest_addrlen, &dst,
						&dstlen);
	}
	if (ret) {
		FD_INFO(FD_LOG_CORE, "hints carry an address that is not an "
			"IPv4/IPv6 sockaddr");
		return -FI_ENODATA;
	}

	/* Then which devices can serve them. */
	if (dstlen) {
		struct sockaddr_storage local;
		socklen_t local_len = 0;
		const struct fdv_device_info *dev;
		struct fdv_cand *c;

		dev = fdv_dev_of_dst(srclen ? (struct sockaddr *)&src : NULL,
				     (struct sockaddr *)&dst, &local,
				     &local_len);
		if (!dev)
			goto out;
		c = fdv_cand_add(&cands);
		if (!c) {
			ret = -FI_ENOMEM;
			goto out;
		}
		c->dev = dev;
		c->dst = dst;
		c->dstlen = dstlen;
		if (srclen) {
			c->src = src;
			c->srclen = srclen;
		} else {
			c->src = local;
			c->srclen = local_len;
		}
	} else if (srclen && fdv_is_wildcard((struct sockaddr *)&src)) {
		/* Listening everywhere: every device can take it. */
		for (int d = 0; d < fdv_ndevices; d++) {
			struct fdv_cand *c = fdv_cand_add(&cands);

			if (!c) {
				ret = -FI_ENOMEM;
				goto out;
			}
			c->dev = &fdv_devices[d];
			c->src = src;
			c->srclen = srclen;
		}
	} else if (srclen) {
		const struct fdv_device_info *dev;
		struct fdv_cand *c;

		dev = fdv_dev_of_src((struct sockaddr *)&src);
		if (!dev) {
			FD_INFO(FD_LOG_CORE, "source address is not on an "
				"RDMA device");
			goto out;
		}
		c = fdv_cand_add(&cands);
		if (!c) {
			ret = -FI_ENOMEM;
			goto out;
		}
		c->dev = dev;
		c->src = src;
		c->srclen = srclen;
	} else {
		ret = fdv_list_addrs(&prm, family, &cands);
		if (ret)
			goto out;
		if (!cands.n)
			FD_INFO(FD_LOG_FABRIC, "no RDMA device has an IP "
				"address (FI_EP_MSG needs one)");
	}

	for (size_t i = 0; i < cands.n && !ret; i++)
		ret = fdv_emit(version, hints, &prm, &cands.v[i], &tail);

out:
	free(cands.v);
	return fd_info_hand_out(head, ret, info);
}
