/*
 * RDM wire codecs without a device (prov_verbs/rdm/fdm_proto.c, the
 * formats of docs/rdm-protocol.md): the handshake data with its credit
 * fields, the message header and the rendezvous descriptor. Each decoder
 * must take what the encoder wrote and refuse every malformed variant
 * (data from the network); then random bytes and random single-byte
 * corruptions must never crash a decoder or pass a field out of range.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "fdm_proto.h"
#include "fdt_check.h"

static struct fdm_cm good_cm(uint8_t kind)
{
	struct fdm_cm cm;
	struct sockaddr_in sin;

	memset(&cm, 0, sizeof(cm));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(40123);
	sin.sin_addr.s_addr = htonl(0x0a000102);
	fdm_name_parse(&cm.name, &sin, sizeof(sin));
	cm.kind = kind;
	cm.conn_id = 77;
	cm.word_addr = 0x7f00deadb000ull;
	cm.word_key = 0x1234;
	cm.credits = 64;
	return cm;
}

static int cm_decode_modified(const struct fdm_cm *cm, size_t off, uint8_t val)
{
	uint8_t wire[FDM_CM_LEN];
	struct fdm_cm out;

	fdm_cm_encode(wire, cm);
	wire[off] = val;
	return fdm_cm_decode(&out, wire, sizeof(wire));
}

static void test_cm(void)
{
	struct fdm_cm req = good_cm(FDM_CM_REQ), acc = good_cm(FDM_CM_ACCEPT), out, t;
	uint8_t wire[FDM_CM_LEN];

	fdm_cm_encode(wire, &req);
	CHECK_EQ(fdm_cm_decode(&out, wire, sizeof(wire)), 0);
	CHECK_EQ(out.kind, FDM_CM_REQ);
	CHECK_EQ(out.conn_id, 77);
	CHECK(out.word_addr == req.word_addr, "word address");
	CHECK_EQ(out.word_key, 0x1234);
	CHECK_EQ(out.credits, 64);
	CHECK(fdm_name_eq(&out.name, &req.name), "name");
	CHECK_EQ(out.ctx, 0);

	fdm_cm_encode(wire, &acc);
	CHECK_EQ(fdm_cm_decode(&out, wire, sizeof(wire)), 0);
	CHECK_EQ(out.kind, FDM_CM_ACCEPT);
	CHECK_EQ(out.credits, 64);

	/* short, wrong magic, wrong version, unknown kind */
	fdm_cm_encode(wire, &req);
	CHECK_EQ(fdm_cm_decode(&out, wire, FDM_CM_LEN - 1), -FI_EINVAL);
	CHECK_EQ(fdm_cm_decode(&out, NULL, FDM_CM_LEN), -FI_EINVAL);
	CHECK_EQ(cm_decode_modified(&req, 0, 'X'), -FI_EINVAL);
	CHECK_EQ(cm_decode_modified(&req, 4, 1), -FI_EINVAL);	/* version 1 */
	CHECK_EQ(cm_decode_modified(&req, 5, 0), -FI_EINVAL);
	CHECK_EQ(cm_decode_modified(&req, 5, 4), -FI_EINVAL);
	CHECK_EQ(cm_decode_modified(&req, 10, 1), -FI_EINVAL);	/* reserved */
	CHECK_EQ(cm_decode_modified(&req, 7, 5), -FI_EINVAL);	/* family 5 */

	/* a scalable endpoint's context index (byte 11): requests only,
	 * below FDM_SEP_MAX_CTX, and it travels */
	t = req;
	t.ctx = FDM_SEP_MAX_CTX - 1;
	fdm_cm_encode(wire, &t);
	CHECK_EQ(fdm_cm_decode(&out, wire, sizeof(wire)), 0);
	CHECK_EQ(out.ctx, FDM_SEP_MAX_CTX - 1);
	CHECK_EQ(cm_decode_modified(&req, 11, FDM_SEP_MAX_CTX), -FI_EINVAL);
	CHECK_EQ(cm_decode_modified(&req, 11, 0xff), -FI_EINVAL);
	CHECK_EQ(cm_decode_modified(&acc, 11, 1), -FI_EINVAL);
	t = acc;
	t.ctx = 3;	/* not encoded in an accept */
	fdm_cm_encode(wire, &t);
	CHECK_EQ(wire[11], 0);

	/* credits: 0 and more than any pool grants one peer are refused */
	t = req;
	t.credits = 0;
	fdm_cm_encode(wire, &t);
	CHECK_EQ(fdm_cm_decode(&out, wire, sizeof(wire)), -FI_EINVAL);
	t.credits = FDM_CREDIT_MAX + 1;
	fdm_cm_encode(wire, &t);
	CHECK_EQ(fdm_cm_decode(&out, wire, sizeof(wire)), -FI_EINVAL);
	t.credits = 1;
	fdm_cm_encode(wire, &t);
	CHECK_EQ(fdm_cm_decode(&out, wire, sizeof(wire)), 0);
	CHECK_EQ(cm_decode_modified(&req, 46, 1), -FI_EINVAL);	/* reserved */
	CHECK_EQ(cm_decode_modified(&acc, 47, 1), -FI_EINVAL);
	/* no credit word: address and key both zero, or refused */
	t = req;
	t.word_addr = 0;
	t.word_key = 0;
	fdm_cm_encode(wire, &t);
	CHECK_EQ(fdm_cm_decode(&out, wire, sizeof(wire)), 0);
	CHECK(out.word_addr == 0 && out.word_key == 0, "no word");
	t.word_key = 5;
	fdm_cm_encode(wire, &t);
	CHECK_EQ(fdm_cm_decode(&out, wire, sizeof(wire)), -FI_EINVAL);

	/* busy carries no credit fields: zeros there are fine */
	t = good_cm(FDM_CM_BUSY);
	fdm_cm_encode(wire, &t);
	CHECK_EQ(fdm_cm_decode(&out, wire, sizeof(wire)), 0);
	CHECK_EQ(out.kind, FDM_CM_BUSY);
	for (size_t i = 32; i < FDM_CM_LEN; i++)
		CHECK(!wire[i], "busy byte %zu", i);

	/* a request must name a reachable sender */
	t = req;
	t.name.u.sin.sin_port = 0;
	fdm_cm_encode(wire, &t);
	CHECK_EQ(fdm_cm_decode(&out, wire, sizeof(wire)), -FI_EINVAL);
	CHECK_EQ(cm_decode_modified(&req, 20, 1), -FI_EINVAL);	/* IPv4 padding */
}

