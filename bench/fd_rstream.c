/* fd_rstream: latency and bandwidth of FI_EP_SOCK_STREAM endpoints, set
 * side by side with rdma-core's rsockets `rstream` tool.
 *
 * The exchange is the one rstream(1) runs, so the two print comparable
 * figures: each iteration the client writes C transfers of S bytes, the
 * server reads all of them and writes C transfers of S bytes back, which
 * the client reads. C = 1 is a ping-pong (latency); a large C streams
 * (bandwidth). A stream has no message boundaries: "a transfer" is S bytes,
 * however many fi_send / fi_recv calls they take (each returns a count).
 *
 * Built in both of this project's builds (direct and ops tables); Debian's
 * libfabric 1.17 ships no rstream provider, so there is no upstream variant.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "bench_util.h"

#ifdef BENCH_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#define RS_CG_TOGGLE() CALLGRIND_TOGGLE_COLLECT
#define RS_CG_ZERO() CALLGRIND_ZERO_STATS
#define RS_CG_DUMP(tag) CALLGRIND_DUMP_STATS_AT(tag)
#else
#define RS_CG_TOGGLE() ((void)0)
#define RS_CG_ZERO() ((void)0)
#define RS_CG_DUMP(tag) ((void)(tag))
#endif

#ifndef BENCH_VARIANT
#define BENCH_VARIANT "direct"
#endif

#define RS_MAGIC 0x46445253u	/* "FDRS" */
#define RS_MAX_SIZES 32
#define RS_MAX_SIZE ((uint64_t)4 << 20)
#define RS_T_LAT 1u
#define RS_T_BW 2u
#define RS_F_CALLGRIND 1u	/* both sides collect around the timed loops */

/* What the client tells the server, as the first bytes of the stream. */
struct rs_config {
	uint32_t magic;
	uint32_t tests;		/* RS_T_* */
	uint32_t nsizes;
	uint32_t iters, warmup;	/* latency */
	uint32_t bw_iters, bw_count;
	uint32_t flags;		/* RS_F_* */
	uint64_t sizes[RS_MAX_SIZES];
};

struct rs_opts {
	const char *dst, *bind, *port, *csv, *json, *variant;
	int local, quiet, cpu_server, cpu_client;
	size_t ring;		/* FI_OPT_SEND/RECV_BUF_SIZE, 0: default */
	struct rs_config cfg;
};

struct rs {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_domain *domain;
	struct fid_ep *ep;
	uint8_t *buf;
	char desc[200];
};

/* Calls the timed loop made: with the callgrind dump of the loop, the
 * divisors of its instruction count. */
struct rs_counts {
	uint64_t sends, send_again, recvs, recv_again;
};

static struct rs_counts rs_n;

/* Per-iteration round trips (t_* columns): two clock reads per iteration,
 * which rstream(1) does not make (it reads the clock before and after the
 * loop). Where clock_gettime is a system call (the TCG VM's HPET clock
 * source: ~2-3 us each) that is work only our side does; --no-rtt drops
 * them for an equal-work usec/xfer. */
static int rs_rtt = 1;

#define RS_CHECK(call)							\
	do {								\
		long rs_rc_ = (long)(call);				\
		if (rs_rc_ < 0)						\
			bu_die("%s: %s (%ld)", #call,			\
			       fi_strerror((int)-rs_rc_), rs_rc_);	\
	} while (0)

/* ------------------------------------------------------------------------
 * Moving bytes: spin on -FI_EAGAIN (the calls themselves drive progress),
 * as a latency benchmark must; a long silence is a hang.
 * ---------------------------------------------------------------------- */
/* Every data-path call goes through one of these two, out of line, so that
 * callgrind's per-function inclusive cost is the cost of one fi_send or
 * fi_recv, whatever the build inlines. */
__attribute__((noinline)) static ssize_t rs_send_call(struct fid_ep *ep, const void *p, size_t len)
{
	return fi_send(ep, p, len, NULL, 0, NULL);
}

