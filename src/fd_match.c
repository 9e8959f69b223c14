/*
 * Matching a provider's fi_info template against application hints, and
 * cutting the template down to what the hints asked for.
 *
 * The rules are those of the fi_getinfo(3), fi_domain(3), fi_endpoint(3)
 * and fi_mr(3) man pages:
 *  - a zero hint is a wildcard, a non-zero hint must be met;
 *  - mode bits are the application's offer: a provider needing a bit the
 *    hints do not set is skipped, and bits it does not need are cleared;
 *  - sizes and limits in the template are maxima the hints may not exceed;
 *  - primary capabilities must be asked for, secondary ones may be granted.
 * Each rejection is logged at FI_LOG_INFO (FI_LOG_LEVEL=info shows why
 * fi_getinfo found nothing) and reported to the caller by name.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fd_core.h"

#define FD_MR_LEGACY (FI_MR_BASIC | FI_MR_SCALABLE)
/* mr_mode bits that only matter to a peer targeting our memory. */
#define FD_MR_RMA_TARGET (FI_MR_RAW | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | \
			  FI_MR_RMA_EVENT)
#define FD_MSG_FAMILY (FI_MSG | FI_TAGGED | FI_MULTICAST | FI_COLLECTIVE | \
		       FI_VARIABLE_MSG)
#define FD_MSG_MODIFIERS (FI_SEND | FI_RECV)
#define FD_RMA_FAMILY (FI_RMA | FI_ATOMIC)
#define FD_RMA_MODIFIERS (FI_READ | FI_WRITE | FI_REMOTE_READ | \
			  FI_REMOTE_WRITE)

/*
 * Log why prov does not match and report the attribute; always returns
 * -FI_ENODATA.  The caller's function and line go into the message.
 */
