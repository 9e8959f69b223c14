/* Every send and receive form, tagged (fi_tsend, tsendv, tsendmsg,
 * tinject, tsenddata, tinjectdata / trecv, trecvv, trecvmsg) and untagged
 * (the fi_send family), between two RDM endpoints: bytes, lengths, tags,
 * remote CQ data, completion flags and contexts on both sides; tag +
 * ignore-mask matching; injects give no send completion; a message longer
 * than its receive buffer ends in FI_ETRUNC and the next one is fine. */
#include "rdmt.h"

static struct rdmt_dom dom;
static struct rdmt_ep A, B;
static fi_addr_t a2b;
static uint8_t sbuf[8192], rbuf[8192];

static void expect_recv(struct fi_context *ctx, uint64_t flags, size_t len,
			uint64_t tag, uint32_t seed, uint64_t data)
{
	struct rdmt_comp c;

	rdmt_wait_ok(B.cq, &c);
	rdmt_check_recv(&c, ctx, flags | FI_RECV, len, tag);
	if (flags & FI_REMOTE_CQ_DATA)
		FDT_ASSERT(c.e.data == data, "data %#llx, expected %#llx",
			   (unsigned long long)c.e.data, (unsigned long long)data);
	else
		FDT_ASSERT(!(c.e.flags & FI_REMOTE_CQ_DATA), "unexpected FI_REMOTE_CQ_DATA");
	FDT_ASSERT(fdt_check(rbuf, len, seed), "payload mismatch (len %zu)", len);
}

static void expect_send(struct fi_context *ctx, uint64_t flags)
{
	struct rdmt_comp c;

	rdmt_wait_ok(A.cq, &c);
	FDT_ASSERT(c.e.op_context == ctx, "send context %p, expected %p", c.e.op_context, ctx);
	FDT_ASSERT((c.e.flags & (flags | FI_SEND)) == (flags | FI_SEND),
		   "send flags %#llx", (unsigned long long)c.e.flags);
}

