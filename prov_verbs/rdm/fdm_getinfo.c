/* fi_getinfo for FI_EP_RDM ("verbs;ofi_rxm"): ask the verbs provider for
 * the MSG entries an RDM endpoint can be built on (sends, RMA, the
 * addresses the application gave) and turn each into an RDM entry. The
 * addresses, device and fabric stay the verbs entry's; the rest says what
 * this layer offers. */
#include <stdlib.h>
#include <string.h>

#include "fd_core.h"
#include "fdm.h"
#include "fdv_layer.h"

/* What the layer implements. */
#define FDM_CAPS	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_SEND | \
			 FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | \
			 FI_REMOTE_WRITE | FI_DIRECTED_RECV | FI_SOURCE | \
			 FI_RMA_EVENT | FI_MULTI_RECV | FI_LOCAL_COMM | \
			 FI_REMOTE_COMM | FI_COLLECTIVE | FI_NAMED_RX_CTX)
#define FDM_TX_CAPS	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_SEND | \
			 FI_READ | FI_WRITE | FI_COLLECTIVE)
#define FDM_RX_CAPS	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RECV | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV | \
			 FI_SOURCE | FI_RMA_EVENT | FI_MULTI_RECV | FI_NAMED_RX_CTX)
/* What the verbs endpoints underneath must do. */
#define FDM_CORE_CAPS	(FI_MSG | FI_RMA | FI_ATOMIC | FI_SEND | FI_RECV | \
			 FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define FDM_CORE_MR	(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
			 FI_MR_PROV_KEY)
/* What the layer's registrations are: virtual addresses, the device's
 * keys, memory that must exist, which is exactly what the legacy
 * FI_MR_BASIC stands for (so that value is served too; FI_MR_SCALABLE,
 * offsets and keys the application picks, is not: verbs keys are the
 * device's, and upstream's verbs;ofi_rxm does not offer it either). */
#define FDM_MR_MODE	(FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)
/* Completion levels a send can ask for (fi_cq(3)): the verbs send
 * completion of an RC connection is the peer's acknowledgement
 * (transmit complete); FI_DELIVERY_COMPLETE makes an eager message wait
 * for the receiver's "done" after it took the message in, and a
 * rendezvous completes on that "done" anyway. */
#define FDM_TX_OP_FLAGS	(FI_COMPLETION | FI_INJECT_COMPLETE | \
			 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)
/* Every operation to a peer goes out on its one RC connection in the
 * order it was submitted (one queue per connection, credits included):
 * sends, RMA and atomic requests alike. No data ordering is promised
 * beyond that (max_order_*_size 0): RMA is placed by the device, atomics
 * by the target's software when it progresses. */
#define FDM_MSG_ORDER	(FI_ORDER_SAS | FI_ORDER_RAR | FI_ORDER_RAW | \
			 FI_ORDER_WAR | FI_ORDER_WAW)
/* Upstream's generic tag format: every bit usable. The core matches a
 * format by its width, so any format the hints ask for is served and
 * reported back (fd_match.c). */
#define FDM_TAG_FORMAT	0xaaaaaaaaaaaaaaaaULL
/* With FI_COLLECTIVE, bit 63 is the layer's (fdm_coll.c): the generic
 * format one bit narrower. */
#define FDM_COLL_TAG_FORMAT	(FDM_TAG_FORMAT >> 1)

/* FI_COLLECTIVE is served only to who asks for it: it takes a tag bit.
 * False when the entry cannot be served (a 64-bit tag format asked for
 * alongside it). */
static bool fdm_apply_coll(struct fi_info *fi, const struct fi_info *hints)
{
	const struct fi_ep_attr *hep = hints ? hints->ep_attr : NULL;

	if (!hints || !(hints->caps & FI_COLLECTIVE)) {
		fi->caps &= ~(uint64_t)FI_COLLECTIVE;
		fi->tx_attr->caps &= ~(uint64_t)FI_COLLECTIVE;
		return true;
	}
	if (hep && hep->mem_tag_format) {
		/* formats match by width (fd_match.c): 64 bits wide is
		 * the bit collectives need */
		if (hep->mem_tag_format & FDM_COLL_TAG_BIT)
			return false;
		fi->ep_attr->mem_tag_format = hep->mem_tag_format;
	} else {
		fi->ep_attr->mem_tag_format = FDM_COLL_TAG_FORMAT;
	}
	return true;
}

static int fdm_copy_addr(void **dst, size_t *dstlen, const void *src, size_t len)
{
	*dst = NULL;
	*dstlen = 0;
	if (!src || !len)
		return 0;
	*dst = malloc(len);
	if (!*dst)
		return -FI_ENOMEM;
	memcpy(*dst, src, len);
	*dstlen = len;
	return 0;
}

/* The verbs hints an RDM request stands for. */
static struct fi_info *fdm_core_hints_of(const struct fi_info *hints)
{
	struct fi_info *core = fi_allocinfo();

