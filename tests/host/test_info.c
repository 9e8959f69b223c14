/*
 * fi_allocinfo / fi_dupinfo / fi_freeinfo / fi_version.
 * Run under valgrind to also prove the copies leak nothing:
 *   valgrind --leak-check=full --error-exitcode=9 ./test_info
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
#include "fdt_check.h"

static int all_zero(const void *p, size_t len)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < len; i++)
		if (c[i])
			return 0;
	return 1;
}

static void test_alloc(void)
{
	struct fi_info *info = fi_allocinfo();

	CHECK(info != NULL, "allocinfo");
	if (!info)
		return;
	CHECK(info->tx_attr && info->rx_attr && info->ep_attr &&
	      info->domain_attr && info->fabric_attr, "all attributes");
	CHECK(!info->nic && !info->next && !info->src_addr &&
	      !info->dest_addr && !info->handle, "pointers NULL");
	CHECK(!info->caps && !info->mode && !info->addr_format, "scalars 0");
	CHECK(all_zero(info->tx_attr, sizeof(*info->tx_attr)), "tx zero");
	CHECK(all_zero(info->rx_attr, sizeof(*info->rx_attr)), "rx zero");
	CHECK(all_zero(info->ep_attr, sizeof(*info->ep_attr)), "ep zero");
	CHECK(all_zero(info->domain_attr, sizeof(*info->domain_attr)),
	      "domain zero");
	CHECK(all_zero(info->fabric_attr, sizeof(*info->fabric_attr)),
	      "fabric zero");
	fi_freeinfo(info);
	fi_freeinfo(NULL);
}

static struct fi_info *make_full(struct fid *handle)
{
	struct fi_info *info = fi_allocinfo();
	struct sockaddr_in *sin = calloc(1, sizeof(*sin));
	struct sockaddr_in6 *sin6 = calloc(1, sizeof(*sin6));
	static const uint8_t key[] = { 1, 2, 3, 4, 5 };

	sin->sin_family = AF_INET;
	sin->sin_port = htons(7471);
	inet_pton(AF_INET, "10.0.0.1", &sin->sin_addr);
	sin6->sin6_family = AF_INET6;
	inet_pton(AF_INET6, "fe80::5", &sin6->sin6_addr);

	info->caps = FI_MSG | FI_RMA;
	info->mode = FI_RX_CQ_DATA;
	info->addr_format = FI_SOCKADDR_IN;
	info->src_addr = sin;
	info->src_addrlen = sizeof(*sin);
	info->dest_addr = sin6;
	info->dest_addrlen = sizeof(*sin6);
	info->handle = handle;
	info->tx_attr->size = 384;
	info->tx_attr->inject_size = 64;
	info->rx_attr->size = 385;
	info->ep_attr->type = FI_EP_MSG;
	info->ep_attr->max_msg_size = 1 << 30;
	info->ep_attr->auth_key = malloc(sizeof(key));
	memcpy(info->ep_attr->auth_key, key, sizeof(key));
	info->ep_attr->auth_key_size = sizeof(key);
	info->domain_attr->name = strdup("rxe0");
	info->domain_attr->mr_mode = FI_MR_LOCAL;
	info->domain_attr->auth_key = malloc(3);
	memcpy(info->domain_attr->auth_key, key, 3);
	info->domain_attr->auth_key_size = 3;
	info->fabric_attr->name = strdup("IB-0xfe80000000000000");
	info->fabric_attr->prov_name = strdup("verbs");
	info->fabric_attr->prov_version = FI_VERSION(117, 0);
	return info;
}

static void test_dup_deep(void)
{
	struct fid handle = { .fclass = FI_CLASS_PEP };
	struct fi_info *orig = make_full(&handle);
	struct fi_info *copy = fi_dupinfo(orig);
	char before[8192];

	if (!copy) {
		CHECK(0, "dupinfo returned NULL");
		fi_freeinfo(orig);
		return;
	}
	snprintf(before, sizeof(before), "%s", fi_tostr(orig, FI_TYPE_INFO));
	CHECK(!strcmp(before, fi_tostr(copy, FI_TYPE_INFO)),
	      "copy prints the same");

	/* Everything owned is a new allocation ... */
	CHECK(copy->src_addr != orig->src_addr &&
	      !memcmp(copy->src_addr, orig->src_addr, orig->src_addrlen),
	      "src_addr");
	CHECK(copy->dest_addr != orig->dest_addr &&
	      copy->dest_addrlen == orig->dest_addrlen, "dest_addr");
	CHECK(copy->tx_attr != orig->tx_attr && copy->rx_attr != orig->rx_attr &&
	      copy->ep_attr != orig->ep_attr &&
	      copy->domain_attr != orig->domain_attr &&
	      copy->fabric_attr != orig->fabric_attr, "attributes");
	CHECK(copy->domain_attr->name != orig->domain_attr->name &&
	      !strcmp(copy->domain_attr->name, "rxe0"), "domain name");
	CHECK(copy->fabric_attr->name != orig->fabric_attr->name &&
	      copy->fabric_attr->prov_name != orig->fabric_attr->prov_name,
	      "fabric names");
	CHECK(copy->ep_attr->auth_key != orig->ep_attr->auth_key &&
	      copy->ep_attr->auth_key_size == 5 &&
	      !memcmp(copy->ep_attr->auth_key, orig->ep_attr->auth_key, 5),
	      "ep auth key");
	CHECK(copy->domain_attr->auth_key != orig->domain_attr->auth_key &&
	      copy->domain_attr->auth_key_size == 3, "domain auth key");
	/* ... except the handle, which is only referenced. */
	CHECK(copy->handle == &handle, "handle copied as a pointer");
	CHECK(copy->next == NULL, "next not followed");

	/* Changing the copy leaves the original alone. */
	copy->caps = 0;
	copy->tx_attr->size = 1;
	((struct sockaddr_in *)copy->src_addr)->sin_port = 0;
	copy->domain_attr->name[0] = 'X';
	copy->fabric_attr->prov_name[0] = 'X';
	copy->ep_attr->auth_key[0] = 99;
	free(copy->fabric_attr->name);
	copy->fabric_attr->name = strdup("changed");
	CHECK(!strcmp(before, fi_tostr(orig, FI_TYPE_INFO)),
	      "original changed with the copy");
	CHECK(orig->ep_attr->auth_key[0] == 1, "auth key shared");

	fi_freeinfo(copy);
	/* The original is intact after the copy is gone. */
	CHECK(!strcmp(before, fi_tostr(orig, FI_TYPE_INFO)), "after free");
	fi_freeinfo(orig);
}