static void tagged_forms(void)
{
	struct fi_context sctx, rctx;
	struct iovec siov[3], riov[2];
	struct fi_msg_tagged msg;
	size_t inject = dom.info->tx_attr->inject_size;
	uint32_t seed = 1;
	size_t len;

	FDT_ASSERT(inject >= 16, "inject_size %zu", inject);
	/* fi_tsend / fi_trecv */
	len = 1000;
	fdt_fill(sbuf, len, ++seed);
	memset(rbuf, 0, sizeof(rbuf));
	RDMT_POST(fi_trecv(B.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 0x11, 0, &rctx));
	RDMT_POST(fi_tsend(A.ep, sbuf, len, NULL, a2b, 0x11, &sctx));
	expect_send(&sctx, FI_TAGGED);
	expect_recv(&rctx, FI_TAGGED, len, 0x11, seed, 0);

	/* fi_tsendv (3 pieces) / fi_trecvv (2 pieces) */
	len = 3000;
	fdt_fill(sbuf, len, ++seed);
	memset(rbuf, 0, sizeof(rbuf));
	siov[0].iov_base = sbuf;		siov[0].iov_len = 1;
	siov[1].iov_base = sbuf + 1;		siov[1].iov_len = 1999;
	siov[2].iov_base = sbuf + 2000;	siov[2].iov_len = 1000;
	riov[0].iov_base = rbuf;		riov[0].iov_len = 1500;
	riov[1].iov_base = rbuf + 1500;	riov[1].iov_len = sizeof(rbuf) - 1500;
	RDMT_POST(fi_trecvv(B.ep, riov, NULL, 2, FI_ADDR_UNSPEC, 0x22, 0, &rctx));
	RDMT_POST(fi_tsendv(A.ep, siov, NULL, 3, a2b, 0x22, &sctx));
	expect_send(&sctx, FI_TAGGED);
	expect_recv(&rctx, FI_TAGGED, len, 0x22, seed, 0);

	/* fi_tsendmsg with remote CQ data / fi_trecvmsg */
	len = 777;
	fdt_fill(sbuf, len, ++seed);
	memset(rbuf, 0, sizeof(rbuf));
	riov[0].iov_base = rbuf;
	riov[0].iov_len = sizeof(rbuf);
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = riov;
	msg.iov_count = 1;
	msg.addr = FI_ADDR_UNSPEC;
	msg.tag = 0x33;
	msg.context = &rctx;
	RDMT_POST(fi_trecvmsg(B.ep, &msg, FI_COMPLETION));
	siov[0].iov_base = sbuf;
	siov[0].iov_len = len;
	msg.msg_iov = siov;
	msg.addr = a2b;
	msg.context = &sctx;
	msg.data = 0xcafe1234;
	RDMT_POST(fi_tsendmsg(A.ep, &msg, FI_REMOTE_CQ_DATA | FI_COMPLETION));
	expect_send(&sctx, FI_TAGGED);
	expect_recv(&rctx, FI_TAGGED | FI_REMOTE_CQ_DATA, len, 0x33, seed, 0xcafe1234);

	/* fi_tsenddata */
	len = 64;
	fdt_fill(sbuf, len, ++seed);
	memset(rbuf, 0, sizeof(rbuf));
	RDMT_POST(fi_trecv(B.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 0x44, 0, &rctx));
	RDMT_POST(fi_tsenddata(A.ep, sbuf, len, NULL, 0x5eed, a2b, 0x44, &sctx));
	expect_send(&sctx, FI_TAGGED);
	expect_recv(&rctx, FI_TAGGED | FI_REMOTE_CQ_DATA, len, 0x44, seed, 0x5eed);

	/* fi_tinject: no send completion; the buffer is reusable at once */
	len = inject < 100 ? inject : 100;
	fdt_fill(sbuf, len, ++seed);
	memset(rbuf, 0, sizeof(rbuf));
	RDMT_POST(fi_trecv(B.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 0x55, 0, &rctx));
	RDMT_POST(fi_tinject(A.ep, sbuf, len, a2b, 0x55));
	memset(sbuf, 0xee, len);
	expect_recv(&rctx, FI_TAGGED, len, 0x55, seed, 0);

	/* fi_tinjectdata */
	fdt_fill(sbuf, len, ++seed);
	memset(rbuf, 0, sizeof(rbuf));
	RDMT_POST(fi_trecv(B.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 0x66, 0, &rctx));
	RDMT_POST(fi_tinjectdata(A.ep, sbuf, len, 0x77, a2b, 0x66));
	memset(sbuf, 0xee, len);
	expect_recv(&rctx, FI_TAGGED | FI_REMOTE_CQ_DATA, len, 0x66, seed, 0x77);
	rdmt_quiet(A.cq, 100, "injects");

	/* zero bytes */
	RDMT_POST(fi_trecv(B.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 0x67, 0, &rctx));
	RDMT_POST(fi_tsend(A.ep, sbuf, 0, NULL, a2b, 0x67, &sctx));
	expect_send(&sctx, FI_TAGGED);
	expect_recv(&rctx, FI_TAGGED, 0, 0x67, 0, 0);
}

