/* libFuzzer target: fi_getinfo hint handling without a device.
 *
 * The fuzz bytes become a struct fi_info of hints: every attribute structure
 * present or absent, each field filled from the input, strings, addresses
 * (well formed, truncated and raw bytes), auth keys, a nic, the API version,
 * the flags, and node/service strings in the FI_ADDR_STR forms the core
 * parses itself. The hints then go
 *  - through the whole of fi_getinfo (core checks, provider selection, the
 *    verbs provider and rstream's layer on it) against two made-up devices,
 *    one RoCE and one iWARP, installed with the provider's test seam
 *    (fdv_test_set_devices, compiled in only with -DFDV_TEST_SEAMS);
 *  - through the matcher directly (fd_info_check_why, fd_info_narrow)
 *    against those devices' templates;
 *  - through fi_dupinfo, fi_tostr and fi_freeinfo.
 * Checked: no crash, no sanitizer report, no leak (libFuzzer's per-input
 * leak check), a failed match names what failed, every answer is complete
 * and carries the requested API version, a copy prints like its original.
 *
 * Nothing here resolves a host name: node is NULL or an fi_sockaddr*:// string
 * and service only ever numeric, so no input reaches DNS. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "fd_core.h"
#include "fdv_device.h"
#include "fdt_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* ---- reading the input ---- */

struct rd {
	const uint8_t *p;
	size_t n;
};

/* Little-endian, zero once the input is used up (so short inputs give
 * mostly-empty hints, which is what applications pass most often). */
static uint64_t take(struct rd *r, size_t bytes)
{
	uint64_t v = 0;

	for (size_t i = 0; i < bytes && r->n; i++, r->p++, r->n--)
		v |= (uint64_t)r->p[0] << (8 * i);
	return v;
}

static size_t take_bytes(struct rd *r, void *out, size_t len)
{
	size_t n = len < r->n ? len : r->n;

	memcpy(out, r->p, n);
	memset((uint8_t *)out + n, 0, len - n);
	r->p += n;
	r->n -= n;
	return n;
}

/* A malloc'ed string of up to 31 input bytes (an embedded NUL ends it). */
static char *take_str(struct rd *r)
{
	size_t len = (size_t)take(r, 1) % 32;
	char *s = malloc(len + 1);

	if (!s)
		return NULL;
	take_bytes(r, s, len);
	s[len] = '\0';
	return s;
}

/* A string field: absent, one of the names the library knows, or bytes. */
static char *take_name(struct rd *r, const char *const *known, size_t nknown)
{
	unsigned c = (unsigned)take(r, 1);

	if (c % 4 == 0)
		return NULL;
	if (c % 4 == 1 && nknown)
		return strdup(known[(c / 4) % nknown]);
	return take_str(r);
}

/* An address buffer of exactly *len bytes, as the API says addrlen is. */
static void *take_addr(struct rd *r, size_t *len)
{
	unsigned c = (unsigned)take(r, 1);
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	void *a = NULL;

	*len = 0;
	memset(&sin, 0, sizeof(sin));
	memset(&sin6, 0, sizeof(sin6));
	sin.sin_family = AF_INET;
	sin6.sin6_family = AF_INET6;
	switch (c % 7) {
	case 0:
		return NULL;
	case 1:	/* wildcard IPv4: every device is a candidate */
		sin.sin_port = (in_port_t)take(r, 2);
		*len = sizeof(sin);
		a = malloc(*len);
		if (a)
			memcpy(a, &sin, *len);
		break;
	case 2:	/* wildcard IPv6 */
		sin6.sin6_port = (in_port_t)take(r, 2);
		*len = sizeof(sin6);
		a = malloc(*len);
		if (a)
			memcpy(a, &sin6, *len);
		break;
	case 3:	/* some IPv4 address, which no made-up device owns */
		sin.sin_port = (in_port_t)take(r, 2);
		sin.sin_addr.s_addr = (in_addr_t)take(r, 4);
		*len = sizeof(sin);
		a = malloc(*len);
		if (a)
			memcpy(a, &sin, *len);
		break;
	case 4:	/* a well-formed sockaddr cut short */
		*len = 1 + (size_t)take(r, 1) % (sizeof(sin6) - 1);
		a = malloc(*len);
		if (a)
			memcpy(a, &sin6, *len);
		break;
	case 5:	/* a length without an address: fi_getinfo must refuse */
		*len = 1 + (size_t)take(r, 1) % 64;
		return NULL;
	default: /* raw bytes of any length */
		*len = 1 + (size_t)take(r, 1) % 64;
		a = malloc(*len);
		if (a)
			take_bytes(r, a, *len);
		break;
	}
	if (!a)
		*len = 0;
	return a;
}

