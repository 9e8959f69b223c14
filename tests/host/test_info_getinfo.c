/*
 * fi_getinfo front end on a machine without RDMA devices: argument checks,
 * version rules, provider selection (hints prov_name, FI_PROVIDER),
 * FI_PROV_ATTR_ONLY, clean -FI_ENODATA from the verbs provider, and
 * providers registered at run time.  Private API: link against the
 * library's objects.  If the machine does have an active RDMA device the
 * "no device" expectations are skipped.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "fd_core.h"
/* FD_HAVE_RSTREAM: the built-in rstream layer answers too */
#include <fdv/fdv_config.h>
#include "fdt_check.h"

#define V117 FI_VERSION(1, 17)

static int count(const struct fi_info *fi)
{
	int n = 0;

	for (; fi; fi = fi->next)
		n++;
	return n;
}

static int have_devices(void)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);

	if (l)
		ibv_free_device_list(l);
	return n > 0;
}

static void test_versions(void)
{
	struct fi_info *info = (struct fi_info *)1;

	CHECK(fi_getinfo(V117, NULL, NULL, 0, NULL, NULL) == -FI_EINVAL,
	      "NULL info");
	CHECK(fi_getinfo(FI_VERSION(1, 18), NULL, NULL, 0, NULL, &info) ==
	      -FI_ENOSYS && info == NULL, "newer minor");
	CHECK(fi_getinfo(FI_VERSION(2, 0), NULL, NULL, 0, NULL, &info) ==
	      -FI_ENOSYS, "major 2");
	CHECK(fi_getinfo(FI_VERSION(0, 9), NULL, NULL, 0, NULL, &info) ==
	      -FI_ENOSYS, "major 0");
	CHECK(fi_getinfo(FI_VERSION(1, 0), NULL, NULL, FI_PROV_ATTR_ONLY, NULL,
			 &info) == 0, "1.0 is fine");
	fi_freeinfo(info);
}

static void test_bad_hints(void)
{
	struct fi_info *hints = fi_allocinfo(), *info;
	struct sockaddr_in sin = { .sin_family = AF_INET };

	hints->src_addr = &sin;
	CHECK(fi_getinfo(V117, NULL, NULL, 0, hints, &info) == -FI_EINVAL,
	      "src_addr without length");
	hints->src_addr = NULL;
	hints->dest_addrlen = sizeof(sin);
	CHECK(fi_getinfo(V117, NULL, NULL, 0, hints, &info) == -FI_EINVAL,
	      "length without dest_addr");
	hints->dest_addrlen = 0;
	fi_freeinfo(hints);
}

static void test_no_devices(void)
{
	struct fi_info *hints, *info = (struct fi_info *)1;

	if (have_devices()) {
		printf("note: RDMA devices present, skipping no-device checks\n");
		return;
	}
	CHECK(fi_getinfo(V117, NULL, NULL, 0, NULL, &info) == -FI_ENODATA &&
	      info == NULL, "no hints");
	CHECK(fi_getinfo(V117, "10.0.0.1", "7471", FI_NUMERICHOST, NULL,
			 &info) == -FI_ENODATA, "node");
	CHECK(fi_getinfo(V117, NULL, "7471", FI_SOURCE, NULL, &info) ==
	      -FI_ENODATA, "passive");
	hints = fi_allocinfo();
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	hints->mode = ~0ULL;
	hints->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);
	CHECK(fi_getinfo(V117, NULL, NULL, 0, hints, &info) == -FI_ENODATA,
	      "hints");
	fi_freeinfo(hints);
}

