/* FI_THREAD_SAFE stress: many threads on one endpoint and one CQ.
 *
 * The client (forked child) shares one endpoint, one transmit CQ and one
 * receive CQ between all its threads:
 *   - N_POSTERS threads each post N_ITER sends, RMA writes and fetching
 *     atomics (FI_SUM on one server counter), every request with its own
 *     context, source buffer and result slot, up to WINDOW outstanding,
 *     more in all than the send queue holds (retried on -FI_EAGAIN);
 *   - N_TX_POLLERS threads read the transmit CQ at the same time;
 *   - N_RX_POSTERS threads post receives for the server's messages while
 *     N_RX_POLLERS threads read the receive CQ.
 * Every completion must arrive exactly once, with its own context and the
 * flags of its operation; every received message must be whole and each
 * sequence number seen once; the fetched counter values must chain (each
 * old value is the previous plus its operand), so no add was lost or
 * applied twice.
 * The server (a single-threaded peer) checks every byte of every message
 * and of every written slot, each (thread, index) once, and the counter's
 * exact final value; meanwhile it streams N_ECHO messages to the client.
 *
 * Built only with FDV_THREAD_SAFE (tests/cmake/sanitize.cmake); meant to
 * run under ThreadSanitizer too, so the test's own shared state is
 * C11 atomics. */
#define _POSIX_C_SOURCE 200809L
#include "fdt.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include <rdma/fi_atomic.h>

#define N_POSTERS 4
#define N_TX_POLLERS 2
#define N_RX_POSTERS 2
#define N_RX_POLLERS 2
#define N_ITER 300		/* per poster thread and operation */
#define WINDOW 32		/* outstanding requests per poster thread */
/* Well below N_POSTERS * WINDOW even where the driver rounds it up (rxe
 * makes 32 into 63 entries): the send queue fills, and posters meet
 * -FI_EAGAIN while the pollers reap completions that make room. */
#define TX_SIZE 32
#define MSG_LEN 384		/* sends: above the inline size, so not inline */
#define SLOT_LEN 200		/* RMA writes: inline */
#define N_ECHO 400		/* server -> client messages */
#define ECHO_LEN 160
#define RX_WINDOW 48		/* posted receives per rx poster thread */
#define SRV_RX_POSTED 192	/* server's posted receives */
#define INITIAL 0x7FFFFFF0ull
#define TIME_LIMIT_S 120

#define N_TX (N_POSTERS * N_ITER)	/* per operation */
#define DONE_TAG 0xD0D0D0D0u

enum op { OP_SEND, OP_WRITE, OP_ATOMIC, N_OPS };

static uint64_t operand(unsigned t, unsigned i)
{
	return 1 + (uint64_t)((i * 11 + t * 5) % 17);
}

/* A message or slot is a 8-byte header (tag, index) then a pattern seeded
 * by both, so a byte from any other message shows. */
static uint32_t seed_of(uint32_t tag, uint32_t idx)
{
	return tag * 100003u + idx;
}

static void fill_msg(uint8_t *p, size_t len, uint32_t tag, uint32_t idx)
{
	memcpy(p, &tag, 4);
	memcpy(p + 4, &idx, 4);
	fdt_fill(p + 8, len - 8, seed_of(tag, idx));
}

static int check_msg(const uint8_t *p, size_t len, uint32_t *tag, uint32_t *idx)
{
	memcpy(tag, p, 4);
	memcpy(idx, p + 4, 4);
	return fdt_check(p + 8, len - 8, seed_of(*tag, *idx));
}

static int elapsed_s(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int)(t.tv_sec - t0->tv_sec);
}

/* ------------------------------------------------------------ server */

struct server_state {
	uint8_t *region;	/* N_TX RMA slots */
	struct fid_mr *region_mr;
	uint64_t *counter;
	struct fid_mr *counter_mr;
	uint8_t *rx;		/* SRV_RX_POSTED receive buffers */
	struct fid_mr *rx_mr;
	uint8_t *tx;		/* N_ECHO messages */
	struct fid_mr *tx_mr;
	struct fi_context rctx[SRV_RX_POSTED];
	struct fi_context tctx[N_ECHO];
	uint8_t reply[2 * FDT_REGION_WIRE];
};

