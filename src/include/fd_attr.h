/* fi_info attribute tables: what a provider's entry says of itself, written
 * as data instead of a page of assignments per provider.
 *
 * Every entry a provider hands out is a template rewritten field by field:
 * verbs fills its MSG template and turns a copy into the DGRAM one, RDM and
 * rstream turn copies of verbs entries into theirs, and each layer builds
 * the hints it asks the layer below with. The fields are the same in all of
 * them; only the values differ. So a provider names its values in a const
 * struct fd_attrs (FD_ATTR / FD_ATTR_AT_MOST / FD_ATTR_AT_LEAST on the fields it
 * touches) and fd_attrs_apply writes them; a field the table does not name
 * keeps what the entry had, exactly as when its assignment was absent.
 *
 * Not installed; used by the verbs core and every layer over it. */
#ifndef FD_ATTR_H
#define FD_ATTR_H

#include <stdint.h>

#include <rdma/fabric.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every field a table may name: (table name, place in struct fi_info). A
 * field a provider needs that is not here is one more line. */
#define FD_ATTR_FIELDS(X) \
	X(caps,			caps) \
	X(mode,			mode) \
	X(addr_format,		addr_format) \
	X(tx_caps,		tx_attr->caps) \
	X(tx_mode,		tx_attr->mode) \
	X(tx_op_flags,		tx_attr->op_flags) \
	X(tx_msg_order,		tx_attr->msg_order) \
	X(tx_comp_order,	tx_attr->comp_order) \
	X(tx_inject_size,	tx_attr->inject_size) \
	X(tx_size,		tx_attr->size) \
	X(tx_iov_limit,		tx_attr->iov_limit) \
	X(tx_rma_iov_limit,	tx_attr->rma_iov_limit) \
	X(rx_caps,		rx_attr->caps) \
	X(rx_mode,		rx_attr->mode) \
	X(rx_op_flags,		rx_attr->op_flags) \
	X(rx_msg_order,		rx_attr->msg_order) \
	X(rx_comp_order,	rx_attr->comp_order) \
	X(rx_total_buffered_recv, rx_attr->total_buffered_recv) \
	X(rx_size,		rx_attr->size) \
	X(rx_iov_limit,		rx_attr->iov_limit) \
	X(ep_type,		ep_attr->type) \
	X(ep_protocol,		ep_attr->protocol) \
	X(ep_protocol_version,	ep_attr->protocol_version) \
	X(ep_max_msg_size,	ep_attr->max_msg_size) \
	X(ep_msg_prefix_size,	ep_attr->msg_prefix_size) \
	X(ep_max_order_raw_size, ep_attr->max_order_raw_size) \
	X(ep_max_order_war_size, ep_attr->max_order_war_size) \
	X(ep_max_order_waw_size, ep_attr->max_order_waw_size) \
	X(ep_mem_tag_format,	ep_attr->mem_tag_format) \
	X(ep_tx_ctx_cnt,	ep_attr->tx_ctx_cnt) \
	X(ep_rx_ctx_cnt,	ep_attr->rx_ctx_cnt) \
	X(dom_threading,	domain_attr->threading) \
	X(dom_control_progress,	domain_attr->control_progress) \
	X(dom_data_progress,	domain_attr->data_progress) \
	X(dom_resource_mgmt,	domain_attr->resource_mgmt) \
	X(dom_av_type,		domain_attr->av_type) \
	X(dom_mr_mode,		domain_attr->mr_mode) \
	X(dom_mr_key_size,	domain_attr->mr_key_size) \
	X(dom_cq_data_size,	domain_attr->cq_data_size) \
	X(dom_cq_cnt,		domain_attr->cq_cnt) \
	X(dom_mr_cnt,		domain_attr->mr_cnt) \
	X(dom_mr_iov_limit,	domain_attr->mr_iov_limit) \
	X(dom_tx_ctx_cnt,	domain_attr->tx_ctx_cnt) \
	X(dom_rx_ctx_cnt,	domain_attr->rx_ctx_cnt) \
	X(dom_max_ep_tx_ctx,	domain_attr->max_ep_tx_ctx) \
	X(dom_max_ep_rx_ctx,	domain_attr->max_ep_rx_ctx) \
	X(dom_max_ep_stx_ctx,	domain_attr->max_ep_stx_ctx) \
	X(dom_max_ep_srx_ctx,	domain_attr->max_ep_srx_ctx) \
	X(dom_caps,		domain_attr->caps) \
	X(dom_mode,		domain_attr->mode) \
	X(dom_max_err_data,	domain_attr->max_err_data) \
	X(fab_prov_version,	fabric_attr->prov_version)

#define FD_ATTR_VAL(name, field)	uint64_t name;
#define FD_ATTR_BIT(name, field)	unsigned int name : 1;

struct fd_attrs {
	/* Non-NULL: the entry's fabric_attr->prov_name becomes a copy. */
	const char *prov_name;
	struct { FD_ATTR_FIELDS(FD_ATTR_VAL) } val;
	/* What is done with val.<field>, at most one of the three a field:
	 * set: written; most: the entry's value lowered to it (narrowing a
	 * limit); least: raised to it. */
	struct { FD_ATTR_FIELDS(FD_ATTR_BIT) } set, most, least;
};

#undef FD_ATTR_VAL
#undef FD_ATTR_BIT

/* Designated initializers of a struct fd_attrs. */
#define FD_ATTR(f, v)		.val.f = (v), .set.f = 1
#define FD_ATTR_AT_MOST(f, v)	.val.f = (v), .most.f = 1
#define FD_ATTR_AT_LEAST(f, v)	.val.f = (v), .least.f = 1

/* Write a's fields into fi (whose attribute structs must all exist). 0, or
 * -FI_ENOMEM when the provider name could not be copied (fi keeps the
 * rest written). */
int fd_attrs_apply(struct fi_info *fi, const struct fd_attrs *a);

#ifdef __cplusplus
}
#endif

#endif
