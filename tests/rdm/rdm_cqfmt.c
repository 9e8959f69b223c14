/* Completions in every CQ format, more of them ready than one read takes:
 * a read hands out at most `count` entries, each in the CQ's own format
 * (its own stride: nothing written past the entries it returns), in the
 * order the messages arrived, and the rest come with the next reads.
 * (The layer writes what a read's progress completes straight into the
 * reader's buffer while it has room and queues only the rest, issue 23:
 * this checks both halves, the direct entries and the queued ones.)
 *
 * A sends NMSG tagged messages to B, whose receives are all posted; B's
 * CQ (opened here in the format under test, outside the harness, which
 * reads every CQ it knows as FI_CQ_FORMAT_TAGGED) is read two entries at
 * a time into a buffer whose other slots hold a pattern that must
 * survive. Then fi_cq_readfrom reports the sender for each. */
#include "rdmt.h"

#define NMSG	5
#define MSGLEN	48
#define PER	2	/* entries per read */
#define SLOTS	8	/* entries the buffer has room for */

static struct rdmt_dom dom;

static size_t entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	default:
		return sizeof(struct fi_cq_tagged_entry);
	}
}

/* The fields of entry i of buf in format f that the format has. */
static void check_entry(enum fi_cq_format f, const uint8_t *buf, size_t i, void *ctx,
			uint64_t tag)
{
	const void *p = buf + i * entry_size(f);
	const struct fi_cq_entry *c = p;

	FDT_ASSERT(c->op_context == ctx, "format %d, entry %zu: context %p, expected %p",
		   (int)f, i, c->op_context, ctx);
	if (f == FI_CQ_FORMAT_CONTEXT)
		return;
	{
		const struct fi_cq_msg_entry *m = p;

		FDT_ASSERT((m->flags & (FI_TAGGED | FI_RECV)) == (FI_TAGGED | FI_RECV),
			   "format %d: flags %#llx", (int)f, (unsigned long long)m->flags);
		FDT_ASSERT(m->len == MSGLEN, "format %d: len %zu", (int)f, m->len);
	}
	if (f == FI_CQ_FORMAT_MSG)
		return;
	{
		const struct fi_cq_data_entry *d = p;

		FDT_ASSERT(d->buf == NULL, "format %d: buf %p", (int)f, d->buf);
		FDT_ASSERT(!(d->flags & FI_REMOTE_CQ_DATA), "format %d: remote CQ data", (int)f);
	}
	if (f == FI_CQ_FORMAT_DATA)
		return;
	FDT_ASSERT(((const struct fi_cq_tagged_entry *)p)->tag == tag,
		   "format %d: tag %#llx, expected %#llx", (int)f,
		   (unsigned long long)((const struct fi_cq_tagged_entry *)p)->tag,
		   (unsigned long long)tag);
}

