/*
 * The old-ABI entry points of the drop-in libfabric.so.1, called the way a
 * binary linked against libfabric 1.0 - 1.8 calls them: by versioned name
 * (fi_getinfo@FABRIC_1.0 ...), with structures only as large as that ABI
 * defined them.  Built against Debian's libfabric headers, linked against
 * our libfabric.so.1; no device needed (FI_PROV_ATTR_ONLY).  Run under
 * valgrind by ctest when available: a read past an old structure or a
 * leak in the old fi_freeinfo is then an error.
 *
 * The old layouts below are written from the ABI section of fabric(7):
 * ABI 1.0 (libfabric 1.0 - 1.4), 1.1 (1.5 - 1.6) appended the auth keys,
 * api_version and the domain counts, 1.2 (1.7 - 1.8) appended fi_info's
 * nic; tx_attr's tclass came with 1.3.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "fdt_check.h"

struct old_tx_attr {
	uint64_t caps, mode, op_flags, msg_order, comp_order;
	size_t inject_size, size, iov_limit, rma_iov_limit;
};

struct old_ep_attr_1_0 {
	enum fi_ep_type type;
	uint32_t protocol, protocol_version;
	size_t max_msg_size, msg_prefix_size;
	size_t max_order_raw_size, max_order_war_size, max_order_waw_size;
	uint64_t mem_tag_format;
	size_t tx_ctx_cnt, rx_ctx_cnt;
};

struct old_ep_attr_1_1 {
	struct old_ep_attr_1_0 v10;
	size_t auth_key_size;
	uint8_t *auth_key;
};

struct old_domain_attr_1_0 {
	struct fid_domain *domain;
	char *name;
	enum fi_threading threading;
	enum fi_progress control_progress, data_progress;
	enum fi_resource_mgmt resource_mgmt;
	enum fi_av_type av_type;
	int mr_mode;
	size_t mr_key_size, cq_data_size, cq_cnt, ep_cnt, tx_ctx_cnt,
	       rx_ctx_cnt, max_ep_tx_ctx, max_ep_rx_ctx, max_ep_stx_ctx,
	       max_ep_srx_ctx;
};

struct old_domain_attr_1_1 {
	struct old_domain_attr_1_0 v10;
	size_t cntr_cnt, mr_iov_limit;
	uint64_t caps, mode;
	uint8_t *auth_key;
	size_t auth_key_size, max_err_data, mr_cnt;
};

struct old_fabric_attr_1_0 {
	struct fid_fabric *fabric;
	char *name, *prov_name;
	uint32_t prov_version;
};

struct old_info_1_0 {
	void *next;
	uint64_t caps, mode;
	uint32_t addr_format;
	size_t src_addrlen, dest_addrlen;
	void *src_addr, *dest_addr;
	fid_t handle;
	struct old_tx_attr *tx_attr;
	struct fi_rx_attr *rx_attr;		/* unchanged since 1.0 */
	struct old_ep_attr_1_0 *ep_attr;	/* a prefix in every ABI */
	struct old_domain_attr_1_0 *domain_attr;
	struct old_fabric_attr_1_0 *fabric_attr;
};

struct old_info_1_2 {
	struct old_info_1_0 v10;
	struct fid_nic *nic;
};

typedef int (*getinfo_fn)(uint32_t, const char *, const char *, uint64_t,
			  const void *, void **);
typedef void *(*dupinfo_fn)(const void *);
typedef void (*freeinfo_fn)(void *);

#define OLD_INFO_API(v)							\
	int old_getinfo_##v(uint32_t, const char *, const char *,	\
			    uint64_t, const void *, void **);		\
	void *old_dupinfo_##v(const void *);				\
	void old_freeinfo_##v(void *);
OLD_INFO_API(1_0)
OLD_INFO_API(1_1)
OLD_INFO_API(1_2)
int old_fabric_1_0(struct old_fabric_attr_1_0 *, struct fid_fabric **, void *);