static void test_prov_attr_only(void)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;

	CHECK(fi_getinfo(FI_VERSION(1, 10), NULL, NULL, FI_PROV_ATTR_ONLY, NULL,
			 &info) == 0, "attr only");
	CHECK(count(info) == 1 + FD_HAVE_RSTREAM, "one entry per provider: %d",
	      count(info));
	if (info) {
		CHECK(!strcmp(info->fabric_attr->prov_name, "verbs"), "name");
		CHECK(info->fabric_attr->prov_version == FI_VERSION(117, 0),
		      "prov_version");
		CHECK(info->fabric_attr->api_version == FI_VERSION(1, 10),
		      "api_version");
		CHECK(info->ep_attr->type == FI_EP_MSG, "MSG");
		CHECK((info->caps & (FI_MSG | FI_RMA)) == (FI_MSG | FI_RMA),
		      "caps");
	}
	fi_freeinfo(info);

	hints->fabric_attr->prov_name = strdup("tcp");
	CHECK(fi_getinfo(V117, NULL, NULL, FI_PROV_ATTR_ONLY, hints, &info) ==
	      -FI_ENODATA, "other provider asked");
	free(hints->fabric_attr->prov_name);
	hints->fabric_attr->prov_name = strdup("Verbs");
	CHECK(fi_getinfo(V117, NULL, NULL, FI_PROV_ATTR_ONLY, hints, &info) ==
	      0 && count(info) == 1 + FD_HAVE_RSTREAM, "verbs asked");
	fi_freeinfo(info);
	free(hints->fabric_attr->prov_name);
	/* A layer nobody provides: the core alone does not answer it. */
	hints->fabric_attr->prov_name = strdup(FD_HAVE_RSTREAM ? "verbs;nolayer" :
					       "verbs;rstream");
	CHECK(fi_getinfo(V117, NULL, NULL, FI_PROV_ATTR_ONLY, hints, &info) ==
	      -FI_ENODATA, "missing layer");
	free(hints->fabric_attr->prov_name);
	hints->fabric_attr->prov_name = NULL;

	hints->ep_attr->type = FI_EP_RDM;
	CHECK(fi_getinfo(V117, NULL, NULL, FI_PROV_ATTR_ONLY, hints, &info) ==
	      -FI_ENODATA, "RDM");
	fi_freeinfo(hints);

	setenv("FI_PROVIDER", "tcp,udp", 1);
	CHECK(fi_getinfo(V117, NULL, NULL, FI_PROV_ATTR_ONLY, NULL, &info) ==
	      -FI_ENODATA, "FI_PROVIDER excludes verbs");
	setenv("FI_PROVIDER", "^verbs", 1);
	CHECK(fi_getinfo(V117, NULL, NULL, FI_PROV_ATTR_ONLY, NULL, &info) ==
	      -FI_ENODATA, "FI_PROVIDER=^verbs");
	setenv("FI_PROVIDER", "tcp,verbs", 1);
	CHECK(fi_getinfo(V117, NULL, NULL, FI_PROV_ATTR_ONLY, NULL, &info) ==
	      0, "FI_PROVIDER lists verbs");
	fi_freeinfo(info);
	unsetenv("FI_PROVIDER");
}

/* A layered provider the test's own table lists after the configured
 * ones (tests/host/registry/fd_providers.h); it answers only once
 * test_registered switches it on, so the tests before see the library's
 * providers alone. */
static int fake_calls, fake_enabled;

static int fake_getinfo(uint32_t version, const char *node,
			const char *service, uint64_t flags,
			const struct fi_info *hints, struct fi_info **info)
{
	struct fi_info *fi;

	(void)node;
	(void)service;
	(void)flags;
	(void)hints;
	(void)version;
	if (!fake_enabled)
		return -FI_ENODATA;
	fake_calls++;
	fi = fi_allocinfo();
	if (!fi)
		return -FI_ENOMEM;
	fi->ep_attr->type = FI_EP_SOCK_STREAM;
	*info = fi;
	return 0;
}

const struct fd_provider fdt_fake_provider = {
	.name = "verbs;fake",
	.getinfo = fake_getinfo,
};

static void test_registered(void)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;

	fake_enabled = 1;
	CHECK(fi_getinfo(FI_VERSION(1, 12), NULL, NULL, FI_PROV_ATTR_ONLY, NULL,
			 &info) == 0, "both");
	CHECK(count(info) == 2 + FD_HAVE_RSTREAM, "verbs then the layer: %d",
	      count(info));
	if (count(info) == 2 + FD_HAVE_RSTREAM) {
		struct fi_info *layer = FD_HAVE_RSTREAM ? info->next->next :
					info->next;

		CHECK(!strcmp(info->fabric_attr->prov_name, "verbs"), "first");
		CHECK(!strcmp(layer->fabric_attr->prov_name,
			      "verbs;fake") &&
		      layer->fabric_attr->api_version ==
		      FI_VERSION(1, 12) &&
		      layer->fabric_attr->prov_version ==
		      FI_VERSION(117, 0), "core stamped the layer's entry");
	}
	fi_freeinfo(info);

	hints->fabric_attr->prov_name = strdup("fake");
	fake_calls = 0;
	CHECK(fi_getinfo(V117, NULL, NULL, 0, hints, &info) == 0 &&
	      count(info) == 1 && fake_calls == 1, "by layer name");
	fi_freeinfo(info);
	free(hints->fabric_attr->prov_name);
	hints->fabric_attr->prov_name = strdup("verbs;fake");
	CHECK(fi_getinfo(V117, NULL, NULL, 0, hints, &info) == 0 &&
	      count(info) == 1 && info->ep_attr->type == FI_EP_SOCK_STREAM,
	      "by full name");
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

int main(void)
{
	test_versions();
	test_bad_hints();
	test_no_devices();
	test_prov_attr_only();
	test_registered();
	if (fdt_check_failures) {
		printf("test_info_getinfo: %d fdt_check_failures\n", fdt_check_failures);
		return 1;
	}
	printf("test_info_getinfo: ok\n");
	return 0;
}
