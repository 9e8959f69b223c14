/* fi_getinfo for FI_EP_RDM ("verbs;ofi_rxm"): ask the verbs provider for
 * the MSG entries an RDM endpoint can be built on (sends, RMA, the
 * addresses the application gave) and turn each into an RDM entry. The
 * addresses, device and fabric stay the verbs entry's; the rest says what
 * this layer offers. */
#include <stdlib.h>
#include <string.h>

#include "fd_attr.h"
#include "fd_core.h"
#include "fd_util.h"
#include "fdm.h"
#include "fdv_layer.h"

/* What the layer implements. */
#define FDM_CAPS	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_SEND | \
			 FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | \
			 FI_REMOTE_WRITE | FI_DIRECTED_RECV | FI_SOURCE | \
			 FI_RMA_EVENT | FI_MULTI_RECV | FI_LOCAL_COMM | \
			 FI_REMOTE_COMM | FI_COLLECTIVE | FI_NAMED_RX_CTX)
/* FI_NAMED_RX_CTX is the initiator's: a send names the receive context
 * (fi_endpoint(3) lists it with the transmit capabilities; fabtests'
 * getinfo_test fails an rx_attr that carries it). FI_COLLECTIVE is
 * both sides' (every member sends and receives). */
#define FDM_TX_CAPS	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_SEND | \
			 FI_READ | FI_WRITE | FI_COLLECTIVE | FI_NAMED_RX_CTX)
#define FDM_RX_CAPS	(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RECV | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV | \
			 FI_SOURCE | FI_RMA_EVENT | FI_MULTI_RECV | FI_COLLECTIVE)
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
 * sends, RMA and atomic requests alike. Their data is accessed in that
 * order too, up to the device's message size (max_order_*_size): the
 * device keeps RAW and WAW for RMA; a write or an atomic request behind
 * a read still running is fenced (WAR); and since atomics are applied
 * by the target's software, RMA waits until the connection's atomics
 * are answered (fdm_rma_post, fdm_atomic_post). */
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
		fi->rx_attr->caps &= ~(uint64_t)FI_COLLECTIVE;
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

/* The verbs hints an RDM request stands for. */
static const struct fd_attrs fdm_core_want = {
	FD_ATTR(caps, FDM_CORE_CAPS),
	FD_ATTR(mode, FI_CONTEXT | FI_CONTEXT2 | FI_RX_CQ_DATA),
	FD_ATTR(ep_type, FI_EP_MSG),
	FD_ATTR(dom_mr_mode, FDM_CORE_MR),
};

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
	return fd_layer_core_hints(rdm, &fdm_core_want);
}

/* What a verbs entry becomes as the RDM entry built on it; the rest (the
 * device's limits, its mr_key_size, names) stays the verbs entry's. */