__attribute__((noinline)) static ssize_t rs_recv_call(struct fid_ep *ep, void *p, size_t len)
{
	return fi_recv(ep, p, len, NULL, 0, NULL);
}

static void rs_send_all(struct rs *r, const void *p, size_t len)
{
	struct bu_stall st = { 0, 0 };
	size_t off = 0;

	while (off < len) {
		ssize_t n = rs_send_call(r->ep, (const uint8_t *)p + off, len - off);

		if (n > 0) {
			off += (size_t)n;
			rs_n.sends++;
			bu_stall_reset(&st);
		} else if (n == -FI_EAGAIN) {
			rs_n.send_again++;
			bu_stall_tick(&st, "fi_send");
		} else {
			bu_die("fi_send: %s", n ? fi_strerror((int)-n) : "returned 0");
		}
	}
}

static void rs_recv_all(struct rs *r, void *p, size_t len)
{
	struct bu_stall st = { 0, 0 };
	size_t off = 0;

	while (off < len) {
		ssize_t n = rs_recv_call(r->ep, (uint8_t *)p + off, len - off);

		if (n > 0) {
			off += (size_t)n;
			rs_n.recvs++;
			bu_stall_reset(&st);
		} else if (n == -FI_EAGAIN) {
			rs_n.recv_again++;
			bu_stall_tick(&st, "fi_recv");
		} else if (n == 0) {
			bu_die("the peer closed the stream");
		} else {
			bu_die("fi_recv: %s", fi_strerror((int)-n));
		}
	}
}

/* ------------------------------------------------------------------------
 * Set-up
 * ---------------------------------------------------------------------- */
static struct fi_info *rs_getinfo(const char *node, const char *service, uint64_t flags)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int rc;

	if (!hints)
		bu_die("fi_allocinfo");
	hints->ep_attr->type = FI_EP_SOCK_STREAM;
	hints->caps = FI_MSG;
	rc = fi_getinfo(FI_VERSION(1, 17), node, service, flags, hints, &info);
	fi_freeinfo(hints);
	if (rc)
		bu_die("fi_getinfo(%s, %s, FI_EP_SOCK_STREAM): %s", node ? node : "NULL",
		       service, fi_strerror(-rc));
	return info;
}

static void rs_wait_event(struct rs *r, uint32_t want, struct fi_eq_cm_entry *e)
{
	uint32_t ev;
	ssize_t rc = fi_eq_sread(r->eq, &ev, e, sizeof(*e), 60000, 0);

	if (rc == -FI_EAVAIL) {
		struct fi_eq_err_entry err = { 0 };

		fi_eq_readerr(r->eq, &err, 0);
		bu_die("connection event error: %s", fi_strerror(err.err));
	}
	if (rc < 0)
		bu_die("fi_eq_sread: %s", fi_strerror((int)-rc));
	if (ev != want)
		bu_die("expected connection event %u, got %u", want, ev);
}

static void rs_open_fabric(struct rs *r)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };

	RS_CHECK(fi_fabric(r->info->fabric_attr, &r->fabric, NULL));
	RS_CHECK(fi_eq_open(r->fabric, &ea, &r->eq, NULL));
}