static void untagged_forms(void)
{
	struct fi_context sctx, rctx;
	struct iovec siov[2], riov[2];
	struct fi_msg msg;
	size_t inject = dom.info->tx_attr->inject_size;
	uint32_t seed = 100;
	size_t len;

	len = 500;
	fdt_fill(sbuf, len, ++seed);
	memset(rbuf, 0, sizeof(rbuf));
	RDMT_POST(fi_recv(B.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, &rctx));
	RDMT_POST(fi_send(A.ep, sbuf, len, NULL, a2b, &sctx));
	expect_send(&sctx, FI_MSG);
	expect_recv(&rctx, FI_MSG, len, 0, seed, 0);

	len = 4000;
	fdt_fill(sbuf, len, ++seed);
	memset(rbuf, 0, sizeof(rbuf));
	siov[0].iov_base = sbuf;		siov[0].iov_len = 3;
	siov[1].iov_base = sbuf + 3;		siov[1].iov_len = len - 3;
	riov[0].iov_base = rbuf;		riov[0].iov_len = 10;
	riov[1].iov_base = rbuf + 10;		riov[1].iov_len = sizeof(rbuf) - 10;
	RDMT_POST(fi_recvv(B.ep, riov, NULL, 2, FI_ADDR_UNSPEC, &rctx));
	RDMT_POST(fi_sendv(A.ep, siov, NULL, 2, a2b, &sctx));
	expect_send(&sctx, FI_MSG);
	expect_recv(&rctx, FI_MSG, len, 0, seed, 0);

	len = 333;
	fdt_fill(sbuf, len, ++seed);
	memset(rbuf, 0, sizeof(rbuf));
	riov[0].iov_base = rbuf;
	riov[0].iov_len = sizeof(rbuf);
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = riov;
	msg.iov_count = 1;
	msg.addr = FI_ADDR_UNSPEC;
	msg.context = &rctx;
	RDMT_POST(fi_recvmsg(B.ep, &msg, FI_COMPLETION));
	siov[0].iov_base = sbuf;
	siov[0].iov_len = len;
	msg.msg_iov = siov;
	msg.addr = a2b;
	msg.context = &sctx;
	msg.data = 0xabcdef;
	RDMT_POST(fi_sendmsg(A.ep, &msg, FI_REMOTE_CQ_DATA | FI_COMPLETION));
	expect_send(&sctx, FI_MSG);
	expect_recv(&rctx, FI_MSG | FI_REMOTE_CQ_DATA, len, 0, seed, 0xabcdef);

	len = 40;
	fdt_fill(sbuf, len, ++seed);
	memset(rbuf, 0, sizeof(rbuf));
	RDMT_POST(fi_recv(B.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, &rctx));
	RDMT_POST(fi_senddata(A.ep, sbuf, len, NULL, 0x1234, a2b, &sctx));
	expect_send(&sctx, FI_MSG);
	expect_recv(&rctx, FI_MSG | FI_REMOTE_CQ_DATA, len, 0, seed, 0x1234);

	len = inject < 48 ? inject : 48;
	fdt_fill(sbuf, len, ++seed);
	memset(rbuf, 0, sizeof(rbuf));
	RDMT_POST(fi_recv(B.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, &rctx));
	RDMT_POST(fi_inject(A.ep, sbuf, len, a2b));
	memset(sbuf, 0xee, len);
	expect_recv(&rctx, FI_MSG, len, 0, seed, 0);

	fdt_fill(sbuf, len, ++seed);
	memset(rbuf, 0, sizeof(rbuf));
	RDMT_POST(fi_recv(B.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, &rctx));
	RDMT_POST(fi_injectdata(A.ep, sbuf, len, 0x4321, a2b));
	memset(sbuf, 0xee, len);
	expect_recv(&rctx, FI_MSG | FI_REMOTE_CQ_DATA, len, 0, seed, 0x4321);
	rdmt_quiet(A.cq, 100, "injects");
}

/* Receives with an ignore mask take any tag equal outside the mask; an
 * exact receive posted alongside takes only its own tag. Messages and
 * tagged messages never match each other. */
