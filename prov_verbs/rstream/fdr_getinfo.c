/* fi_getinfo for FI_EP_SOCK_STREAM: ask the verbs provider for MSG
 * entries that can carry the protocol (RMA writes, immediate data, the
 * addresses the application gave) and turn each into a stream entry. The
 * addresses, device and fabric stay the verbs entry's; everything the
 * application sees of the transport underneath is replaced. */
#include <stdlib.h>
#include <string.h>

#include "fd_attr.h"
#include "fd_util.h"
#include "fdr.h"

#define FDR_CAPS	(FI_MSG | FI_SEND | FI_RECV)
#define FDR_CORE_CAPS	(FI_MSG | FI_SEND | FI_RECV | FI_RMA | FI_WRITE | \
			 FI_REMOTE_WRITE)
#define FDR_CORE_MR	(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
			 FI_MR_PROV_KEY)
/* The internal endpoint only ever sends 4-byte words from the CPU. */
#define FDR_CORE_INJECT	64

void fdr_getinfo_init(void)
{
	/* Sizes come from fi_getinfo hints and fi_setopt; nothing to define. */
}

int fdr_info_iwarp(const struct fi_info *info)
{
	return info && info->ep_attr && info->ep_attr->protocol == FI_PROTO_IWARP;
}

/* What the verbs provider must offer for a stream endpoint. */
static const struct fd_attrs fdr_core_want = {
	FD_ATTR(caps, FDR_CORE_CAPS),
	FD_ATTR(mode, FI_RX_CQ_DATA | FI_CONTEXT | FI_CONTEXT2),
	FD_ATTR(ep_type, FI_EP_MSG),
	FD_ATTR(dom_mr_mode, FDR_CORE_MR),
};

/* What a verbs entry becomes as a stream entry, keeping its addresses,
 * device, fabric and nic. Limits are maxima (a template). */
static const struct fd_attrs fdr_stream_attrs = {
	.prov_name = FDR_PROV_NAME,
	FD_ATTR(caps, FDR_CAPS),
	FD_ATTR(mode, 0),

	FD_ATTR(tx_caps, FI_MSG | FI_SEND),
	FD_ATTR(tx_mode, 0),
	FD_ATTR(tx_op_flags, 0),
	FD_ATTR(tx_msg_order, FI_ORDER_SAS),
	FD_ATTR(tx_comp_order, FI_ORDER_NONE),
	FD_ATTR(tx_inject_size, 0),
	FD_ATTR(tx_size, FDR_MAX_QUEUE_SIZE),
	FD_ATTR(tx_iov_limit, FDR_IOV_LIMIT),
	FD_ATTR(tx_rma_iov_limit, 0),

	FD_ATTR(rx_caps, FI_MSG | FI_RECV),
	FD_ATTR(rx_mode, 0),
	FD_ATTR(rx_op_flags, 0),
	FD_ATTR(rx_msg_order, FI_ORDER_SAS),
	FD_ATTR(rx_comp_order, FI_ORDER_NONE),
	FD_ATTR(rx_total_buffered_recv, 0),
	FD_ATTR(rx_size, FDR_MAX_QUEUE_SIZE),
	FD_ATTR(rx_iov_limit, FDR_IOV_LIMIT),

	/* the protocol is the caller's (fdr_make_stream) */
	FD_ATTR(ep_type, FI_EP_SOCK_STREAM),
	FD_ATTR(ep_protocol_version, FDR_PROTO_VERSION),
	/* One call moves at most what the rings hold; a length this big is
	 * merely accepted in part. */
	FD_ATTR(ep_max_msg_size, FDV_MAX_MSG_SIZE),
	FD_ATTR(ep_max_order_raw_size, 0),
	FD_ATTR(ep_max_order_war_size, 0),
	FD_ATTR(ep_max_order_waw_size, 0),
	FD_ATTR(ep_mem_tag_format, 0),
	FD_ATTR(ep_tx_ctx_cnt, 1),
	FD_ATTR(ep_rx_ctx_cnt, 1),

	FD_ATTR(dom_threading, FI_THREAD_SAFE),
	/* Connection set-up needs nothing of the application: the handshake
	 * is the verbs connection's (rdma_cm, in the kernel) and the rings'
	 * addresses ride on its private data, so a peer's fi_connect or
	 * fi_accept completes while this side is busy elsewhere. What this
	 * side learns of it reaches its EQ when that EQ is read, as with any
	 * EQ. Data moves only inside calls on the endpoint. */
	FD_ATTR(dom_control_progress, FI_PROGRESS_AUTO),
	FD_ATTR(dom_data_progress, FI_PROGRESS_MANUAL),
	FD_ATTR(dom_resource_mgmt, FI_RM_ENABLED),
	FD_ATTR(dom_av_type, FI_AV_UNSPEC),
	/* no registrations, no remote CQ data: a stream has neither */
	FD_ATTR(dom_mr_mode, 0),
	FD_ATTR(dom_mr_key_size, 0),
	FD_ATTR(dom_cq_data_size, 0),
	FD_ATTR(dom_cq_cnt, 0),
	FD_ATTR(dom_mr_cnt, 0),
	FD_ATTR(dom_mr_iov_limit, 0),
	FD_ATTR(dom_max_ep_tx_ctx, 1),
	FD_ATTR(dom_max_ep_rx_ctx, 1),
	FD_ATTR(dom_max_ep_stx_ctx, 0),
	FD_ATTR(dom_max_ep_srx_ctx, 0),
	FD_ATTR(dom_caps, FI_LOCAL_COMM | FI_REMOTE_COMM),
	FD_ATTR(dom_mode, 0),
};

