/* RMA write and read on a connected MSG endpoint, every byte checked.
 *
 * The server exposes two regions in its accept data: T, a target the
 * client writes and reads back (FI_REMOTE_READ | FI_REMOTE_WRITE), and P,
 * a read-only region holding a known pattern (FI_REMOTE_READ). For sizes
 * from 1 B to 4 MiB, at unaligned local and remote offsets, the client
 *   - writes a pattern with fi_write, fi_writev or fi_writemsg (the vector
 *     forms gather from pieces scattered in local memory),
 *   - reads it back with fi_read, fi_readv or fi_readmsg into other
 *     offsets (the vector forms scatter into pieces with gaps), checking
 *     the bytes and that nothing around them was touched,
 *   - asks the server, over send/recv, to check the bytes in T itself and
 *     that the bytes just outside the written range are untouched;
 * then reads slices of P and compares them with the pattern it expects.
 * Zero-length writes and reads complete and change nothing. */
#include "fdt.h"

#define MIB (1024 * 1024)
#define T_SIZE (4 * MIB + 512)
#define P_SIZE (4 * MIB)
#define P_SEED 4242u
#define LOCAL_SIZE (4 * MIB + 1024)
#define BACKGROUND 0xEE	/* the server's T outside the range being tested */
#define LOCAL_BG 0x11	/* the client's read buffer before every read */
#define GAP 16		/* bytes between the pieces of a vector transfer */

enum { CTL_CHECK = 1, CTL_DONE = 2 };

struct ctl {
	uint64_t op, seed, roff, len;
};

struct ack {
	uint64_t ok;
	uint64_t where;	/* first bad offset in T when !ok */
};

struct server_state {
	uint8_t *t, *p;
	struct fid_mr *tmr, *pmr, *ctl_mr;
	struct ctl ctl;
	struct ack ack;
	uint8_t reply[2 * FDT_REGION_WIRE];
};

struct client_state {
	uint8_t *src, *dst, *pat, *expect_p;
	struct fid_mr *src_mr, *dst_mr, *ctl_mr;
	struct fdt_region t, p;
	struct ctl ctl;
	struct ack ack;
	size_t iov_limit;
	struct fi_context wctx, rctx, sctx, actx;
};

/* ---- server ---- */

static void server_pre(struct fdt_side *s, void *arg)
{
	struct server_state *st = arg;

	st->t = malloc(T_SIZE);
	st->p = malloc(P_SIZE);
	FDT_ASSERT(st->t && st->p, "malloc");
	memset(st->t, BACKGROUND, T_SIZE);
	fdt_fill(st->p, P_SIZE, P_SEED);
	st->tmr = fdt_reg(s, st->t, T_SIZE, FI_REMOTE_READ | FI_REMOTE_WRITE);
	st->pmr = fdt_reg(s, st->p, P_SIZE, FI_REMOTE_READ);
	/* ctl and ack sit next to each other: one registration for both */
	st->ctl_mr = fdt_reg(s, &st->ctl, sizeof(st->ctl) + sizeof(st->ack),
			     FI_SEND | FI_RECV);
	FDT_ASSERT((uint8_t *)&st->ack == (uint8_t *)&st->ctl + sizeof(st->ctl),
		   "struct layout");
	fdt_region_pack(st->reply, st->t, T_SIZE, st->tmr);
	fdt_region_pack(st->reply + FDT_REGION_WIRE, st->p, P_SIZE, st->pmr);
	FDT_OK(fi_recv(s->ep, &st->ctl, sizeof(st->ctl), fi_mr_desc(st->ctl_mr), 0,
		       &st->ctl));
}

/* Check T[roff, roff+len) against the pattern and one byte either side
 * against the background, then restore the background. */
static struct ack server_check(struct server_state *st, const struct ctl *c)
{
	struct ack a = { 1, 0 };
	uint8_t *pat;

