/* RDM wire formats: encode and validate (docs/rdm-protocol.md). */
#include <string.h>

#include <rdma/fi_errno.h>

#include "fdm_atomic.h"
#include "fdm_proto.h"
#include "fd_util.h"

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* ---- names ---- */

int fdm_name_parse(struct fdm_name *out, const void *addr, size_t len)
{
	const struct sockaddr *sa = addr;

	memset(out, 0, sizeof(*out));
	if (!addr || len < sizeof(sa->sa_family))
		return -FI_EINVAL;
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		memcpy(&out->u.sin, addr, sizeof(out->u.sin));
		memset(out->u.sin.sin_zero, 0, sizeof(out->u.sin.sin_zero));
		if (!out->u.sin.sin_port || out->u.sin.sin_addr.s_addr == htonl(INADDR_ANY))
			return -FI_EINVAL;
		out->len = sizeof(out->u.sin);
		return 0;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		memcpy(&out->u.sin6, addr, sizeof(out->u.sin6));
		if (!out->u.sin6.sin6_port ||
		    !memcmp(&out->u.sin6.sin6_addr, &in6addr_any, sizeof(in6addr_any)))
			return -FI_EINVAL;
		out->u.sin6.sin6_flowinfo = 0;
		out->len = sizeof(out->u.sin6);
		return 0;
	}
	return -FI_EINVAL;
}

void fdm_name_key(const struct fdm_name *n, uint8_t key[FDM_NAME_KEY_LEN])
{
	memset(key, 0, FDM_NAME_KEY_LEN);
	fd_put_be16(key, n->u.sa.sa_family);
	if (n->u.sa.sa_family == AF_INET) {
		memcpy(key + 2, &n->u.sin.sin_addr, 4);
		memcpy(key + 18, &n->u.sin.sin_port, 2);
	} else {
		memcpy(key + 2, &n->u.sin6.sin6_addr, 16);
		memcpy(key + 18, &n->u.sin6.sin6_port, 2);
	}
}

bool fdm_name_eq(const struct fdm_name *a, const struct fdm_name *b)
{
	uint8_t ka[FDM_NAME_KEY_LEN], kb[FDM_NAME_KEY_LEN];

	if (a->len != b->len)
		return false;
	fdm_name_key(a, ka);
	fdm_name_key(b, kb);
	return !memcmp(ka, kb, sizeof(ka));
}

/* ---- CM data ---- */

static const uint8_t fdm_magic[4] = { 'F', 'D', 'M', '1' };

void fdm_cm_encode(uint8_t out[FDM_CM_LEN], const struct fdm_cm *cm)
{
	memset(out, 0, FDM_CM_LEN);
	memcpy(out, fdm_magic, 4);
	out[4] = FDM_PROTO_VERSION;
	out[5] = cm->kind;
	fd_put_be16(out + 6, cm->name.u.sa.sa_family == AF_INET6 ? 6 : 4);
	if (cm->name.u.sa.sa_family == AF_INET6) {
		memcpy(out + 8, &cm->name.u.sin6.sin6_port, 2);
		memcpy(out + 12, &cm->name.u.sin6.sin6_addr, 16);
	} else if (cm->name.u.sa.sa_family == AF_INET) {
		memcpy(out + 8, &cm->name.u.sin.sin_port, 2);
		memcpy(out + 12, &cm->name.u.sin.sin_addr, 4);
	}
	fd_put_be32(out + 28, cm->conn_id);
	if (cm->kind == FDM_CM_REQ)
		out[11] = cm->ctx;
	if (cm->kind != FDM_CM_BUSY) {
		fd_put_be64(out + 32, cm->word_addr);
		fd_put_be32(out + 40, cm->word_key);
		fd_put_be16(out + 44, cm->credits);
	}
}

