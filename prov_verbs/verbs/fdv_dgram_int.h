/* FI_EP_DGRAM and its address vector: private to the verbs provider's .c
 * files (the inline part is <fdv/fdv_dgram.h>). */
#ifndef FDV_DGRAM_INT_H
#define FDV_DGRAM_INT_H

#include <fdv/fdv_dgram.h>
#include "fdv_internal.h"
#include "fdv_device.h"

/* The endpoint name (fi_getname, fi_av_insert; address format
 * FI_ADDR_IB_UD): everything a peer needs to reach a UD QP, integers
 * big-endian so two hosts agree. magic and zero let fi_av_insert refuse
 * bytes that are not a name of this library. */
struct fdv_ud_name {
	uint8_t gid[16];
	uint32_t qpn_be;
	uint32_t qkey_be;
	uint16_t lid_be;
	uint16_t magic_be;
	uint32_t zero;
};
#define FDV_UD_NAME_MAGIC 0xfd6du

/* A RoCE v2 GID that carries an IPv4 address (::ffff:a.b.c.d). */
static inline bool fdv_gid_is_v4_mapped(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(gid, prefix, sizeof(prefix));
}

struct fdv_av_full {
	struct fdv_ud_av av;		/* first: inline part */
	struct fdv_domain *domain;
	enum fi_av_type type;
	uint8_t port_num;
	bool global;			/* RoCE: every AH carries a GRH */
	uint8_t sgid_index;
	pthread_mutex_t lock;		/* inserts and removes */
	atomic_int refs;		/* endpoints bound */
};

/* What a bounced receive (fdv_dgram_recv_short) delivers into. */
struct fdv_dgram_rxv {
	uint32_t n;
	size_t total;
	struct iovec iov[FDV_IOV_MAX];
};

struct fdv_dgram_full {
	struct fdv_dgram_ep d;		/* first: inline part */
	struct fdv_domain *domain;
	struct fi_info *info;
	struct fdv_cq_full *tx_cq, *rx_cq;
	uint64_t tx_bind_flags, rx_bind_flags;
	struct fdv_av_full *av;
	struct ibv_qp *qp;
	uint8_t port_num;
	uint8_t sgid_index;
	uint16_t lid;
	union ibv_gid gid;
	bool enabled;
	/* Full-size receive buffers for short receives: slot i's is
	 * bounce + i * stride (stride = 40 + max_msg_size). */
	uint8_t *bounce;
	struct ibv_mr *bounce_mr;
	uint32_t stride;
	struct fdv_dgram_rxv *rxv;	/* per slot */
};

/* fdv_av.c */
int fdv_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);
/* The address of the entry matching a received datagram's sender, or
 * FI_ADDR_NOTAVAIL. Called with the CQ lock held. */
fi_addr_t fdv_av_find(struct fdv_av_full *av, const uint8_t *gid, bool has_gid,
		      uint16_t lid, uint32_t qpn);
/* The port and source GID index a datagram endpoint of this domain uses. */
int fdv_dgram_port(struct fdv_domain *dom, uint8_t *port_num, uint8_t *sgid_index,
		   union ibv_gid *gid, uint16_t *lid, bool *global);

/* fdv_dgram.c */
int fdv_dgram_open(struct fid_domain *domain, struct fi_info *info,
		   struct fid_ep **ep, void *context);
/* The source of receive slot 'slot' of a datagram endpoint's completion
 * wc (CQ lock held, before the slot is freed). */
fi_addr_t fdv_dgram_src(struct fdv_ep *ep, uint32_t slot, const struct ibv_wc *wc);
/* A completion of a datagram endpoint's receive slot, when the CQ first
 * polls it (CQ lock held): a bounced receive's datagram is copied to the
 * application's buffers, and one longer than them becomes an
 * IBV_WC_LOC_LEN_ERR completion (FI_ETRUNC). */
void fdv_dgram_rx_polled(struct fdv_ep *ep, uint32_t slot, struct ibv_wc *wc);
/* fi_cq_readerr's olen of such a truncated receive: the bytes cut off. */
size_t fdv_dgram_olen(struct fdv_ep *ep, uint32_t slot, const struct ibv_wc *wc);
/* fdv_dgram_getinfo: declared in fdv_device.h */

#endif /* FDV_DGRAM_INT_H */