static void rs_open_ep(struct rs *r, struct fi_info *info, size_t ring)
{
	RS_CHECK(fi_domain(r->fabric, info, &r->domain, NULL));
	RS_CHECK(fi_endpoint(r->domain, info, &r->ep, NULL));
	RS_CHECK(fi_ep_bind(r->ep, &r->eq->fid, 0));
	if (ring) {
		RS_CHECK(fi_setopt(&r->ep->fid, FI_OPT_ENDPOINT, FI_OPT_SEND_BUF_SIZE,
				   &ring, sizeof(ring)));
		RS_CHECK(fi_setopt(&r->ep->fid, FI_OPT_ENDPOINT, FI_OPT_RECV_BUF_SIZE,
				   &ring, sizeof(ring)));
	}
	RS_CHECK(fi_enable(r->ep));
	{
		size_t sb = 0, rb = 0, len = sizeof(size_t);

		fi_getopt(&r->ep->fid, FI_OPT_ENDPOINT, FI_OPT_SEND_BUF_SIZE, &sb, &len);
		len = sizeof(size_t);
		fi_getopt(&r->ep->fid, FI_OPT_ENDPOINT, FI_OPT_RECV_BUF_SIZE, &rb, &len);
		snprintf(r->desc, sizeof(r->desc),
			 "provider %s, fabric %s, domain %s, FI_EP_SOCK_STREAM, "
			 "send ring %zu B, receive ring %zu B", info->fabric_attr->prov_name,
			 info->fabric_attr->name, info->domain_attr->name, sb, rb);
	}
}

static void rs_close(struct rs *r)
{
	if (r->ep) {
		fi_shutdown(r->ep, 0);
		fi_close(&r->ep->fid);
	}
	if (r->pep)
		fi_close(&r->pep->fid);
	if (r->domain)
		fi_close(&r->domain->fid);
	if (r->eq)
		fi_close(&r->eq->fid);
	if (r->fabric)
		fi_close(&r->fabric->fid);
	fi_freeinfo(r->info);
	free(r->buf);
}

static uint64_t rs_max_size(const struct rs_config *c)
{
	uint64_t m = 0;

	for (uint32_t i = 0; i < c->nsizes; i++)
		if (c->sizes[i] > m)
			m = c->sizes[i];
	return m;
}

static void rs_alloc(struct rs *r, const struct rs_config *c)
{
	size_t len = (size_t)rs_max_size(c);

	r->buf = malloc(len ? len : 1);
	if (!r->buf)
		bu_die("cannot allocate %zu bytes", len);
	memset(r->buf, 0x5a, len);
}

/* ------------------------------------------------------------------------
 * Measurement
 * ---------------------------------------------------------------------- */
/* One iteration: count transfers of size bytes each way. */
static void rs_iter(struct rs *r, int client, size_t size, uint32_t count)
{
	for (int leg = 0; leg < 2; leg++) {
		int sending = (leg == 0) == (client != 0);

		for (uint32_t k = 0; k < count; k++) {
			if (sending)
				rs_send_all(r, r->buf, size);
			else
				rs_recv_all(r, r->buf, size);
		}
	}
}

/* The cost of an fi_recv that finds nothing, in a dump of its own: the
 * client has just read the last transfer of a loop and the server waits
 * for the client's next one, so nothing can arrive. */
#define RS_PROBES 100

static void rs_probe_empty(struct rs *r, const char *loop_tag)
{
	char tag[160];
	uint8_t scratch[64];

	RS_CG_TOGGLE();
	for (int i = 0; i < RS_PROBES; i++)
		if (rs_recv_call(r->ep, scratch, sizeof(scratch)) != -FI_EAGAIN)
			bu_die("a probe found data: the peer is not waiting");
	RS_CG_TOGGLE();
	snprintf(tag, sizeof(tag), "%s:probe", loop_tag);
	RS_CG_DUMP(tag);
	printf("#CG tag=%s probes=%d\n", tag, RS_PROBES);
}

