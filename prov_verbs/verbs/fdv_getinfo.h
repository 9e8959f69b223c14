/*
 * Verbs provider: device discovery and fi_getinfo support (private).
 *
 * fdv_getinfo.c enumerates the rdma-core devices once (the first time
 * fi_getinfo, fi_getparams or fdv_device_lookup needs them) and keeps, per
 * device with an ACTIVE port, an fi_info template whose sizes are the
 * device's maxima.  fi_getinfo answers from it; the domain still queries
 * its device itself when it opens.  The cache is never rebuilt, so the
 * pointers below stay valid for the life of the process.
 */
#ifndef FDV_GETINFO_H
#define FDV_GETINFO_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/fabric.h>

#include "fdv_layer.h"

/* Upstream's defaults, overridable by the FI_VERBS_* variables below. */
#define FDV_DEF_TX_SIZE		384	/* FI_VERBS_TX_SIZE */
#define FDV_DEF_RX_SIZE		384	/* FI_VERBS_RX_SIZE */
#define FDV_DEF_TX_IOV_LIMIT	4	/* FI_VERBS_TX_IOV_LIMIT */
#define FDV_DEF_RX_IOV_LIMIT	4	/* FI_VERBS_RX_IOV_LIMIT */
#define FDV_DEF_INLINE_SIZE	256	/* FI_VERBS_INLINE_SIZE */
#define FDV_DEF_GID_IDX		0	/* FI_VERBS_GID_IDX */
/* FI_VERBS_MIN_RNR_TIMER, in the IB encoding: 12 = 0.64 ms (0 would be
 * 655 ms), as upstream verbs' default. */
#define FDV_DEF_MIN_RNR_TIMER	12
/* Route and address resolution through rdma_cm, each step (fi_getinfo,
 * fi_endpoint, fi_setname); resolution is local (ARP/neighbour), so this
 * is generous. */
#define FDV_RESOLVE_TIMEOUT_MS	2000

/* Names of the provider, its fabrics, and the protocol values it reports. */
#define FDV_PROV_NAME		"verbs"
#define FDV_IB_FABRIC_PREFIX	"IB-0x"		/* + GID subnet prefix */
#define FDV_IWARP_FABRIC	"Ethernet-iWARP"

/*
 * The values of the FI_VERBS_* variables, read fresh from the environment
 * by fdv_read_params (a malformed or out-of-range value logs a warning
 * and falls back to the default).  Strings point into the environment or
 * are NULL when unset.
 */
struct fdv_params {
	size_t		tx_size;
	size_t		rx_size;
	size_t		tx_iov_limit;
	size_t		rx_iov_limit;
	size_t		inline_size;
	int		gid_idx;
	const char	*device_name;	/* FI_VERBS_DEVICE_NAME: name prefix */
	const char	*iface;		/* FI_VERBS_IFACE: netdev prefix */
};

void fdv_read_params(struct fdv_params *p);

/* FI_VERBS_CONNECT_TIMEOUT in milliseconds (0: no deadline of our own). */
unsigned int fdv_connect_timeout_ms(void);

/* FI_VERBS_MIN_RNR_TIMER, 0 - 31, read at fi_domain. */
uint8_t fdv_min_rnr_timer(void);

/* What fdv_getinfo learned about one device. */
struct fdv_device_info {
	const char		*name;		/* ibv device = domain name */
	const struct fi_info	*info;		/* template, device maxima */
	uint8_t			port_num;	/* first ACTIVE port */
	uint8_t			link_layer;	/* IBV_LINK_LAYER_* */
	enum ibv_transport_type	transport;	/* IB (incl. RoCE) or iWARP */
	union ibv_gid		gid;		/* port GID at FI_VERBS_GID_IDX */
	uint32_t		max_inline;	/* probed RC max_inline_data */
	struct ibv_device_attr	attr;		/* ibv_query_device */
	struct ibv_port_attr	port_attr;	/* ibv_query_port(port_num) */
};

/*
 * Look a device up by domain name (the ibv device name, e.g. "rxe0");
 * NULL if there is no such device with an active port.  Thread safe.
 */
const struct fdv_device_info *fdv_device_lookup(const char *domain_name);

/* The cached template of that device (fdv_device_lookup(name)->info). */
const struct fi_info *fdv_device_template(const char *domain_name);

/* fdv_abi_check (fdv_abi.c) and fdv_getinfo are declared in the layer
 * contract, since the layers call them too. */
#ifdef FDV_TEST_SEAMS
/* Test programs only (never in the library): use these devices instead of
 * scanning for real ones; templates are built from their attributes.
 * 0, -FI_EALREADY once devices exist, -FI_ENOMEM. */
int fdv_test_set_devices(const struct fdv_device_info *devs, int n);
#endif

/*
 * fi_info entry point of the verbs provider (FI_EP_MSG over RC QPs and
 * rdma_cm) and its one-time parameter definitions; called by the core
 * (see src/fd_core.h).
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
void fdv_getinfo_init(void);

/* The strongest threading level this build serves (fdv_domain.c). */
enum fi_threading fdv_threading_max(void);

#endif /* FDV_GETINFO_H */
