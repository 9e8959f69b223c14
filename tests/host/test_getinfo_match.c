/*
 * fd_info_check / fd_info_narrow against a verbs-like template: which
 * hints are accepted, that each rejection names the attribute at fault,
 * and what a narrowed fi_info says.  Private API: link against the
 * library's objects.  Clean under valgrind --leak-check=full.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "fd_core.h"
#include "fdt_check.h"

#define V117 FI_VERSION(1, 17)
#define V14 FI_VERSION(1, 4)

#define TCAPS (FI_MSG | FI_SEND | FI_RMA | FI_READ | FI_WRITE | FI_ATOMIC)
#define RCAPS (FI_MSG | FI_RECV | FI_RMA | FI_REMOTE_READ | \
	       FI_REMOTE_WRITE | FI_ATOMIC)
#define MR_NEEDED (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
		   FI_MR_PROV_KEY)
#define ORDER (FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_RAS | FI_ORDER_WAW | \
	       FI_ORDER_WAS | FI_ORDER_SAW | FI_ORDER_SAS)

/* What the verbs provider builds for an rxe device. */
static struct fi_info *make_template(void)
{
	struct fi_info *t = fi_allocinfo();

	t->caps = TCAPS | RCAPS | FI_LOCAL_COMM | FI_REMOTE_COMM;
	t->mode = FI_RX_CQ_DATA;
	t->addr_format = FI_SOCKADDR;
	t->tx_attr->caps = TCAPS;
	t->tx_attr->op_flags = FI_INJECT | FI_INJECT_COMPLETE |
			       FI_COMPLETION | FI_TRANSMIT_COMPLETE;
	t->tx_attr->msg_order = ORDER;
	t->tx_attr->comp_order = FI_ORDER_STRICT;
	t->tx_attr->inject_size = 256;
	t->tx_attr->size = 16384;
	t->tx_attr->iov_limit = 32;
	t->tx_attr->rma_iov_limit = 1;
	t->rx_attr->caps = RCAPS;
	t->rx_attr->mode = FI_RX_CQ_DATA;
	t->rx_attr->op_flags = FI_COMPLETION;
	t->rx_attr->msg_order = ORDER;
	t->rx_attr->comp_order = FI_ORDER_STRICT | FI_ORDER_DATA;
	t->rx_attr->size = 16384;
	t->rx_attr->iov_limit = 32;
	t->ep_attr->type = FI_EP_MSG;
	t->ep_attr->protocol = FI_PROTO_RDMA_CM_IB_RC;
	t->ep_attr->protocol_version = 1;
	t->ep_attr->max_msg_size = 1UL << 31;
	t->ep_attr->max_order_raw_size = 1UL << 31;
	t->ep_attr->max_order_waw_size = 1UL << 31;
	t->ep_attr->tx_ctx_cnt = 1;
	t->ep_attr->rx_ctx_cnt = 1;
	t->domain_attr->name = strdup("rxe0");
	t->domain_attr->threading = FI_THREAD_DOMAIN;
	t->domain_attr->control_progress = FI_PROGRESS_AUTO;
	t->domain_attr->data_progress = FI_PROGRESS_AUTO;
	t->domain_attr->resource_mgmt = FI_RM_ENABLED;
	t->domain_attr->av_type = FI_AV_UNSPEC;
	t->domain_attr->mr_mode = MR_NEEDED | FI_MR_BASIC;
	t->domain_attr->mr_key_size = 4;
	t->domain_attr->cq_data_size = 4;
	t->domain_attr->cq_cnt = 16384;
	t->domain_attr->ep_cnt = 16384;
	t->domain_attr->tx_ctx_cnt = 1024;
	t->domain_attr->rx_ctx_cnt = 1024;
	t->domain_attr->max_ep_tx_ctx = 1;
	t->domain_attr->max_ep_rx_ctx = 1;
	t->domain_attr->mr_iov_limit = 1;
	t->domain_attr->mr_cnt = 65536;
	t->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	t->domain_attr->max_err_data = 255;
	t->fabric_attr->name = strdup("IB-0xfe80000000000000");
	t->fabric_attr->prov_name = strdup("verbs");
	t->fabric_attr->prov_version = FI_VERSION(117, 0);
	return t;
}