static void rs_run(struct rs *r, int client, int cg, const char *test, size_t size,
		   uint32_t iters, uint32_t warmup, uint32_t count, struct bu_result *res)
{
	int sample = client && rs_rtt && count == 1;
	uint64_t *rtt = sample ? calloc(iters, sizeof(*rtt)) : NULL;
	uint64_t t_start = 0, t_end;

	if (sample && !rtt)
		bu_die("out of memory");
	for (uint32_t i = 0; i < warmup + iters; i++) {
		uint64_t t0;

		if (i == warmup) {
			memset(&rs_n, 0, sizeof(rs_n));
			if (cg) {
				RS_CG_ZERO();
				RS_CG_TOGGLE();
			}
			t_start = bu_now_ns();
		}
		t0 = sample ? bu_now_ns() : 0;
		rs_iter(r, client, size, count);
		if (sample && i >= warmup)
			rtt[i - warmup] = bu_now_ns() - t0;
	}
	t_end = bu_now_ns();
	if (cg) {
		char tag[128];

		RS_CG_TOGGLE();
		snprintf(tag, sizeof(tag), "fdrs:%s:%s:%s:%zu", BENCH_VARIANT,
			 client ? "client" : "server", test, size);
		RS_CG_DUMP(tag);
		if (client)
			rs_probe_empty(r, tag);
		/* Everything the timed loop did, spinning on -FI_EAGAIN
		 * included: transfers each way, productive and empty calls. */
		printf("#CG tag=%s iters=%u count=%u xfers=%llu sends=%" PRIu64
		       " send_again=%" PRIu64 " recvs=%" PRIu64 " recv_again=%" PRIu64 "\n",
		       tag, iters, count, 2ull * iters * count, rs_n.sends, rs_n.send_again,
		       rs_n.recvs, rs_n.recv_again);
		fflush(stdout);
	}
	if (!client)
		return;
	memset(res, 0, sizeof(*res));
	res->test = test;
	res->size = size;
	res->iters = iters;
	res->window = count;
	res->oneway = count == 1;
	res->cycles_per_op = res->instr_per_op = -1;
	bu_loop_stats(res, 2.0 * (double)iters * (double)count, t_end - t_start);
	/* Per-iteration round trips, halved: one-way, as for fd_pingpong. A
	 * bandwidth iteration moves C transfers: its round trip is no
	 * latency. */
	if (sample)
		bu_stats(res, rtt, iters);
	free(rtt);
}

/* ------------------------------------------------------------------------
 * Output: the same CSV columns as fd_pingpong, so one report reads both.
 * ---------------------------------------------------------------------- */
static FILE *rs_csv;
static struct bu_result rs_results[2 * RS_MAX_SIZES];
static size_t rs_nresults;

static void rs_output(const struct rs_opts *o, const struct bu_result *res)
{
	if (rs_nresults < sizeof(rs_results) / sizeof(rs_results[0]))
		rs_results[rs_nresults++] = *res;
	if (!o->quiet && res->has_t)
		printf("%-10s %8" PRIu64 " %6u %6u %9.2f %9.2f %9.2f %9.2f %9.2f %10.2f %8.4f\n",
		       res->test, res->size, res->iters, res->window, res->t_min,
		       res->t_typical, res->t_avg, res->t_p99, res->usec_per_xfer,
		       res->mb_per_s, res->mmsg_per_s);
	else if (!o->quiet)
		printf("%-10s %8" PRIu64 " %6u %6u %9s %9s %9s %9s %9.2f %10.2f %8.4f\n",
		       res->test, res->size, res->iters, res->window, "-", "-", "-", "-",
		       res->usec_per_xfer, res->mb_per_s, res->mmsg_per_s);
	bu_csv_row(rs_csv, o->variant, o->cfg.warmup, res);
}

static void rs_write_json(const struct rs_opts *o, const char *desc)
{
	FILE *f = fopen(o->json, "w");

	if (!f)
		bu_die("cannot write %s: %s", o->json, strerror(errno));
	fprintf(f, "{\n  \"variant\": ");
	bu_json_str(f, o->variant);
	fprintf(f, ",\n  \"describe\": ");
	bu_json_str(f, desc);
	fprintf(f, ",\n  \"method\": \"per iteration C transfers of S bytes each way (rstream(1)); "
		"t_*: per-iteration round trip / 2 (C = 1); usec_per_xfer = loop time / "
		"(2 x iters x C); mb_per_s counts both directions, 10^6 bytes; window = C\",\n"
		"  \"results\": [");
	for (size_t i = 0; i < rs_nresults; i++) {
		fprintf(f, "%s\n    ", i ? "," : "");
		bu_json_row(f, &rs_results[i]);
	}
	fprintf(f, "\n  ]\n}\n");
	fclose(f);
}

