/*
 * Verbs provider: the FI_VERBS_* parameters, every definition and every
 * read (see fdv_param.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define FD_LOG_PROV "verbs"

#include <stdint.h>
#include <string.h>

#include <rdma/fabric.h>

#include "fd_core.h"
#include "fdv_param.h"

static const struct fd_param_def fdv_param_defs[] = {
	{ "tx_size", FI_PARAM_INT,
	  "Transmit queue depth when the hints ask for none (default: 384)" },
	{ "rx_size", FI_PARAM_INT,
	  "Receive queue depth when the hints ask for none (default: 384)" },
	{ "tx_iov_limit", FI_PARAM_INT,
	  "Scatter/gather entries per send when the hints ask for none "
	  "(default: 4)" },
	{ "rx_iov_limit", FI_PARAM_INT,
	  "Scatter/gather entries per receive when the hints ask for none "
	  "(default: 4)" },
	{ "inline_size", FI_PARAM_INT,
	  "Inject size reported when the hints ask for none; never more than "
	  "the device allows (default: 256)" },
	{ "gid_idx", FI_PARAM_INT, "GID table index to use, 0 - 255 (default: 0)" },
	{ "min_rnr_timer", FI_PARAM_INT,
	  "Receiver-not-ready NAK timer of connected QPs, 0 - 31 in the IB "
	  "encoding (default: 12, 0.64 ms)" },
	/* Not in upstream verbs, which leaves a connect's duration to the
	 * kernel's CM. */
	{ "connect_timeout", FI_PARAM_INT,
	  "Milliseconds fi_connect may wait for the peer to accept or reject "
	  "before the EQ reports FI_ETIMEDOUT (default: 0, no deadline of the "
	  "provider's own)" },
	/* Not in upstream verbs, which hard-codes its default CQ depth. */
	{ "cq_size", FI_PARAM_SIZE_T,
	  "Completion queue depth when fi_cq_attr.size is 0 (default: 1024)" },
	{ "device_name", FI_PARAM_STRING,
	  "Use only verbs devices whose name starts with this (default: all)" },
	{ "iface", FI_PARAM_STRING,
	  "Use only addresses of network interfaces whose name is this, or "
	  "starts with it (default: all)" },
};

void fdv_params_define(void)
{
	FD_PARAM_DEFINE_TABLE(FDV_PROV_NAME, fdv_param_defs);
}

/* FI_PARAM_INT variables, range-checked (out of range: the default). */
static size_t fdv_param_size(const char *name, size_t def, size_t min,
			     size_t max)
{
	return fd_param_int_range(FDV_PROV_NAME, name, def, min, max);
}

void fdv_read_params(struct fdv_params *p)
{
	char *s;

	memset(p, 0, sizeof(*p));
	p->tx_size = fdv_param_size("tx_size", FDV_DEF_TX_SIZE, 1, INT32_MAX);
	p->rx_size = fdv_param_size("rx_size", FDV_DEF_RX_SIZE, 1, INT32_MAX);
	p->tx_iov_limit = fdv_param_size("tx_iov_limit", FDV_DEF_TX_IOV_LIMIT,
					 1, INT32_MAX);
	p->rx_iov_limit = fdv_param_size("rx_iov_limit", FDV_DEF_RX_IOV_LIMIT,
					 1, INT32_MAX);
	p->inline_size = fdv_param_size("inline_size", FDV_DEF_INLINE_SIZE, 0,
					INT32_MAX);
	/* A CQ of depth 0 cannot exist, and ibv_create_cq takes an int. */
	p->cq_size = fd_param_size_range(FDV_PROV_NAME, "cq_size", FDV_DEF_CQ_SIZE, 1,
					  INT32_MAX);
	p->gid_idx = (int)fdv_param_size("gid_idx", FDV_DEF_GID_IDX, 0, 255);
	p->min_rnr_timer = (uint8_t)fdv_param_size("min_rnr_timer",
						   FDV_DEF_MIN_RNR_TIMER, 0, 31);
	p->connect_timeout_ms = (unsigned int)fdv_param_size("connect_timeout",
							     0, 0, INT32_MAX);
	if (!fd_param_get_str(FDV_PROV_NAME, "device_name", &s))
		p->device_name = s;
	if (!fd_param_get_str(FDV_PROV_NAME, "iface", &s))
		p->iface = s;
}