int fdm_cm_decode(struct fdm_cm *cm, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint16_t fam;

	memset(cm, 0, sizeof(*cm));
	if (!p || len < FDM_CM_LEN || memcmp(p, fdm_magic, 4) ||
	    p[4] != FDM_PROTO_VERSION || p[10])
		return -FI_EINVAL;
	cm->kind = p[5];
	if (cm->kind < FDM_CM_REQ || cm->kind > FDM_CM_BUSY)
		return -FI_EINVAL;
	/* a request's scalable-endpoint context index; zero otherwise */
	cm->ctx = p[11];
	if (cm->ctx >= FDM_SEP_MAX_CTX || (cm->ctx && cm->kind != FDM_CM_REQ))
		return -FI_EINVAL;
	cm->conn_id = fd_get_be32(p + 28);
	fam = fd_get_be16(p + 6);
	if (cm->kind == FDM_CM_BUSY)
		return 0;	/* a refusal carries nothing more */
	cm->word_addr = fd_get_be64(p + 32);
	cm->word_key = fd_get_be32(p + 40);
	cm->credits = fd_get_be16(p + 44);
	/* no pool takes more from one peer than FDM_CREDIT_MAX; a peer
	 * with no credit word names none (address and key zero) */
	if (cm->credits < 1 || cm->credits > FDM_CREDIT_MAX || fd_get_be16(p + 46) ||
	    (!cm->word_addr && cm->word_key))
		return -FI_EINVAL;
	if (cm->kind != FDM_CM_REQ)
		return 0;	/* only a request names its sender */
	if (fam == 4) {
		struct sockaddr_in sin;

		if (!all_zero(p + 16, 12))
			return -FI_EINVAL;
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		memcpy(&sin.sin_port, p + 8, 2);
		memcpy(&sin.sin_addr, p + 12, 4);
		return fdm_name_parse(&cm->name, &sin, sizeof(sin));
	}
	if (fam == 6) {
		struct sockaddr_in6 sin6;

		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		memcpy(&sin6.sin6_port, p + 8, 2);
		memcpy(&sin6.sin6_addr, p + 12, 16);
		return fdm_name_parse(&cm->name, &sin6, sizeof(sin6));
	}
	return -FI_EINVAL;
}

/* ---- message header ---- */

void fdm_hdr_encode(uint8_t *out, const struct fdm_hdr *h)
{
	out[0] = FDM_PROTO_VERSION;
	out[1] = h->op;
	out[2] = h->flags;
	out[3] = 0;
	fd_put_be32(out + 4, h->conn_id);
	fd_put_be64(out + 8, h->tag);
	fd_put_be64(out + 16, h->data);
	fd_put_be64(out + 24, h->size);
	if (h->flags & FDM_HF_ACK)
		fd_put_be64(out + FDM_HDR_LEN, h->ack_id);
}

void fdm_hdr_set_conn(uint8_t *hdr, uint32_t conn_id)
{
	fd_put_be32(hdr + 4, conn_id);
}

int fdm_hdr_decode(struct fdm_hdr *h, const uint8_t *in, size_t len,
		   size_t eager_max)
{
	if (len < FDM_HDR_LEN || in[0] != FDM_PROTO_VERSION || in[3] ||
	    (in[2] & ~(FDM_HF_DATA | FDM_HF_ACK)))
		return -FI_EINVAL;
	h->op = in[1];
	h->flags = in[2];
	h->conn_id = fd_get_be32(in + 4);
	h->tag = fd_get_be64(in + 8);
	h->data = fd_get_be64(in + 16);
	h->size = fd_get_be64(in + 24);
	h->ack_id = 0;
	/* only an eager message asks for an acknowledgement */
	if ((h->flags & FDM_HF_ACK) && h->op != FDM_OP_EAGER_MSG &&
	    h->op != FDM_OP_EAGER_TAG)
		return -FI_EINVAL;
	switch (h->op) {
	case FDM_OP_EAGER_MSG:
	case FDM_OP_EAGER_TAG:
		if (h->flags & FDM_HF_ACK) {
			if (len < FDM_HDR_LEN + FDM_ACK_ID_LEN ||
			    h->size != len - FDM_HDR_LEN - FDM_ACK_ID_LEN ||
			    h->size > eager_max - FDM_ACK_ID_LEN)
				return -FI_EINVAL;
			h->ack_id = fd_get_be64(in + FDM_HDR_LEN);
			return 0;
		}
		if (h->size != len - FDM_HDR_LEN || h->size > eager_max)
			return -FI_EINVAL;
		return 0;
	case FDM_OP_RNDV_MSG:
	case FDM_OP_RNDV_TAG:
		/* over what an eager message with an acknowledgement holds
		 * (FI_DELIVERY_COMPLETE sends the last 8 bytes' worth below
		 * the eager limit by rendezvous) */
		if (h->size <= eager_max - FDM_ACK_ID_LEN)
			return -FI_EINVAL;
		return 0;
	case FDM_OP_RNDV_DONE:
		/* the data field is the receiver's status (0: all read) */
		if (len != FDM_HDR_LEN || h->size || h->flags || h->data > UINT32_MAX)
			return -FI_EINVAL;
		return 0;
	case FDM_OP_RMA_EVENT:
		if (len != FDM_HDR_LEN || h->size || h->flags ||
		    (h->tag != FDM_EV_WRITE && h->tag != FDM_EV_READ))
			return -FI_EINVAL;
		return 0;
	case FDM_OP_ATOMIC_REQ:
	case FDM_OP_ATOMIC_RESP:
		/* a request has no data field; an answer's is its status */
		if (h->size != len - FDM_HDR_LEN || h->size > eager_max || h->flags ||
		    (h->op == FDM_OP_ATOMIC_REQ ? h->data != 0 : h->data > UINT32_MAX))
			return -FI_EINVAL;
		return 0;
	default:
		return -FI_EINVAL;
	}
}