static void test_hdr(void)
{
	uint8_t buf[FDM_HDR_LEN + 256];
	struct fdm_hdr h = { .op = FDM_OP_EAGER_TAG, .flags = FDM_HF_DATA, .conn_id = 9,
			     .tag = 0x1122334455667788ull, .data = 42, .size = 256 }, o;

	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, sizeof(buf), FDM_EAGER_MAX), 0);
	CHECK(o.tag == h.tag && o.data == 42 && o.size == 256 && o.conn_id == 9 &&
	      o.op == FDM_OP_EAGER_TAG && o.flags == FDM_HF_DATA, "fields");
	/* payload length must equal what arrived */
	CHECK_EQ(fdm_hdr_decode(&o, buf, sizeof(buf) - 1, FDM_EAGER_MAX), -FI_EINVAL);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN - 1, FDM_EAGER_MAX), -FI_EINVAL);
	/* more than the pool's payload room */
	CHECK_EQ(fdm_hdr_decode(&o, buf, sizeof(buf), 255), -FI_EINVAL);
	buf[0] = 1;	/* version 1 */
	CHECK_EQ(fdm_hdr_decode(&o, buf, sizeof(buf), FDM_EAGER_MAX), -FI_EINVAL);
	fdm_hdr_encode(buf, &h);
	buf[3] = 1;
	CHECK_EQ(fdm_hdr_decode(&o, buf, sizeof(buf), FDM_EAGER_MAX), -FI_EINVAL);
	fdm_hdr_encode(buf, &h);
	buf[2] = 0x80;
	CHECK_EQ(fdm_hdr_decode(&o, buf, sizeof(buf), FDM_EAGER_MAX), -FI_EINVAL);
	fdm_hdr_encode(buf, &h);
	buf[1] = 0;
	CHECK_EQ(fdm_hdr_decode(&o, buf, sizeof(buf), FDM_EAGER_MAX), -FI_EINVAL);
	buf[1] = 99;
	CHECK_EQ(fdm_hdr_decode(&o, buf, sizeof(buf), FDM_EAGER_MAX), -FI_EINVAL);

	/* header-only ops */
	h = (struct fdm_hdr){ .op = FDM_OP_RNDV_DONE, .tag = 5 };
	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN, FDM_EAGER_MAX), 0);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN + 1, FDM_EAGER_MAX), -FI_EINVAL);
	/* done's data field is the receiver's status: below 2^32 */
	h = (struct fdm_hdr){ .op = FDM_OP_RNDV_DONE, .tag = 5, .data = FI_EFAULT };
	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN, FDM_EAGER_MAX), 0);
	CHECK_EQ(o.data, (uint64_t)FI_EFAULT);
	h.data = UINT32_MAX;
	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN, FDM_EAGER_MAX), 0);
	h.data = (uint64_t)UINT32_MAX + 1;
	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN, FDM_EAGER_MAX), -FI_EINVAL);
	h = (struct fdm_hdr){ .op = FDM_OP_RMA_EVENT, .tag = 3 };
	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN, FDM_EAGER_MAX), -FI_EINVAL);
	/* a rendezvous must be over the eager limit (less the 8 bytes an
	 * acknowledged eager message gives to its id) */
	h = (struct fdm_hdr){ .op = FDM_OP_RNDV_MSG, .size = FDM_EAGER_MAX - FDM_ACK_ID_LEN };
	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN + 40, FDM_EAGER_MAX), -FI_EINVAL);
	h.size++;
	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN + 40, FDM_EAGER_MAX), 0);
}