/* Calls of the timed loop per transfer (both directions count). */
static double rs_per_xfer(uint64_t calls, const struct bu_result *res)
{
	double xfers = 2.0 * (double)res->iters * (double)res->window;

	return xfers > 0 ? (double)calls / xfers : 0;
}

/* Both sides walk the same list; the client also records. */
static void rs_session(struct rs *r, const struct rs_opts *o, const struct rs_config *c,
		       int client)
{
	struct bu_result res;
	int cg = (c->flags & RS_F_CALLGRIND) != 0;

	if (client && !o->quiet) {
		printf("# fd_rstream variant=%s\n# %s\n", o->variant, r->desc);
		printf("# per iteration: C transfers of S bytes client->server, then C back\n"
		       "#   (rstream(1)'s exchange); latency: C = 1, %u iterations (+%u warm-up),\n"
		       "#   t_* = per-iteration round trip / 2; bandwidth: C = %u, %u iterations;\n"
		       "# usec/xfer = loop time / (2 x iters x C); MB/s (10^6) both directions\n",
		       c->iters, c->warmup, c->bw_count, c->bw_iters);
		printf("%-10s %8s %6s %6s %9s %9s %9s %9s %9s %10s %8s\n", "test", "bytes",
		       "iters", "C", "t_min", "t_typical", "t_avg", "p99", "usec/xfer", "MB/s",
		       "Mmsg/s");
	}
	for (int pass = 0; pass < 2; pass++) {
		uint32_t t = pass ? RS_T_BW : RS_T_LAT;

		if (!(c->tests & t))
			continue;
		for (uint32_t i = 0; i < c->nsizes; i++) {
			size_t s = (size_t)c->sizes[i];

			if (t == RS_T_LAT)
				rs_run(r, client, cg, "rstream", s, c->iters, c->warmup, 1, &res);
			else
				rs_run(r, client, cg, "rstream_bw", s, c->bw_iters, 1, c->bw_count, &res);
			if (client) {
				rs_output(o, &res);
				bu_log("%s %zu B: %.2f usec/xfer, %.2f MB/s; client calls per "
				       "transfer: send %.2f (+%.2f -FI_EAGAIN), recv %.2f "
				       "(+%.2f -FI_EAGAIN)", res.test, s,
				       res.usec_per_xfer, res.mb_per_s,
				       rs_per_xfer(rs_n.sends, &res), rs_per_xfer(rs_n.send_again, &res),
				       rs_per_xfer(rs_n.recvs, &res), rs_per_xfer(rs_n.recv_again, &res));
			}
		}
	}
	/* A last byte each way, so neither side closes before the other has
	 * read everything. */
	if (client) {
		rs_send_all(r, r->buf, 1);
		rs_recv_all(r, r->buf, 1);
	} else {
		rs_recv_all(r, r->buf, 1);
		rs_send_all(r, r->buf, 1);
	}
}