static uint8_t *take_key(struct rd *r, size_t *len)
{
	uint8_t *k;

	*len = (size_t)take(r, 1) % 24;
	if (!*len)
		return NULL;
	k = malloc(*len);
	if (!k) {
		*len = 0;
		return NULL;
	}
	take_bytes(r, k, *len);
	return k;
}

/* ---- building the hints ---- */

static const char *const prov_names[] = {
	"verbs", "rstream", "verbs;rstream", "VERBS", "tcp", "verbs;ofi_rxm",
};
static const char *const domain_names[] = { "fz_roce0", "fz_iw0", "rxe0", "fz" };
static const char *const fabric_names[] = {
	"IB-0xfe80000000000000", "Ethernet-iWARP", "IB-0x0",
};

static void fill_tx(struct rd *r, struct fi_tx_attr *a)
{
	a->caps = take(r, 8);
	a->mode = take(r, 8);
	a->op_flags = take(r, 8);
	a->msg_order = take(r, 8);
	a->comp_order = take(r, 8);
	a->inject_size = (size_t)take(r, 8);
	a->size = (size_t)take(r, 8);
	a->iov_limit = (size_t)take(r, 8);
	a->rma_iov_limit = (size_t)take(r, 8);
	a->tclass = (uint32_t)take(r, 4);
}

static void fill_rx(struct rd *r, struct fi_rx_attr *a)
{
	a->caps = take(r, 8);
	a->mode = take(r, 8);
	a->op_flags = take(r, 8);
	a->msg_order = take(r, 8);
	a->comp_order = take(r, 8);
	a->total_buffered_recv = (size_t)take(r, 8);
	a->size = (size_t)take(r, 8);
	a->iov_limit = (size_t)take(r, 8);
}

static void fill_ep(struct rd *r, struct fi_ep_attr *a)
{
	a->type = (enum fi_ep_type)(take(r, 1) % 8);
	a->protocol = (uint32_t)take(r, 4);
	a->protocol_version = (uint32_t)take(r, 4);
	a->max_msg_size = (size_t)take(r, 8);
	a->msg_prefix_size = (size_t)take(r, 8);
	a->max_order_raw_size = (size_t)take(r, 8);
	a->max_order_war_size = (size_t)take(r, 8);
	a->max_order_waw_size = (size_t)take(r, 8);
	a->mem_tag_format = take(r, 8);
	a->tx_ctx_cnt = (size_t)take(r, 8);
	a->rx_ctx_cnt = (size_t)take(r, 8);
	a->auth_key = take_key(r, &a->auth_key_size);
}

static void fill_domain(struct rd *r, struct fi_domain_attr *a)
{
	a->name = take_name(r, domain_names,
			    sizeof(domain_names) / sizeof(domain_names[0]));
	a->threading = (enum fi_threading)(take(r, 1) % 8);
	a->control_progress = (enum fi_progress)(take(r, 1) % 4);
	a->data_progress = (enum fi_progress)(take(r, 1) % 4);
	a->resource_mgmt = (enum fi_resource_mgmt)(take(r, 1) % 4);
	a->av_type = (enum fi_av_type)(take(r, 1) % 4);
	a->mr_mode = (int)take(r, 4);
	a->mr_key_size = (size_t)take(r, 8);
	a->cq_data_size = (size_t)take(r, 8);
	a->cq_cnt = (size_t)take(r, 8);
	a->ep_cnt = (size_t)take(r, 8);
	a->tx_ctx_cnt = (size_t)take(r, 8);
	a->rx_ctx_cnt = (size_t)take(r, 8);
	a->max_ep_tx_ctx = (size_t)take(r, 8);
	a->max_ep_rx_ctx = (size_t)take(r, 8);
	a->max_ep_stx_ctx = (size_t)take(r, 8);
	a->max_ep_srx_ctx = (size_t)take(r, 8);
	a->cntr_cnt = (size_t)take(r, 8);
	a->mr_iov_limit = (size_t)take(r, 8);
	a->caps = take(r, 8);
	a->mode = take(r, 8);
	a->auth_key = take_key(r, &a->auth_key_size);
	a->max_err_data = (size_t)take(r, 8);
	a->mr_cnt = (size_t)take(r, 8);
	a->tclass = (uint32_t)take(r, 4);
}