__asm__(".symver old_getinfo_1_0, fi_getinfo@FABRIC_1.0");
__asm__(".symver old_dupinfo_1_0, fi_dupinfo@FABRIC_1.0");
__asm__(".symver old_freeinfo_1_0, fi_freeinfo@FABRIC_1.0");
__asm__(".symver old_fabric_1_0, fi_fabric@FABRIC_1.0");
__asm__(".symver old_getinfo_1_1, fi_getinfo@FABRIC_1.1");
__asm__(".symver old_dupinfo_1_1, fi_dupinfo@FABRIC_1.1");
__asm__(".symver old_freeinfo_1_1, fi_freeinfo@FABRIC_1.1");
__asm__(".symver old_getinfo_1_2, fi_getinfo@FABRIC_1.2");
__asm__(".symver old_dupinfo_1_2, fi_dupinfo@FABRIC_1.2");
__asm__(".symver old_freeinfo_1_2, fi_freeinfo@FABRIC_1.2");

struct abi {
	const char *name;
	uint32_t api;		/* newest API that used this ABI */
	size_t info, ep, domain, fabric;
	getinfo_fn getinfo;
	dupinfo_fn dupinfo;
	freeinfo_fn freeinfo;
};

static const struct abi abis[] = {
	{ "FABRIC_1.0", FI_VERSION(1, 4), sizeof(struct old_info_1_0),
	  sizeof(struct old_ep_attr_1_0), sizeof(struct old_domain_attr_1_0),
	  sizeof(struct old_fabric_attr_1_0),
	  old_getinfo_1_0, old_dupinfo_1_0, old_freeinfo_1_0 },
	{ "FABRIC_1.1", FI_VERSION(1, 6), sizeof(struct old_info_1_0),
	  sizeof(struct old_ep_attr_1_1), sizeof(struct old_domain_attr_1_1),
	  sizeof(struct fi_fabric_attr),
	  old_getinfo_1_1, old_dupinfo_1_1, old_freeinfo_1_1 },
	{ "FABRIC_1.2", FI_VERSION(1, 8), sizeof(struct old_info_1_2),
	  sizeof(struct old_ep_attr_1_1), sizeof(struct old_domain_attr_1_1),
	  sizeof(struct fi_fabric_attr),
	  old_getinfo_1_2, old_dupinfo_1_2, old_freeinfo_1_2 },
};

static void *zalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p) {
		perror("calloc");
		exit(2);
	}
	return p;
}

/* Hints as an application of that ABI builds them: exact sizes, malloc. */
static struct old_info_1_0 *old_hints(const struct abi *a, enum fi_ep_type t)
{
	struct old_info_1_0 *h = zalloc(a->info);
	struct sockaddr_in *sin = zalloc(sizeof(*sin));

	h->caps = FI_MSG;
	h->mode = ~0ULL;
	h->addr_format = FI_SOCKADDR_IN;
	sin->sin_family = AF_INET;
	sin->sin_port = htons(4711);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	h->src_addr = sin;
	h->src_addrlen = sizeof(*sin);
	h->tx_attr = zalloc(sizeof(struct old_tx_attr));
	h->rx_attr = zalloc(sizeof(struct fi_rx_attr));
	h->ep_attr = zalloc(a->ep);
	h->ep_attr->type = t;
	h->domain_attr = zalloc(a->domain);
	h->domain_attr->name = strdup("some-domain");
	h->domain_attr->mr_mode = FI_MR_BASIC;
	h->fabric_attr = zalloc(a->fabric);
	h->fabric_attr->prov_name = strdup("verbs");
	return h;
}