/* Hints an RMA application usually passes. */
static struct fi_info *good_hints(void)
{
	struct fi_info *h = fi_allocinfo();

	h->caps = FI_MSG | FI_RMA;
	h->mode = FI_RX_CQ_DATA | FI_CONTEXT;
	h->ep_attr->type = FI_EP_MSG;
	h->domain_attr->mr_mode = MR_NEEDED;
	return h;
}

static struct fi_info *tmpl;

static void expect_ok(uint32_t version, const struct fi_info *h, int line)
{
	const char *why = "?";
	int ret = fd_info_check_why(version, tmpl, h, &why);

	if (ret) {
		fdt_check_failures++;
		fprintf(stderr, "line %d: rejected (%s), expected a match\n",
			line, why ? why : "NULL");
	}
}

static void expect_reject(uint32_t version, const struct fi_info *h,
			  const char *attr, int line)
{
	const char *why = NULL;
	int ret = fd_info_check_why(version, tmpl, h, &why);

	if (ret != -FI_ENODATA || !why || strcmp(why, attr)) {
		fdt_check_failures++;
		fprintf(stderr, "line %d: got %d (%s), expected rejection "
			"for %s\n", line, ret, why ? why : "NULL", attr);
	}
}

#define OK(h)		expect_ok(V117, (h), __LINE__)
#define OK_V(v, h)	expect_ok((v), (h), __LINE__)
#define NO(h, a)	expect_reject(V117, (h), (a), __LINE__)
#define NO_V(v, h, a)	expect_reject((v), (h), (a), __LINE__)

/* Run 'stmt' on fresh good hints, then check the outcome, then free. */
#define WITH(stmt, check)						\
	do {								\
		struct fi_info *h = good_hints();			\
		stmt;							\
		check;							\
		fi_freeinfo(h);						\
	} while (0)

static void test_check_basics(void)
{
	struct fi_info *zero = fi_allocinfo();

	CHECK(fd_info_check(V117, tmpl, NULL) == 0, "NULL hints");
	CHECK(fd_info_check(V117, NULL, zero) == -FI_EINVAL, "NULL prov");
	/* All-zero hints: no mode bits offered, so FI_RX_CQ_DATA fails. */
	NO(zero, "mode");
	zero->mode = FI_RX_CQ_DATA;
	NO(zero, "domain_attr->mr_mode");
	zero->domain_attr->mr_mode = MR_NEEDED;
	OK(zero);
	fi_freeinfo(zero);

	WITH(, OK(h));
	WITH(h->caps = FI_TAGGED, NO(h, "caps"));
	WITH(h->caps = FI_MSG | FI_MULTI_RECV, NO(h, "caps"));
	WITH(h->caps = FI_MSG | FI_LOCAL_COMM | FI_REMOTE_COMM, OK(h));
	WITH(h->ep_attr->type = FI_EP_RDM, NO(h, "ep_attr->type"));
	WITH(h->ep_attr->type = FI_EP_UNSPEC, OK(h));
	WITH(h->addr_format = FI_SOCKADDR_IB, NO(h, "addr_format"));
	WITH(h->addr_format = FI_ADDR_STR, NO(h, "addr_format"));
	WITH(h->addr_format = FI_SOCKADDR_IN6, OK(h));
	WITH(h->addr_format = FI_SOCKADDR, OK(h));
	/* An entry of a concrete family (a layer's, e.g. rstream's, has its
	 * address's own) takes the generic hint, and its own family only. */
	tmpl->addr_format = FI_SOCKADDR_IN;
	WITH(h->addr_format = FI_SOCKADDR, OK(h));
	WITH(h->addr_format = FI_SOCKADDR_IN, OK(h));
	WITH(h->addr_format = FI_SOCKADDR_IN6, NO(h, "addr_format"));
	tmpl->addr_format = FI_SOCKADDR_IN6;
	WITH(h->addr_format = FI_SOCKADDR, OK(h));
	WITH(h->addr_format = FI_SOCKADDR_IN, NO(h, "addr_format"));
	tmpl->addr_format = FI_SOCKADDR;
}