static int rs_server(const struct rs_opts *o, int port_fd)
{
	struct rs r = { 0 };
	struct fi_eq_cm_entry e;
	struct rs_config c;
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss);
	char port[16];

	bu_set_role("fd_rstream server");
	bu_pin(o->cpu_server);
	r.info = rs_getinfo(o->bind, o->port, FI_SOURCE);
	rs_open_fabric(&r);
	RS_CHECK(fi_passive_ep(r.fabric, r.info, &r.pep, NULL));
	RS_CHECK(fi_pep_bind(r.pep, &r.eq->fid, 0));
	RS_CHECK(fi_listen(r.pep));
	RS_CHECK(fi_getname(&r.pep->fid, &ss, &sslen));
	snprintf(port, sizeof(port), "%u", ntohs(ss.ss_family == AF_INET6 ?
		 ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port));
	bu_hand_port(port_fd, port, o->bind, o->quiet);
	rs_wait_event(&r, FI_CONNREQ, &e);
	rs_open_ep(&r, e.info, o->ring);
	fi_freeinfo(e.info);
	RS_CHECK(fi_accept(r.ep, NULL, 0));
	rs_wait_event(&r, FI_CONNECTED, &e);
	rs_recv_all(&r, &c, sizeof(c));
	if (c.magic != RS_MAGIC || !c.nsizes || c.nsizes > RS_MAX_SIZES || !c.iters ||
	    rs_max_size(&c) > RS_MAX_SIZE)
		bu_die("the client is not fd_rstream");
	rs_alloc(&r, &c);
	rs_session(&r, o, &c, 0);
	rs_close(&r);
	return 0;
}

static int rs_client(const struct rs_opts *o)
{
	struct rs r = { 0 };
	struct fi_eq_cm_entry e;

	bu_set_role("fd_rstream client");
	bu_pin(o->cpu_client);
	if (o->csv)
		rs_csv = bu_csv_open(o->csv);
	r.info = rs_getinfo(o->dst, o->port, 0);
	rs_open_fabric(&r);
	rs_open_ep(&r, r.info, o->ring);
	RS_CHECK(fi_connect(r.ep, NULL, NULL, 0));
	rs_wait_event(&r, FI_CONNECTED, &e);
	rs_send_all(&r, &o->cfg, sizeof(o->cfg));
	rs_alloc(&r, &o->cfg);
	rs_session(&r, o, &o->cfg, 1);
	if (rs_csv)
		fclose(rs_csv);
	if (o->json)
		rs_write_json(o, r.desc);
	rs_close(&r);
	return 0;
}

/* As fd_pingpong --local: the server forked before any fabric call. */
static int rs_local_server(void *arg, int port_fd)
{
	struct rs_opts *o = arg;

	o->quiet = 1;
	return rs_server(o, port_fd);
}

static int rs_local_client(void *arg, const char *port)
{
	struct rs_opts *o = arg;

	o->dst = o->bind;
	o->port = port;
	return rs_client(o);
}

/* ------------------------------------------------------------------------
 * Command line
 * ---------------------------------------------------------------------- */
static void rs_sizes(struct rs_config *c, const char *arg)
{
	c->nsizes = (uint32_t)bu_parse_sizes(arg, RS_MAX_SIZE, c->sizes, RS_MAX_SIZES);
}