static void fill_fabric(struct rd *r, struct fi_fabric_attr *a)
{
	a->name = take_name(r, fabric_names,
			    sizeof(fabric_names) / sizeof(fabric_names[0]));
	a->prov_name = take_name(r, prov_names,
				 sizeof(prov_names) / sizeof(prov_names[0]));
	a->prov_version = (uint32_t)take(r, 4);
	a->api_version = (uint32_t)take(r, 4);
}

static struct fid_nic *take_nic(struct rd *r)
{
	struct fid_nic *nic = fd_nic_alloc();

	if (!nic)
		return NULL;
	nic->device_attr->name = take_str(r);
	nic->device_attr->driver = take_str(r);
	nic->bus_attr->bus_type = (enum fi_bus_type)(take(r, 1) % 3);
	nic->link_attr->address = take_str(r);
	nic->link_attr->mtu = (size_t)take(r, 8);
	nic->link_attr->speed = (size_t)take(r, 8);
	nic->link_attr->state = (enum fi_link_state)(take(r, 1) % 3);
	return nic;
}

static struct fi_info *build_hints(struct rd *r)
{
	struct fi_info *h = fi_allocinfo();
	unsigned present;

	if (!h)
		return NULL;
	present = (unsigned)take(r, 1);
	/* fi_allocinfo gives every attribute; clear those the input omits. */
	if (present & 1) {
		free(h->tx_attr);
		h->tx_attr = NULL;
	} else {
		fill_tx(r, h->tx_attr);
	}
	if (present & 2) {
		free(h->rx_attr);
		h->rx_attr = NULL;
	} else {
		fill_rx(r, h->rx_attr);
	}
	if (present & 4) {
		free(h->ep_attr);
		h->ep_attr = NULL;
	} else {
		fill_ep(r, h->ep_attr);
	}
	if (present & 8) {
		free(h->domain_attr);
		h->domain_attr = NULL;
	} else {
		fill_domain(r, h->domain_attr);
	}
	if (present & 16) {
		free(h->fabric_attr);
		h->fabric_attr = NULL;
	} else {
		fill_fabric(r, h->fabric_attr);
	}
	if (present & 32)
		h->nic = take_nic(r);
	h->caps = take(r, 8);
	h->mode = take(r, 8);
	h->addr_format = (uint32_t)take(r, 1) % 12;
	h->src_addr = take_addr(r, &h->src_addrlen);
	h->dest_addr = take_addr(r, &h->dest_addrlen);
	return h;
}

/* node and service, never anything that would need DNS. */
static void take_node_service(struct rd *r, char **node, char **service)
{
	static const char *const prefix[] = {
		"fi_sockaddr_in://", "fi_sockaddr_in6://", "fi_sockaddr://",
		"fi_sockaddr_in6://[", "fi_sockaddr",
	};
	unsigned c = (unsigned)take(r, 1);
	char buf[16];

	*node = NULL;
	*service = NULL;
	if (c & 1) {
		char *tail = take_str(r);
		const char *p = prefix[(c >> 1) % 5];
		size_t n;

		if (!tail)
			return;
		n = strlen(p) + strlen(tail) + 1;
		*node = malloc(n);
		if (*node)
			snprintf(*node, n, "%s%s", p, tail);
		free(tail);
	}
	if (c & 0x40) {
		snprintf(buf, sizeof(buf), "%u", (unsigned)take(r, 2));
		*service = strdup(buf);
	}
}

/* ---- checks ---- */