static void test_check_fabric_domain(void)
{
	WITH(h->fabric_attr->name = strdup("IB-0x1"), NO(h, "fabric_attr->name"));
	WITH(h->fabric_attr->name = strdup("IB-0xfe80000000000000"), OK(h));
	WITH(h->fabric_attr->prov_name = strdup("tcp"),
	     NO(h, "fabric_attr->prov_name"));
	WITH(h->fabric_attr->prov_name = strdup("VERBS"), OK(h));
	WITH(h->fabric_attr->prov_name = strdup("verbs;rstream"), OK(h));
	WITH(h->fabric_attr->prov_name = strdup("verbs2"),
	     NO(h, "fabric_attr->prov_name"));
	WITH(h->fabric_attr->prov_version = FI_VERSION(118, 0),
	     NO(h, "fabric_attr->prov_version"));

	WITH(h->domain_attr->name = strdup("mlx5_0"), NO(h, "domain_attr->name"));
	WITH(h->domain_attr->name = strdup("RXE0"), OK(h));

	WITH(h->domain_attr->threading = FI_THREAD_DOMAIN, OK(h));
	WITH(h->domain_attr->threading = FI_THREAD_SAFE,
	     NO(h, "domain_attr->threading"));
	WITH(h->domain_attr->threading = FI_THREAD_COMPLETION,
	     NO(h, "domain_attr->threading"));
	WITH(h->domain_attr->threading = 17, NO(h, "domain_attr->threading"));
	tmpl->domain_attr->threading = FI_THREAD_SAFE;
	WITH(h->domain_attr->threading = FI_THREAD_ENDPOINT, OK(h));
	WITH(h->domain_attr->threading = FI_THREAD_DOMAIN, OK(h));
	tmpl->domain_attr->threading = FI_THREAD_DOMAIN;

	WITH(h->domain_attr->data_progress = FI_PROGRESS_MANUAL, OK(h));
	WITH(h->domain_attr->control_progress = FI_PROGRESS_MANUAL, OK(h));
	tmpl->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	WITH(h->domain_attr->data_progress = FI_PROGRESS_AUTO,
	     NO(h, "domain_attr->data_progress"));
	tmpl->domain_attr->data_progress = FI_PROGRESS_AUTO;

	WITH(h->domain_attr->resource_mgmt = FI_RM_ENABLED, OK(h));
	WITH(h->domain_attr->resource_mgmt = FI_RM_DISABLED, OK(h));
	WITH(h->domain_attr->av_type = FI_AV_MAP, OK(h));
	WITH(h->domain_attr->av_type = 7, NO(h, "domain_attr->av_type"));

	WITH(h->domain_attr->cq_data_size = 4, OK(h));
	WITH(h->domain_attr->cq_data_size = 8, NO(h, "domain_attr->cq_data_size"));
	WITH(h->domain_attr->mr_key_size = 8, NO(h, "domain_attr->mr_key_size"));
	WITH(h->domain_attr->cq_cnt = 1 << 20, NO(h, "domain_attr->cq_cnt"));
	WITH(h->domain_attr->max_ep_srx_ctx = 1,
	     NO(h, "domain_attr->max_ep_srx_ctx"));
	WITH(h->domain_attr->cntr_cnt = 1, NO(h, "domain_attr->cntr_cnt"));
	WITH(h->domain_attr->auth_key_size = 4,
	     NO(h, "domain_attr->auth_key_size"));
	WITH(h->domain_attr->caps = FI_LOCAL_COMM, OK(h));
	WITH(h->domain_attr->caps = FI_SHARED_AV, NO(h, "domain_attr->caps"));
}