	if (c->roff + c->len + 1 > T_SIZE) {
		a.ok = 0;
		a.where = UINT64_MAX;
		return a;
	}
	pat = malloc(c->len ? c->len : 1);
	FDT_ASSERT(pat, "malloc");
	fdt_fill(pat, c->len, (uint32_t)c->seed);
	for (uint64_t i = 0; i < c->len; i++) {
		if (st->t[c->roff + i] != pat[i]) {
			a.ok = 0;
			a.where = c->roff + i;
			break;
		}
	}
	if (a.ok && c->roff > 0 && st->t[c->roff - 1] != BACKGROUND) {
		a.ok = 0;
		a.where = c->roff - 1;
	}
	if (a.ok && st->t[c->roff + c->len] != BACKGROUND) {
		a.ok = 0;
		a.where = c->roff + c->len;
	}
	free(pat);
	memset(st->t + c->roff, BACKGROUND, c->len);
	return a;
}

static int server(struct fdt_side *s, void *arg)
{
	struct server_state st;
	struct fdt_cm_data reply = { st.reply, sizeof(st.reply) };
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	int checks = 0;

	(void)arg;
	memset(&st, 0, sizeof(st));
	fdt_server_accept(s, NULL, &reply, server_pre, &st);
	for (;;) {
		struct ctl c;

		if (fdt_wait_cq_ms(s->rxcq, &e, &err, 60000) != 1)
			FDT_FAIL("server recv error %d (%s)", err.err, fi_strerror(err.err));
		FDT_ASSERT(e.len == sizeof(c), "ctl length %zu", e.len);
		c = st.ctl;
		FDT_OK(fi_recv(s->ep, &st.ctl, sizeof(st.ctl), fi_mr_desc(st.ctl_mr), 0,
			       &st.ctl));
		if (c.op == CTL_DONE)
			break;
		FDT_ASSERT(c.op == CTL_CHECK, "ctl op %llu", (unsigned long long)c.op);
		st.ack = server_check(&st, &c);
		checks++;
		FDT_OK(fi_send(s->ep, &st.ack, sizeof(st.ack), fi_mr_desc(st.ctl_mr), 0,
			       &st.ack));
		FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1, "ack send completion");
	}
	/* P was registered read-only: it must still hold its pattern. */
	FDT_ASSERT(fdt_check(st.p, P_SIZE, P_SEED), "read-only region P was modified");
	fdt_wait_shutdown(s);
	FDT_OK(fi_close(&st.tmr->fid));
	FDT_OK(fi_close(&st.pmr->fid));
	FDT_OK(fi_close(&st.ctl_mr->fid));
	fdt_close_side(s);
	free(st.t);
	free(st.p);
	printf("server: %d placements checked in T, P intact\n", checks);
	return 0;
}

/* ---- client ---- */

enum form { F_PLAIN, F_VEC, F_MSG, F_FORMS };
static const char *const form_name[] = { "plain", "v", "msg" };

/* Split [0, len) into n pieces of uneven size; piece k is placed at
 * base + start + k * GAP in the scattered local layout. */
static size_t split(size_t len, size_t n, size_t *piece_len)
{
	size_t done = 0;

	for (size_t k = 0; k < n; k++) {
		size_t want = k + 1 == n ? len - done : len / (2 * (n - k)) + (k & 1);

		if (want > len - done)
			want = len - done;
		piece_len[k] = want;
		done += want;
	}
	return n;
}

static void build_iov(uint8_t *base, size_t len, size_t n, struct iovec *iov,
		      void **desc, void *d)
{
	size_t piece[4], pos = 0;

	split(len, n, piece);
	for (size_t k = 0; k < n; k++) {
		iov[k].iov_base = base + pos + k * GAP;
		iov[k].iov_len = piece[k];
		desc[k] = d;
		pos += piece[k];
	}
}