static char *print(const struct fi_info *fi)
{
	return strdup(fi_tostr(fi, FI_TYPE_INFO));
}

static void check_dup(const struct fi_info *fi)
{
	struct fi_info *dup = fi_dupinfo(fi);
	char *a, *b;

	if (!dup)
		return;	/* out of memory is an answer too */
	/* An address and a length that disagree (one of them 0) are copied
	 * as no address at all, so such a copy cannot print the same. */
	if (!fi->src_addr != !fi->src_addrlen ||
	    !fi->dest_addr != !fi->dest_addrlen) {
		CHECK(!dup->src_addr == !dup->src_addrlen);
		CHECK(!dup->dest_addr == !dup->dest_addrlen);
		fi_freeinfo(dup);
		return;
	}
	a = print(fi);
	b = print(dup);
	CHECK(a && b);
	if (strcmp(a, b))
		fprintf(stderr, "original:\n%s\ncopy:\n%s\n", a, b);
	CHECK(!strcmp(a, b));
	free(a);
	free(b);
	fi_freeinfo(dup);
}

/* Print the scalar fields through their own fi_tostr types as well. */
static void check_scalars(const struct fi_info *h)
{
	CHECK(fi_tostr(&h->caps, FI_TYPE_CAPS));
	CHECK(fi_tostr(&h->mode, FI_TYPE_MODE));
	CHECK(fi_tostr(&h->addr_format, FI_TYPE_ADDR_FORMAT));
	if (h->ep_attr) {
		CHECK(fi_tostr(&h->ep_attr->type, FI_TYPE_EP_TYPE));
		CHECK(fi_tostr(&h->ep_attr->protocol, FI_TYPE_PROTOCOL));
		CHECK(fi_tostr(h->ep_attr, FI_TYPE_EP_ATTR));
	}
	if (h->tx_attr) {
		CHECK(fi_tostr(&h->tx_attr->op_flags, FI_TYPE_OP_FLAGS));
		CHECK(fi_tostr(&h->tx_attr->msg_order, FI_TYPE_MSG_ORDER));
		CHECK(fi_tostr(h->tx_attr, FI_TYPE_TX_ATTR));
	}
	if (h->rx_attr) {
		CHECK(fi_tostr(&h->rx_attr->comp_order, FI_TYPE_MSG_ORDER));
		CHECK(fi_tostr(h->rx_attr, FI_TYPE_RX_ATTR));
	}
	if (h->domain_attr) {
		CHECK(fi_tostr(&h->domain_attr->threading, FI_TYPE_THREADING));
		CHECK(fi_tostr(&h->domain_attr->data_progress, FI_TYPE_PROGRESS));
		CHECK(fi_tostr(&h->domain_attr->av_type, FI_TYPE_AV_TYPE));
		CHECK(fi_tostr(&h->domain_attr->mr_mode, FI_TYPE_MR_MODE));
		CHECK(fi_tostr(h->domain_attr, FI_TYPE_DOMAIN_ATTR));
	}
	if (h->fabric_attr) {
		CHECK(fi_tostr(&h->fabric_attr->api_version, FI_TYPE_VERSION));
		CHECK(fi_tostr(h->fabric_attr, FI_TYPE_FABRIC_ATTR));
	}
}

static const char *const fake_names[] = { "fz_roce0", "fz_iw0" };

static void check_templates(uint32_t version, const struct fi_info *hints)
{
	for (size_t i = 0; i < sizeof(fake_names) / sizeof(fake_names[0]); i++) {
		const struct fi_info *tmpl = fdv_test_template(fake_names[i]);
		const char *why = "unset";
		struct fi_info *n;
		int ret;

		CHECK(tmpl);
		ret = fd_info_check_why(version, tmpl, hints, &why);
		if (ret) {
			CHECK(ret == -FI_ENODATA);
			CHECK(why != NULL);
			continue;
		}
		CHECK(why == NULL);
		n = fd_info_narrow(version, tmpl, hints);
		if (!n)
			continue;	/* ENOMEM */
		CHECK(n->tx_attr && n->rx_attr && n->ep_attr &&
		      n->domain_attr && n->fabric_attr);
		CHECK(n->fabric_attr->api_version == version);
		CHECK(!n->next);
		check_dup(n);
		fi_freeinfo(n);
	}
}