static struct fi_info *fdr_core_hints(const struct fi_info *hints)
{
	return fd_layer_core_hints(hints, &fdr_core_want);
}

/* Rewrite a verbs entry into what a stream endpoint offers, speaking
 * proto. */
static int fdr_make_stream(struct fi_info *fi, uint32_t proto)
{
	fi->handle = NULL;
	fi->ep_attr->protocol = proto;
	return fd_attrs_apply(fi, &fdr_stream_attrs);
}

/* Sizes the application left open get the provider's defaults. */
static const struct fd_size_defaults fdr_size_defaults = {
	.tx_size = FDR_DEF_QUEUE_SIZE, .tx_iov_limit = FDR_DEF_IOV_LIMIT,
	.inject_size = FD_SIZE_KEEP,
	.rx_size = FDR_DEF_QUEUE_SIZE, .rx_iov_limit = FDR_DEF_IOV_LIMIT,
};

static void fdr_apply_defaults(struct fi_info *fi, const struct fi_info *hints)
{
	fd_info_size_defaults(fi, hints, &fdr_size_defaults);
}

static int fdr_prov_attr_info(uint32_t version, uint32_t proto,
			      struct fi_info **info)
{
	struct fi_info *fi = fi_allocinfo();

	if (!fi)
		return -FI_ENOMEM;
	if (fdr_make_stream(fi, proto)) {
		fi_freeinfo(fi);
		return -FI_ENOMEM;
	}
	fi->addr_format = FI_SOCKADDR_IN;
	fi->fabric_attr->prov_version = FD_PROV_VERSION;
	fi->fabric_attr->api_version = version;
	fdr_apply_defaults(fi, NULL);
	*info = fi;
	return 0;
}

/* fd_layer_wrap's steps: a verbs MSG entry becomes a stream entry of the
 * protocol asked for (arg) that the device can speak. */
static int fdr_wrap_make(struct fi_info *t, const struct fi_info *c, void *arg)
{
	uint32_t asked = *(const uint32_t *)arg;
	int iwarp_dev = c->ep_attr->protocol == FI_PROTO_IWARP;

	/* A device without write-with-immediate (iWARP) can only speak the
	 * iWARP framing; any device can speak it. */
	if (iwarp_dev && asked == FI_PROTO_RSTREAM)
		return 1;
	return fdr_make_stream(t, iwarp_dev || asked == FI_PROTO_IWARP ?
			       FI_PROTO_IWARP : FI_PROTO_RSTREAM) ? -FI_ENOMEM : 0;
}