static const struct fd_attrs fdm_rdm_attrs = {
	.prov_name = FDM_PROV_NAME,
	FD_ATTR(caps, FDM_CAPS),
	FD_ATTR(mode, 0),

	FD_ATTR(tx_caps, FDM_TX_CAPS),
	FD_ATTR(tx_mode, 0),
	/* the op_flags it honours (the matcher checks hints against them;
	 * the entry handed out carries the hints' own) */
	FD_ATTR(tx_op_flags, FDM_TX_OP_FLAGS),
	FD_ATTR(tx_msg_order, FDM_MSG_ORDER),
	FD_ATTR(tx_comp_order, FI_ORDER_NONE),
	FD_ATTR(tx_inject_size, FDM_EAGER_MAX),
	FD_ATTR(tx_size, FDM_DEF_TX_SIZE),
	FD_ATTR(tx_iov_limit, FDM_IOV_LIMIT),
	FD_ATTR(tx_rma_iov_limit, 1),

	FD_ATTR(rx_caps, FDM_RX_CAPS),
	FD_ATTR(rx_mode, 0),
	FD_ATTR(rx_op_flags, FI_COMPLETION | FI_MULTI_RECV),
	FD_ATTR(rx_msg_order, FDM_MSG_ORDER),
	FD_ATTR(rx_comp_order, FI_ORDER_NONE),
	FD_ATTR(rx_total_buffered_recv, 0),
	FD_ATTR(rx_size, FDM_DEF_RX_SIZE),
	FD_ATTR(rx_iov_limit, FDM_IOV_LIMIT),

	FD_ATTR(ep_type, FI_EP_RDM),
	FD_ATTR(ep_protocol, FI_PROTO_RXM),
	FD_ATTR(ep_protocol_version, FDM_PROTO_VERSION),
	FD_ATTR(ep_max_msg_size, FDM_MAX_MSG_SIZE),
	FD_ATTR(ep_msg_prefix_size, 0),
	FD_ATTR(ep_mem_tag_format, FDM_TAG_FORMAT),
	FD_ATTR(ep_tx_ctx_cnt, 1),
	FD_ATTR(ep_rx_ctx_cnt, 1),

	/* A domain mutex, taken only when the domain was opened with
	 * FI_THREAD_SAFE or FI_PROGRESS_AUTO (fdm_lock). */
	FD_ATTR(dom_threading, FI_THREAD_SAFE),
	/* Both progress models: manual (connections are made and data
	 * moves only inside calls on the layer's objects) by default, auto
	 * (a progress thread per domain, fdm_domain.c) when asked. The
	 * matcher takes AUTO as serving either; fdm_apply_defaults then
	 * says which the entry is. */
	FD_ATTR(dom_control_progress, FI_PROGRESS_AUTO),
	FD_ATTR(dom_data_progress, FI_PROGRESS_AUTO),
	FD_ATTR(dom_resource_mgmt, FI_RM_ENABLED),
	FD_ATTR(dom_av_type, FI_AV_UNSPEC),
	/* Sends copy or register for themselves: no FI_MR_LOCAL. The
	 * legacy FI_MR_BASIC bit says the same to a pre-1.5 program (the
	 * matcher answers it in kind). */
	FD_ATTR(dom_mr_mode, FDM_MR_MODE | FI_MR_BASIC),
	/* Remote CQ data rides in the header (8 bytes), but an RMA write's
	 * is the verbs immediate: 4 bytes is what every operation carries. */
	FD_ATTR(dom_cq_data_size, 4),
	/* scalable endpoints (fdm_sep.c): a context pair each */
	FD_ATTR(dom_max_ep_tx_ctx, FDM_SEP_MAX_CTX),
	FD_ATTR(dom_max_ep_rx_ctx, FDM_SEP_MAX_CTX),
	FD_ATTR_AT_LEAST(dom_tx_ctx_cnt, FDM_SEP_MAX_CTX),
	FD_ATTR_AT_LEAST(dom_rx_ctx_cnt, FDM_SEP_MAX_CTX),
	FD_ATTR(dom_max_ep_stx_ctx, 0),
	FD_ATTR(dom_max_ep_srx_ctx, 0),
	FD_ATTR(dom_caps, FI_LOCAL_COMM | FI_REMOTE_COMM),
	FD_ATTR(dom_mode, 0),
};

/* Rewrite a verbs entry into the RDM entry built on it. */
static int fdm_make_rdm(struct fi_info *fi)
{
	/* data order holds for what one verbs request carries (FDM_MSG_ORDER) */
	size_t ordered = fi->ep_attr->max_msg_size;
	int ret;

	fi->handle = NULL;
	ret = fd_attrs_apply(fi, &fdm_rdm_attrs);
	fi->ep_attr->max_order_raw_size = ordered;
	fi->ep_attr->max_order_war_size = ordered;
	fi->ep_attr->max_order_waw_size = ordered;
	return ret;
}

static const struct fd_size_defaults fdm_size_defaults = {
	.tx_size = FDM_DEF_TX_SIZE, .tx_iov_limit = FDM_IOV_LIMIT,
	.inject_size = FDM_EAGER_MAX,
	.rx_size = FDM_DEF_RX_SIZE, .rx_iov_limit = FDM_IOV_LIMIT,
};

static void fdm_apply_defaults(struct fi_info *fi, const struct fi_info *hints)
{
	const struct fi_tx_attr *htx = hints ? hints->tx_attr : NULL;
	const struct fi_rx_attr *hrx = hints ? hints->rx_attr : NULL;
	const struct fi_domain_attr *hd = hints ? hints->domain_attr : NULL;

	fi->tx_attr->op_flags = htx ? htx->op_flags : 0;
	fi->rx_attr->op_flags = hrx ? hrx->op_flags : 0;
	fd_info_size_defaults(fi, hints, &fdm_size_defaults);
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
	struct fi_info *core;
	int ret;

	if (!info)
		return -FI_EINVAL;
	*info = NULL;
	/* A program that names no endpoint type gets these entries after the
	 * verbs MSG ones (the core asks verbs first), as upstream lists
	 * verbs;ofi_rxm after verbs: `fi_info -p verbs` shows both, and
	 * hints with FI_TAGGED but no type find RDM. */
	if (hep && hep->type != FI_EP_RDM && hep->type != FI_EP_UNSPEC)
		return -FI_ENODATA;
	if (hep && hep->protocol != FI_PROTO_UNSPEC && hep->protocol != FI_PROTO_RXM)
		return -FI_ENODATA;

	/* verbs refuses a program built against other inline headers
	 * (-FI_ENOSYS, which fi_getinfo prefers to the others' -FI_ENODATA). */
	ret = fd_layer_lower_getinfo(&fdv_provider, fdm_core_version(version), node,
				     service, flags, fdm_core_hints(hints), &core);
	if (ret)
		return ret;

	return fd_layer_wrap(version, core, hints, &fdm_wrap_ops, NULL, info);
}
