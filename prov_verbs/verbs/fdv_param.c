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

void fdv_params_define(void)
{
	fd_param_define(FDV_PROV_NAME, "tx_size", FI_PARAM_INT,
			"Transmit queue depth when the hints ask for none "
			"(default: 384)");
	fd_param_define(FDV_PROV_NAME, "rx_size", FI_PARAM_INT,
			"Receive queue depth when the hints ask for none "
			"(default: 384)");
	fd_param_define(FDV_PROV_NAME, "tx_iov_limit", FI_PARAM_INT,
			"Scatter/gather entries per send when the hints ask "
			"for none (default: 4)");
	fd_param_define(FDV_PROV_NAME, "rx_iov_limit", FI_PARAM_INT,
			"Scatter/gather entries per receive when the hints "
			"ask for none (default: 4)");
	fd_param_define(FDV_PROV_NAME, "inline_size", FI_PARAM_INT,
			"Inject size reported when the hints ask for none; "
			"never more than the device allows (default: 256)");
	fd_param_define(FDV_PROV_NAME, "gid_idx", FI_PARAM_INT,
			"GID table index to use, 0 - 255 (default: 0)");
	fd_param_define(FDV_PROV_NAME, "min_rnr_timer", FI_PARAM_INT,
			"Receiver-not-ready NAK timer of connected QPs, "
			"0 - 31 in the IB encoding (default: 12, 0.64 ms)");
	/* Not in upstream verbs, which leaves a connect's duration to the
	 * kernel's CM. */
	fd_param_define(FDV_PROV_NAME, "connect_timeout", FI_PARAM_INT,
			"Milliseconds fi_connect may wait for the peer to "
			"accept or reject before the EQ reports FI_ETIMEDOUT "
			"(default: 0, no deadline of the provider's own)");
	/* Not in upstream verbs, which hard-codes its default CQ depth. */
	fd_param_define(FDV_PROV_NAME, "cq_size", FI_PARAM_SIZE_T,
			"Completion queue depth when fi_cq_attr.size is 0 "
			"(default: 1024)");
	fd_param_define(FDV_PROV_NAME, "device_name", FI_PARAM_STRING,
			"Use only verbs devices whose name starts with this "
			"(default: all)");
	fd_param_define(FDV_PROV_NAME, "iface", FI_PARAM_STRING,
			"Use only addresses of network interfaces whose name "
			"is this, or starts with it (default: all)");
}

/* Whether v lies outside [min, max]; if so, says so and names the default
 * used instead. */
static int fdv_param_out_of_range(const char *name, long long v, size_t min,
				  size_t max, size_t def)
{
	char env[64];

	if (v >= 0 && (unsigned long long)v >= min &&
	    (unsigned long long)v <= max)
		return 0;
	fd_param_env_name(FDV_PROV_NAME, name, env, sizeof(env));
	FD_WARN(FD_LOG_CORE, "%s=%lld out of range [%zu, %zu], using %zu",
		env, v, min, max, def);
	return 1;
}

/* FI_PARAM_INT variables. */
static size_t fdv_param_size(const char *name, size_t def, size_t min,
			     size_t max)
{
	int v;

	if (fd_param_get_int(FDV_PROV_NAME, name, &v))
		return def;
	return fdv_param_out_of_range(name, v, min, max, def) ? def : (size_t)v;
}

/* FI_PARAM_SIZE_T variables: parsed as size_t, so a negative value is
 * refused by the parser rather than wrapped. */
static size_t fdv_param_size_t(const char *name, size_t def, size_t min,
			       size_t max)
{
	size_t v;

	if (fd_param_get_size_t(FDV_PROV_NAME, name, &v))
		return def;
	if (v > (size_t)INT64_MAX)	/* beyond any range below */
		v = (size_t)INT64_MAX;
	return fdv_param_out_of_range(name, (long long)v, min, max, def) ?
	       def : v;
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
	p->cq_size = fdv_param_size_t("cq_size", FDV_DEF_CQ_SIZE, 1, INT32_MAX);
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