/* FI_DELIVERY_COMPLETE's eager form: the request id between header and
 * payload, the payload length without it, the room 8 bytes less. */
static void test_hdr_ack(void)
{
	uint8_t buf[FDM_HDR_LEN + FDM_ACK_ID_LEN + 100];
	struct fdm_hdr h = { .op = FDM_OP_EAGER_MSG, .flags = FDM_HF_ACK | FDM_HF_DATA,
			     .conn_id = 3, .tag = 0, .data = 7, .size = 100,
			     .ack_id = 0x0000000500000002ull }, o;

	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, sizeof(buf), FDM_EAGER_MAX), 0);
	CHECK(o.ack_id == h.ack_id && o.size == 100 && o.data == 7 &&
	      o.flags == (FDM_HF_ACK | FDM_HF_DATA), "ack fields");
	/* the id counts in the length, not in the payload */
	CHECK_EQ(fdm_hdr_decode(&o, buf, sizeof(buf) - 1, FDM_EAGER_MAX), -FI_EINVAL);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN + 100, FDM_EAGER_MAX), -FI_EINVAL);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN + 4, FDM_EAGER_MAX), -FI_EINVAL);
	/* no room for the id on top of a full payload */
	CHECK_EQ(fdm_hdr_decode(&o, buf, sizeof(buf), 100 + FDM_ACK_ID_LEN - 1), -FI_EINVAL);
	CHECK_EQ(fdm_hdr_decode(&o, buf, sizeof(buf), 100 + FDM_ACK_ID_LEN), 0);
	/* zero bytes with an ack: the id alone */
	h.size = 0;
	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN + FDM_ACK_ID_LEN, FDM_EAGER_MAX), 0);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN, FDM_EAGER_MAX), -FI_EINVAL);
	/* no other op carries the flag */
	h = (struct fdm_hdr){ .op = FDM_OP_RNDV_DONE, .flags = FDM_HF_ACK, .tag = 1 };
	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN + FDM_ACK_ID_LEN, FDM_EAGER_MAX),
		 -FI_EINVAL);
	h = (struct fdm_hdr){ .op = FDM_OP_RNDV_TAG, .flags = FDM_HF_ACK,
			      .size = FDM_EAGER_MAX + 1 };
	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN + FDM_ACK_ID_LEN, FDM_EAGER_MAX),
		 -FI_EINVAL);
	h = (struct fdm_hdr){ .op = FDM_OP_ATOMIC_REQ, .flags = FDM_HF_ACK };
	fdm_hdr_encode(buf, &h);
	CHECK_EQ(fdm_hdr_decode(&o, buf, FDM_HDR_LEN + FDM_ACK_ID_LEN, FDM_EAGER_MAX),
		 -FI_EINVAL);
}

