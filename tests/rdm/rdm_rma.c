/* RMA and atomics on RDM endpoints, addressed by fi_addr_t: fi_write,
 * fi_writev, fi_writemsg, fi_inject_write and fi_writedata (the target's
 * CQ reports FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA with the data), fi_read,
 * fi_readv, fi_readmsg, a 4 MiB write and read; fi_atomic (FI_SUM),
 * fi_fetch_atomic and fi_compare_atomic (FI_CSWAP) on a uint64_t, with
 * the target's memory and the fetched values checked; reads and a
 * rendezvous receive into buffers that carry a descriptor of the
 * application's registration, registered the way fabtests registers them
 * (issue 21: fi_rma_bw -e rdm -o read failed from 64 KiB on with
 * FI_EACCES). */
#include "rdmt.h"

#define REGION (8u << 20)

static struct rdmt_dom dom;
static struct rdmt_ep A, B;
static fi_addr_t a2b;
static uint8_t *target, *local;
static uint64_t raddr, rkey;

static void wait_tx(struct fi_context *ctx, uint64_t flags)
{
	struct rdmt_comp c;

	rdmt_wait_ok(A.cq, &c);
	FDT_ASSERT(c.e.op_context == ctx, "context %p, expected %p", c.e.op_context, ctx);
	FDT_ASSERT((c.e.flags & flags) == flags, "flags %#llx lack %#llx",
		   (unsigned long long)c.e.flags, (unsigned long long)flags);
}

static void rma(void)
{
	struct fi_context ctx;
	struct iovec iov[2];
	struct fi_rma_iov riov;
	struct fi_msg_rma msg;
	struct rdmt_comp c;

	/* fi_write, then read it back with fi_read */
	fdt_fill(local, 4096, 1);
	RDMT_POST(fi_write(A.ep, local, 4096, NULL, a2b, raddr + 128, rkey, &ctx));
	wait_tx(&ctx, FI_RMA | FI_WRITE);
	FDT_ASSERT(fdt_check(target + 128, 4096, 1), "fi_write: target bytes");
	memset(local, 0, 8192);
	RDMT_POST(fi_read(A.ep, local, 4096, NULL, a2b, raddr + 128, rkey, &ctx));
	wait_tx(&ctx, FI_RMA | FI_READ);
	FDT_ASSERT(fdt_check(local, 4096, 1), "fi_read: bytes");

	/* vector forms */
	fdt_fill(local, 3000, 2);
	iov[0].iov_base = local;	iov[0].iov_len = 1000;
	iov[1].iov_base = local + 1000;	iov[1].iov_len = 2000;
	RDMT_POST(fi_writev(A.ep, iov, NULL, 2, a2b, raddr + 10000, rkey, &ctx));
	wait_tx(&ctx, FI_RMA | FI_WRITE);
	FDT_ASSERT(fdt_check(target + 10000, 3000, 2), "fi_writev: target bytes");
	memset(local, 0, 3000);
	RDMT_POST(fi_readv(A.ep, iov, NULL, 2, a2b, raddr + 10000, rkey, &ctx));
	wait_tx(&ctx, FI_RMA | FI_READ);
	FDT_ASSERT(fdt_check(local, 3000, 2), "fi_readv: bytes");

	/* msg forms */
	fdt_fill(local, 500, 3);
	iov[0].iov_len = 500;
	riov.addr = raddr + 20000;
	riov.len = 500;
	riov.key = rkey;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.iov_count = 1;
	msg.addr = a2b;
	msg.rma_iov = &riov;
	msg.rma_iov_count = 1;
	msg.context = &ctx;
	RDMT_POST(fi_writemsg(A.ep, &msg, FI_COMPLETION));
	wait_tx(&ctx, FI_RMA | FI_WRITE);
	FDT_ASSERT(fdt_check(target + 20000, 500, 3), "fi_writemsg: target bytes");
	memset(local, 0, 500);
	RDMT_POST(fi_readmsg(A.ep, &msg, FI_COMPLETION));
	wait_tx(&ctx, FI_RMA | FI_READ);
	FDT_ASSERT(fdt_check(local, 500, 3), "fi_readmsg: bytes");

	/* inject: no completion, the source is reusable at once; a read
	 * after it (same target, same initiator) sees the data */
	fdt_fill(local, 32, 4);
	RDMT_POST(fi_inject_write(A.ep, local, 32, a2b, raddr + 30000, rkey));
	memset(local, 0, 64);
	RDMT_POST(fi_read(A.ep, local, 32, NULL, a2b, raddr + 30000, rkey, &ctx));
	wait_tx(&ctx, FI_RMA | FI_READ);
	FDT_ASSERT(fdt_check(local, 32, 4), "fi_inject_write: bytes");

	/* writedata: the target hears of it */
	fdt_fill(local, 256, 5);
	RDMT_POST(fi_writedata(A.ep, local, 256, NULL, 0xd00d, a2b, raddr + 40000, rkey, &ctx));
	wait_tx(&ctx, FI_RMA | FI_WRITE);
	rdmt_wait_ok(B.cq, &c);
	FDT_ASSERT((c.e.flags & (FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA)) ==
		   (FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA), "writedata target flags %#llx",
		   (unsigned long long)c.e.flags);
	FDT_ASSERT(c.e.data == 0xd00d, "writedata data %#llx", (unsigned long long)c.e.data);
	FDT_ASSERT(fdt_check(target + 40000, 256, 5), "fi_writedata: target bytes");

	/* large */
	fdt_fill(local, 4u << 20, 6);
	RDMT_POST(fi_write(A.ep, local, 4u << 20, NULL, a2b, raddr + (4u << 20), rkey, &ctx));
	wait_tx(&ctx, FI_RMA | FI_WRITE);
	FDT_ASSERT(fdt_check(target + (4u << 20), 4u << 20, 6), "4 MiB write");
	memset(local, 0, 4u << 20);
	RDMT_POST(fi_read(A.ep, local, 4u << 20, NULL, a2b, raddr + (4u << 20), rkey, &ctx));
	wait_tx(&ctx, FI_RMA | FI_READ);
	FDT_ASSERT(fdt_check(local, 4u << 20, 6), "4 MiB read");
	rdmt_quiet(B.cq, 50, "target CQ after RMA without data");
}