static void server_pre(struct fdt_side *s, void *arg)
{
	struct server_state *st = arg;

	st->region = calloc(N_TX, SLOT_LEN);
	FDT_ASSERT(st->region, "calloc");
	FDT_ASSERT(!posix_memalign((void **)&st->counter, 64, 64), "alloc");
	*st->counter = INITIAL;
	st->rx = malloc((size_t)SRV_RX_POSTED * MSG_LEN);
	st->tx = malloc((size_t)N_ECHO * ECHO_LEN);
	FDT_ASSERT(st->rx && st->tx, "malloc");
	for (uint32_t e = 0; e < N_ECHO; e++)
		fill_msg(st->tx + (size_t)e * ECHO_LEN, ECHO_LEN, 0xEC, e);
	st->region_mr = fdt_reg(s, st->region, (size_t)N_TX * SLOT_LEN, FI_REMOTE_WRITE);
	st->counter_mr = fdt_reg(s, st->counter, sizeof(uint64_t),
				 FI_REMOTE_READ | FI_REMOTE_WRITE);
	st->rx_mr = fdt_reg(s, st->rx, (size_t)SRV_RX_POSTED * MSG_LEN, FI_RECV);
	st->tx_mr = fdt_reg(s, st->tx, (size_t)N_ECHO * ECHO_LEN, FI_SEND);
	fdt_region_pack(st->reply, st->region, (size_t)N_TX * SLOT_LEN, st->region_mr);
	fdt_region_pack(st->reply + FDT_REGION_WIRE, st->counter, sizeof(uint64_t),
			st->counter_mr);
	for (int k = 0; k < SRV_RX_POSTED; k++)
		FDT_OK(fi_recv(s->ep, st->rx + (size_t)k * MSG_LEN, MSG_LEN,
			       fi_mr_desc(st->rx_mr), 0, &st->rctx[k]));
}

static int server(struct fdt_side *s, void *arg)
{
	struct server_state st;
	struct fdt_cm_data reply = { st.reply, sizeof(st.reply) };
	static uint8_t seen[N_POSTERS][N_ITER];
	uint64_t expect = INITIAL;
	unsigned got = 0, sent = 0, sent_done = 0;
	int done = 0;
	struct timespec t0;

	(void)arg;
	memset(&st, 0, sizeof(st));
	fdt_server_accept(s, NULL, &reply, server_pre, &st);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Receive every message (the client's DONE comes last, after all its
	 * operations completed) while streaming the echo messages. */
	while (!done || sent_done < N_ECHO) {
		struct fi_cq_data_entry e[8];
		ssize_t n;

		FDT_ASSERT(elapsed_s(&t0) < TIME_LIMIT_S, "server: %u of %d messages, "
			   "%u of %d echoes after %d s", got, N_TX, sent_done, N_ECHO,
			   TIME_LIMIT_S);
		while (sent < N_ECHO && sent - sent_done < 64) {
			ssize_t rc = fi_send(s->ep, st.tx + (size_t)sent * ECHO_LEN, ECHO_LEN,
					     fi_mr_desc(st.tx_mr), 0, &st.tctx[sent]);
			if (rc == -FI_EAGAIN)
				break;
			FDT_OK(rc);
			sent++;
		}
		n = fi_cq_read(s->txcq, e, 8);
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			fi_cq_readerr(s->txcq, &err, 0);
			FDT_FAIL("server send error %d (%s)", err.err, fi_strerror(err.err));
		}
		FDT_ASSERT(n > 0 || n == -FI_EAGAIN, "server tx cq: %zd", n);
		for (ssize_t k = 0; k < n; k++) {
			struct fi_context *c = e[k].op_context;

			FDT_ASSERT(c == &st.tctx[sent_done], "echo %u completed out of order",
				   sent_done);
			sent_done++;
		}
		n = fi_cq_read(s->rxcq, e, 8);
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			fi_cq_readerr(s->rxcq, &err, 0);
			FDT_FAIL("server receive error %d (%s)", err.err, fi_strerror(err.err));
		}
		FDT_ASSERT(n > 0 || n == -FI_EAGAIN, "server rx cq: %zd", n);
		for (ssize_t k = 0; k < n; k++) {
			struct fi_context *c = e[k].op_context;
			ptrdiff_t slot = c - st.rctx;
			uint8_t *buf;
			uint32_t tag, idx;

			FDT_ASSERT(slot >= 0 && slot < SRV_RX_POSTED, "bad receive context");
			FDT_ASSERT(!done, "a message after DONE");
			buf = st.rx + (size_t)slot * MSG_LEN;
			if (e[k].len == 8) {
				memcpy(&tag, buf, 4);
				FDT_ASSERT(tag == DONE_TAG, "short message tag 0x%x", tag);
				done = 1;
				continue;
			}
			FDT_ASSERT(e[k].len == MSG_LEN, "message length %zu", e[k].len);
			FDT_ASSERT(check_msg(buf, MSG_LEN, &tag, &idx),
				   "message (%u, %u) corrupt", tag, idx);
			FDT_ASSERT(tag < N_POSTERS && idx < N_ITER, "message (%u, %u)", tag, idx);
			FDT_ASSERT(!seen[tag][idx], "message (%u, %u) twice", tag, idx);
			seen[tag][idx] = 1;
			got++;
			FDT_OK(fi_recv(s->ep, buf, MSG_LEN, fi_mr_desc(st.rx_mr), 0, c));
		}
	}
	FDT_ASSERT(got == N_TX, "%u messages before DONE, expected %d", got, N_TX);
	/* The client sent DONE after every write and atomic completed. */
	for (uint32_t t = 0; t < N_POSTERS; t++)
		for (uint32_t i = 0; i < N_ITER; i++) {
			const uint8_t *p = st.region + (size_t)(t * N_ITER + i) * SLOT_LEN;
			uint32_t tag, idx;

			FDT_ASSERT(check_msg(p, SLOT_LEN, &tag, &idx) && tag == 0x100 + t &&
				   idx == i, "RMA slot (%u, %u) wrong: holds (%u, %u)", t, i,
				   tag, idx);
			expect += operand(t, i);
		}
	FDT_ASSERT(*(volatile uint64_t *)st.counter == expect,
		   "counter 0x%llx, expected 0x%llx",
		   (unsigned long long)*(volatile uint64_t *)st.counter,
		   (unsigned long long)expect);
	printf("server: %d messages, %d slots, counter 0x%llx, %d echoes: all correct\n",
	       N_TX, N_TX, (unsigned long long)expect, N_ECHO);
	fdt_wait_shutdown(s);
	FDT_OK(fi_close(&s->ep->fid));
	s->ep = NULL;
	FDT_OK(fi_close(&st.region_mr->fid));
	FDT_OK(fi_close(&st.counter_mr->fid));
	FDT_OK(fi_close(&st.rx_mr->fid));
	FDT_OK(fi_close(&st.tx_mr->fid));
	fdt_close_side(s);
	free(st.region);
	free(st.counter);
	free(st.rx);
	free(st.tx);
	return 0;
}