/* ---- rendezvous descriptor ---- */

size_t fdm_rndv_encode(uint8_t *out, const struct fdm_rndv_info *ri)
{
	uint8_t *p = out;

	fd_put_be64(p, ri->req_id);
	fd_put_be32(p + 8, ri->count);
	fd_put_be32(p + 12, 0);
	p += 16;
	for (uint32_t i = 0; i < ri->count; i++, p += 24) {
		fd_put_be64(p, ri->iov[i].addr);
		fd_put_be64(p + 8, ri->iov[i].len);
		fd_put_be32(p + 16, ri->iov[i].key);
		fd_put_be32(p + 20, 0);
	}
	return (size_t)(p - out);
}

int fdm_rndv_decode(struct fdm_rndv_info *ri, const uint8_t *in, size_t len,
		    uint64_t total)
{
	uint64_t sum = 0;

	if (len < 16)
		return -FI_EINVAL;
	ri->req_id = fd_get_be64(in);
	ri->count = fd_get_be32(in + 8);
	if (fd_get_be32(in + 12) || ri->count < 1 || ri->count > FDM_RNDV_IOV_MAX ||
	    len != 16 + 24 * (size_t)ri->count)
		return -FI_EINVAL;
	for (uint32_t i = 0; i < ri->count; i++) {
		const uint8_t *p = in + 16 + 24 * i;

		ri->iov[i].addr = fd_get_be64(p);
		ri->iov[i].len = fd_get_be64(p + 8);
		ri->iov[i].key = fd_get_be32(p + 16);
		if (fd_get_be32(p + 20) || ri->iov[i].len > total - sum)
			return -FI_EINVAL;
		sum += ri->iov[i].len;
	}
	return sum == total ? 0 : -FI_EINVAL;
}

/* ---- atomic request ---- */

void fdm_atomic_req_encode(uint8_t *out, const struct fdm_atomic_req *r)
{
	out[0] = r->kind;
	out[1] = r->op;
	out[2] = r->dt;
	out[3] = 0;
	fd_put_be32(out + 4, r->count);
	fd_put_be64(out + 8, r->addr);
	fd_put_be64(out + 16, r->key);
}

int fdm_atomic_req_decode(struct fdm_atomic_req *r, uint8_t *in, size_t len)
{
	size_t n;

	if (len < FDM_ATOMIC_DESC_LEN || in[3])
		return -FI_EINVAL;
	r->kind = in[0];
	r->op = in[1];
	r->dt = in[2];
	r->count = fd_get_be32(in + 4);
	r->addr = fd_get_be64(in + 8);
	r->key = fd_get_be64(in + 16);
	if (!fdm_atomic_ok(r->kind, r->op, r->dt) || !r->count ||
	    r->count > fdm_atomic_max_count(r->kind, r->dt))
		return -FI_EINVAL;
	/* no overflow: count is bounded by what fits a buffer */
	n = (size_t)r->count * fdm_atomic_dt_size(r->dt);
	r->operand = r->op == FI_ATOMIC_READ ? NULL : in + FDM_ATOMIC_DESC_LEN;
	r->compare = r->kind == FDM_AK_COMPARE ? in + FDM_ATOMIC_DESC_LEN + n : NULL;
	if (len != FDM_ATOMIC_DESC_LEN + (r->operand ? n : 0) + (r->compare ? n : 0))
		return -FI_EINVAL;
	return 0;
}