/* The domain has no FI_MR_LOCAL, so an application may register the
 * buffer it reads into with remote access only and still hand its
 * descriptor to fi_read: fabtests (fi_rma_bw -o read) registers its one
 * buffer FI_REMOTE_READ, or FI_REMOTE_READ | FI_REMOTE_WRITE, and passes
 * fi_mr_desc with every read. Up to the layer's bounce size (8 KiB) the
 * descriptor goes unused; above it the read lands in the application's
 * region directly, which must then take the device's writes. Each size
 * is read with the descriptor and without, at an odd offset into the
 * region, the bytes around it checked untouched. */
#define DREG (2u << 20)
#define DOFF 8u

static void described_reads(void)
{
	static const size_t sizes[] = { 64, 4096, 8192, 8193, 65536, 100003, 1u << 20 };
	static const uint64_t access[] = {
		FI_REMOTE_READ,				/* fabtests, -o read */
		FI_REMOTE_READ | FI_REMOTE_WRITE,	/* fabtests, older caps rule */
		FI_SEND | FI_RECV | FI_REMOTE_READ,	/* fabtests with FI_MR_LOCAL hints */
		FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
	};
	uint8_t *buf = malloc(DREG);
	struct fi_context ctx;
	struct fid_mr *mr;
	uint32_t seed = 100;

	FDT_ASSERT(buf, "out of memory");
	for (size_t a = 0; a < sizeof(access) / sizeof(access[0]); a++) {
		FDT_OK(fi_mr_reg(dom.domain, buf, DREG, access[a], 0, 0, 0, &mr, NULL));
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			for (int use_desc = 1; use_desc >= 0; use_desc--) {
				size_t len = sizes[i];
				struct rdmt_comp c;

				seed++;
				fdt_fill(target + 1000, len, seed);
				memset(buf, 0xa5, DREG);
				RDMT_POST(fi_read(A.ep, buf + DOFF, len,
						  use_desc ? fi_mr_desc(mr) : NULL, a2b,
						  raddr + 1000, rkey, &ctx));
				rdmt_wait(A.cq, &c);
				FDT_ASSERT(!c.err, "fi_read of %zu B into a region registered "
					   "%#llx, %s descriptor: error %d (%s)", len,
					   (unsigned long long)access[a],
					   use_desc ? "with its" : "no", c.err,
					   fi_strerror(c.err));
				FDT_ASSERT(c.e.op_context == &ctx && (c.e.flags & FI_READ),
					   "fi_read completion: context %p flags %#llx",
					   c.e.op_context, (unsigned long long)c.e.flags);
				FDT_ASSERT(fdt_check(buf + DOFF, len, seed),
					   "fi_read of %zu B (access %#llx, desc %d): bytes",
					   len, (unsigned long long)access[a], use_desc);
				for (size_t k = 0; k < DOFF; k++)
					FDT_ASSERT(buf[k] == 0xa5, "byte %zu before the read", k);
				for (size_t k = DOFF + len; k < DOFF + len + 64; k++)
					FDT_ASSERT(buf[k] == 0xa5, "byte %zu past the read", k);
			}
		}
		FDT_OK(fi_close(&mr->fid));
	}

	/* The same rule for a receive: a rendezvous message (B reads it from
	 * A) into a region B registered FI_REMOTE_READ only, its descriptor
	 * given. */
	FDT_OK(fi_mr_reg(dom.domain, buf, DREG, FI_REMOTE_READ, 0, 0, 0, &mr, NULL));
	for (size_t i = 0; i < 2; i++) {
		size_t len = i ? 100003 : 65536;
		struct fi_context rctx;
		struct rdmt_comp c;

		seed++;
		memset(buf, 0xa5, DREG);
		fdt_fill(local, len, seed);
		RDMT_POST(fi_trecv(B.ep, buf + DOFF, len, fi_mr_desc(mr), FI_ADDR_UNSPEC,
				   0x21, 0, &rctx));
		RDMT_POST(fi_tsend(A.ep, local, len, NULL, a2b, 0x21, &ctx));
		wait_tx(&ctx, FI_TAGGED | FI_SEND);
		rdmt_wait(B.cq, &c);
		FDT_ASSERT(!c.err, "rendezvous receive of %zu B into a FI_REMOTE_READ region "
			   "with its descriptor: error %d (%s)", len, c.err, fi_strerror(c.err));
		rdmt_check_recv(&c, &rctx, FI_TAGGED | FI_RECV, len, 0x21);
		FDT_ASSERT(fdt_check(buf + DOFF, len, seed), "received %zu B: bytes", len);
		FDT_ASSERT(buf[DOFF - 1] == 0xa5 && buf[DOFF + len] == 0xa5,
			   "bytes around the received message");
	}
	FDT_OK(fi_close(&mr->fid));
	free(buf);
}

