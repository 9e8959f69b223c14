/* Tag matching over the whole 64-bit range, as MPI transports use it
 * (issue 21: Open MPI's intercommunicator creation and synchronous sends
 * hung):
 *  - tags with any of the top bits set (bit 63 alone, 0x9000000000000000,
 *    all ones, ...) match exactly, posted before the message (posted list)
 *    and after it (unexpected queue), small and rendezvous-sized; a tag
 *    that differs in one bit only, bit 63 included, does not match; ignore
 *    masks over the top bits match every tag they cover;
 *  - receives and sends posted while a batch of completions read by one
 *    fi_cq_read is being handled (a synchronous-send acknowledgement with
 *    bit 63 set, as an MPI's progress callback posts it);
 *  - one peer inserted into the AV twice (an MPI adds a process again when
 *    it joins an intercommunicator): a directed receive naming either
 *    fi_addr_t takes that peer's messages, and only that peer's. */
#include "rdmt.h"

static struct rdmt_dom dom;
static struct rdmt_ep A, A2, B;
static fi_addr_t a_to_b, a2_to_b, b_to_a, b_to_a2, b_to_a_again;

#define TOP	(1ULL << 63)

static const uint64_t tags[] = {
	0, 1, TOP, TOP | 1, 0x9000000000000000ULL, 0x4000000000000000ULL,
	0xc000000000000000ULL, 0xe000007fffffffffULL, 0x7fffffffffffffffULL,
	0xffffffffffffffffULL, 0xfffffffffffffffeULL, 0x8000000100000000ULL,
	0x00000000fffffff6ULL, 0x0000000cffffffe5ULL,
};
#define NTAGS (sizeof(tags) / sizeof(tags[0]))

static void one(uint64_t tag, uint64_t ignore, uint64_t sent_tag, size_t len, int unexpected,
		uint32_t seed)
{
	uint8_t *s = malloc(len), *r = calloc(1, len);
	struct fi_context sc, rc;
	struct rdmt_comp c;

	FDT_ASSERT(s && r, "out of memory");
	fdt_fill(s, len, seed);
	if (!unexpected)
		RDMT_POST(fi_trecv(B.ep, r, len, NULL, FI_ADDR_UNSPEC, tag, ignore, &rc));
	RDMT_POST(fi_tsend(A.ep, s, len, NULL, a_to_b, sent_tag, &sc));
	if (unexpected) {
		/* the message is at B (unexpected) once A's send completed,
		 * for an eager size; a rendezvous one waits for the receive */
		if (len <= 1024)
			rdmt_wait_ok(A.cq, &c);
		RDMT_POST(fi_trecv(B.ep, r, len, NULL, FI_ADDR_UNSPEC, tag, ignore, &rc));
	}
	rdmt_wait_ok(B.cq, &c);
	rdmt_check_recv(&c, &rc, FI_TAGGED | FI_RECV, len, sent_tag);
	FDT_ASSERT(fdt_check(r, len, seed), "tag %#llx ignore %#llx len %zu: wrong bytes",
		   (unsigned long long)tag, (unsigned long long)ignore, len);
	if (!unexpected || len > 1024) {
		rdmt_wait_ok(A.cq, &c);
		FDT_ASSERT(c.e.op_context == &sc, "send context");
	}
	free(s);
	free(r);
}

static void exact_tags(void)
{
	static const size_t lens[] = { 8, 200000 };
	uint32_t seed = 1;

	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < NTAGS; i++)
			for (int unexp = 0; unexp < 2; unexp++)
				one(tags[i], 0, tags[i], lens[l], unexp, seed++);
}

static void near_misses(void)
{
	static uint8_t s[64], r[64];
	struct fi_context sc, rc;
	struct rdmt_comp c;

	/* one bit apart, for the top bits and a low one: no match */
	static const uint64_t flip[] = { TOP, 1ULL << 62, 1ULL << 60, 1ULL << 32, 1 };

	for (size_t i = 0; i < NTAGS; i += 3) {
		for (size_t f = 0; f < sizeof(flip) / sizeof(flip[0]); f++) {
			uint64_t want = tags[i], other = tags[i] ^ flip[f];

			fdt_fill(s, sizeof(s), (uint32_t)(i * 8 + f));
			RDMT_POST(fi_trecv(B.ep, r, sizeof(r), NULL, FI_ADDR_UNSPEC, want, 0, &rc));
			RDMT_POST(fi_tsend(A.ep, s, sizeof(s), NULL, a_to_b, other, &sc));
			rdmt_wait_ok(A.cq, &c);
			rdmt_quiet(B.cq, 50, "a tag one bit apart matched");
			/* the receive is still there: the right tag takes it,
			 * and the stray message waits for its own */
			RDMT_POST(fi_tsend(A.ep, s, 16, NULL, a_to_b, want, &sc));
			rdmt_wait_ok(A.cq, &c);
			rdmt_wait_ok(B.cq, &c);
			rdmt_check_recv(&c, &rc, FI_TAGGED | FI_RECV, 16, want);
			RDMT_POST(fi_trecv(B.ep, r, sizeof(r), NULL, FI_ADDR_UNSPEC, other, 0, &rc));
			rdmt_wait_ok(B.cq, &c);
			rdmt_check_recv(&c, &rc, FI_TAGGED | FI_RECV, sizeof(s), other);
			FDT_ASSERT(fdt_check(r, sizeof(s), (uint32_t)(i * 8 + f)), "stray message bytes");
		}
	}
}