/* ------------------------------------------------------------ client */

struct op_ctx {
	struct fi_context fctx;	/* first: FI_CONTEXT mode */
	uint32_t op, t, i;
};

struct client_state {
	struct fdt_side *s;
	struct fdt_region region, counter;
	uint8_t *msgs, *slots;	/* N_TX each */
	uint64_t *adds, *olds;	/* N_TX each */
	uint8_t *echo;		/* receive buffers, one per echo */
	struct fid_mr *msgs_mr, *slots_mr, *adds_mr, *olds_mr, *echo_mr;
	struct op_ctx tx[N_OPS][N_POSTERS][N_ITER];
	struct op_ctx rx[N_ECHO];
	atomic_uchar tx_seen[N_OPS][N_POSTERS][N_ITER];
	atomic_uchar rx_seen[N_ECHO];	/* by receive context */
	atomic_uchar echo_seen[N_ECHO];	/* by the message's sequence number */
	atomic_uint tx_done[N_POSTERS];	/* completions per poster thread */
	atomic_uint tx_total, rx_total;
	atomic_uint rx_done[N_RX_POSTERS];
	atomic_ulong eagain;
	struct timespec t0;
};

static void post_retry(struct client_state *c, ssize_t (*post)(struct client_state *,
		       struct op_ctx *), struct op_ctx *x)
{
	for (;;) {
		ssize_t rc = post(c, x);

		if (rc == 0)
			return;
		if (rc != -FI_EAGAIN)
			FDT_FAIL("post op %u (%u, %u): %s", x->op, x->t, x->i,
				 fi_strerror((int)-rc));
		atomic_fetch_add(&c->eagain, 1);
		FDT_ASSERT(elapsed_s(&c->t0) < TIME_LIMIT_S, "queue full for too long");
		sched_yield();
	}
}