static void test_check_mr_mode(void)
{
	/* 1.5 and later: the bits, relaxed by what the caps need. */
	WITH(h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR,
	     NO(h, "domain_attr->mr_mode"));
	WITH(h->domain_attr->mr_mode = MR_NEEDED | FI_MR_MMU_NOTIFY, OK(h));
	WITH((h->caps = FI_MSG,
	      h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED), OK(h));
	WITH((h->caps = FI_MSG, h->domain_attr->mr_mode = FI_MR_LOCAL),
	     NO(h, "domain_attr->mr_mode"));
	/* An RMA initiator only is not a target: keys/addresses not owed. */
	WITH((h->caps = FI_RMA | FI_WRITE | FI_READ,
	      h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED), OK(h));
	WITH((h->caps = FI_RMA | FI_REMOTE_WRITE,
	      h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED),
	     NO(h, "domain_attr->mr_mode"));
	/* Wildcard caps mean everything, so everything is needed. */
	WITH((h->caps = 0,
	      h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED),
	     NO(h, "domain_attr->mr_mode"));
	/* FI_LOCAL_MR in mode stands in for FI_MR_LOCAL. */
	WITH((h->domain_attr->mr_mode = MR_NEEDED & ~FI_MR_LOCAL,
	      h->mode |= FI_LOCAL_MR), OK(h));
	WITH(h->domain_attr->mr_mode = MR_NEEDED & ~FI_MR_LOCAL,
	     NO(h, "domain_attr->mr_mode"));
	/* Legacy values, alone. */
	WITH((h->domain_attr->mr_mode = FI_MR_BASIC, h->mode |= FI_LOCAL_MR),
	     OK(h));
	WITH((h->domain_attr->mr_mode = FI_MR_BASIC | FI_MR_LOCAL),
	     NO(h, "domain_attr->mr_mode"));
	WITH((h->domain_attr->mr_mode = FI_MR_SCALABLE, h->mode |= FI_LOCAL_MR),
	     NO(h, "domain_attr->mr_mode"));

	/* Before 1.5 only UNSPEC/BASIC/SCALABLE, local via FI_LOCAL_MR. */
	WITH((h->domain_attr->mr_mode = 0, h->mode |= FI_LOCAL_MR),
	     OK_V(V14, h));
	WITH((h->domain_attr->mr_mode = FI_MR_BASIC, h->mode |= FI_LOCAL_MR),
	     OK_V(V14, h));
	WITH(h->domain_attr->mr_mode = 0, NO_V(V14, h, "mode"));
	WITH((h->domain_attr->mr_mode = FI_MR_SCALABLE, h->mode |= FI_LOCAL_MR),
	     NO_V(V14, h, "domain_attr->mr_mode"));
	WITH((h->domain_attr->mr_mode = MR_NEEDED, h->mode |= FI_LOCAL_MR),
	     NO_V(V14, h, "domain_attr->mr_mode"));
}

static void test_check_ep_tx_rx(void)
{
	WITH(h->ep_attr->protocol = FI_PROTO_IWARP, NO(h, "ep_attr->protocol"));
	WITH(h->ep_attr->protocol = FI_PROTO_RDMA_CM_IB_RC, OK(h));
	WITH(h->ep_attr->protocol_version = 2,
	     NO(h, "ep_attr->protocol_version"));
	WITH(h->ep_attr->max_msg_size = 1UL << 31, OK(h));
	WITH(h->ep_attr->max_msg_size = (1UL << 31) + 1,
	     NO(h, "ep_attr->max_msg_size"));
	WITH(h->ep_attr->max_order_war_size = 1,
	     NO(h, "ep_attr->max_order_war_size"));
	WITH(h->ep_attr->tx_ctx_cnt = 2, NO(h, "ep_attr->tx_ctx_cnt"));
	WITH(h->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT,
	     NO(h, "ep_attr->rx_ctx_cnt"));
	WITH(h->ep_attr->auth_key_size = 1, NO(h, "ep_attr->auth_key_size"));

	WITH(h->tx_attr->size = 16384, OK(h));
	WITH(h->tx_attr->size = 16385, NO(h, "tx_attr->size"));
	WITH(h->tx_attr->inject_size = 300, NO(h, "tx_attr->inject_size"));
	WITH(h->tx_attr->iov_limit = 33, NO(h, "tx_attr->iov_limit"));
	WITH(h->tx_attr->rma_iov_limit = 2, NO(h, "tx_attr->rma_iov_limit"));
	WITH(h->tx_attr->caps = FI_TAGGED, NO(h, "tx_attr->caps"));
	WITH(h->tx_attr->caps = FI_MSG | FI_SEND, OK(h));
	WITH(h->tx_attr->op_flags = FI_MULTI_RECV, NO(h, "tx_attr->op_flags"));
	WITH(h->tx_attr->op_flags = FI_INJECT | FI_COMPLETION, OK(h));
	WITH(h->tx_attr->msg_order = FI_ORDER_WAR, NO(h, "tx_attr->msg_order"));
	WITH(h->tx_attr->msg_order = FI_ORDER_SAS, OK(h));
	WITH(h->tx_attr->comp_order = FI_ORDER_DATA,
	     NO(h, "tx_attr->comp_order"));
	WITH(h->rx_attr->comp_order = FI_ORDER_DATA, OK(h));
	WITH(h->rx_attr->size = 20000, NO(h, "rx_attr->size"));
	WITH(h->rx_attr->iov_limit = 64, NO(h, "rx_attr->iov_limit"));
	WITH(h->rx_attr->total_buffered_recv = 1,
	     NO(h, "rx_attr->total_buffered_recv"));
	WITH(h->rx_attr->caps = FI_MSG | FI_SEND, NO(h, "rx_attr->caps"));
	/* A per-direction mode overrides the top-level one. */
	WITH(h->rx_attr->mode = FI_CONTEXT, NO(h, "rx_attr->mode"));
	WITH((h->mode = FI_CONTEXT, h->rx_attr->mode = FI_RX_CQ_DATA),
	     NO(h, "mode"));
	tmpl->mode = 0;
	WITH((h->mode = FI_CONTEXT, h->rx_attr->mode = FI_RX_CQ_DATA), OK(h));
	tmpl->mode = FI_RX_CQ_DATA;
}