static int fdr_wrap_finish(struct fi_info *fi, const struct fi_info *hints, void *arg)
{
	(void)arg;
	fdr_apply_defaults(fi, hints);
	return 0;
}

static const struct fd_layer_wrap_ops fdr_wrap_ops = {
	.make = fdr_wrap_make,
	.finish = fdr_wrap_finish,
};

int fdr_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info)
{
	const struct fi_ep_attr *hep = hints ? hints->ep_attr : NULL;
	uint32_t asked = hep ? hep->protocol : FI_PROTO_UNSPEC;
	struct fi_info *core;
	int ret;

	if (!info)
		return -FI_EINVAL;
	*info = NULL;
	if (hep && hep->type != FI_EP_UNSPEC && hep->type != FI_EP_SOCK_STREAM)
		return -FI_ENODATA;
	if (asked != FI_PROTO_UNSPEC && asked != FI_PROTO_RSTREAM &&
	    asked != FI_PROTO_IWARP)
		return -FI_ENODATA;
	/* Even the attributes alone come only if verbs would serve us (it
	 * refuses, for one, a program built against other headers). */
	ret = fd_layer_lower_getinfo(&fdv_provider, version, node, service, flags,
				     fdr_core_hints(hints), &core);
	if (ret)
		return ret;
	if (flags & FI_PROV_ATTR_ONLY) {
		fi_freeinfo(core);
		return fdr_prov_attr_info(version, asked == FI_PROTO_IWARP ?
					  FI_PROTO_IWARP : FI_PROTO_RSTREAM, info);
	}

	return fd_layer_wrap(version, core, hints, &fdr_wrap_ops, &asked, info);
}

/* ---- infos for the two layers of one endpoint ---- */

bool fdr_info_complete(const struct fi_info *info)
{
	return info && info->tx_attr && info->rx_attr && info->ep_attr &&
	       info->domain_attr && info->fabric_attr;
}

struct fi_info *fdr_core_info(const struct fi_info *info)
{
	struct fi_info *core;

	if (!fdr_info_complete(info))
		return NULL;
	core = fi_dupinfo(info);
	if (!core)
		return NULL;
	core->next = NULL;
	core->handle = NULL;
	core->caps = FDR_CORE_CAPS;
	core->mode = FI_RX_CQ_DATA;
	core->tx_attr->caps = FDR_CORE_CAPS & ~(uint64_t)(FI_RECV | FI_REMOTE_WRITE);
	core->tx_attr->op_flags = 0;
	core->tx_attr->iov_limit = 1;
	core->tx_attr->rma_iov_limit = 1;
	core->tx_attr->inject_size = FDR_CORE_INJECT;
	core->rx_attr->caps = FI_MSG | FI_RECV | FI_RMA | FI_REMOTE_WRITE;
	core->rx_attr->op_flags = 0;
	core->rx_attr->iov_limit = 1;
	core->ep_attr->type = FI_EP_MSG;
	core->ep_attr->protocol = FI_PROTO_RDMA_CM_IB_RC;
	core->ep_attr->protocol_version = 1;
	core->domain_attr->mr_mode = FDR_CORE_MR;
	core->domain_attr->threading = FI_THREAD_DOMAIN;
	core->domain_attr->control_progress = FI_PROGRESS_AUTO;
	core->domain_attr->data_progress = FI_PROGRESS_AUTO;
	free(core->fabric_attr->prov_name);
	core->fabric_attr->prov_name = strdup(FDR_CORE_PROV_NAME);
	if (!core->fabric_attr->prov_name) {
		fi_freeinfo(core);
		return NULL;
	}
	return core;
}

struct fi_info *fdr_stream_info(const struct fi_info *tmpl,
				const struct fi_info *core)
{
	struct fi_info *fi = fi_dupinfo(tmpl);

	if (!fi)
		return NULL;
	fi->next = NULL;
	fi->handle = NULL;
	/* the connection's addresses and device, the listener's rest */
	if (fd_info_copy_place(fi, core, false))
		goto nomem;
	return fi;
nomem:
	fi_freeinfo(fi);
	return NULL;
}
