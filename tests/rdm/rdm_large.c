/* Large messages (the rendezvous path): a 64 MiB tagged message to a
 * posted receive and another that arrives before its receive, then an
 * untagged one, every byte checked (8-byte words, each a function of its
 * offset and a seed, so a misplaced or repeated chunk shows up).
 * RDMT_LARGE_MIB sets the size (CI: 64; RDMT_LARGE_MIB=1024 for 1 GiB). */
#include "rdmt.h"

static struct rdmt_dom dom;
static struct rdmt_ep A, B;
static fi_addr_t a2b;

static uint64_t word(size_t i, uint64_t seed)
{
	return (i * 0x9e3779b97f4a7c15ull) ^ seed;
}

static void fill(uint64_t *p, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len / 8; i++)
		p[i] = word(i, seed);
}

static void check(const uint64_t *p, size_t len, uint64_t seed, const char *what)
{
	for (size_t i = 0; i < len / 8; i++)
		FDT_ASSERT(p[i] == word(i, seed), "%s: word %zu of %zu wrong (%#llx)", what,
			   i, len / 8, (unsigned long long)p[i]);
}

static void transfer(size_t len, int tagged, int recv_first, uint64_t seed, const char *what)
{
	uint64_t *sbuf = malloc(len), *rbuf = malloc(len + 64);
	struct fi_context sctx, rctx;
	struct rdmt_comp c;
	long t0;

	FDT_ASSERT(sbuf && rbuf, "cannot allocate 2 x %zu bytes", len);
	fill(sbuf, len, seed);
	memset(rbuf, 0, len + 64);
	t0 = rdmt_now_ms();
	if (recv_first) {
		if (tagged)
			RDMT_POST(fi_trecv(B.ep, rbuf, len + 64, NULL, FI_ADDR_UNSPEC, seed, 0, &rctx));
		else
			RDMT_POST(fi_recv(B.ep, rbuf, len + 64, NULL, FI_ADDR_UNSPEC, &rctx));
	}
	if (tagged)
		RDMT_POST(fi_tsend(A.ep, sbuf, len, NULL, a2b, seed, &sctx));
	else
		RDMT_POST(fi_send(A.ep, sbuf, len, NULL, a2b, &sctx));
	if (!recv_first) {
		rdmt_quiet(B.cq, 200, "nothing posted yet");
		RDMT_POST(fi_trecv(B.ep, rbuf, len + 64, NULL, FI_ADDR_UNSPEC, seed, 0, &rctx));
	}
	rdmt_wait_ok(B.cq, &c);
	rdmt_check_recv(&c, &rctx, (tagged ? FI_TAGGED : FI_MSG) | FI_RECV, len, seed);
	rdmt_wait_ok(A.cq, &c);
	FDT_ASSERT(c.e.op_context == &sctx, "send context");
	printf("%s: %zu bytes in %ld ms\n", what, len, rdmt_now_ms() - t0);
	check(rbuf, len, seed, what);
	for (size_t i = len; i < len + 64; i++)
		FDT_ASSERT(((uint8_t *)rbuf)[i] == 0, "%s: byte %zu past the message written",
			   what, i);
	free(sbuf);
	free(rbuf);
}

int main(void)
{
	struct fi_info *hints = rdmt_hints(FI_MSG | FI_TAGGED);
	const char *env = getenv("RDMT_LARGE_MIB");
	size_t mib = env ? strtoul(env, NULL, 0) : 64;
	size_t len = mib << 20;

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
#ifdef FDT_UPSTREAM
	/* upstream 1.17's rxm over verbs offers 8 MiB messages at most */
	if (dom.info->ep_attr->max_msg_size < len) {
		printf("upstream: max_msg_size %zu, testing that\n", dom.info->ep_attr->max_msg_size);
		len = dom.info->ep_attr->max_msg_size;
		mib = len >> 20;
	}
#endif
	FDT_ASSERT(dom.info->ep_attr->max_msg_size >= len, "max_msg_size %zu < %zu",
		   dom.info->ep_attr->max_msg_size, len);
	rdmt_ep_open(&dom, &A, NULL, FI_AV_TABLE);
	rdmt_ep_open(&dom, &B, NULL, FI_AV_TABLE);
	a2b = rdmt_insert(&A, &B);
	(void)rdmt_insert(&B, &A);

	transfer(len, 1, 1, 0x1111, "tagged, receive posted");
	transfer(len, 1, 0, 0x2222, "tagged, unexpected");
	if (mib <= 64)
		transfer(len - 8, 0, 1, 0x3333, "untagged");

	rdmt_ep_close(&A);
	rdmt_ep_close(&B);
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_large");
}