/* mem_tag_format is a width (fi_endpoint(3)): a provider offering all 64
 * bits (FI_TAG_GENERIC, as the RDM layer and upstream's rxm say) serves
 * any format, and the entry reports the format the hints asked for.
 * MPICH 4.0's ch4:ofi asks 0x00e000007fffffff (protocol bits 53-55,
 * tag bits 0-30); the bit-pattern check refused it against 0xaaaa... */
static void test_tag_format(void)
{
	static const uint64_t asks[] = {
		0x00e000007fffffffULL, ~0ULL, 0, 0xaaaaaaaaaaaaaaaaULL,
		0x5555555555555555ULL, 1,
	};
	struct fi_info *saved = tmpl, *t = fi_dupinfo(saved);

	t->caps |= FI_TAGGED;
	t->ep_attr->type = FI_EP_RDM;
	t->ep_attr->mem_tag_format = 0xaaaaaaaaaaaaaaaaULL;
	tmpl = t;
	for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		for (int wild = 0; wild < 2; wild++) {
			struct fi_info *h = good_hints(), *fi;

			/* FI_TAGGED asked, or every cap (caps 0) */
			h->caps = wild ? 0 : FI_TAGGED | FI_MSG | FI_RMA;
			h->ep_attr->type = FI_EP_RDM;
			h->ep_attr->mem_tag_format = asks[i];
			expect_ok(V117, h, __LINE__);
			fi = fd_info_narrow(V117, tmpl, h);
			CHECK(fi && fi->ep_attr->mem_tag_format ==
			      (asks[i] ? asks[i] : 0xaaaaaaaaaaaaaaaaULL),
			      "format 0x%llx (caps %d) reported as 0x%llx",
			      (unsigned long long)asks[i], wild,
			      fi ? (unsigned long long)fi->ep_attr->mem_tag_format : 0ULL);
			fi_freeinfo(fi);
			fi_freeinfo(h);
		}
	}
	/* A provider with fewer bits: a width, whatever the pattern. */
	t->ep_attr->mem_tag_format = 0x0000ffff0000ffffULL;	/* 48 bits */
	WITH((h->caps = FI_TAGGED, h->ep_attr->type = FI_EP_RDM,
	      h->ep_attr->mem_tag_format = 0x0000ff00ff00ff00ULL), OK(h));
	WITH((h->caps = FI_TAGGED, h->ep_attr->type = FI_EP_RDM,
	      h->ep_attr->mem_tag_format = 0x00e000007fffffffULL),
	     NO(h, "ep_attr->mem_tag_format"));
	WITH((h->caps = 0, h->ep_attr->type = FI_EP_RDM,
	      h->ep_attr->mem_tag_format = 1ULL << 48),
	     NO(h, "ep_attr->mem_tag_format"));
	/* Not tagged: the format is not looked at. */
	WITH((h->caps = FI_MSG, h->ep_attr->type = FI_EP_RDM,
	      h->ep_attr->mem_tag_format = 1ULL << 48), OK(h));
	tmpl = saved;
	fi_freeinfo(t);
}

