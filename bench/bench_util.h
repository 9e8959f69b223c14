/* Utilities every benchmark program shares: errors, the clock, CPU pinning,
 * number and size-list parsing, the --local fork-and-hand-over-the-port
 * launcher, per-iteration statistics and the CSV/JSON result rows.
 *
 * Like bench.h it includes no libfabric or verbs header, so the upstream
 * variants (compiled against Debian's headers only) link it too.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__GNUC__) || defined(__clang__)
#define BU_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define BU_NORETURN __attribute__((noreturn))
#else
#define BU_PRINTF(a, b)
#define BU_NORETURN
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Messages go to stderr prefixed by the role ("client", "server", ...). */
void bu_set_role(const char *role);
void bu_die(const char *fmt, ...) BU_PRINTF(1, 2) BU_NORETURN;
void bu_log(const char *fmt, ...) BU_PRINTF(1, 2);

uint64_t bu_now_ns(void);	/* CLOCK_MONOTONIC */
/* A "Key:  N kB" field of /proc/self/status (VmRSS, VmPin, ...), or -1. */
long bu_status_kb(const char *key);

/* Pins the calling process to one CPU; cpu < 0: leaves it alone. */
void bu_pin(int cpu);

/* A number with an optional k/m/g suffix (powers of two); exits on junk. */
uint64_t bu_parse_num(const char *s, const char *what);

/* "64", "MIN:MAX" (the powers of two in between), "all" (1 B..max) or a
 * comma list of those, into sizes[] in the order given; exits when a size
 * is 0 or above max, or more than cap sizes. Returns the count. */
size_t bu_parse_sizes(const char *arg, uint64_t max, uint64_t *sizes, size_t cap);

/* A poll loop that sees nothing for this long is a hang, not a slow link. */
#define BU_STALL_NS (30ull * 1000000000ull)

/* Hang detection for spin loops: call bu_stall_tick on every idle spin and
 * bu_stall_reset on progress. Looking at the clock is itself costly under
 * TCG, so only every 2^20th spin does. */
struct bu_stall {
	uint64_t spins, t0;
};

static inline void bu_stall_reset(struct bu_stall *st)
{
	st->spins = st->t0 = 0;
}

void bu_stall_slow(struct bu_stall *st, const char *what);

static inline void bu_stall_tick(struct bu_stall *st, const char *what)
{
	if ((++st->spins & 0xfffff) == 0)
		bu_stall_slow(st, what);
}

/* --local: forks before any verbs call (a child must not inherit device
 * contexts), runs server(arg, port_fd) in the child, which writes its port
 * to port_fd with bu_hand_port once it listens, then client(arg, port) in
 * the parent, so that the client's output comes last. Returns the client's
 * status, or 1 if the server failed. */
int bu_local(int (*server)(void *arg, int port_fd), int (*client)(void *arg, const char *port),
	     void *arg);
/* The server's half: hands the port over (port_fd >= 0) or, serving on its
 * own, prints where it listens unless quiet. */
void bu_hand_port(int port_fd, const char *port, const char *bind, int quiet);

/* ------------------------------------------------------------------------
 * Results: one row per test and size, in every program's CSV and JSON.
 * ---------------------------------------------------------------------- */
struct bu_result {
	const char *test;
	uint64_t size;
	uint32_t iters;
	int oneway;		/* t_* are half round trips */
	int has_t;		/* t_* were sampled (bandwidth rows have none) */
	uint32_t window;	/* bandwidth: ops in flight / transfers per iteration */
	double t_min, t_max, t_typical, t_avg, t_stdev, t_p99, t_p999; /* us */
	double usec_per_xfer, mb_per_s, mmsg_per_s;
	/* perf_event_open over the measured loop, per op; < 0: not available */
	double cycles_per_op, instr_per_op;
};

/* perftest style from n per-iteration round trips in ns (sorts them):
 * median t_typical, percentiles at ceil(p * n), halved when oneway. */
void bu_stats(struct bu_result *r, uint64_t *rtt, size_t n);
/* fabtests style: the whole loop over xfers transfers of r->size bytes. */
void bu_loop_stats(struct bu_result *r, double xfers, uint64_t total_ns);

FILE *bu_csv_open(const char *path);	/* writes the header; exits on error */
void bu_csv_row(FILE *f, const char *variant, uint32_t warmup, const struct bu_result *r);
void bu_json_str(FILE *f, const char *s);
/* One result as a JSON object (no trailing comma or newline). */
void bu_json_row(FILE *f, const struct bu_result *r);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_UTIL_H */