	if (!core)
		return NULL;
	core->caps = FDM_CORE_CAPS;
	core->mode = FI_CONTEXT | FI_CONTEXT2 | FI_RX_CQ_DATA;
	core->ep_attr->type = FI_EP_MSG;
	core->domain_attr->mr_mode = FDM_CORE_MR;
	if (!hints)
		return core;
	core->addr_format = hints->addr_format;
	if (fdm_copy_addr(&core->src_addr, &core->src_addrlen, hints->src_addr,
			  hints->src_addrlen) ||
	    fdm_copy_addr(&core->dest_addr, &core->dest_addrlen, hints->dest_addr,
			  hints->dest_addrlen))
		goto nomem;
	if (hints->domain_attr && hints->domain_attr->name &&
	    !(core->domain_attr->name = strdup(hints->domain_attr->name)))
		goto nomem;
	if (hints->fabric_attr && hints->fabric_attr->name &&
	    !(core->fabric_attr->name = strdup(hints->fabric_attr->name)))
		goto nomem;
	return core;
nomem:
	fi_freeinfo(core);
	return NULL;
}

/* The API version the verbs entries underneath are asked with: the
 * layer's own hints to verbs use the 1.5 mr_mode bits, which a pre-1.5
 * request would refuse, while the RDM entry itself is matched and cut
 * to the application's version. */
uint32_t fdm_core_version(uint32_t version)
{
	if (!version || FI_VERSION_LT(version, FI_VERSION(1, 5)))
		return FI_VERSION(1, 17);
	return version;
}

/* The verbs info an RDM domain opens its objects with. */
struct fi_info *fdm_core_hints(const struct fi_info *rdm)
{
	return fdm_core_hints_of(rdm);
}

/* Rewrite a verbs entry into the RDM entry built on it. */
static int fdm_make_rdm(struct fi_info *fi)
{
	size_t core_max = fi->ep_attr->max_msg_size;
	uint64_t key_size = fi->domain_attr->mr_key_size;

	fi->caps = FDM_CAPS;
	fi->mode = 0;
	fi->handle = NULL;

	fi->tx_attr->caps = FDM_TX_CAPS;
	fi->tx_attr->mode = 0;
	/* the op_flags it honours (the matcher checks hints against them;
	 * the entry handed out carries the hints' own) */
	fi->tx_attr->op_flags = FDM_TX_OP_FLAGS;
	fi->tx_attr->msg_order = FDM_MSG_ORDER;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = FDM_EAGER_MAX;
	fi->tx_attr->size = FDM_DEF_TX_SIZE;
	fi->tx_attr->iov_limit = FDM_IOV_LIMIT;
	fi->tx_attr->rma_iov_limit = 1;

	fi->rx_attr->caps = FDM_RX_CAPS;
	fi->rx_attr->mode = 0;
	fi->rx_attr->op_flags = FI_COMPLETION | FI_MULTI_RECV;
	fi->rx_attr->msg_order = FDM_MSG_ORDER;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->total_buffered_recv = 0;
	fi->rx_attr->size = FDM_DEF_RX_SIZE;
	fi->rx_attr->iov_limit = FDM_IOV_LIMIT;

	fi->ep_attr->type = FI_EP_RDM;
	fi->ep_attr->protocol = FI_PROTO_RXM;
	fi->ep_attr->protocol_version = FDM_PROTO_VERSION;
	fi->ep_attr->max_msg_size = FDM_MAX_MSG_SIZE;
	fi->ep_attr->msg_prefix_size = 0;
	fi->ep_attr->max_order_raw_size = 0;
	fi->ep_attr->max_order_war_size = 0;
	fi->ep_attr->max_order_waw_size = 0;
	fi->ep_attr->mem_tag_format = FDM_TAG_FORMAT;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;
	(void)core_max;

	/* A domain mutex, taken only when the domain was opened with
	 * FI_THREAD_SAFE or FI_PROGRESS_AUTO (fdm_lock). */
	fi->domain_attr->threading = FI_THREAD_SAFE;
	/* Both progress models: manual (connections are made and data
	 * moves only inside calls on the layer's objects) by default, auto
	 * (a progress thread per domain, fdm_domain.c) when asked. The
	 * matcher takes AUTO as serving either; fdm_apply_defaults then
	 * says which the entry is. */
	fi->domain_attr->control_progress = FI_PROGRESS_AUTO;
	fi->domain_attr->data_progress = FI_PROGRESS_AUTO;
	fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
	fi->domain_attr->av_type = FI_AV_UNSPEC;
	/* Sends copy or register for themselves: no FI_MR_LOCAL. The
	 * legacy FI_MR_BASIC bit says the same to a pre-1.5 program (the
	 * matcher answers it in kind). */
	fi->domain_attr->mr_mode = FDM_MR_MODE | FI_MR_BASIC;
	fi->domain_attr->mr_key_size = key_size;
	/* Remote CQ data rides in the header (8 bytes), but an RMA write's
	 * is the verbs immediate: 4 bytes is what every operation carries. */
	fi->domain_attr->cq_data_size = 4;
	/* scalable endpoints (fdm_sep.c): a context pair each */
	fi->domain_attr->max_ep_tx_ctx = FDM_SEP_MAX_CTX;
	fi->domain_attr->max_ep_rx_ctx = FDM_SEP_MAX_CTX;
	if (fi->domain_attr->tx_ctx_cnt < FDM_SEP_MAX_CTX)
		fi->domain_attr->tx_ctx_cnt = FDM_SEP_MAX_CTX;
	if (fi->domain_attr->rx_ctx_cnt < FDM_SEP_MAX_CTX)
		fi->domain_attr->rx_ctx_cnt = FDM_SEP_MAX_CTX;
	fi->domain_attr->max_ep_stx_ctx = 0;
	fi->domain_attr->max_ep_srx_ctx = 0;
	fi->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	fi->domain_attr->mode = 0;

	free(fi->fabric_attr->prov_name);
	fi->fabric_attr->prov_name = strdup(FDM_PROV_NAME);
	return fi->fabric_attr->prov_name ? 0 : -FI_ENOMEM;
}

