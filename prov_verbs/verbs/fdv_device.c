/*
 * Verbs provider: device discovery (see fdv_device.h).
 *
 * Devices are looked at once: for each rdma-core device with an ACTIVE
 * port, its attributes, the port's, the GID at FI_VERBS_GID_IDX and a
 * probe of the largest inline send an RC QP accepts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define FD_LOG_PROV "verbs"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "fd_core.h"
#include "fdv_device.h"
#include "fdv_param.h"

#define FDV_INLINE_PROBE_MAX	1024

static int fdv_create_qp_probe(struct ibv_pd *pd, struct ibv_cq *cq,
			       uint32_t wr, uint32_t sge, uint32_t inline_size,
			       uint32_t *got)
{
	struct ibv_qp_init_attr attr;
	struct ibv_qp *qp;

	memset(&attr, 0, sizeof(attr));
	attr.send_cq = cq;
	attr.recv_cq = cq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = wr;
	attr.cap.max_recv_wr = wr;
	attr.cap.max_send_sge = sge;
	attr.cap.max_recv_sge = sge;
	attr.cap.max_inline_data = inline_size;
	qp = ibv_create_qp(pd, &attr);
	if (!qp)
		return -1;
	/* The driver reports what it really gave, possibly more. */
	*got = attr.cap.max_inline_data;
	ibv_destroy_qp(qp);
	return 0;
}

/*
 * Largest max_inline_data an RC QP of the default shape accepts: try the
 * cap, then bisect.  Devices disagree wildly (0 to kilobytes) and none
 * report it in ibv_query_device.
 */
static uint32_t fdv_probe_inline(struct ibv_context *ctx,
				 const struct ibv_device_attr *da,
				 const struct fdv_params *prm)
{
	uint32_t wr, sge, lo = 0, hi = FDV_INLINE_PROBE_MAX, got = 0, best = 0;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	wr = (uint32_t)(prm->tx_size < (size_t)da->max_qp_wr ?
			prm->tx_size : (size_t)da->max_qp_wr);
	sge = (uint32_t)(prm->tx_iov_limit < (size_t)da->max_sge ?
			 prm->tx_iov_limit : (size_t)da->max_sge);
	if (!wr)
		wr = 1;
	if (!sge)
		sge = 1;

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return 0;
	cq = ibv_create_cq(ctx, 2 * (int)wr, NULL, NULL, 0);
	if (!cq) {
		ibv_dealloc_pd(pd);
		return 0;
	}

	if (!fdv_create_qp_probe(pd, cq, wr, sge, hi, &got)) {
		best = got > hi ? got : hi;
	} else {
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo + 1) / 2;

			if (!fdv_create_qp_probe(pd, cq, wr, sge, mid, &got)) {
				lo = mid;
				best = got > mid ? got : mid;
			} else {
				hi = mid - 1;
			}
		}
	}

	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	return best;
}


static pthread_once_t fdv_devices_once = PTHREAD_ONCE_INIT;
static struct fdv_device_info *fdv_devices;
static int fdv_ndevices;

static int fdv_first_active_port(struct ibv_context *ctx,
				 const struct ibv_device_attr *da,
				 struct ibv_port_attr *pa)
{
	for (int p = 1; p <= da->phys_port_cnt; p++) {
		if (ibv_query_port(ctx, (uint8_t)p, pa))
			continue;
		if (pa->state == IBV_PORT_ACTIVE)
			return p;
	}
	return 0;
}

static void fdv_devices_build(void)
{
	struct ibv_device **list;
	struct fdv_params prm;
	int n = 0;

	fdv_read_params(&prm);
	list = ibv_get_device_list(&n);
	if (!list || n <= 0) {
		FD_INFO(FD_LOG_FABRIC, "no RDMA devices found");
		if (list)
			ibv_free_device_list(list);
		return;
	}
	fdv_devices = calloc((size_t)n, sizeof(*fdv_devices));
	if (!fdv_devices) {
		ibv_free_device_list(list);
		return;
	}

	for (int i = 0; i < n; i++) {
		struct fdv_device_info *dev = &fdv_devices[fdv_ndevices];
		const char *name = ibv_get_device_name(list[i]);
		struct ibv_context *ctx;
		int port;

		ctx = ibv_open_device(list[i]);
		if (!ctx) {
			FD_INFO(FD_LOG_FABRIC, "device %s: cannot open: %s",
				name, strerror(errno));
			continue;
		}
		if (ibv_query_device(ctx, &dev->attr)) {
			FD_INFO(FD_LOG_FABRIC, "device %s: query failed: %s",
				name, strerror(errno));
			goto next;
		}
		port = fdv_first_active_port(ctx, &dev->attr, &dev->port_attr);
		if (!port) {
			FD_INFO(FD_LOG_FABRIC, "device %s: no active port",
				name);
			goto next;
		}
		dev->port_num = (uint8_t)port;
		dev->link_layer = dev->port_attr.link_layer;
		dev->transport = list[i]->transport_type;
		if (dev->transport != IBV_TRANSPORT_IB &&
		    dev->transport != IBV_TRANSPORT_IWARP) {
			FD_INFO(FD_LOG_FABRIC, "device %s: transport %d is "
				"neither InfiniBand/RoCE nor iWARP", name,
				(int)dev->transport);
			goto next;
		}
		if (ibv_query_gid(ctx, dev->port_num, prm.gid_idx, &dev->gid))
			memset(&dev->gid, 0, sizeof(dev->gid));
		dev->max_inline = fdv_probe_inline(ctx, &dev->attr, &prm);
		dev->name = strdup(name);
		if (!dev->name)
			goto next;
		FD_INFO(FD_LOG_FABRIC, "device %s: port %d, max inline %u",
			name, port, dev->max_inline);
		fdv_ndevices++;
next:
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
}

static void fdv_devices_init(void)
{
	pthread_once(&fdv_devices_once, fdv_devices_build);
}

#ifdef FDV_TEST_SEAMS
/*
 * Test seam, compiled only into test programs that build the provider's
 * sources themselves with -DFDV_TEST_SEAMS (the getinfo fuzzer); the
 * library never has it. Installs made-up devices in place of the device
 * scan, so fi_getinfo builds its templates from them and matches hints
 * against those on a machine with no RDMA device. Call it before anything else looks at devices.
 */
static void fdv_devices_skip_scan(void)
{
}

int fdv_test_set_devices(const struct fdv_device_info *devs, int n)
{
	pthread_once(&fdv_devices_once, fdv_devices_skip_scan);
	if (fdv_devices || n <= 0)
		return -FI_EALREADY;
	fdv_devices = calloc((size_t)n, sizeof(*fdv_devices));
	if (!fdv_devices)
		return -FI_ENOMEM;
	for (int i = 0; i < n; i++) {
		struct fdv_device_info *dev = &fdv_devices[fdv_ndevices];

		*dev = devs[i];
		dev->name = strdup(devs[i].name);
		if (!dev->name)
			return -FI_ENOMEM;
		fdv_ndevices++;
	}
	return 0;
}
#endif

const struct fdv_device_info *fdv_devices_get(int *n)
{
	fdv_devices_init();
	*n = fdv_ndevices;
	return fdv_devices;
}

const struct fdv_device_info *fdv_device_lookup(const char *domain_name)
{
	if (!domain_name)
		return NULL;
	fdv_devices_init();
	for (int i = 0; i < fdv_ndevices; i++)
		if (!strcmp(fdv_devices[i].name, domain_name))
			return &fdv_devices[i];
	return NULL;
}