static void rs_usage(const char *prog)
{
	printf("usage: %s [options]              server\n"
	       "       %s [options] SERVER_ADDR  client\n"
	       "       %s [options] --local      both sides (forked)\n\n"
	       "  -t lat,bw        tests (default both): lat = ping-pong (C = 1),\n"
	       "                   bw = C transfers each way per iteration\n"
	       "  -s LIST          sizes: N, MIN:MAX, all (1 B..4 MiB), comma list (64)\n"
	       "  -n N             latency iterations (1000)   -w N  warm-up (100)\n"
	       "  -C N             bandwidth transfers per direction per iteration (100)\n"
	       "  -I N             bandwidth iterations (10)\n"
	       "  -B BYTES         send and receive ring size (FI_OPT_SEND/RECV_BUF_SIZE)\n"
	       "  -p PORT (47594)  -b ADDR listen address (--local: $FD_RXE_ADDR0)\n"
	       "  --cpus S,C       --local pinning (0,1)   --cpu N  pin this side\n"
	       "  --csv F --json F --variant NAME -q\n"
	       "  --no-rtt         no per-iteration clock reads (no t_* columns): the loop\n"
	       "                   timed as a whole, as rstream(1) times it\n"
	       "  --callgrind      both sides toggle callgrind collection around each timed\n"
	       "                   loop and dump per size, with the loop's call counts (run\n"
	       "                   under valgrind --tool=callgrind --collect-atstart=no)\n",
	       prog, prog, prog);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "local", no_argument, NULL, 'l' },
		{ "cpus", required_argument, NULL, 1 },
		{ "cpu", required_argument, NULL, 2 },
		{ "csv", required_argument, NULL, 3 },
		{ "json", required_argument, NULL, 4 },
		{ "variant", required_argument, NULL, 5 },
		{ "callgrind", no_argument, NULL, 6 },
		{ "no-rtt", no_argument, NULL, 7 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rs_opts o = { .variant = BENCH_VARIANT, .cpu_server = -1, .cpu_client = -1 };
	int c, cpu = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	o.cfg.magic = RS_MAGIC;
	o.cfg.tests = RS_T_LAT | RS_T_BW;
	o.cfg.iters = 1000;
	o.cfg.warmup = 100;
	o.cfg.bw_iters = 10;
	o.cfg.bw_count = 100;
	o.cfg.sizes[0] = 64;
	o.cfg.nsizes = 1;
	while ((c = getopt_long(argc, argv, "t:s:n:w:C:I:B:p:b:lqh", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			o.cfg.tests = (strstr(optarg, "lat") ? RS_T_LAT : 0) |
				      (strstr(optarg, "bw") ? RS_T_BW : 0);
			if (!o.cfg.tests)
				bu_die("-t wants lat, bw or lat,bw");
			break;
		case 's': rs_sizes(&o.cfg, optarg); break;
		case 'n': o.cfg.iters = (uint32_t)bu_parse_num(optarg, "iterations"); break;
		case 'w': o.cfg.warmup = (uint32_t)bu_parse_num(optarg, "warm-up"); break;
		case 'C': o.cfg.bw_count = (uint32_t)bu_parse_num(optarg, "transfer count"); break;
		case 'I': o.cfg.bw_iters = (uint32_t)bu_parse_num(optarg, "iterations"); break;
		case 'B': o.ring = (size_t)bu_parse_num(optarg, "ring size"); break;
		case 'p': o.port = optarg; break;
		case 'b': o.bind = optarg; break;
		case 'l': o.local = 1; break;
		case 'q': o.quiet = 1; break;
		case 1:
			if (sscanf(optarg, "%d,%d", &o.cpu_server, &o.cpu_client) != 2)
				bu_die("--cpus wants SERVER,CLIENT");
			break;
		case 2: cpu = (int)bu_parse_num(optarg, "cpu"); break;
		case 3: o.csv = optarg; break;
		case 4: o.json = optarg; break;
		case 5: o.variant = optarg; break;
		case 6: o.cfg.flags |= RS_F_CALLGRIND; break;
		case 7: rs_rtt = 0; break;
		case 'h': rs_usage(argv[0]); return 0;
		default: rs_usage(argv[0]); return 2;
		}
	}
	if (!o.cfg.iters || !o.cfg.bw_iters || !o.cfg.bw_count)
		bu_die("counts must be at least 1");
	if (optind < argc)
		o.dst = argv[optind++];
	if (o.local) {
		if (o.dst)
			bu_die("--local and a server address exclude each other");
		if (!o.bind)
			o.bind = getenv("FD_RXE_ADDR0");
		if (!o.bind)
			bu_die("--local needs -b ADDR or FD_RXE_ADDR0");
		if (!o.port)
			o.port = "0";
		if (o.cpu_server < 0 && o.cpu_client < 0) {
			o.cpu_server = 0;
			o.cpu_client = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
		}
		return bu_local(rs_local_server, rs_local_client, &o);
	}
	if (!o.port)
		o.port = "47594";
	if (o.dst) {
		o.cpu_client = cpu;
		return rs_client(&o);
	}
	o.cpu_server = cpu;
	return rs_server(&o, -1);
}
