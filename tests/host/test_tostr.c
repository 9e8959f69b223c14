/*
 * fi_tostr / fi_tostr_r: content of the text for known data, truncation
 * without overrun, NULL handling, and per-thread buffers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include "fdt_check.h"

#define CONTAINS(text, needle)						\
	CHECK(strstr((text), (needle)) != NULL, "missing [%s] in:\n%s",	\
	      (needle), (text))

static struct fi_info *make_info(void)
{
	struct fi_info *info = fi_allocinfo();
	struct sockaddr_in *sin = calloc(1, sizeof(*sin));
	struct sockaddr_in6 *sin6 = calloc(1, sizeof(*sin6));

	if (!info || !sin || !sin6)
		exit(1);
	sin->sin_family = AF_INET;
	sin->sin_port = htons(7471);
	inet_pton(AF_INET, "10.0.0.1", &sin->sin_addr);
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(9);
	inet_pton(AF_INET6, "fe80::1", &sin6->sin6_addr);

	info->caps = FI_MSG | FI_RMA | FI_LOCAL_COMM;
	info->mode = FI_RX_CQ_DATA;
	info->addr_format = FI_SOCKADDR_IN;
	info->src_addr = sin;
	info->src_addrlen = sizeof(*sin);
	info->dest_addr = sin6;
	info->dest_addrlen = sizeof(*sin6);
	info->tx_attr->inject_size = 256;
	info->tx_attr->size = 384;
	info->tx_attr->op_flags = FI_INJECT | FI_COMPLETION;
	info->tx_attr->comp_order = FI_ORDER_STRICT;
	info->rx_attr->comp_order = FI_ORDER_STRICT | FI_ORDER_DATA;
	info->ep_attr->type = FI_EP_MSG;
	info->ep_attr->protocol = FI_PROTO_RDMA_CM_IB_RC;
	info->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	info->domain_attr->name = strdup("rxe0");
	info->domain_attr->threading = FI_THREAD_DOMAIN;
	info->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				     FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	info->fabric_attr->name = strdup("IB-0xfe80000000000000");
	info->fabric_attr->prov_name = strdup("verbs");
	info->fabric_attr->prov_version = FI_VERSION(117, 0);
	info->fabric_attr->api_version = FI_VERSION(1, 17);
	return info;
}

static void test_info_text(void)
{
	struct fi_info *info = make_info();
	const char *s = fi_tostr(info, FI_TYPE_INFO);

	CHECK(!strncmp(s, "fi_info:\n", 9), "starts with [%.20s]", s);
	CONTAINS(s, "\n    caps: [ FI_MSG, FI_RMA, FI_LOCAL_COMM ]\n");
	CONTAINS(s, "\n    mode: [ FI_RX_CQ_DATA ]\n");
	CONTAINS(s, "\n    addr_format: FI_SOCKADDR_IN\n");
	CONTAINS(s, "\n    src_addr: fi_sockaddr_in://10.0.0.1:7471\n");
	/* Printed by its own family even though addr_format says IN. */
	CONTAINS(s, "\n    dest_addr: fi_sockaddr_in6://[fe80::1]:9\n");
	CONTAINS(s, "\n    handle: (nil)\n");
	CONTAINS(s, "\n    fi_tx_attr:\n        caps: [  ]\n");
	CONTAINS(s, "\n        op_flags: [ FI_COMPLETION, FI_INJECT ]\n");
	CONTAINS(s, "\n        comp_order: [ FI_ORDER_STRICT ]\n");
	CONTAINS(s, "\n        inject_size: 256\n        size: 384\n");
	CONTAINS(s, "\n        comp_order: [ FI_ORDER_STRICT, FI_ORDER_DATA ]\n");
	CONTAINS(s, "\n        type: FI_EP_MSG\n"
		    "        protocol: FI_PROTO_RDMA_CM_IB_RC\n");
	CONTAINS(s, "\n        rx_ctx_cnt: FI_SHARED_CONTEXT\n");
	CONTAINS(s, "\n        name: rxe0\n        threading: FI_THREAD_DOMAIN\n");
	CONTAINS(s, "\n        mr_mode: [ FI_MR_LOCAL, FI_MR_VIRT_ADDR, "
		    "FI_MR_ALLOCATED, FI_MR_PROV_KEY ]\n");
	CONTAINS(s, "\n    fi_fabric_attr:\n        name: IB-0xfe80000000000000\n"
		    "        prov_name: verbs\n        prov_version: 117.0\n"
		    "        api_version: 1.17\n");
	CHECK(strlen(s) > 16 && !strcmp(s + strlen(s) - 16, "\n    nic: (nil)\n"),
	      "last line is nic: %s", s);

	/* Only the entry given is printed, not the rest of a list. */
	info->next = make_info();
	free(info->next->fabric_attr->name);
	info->next->fabric_attr->name = strdup("SECOND");
	s = fi_tostr(info, FI_TYPE_INFO);
	CHECK(!strstr(s, "SECOND"), "second entry printed");
	fi_freeinfo(info);
}

static void test_attrs_alone(void)
{
	struct fi_info *info = make_info();
	const char *s;

	s = fi_tostr(info->tx_attr, FI_TYPE_TX_ATTR);
	CHECK(!strncmp(s, "fi_tx_attr:\n    caps: [  ]\n", 27), "tx: %s", s);
	s = fi_tostr(info->fabric_attr, FI_TYPE_FABRIC_ATTR);
	CHECK(!strcmp(s, "fi_fabric_attr:\n    name: IB-0xfe80000000000000\n"
		      "    prov_name: verbs\n    prov_version: 117.0\n"
		      "    api_version: 1.17\n"), "fabric: %s", s);

	free(info->ep_attr);
	info->ep_attr = NULL;
	s = fi_tostr(info, FI_TYPE_INFO);
	CONTAINS(s, "\n    fi_ep_attr: (null)\n    fi_domain_attr:\n");
	fi_freeinfo(info);
}