static void test_dup_partial(void)
{
	struct fi_info *orig = fi_allocinfo();
	struct fi_info *copy;

	free(orig->tx_attr);
	orig->tx_attr = NULL;
	free(orig->fabric_attr);
	orig->fabric_attr = NULL;
	copy = fi_dupinfo(orig);
	CHECK(copy && !copy->tx_attr && !copy->fabric_attr, "NULL stays NULL");
	CHECK(copy && copy->rx_attr && copy->ep_attr && copy->domain_attr,
	      "present ones copied");
	fi_freeinfo(copy);
	fi_freeinfo(orig);
}

static void test_dup_nic(void)
{
	struct fi_device_attr dev = { .name = "rxe0", .driver = "rdma_rxe" };
	struct fi_link_attr link = { .address = "10.0.0.1", .mtu = 1024,
				     .state = FI_LINK_UP };
	struct fi_bus_attr bus = { .bus_type = FI_BUS_PCI };
	struct fid_nic nic = { .fid = { .fclass = FI_CLASS_NIC },
			       .device_attr = &dev, .bus_attr = &bus,
			       .link_attr = &link };
	struct fi_info *orig = fi_allocinfo();
	struct fi_info *copy, *copy2;
	const char *s;

	orig->nic = &nic;
	copy = fi_dupinfo(orig);
	orig->nic = NULL;
	fi_freeinfo(orig);
	if (!copy || !copy->nic) {
		CHECK(0, "nic not copied");
		fi_freeinfo(copy);
		return;
	}
	CHECK(copy->nic != &nic && copy->nic->fid.fclass == FI_CLASS_NIC,
	      "nic object");
	CHECK(copy->nic->device_attr->name != dev.name &&
	      !strcmp(copy->nic->device_attr->name, "rxe0"), "device name");
	CHECK(copy->nic->link_attr->mtu == 1024 &&
	      !strcmp(copy->nic->link_attr->address, "10.0.0.1"), "link");
	CHECK(copy->nic->bus_attr->bus_type == FI_BUS_PCI, "bus");
	s = fi_tostr(copy, FI_TYPE_INFO);
	CHECK(strstr(s, "    nic:\n        fi_device_attr:\n"
			"            name: rxe0\n") &&
	      strstr(s, "state: FI_LINK_UP\n"), "nic printed: %s", s);

	/* A copy of a copy, then both freed through their nic's close. */
	copy2 = fi_dupinfo(copy);
	CHECK(copy2 && copy2->nic && copy2->nic != copy->nic, "second copy");
	fi_freeinfo(copy2);
	fi_freeinfo(copy);
}

static void test_free_list(void)
{
	struct fi_info *head = NULL;

	for (int i = 0; i < 5; i++) {
		struct fi_info *fi = make_full(NULL);

		fi->next = head;
		head = fi;
	}
	fi_freeinfo(head);	/* valgrind checks the whole list went */
}

int main(void)
{
	CHECK(fi_version() == FI_VERSION(1, 17), "fi_version 0x%x",
	      fi_version());
	test_alloc();
	test_dup_deep();
	test_dup_partial();
	test_dup_nic();
	test_free_list();
	if (fdt_check_failures) {
		printf("test_info: %d fdt_check_failures\n", fdt_check_failures);
		return 1;
	}
	printf("test_info: ok\n");
	return 0;
}