static void wait_tx(struct fdt_side *s, void *ctx, uint64_t flags, const char *what,
		    size_t len)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;

	if (fdt_wait_cq_ms(s->txcq, &e, &err, 30000) != 1)
		FDT_FAIL("%s of %zu bytes: error %d (%s), prov_errno %d (%s)", what, len,
			 err.err, fi_strerror(err.err), err.prov_errno,
			 fi_cq_strerror(s->txcq, err.prov_errno, err.err_data, NULL, 0));
	FDT_ASSERT(e.op_context == ctx, "%s: context %p, expected %p", what,
		   e.op_context, ctx);
	FDT_ASSERT(e.flags == flags, "%s: flags 0x%llx, expected 0x%llx", what,
		   (unsigned long long)e.flags, (unsigned long long)flags);
}

static void do_write(struct fdt_side *s, struct client_state *c, int form,
		     size_t loff, uint64_t raddr, size_t len, uint32_t seed)
{
	struct iovec iov[4];
	void *desc[4];
	size_t n = c->iov_limit < 3 ? c->iov_limit : 3;
	struct fi_rma_iov rma = { raddr, len, c->t.key };
	struct fi_msg_rma msg;

	fdt_fill(c->pat, len, seed);
	memset(c->src, 0x5A, LOCAL_SIZE < loff + len + 4 * GAP ? LOCAL_SIZE : loff + len + 4 * GAP);
	if (form == F_PLAIN) {
		memcpy(c->src + loff, c->pat, len);
		FDT_OK(fi_write(s->ep, c->src + loff, len, fi_mr_desc(c->src_mr), 0,
				raddr, c->t.key, &c->wctx));
	} else {
		build_iov(c->src + loff, len, n, iov, desc, fi_mr_desc(c->src_mr));
		for (size_t k = 0, pos = 0; k < n; pos += iov[k].iov_len, k++)
			memcpy(iov[k].iov_base, c->pat + pos, iov[k].iov_len);
		if (form == F_VEC) {
			FDT_OK(fi_writev(s->ep, iov, desc, n, 0, raddr, c->t.key, &c->wctx));
		} else {
			memset(&msg, 0, sizeof(msg));
			msg.msg_iov = iov;
			msg.desc = desc;
			msg.iov_count = n;
			msg.rma_iov = &rma;
			msg.rma_iov_count = 1;
			msg.context = &c->wctx;
			FDT_OK(fi_writemsg(s->ep, &msg, FI_COMPLETION));
		}
	}
	wait_tx(s, &c->wctx, FI_RMA | FI_WRITE, form == F_PLAIN ? "fi_write" :
		form == F_VEC ? "fi_writev" : "fi_writemsg", len);
}

/* Read len bytes at raddr (with key) into dst at loff, then compare them
 * with expect and check every byte of dst around them is untouched. */
static void do_read(struct fdt_side *s, struct client_state *c, int form,
		    size_t loff, uint64_t raddr, uint64_t key, size_t len,
		    const uint8_t *expect, const char *what)
{
	struct iovec iov[4];
	void *desc[4];
	size_t n = c->iov_limit < 3 ? c->iov_limit : 3;
	size_t span = loff + len + 4 * GAP + 1;
	struct fi_rma_iov rma = { raddr, len, key };
	struct fi_msg_rma msg;

	if (span > LOCAL_SIZE)
		span = LOCAL_SIZE;
	memset(c->dst, LOCAL_BG, span);
	if (form == F_PLAIN) {
		n = 1;
		iov[0].iov_base = c->dst + loff;
		iov[0].iov_len = len;
		FDT_OK(fi_read(s->ep, c->dst + loff, len, fi_mr_desc(c->dst_mr), 0,
			       raddr, key, &c->rctx));
	} else {
		build_iov(c->dst + loff, len, n, iov, desc, fi_mr_desc(c->dst_mr));
		if (form == F_VEC) {
			FDT_OK(fi_readv(s->ep, iov, desc, n, 0, raddr, key, &c->rctx));
		} else {
			memset(&msg, 0, sizeof(msg));
			msg.msg_iov = iov;
			msg.desc = desc;
			msg.iov_count = n;
			msg.rma_iov = &rma;
			msg.rma_iov_count = 1;
			msg.context = &c->rctx;
			FDT_OK(fi_readmsg(s->ep, &msg, FI_COMPLETION));
		}
	}
	wait_tx(s, &c->rctx, FI_RMA | FI_READ, what, len);
	/* the pieces hold the expected bytes, in order ... */
	for (size_t k = 0, pos = 0; k < n; pos += iov[k].iov_len, k++) {
		if (memcmp(iov[k].iov_base, expect + pos, iov[k].iov_len)) {
			size_t i = 0;

			while (((uint8_t *)iov[k].iov_base)[i] == expect[pos + i])
				i++;
			FDT_FAIL("%s (%s, %zu bytes, loff %zu): byte %zu differs",
				 what, form_name[form], len, loff, pos + i);
		}
	}
	/* ... and nothing else in dst changed */
	for (size_t i = 0, k = 0; i < span; i++) {
		uint8_t *p = c->dst + i;

		while (k < n && p >= (uint8_t *)iov[k].iov_base + iov[k].iov_len)
			k++;
		if (k < n && p >= (uint8_t *)iov[k].iov_base)
			continue;
		FDT_ASSERT(*p == LOCAL_BG, "%s (%s, %zu bytes): local byte %zu outside "
			   "the iov changed", what, form_name[form], len, i);
	}
}

