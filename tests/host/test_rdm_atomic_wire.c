/* The RDM layer's software atomics without a device: the validators of
 * the two atomic messages (network data, so every malformed field must be
 * refused: header flags, data and sizes; the request's kind, operation,
 * datatype, reserved byte, count and exact length), the wire byte order,
 * and the update of memory being atomic against other threads (two
 * threads add to one 32-bit and one 64-bit word through fdm_atomic_apply
 * while a third swaps with FI_CSWAP loops: the totals are exact). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "fdm_atomic.h"
#include "fdm_proto.h"
#include "fdt_check.h"

static void check_header(void)
{
	uint8_t msg[FDM_HDR_LEN + 64];
	struct fdm_hdr h = { .op = FDM_OP_ATOMIC_REQ, .size = 40 }, out;

	fdm_hdr_encode(msg, &h);
	CHECK_EQ(fdm_hdr_decode(&out, msg, FDM_HDR_LEN + 40, FDM_EAGER_MAX), 0);
	CHECK_EQ(fdm_hdr_decode(&out, msg, FDM_HDR_LEN + 39, FDM_EAGER_MAX), -FI_EINVAL);
	CHECK_EQ(fdm_hdr_decode(&out, msg, FDM_HDR_LEN + 40, 39), -FI_EINVAL);
	h.data = 1;		/* a request has no data */
	fdm_hdr_encode(msg, &h);
	CHECK_EQ(fdm_hdr_decode(&out, msg, FDM_HDR_LEN + 40, FDM_EAGER_MAX), -FI_EINVAL);
	h.data = 0;
	h.flags = FDM_HF_DATA;
	fdm_hdr_encode(msg, &h);
	CHECK_EQ(fdm_hdr_decode(&out, msg, FDM_HDR_LEN + 40, FDM_EAGER_MAX), -FI_EINVAL);

	h.op = FDM_OP_ATOMIC_RESP;
	h.flags = 0;
	h.size = 0;
	h.data = FI_EACCES;
	fdm_hdr_encode(msg, &h);
	CHECK_EQ(fdm_hdr_decode(&out, msg, FDM_HDR_LEN, FDM_EAGER_MAX), 0);
	CHECK_EQ(out.data, FI_EACCES);
	h.data = (uint64_t)1 << 32;	/* a status is 32 bits */
	fdm_hdr_encode(msg, &h);
	CHECK_EQ(fdm_hdr_decode(&out, msg, FDM_HDR_LEN, FDM_EAGER_MAX), -FI_EINVAL);
}

/* Encode a request of kind/op/dt/count with its data; returns its length. */
static size_t make_req(uint8_t *buf, unsigned kind, unsigned op, unsigned dt, uint32_t count)
{
	struct fdm_atomic_req r = {
		.kind = (uint8_t)kind, .op = (uint8_t)op, .dt = (uint8_t)dt, .count = count,
		.addr = 0x1000, .key = 0x42,
	};
	size_t n = (size_t)count * fdm_atomic_dt_size(dt);

	fdm_atomic_req_encode(buf, &r);
	return FDM_ATOMIC_DESC_LEN + (op == FI_ATOMIC_READ ? 0 : n) +
		(kind == FDM_AK_COMPARE ? n : 0);
}

