/*
 * fi_tostr output compared, case by case, with Debian's libfabric 1.17
 * (libfabric.so.1, loaded privately with dlopen) so scripts parsing the
 * text keep working.  Exits 77 (skip) when that library is not installed,
 * and in a sanitizer build: ASan, TSan and MSan abort any dlopen with
 * RTLD_DEEPBIND, and without DEEPBIND the reference library's internal
 * calls would bind to this library's fi_* symbols and compare us with
 * ourselves.
 *
 * Known, intended differences are not exercised: addresses whose
 * sa_family disagrees with addr_format (libfabric decodes them wrongly),
 * the rarely used IB_UD/EFA/BGQ/MLX/SOCKADDR_IB address formats, and
 * fi_info.handle values that are not fids (libfabric dereferences them).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_trigger.h>

typedef char *(*tostr_r_fn)(char *, size_t, const void *, enum fi_type);

static tostr_r_fn ref_tostr_r;
static int failures, cases;

#define BUFLEN 16384

static void compare(const char *label, const void *data, enum fi_type t)
{
	static char mine[BUFLEN], theirs[BUFLEN];

	cases++;
	fi_tostr_r(mine, sizeof(mine), data, t);
	ref_tostr_r(theirs, sizeof(theirs), data, t);
	if (strcmp(mine, theirs)) {
		size_t at = 0;

		while (mine[at] == theirs[at])
			at++;
		while (at && mine[at - 1] != '\n')
			at--;
		failures++;
		fprintf(stderr, "MISMATCH %s, from:\n--- ours\n%.200s\n"
			"--- libfabric\n%.200s\n", label, mine + at,
			theirs + at);
	}
}

static void bits64(const char *name, enum fi_type t)
{
	char label[64];
	uint64_t v;

	for (int b = 0; b < 64; b++) {
		v = 1ULL << b;
		snprintf(label, sizeof(label), "%s bit %d", name, b);
		compare(label, &v, t);
	}
	v = 0;
	compare(name, &v, t);
	v = ~0ULL;
	compare(name, &v, t);
	v = 0x0123456789abcdefULL;
	compare(name, &v, t);
}

static void enums(const char *name, enum fi_type t, int lo, int hi)
{
	char label[64];

	for (int i = lo; i <= hi; i++) {
		snprintf(label, sizeof(label), "%s %d", name, i);
		compare(label, &i, t);
	}
}

static void attrs(struct fi_info *info, const char *label)
{
	char l[128];

	snprintf(l, sizeof(l), "%s info", label);
	compare(l, info, FI_TYPE_INFO);
	snprintf(l, sizeof(l), "%s tx", label);
	compare(l, info->tx_attr, FI_TYPE_TX_ATTR);
	snprintf(l, sizeof(l), "%s rx", label);
	compare(l, info->rx_attr, FI_TYPE_RX_ATTR);
	snprintf(l, sizeof(l), "%s ep", label);
	compare(l, info->ep_attr, FI_TYPE_EP_ATTR);
	snprintf(l, sizeof(l), "%s domain", label);
	compare(l, info->domain_attr, FI_TYPE_DOMAIN_ATTR);
	snprintf(l, sizeof(l), "%s fabric", label);
	compare(l, info->fabric_attr, FI_TYPE_FABRIC_ATTR);
}

static void info_cases(void)
{
	static struct fid pep = { .fclass = FI_CLASS_PEP };
	struct sockaddr_in sin = { 0 };
	struct sockaddr_in6 sin6 = { 0 };
	uint64_t raw[4] = { 1, 2, 3, 4 };
	struct fi_info *info = fi_allocinfo();
	uint64_t order;

	attrs(info, "empty");

	info->caps = FI_MSG | FI_RMA | FI_READ | FI_LOCAL_COMM;
	info->mode = FI_CONTEXT | FI_RX_CQ_DATA;
	info->handle = &pep;
	info->tx_attr->caps = FI_MSG | FI_SEND;
	info->tx_attr->op_flags = FI_INJECT | FI_COMPLETION |
				  FI_TRANSMIT_COMPLETE;
	info->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_RMA_WAW;
	info->tx_attr->inject_size = 64;
	info->tx_attr->size = 384;
	info->tx_attr->iov_limit = 4;
	info->tx_attr->rma_iov_limit = 1;
	info->tx_attr->tclass = FI_TC_LOW_LATENCY;
	info->rx_attr->caps = FI_MSG | FI_RECV;
	info->rx_attr->mode = FI_RX_CQ_DATA;
	info->rx_attr->op_flags = FI_COMPLETION;
	info->rx_attr->total_buffered_recv = 7;
	info->rx_attr->size = 1024;
	info->ep_attr->type = FI_EP_MSG;
	info->ep_attr->protocol = FI_PROTO_RDMA_CM_IB_RC;
	info->ep_attr->protocol_version = 1;
	info->ep_attr->max_msg_size = 1U << 31;
	info->ep_attr->mem_tag_format = 0xaaaa5555;
	info->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
	/* libfabric prints only the low 32 bits of this pointer; ours
	 * prints all of it.  A small value reads the same in both. */
	info->domain_attr->domain = (struct fid_domain *)(uintptr_t)0xabc0;
	info->domain_attr->name = strdup("rxe0");
	info->domain_attr->threading = FI_THREAD_DOMAIN;
	info->domain_attr->control_progress = FI_PROGRESS_AUTO;
	info->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	info->domain_attr->resource_mgmt = FI_RM_ENABLED;
	info->domain_attr->av_type = FI_AV_TABLE;
	info->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				     FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	info->domain_attr->mr_key_size = 4;
	info->domain_attr->cq_data_size = 4;
	info->domain_attr->cq_cnt = 65536;
	info->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	info->domain_attr->max_err_data = 255;
	info->domain_attr->tclass = 0x123;
	info->fabric_attr->name = strdup("IB-0xfe80000000000000");
	info->fabric_attr->prov_name = strdup("verbs");
	info->fabric_attr->prov_version = FI_VERSION(117, 0);
	info->fabric_attr->api_version = FI_VERSION(1, 17);

	sin.sin_family = AF_INET;
	sin.sin_port = htons(7471);
	inet_pton(AF_INET, "10.0.0.1", &sin.sin_addr);
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(9);
	inet_pton(AF_INET6, "fe80::1:2", &sin6.sin6_addr);

	info->addr_format = FI_SOCKADDR_IN;
	info->src_addr = &sin;
	info->src_addrlen = sizeof(sin);
	attrs(info, "in");

	info->addr_format = FI_SOCKADDR_IN6;
	info->src_addr = NULL;
	info->src_addrlen = 0;
	info->dest_addr = &sin6;
	info->dest_addrlen = sizeof(sin6);
	attrs(info, "in6");

	info->addr_format = FI_SOCKADDR;
	info->src_addr = &sin;
	info->src_addrlen = sizeof(sin);
	attrs(info, "sockaddr");

	info->addr_format = FI_FORMAT_UNSPEC;
	attrs(info, "unspec");
	info->dest_addr = NULL;
	info->dest_addrlen = 0;

	info->addr_format = FI_ADDR_STR;
	info->src_addr = "fi_sockaddr_in://1.2.3.4:5";
	info->src_addrlen = strlen(info->src_addr) + 1;
	attrs(info, "str");

	info->src_addr = raw;
	info->addr_format = FI_ADDR_PSMX;
	info->src_addrlen = 8;
	attrs(info, "psmx");
	info->addr_format = FI_ADDR_PSMX2;
	info->src_addrlen = 16;
	attrs(info, "psmx2");
	info->addr_format = FI_ADDR_PSMX3;
	info->src_addrlen = 32;
	attrs(info, "psmx3");
	info->addr_format = FI_ADDR_GNI;
	info->src_addrlen = 8;
	attrs(info, "gni");
	info->addr_format = FI_ADDR_OPX;
	attrs(info, "opx");
	info->addr_format = FI_ADDR_CXI;
	attrs(info, "cxi");
	info->src_addr = NULL;
	info->src_addrlen = 0;

	/* Completion order is printed by its own rules. */
	order = 0;
	for (int k = 0; k < 6; k++) {
		static const uint64_t v[] = {
			0, FI_ORDER_STRICT, FI_ORDER_DATA,
			FI_ORDER_STRICT | FI_ORDER_DATA, FI_ORDER_RAR,
			FI_ORDER_DATA | FI_ORDER_SAS,
		};
		char l[32];

		order = v[k];
		info->tx_attr->comp_order = order;
		info->rx_attr->comp_order = order;
		snprintf(l, sizeof(l), "comp_order %d", k);
		attrs(info, l);
	}
	info->rx_attr->msg_order = FI_ORDER_STRICT;
	attrs(info, "msg_order strict");

	/* Missing attributes print as (null). */
	free(info->tx_attr);
	info->tx_attr = NULL;
	free(info->ep_attr);
	info->ep_attr = NULL;
	compare("partial", info, FI_TYPE_INFO);
	free(info->rx_attr);
	info->rx_attr = NULL;
	free(info->domain_attr->name);
	free(info->domain_attr);
	info->domain_attr = NULL;
	free(info->fabric_attr->name);
	free(info->fabric_attr->prov_name);
	free(info->fabric_attr);
	info->fabric_attr = NULL;
	compare("bare", info, FI_TYPE_INFO);
	info->handle = NULL;
	fi_freeinfo(info);
}