static void test_rndv(void)
{
	struct fdm_rndv_info ri = { .req_id = 0x100000007ull, .count = 2 }, o;
	uint8_t buf[16 + 24 * FDM_RNDV_IOV_MAX];
	size_t n;

	ri.iov[0].addr = 0x1000;
	ri.iov[0].len = 10000;
	ri.iov[0].key = 3;
	ri.iov[1].addr = 0x9000;
	ri.iov[1].len = 5000;
	ri.iov[1].key = 4;
	n = fdm_rndv_encode(buf, &ri);
	CHECK_EQ(n, 16 + 48);
	CHECK_EQ(fdm_rndv_decode(&o, buf, n, 15000), 0);
	CHECK(o.req_id == ri.req_id && o.count == 2 && o.iov[1].len == 5000 &&
	      o.iov[1].key == 4, "fields");
	CHECK_EQ(fdm_rndv_decode(&o, buf, n, 15001), -FI_EINVAL);	/* sum */
	CHECK_EQ(fdm_rndv_decode(&o, buf, n - 1, 15000), -FI_EINVAL);
	CHECK_EQ(fdm_rndv_decode(&o, buf, 15, 15000), -FI_EINVAL);
	buf[11] = 5;	/* count 5 */
	CHECK_EQ(fdm_rndv_decode(&o, buf, n, 15000), -FI_EINVAL);
}

/* Random input: no decoder may crash, and what passes is in range. */
static void test_random(void)
{
	uint8_t buf[FDM_HDR_LEN + 128], wire[FDM_CM_LEN];
	struct fdm_cm req = good_cm(FDM_CM_REQ), cm;
	struct fdm_rndv_info ri;
	struct fdm_hdr h;

	srand(12345);
	for (int i = 0; i < 200000; i++) {
		size_t len = (size_t)rand() % sizeof(buf);

		for (size_t j = 0; j < sizeof(buf); j++)
			buf[j] = (uint8_t)rand();
		if (!fdm_hdr_decode(&h, buf, len, FDM_EAGER_MAX))
			CHECK(h.op >= FDM_OP_EAGER_MSG && h.op <= FDM_OP_RMA_EVENT &&
			      (h.op > FDM_OP_EAGER_TAG || h.size == len - FDM_HDR_LEN),
			      "header op %u size %llu passed", h.op,
			      (unsigned long long)h.size);
		if (!fdm_rndv_decode(&ri, buf, len, (uint64_t)rand()))
			CHECK(ri.count >= 1 && ri.count <= FDM_RNDV_IOV_MAX, "rndv count");
		/* one corrupted byte of a good request */
		fdm_cm_encode(wire, &req);
		wire[(size_t)rand() % FDM_CM_LEN] = (uint8_t)rand();
		if (!fdm_cm_decode(&cm, wire, sizeof(wire)))
			CHECK(cm.kind >= FDM_CM_REQ && cm.kind <= FDM_CM_BUSY &&
			      (cm.kind == FDM_CM_BUSY ||
			       (cm.credits >= 1 && cm.credits <= FDM_CREDIT_MAX)),
			      "cm kind %u credits %u passed", cm.kind, cm.credits);
	}
}

int main(void)
{
	test_cm();
	test_hdr();
	test_hdr_ack();
	test_rndv();
	test_random();
	if (fdt_check_failures) {
		fprintf(stderr, "test_rdm_proto: %d checks failed\n", fdt_check_failures);
		return 1;
	}
	printf("test_rdm_proto: passed\n");
	return 0;
}