static void atomics(void)
{
	uint64_t *word = (uint64_t *)(void *)(target + 64);
	uint64_t operand, result, compare;
	struct fi_context ctx;
	size_t count = 0;

	FDT_OK(fi_atomicvalid(A.ep, FI_UINT64, FI_SUM, &count));
	FDT_ASSERT(count >= 1, "FI_SUM on FI_UINT64: count %zu", count);
	*word = 1000;
	operand = 234;
	RDMT_POST(fi_atomic(A.ep, &operand, 1, NULL, a2b, raddr + 64, rkey, FI_UINT64,
			    FI_SUM, &ctx));
	wait_tx(&ctx, FI_ATOMIC);
	FDT_ASSERT(__atomic_load_n(word, __ATOMIC_ACQUIRE) == 1234, "FI_SUM: %llu",
		   (unsigned long long)*word);

	operand = 6;
	result = 0;
	RDMT_POST(fi_fetch_atomic(A.ep, &operand, 1, NULL, &result, NULL, a2b, raddr + 64,
				  rkey, FI_UINT64, FI_SUM, &ctx));
	wait_tx(&ctx, FI_ATOMIC);
	FDT_ASSERT(result == 1234 && *word == 1240, "fetch-add: fetched %llu, now %llu",
		   (unsigned long long)result, (unsigned long long)*word);

	compare = 1240;
	operand = 77;
	result = 0;
	RDMT_POST(fi_compare_atomic(A.ep, &operand, 1, NULL, &compare, NULL, &result, NULL,
				    a2b, raddr + 64, rkey, FI_UINT64, FI_CSWAP, &ctx));
	wait_tx(&ctx, FI_ATOMIC);
	FDT_ASSERT(result == 1240 && *word == 77, "cswap hit: fetched %llu, now %llu",
		   (unsigned long long)result, (unsigned long long)*word);
	compare = 1;		/* miss: nothing changes */
	operand = 99;
	RDMT_POST(fi_compare_atomic(A.ep, &operand, 1, NULL, &compare, NULL, &result, NULL,
				    a2b, raddr + 64, rkey, FI_UINT64, FI_CSWAP, &ctx));
	wait_tx(&ctx, FI_ATOMIC);
	FDT_ASSERT(result == 77 && *word == 77, "cswap miss: fetched %llu, now %llu",
		   (unsigned long long)result, (unsigned long long)*word);
}

int main(void)
{
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC);
	struct fid_mr *mr;

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	rdmt_ep_open(&dom, &A, NULL, FI_AV_TABLE);
	rdmt_ep_open(&dom, &B, NULL, FI_AV_TABLE);
	a2b = rdmt_insert(&A, &B);
	(void)rdmt_insert(&B, &A);

	target = calloc(1, REGION);
	local = calloc(1, REGION);
	FDT_ASSERT(target && local, "out of memory");
	FDT_OK(fi_mr_reg(dom.domain, target, REGION, FI_REMOTE_READ | FI_REMOTE_WRITE,
			 0, 0, 0, &mr, NULL));
	rkey = fi_mr_key(mr);
	raddr = (dom.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
		(uint64_t)(uintptr_t)target : 0;

	rma();
	described_reads();
	atomics();

	FDT_OK(fi_close(&mr->fid));
	rdmt_ep_close(&A);
	rdmt_ep_close(&B);
	rdmt_dom_close(&dom);
	free(target);
	free(local);
	return rdmt_pass("rdm_rma");
}