static void check_getinfo(uint32_t version, const char *node,
			  const char *service, uint64_t flags,
			  const struct fi_info *hints)
{
	struct fi_info *list = (struct fi_info *)1;
	int ret = fi_getinfo(version, node, service, flags, hints, &list);

	if (ret) {
		CHECK(ret < 0);
		CHECK(list == NULL);
		CHECK(fi_strerror(-ret) != NULL);
		return;
	}
	CHECK(list != NULL);
	for (struct fi_info *fi = list; fi; fi = fi->next) {
		CHECK(fi->tx_attr && fi->rx_attr && fi->ep_attr &&
		      fi->domain_attr && fi->fabric_attr);
		CHECK(fi->fabric_attr->prov_name);
		CHECK(fi->fabric_attr->api_version == version);
		CHECK(!fi->src_addr == !fi->src_addrlen);
		CHECK(!fi->dest_addr == !fi->dest_addrlen);
		check_dup(fi);
	}
	fi_freeinfo(list);
}

/* ---- libFuzzer entry points ---- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fdv_device_info dev[2];

	(void)argc;
	(void)argv;
	memset(dev, 0, sizeof(dev));
	/* Limits of the order Soft-RoCE reports. */
	for (int i = 0; i < 2; i++) {
		struct ibv_device_attr *a = &dev[i].attr;

		dev[i].name = fake_names[i];
		dev[i].port_num = 1;
		a->max_qp = 0x10000;
		a->max_qp_wr = 0x4000;
		a->max_sge = 32;
		a->max_cq = 0x4000;
		a->max_cqe = 0x7fff;
		a->max_mr = 0x40000;
		a->max_mr_size = UINT64_MAX;
		a->phys_port_cnt = 1;
		a->max_qp_rd_atom = 128;
		a->max_qp_init_rd_atom = 128;
		dev[i].port_attr.state = IBV_PORT_ACTIVE;
		dev[i].port_attr.max_msg_sz = 0x800000;
		dev[i].port_attr.active_mtu = IBV_MTU_1024;
		dev[i].port_attr.max_mtu = IBV_MTU_4096;
		dev[i].max_inline = 256;
	}
	dev[0].attr.atomic_cap = IBV_ATOMIC_HCA;
	dev[0].link_layer = IBV_LINK_LAYER_ETHERNET;
	dev[0].port_attr.link_layer = IBV_LINK_LAYER_ETHERNET;
	dev[0].transport = IBV_TRANSPORT_IB;
	dev[0].gid.global.subnet_prefix = htobe64(0xfe80000000000000ULL);
	dev[1].attr.atomic_cap = IBV_ATOMIC_NONE;
	dev[1].link_layer = IBV_LINK_LAYER_ETHERNET;
	dev[1].port_attr.link_layer = IBV_LINK_LAYER_ETHERNET;
	dev[1].transport = IBV_TRANSPORT_IWARP;
	if (fdv_test_set_devices(dev, 2)) {
		fprintf(stderr, "cannot install the made-up devices\n");
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rd r = { data, size };
	uint32_t version;
	uint64_t flags;
	char *node, *service;
	struct fi_info *hints;
	unsigned vsel;

	vsel = (unsigned)take(&r, 1);
	if (vsel & 0x80)
		version = (uint32_t)take(&r, 4);
	else
		version = FI_VERSION(1, vsel % 20);
	flags = take(&r, 8);
	take_node_service(&r, &node, &service);
	hints = build_hints(&r);
	if (!hints) {
		free(node);
		free(service);
		return 0;
	}

	check_scalars(hints);
	check_dup(hints);
	check_templates(version, hints);
	check_getinfo(version, node, service, flags, hints);
	/* No hints at all, with the same version, node and flags. */
	if (vsel & 0x40)
		check_getinfo(version, node, service, flags, NULL);

	fi_freeinfo(hints);
	free(node);
	free(service);
	/* A failed check is a finding: stop here, on the input that made it. */
	if (fdt_check_failures)
		abort();
	return 0;
}