static int fd_reject_at(const char *func, int line, const char **why,
			const struct fi_info *prov, const char *attr,
			const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static int fd_reject_at(const char *func, int line, const char **why,
			const struct fi_info *prov, const char *attr,
			const char *fmt, ...)
{
	if (why)
		*why = attr;
	if (fd_log_maybe(FD_LOG_INFO)) {
		const char *pname = prov->fabric_attr &&
				    prov->fabric_attr->prov_name ?
				    prov->fabric_attr->prov_name : "?";
		const char *dname = prov->domain_attr &&
				    prov->domain_attr->name ?
				    prov->domain_attr->name : "?";
		char detail[256];
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
		fd_log(FD_LOG_INFO, FD_LOG_CORE, FD_LOG_PROV, func, line,
		       "%s/%s: %s does not match: %s", pname, dname, attr,
		       detail);
	}
	return -FI_ENODATA;
}

#define fd_reject(...) fd_reject_at(__func__, __LINE__, __VA_ARGS__)

/* The same for a bit set, named in the message ("FI_TAGGED (0x8)"). */
static int fd_reject_bits_at(const char *func, int line, const char **why,
			     const struct fi_info *prov, const char *attr,
			     const char *what, uint64_t bits,
			     enum fi_type type)
{
	char names[512];

	if (!fd_log_maybe(FD_LOG_INFO))
		return fd_reject_at(func, line, why, prov, attr, "%s", what);
	if (type == FI_TYPE_MR_MODE) {
		int mr = (int)bits;

		fi_tostr_r(names, sizeof(names), &mr, type);
	} else {
		fi_tostr_r(names, sizeof(names), &bits, type);
	}
	return fd_reject_at(func, line, why, prov, attr, "%s %s (0x%" PRIx64 ")",
			    what, names, bits);
}

#define fd_reject_bits(...) fd_reject_bits_at(__func__, __LINE__, __VA_ARGS__)

/* The same for an enum value, both sides named ("asked FI_EP_RDM, ..."). */
static int fd_reject_enum_at(const char *func, int line, const char **why,
			     const struct fi_info *prov, const char *attr,
			     const void *asked, const void *have,
			     enum fi_type type)
{
	char a[64] = "", h[64] = "";

	if (fd_log_maybe(FD_LOG_INFO)) {
		fi_tostr_r(a, sizeof(a), asked, type);
		fi_tostr_r(h, sizeof(h), have, type);
	}
	return fd_reject_at(func, line, why, prov, attr,
			    "asked %s, provider has %s", a, h);
}

#define fd_reject_enum(...) fd_reject_enum_at(__func__, __LINE__, __VA_ARGS__)

/* Reject when a requested number exceeds what the provider offers. */
#define CHECK_MAX(attr, hint, provv)					\
	do {								\
		if ((uint64_t)(hint) > (uint64_t)(provv))		\
			return fd_reject(why, prov, attr,		\
					 "asked %" PRIu64 ", at most %" PRIu64, \
					 (uint64_t)(hint), (uint64_t)(provv)); \
	} while (0)

/* Reject when requested bits are not all offered. */
#define CHECK_BITS(attr, hint, provv, type)				\
	do {								\
		if ((uint64_t)(hint) & ~(uint64_t)(provv))		\
			return fd_reject_bits(why, prov, attr,		\
					      "not supported:",		\
					      (uint64_t)(hint) &	\
					      ~(uint64_t)(provv), type); \
	} while (0)

/* Reject when the provider needs bits the application does not offer. */
#define CHECK_MODE(attr, offered, required, type)			\
	do {								\
		if ((uint64_t)(required) & ~(uint64_t)(offered))	\
			return fd_reject_bits(why, prov, attr,		\
					      "provider needs",		\
					      (uint64_t)(required) &	\
					      ~(uint64_t)(offered), type); \
	} while (0)

/* Higher is a stronger promise by the provider. */
static int fd_thread_strength(int t)
{
	switch (t) {
	case FI_THREAD_SAFE:		return 5;
	case FI_THREAD_FID:		return 4;
	case FI_THREAD_ENDPOINT:	return 3;
	case FI_THREAD_COMPLETION:	return 2;
	case FI_THREAD_DOMAIN:		return 1;
	default:			return -1;
	}
}

static int fd_rma_target(uint64_t caps)
{
	return (caps & FD_RMA_FAMILY) &&
	       ((caps & (FI_REMOTE_READ | FI_REMOTE_WRITE)) ||
		!(caps & FD_CAP_MODIFIERS));
}

/*
 * The mr_mode bits an application must accept for 'caps' (API 1.5+ rules):
 * without RMA/atomic targets, bits about remote access are not needed,
 * and without local registration nothing is.
 */
static int fd_mr_required(int prov_mr, uint64_t caps)
{
	int req = prov_mr & ~FD_MR_LEGACY;

	if (!fd_rma_target(caps)) {
		if (!(req & (FI_MR_LOCAL | FI_MR_HMEM)))
			return 0;
		req &= ~FD_MR_RMA_TARGET;
	}
	return req;
}

/* Bring in modifiers for each primary family the hints left unmodified. */
static uint64_t fd_expand_caps(uint64_t hint, uint64_t prov_caps)
{
	uint64_t caps = hint;

	if ((hint & FD_MSG_FAMILY) && !(hint & FD_MSG_MODIFIERS))
		caps |= prov_caps & FD_MSG_MODIFIERS;
	if ((hint & FD_RMA_FAMILY) && !(hint & FD_RMA_MODIFIERS))
		caps |= prov_caps & FD_RMA_MODIFIERS;
	return caps;
}

/* The generic FI_SOCKADDR is a family of formats: an entry of it serves
 * any sockaddr hint, and a hint of it takes an entry of any sockaddr
 * family (IPv4 or IPv6), as libfabric's own matching has it. */
static int fd_addr_format_ok(uint32_t prov_fmt, uint32_t hint)
{
	if (hint == FI_FORMAT_UNSPEC || prov_fmt == FI_FORMAT_UNSPEC)
		return 1;
	if (prov_fmt == FI_SOCKADDR)
		return hint == FI_SOCKADDR || hint == FI_SOCKADDR_IN ||
		       hint == FI_SOCKADDR_IN6;
	if (hint == FI_SOCKADDR)
		return prov_fmt == FI_SOCKADDR_IN || prov_fmt == FI_SOCKADDR_IN6;
	return prov_fmt == hint;
}

/* "verbs" matches "verbs"; "verbs;rstream" matches its core "verbs". */
static int fd_prov_name_ok(const char *prov_name, const char *hint)
{
	size_t n;

	if (!prov_name)
		return 0;
	if (!strcasecmp(prov_name, hint))
		return 1;
	n = strcspn(hint, ";");
	return hint[n] == ';' && strlen(prov_name) == n &&
	       !strncasecmp(prov_name, hint, n);
}

static int fd_check_fabric(const struct fi_info *prov,
			   const struct fi_fabric_attr *h, const char **why)
{
	const struct fi_fabric_attr *p = prov->fabric_attr;

	if (!p)
		return 0;
	if (h->name && (!p->name || strcmp(h->name, p->name)))
		return fd_reject(why, prov, "fabric_attr->name",
				 "asked '%s', have '%s'", h->name,
				 p->name ? p->name : "(null)");
	if (h->prov_name && !fd_prov_name_ok(p->prov_name, h->prov_name))
		return fd_reject(why, prov, "fabric_attr->prov_name",
				 "asked '%s', have '%s'", h->prov_name,
				 p->prov_name ? p->prov_name : "(null)");
	CHECK_MAX("fabric_attr->prov_version", h->prov_version,
		  p->prov_version);
	return 0;
}

static int fd_check_mr_mode(uint32_t version, const struct fi_info *prov,
			    const struct fi_info *hints, const char **why)
{
	int user = hints->domain_attr->mr_mode;
	int pmr = prov->domain_attr->mr_mode;
	uint64_t caps = hints->caps ? hints->caps : prov->caps;
	const char *attr = "domain_attr->mr_mode";

	if (FI_VERSION_LT(version, FI_VERSION(1, 5))) {
		/* Before 1.5 only the legacy values exist, and local
		 * registration is agreed with the FI_LOCAL_MR mode bit. */
		if (user != FI_MR_UNSPEC && user != FI_MR_BASIC &&
		    user != FI_MR_SCALABLE)
			return fd_reject(why, prov, attr,
					 "0x%x is not valid before API 1.5",
					 user);
		if ((pmr & FI_MR_LOCAL) && !(hints->mode & FI_LOCAL_MR))
			return fd_reject(why, prov, "mode",
					 "provider needs FI_LOCAL_MR");
		if ((user == FI_MR_UNSPEC && !(pmr & FD_MR_LEGACY)) ||
		    (user != FI_MR_UNSPEC && !(pmr & user)))
			return fd_reject(why, prov, attr,
					 "asked 0x%x, provider offers 0x%x",
					 user, pmr);
		return 0;
	}

	if ((pmr & FI_MR_LOCAL) && !(user & FI_MR_LOCAL) &&
	    !(hints->mode & FI_LOCAL_MR))
		return fd_reject(why, prov, attr,
				 "provider needs FI_MR_LOCAL (or mode "
				 "FI_LOCAL_MR)");

	if (user & (FI_MR_BASIC | FI_MR_SCALABLE)) {
		int legacy = user & FD_MR_LEGACY;

		if ((user & ~legacy) || legacy == FD_MR_LEGACY)
			return fd_reject(why, prov, attr,
					 "FI_MR_BASIC/FI_MR_SCALABLE must be "
					 "used alone (0x%x)", user);
		if (!(pmr & legacy))
			return fd_reject(why, prov, attr,
					 "provider does not offer %s",
					 legacy == FI_MR_BASIC ? "FI_MR_BASIC" :
					 "FI_MR_SCALABLE");
		return 0;
	}

	CHECK_MODE(attr, user | FI_MR_LOCAL, fd_mr_required(pmr, caps),
		   FI_TYPE_MR_MODE);
	return 0;
}

static int fd_check_domain(uint32_t version, const struct fi_info *prov,
			   const struct fi_info *hints, const char **why)
{
	const struct fi_domain_attr *h = hints->domain_attr;
	const struct fi_domain_attr *p = prov->domain_attr;
	int ts;

	if (!p)
		return 0;
	if (h->name && (!p->name || strcasecmp(h->name, p->name)))
		return fd_reject(why, prov, "domain_attr->name",
				 "asked '%s', have '%s'", h->name,
				 p->name ? p->name : "(null)");

	if (h->threading != FI_THREAD_UNSPEC) {
		ts = fd_thread_strength(h->threading);
		if (ts < 0 || fd_thread_strength(p->threading) < ts)
			return fd_reject_enum(why, prov,
					      "domain_attr->threading",
					      &h->threading, &p->threading,
					      FI_TYPE_THREADING);
	}

	/* An automatic provider also serves an application that drives
	 * progress itself; the reverse is not true. */
	if (h->control_progress != FI_PROGRESS_UNSPEC &&
	    !(h->control_progress == p->control_progress ||
	      (h->control_progress == FI_PROGRESS_MANUAL &&
	       p->control_progress == FI_PROGRESS_AUTO)))
		return fd_reject_enum(why, prov,
				      "domain_attr->control_progress",
				      &h->control_progress,
				      &p->control_progress, FI_TYPE_PROGRESS);
	if (h->data_progress != FI_PROGRESS_UNSPEC &&
	    !(h->data_progress == p->data_progress ||
	      (h->data_progress == FI_PROGRESS_MANUAL &&
	       p->data_progress == FI_PROGRESS_AUTO)))
		return fd_reject_enum(why, prov, "domain_attr->data_progress",
				      &h->data_progress, &p->data_progress,
				      FI_TYPE_PROGRESS);

	if (h->resource_mgmt != FI_RM_UNSPEC &&
	    h->resource_mgmt != FI_RM_DISABLED &&
	    !(h->resource_mgmt == FI_RM_ENABLED &&
	      p->resource_mgmt == FI_RM_ENABLED))
		return fd_reject(why, prov, "domain_attr->resource_mgmt",
				 "asked %d, provider offers %d",
				 h->resource_mgmt, p->resource_mgmt);

	/* A provider without address vectors (connected endpoints) says
	 * FI_AV_UNSPEC and does not care which kind the hints name. */
	if (h->av_type != FI_AV_UNSPEC &&
	    (h->av_type != FI_AV_MAP && h->av_type != FI_AV_TABLE))
		return fd_reject(why, prov, "domain_attr->av_type",
				 "invalid value %d", h->av_type);
	if (h->av_type != FI_AV_UNSPEC && p->av_type != FI_AV_UNSPEC &&
	    h->av_type != p->av_type)
		return fd_reject_enum(why, prov, "domain_attr->av_type",
				      &h->av_type, &p->av_type,
				      FI_TYPE_AV_TYPE);

	if (fd_check_mr_mode(version, prov, hints, why))
		return -FI_ENODATA;

	CHECK_MAX("domain_attr->mr_key_size", h->mr_key_size, p->mr_key_size);
	CHECK_MAX("domain_attr->cq_data_size", h->cq_data_size,
		  p->cq_data_size);
	CHECK_MAX("domain_attr->cq_cnt", h->cq_cnt, p->cq_cnt);
	CHECK_MAX("domain_attr->ep_cnt", h->ep_cnt, p->ep_cnt);
	CHECK_MAX("domain_attr->tx_ctx_cnt", h->tx_ctx_cnt, p->tx_ctx_cnt);
	CHECK_MAX("domain_attr->rx_ctx_cnt", h->rx_ctx_cnt, p->rx_ctx_cnt);
	CHECK_MAX("domain_attr->max_ep_tx_ctx", h->max_ep_tx_ctx,
		  p->max_ep_tx_ctx);
	CHECK_MAX("domain_attr->max_ep_rx_ctx", h->max_ep_rx_ctx,
		  p->max_ep_rx_ctx);
	CHECK_MAX("domain_attr->max_ep_stx_ctx", h->max_ep_stx_ctx,
		  p->max_ep_stx_ctx);
	CHECK_MAX("domain_attr->max_ep_srx_ctx", h->max_ep_srx_ctx,
		  p->max_ep_srx_ctx);
	CHECK_MAX("domain_attr->cntr_cnt", h->cntr_cnt, p->cntr_cnt);
	CHECK_MAX("domain_attr->mr_iov_limit", h->mr_iov_limit,
		  p->mr_iov_limit);
	CHECK_MAX("domain_attr->mr_cnt", h->mr_cnt, p->mr_cnt);
	CHECK_MAX("domain_attr->max_err_data", h->max_err_data,
		  p->max_err_data);
	CHECK_MAX("domain_attr->auth_key_size", h->auth_key_size,
		  p->auth_key_size);
	CHECK_BITS("domain_attr->caps", h->caps, p->caps, FI_TYPE_CAPS);
	CHECK_MODE("domain_attr->mode", h->mode ? h->mode : hints->mode,
		   p->mode, FI_TYPE_MODE);
	return 0;
}

/* A tag format is a width, not a pattern (fi_endpoint(3)): leading zero
 * bits are ignored bits, and the groups of ones and zeros after them only
 * say how the application splits its tag into fields. So the bits that
 * count are those from the highest set one down: FI_TAG_GENERIC
 * (0xaaaa...) offers all 64 and serves any format, MPICH's
 * 0x00e000007fffffff needs 56. */
static int fd_tag_bits(uint64_t fmt)
{
	return fmt ? 64 - __builtin_clzll(fmt) : 0;
}

static int fd_tag_format_ok(uint64_t prov_fmt, uint64_t hint)
{
	return fd_tag_bits(hint) <= fd_tag_bits(prov_fmt);
}

static int fd_check_ep(const struct fi_info *prov, const struct fi_info *hints,
		       const char **why)
{
	const struct fi_ep_attr *h = hints->ep_attr;
	const struct fi_ep_attr *p = prov->ep_attr;
	const struct fi_domain_attr *pd = prov->domain_attr;
	size_t max_tx, max_rx;

	if (!p)
		return 0;
	if (h->protocol != FI_PROTO_UNSPEC && h->protocol != p->protocol)
		return fd_reject_enum(why, prov, "ep_attr->protocol",
				      &h->protocol, &p->protocol,
				      FI_TYPE_PROTOCOL);
	CHECK_MAX("ep_attr->protocol_version", h->protocol_version,
		  p->protocol_version);
	CHECK_MAX("ep_attr->max_msg_size", h->max_msg_size, p->max_msg_size);
	CHECK_MAX("ep_attr->max_order_raw_size", h->max_order_raw_size,
		  p->max_order_raw_size);
	CHECK_MAX("ep_attr->max_order_war_size", h->max_order_war_size,
		  p->max_order_war_size);
	CHECK_MAX("ep_attr->max_order_waw_size", h->max_order_waw_size,
		  p->max_order_waw_size);
	if ((hints->caps & FI_TAGGED) || !hints->caps)
		if (!fd_tag_format_ok(p->mem_tag_format, h->mem_tag_format))
			return fd_reject(why, prov, "ep_attr->mem_tag_format",
					 "0x%" PRIx64 " needs %d tag bits, the "
					 "provider's 0x%" PRIx64 " has %d",
					 h->mem_tag_format,
					 fd_tag_bits(h->mem_tag_format),
					 p->mem_tag_format,
					 fd_tag_bits(p->mem_tag_format));
	CHECK_MAX("ep_attr->auth_key_size", h->auth_key_size,
		  p->auth_key_size);

	/* Shared contexts are a yes/no question for the domain; otherwise
	 * the count may not exceed one endpoint's maximum. */
	max_tx = pd && pd->max_ep_tx_ctx > p->tx_ctx_cnt ?
		 pd->max_ep_tx_ctx : p->tx_ctx_cnt;
	max_rx = pd && pd->max_ep_rx_ctx > p->rx_ctx_cnt ?
		 pd->max_ep_rx_ctx : p->rx_ctx_cnt;
	if (h->tx_ctx_cnt == FI_SHARED_CONTEXT) {
		if (!pd || !pd->max_ep_stx_ctx)
			return fd_reject(why, prov, "ep_attr->tx_ctx_cnt",
					 "no shared transmit contexts");
	} else {
		CHECK_MAX("ep_attr->tx_ctx_cnt", h->tx_ctx_cnt, max_tx);
	}
	if (h->rx_ctx_cnt == FI_SHARED_CONTEXT) {
		if (!pd || !pd->max_ep_srx_ctx)
			return fd_reject(why, prov, "ep_attr->rx_ctx_cnt",
					 "no shared receive contexts");
	} else {
		CHECK_MAX("ep_attr->rx_ctx_cnt", h->rx_ctx_cnt, max_rx);
	}
	return 0;
}

static int fd_check_tx(const struct fi_info *prov, const struct fi_info *hints,
		       const char **why)
{
	const struct fi_tx_attr *h = hints->tx_attr;
	const struct fi_tx_attr *p = prov->tx_attr;

	CHECK_BITS("tx_attr->caps", h->caps, p->caps, FI_TYPE_CAPS);
	CHECK_BITS("tx_attr->op_flags", h->op_flags, p->op_flags,
		   FI_TYPE_OP_FLAGS);
	CHECK_BITS("tx_attr->msg_order", h->msg_order, p->msg_order,
		   FI_TYPE_MSG_ORDER);
	CHECK_BITS("tx_attr->comp_order", h->comp_order, p->comp_order,
		   FI_TYPE_MSG_ORDER);
	CHECK_MAX("tx_attr->inject_size", h->inject_size, p->inject_size);
	CHECK_MAX("tx_attr->size", h->size, p->size);
	CHECK_MAX("tx_attr->iov_limit", h->iov_limit, p->iov_limit);
	CHECK_MAX("tx_attr->rma_iov_limit", h->rma_iov_limit,
		  p->rma_iov_limit);
	return 0;
}

static int fd_check_rx(const struct fi_info *prov, const struct fi_info *hints,
		       const char **why)
{
	const struct fi_rx_attr *h = hints->rx_attr;
	const struct fi_rx_attr *p = prov->rx_attr;

	CHECK_BITS("rx_attr->caps", h->caps, p->caps, FI_TYPE_CAPS);
	CHECK_BITS("rx_attr->op_flags", h->op_flags, p->op_flags,
		   FI_TYPE_OP_FLAGS);
	CHECK_BITS("rx_attr->msg_order", h->msg_order, p->msg_order,
		   FI_TYPE_MSG_ORDER);
	CHECK_BITS("rx_attr->comp_order", h->comp_order, p->comp_order,
		   FI_TYPE_MSG_ORDER);
	CHECK_MAX("rx_attr->total_buffered_recv", h->total_buffered_recv,
		  p->total_buffered_recv);
	CHECK_MAX("rx_attr->size", h->size, p->size);
	CHECK_MAX("rx_attr->iov_limit", h->iov_limit, p->iov_limit);
	return 0;
}

/* The mode bits the provider needs at top level, given the hints. */
static uint64_t fd_required_mode(uint32_t version, const struct fi_info *prov,
				 const struct fi_info *hints)
{
	uint64_t mode = prov->mode;

	/* From 1.5 the FI_MR_LOCAL mr_mode bit stands in for FI_LOCAL_MR. */
	if ((mode & FI_LOCAL_MR) && FI_VERSION_GE(version, FI_VERSION(1, 5)) &&
	    hints && hints->domain_attr &&
	    (hints->domain_attr->mr_mode & FI_MR_LOCAL))
		mode &= ~FI_LOCAL_MR;
	return mode;
}

int fd_info_check_why(uint32_t version, const struct fi_info *prov,
		      const struct fi_info *hints, const char **why)
{
	uint64_t offered;

	if (why)
		*why = NULL;
	if (!prov)
		return -FI_EINVAL;
	if (!hints)
		return 0;

	if (hints->ep_attr && prov->ep_attr &&
	    hints->ep_attr->type != FI_EP_UNSPEC &&
	    hints->ep_attr->type != prov->ep_attr->type)
		return fd_reject_enum(why, prov, "ep_attr->type",
				      &hints->ep_attr->type,
				      &prov->ep_attr->type, FI_TYPE_EP_TYPE);

	CHECK_BITS("caps", hints->caps, prov->caps, FI_TYPE_CAPS);
	CHECK_MODE("mode", hints->mode, fd_required_mode(version, prov, hints),
		   FI_TYPE_MODE);

	if (!fd_addr_format_ok(prov->addr_format, hints->addr_format))
		return fd_reject_enum(why, prov, "addr_format",
				      &hints->addr_format, &prov->addr_format,
				      FI_TYPE_ADDR_FORMAT);

	if (hints->fabric_attr && fd_check_fabric(prov, hints->fabric_attr, why))
		return -FI_ENODATA;
	if (hints->domain_attr && fd_check_domain(version, prov, hints, why))
		return -FI_ENODATA;
	if (hints->ep_attr && fd_check_ep(prov, hints, why))
		return -FI_ENODATA;

	/* Transmit and receive modes are owed whether or not the hints
	 * carry those attributes: the top-level mode is the fallback. */
	if (prov->tx_attr) {
		offered = hints->tx_attr && hints->tx_attr->mode ?
			  hints->tx_attr->mode : hints->mode;
		CHECK_MODE("tx_attr->mode", offered, prov->tx_attr->mode,
			   FI_TYPE_MODE);
		if (hints->tx_attr && fd_check_tx(prov, hints, why))
			return -FI_ENODATA;
	}
	if (prov->rx_attr) {
		offered = hints->rx_attr && hints->rx_attr->mode ?
			  hints->rx_attr->mode : hints->mode;
		CHECK_MODE("rx_attr->mode", offered, prov->rx_attr->mode,
			   FI_TYPE_MODE);
		if (hints->rx_attr && fd_check_rx(prov, hints, why))
			return -FI_ENODATA;
	}
	return 0;
}

int fd_info_check(uint32_t version, const struct fi_info *prov_info,
		  const struct fi_info *hints)
{
	return fd_info_check_why(version, prov_info, hints, NULL);
}

/* ------------------------------------------------------------------------
 * Narrowing
 * ---------------------------------------------------------------------- */
#define COPY_IF_SET(dst, src) do { if (src) (dst) = (src); } while (0)

static int fd_narrow_mr_mode(uint32_t version, const struct fi_info *prov,
			     const struct fi_info *hints, uint64_t caps)
{
	int pmr = prov->domain_attr->mr_mode;
	int user;

	if (FI_VERSION_LT(version, FI_VERSION(1, 5))) {
		user = hints && hints->domain_attr ?
		       hints->domain_attr->mr_mode : FI_MR_UNSPEC;
		if (user == FI_MR_BASIC || user == FI_MR_SCALABLE)
			return user;
		return (pmr & FI_MR_BASIC) ? FI_MR_BASIC :
		       (pmr & FI_MR_SCALABLE) ? FI_MR_SCALABLE : FI_MR_UNSPEC;
	}

	if (!hints || !hints->domain_attr)
		return pmr & ~FD_MR_LEGACY;
	user = hints->domain_attr->mr_mode;
	/* Legacy requests are answered in kind and never cleared. */
	if (user & FD_MR_LEGACY)
		return user;
	return fd_mr_required(pmr, caps) & user;
}

struct fi_info *fd_info_narrow(uint32_t version,
			       const struct fi_info *prov,
			       const struct fi_info *hints)
{
	struct fi_info *info;
	uint64_t caps, needs_local;

	if (!prov)
		return NULL;
	info = fi_dupinfo(prov);
	if (!info)
		return NULL;
	info->next = NULL;

	if (info->fabric_attr)
		info->fabric_attr->api_version = version;

	/* Capabilities: what was asked, completed with the modifiers each
	 * requested family implies, plus every secondary capability. */
	if (hints && hints->caps)
		caps = (fd_expand_caps(hints->caps, prov->caps) |
			(prov->caps & FD_SECONDARY_CAPS)) & prov->caps;
	else
		caps = prov->caps;
	info->caps = caps;

	if (info->tx_attr) {
		uint64_t want = hints && hints->tx_attr && hints->tx_attr->caps ?
				fd_expand_caps(hints->tx_attr->caps, prov->caps) :
				caps;

		info->tx_attr->caps = prov->tx_attr->caps & want;
	}
	if (info->rx_attr) {
		uint64_t want = hints && hints->rx_attr && hints->rx_attr->caps ?
				fd_expand_caps(hints->rx_attr->caps, prov->caps) :
				caps;

		info->rx_attr->caps = prov->rx_attr->caps & want;
	}

	/* Mode: keep only what the provider needs; with no hints, say all
	 * the provider may ask for. */
	if (hints) {
		info->mode = fd_required_mode(version, prov, hints) & hints->mode;
		if (info->tx_attr)
			info->tx_attr->mode &= hints->tx_attr &&
					       hints->tx_attr->mode ?
					       hints->tx_attr->mode : hints->mode;
		if (info->rx_attr)
			info->rx_attr->mode &= hints->rx_attr &&
					       hints->rx_attr->mode ?
					       hints->rx_attr->mode : hints->mode;
	}

	if (info->domain_attr) {
		struct fi_domain_attr *d = info->domain_attr;
		int user = hints && hints->domain_attr ?
			   hints->domain_attr->mr_mode : 0;

		d->mr_mode = fd_narrow_mr_mode(version, prov, hints, caps);

		/* Local registration agreed through the old mode bit: the
		 * only way before 1.5, the alternative to FI_MR_LOCAL after. */
		needs_local = (prov->domain_attr->mr_mode & FI_MR_LOCAL) &&
			      !(user & FI_MR_LOCAL);
		if (needs_local &&
		    (hints ? (hints->mode & FI_LOCAL_MR) != 0 :
		     FI_VERSION_LT(version, FI_VERSION(1, 5))))
			info->mode |= FI_LOCAL_MR;

		d->caps = prov->domain_attr->caps &
			  (caps | (hints && hints->domain_attr ?
				   hints->domain_attr->caps : 0));
		if (hints && hints->domain_attr) {
			const struct fi_domain_attr *h = hints->domain_attr;

			d->mode &= h->mode ? h->mode : hints->mode;
			COPY_IF_SET(d->threading, h->threading);
			COPY_IF_SET(d->control_progress, h->control_progress);
			COPY_IF_SET(d->data_progress, h->data_progress);
			COPY_IF_SET(d->resource_mgmt, h->resource_mgmt);
			COPY_IF_SET(d->av_type, h->av_type);
			COPY_IF_SET(d->tclass, h->tclass);
			COPY_IF_SET(d->domain, h->domain);
			if (h->auth_key && h->auth_key_size) {
				uint8_t *key = malloc(h->auth_key_size);

				if (!key)
					goto nomem;
				memcpy(key, h->auth_key, h->auth_key_size);
				free(d->auth_key);
				d->auth_key = key;
				d->auth_key_size = h->auth_key_size;
			}
		} else if (hints) {
			d->mode &= hints->mode;
		}
	}

	if (info->fabric_attr && hints && hints->fabric_attr)
		COPY_IF_SET(info->fabric_attr->fabric,
			    hints->fabric_attr->fabric);

	if (info->ep_attr && hints && hints->ep_attr) {
		struct fi_ep_attr *e = info->ep_attr;
		const struct fi_ep_attr *h = hints->ep_attr;

		COPY_IF_SET(e->type, h->type);
		COPY_IF_SET(e->max_msg_size, h->max_msg_size);
		COPY_IF_SET(e->tx_ctx_cnt, h->tx_ctx_cnt);
		COPY_IF_SET(e->rx_ctx_cnt, h->rx_ctx_cnt);
		/* the format asked for is the one the application gets back
		 * (it fits: fd_tag_format_ok) */
		if ((hints->caps & FI_TAGGED) || !hints->caps)
			COPY_IF_SET(e->mem_tag_format, h->mem_tag_format);
		if (h->auth_key && h->auth_key_size) {
			uint8_t *key = malloc(h->auth_key_size);

			if (!key)
				goto nomem;
			memcpy(key, h->auth_key, h->auth_key_size);
			free(e->auth_key);
			e->auth_key = key;
			e->auth_key_size = h->auth_key_size;
		}
	}

	/* op_flags are the defaults an endpoint applies to every call: the
	 * application's choice or none, never the provider's whole list. */
	if (info->tx_attr) {
		struct fi_tx_attr *t = info->tx_attr;
		const struct fi_tx_attr *h = hints ? hints->tx_attr : NULL;

		t->op_flags = h ? h->op_flags : 0;
		if (h) {
			COPY_IF_SET(t->inject_size, h->inject_size);
			COPY_IF_SET(t->size, h->size);
			COPY_IF_SET(t->iov_limit, h->iov_limit);
			COPY_IF_SET(t->rma_iov_limit, h->rma_iov_limit);
			COPY_IF_SET(t->tclass, h->tclass);
		}
	}
	if (info->rx_attr) {
		struct fi_rx_attr *r = info->rx_attr;
		const struct fi_rx_attr *h = hints ? hints->rx_attr : NULL;

		r->op_flags = h ? h->op_flags : 0;
		if (h) {
			COPY_IF_SET(r->size, h->size);
			COPY_IF_SET(r->iov_limit, h->iov_limit);
			COPY_IF_SET(r->total_buffered_recv,
				    h->total_buffered_recv);
		}
	}

	if (hints) {
		COPY_IF_SET(info->addr_format, hints->addr_format);
		COPY_IF_SET(info->handle, hints->handle);
	}
	return info;

nomem:
	fi_freeinfo(info);
	return NULL;
}
