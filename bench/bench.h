/* Shared parts of the ping-pong benchmarks.
 *
 * The measurement loops (bench_driver.c) are written once and call a small
 * backend interface (the bk_* functions below).  Two backends implement it:
 * fd_pingpong.c over the public libfabric API (built three ways: this
 * project's direct build, its ops-table build, and Debian's libfabric), and
 * rawverbs_pingpong.c straight over rdma-core, the floor.  Because every
 * variant runs the very same loop and reaches its data path through the same
 * out-of-line bk_* entry points, a difference between variants can only come
 * from what sits under those entry points.
 *
 * This header includes neither libfabric nor verbs headers: the upstream
 * variant must compile against Debian's headers alone.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench_util.h"	/* bu_die, bu_log, ... */

#if defined(__GNUC__) || defined(__clang__)
#define BM_NOINLINE __attribute__((noinline))
#define BM_UNUSED __attribute__((unused))
#else
#define BM_NOINLINE
#define BM_UNUSED
#endif

/* ------------------------------------------------------------------------
 * Instruction counting.  Under `valgrind --tool=callgrind
 * --collect-atstart=no`, collection is switched on right before a data-path
 * call and off right after it, so the collected cost is the call itself
 * with everything under it (libfabric, libibverbs, the rxe user driver,
 * libc's write wrapper), and nothing of the benchmark's own bookkeeping.
 * Outside valgrind the client request is a few no-op instructions; with
 * --callgrind off it is not even reached.
 * ---------------------------------------------------------------------- */
#ifdef BENCH_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#define BM_CG_TOGGLE() CALLGRIND_TOGGLE_COLLECT
#define BM_CG_ZERO() CALLGRIND_ZERO_STATS
#define BM_CG_DUMP(tag) CALLGRIND_DUMP_STATS_AT(tag)
#else
#define BM_CG_TOGGLE() ((void)0)
#define BM_CG_ZERO() ((void)0)
#define BM_CG_DUMP(tag) ((void)(tag))
#endif

extern int bm_cg;	/* --callgrind given and collection armed */

/* Wrap one data-path call: BM_CG_BEGIN(); rc = call; BM_CG_END(); */
#define BM_CG_BEGIN()				\
	int bm_cg_on_ = bm_cg;			\
	if (bm_cg_on_)				\
		BM_CG_TOGGLE()
#define BM_CG_END()				\
	do {					\
		if (bm_cg_on_)			\
			BM_CG_TOGGLE();		\
	} while (0)

/* ------------------------------------------------------------------------
 * Tests
 * ---------------------------------------------------------------------- */
enum bm_test {
	BM_SEND,	/* fi_send / IBV_WR_SEND, both sides reap a completion */
	BM_INJECT,	/* fi_inject / unsignaled inline send, sizes <= inject */
	BM_WRITE,	/* RMA write, the target polls the last byte (ib_write_lat) */
	BM_WRITEDATA,	/* RMA write with immediate: a receive completion */
	BM_READ,	/* RMA read, target passive, full round trip */
	BM_ATOMIC,	/* 64-bit fetch-add, target passive, full round trip */
	BM_RSTREAM,	/* FI_EP_SOCK_STREAM: a separate program, fd_rstream */
	/* Bandwidth and message rate: a window of operations in flight. */
	BM_SEND_BW,	/* fi_send stream, the target reaps and reposts receives */
	BM_WRITE_BW,	/* RMA write stream, target passive */
	BM_READ_BW,	/* RMA read stream, target passive */
	BM_NTESTS,
	BM_CTRL = BM_NTESTS	/* zero-length send used as a barrier */
};

extern const char *const bm_test_names[BM_NTESTS];

/* Ping-pong tests time a round trip and report half of it (one-way, as
 * ib_send_lat / ib_write_lat do); read and atomic have no return leg and
 * report the whole round trip (as ib_read_lat / ib_atomic_lat do). */
static inline int bm_test_bw(enum bm_test t)
{
	return t == BM_SEND_BW || t == BM_WRITE_BW || t == BM_READ_BW;
}

static inline int bm_test_oneway(enum bm_test t)
{
	return t != BM_READ && t != BM_ATOMIC && !bm_test_bw(t);
}

/* What the client tells the server at connect time (CM private data):
 * the server then runs the same sequence of tests and sizes. All fields
 * little endian on the wire; both ends of a benchmark are x86 or alike. */
#define BM_WIRE_MAGIC 0x46444250u	/* "FDBP" */
struct bm_config {
	uint32_t magic;
	uint32_t tests;		/* bit mask of enum bm_test */
	uint64_t size_mask;	/* bit k: run 2^k bytes */
	uint64_t odd_size;	/* one size that is no power of two, or 0 */
	uint32_t iters;
	uint32_t warmup;
	uint32_t flags;		/* BM_F_* */
	uint32_t window;	/* bandwidth tests: operations in flight */
};
#define BM_F_CALLGRIND 1u	/* both sides arm the client requests */
/* send_bw with --batch N: bits 8..15 of flags hold N (0 or 1: one request
 * per call, no batching). */