static void test_scalars(void)
{
	uint64_t caps = FI_MSG | FI_SEND | FI_REMOTE_COMM;
	uint64_t none = 0;
	uint32_t fmt = FI_SOCKADDR_IN6, ver = FI_VERSION(1, 17);
	int ep = FI_EP_SOCK_STREAM, bad = 77, mr = FI_MR_BASIC;
	int level = 2, subsys = 4;
	uint32_t ev = FI_CONNREQ, proto = FI_PROTO_RSTREAM;

	CHECK(!strcmp(fi_tostr(&caps, FI_TYPE_CAPS),
		      "FI_MSG, FI_SEND, FI_REMOTE_COMM"), "caps");
	CHECK(!strcmp(fi_tostr(&none, FI_TYPE_CAPS), ""), "empty caps");
	CHECK(!strcmp(fi_tostr(&fmt, FI_TYPE_ADDR_FORMAT), "FI_SOCKADDR_IN6"),
	      "fmt");
	CHECK(!strcmp(fi_tostr(&ep, FI_TYPE_EP_TYPE), "FI_EP_SOCK_STREAM"),
	      "ep");
	CHECK(!strcmp(fi_tostr(&bad, FI_TYPE_EP_TYPE), "Unknown"), "bad ep");
	CHECK(!strcmp(fi_tostr(&mr, FI_TYPE_MR_MODE), "FI_MR_BASIC"), "mr");
	CHECK(!strcmp(fi_tostr(&ev, FI_TYPE_EQ_EVENT), "FI_CONNREQ"), "ev");
	CHECK(!strcmp(fi_tostr(&proto, FI_TYPE_PROTOCOL), "FI_PROTO_RSTREAM"),
	      "proto");
	CHECK(!strcmp(fi_tostr(&ver, FI_TYPE_VERSION), "1.17.0"), "version");
	CHECK(!strcmp(fi_tostr(&level, FI_TYPE_LOG_LEVEL), "info"), "level");
	CHECK(!strcmp(fi_tostr(&subsys, FI_TYPE_LOG_SUBSYS), "ep_data"),
	      "subsys");
	CHECK(!strcmp(fi_tostr(&bad, (enum fi_type)1000), "Unknown type"),
	      "type");
}

static void test_null_and_truncation(void)
{
	struct fi_info *info = make_info();
	char full[8192], buf[64];
	char *r;

	for (int t = FI_TYPE_INFO; t <= FI_TYPE_LOG_SUBSYS; t++)
		CHECK(!strcmp(fi_tostr(NULL, (enum fi_type)t), "(null)"),
		      "NULL data, type %d", t);

	/* Truncated to len - 1 characters, terminated, nothing beyond. */
	fi_tostr_r(full, sizeof(full), info, FI_TYPE_INFO);
	CHECK(strlen(full) > 1000, "full text %zu", strlen(full));
	for (size_t len = 1; len < 40; len++) {
		memset(buf, 'X', sizeof(buf));
		r = fi_tostr_r(buf, len, info, FI_TYPE_INFO);
		CHECK(r == buf, "returns buf");
		CHECK(strlen(buf) == len - 1, "len %zu -> %zu", len,
		      strlen(buf));
		CHECK(!strncmp(buf, full, len - 1), "prefix at len %zu", len);
		for (size_t i = len; i < sizeof(buf); i++)
			CHECK(buf[i] == 'X', "overrun at %zu (len %zu)", i, len);
	}
	CHECK(fi_tostr_r(buf, 0, info, FI_TYPE_INFO) == NULL, "len 0");
	CHECK(fi_tostr_r(NULL, 10, info, FI_TYPE_INFO) == NULL, "NULL buf");
	fi_freeinfo(info);
}

static int fid_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid;
	snprintf(buf, len, "my object");
	return 0;
}

static void test_fid(void)
{
	static struct fi_ops ops = { .size = sizeof(ops), .tostr = fid_tostr };
	struct fid fid = { .fclass = FI_CLASS_EP };
	char expect[64];

	snprintf(expect, sizeof(expect), "fid: %p\n", (void *)&fid);
	CHECK(!strcmp(fi_tostr(&fid, FI_TYPE_FID), expect), "plain fid");
	fid.ops = &ops;
	CHECK(!strcmp(fi_tostr(&fid, FI_TYPE_FID), "my object"), "own tostr");
}

/* Each thread sees its own fi_tostr buffer. */
static void *thread_main(void *arg)
{
	int ep = (int)(intptr_t)arg;
	const char *expect = ep == FI_EP_MSG ? "FI_EP_MSG" : "FI_EP_RDM";

	for (int i = 0; i < 100000; i++) {
		const char *s = fi_tostr(&ep, FI_TYPE_EP_TYPE);

		if (strcmp(s, expect))
			return (void *)1;
	}
	return NULL;
}

static void test_threads(void)
{
	pthread_t a, b;
	void *ra, *rb;

	pthread_create(&a, NULL, thread_main, (void *)(intptr_t)FI_EP_MSG);
	pthread_create(&b, NULL, thread_main, (void *)(intptr_t)FI_EP_RDM);
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	CHECK(!ra && !rb, "threads saw each other's text");
}

int main(void)
{
	test_info_text();
	test_attrs_alone();
	test_scalars();
	test_null_and_truncation();
	test_fid();
	test_threads();
	if (fdt_check_failures) {
		printf("test_tostr: %d fdt_check_failures\n", fdt_check_failures);
		return 1;
	}
	printf("test_tostr: ok\n");
	return 0;
}