static void ignore_masks(void)
{
	/* the top nibble ignored: every combination of it matches */
	for (uint64_t hi = 0; hi < 16; hi++)
		one(0x0000000500000007ULL, 0xf000000000000000ULL,
		    (hi << 60) | 0x0000000500000007ULL, 32, (int)(hi & 1), 500 + (uint32_t)hi);
	/* everything but bit 63 ignored */
	one(TOP, ~TOP, TOP | 0x1234, 32, 0, 600);
	one(TOP, ~TOP, TOP | 0x7fffffffffffffffULL, 32, 1, 601);
	/* everything ignored */
	one(0, ~0ULL, 0xdeadbeefcafef00dULL, 32, 0, 602);
}

/* A's "synchronous sends" each wait for an acknowledgement that B sends
 * with bit 63 added to the tag, from inside its handling of the batch of
 * receive completions one fi_cq_read returned; B posts its next receives
 * there too. */
#define NSYNC 16

static void acks_from_completions(void)
{
	static uint64_t sbuf[NSYNC], rbuf[NSYNC];
	static struct fi_context sctx[NSYNC], actx[NSYNC], rctx[NSYNC], bsctx[NSYNC];
	struct fi_cq_tagged_entry ent[NSYNC];
	struct rdmt_comp c;
	int acked = 0, rcvd = 0, round;

	for (round = 0; round < 2; round++) {
		uint64_t base = round ? 0x9000000000000000ULL : 0x0000000c00000000ULL;

		int sends = 0, bsends = 0;

		acked = rcvd = 0;
		for (int i = 0; i < NSYNC; i++) {
			/* the ack receive first, exact tag, as Open MPI does */
			RDMT_POST(fi_trecv(A.ep, NULL, 0, NULL, a_to_b, (base | (uint64_t)i) ^ TOP, 0,
					   &actx[i]));
			sbuf[i] = base + (uint64_t)i * 1000;
		}
		RDMT_POST(fi_trecv(B.ep, &rbuf[0], 8, NULL, FI_ADDR_UNSPEC, base, 0xffff, &rctx[0]));
		for (int i = 0; i < NSYNC; i++)
			RDMT_POST(fi_tsend(A.ep, &sbuf[i], 8, NULL, a_to_b, base | (uint64_t)i,
					   &sctx[i]));
		long end = rdmt_now_ms() + RDMT_WAIT_MS;
		while (rcvd < NSYNC) {
			FDT_ASSERT(rdmt_now_ms() < end, "round %d: %d of %d received", round, rcvd,
				   NSYNC);
			ssize_t n = fi_cq_read(B.cq->cq, ent, NSYNC);

			if (n == -FI_EAGAIN) {
				rdmt_progress();
				continue;
			}
			FDT_ASSERT(n > 0, "fi_cq_read on B: %zd", n);
			for (ssize_t k = 0; k < n; k++) {
				int i = (int)(ent[k].tag & 0xffff);

				if (ent[k].flags & FI_SEND) {	/* an ack went out */
					bsends++;
					continue;
				}

				FDT_ASSERT(ent[k].op_context == &rctx[rcvd], "receive context");
				FDT_ASSERT(ent[k].tag == (base | (uint64_t)rcvd), "tag %#llx, want %#llx",
					   (unsigned long long)ent[k].tag,
					   (unsigned long long)(base | (uint64_t)rcvd));
				FDT_ASSERT(rbuf[rcvd] == base + (uint64_t)i * 1000, "payload");
				rcvd++;
				/* inside the handling: the next receive and the ack */
				if (rcvd < NSYNC)
					RDMT_POST(fi_trecv(B.ep, &rbuf[rcvd], 8, NULL, FI_ADDR_UNSPEC,
							   base, 0xffff, &rctx[rcvd]));
				RDMT_POST(fi_tsend(B.ep, NULL, 0, NULL, b_to_a, ent[k].tag ^ TOP,
						   &bsctx[i]));
			}
		}
		/* A: every send and every ack completes; B: every ack send */
		while (acked < NSYNC || sends < NSYNC) {
			rdmt_wait_ok(A.cq, &c);
			if (c.e.flags & FI_RECV) {
				int i = (int)(c.e.op_context == NULL ? -1 :
					      (struct fi_context *)c.e.op_context - actx);

				FDT_ASSERT(i >= 0 && i < NSYNC, "ack context");
				FDT_ASSERT(c.e.tag == ((base | (uint64_t)i) ^ TOP), "ack tag %#llx",
					   (unsigned long long)c.e.tag);
				FDT_ASSERT(c.e.len == 0, "ack length");
				acked++;
			} else {
				sends++;
			}
		}
		while (bsends < NSYNC) {
			rdmt_wait_ok(B.cq, &c);
			FDT_ASSERT(c.e.flags & FI_SEND, "B: a send completion");
			bsends++;
		}
	}
}