static void server_verify(struct fdt_side *s, struct client_state *c, size_t roff,
			  size_t len, uint32_t seed)
{
	struct fi_cq_data_entry e;

	c->ctl.op = CTL_CHECK;
	c->ctl.seed = seed;
	c->ctl.roff = roff;
	c->ctl.len = len;
	FDT_OK(fi_recv(s->ep, &c->ack, sizeof(c->ack), fi_mr_desc(c->ctl_mr), 0, &c->actx));
	FDT_OK(fi_send(s->ep, &c->ctl, sizeof(c->ctl), fi_mr_desc(c->ctl_mr), 0, &c->sctx));
	wait_tx(s, &c->sctx, FI_MSG | FI_SEND, "ctl send", sizeof(c->ctl));
	FDT_ASSERT(fdt_wait_cq_ms(s->rxcq, &e, NULL, 60000) == 1, "ack recv");
	FDT_ASSERT(c->ack.ok, "server: T wrong at offset %llu after writing %zu bytes "
		   "at remote offset %zu", (unsigned long long)c->ack.where, len, roff);
}

static const size_t sizes[] = {
	1, 2, 3, 7, 8, 9, 63, 64, 65, 255, 256, 257, 1000, 4095, 4096, 4097,
	65535, 65536 + 13, MIB - 1, MIB, 4 * MIB - 200, 4 * MIB,
};

/* local write offset, remote offset, local read offset */
static const size_t offsets[][3] = {
	{ 0, 0, 0 }, { 1, 3, 5 }, { 7, 61, 2 }, { 63, 1, 33 }, { 4, 4, 4 },
	{ 13, 200, 7 }, { 0, 5, 1 },
};
#define N_OFFSETS (sizeof(offsets) / sizeof(offsets[0]))