static ssize_t post_tx(struct client_state *c, struct op_ctx *x)
{
	size_t k = (size_t)x->t * N_ITER + x->i;

	switch (x->op) {
	case OP_SEND:
		return fi_send(c->s->ep, c->msgs + k * MSG_LEN, MSG_LEN,
			       fi_mr_desc(c->msgs_mr), 0, &x->fctx);
	case OP_WRITE:
		return fi_write(c->s->ep, c->slots + k * SLOT_LEN, SLOT_LEN,
				fi_mr_desc(c->slots_mr), 0,
				c->region.addr + k * SLOT_LEN, c->region.key, &x->fctx);
	default:
		return fi_fetch_atomic(c->s->ep, &c->adds[k], 1, fi_mr_desc(c->adds_mr),
				       &c->olds[k], fi_mr_desc(c->olds_mr), 0,
				       c->counter.addr, c->counter.key, FI_UINT64, FI_SUM,
				       &x->fctx);
	}
}

static ssize_t post_rx(struct client_state *c, struct op_ctx *x)
{
	return fi_recv(c->s->ep, c->echo + (size_t)x->i * ECHO_LEN, ECHO_LEN,
		       fi_mr_desc(c->echo_mr), 0, &x->fctx);
}

struct thread_arg {
	struct client_state *c;
	unsigned id;
};

static void *tx_poster(void *p)
{
	struct thread_arg *a = p;
	struct client_state *c = a->c;
	unsigned t = a->id, posted = 0;

	/* interleave the three kinds so they share the queue */
	for (unsigned i = 0; i < N_ITER; i++)
		for (unsigned op = 0; op < N_OPS; op++) {
			while (posted - atomic_load(&c->tx_done[t]) >= WINDOW) {
				FDT_ASSERT(elapsed_s(&c->t0) < TIME_LIMIT_S,
					   "poster %u: %u posted, %u completed", t, posted,
					   atomic_load(&c->tx_done[t]));
				sched_yield();
			}
			post_retry(c, post_tx, &c->tx[op][t][i]);
			posted++;
		}
	return NULL;
}

static const uint64_t op_flags[N_OPS] = {
	FI_MSG | FI_SEND, FI_RMA | FI_WRITE, FI_ATOMIC | FI_READ,
};

static void *tx_poller(void *p)
{
	struct client_state *c = ((struct thread_arg *)p)->c;
	const struct op_ctx *lo = &c->tx[0][0][0], *hi = lo + N_OPS * N_TX;

	while (atomic_load(&c->tx_total) < N_OPS * N_TX) {
		struct fi_cq_data_entry e[4];
		ssize_t n = fi_cq_read(c->s->txcq, e, 4);

		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			fi_cq_readerr(c->s->txcq, &err, 0);
			FDT_FAIL("transmit error %d (%s)", err.err, fi_strerror(err.err));
		}
		if (n == -FI_EAGAIN) {
			FDT_ASSERT(elapsed_s(&c->t0) < TIME_LIMIT_S, "tx: %u of %d completions",
				   atomic_load(&c->tx_total), N_OPS * N_TX);
			sched_yield();
			continue;
		}
		FDT_ASSERT(n > 0, "fi_cq_read(tx) = %zd", n);
		for (ssize_t k = 0; k < n; k++) {
			const struct op_ctx *x = e[k].op_context;

			FDT_ASSERT(x >= lo && x < hi && (size_t)((const char *)x -
				   (const char *)lo) % sizeof(*x) == 0, "foreign context %p",
				   e[k].op_context);
			FDT_ASSERT(e[k].flags == op_flags[x->op], "op %u flags 0x%llx", x->op,
				   (unsigned long long)e[k].flags);
			FDT_ASSERT(!atomic_exchange(&c->tx_seen[x->op][x->t][x->i], 1),
				   "op %u (%u, %u) completed twice", x->op, x->t, x->i);
			atomic_fetch_add(&c->tx_done[x->t], 1);
			atomic_fetch_add(&c->tx_total, 1);
		}
	}
	return NULL;
}

static void *rx_poster(void *p)
{
	struct thread_arg *a = p;
	struct client_state *c = a->c;
	unsigned posted = 0;

	for (unsigned j = a->id; j < N_ECHO; j += N_RX_POSTERS) {
		while (posted - atomic_load(&c->rx_done[a->id]) >= RX_WINDOW) {
			FDT_ASSERT(elapsed_s(&c->t0) < TIME_LIMIT_S, "rx poster stuck");
			sched_yield();
		}
		post_retry(c, post_rx, &c->rx[j]);
		posted++;
	}
	return NULL;
}