static void duplicate_av_entry(void)
{
	static uint8_t s1[100], s2[100], r[100];
	struct fi_context sc1, sc2, rc;
	struct rdmt_comp c;

	/* A2's message first: a receive directed at A's second fi_addr_t
	 * must not take it */
	fdt_fill(s1, sizeof(s1), 71);
	fdt_fill(s2, sizeof(s2), 72);
	RDMT_POST(fi_trecv(B.ep, r, sizeof(r), NULL, b_to_a_again, 0x9000000000000042ULL, 0, &rc));
	RDMT_POST(fi_tsend(A2.ep, s2, sizeof(s2), NULL, a2_to_b, 0x9000000000000042ULL, &sc2));
	rdmt_wait_ok(A2.cq, &c);
	rdmt_quiet(B.cq, 100, "a receive directed at A took A2's message");
	RDMT_POST(fi_tsend(A.ep, s1, sizeof(s1), NULL, a_to_b, 0x9000000000000042ULL, &sc1));
	rdmt_wait_ok(A.cq, &c);
	rdmt_wait_ok(B.cq, &c);
	rdmt_check_recv(&c, &rc, FI_TAGGED | FI_RECV, sizeof(s1), 0x9000000000000042ULL);
	FDT_ASSERT(c.src == b_to_a || c.src == b_to_a_again, "source %llu, want A (%llu or %llu)",
		   (unsigned long long)c.src, (unsigned long long)b_to_a,
		   (unsigned long long)b_to_a_again);
	FDT_ASSERT(fdt_check(r, sizeof(r), 71), "duplicate entry: wrong bytes");
	/* A2's message waits: directed at A2 it comes */
	RDMT_POST(fi_trecv(B.ep, r, sizeof(r), NULL, b_to_a2, 0x9000000000000042ULL, 0, &rc));
	rdmt_wait_ok(B.cq, &c);
	FDT_ASSERT(fdt_check(r, sizeof(r), 72), "A2's message: wrong bytes");
	/* unexpected first, then the receive through the second entry */
	RDMT_POST(fi_tsend(A.ep, s1, sizeof(s1), NULL, a_to_b, 7, &sc1));
	rdmt_wait_ok(A.cq, &c);
	memset(r, 0, sizeof(r));
	RDMT_POST(fi_trecv(B.ep, r, sizeof(r), NULL, b_to_a_again, 7, 0, &rc));
	rdmt_wait_ok(B.cq, &c);
	rdmt_check_recv(&c, &rc, FI_TAGGED | FI_RECV, sizeof(s1), 7);
	FDT_ASSERT(fdt_check(r, sizeof(r), 71), "duplicate entry, unexpected: wrong bytes");
	/* and sends through the second entry reach A over the same peer */
	RDMT_POST(fi_trecv(A.ep, r, sizeof(r), NULL, a_to_b, 8, 0, &rc));
	RDMT_POST(fi_tsend(B.ep, s2, sizeof(s2), NULL, b_to_a_again, 8, &sc2));
	rdmt_wait_ok(B.cq, &c);
	rdmt_wait_ok(A.cq, &c);
	rdmt_check_recv(&c, &rc, FI_TAGGED | FI_RECV, sizeof(s2), 8);
	FDT_ASSERT(fdt_check(r, sizeof(r), 72), "send through the second entry: wrong bytes");
}

int main(void)
{
	struct fi_info *hints = rdmt_hints(FI_TAGGED | FI_DIRECTED_RECV | FI_SOURCE);

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	rdmt_ep_open(&dom, &A, NULL, FI_AV_TABLE);
	rdmt_ep_open(&dom, &A2, NULL, FI_AV_TABLE);
	rdmt_ep_open(&dom, &B, NULL, FI_AV_TABLE);
	a_to_b = rdmt_insert(&A, &B);
	a2_to_b = rdmt_insert(&A2, &B);
	b_to_a = rdmt_insert(&B, &A);
	b_to_a2 = rdmt_insert(&B, &A2);

	exact_tags();
	printf("rdm_tagbits: exact tags ok\n");
	fflush(stdout);
	near_misses();
	printf("rdm_tagbits: near misses ok\n");
	fflush(stdout);
	ignore_masks();
	printf("rdm_tagbits: ignore masks ok\n");
	fflush(stdout);
	acks_from_completions();
	printf("rdm_tagbits: acks from completions ok\n");
	fflush(stdout);

	/* A again, after the connection to it is up */
	b_to_a_again = rdmt_insert(&B, &A);
	duplicate_av_entry();
	printf("rdm_tagbits: duplicate av entry ok\n");
	fflush(stdout);

	rdmt_ep_close(&B);
	rdmt_ep_close(&A2);
	rdmt_ep_close(&A);
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_tagbits");
}
