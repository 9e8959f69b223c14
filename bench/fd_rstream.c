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
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#ifndef BENCH_VARIANT
#define BENCH_VARIANT "direct"
#endif

#define RS_MAGIC 0x46445253u	/* "FDRS" */
#define RS_MAX_SIZES 32
#define RS_MAX_SIZE ((uint64_t)4 << 20)
#define RS_STALL_NS (30ull * 1000000000ull)
#define RS_T_LAT 1u
#define RS_T_BW 2u

/* What the client tells the server, as the first bytes of the stream. */
struct rs_config {
	uint32_t magic;
	uint32_t tests;		/* RS_T_* */
	uint32_t nsizes;
	uint32_t iters, warmup;	/* latency */
	uint32_t bw_iters, bw_count;
	uint32_t pad;
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

struct rs_result {
	const char *test;
	uint64_t size;
	uint32_t iters, count;
	int lat;
	double t_min, t_max, t_typical, t_avg, t_stdev, t_p99, t_p999;
	double usec_per_xfer, mb_per_s, mmsg_per_s;
};

static const char *rs_role = "fd_rstream";

static void rs_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void rs_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", rs_role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

#define RS_CHECK(call)							\
	do {								\
		long rs_rc_ = (long)(call);				\
		if (rs_rc_ < 0)						\
			rs_die("%s: %s (%ld)", #call,			\
			       fi_strerror((int)-rs_rc_), rs_rc_);	\
	} while (0)

static inline uint64_t rs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------------
 * Moving bytes: spin on -FI_EAGAIN (the calls themselves drive progress),
 * as a latency benchmark must; a long silence is a hang.
 * ---------------------------------------------------------------------- */
static void rs_stall(uint64_t *spins, uint64_t *t0, const char *what)
{
	if ((++*spins & 0xfffff) == 0) {
		uint64_t now = rs_now();

		if (!*t0)
			*t0 = now;
		else if (now - *t0 > RS_STALL_NS)
			rs_die("%s made no progress for 30 s", what);
	}
}

static void rs_send_all(struct rs *r, const void *p, size_t len)
{
	uint64_t spins = 0, t0 = 0;
	size_t off = 0;

	while (off < len) {
		ssize_t n = fi_send(r->ep, (const uint8_t *)p + off, len - off, NULL, 0, NULL);

		if (n > 0) {
			off += (size_t)n;
			spins = t0 = 0;
		} else if (n == -FI_EAGAIN) {
			rs_stall(&spins, &t0, "fi_send");
		} else {
			rs_die("fi_send: %s", n ? fi_strerror((int)-n) : "returned 0");
		}
	}
}

static void rs_recv_all(struct rs *r, void *p, size_t len)
{
	uint64_t spins = 0, t0 = 0;
	size_t off = 0;

	while (off < len) {
		ssize_t n = fi_recv(r->ep, (uint8_t *)p + off, len - off, NULL, 0, NULL);

		if (n > 0) {
			off += (size_t)n;
			spins = t0 = 0;
		} else if (n == -FI_EAGAIN) {
			rs_stall(&spins, &t0, "fi_recv");
		} else if (n == 0) {
			rs_die("the peer closed the stream");
		} else {
			rs_die("fi_recv: %s", fi_strerror((int)-n));
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
		rs_die("fi_allocinfo");
	hints->ep_attr->type = FI_EP_SOCK_STREAM;
	hints->caps = FI_MSG;
	rc = fi_getinfo(FI_VERSION(1, 17), node, service, flags, hints, &info);
	fi_freeinfo(hints);
	if (rc)
		rs_die("fi_getinfo(%s, %s, FI_EP_SOCK_STREAM): %s", node ? node : "NULL",
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
		rs_die("connection event error: %s", fi_strerror(err.err));
	}
	if (rc < 0)
		rs_die("fi_eq_sread: %s", fi_strerror((int)-rc));
	if (ev != want)
		rs_die("expected connection event %u, got %u", want, ev);
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
		rs_die("cannot allocate %zu bytes", len);
	memset(r->buf, 0x5a, len);
}

/* ------------------------------------------------------------------------
 * Measurement
 * ---------------------------------------------------------------------- */
static int rs_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

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

static void rs_run(struct rs *r, int client, const char *test, size_t size, uint32_t iters,
		   uint32_t warmup, uint32_t count, struct rs_result *res)
{
	uint64_t *rtt = client ? calloc(iters, sizeof(*rtt)) : NULL;
	uint64_t t_start = 0, t_end;
	double sum = 0, sq = 0, mean, us, xfers;

	if (client && !rtt)
		rs_die("out of memory");
	for (uint32_t i = 0; i < warmup + iters; i++) {
		uint64_t t0;

		if (i == warmup)
			t_start = rs_now();
		t0 = client ? rs_now() : 0;
		rs_iter(r, client, size, count);
		if (client && i >= warmup)
			rtt[i - warmup] = rs_now() - t0;
	}
	t_end = rs_now();
	if (!client)
		return;
	memset(res, 0, sizeof(*res));
	res->test = test;
	res->size = size;
	res->iters = iters;
	res->count = count;
	res->lat = count == 1;
	us = (double)(t_end - t_start) / 1000.0;
	xfers = 2.0 * (double)iters * (double)count;
	res->usec_per_xfer = us / xfers;
	res->mb_per_s = (double)size * xfers / us;
	res->mmsg_per_s = xfers / us;
	qsort(rtt, iters, sizeof(*rtt), rs_cmp);
	for (uint32_t i = 0; i < iters; i++)
		sum += (double)rtt[i];
	mean = sum / iters;
	for (uint32_t i = 0; i < iters; i++)
		sq += ((double)rtt[i] - mean) * ((double)rtt[i] - mean);
	/* Per-iteration round trips, halved: one-way, as for fd_pingpong. */
	res->t_min = (double)rtt[0] / 2000.0;
	res->t_max = (double)rtt[iters - 1] / 2000.0;
	res->t_typical = (double)rtt[iters / 2] / 2000.0;
	res->t_avg = mean / 2000.0;
	res->t_stdev = sqrt(sq / iters) / 2000.0;
	res->t_p99 = (double)rtt[(size_t)ceil(0.99 * iters) - 1] / 2000.0;
	res->t_p999 = (double)rtt[(size_t)ceil(0.999 * iters) - 1] / 2000.0;
	free(rtt);
}

/* ------------------------------------------------------------------------
 * Output: the same CSV columns as fd_pingpong, so one report reads both.
 * ---------------------------------------------------------------------- */
static FILE *rs_csv;
static struct rs_result rs_results[2 * RS_MAX_SIZES];
static size_t rs_nresults;

static void rs_output(const struct rs_opts *o, const struct rs_result *res)
{
	if (rs_nresults < sizeof(rs_results) / sizeof(rs_results[0]))
		rs_results[rs_nresults++] = *res;
	/* A bandwidth iteration moves C transfers: its round trip is no
	 * latency, so only the loop figures are shown. */
	if (!o->quiet && res->lat)
		printf("%-10s %8" PRIu64 " %6u %6u %9.2f %9.2f %9.2f %9.2f %9.2f %10.2f %8.4f\n",
		       res->test, res->size, res->iters, res->count, res->t_min,
		       res->t_typical, res->t_avg, res->t_p99, res->usec_per_xfer,
		       res->mb_per_s, res->mmsg_per_s);
	else if (!o->quiet)
		printf("%-10s %8" PRIu64 " %6u %6u %9s %9s %9s %9s %9.2f %10.2f %8.4f\n",
		       res->test, res->size, res->iters, res->count, "-", "-", "-", "-",
		       res->usec_per_xfer, res->mb_per_s, res->mmsg_per_s);
	if (!rs_csv)
		return;
	fprintf(rs_csv, "%s,%s,%" PRIu64 ",%u,%u,%d,", o->variant, res->test, res->size,
		res->iters, o->cfg.warmup, res->lat);
	if (res->lat)
		fprintf(rs_csv, "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,", res->t_min, res->t_max,
			res->t_typical, res->t_avg, res->t_stdev, res->t_p99, res->t_p999);
	else
		fprintf(rs_csv, ",,,,,,,");
	fprintf(rs_csv, "%.3f,%.3f,%u,%.6f,,\n", res->usec_per_xfer, res->mb_per_s,
		res->lat ? 0 : res->count, res->mmsg_per_s);
	fflush(rs_csv);
}

static void rs_write_json(const struct rs_opts *o, const char *desc)
{
	FILE *f = fopen(o->json, "w");

	if (!f)
		rs_die("cannot write %s: %s", o->json, strerror(errno));
	fprintf(f, "{\n  \"variant\": \"%s\",\n  \"describe\": \"%s\",\n"
		"  \"method\": \"per iteration C transfers of S bytes each way (rstream(1)); "
		"t_*: per-iteration round trip / 2 (C = 1); usec_per_xfer = loop time / "
		"(2 x iters x C); mb_per_s counts both directions, 10^6 bytes\",\n"
		"  \"results\": [", o->variant, desc);
	for (size_t i = 0; i < rs_nresults; i++) {
		const struct rs_result *r = &rs_results[i];

		fprintf(f, "%s\n    {\"test\": \"%s\", \"bytes\": %" PRIu64 ", \"iters\": %u, "
			"\"count\": %u, ", i ? "," : "", r->test, r->size, r->iters, r->count);
		if (r->lat)
			fprintf(f, "\"t_min\": %.3f, \"t_max\": %.3f, \"t_typical\": %.3f, "
				"\"t_avg\": %.3f, \"t_stdev\": %.3f, \"t_p99\": %.3f, "
				"\"t_p999\": %.3f, ", r->t_min, r->t_max, r->t_typical,
				r->t_avg, r->t_stdev, r->t_p99, r->t_p999);
		fprintf(f, "\"usec_per_xfer\": %.3f, \"mb_per_s\": %.3f, \"mmsg_per_s\": %.6f}",
			r->usec_per_xfer, r->mb_per_s, r->mmsg_per_s);
	}
	fprintf(f, "\n  ]\n}\n");
	fclose(f);
}

/* Both sides walk the same list; the client also records. */
static void rs_session(struct rs *r, const struct rs_opts *o, const struct rs_config *c,
		       int client)
{
	struct rs_result res;

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
				rs_run(r, client, "rstream", s, c->iters, c->warmup, 1, &res);
			else
				rs_run(r, client, "rstream_bw", s, c->bw_iters, 1, c->bw_count, &res);
			if (client) {
				rs_output(o, &res);
				fprintf(stderr, "%s: %s %zu B: %.2f usec/xfer, %.2f MB/s\n", rs_role,
					res.test, s, res.usec_per_xfer, res.mb_per_s);
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

static void rs_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "%s: cannot pin to CPU %d\n", rs_role, cpu);
}

static int rs_server(const struct rs_opts *o, int port_fd)
{
	struct rs r = { 0 };
	struct fi_eq_cm_entry e;
	struct rs_config c;
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss);
	char port[16];

	rs_role = "fd_rstream server";
	rs_pin(o->cpu_server);
	r.info = rs_getinfo(o->bind, o->port, FI_SOURCE);
	rs_open_fabric(&r);
	RS_CHECK(fi_passive_ep(r.fabric, r.info, &r.pep, NULL));
	RS_CHECK(fi_pep_bind(r.pep, &r.eq->fid, 0));
	RS_CHECK(fi_listen(r.pep));
	RS_CHECK(fi_getname(&r.pep->fid, &ss, &sslen));
	snprintf(port, sizeof(port), "%u", ntohs(ss.ss_family == AF_INET6 ?
		 ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port));
	if (port_fd >= 0) {
		if (write(port_fd, port, strlen(port)) < 0)
			rs_die("cannot hand the port over");
		close(port_fd);
	} else if (!o->quiet) {
		printf("# server: listening on port %s\n", port);
	}
	rs_wait_event(&r, FI_CONNREQ, &e);
	rs_open_ep(&r, e.info, o->ring);
	fi_freeinfo(e.info);
	RS_CHECK(fi_accept(r.ep, NULL, 0));
	rs_wait_event(&r, FI_CONNECTED, &e);
	rs_recv_all(&r, &c, sizeof(c));
	if (c.magic != RS_MAGIC || !c.nsizes || c.nsizes > RS_MAX_SIZES || !c.iters ||
	    rs_max_size(&c) > RS_MAX_SIZE)
		rs_die("the client is not fd_rstream");
	rs_alloc(&r, &c);
	rs_session(&r, o, &c, 0);
	rs_close(&r);
	return 0;
}

static int rs_client(const struct rs_opts *o)
{
	struct rs r = { 0 };
	struct fi_eq_cm_entry e;

	rs_role = "fd_rstream client";
	rs_pin(o->cpu_client);
	if (o->csv) {
		rs_csv = fopen(o->csv, "w");
		if (!rs_csv)
			rs_die("cannot write %s: %s", o->csv, strerror(errno));
		fprintf(rs_csv, "variant,test,bytes,iters,warmup,oneway,t_min_us,t_max_us,"
			"t_typical_us,t_avg_us,t_stdev_us,t_p99_us,t_p999_us,"
			"usec_per_xfer,mb_per_s,window,mmsg_per_s,cycles_per_op,instr_per_op\n");
	}
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

/* As fd_pingpong --local: fork before any fabric call, server in the
 * child, the port through a pipe. */
static int rs_local(struct rs_opts *o)
{
	int pfd[2], status = 0, rc;
	char port[32] = "";
	ssize_t n;
	pid_t pid;

	if (pipe(pfd))
		rs_die("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		rs_die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		o->quiet = 1;
		_exit(rs_server(o, pfd[1]));
	}
	close(pfd[1]);
	n = read(pfd[0], port, sizeof(port) - 1);
	close(pfd[0]);
	if (n <= 0) {
		waitpid(pid, &status, 0);
		rs_die("the server failed before listening");
	}
	port[n] = 0;
	o->dst = o->bind;
	o->port = port;
	rc = rs_client(o);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return rc;
}

/* ------------------------------------------------------------------------
 * Command line
 * ---------------------------------------------------------------------- */
static uint64_t rs_num(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		rs_die("bad %s '%s'", what, s);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end)
		rs_die("bad %s '%s'", what, s);
	return v;
}

static void rs_add_size(struct rs_config *c, uint64_t s)
{
	if (!s || s > RS_MAX_SIZE)
		rs_die("sizes are 1 B .. 4 MiB");
	if (c->nsizes == RS_MAX_SIZES)
		rs_die("at most %d sizes", RS_MAX_SIZES);
	c->sizes[c->nsizes++] = s;
}

/* N, MIN:MAX (powers of two in between), all, or a comma list. */
static void rs_sizes(struct rs_config *c, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;

	if (!copy)
		rs_die("out of memory");
	c->nsizes = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		uint64_t lo, hi;

		if (!strcmp(tok, "all")) {
			lo = 1;
			hi = RS_MAX_SIZE;
		} else if (colon) {
			*colon = 0;
			lo = rs_num(tok, "size");
			hi = rs_num(colon + 1, "size");
		} else {
			rs_add_size(c, rs_num(tok, "size"));
			continue;
		}
		for (uint64_t p = 1; p <= hi; p *= 2)
			if (p >= lo)
				rs_add_size(c, p);
	}
	free(copy);
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
	       "  --csv F --json F --variant NAME -q\n", prog, prog, prog);
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
	rs_add_size(&o.cfg, 64);
	while ((c = getopt_long(argc, argv, "t:s:n:w:C:I:B:p:b:lqh", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			o.cfg.tests = (strstr(optarg, "lat") ? RS_T_LAT : 0) |
				      (strstr(optarg, "bw") ? RS_T_BW : 0);
			if (!o.cfg.tests)
				rs_die("-t wants lat, bw or lat,bw");
			break;
		case 's': rs_sizes(&o.cfg, optarg); break;
		case 'n': o.cfg.iters = (uint32_t)rs_num(optarg, "iterations"); break;
		case 'w': o.cfg.warmup = (uint32_t)rs_num(optarg, "warm-up"); break;
		case 'C': o.cfg.bw_count = (uint32_t)rs_num(optarg, "transfer count"); break;
		case 'I': o.cfg.bw_iters = (uint32_t)rs_num(optarg, "iterations"); break;
		case 'B': o.ring = (size_t)rs_num(optarg, "ring size"); break;
		case 'p': o.port = optarg; break;
		case 'b': o.bind = optarg; break;
		case 'l': o.local = 1; break;
		case 'q': o.quiet = 1; break;
		case 1:
			if (sscanf(optarg, "%d,%d", &o.cpu_server, &o.cpu_client) != 2)
				rs_die("--cpus wants SERVER,CLIENT");
			break;
		case 2: cpu = (int)rs_num(optarg, "cpu"); break;
		case 3: o.csv = optarg; break;
		case 4: o.json = optarg; break;
		case 5: o.variant = optarg; break;
		case 'h': rs_usage(argv[0]); return 0;
		default: rs_usage(argv[0]); return 2;
		}
	}
	if (!o.cfg.iters || !o.cfg.bw_iters || !o.cfg.bw_count)
		rs_die("counts must be at least 1");
	if (optind < argc)
		o.dst = argv[optind++];
	if (o.local) {
		if (o.dst)
			rs_die("--local and a server address exclude each other");
		if (!o.bind)
			o.bind = getenv("FD_RXE_ADDR0");
		if (!o.bind)
			rs_die("--local needs -b ADDR or FD_RXE_ADDR0");
		if (!o.port)
			o.port = "0";
		if (o.cpu_server < 0 && o.cpu_client < 0) {
			o.cpu_server = 0;
			o.cpu_client = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
		}
		return rs_local(&o);
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