static void *rx_poller(void *p)
{
	struct client_state *c = ((struct thread_arg *)p)->c;

	while (atomic_load(&c->rx_total) < N_ECHO) {
		struct fi_cq_data_entry e[4];
		ssize_t n = fi_cq_read(c->s->rxcq, e, 4);

		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			fi_cq_readerr(c->s->rxcq, &err, 0);
			FDT_FAIL("receive error %d (%s)", err.err, fi_strerror(err.err));
		}
		if (n == -FI_EAGAIN) {
			FDT_ASSERT(elapsed_s(&c->t0) < TIME_LIMIT_S, "rx: %u of %d messages",
				   atomic_load(&c->rx_total), N_ECHO);
			sched_yield();
			continue;
		}
		FDT_ASSERT(n > 0, "fi_cq_read(rx) = %zd", n);
		for (ssize_t k = 0; k < n; k++) {
			const struct op_ctx *x = e[k].op_context;
			uint32_t tag, idx;

			FDT_ASSERT(x >= c->rx && x < c->rx + N_ECHO, "foreign receive context");
			FDT_ASSERT(e[k].flags == (FI_MSG | FI_RECV) && e[k].len == ECHO_LEN,
				   "receive flags 0x%llx len %zu",
				   (unsigned long long)e[k].flags, e[k].len);
			FDT_ASSERT(!atomic_exchange(&c->rx_seen[x->i], 1),
				   "receive %u completed twice", x->i);
			FDT_ASSERT(check_msg(c->echo + (size_t)x->i * ECHO_LEN, ECHO_LEN,
					     &tag, &idx) && tag == 0xEC && idx < N_ECHO,
				   "echo in buffer %u corrupt", x->i);
			FDT_ASSERT(!atomic_exchange(&c->echo_seen[idx], 1), "echo %u twice", idx);
			atomic_fetch_add(&c->rx_done[x->i % N_RX_POSTERS], 1);
			atomic_fetch_add(&c->rx_total, 1);
		}
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void check_fetched(struct client_state *c)
{
	/* (old, operand) pairs, sorted by old value, must chain */
	struct { uint64_t old, add; } *pr = malloc(N_TX * sizeof(*pr));

	FDT_ASSERT(pr, "malloc");
	for (size_t k = 0; k < N_TX; k++) {
		pr[k].old = c->olds[k];
		pr[k].add = c->adds[k];
	}
	qsort(pr, N_TX, sizeof(*pr), cmp_u64);	/* old is the first member */
	FDT_ASSERT(pr[0].old == INITIAL, "lowest fetched 0x%llx",
		   (unsigned long long)pr[0].old);
	for (size_t k = 1; k < N_TX; k++)
		FDT_ASSERT(pr[k].old == pr[k - 1].old + pr[k - 1].add,
			   "fetched values do not chain at %zu", k);
	free(pr);
}

static int client(struct fdt_side *s, void *arg)
{
	struct client_state *c = calloc(1, sizeof(*c));
	uint8_t reply[2 * FDT_REGION_WIRE];
	pthread_t th[N_POSTERS + N_TX_POLLERS + N_RX_POSTERS + N_RX_POLLERS];
	struct thread_arg ta[N_POSTERS + N_TX_POLLERS + N_RX_POSTERS + N_RX_POLLERS];
	int nth = 0;
	uint32_t done_msg[2] = { DONE_TAG, 0 };
	struct fi_cq_data_entry e;
	struct fid_mr *done_mr;

	(void)arg;
	FDT_ASSERT(c, "calloc");
	c->s = s;
	FDT_ASSERT(fdt_client_connect_reply(s, NULL, reply, sizeof(reply), NULL, NULL) ==
		   sizeof(reply), "accept data length");
	fdt_region_unpack(&c->region, reply);
	fdt_region_unpack(&c->counter, reply + FDT_REGION_WIRE);
	FDT_ASSERT(s->info->domain_attr->threading == FI_THREAD_SAFE,
		   "the library is not FI_THREAD_SAFE");

	c->msgs = malloc((size_t)N_TX * MSG_LEN);
	c->slots = malloc((size_t)N_TX * SLOT_LEN);
	c->adds = malloc(N_TX * sizeof(uint64_t));
	c->olds = calloc(N_TX, sizeof(uint64_t));
	c->echo = calloc(N_ECHO, ECHO_LEN);
	FDT_ASSERT(c->msgs && c->slots && c->adds && c->olds && c->echo, "malloc");
	for (unsigned t = 0; t < N_POSTERS; t++)
		for (unsigned i = 0; i < N_ITER; i++) {
			size_t k = (size_t)t * N_ITER + i;

			fill_msg(c->msgs + k * MSG_LEN, MSG_LEN, t, i);
			fill_msg(c->slots + k * SLOT_LEN, SLOT_LEN, 0x100 + t, i);
			c->adds[k] = operand(t, i);
			for (unsigned op = 0; op < N_OPS; op++)
				c->tx[op][t][i] = (struct op_ctx){ .op = op, .t = t, .i = i };
		}
	for (unsigned j = 0; j < N_ECHO; j++)
		c->rx[j] = (struct op_ctx){ .i = j };
	c->msgs_mr = fdt_reg(s, c->msgs, (size_t)N_TX * MSG_LEN, FI_SEND);
	c->slots_mr = fdt_reg(s, c->slots, (size_t)N_TX * SLOT_LEN, FI_WRITE);
	c->adds_mr = fdt_reg(s, c->adds, N_TX * sizeof(uint64_t), FI_WRITE);
	c->olds_mr = fdt_reg(s, c->olds, N_TX * sizeof(uint64_t), FI_READ);
	c->echo_mr = fdt_reg(s, c->echo, (size_t)N_ECHO * ECHO_LEN, FI_RECV);

	clock_gettime(CLOCK_MONOTONIC, &c->t0);
	for (unsigned k = 0; k < N_RX_POLLERS; k++, nth++) {
		ta[nth] = (struct thread_arg){ c, k };
		FDT_ASSERT(!pthread_create(&th[nth], NULL, rx_poller, &ta[nth]), "thread");
	}
	for (unsigned k = 0; k < N_TX_POLLERS; k++, nth++) {
		ta[nth] = (struct thread_arg){ c, k };
		FDT_ASSERT(!pthread_create(&th[nth], NULL, tx_poller, &ta[nth]), "thread");
	}
	for (unsigned k = 0; k < N_RX_POSTERS; k++, nth++) {
		ta[nth] = (struct thread_arg){ c, k };
		FDT_ASSERT(!pthread_create(&th[nth], NULL, rx_poster, &ta[nth]), "thread");
	}
	for (unsigned k = 0; k < N_POSTERS; k++, nth++) {
		ta[nth] = (struct thread_arg){ c, k };
		FDT_ASSERT(!pthread_create(&th[nth], NULL, tx_poster, &ta[nth]), "thread");
	}
	for (int k = 0; k < nth; k++)
		FDT_ASSERT(!pthread_join(th[k], NULL), "join");

	/* all threads saw their work complete exactly once */
	for (unsigned op = 0; op < N_OPS; op++)
		for (unsigned t = 0; t < N_POSTERS; t++)
			for (unsigned i = 0; i < N_ITER; i++)
				FDT_ASSERT(atomic_load(&c->tx_seen[op][t][i]),
					   "op %u (%u, %u) never completed", op, t, i);
	for (unsigned j = 0; j < N_ECHO; j++)
		FDT_ASSERT(atomic_load(&c->rx_seen[j]) && atomic_load(&c->echo_seen[j]),
			   "echo %u missing", j);
	check_fetched(c);
	printf("client: %d threads, %d ops and %d receives in %d s, %lu EAGAIN retries\n",
	       nth, N_OPS * N_TX, N_ECHO, elapsed_s(&c->t0),
	       (unsigned long)atomic_load(&c->eagain));

	/* DONE follows every operation's completion: the server may check. */
	done_mr = fdt_reg(s, done_msg, sizeof(done_msg), FI_SEND);
	FDT_OK(fi_send(s->ep, done_msg, sizeof(done_msg), fi_mr_desc(done_mr), 0, done_msg));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1 && e.op_context == done_msg,
		   "DONE send");
	FDT_OK(fi_close(&s->ep->fid));
	s->ep = NULL;
	FDT_OK(fi_close(&done_mr->fid));
	FDT_OK(fi_close(&c->msgs_mr->fid));
	FDT_OK(fi_close(&c->slots_mr->fid));
	FDT_OK(fi_close(&c->adds_mr->fid));
	FDT_OK(fi_close(&c->olds_mr->fid));
	FDT_OK(fi_close(&c->echo_mr->fid));
	fdt_close_side(s);
	free(c->msgs);
	free(c->slots);
	free(c->adds);
	free(c->olds);
	free(c->echo);
	free(c);
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc;

	hints->caps = FI_MSG | FI_RMA | FI_ATOMIC;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->tx_attr->size = TX_SIZE;
	rc = fdt_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	return rc;
}