static int client(struct fdt_side *s, void *arg)
{
	struct client_state c;
	uint8_t reply[2 * FDT_REGION_WIRE];
	size_t got;
	int cases = 0, preads = 0;

	(void)arg;
	memset(&c, 0, sizeof(c));
	got = fdt_client_connect_reply(s, NULL, reply, sizeof(reply), NULL, NULL);
	FDT_ASSERT(got == sizeof(reply), "accept data %zu bytes", got);
	fdt_region_unpack(&c.t, reply);
	fdt_region_unpack(&c.p, reply + FDT_REGION_WIRE);
	FDT_ASSERT(c.t.len == T_SIZE && c.p.len == P_SIZE, "region lengths");
	c.iov_limit = s->info->tx_attr->iov_limit;
	FDT_ASSERT(c.iov_limit >= 1, "iov_limit 0");
	FDT_ASSERT(s->info->tx_attr->rma_iov_limit >= 1, "rma_iov_limit 0");

	c.src = malloc(LOCAL_SIZE);
	c.dst = malloc(LOCAL_SIZE);
	c.pat = malloc(LOCAL_SIZE);
	c.expect_p = malloc(P_SIZE);
	FDT_ASSERT(c.src && c.dst && c.pat && c.expect_p, "malloc");
	fdt_fill(c.expect_p, P_SIZE, P_SEED);
	c.src_mr = fdt_reg(s, c.src, LOCAL_SIZE, FI_WRITE);
	c.dst_mr = fdt_reg(s, c.dst, LOCAL_SIZE, FI_READ);
	c.ctl_mr = fdt_reg(s, &c.ctl, sizeof(c.ctl) + sizeof(c.ack), FI_SEND | FI_RECV);
	FDT_ASSERT((uint8_t *)&c.ack == (uint8_t *)&c.ctl + sizeof(c.ctl), "struct layout");

	/* write, read back, server check; every size with every form */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int f = 0; f < F_FORMS; f++) {
			const size_t *o = offsets[(i * F_FORMS + (size_t)f) % N_OFFSETS];
			size_t len = sizes[i];
			uint32_t seed = (uint32_t)(1000 + i * 8 + (size_t)f);
			int rform = (f + 1) % F_FORMS;
			char what[64];

			if (o[1] + len + 1 > T_SIZE)
				o = offsets[0];
			do_write(s, &c, f, o[0], c.t.addr + o[1], len, seed);
			snprintf(what, sizeof(what), "read back after fi_write%s",
				 f == F_PLAIN ? "" : form_name[f]);
			do_read(s, &c, rform, o[2], c.t.addr + o[1], c.t.key, len,
				c.pat, what);
			server_verify(s, &c, o[1], len, seed);
			cases++;
		}
	}

	/* slices of the read-only pattern region */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len = sizes[i];
		size_t roff = (i * 977) % (P_SIZE - len + 1);

		for (int f = 0; f < F_FORMS; f++) {
			do_read(s, &c, f, (size_t)f * 3 + 1, c.p.addr + roff, c.p.key,
				len, c.expect_p + roff, "read of P");
			preads++;
		}
	}

	/* zero-length transfers complete and move nothing */
	FDT_OK(fi_write(s->ep, c.src, 0, fi_mr_desc(c.src_mr), 0, c.t.addr + 8,
			c.t.key, &c.wctx));
	wait_tx(s, &c.wctx, FI_RMA | FI_WRITE, "zero-length write", 0);
	server_verify(s, &c, 8, 0, 0);
	memset(c.dst, LOCAL_BG, 64);
	FDT_OK(fi_read(s->ep, c.dst + 8, 0, fi_mr_desc(c.dst_mr), 0, c.p.addr,
		       c.p.key, &c.rctx));
	wait_tx(s, &c.rctx, FI_RMA | FI_READ, "zero-length read", 0);
	for (int i = 0; i < 64; i++)
		FDT_ASSERT(c.dst[i] == LOCAL_BG, "zero-length read wrote byte %d", i);

	/* nothing else completed on the way */
	fdt_cq_expect_quiet(s->txcq, 50, "client tx CQ at the end");

	c.ctl.op = CTL_DONE;
	FDT_OK(fi_send(s->ep, &c.ctl, sizeof(c.ctl), fi_mr_desc(c.ctl_mr), 0, &c.sctx));
	wait_tx(s, &c.sctx, FI_MSG | FI_SEND, "done send", sizeof(c.ctl));
	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_OK(fi_close(&c.src_mr->fid));
	FDT_OK(fi_close(&c.dst_mr->fid));
	FDT_OK(fi_close(&c.ctl_mr->fid));
	fdt_close_side(s);
	free(c.src);
	free(c.dst);
	free(c.pat);
	free(c.expect_p);
	printf("client: %d write/read-back cases, %d reads of P ok\n", cases, preads);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	hints->caps |= FI_RMA;
	rc = fdt_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	return rc;
}