static void test_abi(const struct abi *a)
{
	struct old_info_1_0 *hints, *info = NULL, *dup;
	void *out = NULL;
	int ret;

	fdt_check_context = a->name;

	/* fi_getinfo reads the hints (an FI_EP_DGRAM request finds nothing,
	 * so they were looked at) ... */
	hints = old_hints(a, FI_EP_DGRAM);
	ret = a->getinfo(a->api, NULL, NULL, FI_PROV_ATTR_ONLY, hints, &out);
	CHECK(ret == -FI_ENODATA);
	CHECK(out == NULL);
	a->freeinfo(hints);

	/* ... and answers in a layout whose prefix is the old one. */
	hints = old_hints(a, FI_EP_MSG);
	ret = a->getinfo(a->api, NULL, NULL, FI_PROV_ATTR_ONLY, hints, &out);
	CHECK(ret == 0);
	info = out;
	CHECK(info != NULL);
	if (info) {
		const struct fi_info *full = (const struct fi_info *)info;

		CHECK(info->ep_attr && info->ep_attr->type == FI_EP_MSG);
		CHECK(info->fabric_attr && info->fabric_attr->prov_name &&
		      !strcmp(info->fabric_attr->prov_name, "verbs"));
		CHECK(info->caps & FI_MSG);
		/* nothing the caller's ABI cannot see, nor its API knows */
		if (FI_VERSION_LT(a->api, FI_VERSION(1, 5)))
			CHECK(!(info->caps & (FI_LOCAL_COMM |
					      FI_REMOTE_COMM)));
		CHECK(full->tx_attr->tclass == 0);
		CHECK(full->domain_attr->tclass == 0);
		if (a->info < sizeof(struct fi_info))
			CHECK(full->nic == NULL);
		if (a->domain < offsetof(struct fi_domain_attr, cntr_cnt) + 1) {
			CHECK(full->domain_attr->caps == 0);
			CHECK(full->domain_attr->max_err_data == 0);
		}
		/* 1.0 ends before api_version (its padding is there) */
		if (FI_VERSION_GE(a->api, FI_VERSION(1, 5)))
			CHECK(full->fabric_attr->api_version == a->api);
		else
			CHECK(full->fabric_attr->api_version == 0);
	}

	/* fi_dupinfo of the application's own (old-size) hints */
	dup = a->dupinfo(hints);
	CHECK(dup != NULL);
	if (dup) {
		CHECK(dup->caps == FI_MSG);
		CHECK(dup->src_addr && dup->src_addr != hints->src_addr &&
		      dup->src_addrlen == hints->src_addrlen &&
		      !memcmp(dup->src_addr, hints->src_addr,
			      hints->src_addrlen));
		CHECK(dup->ep_attr && dup->ep_attr->type == FI_EP_MSG);
		CHECK(dup->domain_attr && dup->domain_attr->name &&
		      dup->domain_attr->name != hints->domain_attr->name &&
		      !strcmp(dup->domain_attr->name, "some-domain"));
		CHECK(dup->domain_attr->mr_mode == FI_MR_BASIC);
		CHECK(dup->fabric_attr &&
		      !strcmp(dup->fabric_attr->prov_name, "verbs"));
		CHECK(dup->next == NULL);
		a->freeinfo(dup);
	}

	/* fi_allocinfo goes through fi_dupinfo(NULL) */
	dup = a->dupinfo(NULL);
	CHECK(dup && dup->tx_attr && dup->rx_attr && dup->ep_attr &&
	      dup->domain_attr && dup->fabric_attr);
	a->freeinfo(dup);

	/* The old fi_freeinfo frees both what the library allocated and
	 * what the application assembled. */
	a->freeinfo(info);
	a->freeinfo(hints);
	a->freeinfo(NULL);
}

static void test_fabric_1_0(void)
{
	struct old_fabric_attr_1_0 *attr = zalloc(sizeof(*attr));
	struct fid_fabric *fabric = NULL;
	int ret;

	fdt_check_context = "fi_fabric@FABRIC_1.0";
	attr->prov_name = "verbs";
	attr->name = "IB-0xfe80000000000000";
	ret = old_fabric_1_0(attr, &fabric, NULL);
	CHECK(ret == 0 && fabric);
	if (fabric) {
		/* a pre-1.5 caller: the fabric speaks a pre-1.5 API */
		CHECK(FI_VERSION_LT(fabric->api_version, FI_VERSION(1, 5)));
		CHECK(fi_close(&fabric->fid) == 0);
	}
	CHECK(old_fabric_1_0(NULL, &fabric, NULL) == -FI_EINVAL);
	free(attr);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(abis) / sizeof(abis[0]); i++)
		test_abi(&abis[i]);
	test_fabric_1_0();
	if (fdt_check_failures) {
		fprintf(stderr, "%d check(s) failed\n", fdt_check_failures);
		return 1;
	}
	printf("old ABI entry points: all checks passed\n");
	return 0;
}
