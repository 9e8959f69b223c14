/* Flow and completion semantics:
 *  - FI_SELECTIVE_COMPLETION: fi_send without FI_COMPLETION leaves no entry,
 *    fi_sendmsg with it does, fi_inject never does; thousands of silent
 *    sends do not wedge the send queue (periodic signaled requests reclaim it);
 *  - a full send queue answers -FI_EAGAIN while the peer has posted no
 *    receive, and everything flows, in order, once it does;
 *  - the peer's fi_shutdown: FI_SHUTDOWN on the EQ, posted receives flushed
 *    with FI_ECANCELED, sends refused with -FI_ENOTCONN. */
#include <unistd.h>

#include "fdt.h"

#define SILENT_SENDS 3000
#define BURST 2000
#define MSG 32

struct state {
	uint8_t *buf;
	struct fid_mr *mr;
};

static uint32_t seq_of(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void recv_n(struct fdt_side *s, struct state *st, uint32_t first, int n,
		   int slots)
{
	struct fi_cq_data_entry e;
	int posted = 0, got = 0;

	/* keep `slots` receives posted; each slot is MSG bytes of st->buf */
	for (; posted < slots && posted < n; posted++)
		FDT_OK(fi_recv(s->ep, st->buf + (size_t)(posted % slots) * MSG, MSG,
			       fi_mr_desc(st->mr), 0, st->buf + (size_t)(posted % slots) * MSG));
	while (got < n) {
		struct fi_cq_err_entry err;
		uint8_t *p;

		if (fdt_wait_cq(s->rxcq, &e, &err) != 1)
			FDT_FAIL("recv error %d after %d messages", err.err, got);
		p = e.op_context;
		FDT_ASSERT(e.len == MSG, "len %zu", e.len);
		FDT_ASSERT(seq_of(p) == first + (uint32_t)got, "message %u out of order (expected %u)",
			   seq_of(p), first + (uint32_t)got);
		FDT_ASSERT(fdt_check(p + 4, MSG - 4, seq_of(p)), "payload of message %u", seq_of(p));
		got++;
		if (posted < n) {
			FDT_OK(fi_recv(s->ep, p, MSG, fi_mr_desc(st->mr), 0, p));
			posted++;
		}
	}
}

static void make_msg(uint8_t *p, uint32_t seq)
{
	memcpy(p, &seq, sizeof(seq));
	fdt_fill(p + 4, MSG - 4, seq);
}

static int server(struct fdt_side *s, void *arg)
{
	struct state st;
	uint8_t ev[sizeof(struct fi_eq_cm_entry) + 64];
	int slots = 256;

	(void)arg;
	fdt_server_accept(s, NULL, NULL, NULL, NULL);
	st.buf = calloc((size_t)slots, MSG);
	st.mr = fdt_reg(s, st.buf, (size_t)slots * MSG, FI_RECV | FI_SEND);
	/* 1: selective completion phase, 3 + SILENT_SENDS messages */
	recv_n(s, &st, 0, SILENT_SENDS + 3, slots);
	/* 2: let the client fill its send queue before posting anything */
	sleep(2);
	recv_n(s, &st, 100000, BURST, slots);
	/* 3: shutdown from us; our own EQ reports it too */
	FDT_OK(fi_shutdown(s->ep, 0));
	fdt_wait_event(s, FI_SHUTDOWN, ev, sizeof(ev));
	FDT_EXPECT(fi_send(s->ep, st.buf, MSG, fi_mr_desc(st.mr), 0, NULL), -FI_ENOTCONN);
	FDT_OK(fi_close(&st.mr->fid));
	free(st.buf);
	fdt_close_side(s);
	printf("server: selective, back-pressure and shutdown phases ok\n");
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	struct state st;
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	uint8_t ev[sizeof(struct fi_eq_cm_entry) + 64];
	uint8_t *msgs;
	uint32_t seq = 0;
	int eagain = 0, done, i;
	size_t tx_size = s->info->tx_attr->size;
	static char ctx_a, ctx_b;

	(void)arg;
	s->tx_bind_flags = FI_SELECTIVE_COMPLETION;
	fdt_client_connect(s, NULL, NULL, NULL, NULL);
	msgs = calloc(BURST, MSG);
	st.buf = calloc(64, MSG);
	st.mr = fdt_reg(s, st.buf, 64 * MSG, FI_RECV | FI_SEND);

	/* phase 1: sendmsg with FI_COMPLETION, plain sends, injects */
	{
		struct iovec iov = { st.buf, MSG };
		void *desc = fi_mr_desc(st.mr);
		struct fi_msg msg = { .msg_iov = &iov, .desc = &desc, .iov_count = 1, .context = &ctx_a };

		make_msg(st.buf, seq++);
		FDT_OK(fi_sendmsg(s->ep, &msg, FI_COMPLETION));
		FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1 && e.op_context == &ctx_a, "sendmsg completion");
		make_msg(st.buf, seq++);
		FDT_OK(fi_send(s->ep, st.buf, MSG, fi_mr_desc(st.mr), 0, &ctx_b));
		for (i = 0; i < SILENT_SENDS; i++) {
			ssize_t rc;

			make_msg(st.buf, seq);
			do {
				rc = i % 2 ? fi_inject(s->ep, st.buf, MSG, 0)
					   : fi_send(s->ep, st.buf, MSG, fi_mr_desc(st.mr), 0, &ctx_b);
				if (rc == -FI_EAGAIN)
					FDT_EXPECT(fi_cq_read(s->txcq, &e, 1), -FI_EAGAIN);
			} while (rc == -FI_EAGAIN);
			FDT_OK(rc);
			seq++;
		}
		/* the last one asks for its completion: nothing silent may show up */
		msg.context = &ctx_a;
		make_msg(st.buf, seq++);
		FDT_OK(fi_sendmsg(s->ep, &msg, FI_COMPLETION));
		FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1 && e.op_context == &ctx_a,
			   "only the requested completion arrives (got %p)", e.op_context);
		FDT_EXPECT(fi_cq_read(s->txcq, &e, 1), -FI_EAGAIN);
	}

	/* phase 2: the peer has no receive posted; the send queue fills */
	seq = 100000;
	for (i = 0, done = 0; done < BURST; ) {
		ssize_t rc;

		make_msg(msgs + (size_t)done * MSG, seq);
		rc = fi_inject(s->ep, msgs + (size_t)done * MSG, MSG, 0);
		if (rc == -FI_EAGAIN) {
			eagain++;
			FDT_ASSERT(done >= 1, "EAGAIN before anything was posted");
			/* drivers round the queue up (rxe: to a power of two) */
			if (eagain == 1)
				FDT_ASSERT((size_t)done <= 2 * tx_size,
					   "send queue took %d requests with tx_size %zu", done, tx_size);
			rc = fi_cq_read(s->txcq, &e, 1);
			FDT_ASSERT(rc == -FI_EAGAIN, "silent completions only, got %zd", rc);
			continue;
		}
		FDT_OK(rc);
		done++;
		seq++;
	}
	FDT_ASSERT(eagain > 0, "the send queue never filled");

	/* phase 3: the server shuts down; our posted receives are flushed */
	FDT_OK(fi_recv(s->ep, st.buf, MSG, fi_mr_desc(st.mr), 0, st.buf));
	fdt_wait_event(s, FI_SHUTDOWN, ev, sizeof(ev));
	FDT_ASSERT(fdt_wait_cq(s->rxcq, &e, &err) == -FI_EAVAIL, "flushed receive");
	FDT_ASSERT(err.err == FI_ECANCELED && err.op_context == st.buf, "flush: err %d", err.err);
	FDT_EXPECT(fi_send(s->ep, st.buf, MSG, fi_mr_desc(st.mr), 0, NULL), -FI_ENOTCONN);
	FDT_EXPECT(fi_inject(s->ep, st.buf, 8, 0), -FI_ENOTCONN);
	FDT_OK(fi_close(&st.mr->fid));
	free(st.buf);
	free(msgs);
	fdt_close_side(s);
	printf("client: %d EAGAINs while the peer was not receiving\n", eagain);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc = fdt_run_pair(hints, server, client, NULL);

	fi_freeinfo(hints);
	return rc;
}