/* ------------------------------------------------------------------------
 * Narrowing
 * ---------------------------------------------------------------------- */
static struct fi_info *narrow(uint32_t v, const struct fi_info *h)
{
	struct fi_info *fi;

	CHECK(fd_info_check(v, tmpl, h) == 0, "narrowing unmatched hints");
	fi = fd_info_narrow(v, tmpl, h);
	CHECK(fi != NULL, "narrow returned NULL");
	return fi;
}

static void test_narrow_no_hints(void)
{
	struct fi_info *fi = narrow(V117, NULL);

	CHECK(fi->caps == tmpl->caps, "caps 0x%llx", (unsigned long long)fi->caps);
	CHECK(fi->mode == FI_RX_CQ_DATA, "mode");
	CHECK(fi->domain_attr->mr_mode == MR_NEEDED, "legacy bit dropped: 0x%x",
	      fi->domain_attr->mr_mode);
	CHECK(fi->fabric_attr->api_version == V117, "api_version");
	CHECK(fi->tx_attr->op_flags == 0 && fi->rx_attr->op_flags == 0,
	      "no default op_flags");
	CHECK(fi->tx_attr->size == 16384, "sizes are the template's");
	CHECK(!strcmp(fi->domain_attr->name, "rxe0") &&
	      fi->domain_attr->name != tmpl->domain_attr->name, "own copy");
	fi_freeinfo(fi);

	fi = narrow(V14, NULL);
	CHECK(fi->domain_attr->mr_mode == FI_MR_BASIC, "1.4: basic");
	CHECK(fi->mode & FI_LOCAL_MR, "1.4: FI_LOCAL_MR");
	fi_freeinfo(fi);
}

static void test_narrow_caps(void)
{
	struct fi_info *h = good_hints(), *fi;

	h->caps = FI_MSG;
	fi = narrow(V117, h);
	CHECK(fi->caps == (FI_MSG | FI_SEND | FI_RECV | FI_LOCAL_COMM |
			   FI_REMOTE_COMM), "msg caps 0x%llx",
	      (unsigned long long)fi->caps);
	CHECK(fi->tx_attr->caps == (FI_MSG | FI_SEND), "tx caps");
	CHECK(fi->rx_attr->caps == (FI_MSG | FI_RECV), "rx caps");
	/* Without RMA targets the remote-access MR bits are not needed. */
	CHECK(fi->domain_attr->mr_mode == (FI_MR_LOCAL | FI_MR_ALLOCATED),
	      "mr_mode 0x%x", fi->domain_attr->mr_mode);
	fi_freeinfo(fi);

	h->caps = FI_MSG | FI_SEND;
	fi = narrow(V117, h);
	CHECK(!(fi->caps & FI_RECV) && (fi->caps & FI_SEND), "send only");
	CHECK(fi->rx_attr->caps == FI_MSG, "rx caps 0x%llx",
	      (unsigned long long)fi->rx_attr->caps);
	fi_freeinfo(fi);

	h->caps = FI_RMA | FI_WRITE;
	fi = narrow(V117, h);
	CHECK(fi->caps == (FI_RMA | FI_WRITE | FI_LOCAL_COMM | FI_REMOTE_COMM),
	      "rma write 0x%llx", (unsigned long long)fi->caps);
	fi_freeinfo(fi);

	h->caps = FI_MSG | FI_RMA;
	fi = narrow(V117, h);
	CHECK(fi->caps == tmpl->caps - FI_ATOMIC, "msg+rma 0x%llx",
	      (unsigned long long)fi->caps);
	CHECK(fi->domain_attr->mr_mode == MR_NEEDED, "all MR bits");
	CHECK(fi->domain_attr->caps == (FI_LOCAL_COMM | FI_REMOTE_COMM),
	      "domain caps");
	fi_freeinfo(fi);
	fi_freeinfo(h);
}

