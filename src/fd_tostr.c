/*
 * fi_tostr / fi_tostr_r: human readable text for fabric data.
 *
 * The layout follows what libfabric 1.17 prints (and so what `fi_info -v`
 * shows): structures as indented "name: value" lines, bit sets as
 * "[ FI_A, FI_B ]", enums by their C names.  Scripts that scrape that
 * output keep working.  Text that does not fit in the caller's buffer is
 * cut short, never overrun; a NULL pointer prints "(null)".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_trigger.h>

#include "fd_core.h"

/* Enough for a complete fi_info with every attribute. */
#define FD_TOSTR_BUFLEN 8192

/* An append-only text buffer that silently stops at its end. */
struct fd_sb {
	char	*buf;
	size_t	size;
	size_t	pos;
};

static void sb_vprintf(struct fd_sb *sb, const char *fmt, va_list ap)
{
	int n;

	if (sb->pos + 1 >= sb->size)
		return;
	n = vsnprintf(sb->buf + sb->pos, sb->size - sb->pos, fmt, ap);
	if (n < 0)
		return;
	sb->pos += (size_t)n;
	if (sb->pos >= sb->size)
		sb->pos = sb->size - 1;
}

static void sb_printf(struct fd_sb *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct fd_sb *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

static void sb_puts(struct fd_sb *sb, const char *s)
{
	sb_printf(sb, "%s", s);
}

/* ------------------------------------------------------------------------
 * Names.  The tables list bits in the order libfabric prints them, which
 * is not always bit order.
 * ---------------------------------------------------------------------- */
struct fd_flag_name {
	uint64_t	bit;
	const char	*name;
};

#define FLAG(x) { x, #x }

static const struct fd_flag_name fd_caps_names[] = {
	FLAG(FI_MSG), FLAG(FI_RMA), FLAG(FI_TAGGED), FLAG(FI_ATOMIC),
	FLAG(FI_MULTICAST), FLAG(FI_COLLECTIVE), FLAG(FI_READ),
	FLAG(FI_WRITE), FLAG(FI_RECV), FLAG(FI_SEND), FLAG(FI_REMOTE_READ),
	FLAG(FI_REMOTE_WRITE), FLAG(FI_MULTI_RECV), FLAG(FI_REMOTE_CQ_DATA),
	FLAG(FI_TRIGGER), FLAG(FI_FENCE), FLAG(FI_VARIABLE_MSG),
	FLAG(FI_RMA_PMEM), FLAG(FI_SOURCE_ERR), FLAG(FI_LOCAL_COMM),
	FLAG(FI_REMOTE_COMM), FLAG(FI_SHARED_AV), FLAG(FI_RMA_EVENT),
	FLAG(FI_SOURCE), FLAG(FI_NAMED_RX_CTX), FLAG(FI_DIRECTED_RECV),
	FLAG(FI_HMEM),
};

static const struct fd_flag_name fd_op_flag_names[] = {
	FLAG(FI_MULTICAST), FLAG(FI_MULTI_RECV), FLAG(FI_REMOTE_CQ_DATA),
	FLAG(FI_MORE), FLAG(FI_PEEK), FLAG(FI_TRIGGER), FLAG(FI_FENCE),
	FLAG(FI_COMPLETION), FLAG(FI_INJECT), FLAG(FI_INJECT_COMPLETE),
	FLAG(FI_TRANSMIT_COMPLETE), FLAG(FI_DELIVERY_COMPLETE),
	FLAG(FI_MATCH_COMPLETE), FLAG(FI_AFFINITY), FLAG(FI_CLAIM),
	FLAG(FI_DISCARD),
};

static const struct fd_flag_name fd_order_names[] = {
	FLAG(FI_ORDER_RAR), FLAG(FI_ORDER_RAW), FLAG(FI_ORDER_RAS),
	FLAG(FI_ORDER_WAR), FLAG(FI_ORDER_WAW), FLAG(FI_ORDER_WAS),
	FLAG(FI_ORDER_SAR), FLAG(FI_ORDER_SAW), FLAG(FI_ORDER_SAS),
	FLAG(FI_ORDER_RMA_RAR), FLAG(FI_ORDER_RMA_RAW),
	FLAG(FI_ORDER_RMA_WAR), FLAG(FI_ORDER_RMA_WAW),
	FLAG(FI_ORDER_ATOMIC_RAR), FLAG(FI_ORDER_ATOMIC_RAW),
	FLAG(FI_ORDER_ATOMIC_WAR), FLAG(FI_ORDER_ATOMIC_WAW),
};

static const struct fd_flag_name fd_mode_names[] = {
	FLAG(FI_CONTEXT), FLAG(FI_MSG_PREFIX), FLAG(FI_ASYNC_IOV),
	FLAG(FI_RX_CQ_DATA), FLAG(FI_LOCAL_MR), FLAG(FI_NOTIFY_FLAGS_ONLY),
	FLAG(FI_RESTRICTED_COMP), FLAG(FI_CONTEXT2), FLAG(FI_BUFFERED_RECV),
};

static const struct fd_flag_name fd_cq_flag_names[] = {
	FLAG(FI_SEND), FLAG(FI_RECV), FLAG(FI_RMA), FLAG(FI_ATOMIC),
	FLAG(FI_MSG), FLAG(FI_TAGGED), FLAG(FI_READ), FLAG(FI_WRITE),
	FLAG(FI_REMOTE_READ), FLAG(FI_REMOTE_WRITE),
	FLAG(FI_REMOTE_CQ_DATA), FLAG(FI_MULTI_RECV), FLAG(FI_MORE),
	FLAG(FI_CLAIM),
};

static const struct fd_flag_name fd_mr_mode_names[] = {
	FLAG(FI_MR_BASIC), FLAG(FI_MR_SCALABLE), FLAG(FI_MR_LOCAL),
	FLAG(FI_MR_RAW), FLAG(FI_MR_VIRT_ADDR), FLAG(FI_MR_ALLOCATED),
	FLAG(FI_MR_PROV_KEY), FLAG(FI_MR_MMU_NOTIFY), FLAG(FI_MR_RMA_EVENT),
	FLAG(FI_MR_ENDPOINT), FLAG(FI_MR_HMEM), FLAG(FI_MR_COLLECTIVE),
};

#define NAMES(t) t, sizeof(t) / sizeof((t)[0])

/* "FI_A, FI_B" for the set bits that have names; unnamed bits are skipped. */
static void sb_flags(struct fd_sb *sb, uint64_t v,
		     const struct fd_flag_name *names, size_t n)
{
	const char *sep = "";

	for (size_t i = 0; i < n; i++) {
		if (v & names[i].bit) {
			sb_printf(sb, "%s%s", sep, names[i].name);
			sep = ", ";
		}
	}
}

/*
 * Completion order is not a plain bit set: no ordering bit at all is
 * FI_ORDER_NONE, all of them FI_ORDER_STRICT, and FI_ORDER_DATA stands
 * apart.  Partial sets print as nothing, as libfabric does.
 */
static void sb_comp_order(struct fd_sb *sb, uint64_t v)
{
	const char *sep = "";

	if (!(v & FI_ORDER_STRICT)) {
		sb_puts(sb, "FI_ORDER_NONE");
		sep = ", ";
	} else if ((v & FI_ORDER_STRICT) == FI_ORDER_STRICT) {
		sb_puts(sb, "FI_ORDER_STRICT");
		sep = ", ";
	}
	if (v & FI_ORDER_DATA)
		sb_printf(sb, "%sFI_ORDER_DATA", sep);
}

#define CASE(x) case x: return #x

static const char *fd_ep_type_str(int v)
{
	switch (v) {
	CASE(FI_EP_UNSPEC);
	CASE(FI_EP_MSG);
	CASE(FI_EP_DGRAM);
	CASE(FI_EP_RDM);
	CASE(FI_EP_SOCK_STREAM);
	CASE(FI_EP_SOCK_DGRAM);
	default: return "Unknown";
	}
}

static const char *fd_addr_format_str(uint32_t v)
{
	if (v & FI_PROV_SPECIFIC)
		return "Provider specific";
	switch (v) {
	CASE(FI_FORMAT_UNSPEC);
	CASE(FI_SOCKADDR);
	CASE(FI_SOCKADDR_IN);
	CASE(FI_SOCKADDR_IN6);
	CASE(FI_SOCKADDR_IB);
	CASE(FI_ADDR_PSMX);
	CASE(FI_ADDR_GNI);
	CASE(FI_ADDR_BGQ);
	CASE(FI_ADDR_MLX);
	CASE(FI_ADDR_STR);
	CASE(FI_ADDR_PSMX2);
	CASE(FI_ADDR_IB_UD);
	CASE(FI_ADDR_EFA);
	CASE(FI_ADDR_PSMX3);
	CASE(FI_ADDR_OPX);
	CASE(FI_ADDR_CXI);
	default: return "Unknown";
	}
}

static const char *fd_threading_str(int v)
{
	switch (v) {
	CASE(FI_THREAD_UNSPEC);
	CASE(FI_THREAD_SAFE);
	CASE(FI_THREAD_FID);
	CASE(FI_THREAD_DOMAIN);
	CASE(FI_THREAD_COMPLETION);
	CASE(FI_THREAD_ENDPOINT);
	default: return "Unknown";
	}
}

static const char *fd_progress_str(int v)
{
	switch (v) {
	CASE(FI_PROGRESS_UNSPEC);
	CASE(FI_PROGRESS_AUTO);
	CASE(FI_PROGRESS_MANUAL);
	default: return "Unknown";
	}
}

static const char *fd_resource_mgmt_str(int v)
{
	switch (v) {
	CASE(FI_RM_UNSPEC);
	CASE(FI_RM_DISABLED);
	CASE(FI_RM_ENABLED);
	default: return "Unknown";
	}
}

static const char *fd_protocol_str(uint32_t v)
{
	if (v & FI_PROV_SPECIFIC)
		return "Provider specific";
	switch (v) {
	CASE(FI_PROTO_UNSPEC);
	CASE(FI_PROTO_RDMA_CM_IB_RC);
	CASE(FI_PROTO_IWARP);
	CASE(FI_PROTO_IB_UD);
	CASE(FI_PROTO_PSMX);
	CASE(FI_PROTO_UDP);
	CASE(FI_PROTO_SOCK_TCP);
	CASE(FI_PROTO_IWARP_RDM);
	CASE(FI_PROTO_IB_RDM);
	CASE(FI_PROTO_GNI);
	CASE(FI_PROTO_RXM);
	CASE(FI_PROTO_RXD);
	CASE(FI_PROTO_MLX);
	CASE(FI_PROTO_NETWORKDIRECT);
	CASE(FI_PROTO_PSMX2);
	CASE(FI_PROTO_SHM);
	CASE(FI_PROTO_RSTREAM);
	CASE(FI_PROTO_RDMA_CM_IB_XRC);
	CASE(FI_PROTO_EFA);
	CASE(FI_PROTO_PSMX3);
	CASE(FI_PROTO_RXM_TCP);
	CASE(FI_PROTO_OPX);
	CASE(FI_PROTO_CXI);
	CASE(FI_PROTO_XNET);
	default: return "Unknown";
	}
}

static const char *fd_av_type_str(int v)
{
	switch (v) {
	CASE(FI_AV_UNSPEC);
	CASE(FI_AV_MAP);
	CASE(FI_AV_TABLE);
	default: return "Unknown";
	}
}

static const char *fd_atomic_type_str(int v)
{
	switch (v) {
	CASE(FI_INT8);
	CASE(FI_UINT8);
	CASE(FI_INT16);
	CASE(FI_UINT16);
	CASE(FI_INT32);
	CASE(FI_UINT32);
	CASE(FI_INT64);
	CASE(FI_UINT64);
	CASE(FI_FLOAT);
	CASE(FI_DOUBLE);
	CASE(FI_FLOAT_COMPLEX);
	CASE(FI_DOUBLE_COMPLEX);
	CASE(FI_LONG_DOUBLE);
	CASE(FI_LONG_DOUBLE_COMPLEX);
	CASE(FI_INT128);
	CASE(FI_UINT128);
	default: return "Unknown";
	}
}

static const char *fd_atomic_op_str(int v)
{
	switch (v) {
	CASE(FI_MIN);
	CASE(FI_MAX);
	CASE(FI_SUM);
	CASE(FI_PROD);
	CASE(FI_LOR);
	CASE(FI_LAND);
	CASE(FI_BOR);
	CASE(FI_BAND);
	CASE(FI_LXOR);
	CASE(FI_BXOR);
	CASE(FI_ATOMIC_READ);
	CASE(FI_ATOMIC_WRITE);
	CASE(FI_CSWAP);
	CASE(FI_CSWAP_NE);
	CASE(FI_CSWAP_LE);
	CASE(FI_CSWAP_LT);
	CASE(FI_CSWAP_GE);
	CASE(FI_CSWAP_GT);
	CASE(FI_MSWAP);
	default: return "Unknown";
	}
}

static const char *fd_eq_event_str(uint32_t v)
{
	switch (v) {
	CASE(FI_NOTIFY);
	CASE(FI_CONNREQ);
	CASE(FI_CONNECTED);
	CASE(FI_SHUTDOWN);
	CASE(FI_MR_COMPLETE);
	CASE(FI_AV_COMPLETE);
	CASE(FI_JOIN_COMPLETE);
	default: return "Unknown";
	}
}

static const char *fd_op_type_str(int v)
{
	switch (v) {
	CASE(FI_OP_RECV);
	CASE(FI_OP_SEND);
	CASE(FI_OP_TRECV);
	CASE(FI_OP_TSEND);
	CASE(FI_OP_READ);
	CASE(FI_OP_WRITE);
	CASE(FI_OP_ATOMIC);
	CASE(FI_OP_FETCH_ATOMIC);
	CASE(FI_OP_COMPARE_ATOMIC);
	CASE(FI_OP_CNTR_SET);
	CASE(FI_OP_CNTR_ADD);
	default: return "Unknown";
	}
}

static const char *fd_collective_op_str(int v)
{
	switch (v) {
	CASE(FI_BARRIER);
	CASE(FI_BROADCAST);
	CASE(FI_ALLTOALL);
	CASE(FI_ALLREDUCE);
	CASE(FI_ALLGATHER);
	CASE(FI_REDUCE_SCATTER);
	CASE(FI_REDUCE);
	CASE(FI_SCATTER);
	CASE(FI_GATHER);
	default: return "Unknown";
	}
}

static const char *fd_hmem_iface_str(int v)
{
	switch (v) {
	CASE(FI_HMEM_SYSTEM);
	CASE(FI_HMEM_CUDA);
	CASE(FI_HMEM_ROCR);
	CASE(FI_HMEM_ZE);
	CASE(FI_HMEM_NEURON);
	CASE(FI_HMEM_SYNAPSEAI);
	default: return "Unknown";
	}
}

static const char *fd_cq_format_str(int v)
{
	switch (v) {
	CASE(FI_CQ_FORMAT_UNSPEC);
	CASE(FI_CQ_FORMAT_CONTEXT);
	CASE(FI_CQ_FORMAT_MSG);
	CASE(FI_CQ_FORMAT_DATA);
	CASE(FI_CQ_FORMAT_TAGGED);
	default: return "Unknown";
	}
}

static const char *const fd_log_level_names[] = {
	[FD_LOG_WARN] = "warn",
	[FD_LOG_TRACE] = "trace",
	[FD_LOG_INFO] = "info",
	[FD_LOG_DEBUG] = "debug",
};

static const char *const fd_log_subsys_names[] = {
	[FD_LOG_CORE] = "core",
	[FD_LOG_FABRIC] = "fabric",
	[FD_LOG_DOMAIN] = "domain",
	[FD_LOG_EP_CTRL] = "ep_ctrl",
	[FD_LOG_EP_DATA] = "ep_data",
	[FD_LOG_AV] = "av",
	[FD_LOG_CQ] = "cq",
	[FD_LOG_EQ] = "eq",
	[FD_LOG_MR] = "mr",
	[FD_LOG_CNTR] = "cntr",
};

static const char *fd_table_str(const char *const *t, size_t n, int v)
{
	return v >= 0 && (size_t)v < n && t[v] ? t[v] : "Unknown";
}

#undef CASE

/* ------------------------------------------------------------------------
 * Structures.  'ind' is the indentation of the structure's own title line;
 * its fields go four spaces deeper.
 * ---------------------------------------------------------------------- */
static void sb_field_flags(struct fd_sb *sb, const char *ind, const char *name,
			   uint64_t v, const struct fd_flag_name *names,
			   size_t n)
{
	sb_printf(sb, "%s    %s: [ ", ind, name);
	sb_flags(sb, v, names, n);
	sb_puts(sb, " ]\n");
}

static void sb_tx_attr(struct fd_sb *sb, const char *ind,
		       const struct fi_tx_attr *a)
{
	sb_printf(sb, "%sfi_tx_attr:", ind);
	if (!a) {
		sb_puts(sb, " (null)\n");
		return;
	}
	sb_puts(sb, "\n");
	sb_field_flags(sb, ind, "caps", a->caps, NAMES(fd_caps_names));
	sb_field_flags(sb, ind, "mode", a->mode, NAMES(fd_mode_names));
	sb_field_flags(sb, ind, "op_flags", a->op_flags,
		       NAMES(fd_op_flag_names));
	sb_field_flags(sb, ind, "msg_order", a->msg_order,
		       NAMES(fd_order_names));
	sb_printf(sb, "%s    comp_order: [ ", ind);
	sb_comp_order(sb, a->comp_order);
	sb_puts(sb, " ]\n");
	sb_printf(sb, "%s    inject_size: %zu\n", ind, a->inject_size);
	sb_printf(sb, "%s    size: %zu\n", ind, a->size);
	sb_printf(sb, "%s    iov_limit: %zu\n", ind, a->iov_limit);
	sb_printf(sb, "%s    rma_iov_limit: %zu\n", ind, a->rma_iov_limit);
	sb_printf(sb, "%s    tclass: 0x%" PRIx32 "\n", ind, a->tclass);
}

static void sb_rx_attr(struct fd_sb *sb, const char *ind,
		       const struct fi_rx_attr *a)
{
	sb_printf(sb, "%sfi_rx_attr:", ind);
	if (!a) {
		sb_puts(sb, " (null)\n");
		return;
	}
	sb_puts(sb, "\n");
	sb_field_flags(sb, ind, "caps", a->caps, NAMES(fd_caps_names));
	sb_field_flags(sb, ind, "mode", a->mode, NAMES(fd_mode_names));
	sb_field_flags(sb, ind, "op_flags", a->op_flags,
		       NAMES(fd_op_flag_names));
	sb_field_flags(sb, ind, "msg_order", a->msg_order,
		       NAMES(fd_order_names));
	sb_printf(sb, "%s    comp_order: [ ", ind);
	sb_comp_order(sb, a->comp_order);
	sb_puts(sb, " ]\n");
	sb_printf(sb, "%s    total_buffered_recv: %zu\n", ind,
		  a->total_buffered_recv);
	sb_printf(sb, "%s    size: %zu\n", ind, a->size);
	sb_printf(sb, "%s    iov_limit: %zu\n", ind, a->iov_limit);
}

static void sb_ctx_cnt(struct fd_sb *sb, const char *ind, const char *name,
		       size_t cnt)
{
	if (cnt == FI_SHARED_CONTEXT)
		sb_printf(sb, "%s    %s: FI_SHARED_CONTEXT\n", ind, name);
	else
		sb_printf(sb, "%s    %s: %zu\n", ind, name, cnt);
}

static void sb_ep_attr(struct fd_sb *sb, const char *ind,
		       const struct fi_ep_attr *a)
{
	sb_printf(sb, "%sfi_ep_attr:", ind);
	if (!a) {
		sb_puts(sb, " (null)\n");
		return;
	}
	sb_puts(sb, "\n");
	sb_printf(sb, "%s    type: %s\n", ind, fd_ep_type_str(a->type));
	sb_printf(sb, "%s    protocol: %s\n", ind,
		  fd_protocol_str(a->protocol));
	sb_printf(sb, "%s    protocol_version: %" PRIu32 "\n", ind,
		  a->protocol_version);
	sb_printf(sb, "%s    max_msg_size: %zu\n", ind, a->max_msg_size);
	sb_printf(sb, "%s    msg_prefix_size: %zu\n", ind, a->msg_prefix_size);
	sb_printf(sb, "%s    max_order_raw_size: %zu\n", ind,
		  a->max_order_raw_size);
	sb_printf(sb, "%s    max_order_war_size: %zu\n", ind,
		  a->max_order_war_size);
	sb_printf(sb, "%s    max_order_waw_size: %zu\n", ind,
		  a->max_order_waw_size);
	sb_printf(sb, "%s    mem_tag_format: 0x%016" PRIx64 "\n", ind,
		  a->mem_tag_format);
	sb_ctx_cnt(sb, ind, "tx_ctx_cnt", a->tx_ctx_cnt);
	sb_ctx_cnt(sb, ind, "rx_ctx_cnt", a->rx_ctx_cnt);
	sb_printf(sb, "%s    auth_key_size: %zu\n", ind, a->auth_key_size);
}

static void sb_domain_attr(struct fd_sb *sb, const char *ind,
			   const struct fi_domain_attr *a)
{
	sb_printf(sb, "%sfi_domain_attr:", ind);
	if (!a) {
		sb_puts(sb, " (null)\n");
		return;
	}
	sb_puts(sb, "\n");
	sb_printf(sb, "%s    domain: 0x%" PRIxPTR "\n", ind,
		  (uintptr_t)a->domain);
	sb_printf(sb, "%s    name: %s\n", ind, a->name ? a->name : "(null)");
	sb_printf(sb, "%s    threading: %s\n", ind,
		  fd_threading_str(a->threading));
	sb_printf(sb, "%s    control_progress: %s\n", ind,
		  fd_progress_str(a->control_progress));
	sb_printf(sb, "%s    data_progress: %s\n", ind,
		  fd_progress_str(a->data_progress));
	sb_printf(sb, "%s    resource_mgmt: %s\n", ind,
		  fd_resource_mgmt_str(a->resource_mgmt));
	sb_printf(sb, "%s    av_type: %s\n", ind, fd_av_type_str(a->av_type));
	sb_field_flags(sb, ind, "mr_mode", (uint64_t)(unsigned int)a->mr_mode,
		       NAMES(fd_mr_mode_names));
	sb_printf(sb, "%s    mr_key_size: %zu\n", ind, a->mr_key_size);
	sb_printf(sb, "%s    cq_data_size: %zu\n", ind, a->cq_data_size);
	sb_printf(sb, "%s    cq_cnt: %zu\n", ind, a->cq_cnt);
	sb_printf(sb, "%s    ep_cnt: %zu\n", ind, a->ep_cnt);
	sb_printf(sb, "%s    tx_ctx_cnt: %zu\n", ind, a->tx_ctx_cnt);
	sb_printf(sb, "%s    rx_ctx_cnt: %zu\n", ind, a->rx_ctx_cnt);
	sb_printf(sb, "%s    max_ep_tx_ctx: %zu\n", ind, a->max_ep_tx_ctx);
	sb_printf(sb, "%s    max_ep_rx_ctx: %zu\n", ind, a->max_ep_rx_ctx);
	sb_printf(sb, "%s    max_ep_stx_ctx: %zu\n", ind, a->max_ep_stx_ctx);
	sb_printf(sb, "%s    max_ep_srx_ctx: %zu\n", ind, a->max_ep_srx_ctx);
	sb_printf(sb, "%s    cntr_cnt: %zu\n", ind, a->cntr_cnt);
	sb_printf(sb, "%s    mr_iov_limit: %zu\n", ind, a->mr_iov_limit);
	sb_field_flags(sb, ind, "caps", a->caps, NAMES(fd_caps_names));
	sb_field_flags(sb, ind, "mode", a->mode, NAMES(fd_mode_names));
	sb_printf(sb, "%s    auth_key_size: %zu\n", ind, a->auth_key_size);
	sb_printf(sb, "%s    max_err_data: %zu\n", ind, a->max_err_data);
	sb_printf(sb, "%s    mr_cnt: %zu\n", ind, a->mr_cnt);
	sb_printf(sb, "%s    tclass: 0x%" PRIx32 "\n", ind, a->tclass);
}

static void sb_fabric_attr(struct fd_sb *sb, const char *ind,
			   const struct fi_fabric_attr *a)
{
	sb_printf(sb, "%sfi_fabric_attr:", ind);
	if (!a) {
		sb_puts(sb, " (null)\n");
		return;
	}
	sb_puts(sb, "\n");
	sb_printf(sb, "%s    name: %s\n", ind, a->name ? a->name : "(null)");
	sb_printf(sb, "%s    prov_name: %s\n", ind,
		  a->prov_name ? a->prov_name : "(null)");
	sb_printf(sb, "%s    prov_version: %" PRIu32 ".%" PRIu32 "\n", ind,
		  FI_MAJOR(a->prov_version), FI_MINOR(a->prov_version));
	sb_printf(sb, "%s    api_version: %" PRIu32 ".%" PRIu32 "\n", ind,
		  FI_MAJOR(a->api_version), FI_MINOR(a->api_version));
}

/* A fid prints itself when it knows how; otherwise its address. */
static void sb_fid(struct fd_sb *sb, const struct fid *fid)
{
	if (fid->ops && FI_CHECK_OP(fid->ops, struct fi_ops, tostr)) {
		if (sb->pos + 1 < sb->size) {
			int n = fid->ops->tostr(fid, sb->buf + sb->pos,
						sb->size - sb->pos);

			/* The callee may write anything: re-terminate and
			 * take its length from the text itself. */
			sb->buf[sb->size - 1] = '\0';
			if (n >= 0)
				sb->pos += strlen(sb->buf + sb->pos);
		}
		return;
	}
	sb_printf(sb, "fid: %p\n", (const void *)fid);
}

static void sb_info(struct fd_sb *sb, const struct fi_info *info)
{
	char addr[256];

	sb_puts(sb, "fi_info:\n");
	sb_field_flags(sb, "", "caps", info->caps, NAMES(fd_caps_names));
	sb_field_flags(sb, "", "mode", info->mode, NAMES(fd_mode_names));
	sb_printf(sb, "    addr_format: %s\n",
		  fd_addr_format_str(info->addr_format));
	sb_printf(sb, "    src_addrlen: %zu\n", info->src_addrlen);
	sb_printf(sb, "    dest_addrlen: %zu\n", info->dest_addrlen);
	fd_addr_str(addr, sizeof(addr), info->addr_format, info->src_addr,
		    info->src_addrlen);
	sb_printf(sb, "    src_addr: %s\n", addr);
	fd_addr_str(addr, sizeof(addr), info->addr_format, info->dest_addr,
		    info->dest_addrlen);
	sb_printf(sb, "    dest_addr: %s\n", addr);
	/* The handle is only shown, never followed: it may be anything. */
	sb_printf(sb, "    handle: %p\n", (void *)info->handle);
	sb_tx_attr(sb, "    ", info->tx_attr);
	sb_rx_attr(sb, "    ", info->rx_attr);
	sb_ep_attr(sb, "    ", info->ep_attr);
	sb_domain_attr(sb, "    ", info->domain_attr);
	sb_fabric_attr(sb, "    ", info->fabric_attr);
	if (info->nic && info->nic->fid.ops &&
	    FI_CHECK_OP(info->nic->fid.ops, struct fi_ops, tostr)) {
		sb_puts(sb, "    nic:");
		sb_fid(sb, &info->nic->fid);
	} else {
		sb_printf(sb, "    nic: %p\n", (void *)info->nic);
	}
}

static void fd_tostr_sb(struct fd_sb *sb, const void *data,
			enum fi_type datatype)
{
	if (!data) {
		sb_puts(sb, "(null)");
		return;
	}

	switch (datatype) {
	case FI_TYPE_INFO:
		sb_info(sb, data);
		break;
	case FI_TYPE_EP_TYPE:
		sb_puts(sb, fd_ep_type_str(*(const int *)data));
		break;
	case FI_TYPE_CAPS:
		sb_flags(sb, *(const uint64_t *)data, NAMES(fd_caps_names));
		break;
	case FI_TYPE_OP_FLAGS:
		sb_flags(sb, *(const uint64_t *)data, NAMES(fd_op_flag_names));
		break;
	case FI_TYPE_ADDR_FORMAT:
		sb_puts(sb, fd_addr_format_str(*(const uint32_t *)data));
		break;
	case FI_TYPE_TX_ATTR:
		sb_tx_attr(sb, "", data);
		break;
	case FI_TYPE_RX_ATTR:
		sb_rx_attr(sb, "", data);
		break;
	case FI_TYPE_EP_ATTR:
		sb_ep_attr(sb, "", data);
		break;
	case FI_TYPE_DOMAIN_ATTR:
		sb_domain_attr(sb, "", data);
		break;
	case FI_TYPE_FABRIC_ATTR:
		sb_fabric_attr(sb, "", data);
		break;
	case FI_TYPE_THREADING:
		sb_puts(sb, fd_threading_str(*(const int *)data));
		break;
	case FI_TYPE_PROGRESS:
		sb_puts(sb, fd_progress_str(*(const int *)data));
		break;
	case FI_TYPE_PROTOCOL:
		sb_puts(sb, fd_protocol_str(*(const uint32_t *)data));
		break;
	case FI_TYPE_MSG_ORDER:
		sb_flags(sb, *(const uint64_t *)data, NAMES(fd_order_names));
		break;
	case FI_TYPE_MODE:
		sb_flags(sb, *(const uint64_t *)data, NAMES(fd_mode_names));
		break;
	case FI_TYPE_AV_TYPE:
		sb_puts(sb, fd_av_type_str(*(const int *)data));
		break;
	case FI_TYPE_ATOMIC_TYPE:
		sb_puts(sb, fd_atomic_type_str(*(const int *)data));
		break;
	case FI_TYPE_ATOMIC_OP:
		sb_puts(sb, fd_atomic_op_str(*(const int *)data));
		break;
	case FI_TYPE_VERSION:
		/* libfabric answers with its own version whatever the data;
		 * so do we, being that version. */
		sb_printf(sb, "%d.%d.%d", FI_MAJOR_VERSION, FI_MINOR_VERSION,
			  FI_REVISION_VERSION);
		break;
	case FI_TYPE_EQ_EVENT:
		sb_puts(sb, fd_eq_event_str(*(const uint32_t *)data));
		break;
	case FI_TYPE_CQ_EVENT_FLAGS:
		sb_flags(sb, *(const uint64_t *)data, NAMES(fd_cq_flag_names));
		break;
	case FI_TYPE_MR_MODE:
		sb_flags(sb, (uint64_t)*(const unsigned int *)data,
			 NAMES(fd_mr_mode_names));
		break;
	case FI_TYPE_OP_TYPE:
		sb_puts(sb, fd_op_type_str(*(const int *)data));
		break;
	case FI_TYPE_FID:
		sb_fid(sb, data);
		break;
	case FI_TYPE_COLLECTIVE_OP:
		sb_puts(sb, fd_collective_op_str(*(const int *)data));
		break;
	case FI_TYPE_HMEM_IFACE:
		sb_puts(sb, fd_hmem_iface_str(*(const int *)data));
		break;
	case FI_TYPE_CQ_FORMAT:
		sb_puts(sb, fd_cq_format_str(*(const int *)data));
		break;
	case FI_TYPE_LOG_LEVEL:
		sb_puts(sb, fd_table_str(fd_log_level_names,
					 FD_LOG_LEVEL_MAX,
					 *(const int *)data));
		break;
	case FI_TYPE_LOG_SUBSYS:
		sb_puts(sb, fd_table_str(fd_log_subsys_names,
					 FD_LOG_SUBSYS_MAX,
					 *(const int *)data));
		break;
	default:
		sb_puts(sb, "Unknown type");
		break;
	}
}

char *fi_tostr_r(char *buf, size_t len, const void *data,
		 enum fi_type datatype)
{
	struct fd_sb sb = { .buf = buf, .size = len, .pos = 0 };

	if (!buf || !len)
		return NULL;
	buf[0] = '\0';
	fd_tostr_sb(&sb, data, datatype);
	return buf;
}

char *fi_tostr(const void *data, enum fi_type datatype)
{
	/* One buffer per thread: the result stays valid until the same
	 * thread calls fi_tostr again. */
	static _Thread_local char buf[FD_TOSTR_BUFLEN];

	return fi_tostr_r(buf, sizeof(buf), data, datatype);
}