static void one_format(enum fi_cq_format f, int from)
{
	struct fi_cq_attr attr = { .format = f, .wait_obj = FI_WAIT_NONE };
	struct rdmt_cq bcq = { 0 };
	struct rdmt_ep A, B;
	struct fi_context rctx[NMSG], sctx[NMSG];
	static uint8_t sbuf[NMSG][MSGLEN], rbuf[NMSG][MSGLEN];
	uint8_t buf[SLOTS * sizeof(struct fi_cq_tagged_entry)];
	fi_addr_t src[SLOTS], a2b, b2a;
	size_t got = 0, esz = entry_size(f);
	long end;
	int i;

	FDT_OK(fi_cq_open(dom.domain, &attr, &bcq.cq, NULL));
	rdmt_ep_open(&dom, &A, NULL, 0);
	rdmt_ep_open(&dom, &B, &bcq, 0);
	a2b = rdmt_insert(&A, &B);
	b2a = rdmt_insert(&B, &A);
	/* One message first, B's CQ read until it is there: the connection
	 * is made (B's side progresses only when its CQ is read). */
	{
		struct fi_context wctx;
		struct rdmt_comp c;
		ssize_t n;

		RDMT_POST(fi_trecv(B.ep, rbuf[0], MSGLEN, NULL, FI_ADDR_UNSPEC, 0x4ff, 0, &wctx));
		RDMT_POST(fi_tsend(A.ep, sbuf[0], MSGLEN, NULL, a2b, 0x4ff, &sctx[0]));
		end = rdmt_now_ms() + RDMT_WAIT_MS;
		while ((n = fi_cq_read(bcq.cq, buf, 1)) == -FI_EAGAIN) {
			FDT_ASSERT(rdmt_now_ms() < end, "format %d: first message", (int)f);
			rdmt_progress();
		}
		FDT_ASSERT(n == 1, "format %d: first read = %zd", (int)f, n);
		check_entry(f, buf, 0, &wctx, 0x4ff);
		rdmt_wait_ok(A.cq, &c);
	}
	for (i = 0; i < NMSG; i++) {
		fdt_fill(sbuf[i], MSGLEN, (uint32_t)(100 + i));
		memset(rbuf[i], 0, MSGLEN);
		RDMT_POST(fi_trecv(B.ep, rbuf[i], MSGLEN, NULL, FI_ADDR_UNSPEC,
				   0x500 + (uint64_t)i, 0, &rctx[i]));
	}
	for (i = 0; i < NMSG; i++)
		RDMT_POST(fi_tsend(A.ep, sbuf[i], MSGLEN, NULL, a2b, 0x500 + (uint64_t)i,
				   &sctx[i]));
	/* Every message is in B's verbs CQ once A's sends completed (the
	 * device acknowledged them), so B's first read finds more than it
	 * takes: its progress completes all of them at once. */
	for (i = 0; i < NMSG; i++) {
		struct rdmt_comp c;

		rdmt_wait_ok(A.cq, &c);
	}
	end = rdmt_now_ms() + RDMT_WAIT_MS;
	while (got < NMSG) {
		ssize_t n;

		memset(buf, 0xa5, sizeof(buf));
		for (i = 0; i < SLOTS; i++)
			src[i] = (fi_addr_t)0x5a5a;
		n = from ? fi_cq_readfrom(bcq.cq, buf, PER, src) : fi_cq_read(bcq.cq, buf, PER);
		if (n == -FI_EAGAIN) {
			FDT_ASSERT(rdmt_now_ms() < end, "format %d: %zu of %d completions",
				   (int)f, got, NMSG);
			rdmt_progress();
			continue;
		}
		FDT_ASSERT(n > 0 && n <= PER, "format %d: fi_cq_read(%d) = %zd (%s)", (int)f,
			   PER, n, fi_strerror((int)-n));
		FDT_ASSERT(got + (size_t)n <= NMSG, "format %d: %zu completions", (int)f,
			   got + (size_t)n);
		for (i = 0; i < n; i++) {
			check_entry(f, buf, (size_t)i, &rctx[got + (size_t)i],
				    0x500 + got + (uint64_t)i);
			if (from)
				FDT_ASSERT(src[i] == b2a, "format %d: source %#llx, expected %#llx",
					   (int)f, (unsigned long long)src[i],
					   (unsigned long long)b2a);
		}
		/* nothing written past the n entries, nor src past n */
		for (size_t k = (size_t)n * esz; k < sizeof(buf); k++)
			FDT_ASSERT(buf[k] == 0xa5, "format %d: byte %zu past %zd entries written",
				   (int)f, k, n);
		for (i = (int)n; i < SLOTS; i++)
			FDT_ASSERT(src[i] == (fi_addr_t)0x5a5a, "format %d: src[%d] written",
				   (int)f, i);
		got += (size_t)n;
	}
	for (i = 0; i < NMSG; i++)
		FDT_ASSERT(fdt_check(rbuf[i], MSGLEN, (uint32_t)(100 + i)),
			   "format %d: payload %d", (int)f, i);
	FDT_EXPECT(fi_cq_read(bcq.cq, buf, PER), -FI_EAGAIN);
	rdmt_ep_close(&B);
	rdmt_ep_close(&A);
	FDT_OK(fi_close(&bcq.cq->fid));
}

int main(void)
{
	static const enum fi_cq_format fmts[] = {
		FI_CQ_FORMAT_CONTEXT, FI_CQ_FORMAT_MSG, FI_CQ_FORMAT_DATA, FI_CQ_FORMAT_TAGGED,
	};

	struct fi_info *hints = rdmt_hints(FI_TAGGED | FI_MSG | FI_SOURCE);

	rdmt_dom_open(&dom, hints);
	fi_freeinfo(hints);
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		one_format(fmts[i], 0);
		one_format(fmts[i], 1);
	}
	rdmt_dom_close(&dom);
	return rdmt_pass("rdm_cqfmt");
}