static void tag_matching(void)
{
	struct fi_context sctx[4], rctx[4];
	static uint8_t r2[256], r3[256];
	struct rdmt_comp c;
	int i, got_masked = 0, got_exact = 0, got_untagged = 0;

	RDMT_POST(fi_trecv(B.ep, rbuf, 256, NULL, FI_ADDR_UNSPEC, 0xab00, 0xff, &rctx[0]));
	RDMT_POST(fi_trecv(B.ep, r2, 256, NULL, FI_ADDR_UNSPEC, 0xac01, 0, &rctx[1]));
	RDMT_POST(fi_recv(B.ep, r3, 256, NULL, FI_ADDR_UNSPEC, &rctx[2]));
	/* tag 0xac01 first: must skip the masked receive (0xab00/0xff) */
	fdt_fill(sbuf, 256, 7);
	fdt_fill(sbuf + 256, 256, 8);
	fdt_fill(sbuf + 512, 256, 9);
	RDMT_POST(fi_tsend(A.ep, sbuf, 256, NULL, a2b, 0xac01, &sctx[0]));
	RDMT_POST(fi_tsend(A.ep, sbuf + 256, 256, NULL, a2b, 0xab7f, &sctx[1]));
	RDMT_POST(fi_send(A.ep, sbuf + 512, 256, NULL, a2b, &sctx[2]));
	for (i = 0; i < 3; i++)
		expect_send(&sctx[i], 0);
	for (i = 0; i < 3; i++) {
		rdmt_wait_ok(B.cq, &c);
		if (c.e.op_context == &rctx[0]) {
			rdmt_check_recv(&c, &rctx[0], FI_TAGGED, 256, 0xab7f);
			FDT_ASSERT(fdt_check(rbuf, 256, 8), "masked receive got the wrong bytes");
			got_masked++;
		} else if (c.e.op_context == &rctx[1]) {
			rdmt_check_recv(&c, &rctx[1], FI_TAGGED, 256, 0xac01);
			FDT_ASSERT(fdt_check(r2, 256, 7), "exact receive got the wrong bytes");
			got_exact++;
		} else {
			rdmt_check_recv(&c, &rctx[2], FI_MSG, 256, 0);
			FDT_ASSERT(!(c.e.flags & FI_TAGGED), "untagged receive flagged FI_TAGGED");
			FDT_ASSERT(fdt_check(r3, 256, 9), "untagged receive got the wrong bytes");
			got_untagged++;
		}
	}
	FDT_ASSERT(got_masked == 1 && got_exact == 1 && got_untagged == 1, "matching");
}

static void truncation(void)
{
	struct fi_context sctx, rctx;
	struct rdmt_comp c;

	fdt_fill(sbuf, 2000, 31);
	RDMT_POST(fi_trecv(B.ep, rbuf, 1000, NULL, FI_ADDR_UNSPEC, 0x99, 0, &rctx));
	RDMT_POST(fi_tsend(A.ep, sbuf, 2000, NULL, a2b, 0x99, &sctx));
	rdmt_wait(A.cq, &c);	/* the sender may see success or not: the data left */
	FDT_ASSERT(c.e.op_context == &sctx, "send context");
	rdmt_wait(B.cq, &c);
	FDT_ASSERT(c.err == FI_ETRUNC, "truncated receive: err %d (%s)", c.err,
		   fi_strerror(c.err));
	FDT_ASSERT(c.errent.op_context == &rctx, "truncated receive context");
	FDT_ASSERT(c.errent.olen == 1000, "olen %zu, expected 1000 bytes cut off",
		   c.errent.olen);
	FDT_ASSERT(fdt_check(rbuf, 1000, 31), "the part that fits must be there");
	/* and the endpoint goes on working */
	fdt_fill(sbuf, 100, 32);
	RDMT_POST(fi_trecv(B.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 0x98, 0, &rctx));
	RDMT_POST(fi_tsend(A.ep, sbuf, 100, NULL, a2b, 0x98, &sctx));
	expect_send(&sctx, FI_TAGGED);
	expect_recv(&rctx, FI_TAGGED, 100, 0x98, 32, 0);
}

int main(void)
{
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED);

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	FDT_ASSERT(dom.info->domain_attr->cq_data_size >= 4, "cq_data_size %zu",
		   dom.info->domain_attr->cq_data_size);
	rdmt_ep_open(&dom, &A, NULL, FI_AV_TABLE);
	rdmt_ep_open(&dom, &B, NULL, FI_AV_TABLE);
	a2b = rdmt_insert(&A, &B);
	(void)rdmt_insert(&B, &A);

	tagged_forms();
	untagged_forms();
	tag_matching();
	truncation();

	rdmt_ep_close(&A);
	rdmt_ep_close(&B);
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_tagged");
}