#define BM_F_BATCH_SHIFT 8
#define BM_MAX_BATCH 64u
static inline uint32_t bm_batch(const struct bm_config *cfg)
{
	return (cfg->flags >> BM_F_BATCH_SHIFT) & 0xffu;
}
#define BM_MAX_SIZE ((uint64_t)4 << 20)
/* The largest window: below the send and receive queue depths (384) with
 * room for the barrier and the receive the ping-pong tests keep posted. */
#define BM_MAX_WINDOW 256u

/* Sizes of a config in increasing order: start with s = 0. Returns 0 after
 * the last one. */
uint64_t bm_next_size(const struct bm_config *cfg, uint64_t s);
uint64_t bm_max_size(const struct bm_config *cfg);
/* 0 if a config that came off the wire makes sense. */
int bm_config_check(const struct bm_config *cfg);

/* ------------------------------------------------------------------------
 * Options
 * ---------------------------------------------------------------------- */
struct bm_opts {
	const char *dst;	/* client: server address; NULL: server */
	const char *bind;	/* server/local: address to listen on */
	const char *port;
	int local;		/* run both sides, forked */
	int cpu_server, cpu_client;	/* -1: no pinning */
	struct bm_config cfg;
	const char *csv, *json;
	const char *variant;	/* label in every output line */
	int quiet;
	int progress;
	/* raw verbs only: the QP shape; the libfabric variants take theirs
	 * from fi_getinfo */
	uint32_t sq_size, rq_size, sge, max_inline;
};

void bm_usage(const char *prog, const char *extra);
/* Parses argv; exits on error. `extra` handles backend options (returns 1
 * if it consumed optarg, 0 if the option is unknown). */
void bm_parse(int argc, char **argv, struct bm_opts *o, const char *default_variant);

/* ------------------------------------------------------------------------
 * Backend interface
 * ---------------------------------------------------------------------- */
struct bk;

/* Set-up (not measured). bk_listen binds and listens, storing the port it
 * got in *port; bk_accept waits for one client and returns its config. */
struct bk *bk_listen(const struct bm_opts *o, char *port, size_t portlen);
int bk_accept(struct bk *b, struct bm_config *cfg);
struct bk *bk_connect(const struct bm_opts *o, const struct bm_config *cfg);
void bk_close(struct bk *b);

/* One line describing what the backend runs on (provider, device, QP
 * shape), for the output header. */
const char *bk_describe(struct bk *b);
size_t bk_inject_size(struct bk *b);

/* Buffers of bm_max_size(cfg) bytes: rx is the receive and RMA-write target,
 * tx the send source and RMA-read target. */
volatile uint8_t *bk_rx(struct bk *b);
uint8_t *bk_tx(struct bk *b);

/* Data path: each is out of line and wraps exactly one library call in
 * BM_CG_BEGIN/END.  bk_post returns 0, or -EAGAIN when the queue is full
 * (the driver then polls the send CQ and retries); any other failure exits.
 * With a window of operations in flight, seq % BM_MAX_WINDOW tells them
 * apart (a backend needing one context per operation indexes with it);
 * bk_post_recv may be called until BM_MAX_WINDOW + 2 receives are posted. */
int bk_post(struct bk *b, enum bm_test t, size_t len, uint32_t seq);
int bk_post_recv(struct bk *b);
/* send_bw --batch: n sends (seq .. seq+n-1) handed to the device with one
 * doorbell: FI_MORE on all but the last (libfabric), one chained
 * ibv_post_send (raw verbs, perftest's --post_list). Returns how many
 * were accepted (0 for a full queue). */
int bk_post_batch(struct bk *b, size_t len, uint32_t seq, uint32_t n);
/* One poll of the send (tx=1) or receive CQ: 1 when a completion was
 * reaped, 0 when the queue was empty. */
int bk_poll(struct bk *b, int tx);
/* Same call, on a CQ of the same kind that nothing is bound to: calibrates
 * the cost of an empty poll separately, because how often the loops find a
 * queue empty depends on timing. (Probing the real queues would race with
 * the peer's next message.) */
int bk_poll_empty(struct bk *b, int tx);
/* A BM_CG_BEGIN/END pair around nothing: the cost of the brackets. */
void bk_nop(void);
/* Test-specific readiness: 0 if the backend can run this test. */
int bk_supports(struct bk *b, enum bm_test t, const char **why);

/* ------------------------------------------------------------------------
 * Driver and output (bench_driver.c)
 * ---------------------------------------------------------------------- */
int bm_main(int argc, char **argv, const char *default_variant);

#endif /* BENCH_H */