static void fdm_apply_defaults(struct fi_info *fi, const struct fi_info *hints)
{
	const struct fi_tx_attr *htx = hints ? hints->tx_attr : NULL;
	const struct fi_rx_attr *hrx = hints ? hints->rx_attr : NULL;
	const struct fi_domain_attr *hd = hints ? hints->domain_attr : NULL;

	fi->tx_attr->op_flags = htx ? htx->op_flags : 0;
	fi->rx_attr->op_flags = hrx ? hrx->op_flags : 0;
	if (!htx || !htx->size)
		fi->tx_attr->size = FDM_DEF_TX_SIZE;
	if (!htx || !htx->iov_limit)
		fi->tx_attr->iov_limit = FDM_IOV_LIMIT;
	if (!htx || !htx->inject_size)
		fi->tx_attr->inject_size = FDM_EAGER_MAX;
	if (!hrx || !hrx->size)
		fi->rx_attr->size = FDM_DEF_RX_SIZE;
	if (!hrx || !hrx->iov_limit)
		fi->rx_attr->iov_limit = FDM_IOV_LIMIT;
	/* What was asked; manual unless AUTO was (no thread, no lock). */
	fi->domain_attr->data_progress = hd && hd->data_progress == FI_PROGRESS_AUTO ?
		FI_PROGRESS_AUTO : FI_PROGRESS_MANUAL;
	fi->domain_attr->control_progress = hd && hd->control_progress == FI_PROGRESS_AUTO ?
		FI_PROGRESS_AUTO : FI_PROGRESS_MANUAL;
}

/* fd_layer_wrap's steps: a verbs MSG entry becomes an RDM one; defaults
 * and the collective check once the hints have narrowed it. */
static int fdm_wrap_make(struct fi_info *t, const struct fi_info *c, void *arg)
{
	(void)arg;
	/* Rendezvous reads and the pool need what IB/RoCE give. */
	if (c->ep_attr->protocol == FI_PROTO_IWARP)
		return 1;
	return fdm_make_rdm(t) ? -FI_ENOMEM : 0;
}

static int fdm_wrap_finish(struct fi_info *fi, const struct fi_info *hints, void *arg)
{
	(void)arg;
	fdm_apply_defaults(fi, hints);
	return fdm_apply_coll(fi, hints) ? 0 : 1;
}

static const struct fd_layer_wrap_ops fdm_wrap_ops = {
	.make = fdm_wrap_make,
	.finish = fdm_wrap_finish,
};

int fdm_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info)
{
	const struct fi_ep_attr *hep = hints ? hints->ep_attr : NULL;
	struct fi_info *core_hints, *core = NULL;
	int ret;

	if (!info)
		return -FI_EINVAL;
	*info = NULL;
	ret = fdv_abi_check();
	if (ret)
		return ret;
	/* A program that names no endpoint type gets these entries after the
	 * verbs MSG ones (the core asks verbs first), as upstream lists
	 * verbs;ofi_rxm after verbs: `fi_info -p verbs` shows both, and
	 * hints with FI_TAGGED but no type find RDM. */
	if (hep && hep->type != FI_EP_RDM && hep->type != FI_EP_UNSPEC)
		return -FI_ENODATA;
	if (hep && hep->protocol != FI_PROTO_UNSPEC && hep->protocol != FI_PROTO_RXM)
		return -FI_ENODATA;

	core_hints = fdm_core_hints_of(hints);
	if (!core_hints)
		return -FI_ENOMEM;
	ret = fdv_getinfo(fdm_core_version(version), node, service, flags, core_hints,
			  &core);
	fi_freeinfo(core_hints);
	if (ret)
		return ret;

	return fd_layer_wrap(version, core, hints, &fdm_wrap_ops, NULL, info);
}