/* The sanitizers whose dlopen interceptor kills a process that passes
 * RTLD_DEEPBIND. Asked at run time (their runtime's entry symbol), so the
 * answer holds whatever compiler or flags built this file. */
static const char *deepbind_refusing_sanitizer(void)
{
	static const char *const init[] = { "__asan_init", "__tsan_init", "__msan_init" };

	for (size_t i = 0; i < sizeof(init) / sizeof(init[0]); i++)
		if (dlsym(RTLD_DEFAULT, init[i]))
			return init[i];
	return NULL;
}

int main(void)
{
	static const enum fi_type all_types[] = {
		FI_TYPE_INFO, FI_TYPE_EP_TYPE, FI_TYPE_CAPS, FI_TYPE_OP_FLAGS,
		FI_TYPE_ADDR_FORMAT, FI_TYPE_TX_ATTR, FI_TYPE_RX_ATTR,
		FI_TYPE_EP_ATTR, FI_TYPE_DOMAIN_ATTR, FI_TYPE_FABRIC_ATTR,
		FI_TYPE_THREADING, FI_TYPE_PROGRESS, FI_TYPE_PROTOCOL,
		FI_TYPE_MSG_ORDER, FI_TYPE_MODE, FI_TYPE_AV_TYPE,
		FI_TYPE_ATOMIC_TYPE, FI_TYPE_ATOMIC_OP, FI_TYPE_VERSION,
		FI_TYPE_EQ_EVENT, FI_TYPE_CQ_EVENT_FLAGS, FI_TYPE_MR_MODE,
		FI_TYPE_OP_TYPE, FI_TYPE_FID, FI_TYPE_COLLECTIVE_OP,
		FI_TYPE_HMEM_IFACE, FI_TYPE_CQ_FORMAT, FI_TYPE_LOG_LEVEL,
		FI_TYPE_LOG_SUBSYS,
	};
	struct fid fid = { .fclass = FI_CLASS_EP };
	uint32_t version = FI_VERSION(1, 5);
	void *lib;
	int v;

	if (deepbind_refusing_sanitizer()) {
		printf("SKIP: sanitizer runtime (%s) refuses dlopen(RTLD_DEEPBIND)\n",
		       deepbind_refusing_sanitizer());
		return 77;
	}
	lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
	if (!lib) {
		printf("SKIP: libfabric.so.1 not available (%s)\n", dlerror());
		return 77;
	}
	ref_tostr_r = (tostr_r_fn)dlsym(lib, "fi_tostr_r");
	if (!ref_tostr_r) {
		printf("SKIP: no fi_tostr_r in libfabric.so.1\n");
		return 77;
	}

	bits64("caps", FI_TYPE_CAPS);
	bits64("op_flags", FI_TYPE_OP_FLAGS);
	bits64("msg_order", FI_TYPE_MSG_ORDER);
	bits64("mode", FI_TYPE_MODE);
	bits64("cq_flags", FI_TYPE_CQ_EVENT_FLAGS);
	for (int b = 0; b < 32; b++) {
		v = (int)(1U << b);
		compare("mr_mode bit", &v, FI_TYPE_MR_MODE);
	}
	v = 0;
	compare("mr_mode 0", &v, FI_TYPE_MR_MODE);
	v = -1;
	compare("mr_mode all", &v, FI_TYPE_MR_MODE);

	enums("ep_type", FI_TYPE_EP_TYPE, -1, 8);
	enums("addr_format", FI_TYPE_ADDR_FORMAT, -1, 20);
	enums("threading", FI_TYPE_THREADING, -1, 8);
	enums("progress", FI_TYPE_PROGRESS, -1, 5);
	enums("protocol", FI_TYPE_PROTOCOL, -1, 30);
	enums("av_type", FI_TYPE_AV_TYPE, -1, 4);
	enums("atomic_type", FI_TYPE_ATOMIC_TYPE, -1, 20);
	enums("atomic_op", FI_TYPE_ATOMIC_OP, -1, 22);
	enums("eq_event", FI_TYPE_EQ_EVENT, -1, 9);
	enums("op_type", FI_TYPE_OP_TYPE, -1, 12);
	enums("collective", FI_TYPE_COLLECTIVE_OP, -1, 12);
	enums("hmem", FI_TYPE_HMEM_IFACE, -1, 8);
	enums("cq_format", FI_TYPE_CQ_FORMAT, -1, 7);
	enums("log_level", FI_TYPE_LOG_LEVEL, -1, 6);
	enums("log_subsys", FI_TYPE_LOG_SUBSYS, -1, 12);
	v = FI_VOID;
	compare("FI_VOID", &v, FI_TYPE_ATOMIC_TYPE);
	v = FI_NOOP;
	compare("FI_NOOP", &v, FI_TYPE_ATOMIC_OP);
	v = (int)FI_PROV_SPECIFIC | 3;
	compare("prov addr_format", &v, FI_TYPE_ADDR_FORMAT);
	compare("prov protocol", &v, FI_TYPE_PROTOCOL);

	compare("version", &version, FI_TYPE_VERSION);
	compare("fid", &fid, FI_TYPE_FID);
	v = 0;
	compare("unknown type", &v, (enum fi_type)99);

	/* NULL data is not compared: libfabric's fi_tostr returns NULL and
	 * its fi_tostr_r "Unknown type"; ours print "(null)" (test_tostr). */
	(void)all_types;

	info_cases();

	printf("%d cases, %d mismatches\n", cases, failures);
	return failures ? 1 : 0;
}