static void test_narrow_modes(void)
{
	struct fi_info *h = good_hints(), *fi;

	h->mode = FI_CONTEXT | FI_CONTEXT2 | FI_RX_CQ_DATA | FI_LOCAL_MR;
	fi = narrow(V117, h);
	CHECK(fi->mode == FI_RX_CQ_DATA, "only what is needed: 0x%llx",
	      (unsigned long long)fi->mode);
	CHECK(fi->rx_attr->mode == FI_RX_CQ_DATA && fi->tx_attr->mode == 0,
	      "rx/tx modes");
	fi_freeinfo(fi);

	/* Local registration through the old mode bit. */
	h->domain_attr->mr_mode = MR_NEEDED & ~FI_MR_LOCAL;
	fi = narrow(V117, h);
	CHECK((fi->mode & FI_LOCAL_MR) &&
	      fi->domain_attr->mr_mode == (MR_NEEDED & ~FI_MR_LOCAL),
	      "FI_LOCAL_MR kept");
	fi_freeinfo(fi);

	h->domain_attr->mr_mode = FI_MR_BASIC;
	fi = narrow(V117, h);
	CHECK(fi->domain_attr->mr_mode == FI_MR_BASIC, "basic kept");
	fi_freeinfo(fi);

	h->domain_attr->mr_mode = 0;
	fi = narrow(V14, h);
	CHECK(fi->domain_attr->mr_mode == FI_MR_BASIC &&
	      (fi->mode & FI_LOCAL_MR), "1.4 unspec -> basic");
	CHECK(fi->fabric_attr->api_version == V14, "api 1.4");
	fi_freeinfo(fi);
	fi_freeinfo(h);
}

static void test_narrow_values(void)
{
	struct fid pep = { .fclass = FI_CLASS_PEP };
	struct fi_info *h = good_hints(), *fi;

	h->handle = &pep;
	h->addr_format = FI_SOCKADDR_IN;
	h->ep_attr->type = FI_EP_UNSPEC;
	h->ep_attr->max_msg_size = 4096;
	h->tx_attr->size = 100;
	h->tx_attr->iov_limit = 2;
	h->tx_attr->inject_size = 64;
	h->tx_attr->op_flags = FI_COMPLETION;
	h->rx_attr->size = 50;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	h->domain_attr->av_type = FI_AV_MAP;
	h->domain_attr->domain = (struct fid_domain *)&pep;
	h->fabric_attr->fabric = (struct fid_fabric *)&pep;

	fi = narrow(V117, h);
	CHECK(fi->handle == &pep, "handle");
	CHECK(fi->addr_format == FI_SOCKADDR_IN, "addr_format");
	CHECK(fi->ep_attr->type == FI_EP_MSG, "ep type from provider");
	CHECK(fi->ep_attr->max_msg_size == 4096, "max_msg_size");
	CHECK(fi->tx_attr->size == 100 && fi->tx_attr->iov_limit == 2 &&
	      fi->tx_attr->inject_size == 64, "tx sizes");
	CHECK(fi->tx_attr->rma_iov_limit == 1, "unasked limit kept");
	CHECK(fi->tx_attr->op_flags == FI_COMPLETION, "op_flags");
	CHECK(fi->rx_attr->size == 50 && fi->rx_attr->iov_limit == 32,
	      "rx sizes");
	CHECK(fi->tx_attr->msg_order == ORDER, "provider's ordering");
	CHECK(fi->domain_attr->threading == FI_THREAD_DOMAIN &&
	      fi->domain_attr->data_progress == FI_PROGRESS_MANUAL &&
	      fi->domain_attr->control_progress == FI_PROGRESS_AUTO,
	      "threading/progress");
	CHECK(fi->domain_attr->av_type == FI_AV_MAP, "av_type");
	CHECK(fi->domain_attr->domain == (struct fid_domain *)&pep &&
	      fi->fabric_attr->fabric == (struct fid_fabric *)&pep,
	      "object pointers");
	CHECK(fi->domain_attr->cq_data_size == 4 &&
	      fi->domain_attr->mr_key_size == 4, "provider values");
	fi_freeinfo(fi);
	fi_freeinfo(h);
}

int main(void)
{
	tmpl = make_template();
	test_check_basics();
	test_check_fabric_domain();
	test_check_mr_mode();
	test_check_ep_tx_rx();
	test_tag_format();
	test_narrow_no_hints();
	test_narrow_caps();
	test_narrow_modes();
	test_narrow_values();
	fi_freeinfo(tmpl);
	if (fdt_check_failures) {
		printf("test_getinfo_match: %d fdt_check_failures\n", fdt_check_failures);
		return 1;
	}
	printf("test_getinfo_match: ok\n");
	return 0;
}
