/*
 * Verbs provider: its FI_VERBS_* parameters (private).
 *
 * fdv_param.c defines every one of them (fdv_params_define, the provider's
 * init hook) and reads them all at once into a struct fdv_params, each
 * value range-checked: a malformed or out-of-range value logs a warning
 * and falls back to the default. fi_getinfo and the device scan read a
 * fresh copy per call; a domain reads one at fi_domain and its objects
 * take their values from it (struct fdv_domain.params), so no object file
 * reads the environment itself.
 */
#ifndef FDV_PARAM_H
#define FDV_PARAM_H

#include <stddef.h>
#include <stdint.h>

/* The provider's name: its fi_info prov_name and the FI_VERBS_ prefix. */
#define FDV_PROV_NAME		"verbs"

/* Upstream's defaults, overridable by the FI_VERBS_* variables below. */
#define FDV_DEF_TX_SIZE		384	/* FI_VERBS_TX_SIZE */
#define FDV_DEF_RX_SIZE		384	/* FI_VERBS_RX_SIZE */
#define FDV_DEF_TX_IOV_LIMIT	4	/* FI_VERBS_TX_IOV_LIMIT */
#define FDV_DEF_RX_IOV_LIMIT	4	/* FI_VERBS_RX_IOV_LIMIT */
#define FDV_DEF_INLINE_SIZE	256	/* FI_VERBS_INLINE_SIZE */
#define FDV_DEF_GID_IDX		0	/* FI_VERBS_GID_IDX */
/* FI_VERBS_MIN_RNR_TIMER, in the IB encoding: 12 = 0.64 ms (0 would be
 * 655 ms), as upstream verbs' default. */
#define FDV_DEF_MIN_RNR_TIMER	12
/* FI_VERBS_CQ_SIZE: upstream hard-codes this depth. */
#define FDV_DEF_CQ_SIZE		1024

/* Not a parameter: route and address resolution through rdma_cm, each
 * step (fi_getinfo, fi_endpoint, fi_setname, fi_connect); resolution is
 * local (ARP/neighbour), so this is generous. */
#define FDV_RESOLVE_TIMEOUT_MS	2000

struct fdv_params {
	size_t		tx_size;
	size_t		rx_size;
	size_t		tx_iov_limit;
	size_t		rx_iov_limit;
	size_t		inline_size;
	size_t		cq_size;	/* CQ depth when fi_cq_attr.size is 0 */
	int		gid_idx;
	uint8_t		min_rnr_timer;	/* 0 - 31, IB encoding */
	unsigned int	connect_timeout_ms;	/* 0: no deadline of our own */
	const char	*device_name;	/* FI_VERBS_DEVICE_NAME: name prefix */
	const char	*iface;		/* FI_VERBS_IFACE: netdev prefix */
};

/* Defines every FI_VERBS_* variable; runs once inside fd_init. */
void fdv_params_define(void);

/* Reads them all; strings point into the environment or are NULL. */
void fdv_read_params(struct fdv_params *p);

#endif /* FDV_PARAM_H */