static void check_request(void)
{
	static uint8_t buf[2 * FDM_BUF_SIZE];
	struct fdm_atomic_req r;
	size_t len, max;

	len = make_req(buf, FDM_AK_COMPARE, FI_CSWAP, FI_UINT32, 3);
	CHECK_EQ(len, FDM_ATOMIC_DESC_LEN + 24);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, len), 0);
	CHECK(r.kind == FDM_AK_COMPARE && r.op == FI_CSWAP && r.dt == FI_UINT32 &&
	      r.count == 3 && r.addr == 0x1000 && r.key == 0x42);
	CHECK(r.operand == buf + FDM_ATOMIC_DESC_LEN && r.compare == buf + FDM_ATOMIC_DESC_LEN + 12);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, len - 1), -FI_EINVAL);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, len + 1), -FI_EINVAL);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, FDM_ATOMIC_DESC_LEN - 1), -FI_EINVAL);

	/* a read carries no operand */
	len = make_req(buf, FDM_AK_FETCH, FI_ATOMIC_READ, FI_DOUBLE, 2);
	CHECK_EQ(len, FDM_ATOMIC_DESC_LEN);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, len), 0);
	CHECK(r.operand == NULL && r.compare == NULL);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, len + 16), -FI_EINVAL);

	/* every field out of its range */
	len = make_req(buf, FDM_AK_WRITE, FI_SUM, FI_INT64, 1);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, len), 0);
	buf[3] = 1;		/* reserved */
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, len), -FI_EINVAL);
	buf[3] = 0;
	for (unsigned k = 0; k < 256; k++) {
		buf[0] = (uint8_t)k;
		CHECK_EQ(fdm_atomic_req_decode(&r, buf, len),
			 k >= FDM_AK_WRITE && k <= FDM_AK_FETCH ? 0 : -FI_EINVAL);
	}
	buf[0] = FDM_AK_WRITE;
	for (unsigned op = FI_ATOMIC_OP_LAST; op < 256; op++) {
		buf[1] = (uint8_t)op;
		CHECK_EQ(fdm_atomic_req_decode(&r, buf, len), -FI_EINVAL);
	}
	buf[1] = FI_SUM;
	for (unsigned dt = FI_LONG_DOUBLE; dt < 256; dt++) {
		buf[2] = (uint8_t)dt;
		CHECK_EQ(fdm_atomic_req_decode(&r, buf, len), -FI_EINVAL);
	}
	/* bitwise on a float, a compare op as a write */
	len = make_req(buf, FDM_AK_WRITE, FI_BOR, FI_FLOAT, 1);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, len), -FI_EINVAL);
	len = make_req(buf, FDM_AK_WRITE, FI_CSWAP, FI_UINT64, 1);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, len), -FI_EINVAL);
	/* count: none, the most that fits, one more */
	len = make_req(buf, FDM_AK_WRITE, FI_SUM, FI_UINT64, 0);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, len), -FI_EINVAL);
	max = fdm_atomic_max_count(FDM_AK_COMPARE, FI_DOUBLE_COMPLEX);
	CHECK(FDM_ATOMIC_DESC_LEN + 2 * 16 * max <= FDM_EAGER_MAX);
	len = make_req(buf, FDM_AK_COMPARE, FI_CSWAP, FI_DOUBLE_COMPLEX, (uint32_t)max);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, len), 0);
	len = make_req(buf, FDM_AK_COMPARE, FI_CSWAP, FI_DOUBLE_COMPLEX, (uint32_t)max + 1);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, len), -FI_EINVAL);
	len = make_req(buf, FDM_AK_WRITE, FI_SUM, FI_UINT8, 0xffffffffu);
	CHECK_EQ(fdm_atomic_req_decode(&r, buf, FDM_ATOMIC_DESC_LEN + 8), -FI_EINVAL);
}

static void check_swab(void)
{
	uint32_t x = 0x01020304;
	float complex_f[2] = { 1.0f, -2.0f };
	uint8_t *p = (uint8_t *)&x;
	uint32_t re;

	fdm_atomic_swab(&x, 1, FI_UINT32);
	CHECK(p[0] == 1 && p[1] == 2 && p[2] == 3 && p[3] == 4, "not big endian");
	fdm_atomic_swab(&x, 1, FI_UINT32);
	CHECK_EQ(x, 0x01020304);
	/* a complex number: each part on its own */
	fdm_atomic_swab(complex_f, 1, FI_FLOAT_COMPLEX);
	memcpy(&re, &complex_f[0], 4);
	CHECK_EQ(re, 0x0000803f);	/* 1.0f = 0x3f800000, turned */
	fdm_atomic_swab(complex_f, 1, FI_FLOAT_COMPLEX);
	CHECK(complex_f[0] == 1.0f && complex_f[1] == -2.0f);
}

/* ---- atomic against other threads ---- */

#define ROUNDS 200000

static uint32_t w32;
static uint64_t w64;

static void *adder(void *arg)
{
	uint32_t one32 = 1;
	uint64_t one64 = 1;

	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		fdm_atomic_apply(FI_SUM, FI_UINT32, &w32, &one32, NULL, NULL, 1);
		fdm_atomic_apply(FI_SUM, FI_UINT64, &w64, &one64, NULL, NULL, 1);
	}
	return NULL;
}

/* increments by compare-and-swap retries: only correct if FI_CSWAP is */
static void *swapper(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t old, want, got;

		do {
			fdm_atomic_apply(FI_ATOMIC_READ, FI_UINT64, &w64, NULL, NULL, &old, 1);
			want = old + 1;
			fdm_atomic_apply(FI_CSWAP, FI_UINT64, &w64, &want, &old, &got, 1);
		} while (got != old);
	}
	return NULL;
}

static void check_threads(void)
{
	pthread_t t[3];

	pthread_create(&t[0], NULL, adder, NULL);
	pthread_create(&t[1], NULL, adder, NULL);
	pthread_create(&t[2], NULL, swapper, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(w32, 2 * ROUNDS);
	CHECK_EQ(w64, 3 * ROUNDS);
}

int main(void)
{
	check_header();
	check_request();
	check_swab();
	check_threads();
	if (fdt_check_failures) {
		fprintf(stderr, "test_rdm_atomic_wire: %d failures\n", fdt_check_failures);
		return 1;
	}
	printf("test_rdm_atomic_wire: ok\n");
	return 0;
}
