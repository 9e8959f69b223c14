/*
 * Verbs provider: device discovery (private).
 *
 * fdv_device.c enumerates the rdma-core devices once (the first time
 * fi_getinfo or fi_getparams needs them) and keeps what it learned about
 * each device with an ACTIVE port. The cache is never rebuilt, so the
 * pointers below stay valid for the life of the process. The domain still
 * queries its device itself when it opens.
 */
#ifndef FDV_DEVICE_H
#define FDV_DEVICE_H

#include <stdint.h>

#include <infiniband/verbs.h>

/* What discovery learned about one device. */
struct fdv_device_info {
	const char		*name;		/* ibv device = domain name */
	uint8_t			port_num;	/* first ACTIVE port */
	uint8_t			link_layer;	/* IBV_LINK_LAYER_* */
	enum ibv_transport_type	transport;	/* IB (incl. RoCE) or iWARP */
	union ibv_gid		gid;		/* port GID at FI_VERBS_GID_IDX */
	uint32_t		max_inline;	/* probed RC max_inline_data */
	struct ibv_device_attr	attr;		/* ibv_query_device */
	struct ibv_port_attr	port_attr;	/* ibv_query_port(port_num) */
};

/* Every usable device (*n of them, possibly 0), scanning on first use.
 * Thread safe. */
const struct fdv_device_info *fdv_devices_get(int *n);

/* A device by domain name (the ibv device name, e.g. "rxe0"); NULL if
 * there is no such device with an active port. Thread safe. */
const struct fdv_device_info *fdv_device_lookup(const char *domain_name);

struct fi_info;
/* fdv_getinfo.c: the FI_EP_MSG template of device i of fdv_devices_get
 * (*dev set to it), NULL when there is none. */
const struct fi_info *fdv_msg_template(int i, const struct fdv_device_info **dev);
/* fdv_dgram.c: fi_getinfo's FI_EP_DGRAM entries, appended at *tail. */
int fdv_dgram_getinfo(uint32_t version, const char *node, const char *service,
		      uint64_t flags, const struct fi_info *hints,
		      struct fi_info ***tail);

#ifdef FDV_TEST_SEAMS
/* Test programs only (never in the library): use these devices instead of
 * scanning for real ones. 0, -FI_EALREADY once devices exist, -FI_ENOMEM. */
int fdv_test_set_devices(const struct fdv_device_info *devs, int n);

struct fi_info;
/* fi_getinfo's template of that device (fdv_getinfo.c); NULL if none. */
const struct fi_info *fdv_test_template(const char *domain_name);
#endif

#endif /* FDV_DEVICE_H */
