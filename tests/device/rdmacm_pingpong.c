/*
 * rdmacm_pingpong - prove that a verbs device carries RC traffic end to end,
 * using only librdmacm and libibverbs (no libfabric), so that a failure here
 * points at the machine or the test harness rather than at the project.
 *
 *   rdmacm_pingpong [-v] [-S] [-t SECONDS] server ADDR PORT
 *   rdmacm_pingpong [-v] [-S] [-t SECONDS] [-s SIZE] [-n ITERS] client ADDR PORT [SRC]
 *
 * The client connects (optionally from source address SRC), then for each
 * iteration sends a message filled with a pattern that depends on the
 * iteration and the byte offset; the server checks the length and every
 * byte and answers with the bitwise complement, which the client checks in
 * turn.  Message lengths cycle through SIZE, SIZE/2, SIZE/4, SIZE/8 so that
 * the received byte count is checked too.
 *
 * Exit status: 0 success, 1 failure (including bad usage), 77 when the
 * machine has no verbs device (the ctest "skipped" code).
 *
 * Every wait is bounded by one deadline (-t, default 60 s) so a lost peer
 * can never hang a test run.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define EXIT_SKIP 77

enum { WR_SEND = 1, WR_RECV = 2 };
enum { DONE_SEND = 1u << 0, DONE_RECV = 1u << 1 };

/* Longest sleep on the completion channel before looking at the CQ anyway. */
#define EVENT_SLICE_MS 50

struct pp {
	const char *role;
	size_t size;
	unsigned iters;
	struct timespec deadline;

	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char *buf; /* [send half | receive half] */
	int qp_created;
	int connected;
	unsigned cq_events_unacked;
	unsigned missed_events; /* completions found without their event */

	int verbose;
	int spin; /* -S: busy-poll the CQ instead of sleeping on events */
	double t_start;

	unsigned done;       /* DONE_* flags seen since last cleared */
	uint32_t recv_len;   /* byte_len of the last receive completion */
};

static void say(const struct pp *pp, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rdmacm_pingpong %s: ", pp->role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ------------------------------------------------------------------------ */
/* time */

static void add_seconds(struct timespec *ts, unsigned s)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)s;
}

/* Milliseconds left before the deadline, 0 once it has passed. */
static int ms_left(const struct pp *pp)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(pp->deadline.tv_sec - now.tv_sec) * 1000 +
	     (pp->deadline.tv_nsec - now.tv_nsec) / 1000000;
	if (ms <= 0)
		return 0;
	return ms > 1000000 ? 1000000 : (int)ms;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* -v: where the time goes, for diagnosing slow set-ups. */
static void step(const struct pp *pp, const char *what)
{
	if (pp->verbose)
		say(pp, "%10.1f ms  %s", (now_us() - pp->t_start) / 1e3, what);
}

/* ------------------------------------------------------------------------ */
/* payload */

/*
 * The pattern mixes the iteration and the offset (including its high bits)
 * so that a stale buffer, a shifted copy or a truncated message all show up
 * as a mismatch.
 */
static unsigned char pattern(unsigned iter, size_t off)
{
	uint32_t x = (uint32_t)off * 131u + iter * 17u + 0x5au;

	return (unsigned char)(x ^ (uint32_t)(off >> 8) ^ (iter << 3));
}

static size_t msg_len(const struct pp *pp, unsigned iter)
{
	size_t len = pp->size >> (iter % 4);

	return len ? len : 1;
}

static void fill(unsigned char *p, size_t len, unsigned iter, unsigned char mask)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(iter, i) ^ mask;
}

static int check(const struct pp *pp, const unsigned char *p, size_t len,
		 unsigned iter, unsigned char mask, const char *what)
{
	size_t want = msg_len(pp, iter);

	if (len != want) {
		say(pp, "iteration %u: %s is %zu bytes, expected %zu", iter, what,
		    len, want);
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char exp = pattern(iter, i) ^ mask;

		if (p[i] != exp) {
			say(pp, "iteration %u: %s byte %zu is 0x%02x, expected 0x%02x",
			    iter, what, i, p[i], exp);
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* connection manager events */

/*
 * Waits for the next CM event and accepts it only if it is the expected
 * one.  On success the event is returned unacknowledged (the caller may
 * need its id); on failure it has been acknowledged already.
 */
static int wait_cm(struct pp *pp, enum rdma_cm_event_type want,
		   struct rdma_cm_event **out)
{
	struct pollfd pfd = { .fd = pp->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int rc;

	do {
		rc = poll(&pfd, 1, ms_left(pp));
	} while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		say(pp, "poll on the CM channel: %s", strerror(errno));
		return -1;
	}
	if (rc == 0) {
		say(pp, "timed out waiting for %s", rdma_event_str(want));
		return -1;
	}
	if (rdma_get_cm_event(pp->ec, &ev)) {
		say(pp, "rdma_get_cm_event: %s", strerror(errno));
		return -1;
	}
	step(pp, rdma_event_str(ev->event));
	if (ev->event != want) {
		say(pp, "expected %s, got %s (status %d)", rdma_event_str(want),
		    rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		return -1;
	}
	*out = ev;
	return 0;
}

static int expect_cm(struct pp *pp, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;

	if (wait_cm(pp, want, &ev))
		return -1;
	rdma_ack_cm_event(ev);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* verbs resources */

static int setup_verbs(struct pp *pp)
{
	struct rdma_cm_id *id = pp->id;
	struct ibv_qp_init_attr qa;

	pp->pd = ibv_alloc_pd(id->verbs);
	if (!pp->pd) {
		say(pp, "ibv_alloc_pd: %s", strerror(errno));
		return -1;
	}
	pp->cc = ibv_create_comp_channel(id->verbs);
	if (!pp->cc) {
		say(pp, "ibv_create_comp_channel: %s", strerror(errno));
		return -1;
	}
	pp->cq = ibv_create_cq(id->verbs, 8, NULL, pp->cc, 0);
	if (!pp->cq) {
		say(pp, "ibv_create_cq: %s", strerror(errno));
		return -1;
	}
	pp->buf = calloc(2, pp->size);
	if (!pp->buf) {
		say(pp, "out of memory");
		return -1;
	}
	pp->mr = ibv_reg_mr(pp->pd, pp->buf, 2 * pp->size, IBV_ACCESS_LOCAL_WRITE);
	if (!pp->mr) {
		say(pp, "ibv_reg_mr: %s", strerror(errno));
		return -1;
	}

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = pp->cq;
	qa.recv_cq = pp->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, pp->pd, &qa)) {
		say(pp, "rdma_create_qp: %s", strerror(errno));
		return -1;
	}
	pp->qp_created = 1;
	return 0;
}

static int post_recv(struct pp *pp)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(pp->buf + pp->size),
		.length = (uint32_t)pp->size,
		.lkey = pp->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = WR_RECV, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int rc = ibv_post_recv(pp->id->qp, &wr, &bad);

	if (rc) {
		say(pp, "ibv_post_recv: %s", strerror(rc));
		return -1;
	}
	return 0;
}

static int post_send(struct pp *pp, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)pp->buf,
		.length = (uint32_t)len,
		.lkey = pp->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WR_SEND,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(pp->id->qp, &wr, &bad);

	if (rc) {
		say(pp, "ibv_post_send: %s", strerror(rc));
		return -1;
	}
	return 0;
}

static int take_wc(struct pp *pp, const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS) {
		say(pp, "%s completion failed: %s (vendor error 0x%x)",
		    wc->wr_id == WR_SEND ? "send" : "receive",
		    ibv_wc_status_str(wc->status), wc->vendor_err);
		return -1;
	}
	if (wc->wr_id == WR_SEND && wc->opcode == IBV_WC_SEND) {
		pp->done |= DONE_SEND;
	} else if (wc->wr_id == WR_RECV && wc->opcode == IBV_WC_RECV) {
		pp->done |= DONE_RECV;
		pp->recv_len = wc->byte_len;
	} else {
		say(pp, "unexpected completion: wr_id %llu opcode %d",
		    (unsigned long long)wc->wr_id, (int)wc->opcode);
		return -1;
	}
	return 0;
}

/*
 * Waits until every completion in @want has arrived.  Sleeps on the
 * completion channel rather than spinning: under an emulated CPU the two
 * sides may share one vCPU, and spinning would starve the peer.
 */
static int wait_done(struct pp *pp, unsigned want)
{
	struct ibv_wc wc[4];
	int armed = 0;

	while ((pp->done & want) != want) {
		int n = ibv_poll_cq(pp->cq, 4, wc);

		if (pp->spin && n == 0 && ms_left(pp) == 0) {
			say(pp, "timed out spinning for a completion (have 0x%x)", pp->done);
			return -1;
		}

		if (n < 0) {
			say(pp, "ibv_poll_cq failed");
			return -1;
		}
		for (int i = 0; i < n; i++)
			if (take_wc(pp, &wc[i]))
				return -1;
		if (n > 0 || pp->spin)
			continue;
		if (!armed) {
			/* Arm, then poll once more: a completion that slipped in
			 * before arming would otherwise raise no event. */
			if (ibv_req_notify_cq(pp->cq, 0)) {
				say(pp, "ibv_req_notify_cq failed");
				return -1;
			}
			armed = 1;
			continue;
		}

		/*
		 * Sleep in slices and look at the CQ again after each one even
		 * without an event: Soft-RoCE on the 6.1 kernel now and then
		 * drops a completion notification (seen under qemu TCG), and a
		 * lost event must cost one slice, not the whole deadline.
		 */
		struct pollfd pfd = { .fd = pp->cc->fd, .events = POLLIN };
		int left = ms_left(pp), rc;

		if (left == 0) {
			say(pp, "timed out waiting for a %s completion (have 0x%x)",
			    (want & ~pp->done) & DONE_SEND ? "send" : "receive",
			    pp->done);
			return -1;
		}
		do {
			rc = poll(&pfd, 1, left < EVENT_SLICE_MS ? left : EVENT_SLICE_MS);
		} while (rc < 0 && errno == EINTR);
		if (rc < 0) {
			say(pp, "poll on the completion channel: %s", strerror(errno));
			return -1;
		}
		if (rc == 0) {
			n = ibv_poll_cq(pp->cq, 4, wc);
			if (n > 0)
				pp->missed_events++;
			for (int i = 0; i < n; i++)
				if (take_wc(pp, &wc[i]))
					return -1;
			continue;
		}
		struct ibv_cq *ev_cq;
		void *ev_ctx;

		if (ibv_get_cq_event(pp->cc, &ev_cq, &ev_ctx)) {
			say(pp, "ibv_get_cq_event failed");
			return -1;
		}
		pp->cq_events_unacked++;
		armed = 0;
	}
	pp->done &= ~want;
	return 0;
}

static void teardown(struct pp *pp)
{
	if (pp->qp_created)
		rdma_destroy_qp(pp->id);
	if (pp->mr)
		ibv_dereg_mr(pp->mr);
	free(pp->buf);
	if (pp->cq) {
		if (pp->cq_events_unacked)
			ibv_ack_cq_events(pp->cq, pp->cq_events_unacked);
		ibv_destroy_cq(pp->cq);
	}
	if (pp->cc)
		ibv_destroy_comp_channel(pp->cc);
	if (pp->pd)
		ibv_dealloc_pd(pp->pd);
	if (pp->id)
		rdma_destroy_id(pp->id);
	if (pp->listen_id)
		rdma_destroy_id(pp->listen_id);
	if (pp->ec)
		rdma_destroy_event_channel(pp->ec);
}

/* ------------------------------------------------------------------------ */
/* the two roles */

static int resolve(struct pp *pp, const char *host, const char *port,
		   int passive, struct addrinfo **out)
{
	struct addrinfo hints;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
	rc = getaddrinfo(host, port, &hints, out);
	if (rc) {
		say(pp, "cannot resolve %s port %s: %s", host ? host : "*",
		    port ? port : "-", gai_strerror(rc));
		return -1;
	}
	return 0;
}

static void conn_params(struct rdma_conn_param *cp)
{
	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = 1;
	cp->initiator_depth = 1;
	cp->retry_count = 7;
	/* 7 = retry forever on "receiver not ready"; the deadline bounds it. */
	cp->rnr_retry_count = 7;
}

/*
 * The client tells the server how many messages of which size to expect in
 * the connection request's private data, so the two sides can never
 * disagree: magic, iteration count, size, each 32 bits in network order.
 */
#define PP_MAGIC 0x46445050u /* "FDPP" */
#define PP_HELLO_LEN 12
#define PP_MAX 0x40000000ul /* 1 GiB / 2^30 iterations: sanity bound */

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* The hello comes off the wire: check everything before trusting it. */
static int take_hello(struct pp *pp, const struct rdma_conn_param *cp)
{
	const unsigned char *h = cp->private_data;
	uint32_t iters, size;

	if (!h || cp->private_data_len < PP_HELLO_LEN || get32(h) != PP_MAGIC) {
		say(pp, "connection request without a pingpong hello: rejecting");
		return -1;
	}
	iters = get32(h + 4);
	size = get32(h + 8);
	if (size == 0 || size > PP_MAX || iters > PP_MAX) {
		say(pp, "hello asks for %u messages of %u bytes: rejecting",
		    iters, size);
		return -1;
	}
	pp->iters = iters;
	pp->size = size;
	return 0;
}

static int run_server(struct pp *pp, const char *addr, const char *port)
{
	struct addrinfo *ai;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	char host[64] = "?"; /* NI_MAXHOST is not POSIX; 64 fits any numeric host */

	if (resolve(pp, addr, port, 1, &ai))
		return -1;
	if (rdma_create_id(pp->ec, &pp->listen_id, NULL, RDMA_PS_TCP)) {
		say(pp, "rdma_create_id: %s", strerror(errno));
		freeaddrinfo(ai);
		return -1;
	}
	if (rdma_bind_addr(pp->listen_id, ai->ai_addr)) {
		say(pp, "rdma_bind_addr %s:%s: %s", addr, port, strerror(errno));
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	if (rdma_listen(pp->listen_id, 1)) {
		say(pp, "rdma_listen: %s", strerror(errno));
		return -1;
	}
	/* Scripts may wait for this line instead of polling rdma res. */
	printf("listening on %s port %s\n", addr, port);
	fflush(stdout);

	if (wait_cm(pp, RDMA_CM_EVENT_CONNECT_REQUEST, &ev))
		return -1;
	pp->id = ev->id;
	getnameinfo(rdma_get_peer_addr(pp->id), sizeof(struct sockaddr_storage),
		    host, sizeof(host), NULL, 0, NI_NUMERICHOST);
	if (take_hello(pp, &ev->param.conn)) {
		rdma_reject(pp->id, NULL, 0);
		rdma_ack_cm_event(ev);
		return -1;
	}
	rdma_ack_cm_event(ev);

	if (setup_verbs(pp) || post_recv(pp))
		return -1;
	conn_params(&cp);
	if (rdma_accept(pp->id, &cp)) {
		say(pp, "rdma_accept: %s", strerror(errno));
		return -1;
	}
	if (expect_cm(pp, RDMA_CM_EVENT_ESTABLISHED))
		return -1;
	pp->connected = 1;
	printf("connection from %s on %s\n", host,
	       ibv_get_device_name(pp->id->verbs->device));
	fflush(stdout);

	for (unsigned i = 0; i < pp->iters; i++) {
		if (wait_done(pp, DONE_RECV))
			return -1;
		if (check(pp, pp->buf + pp->size, pp->recv_len, i, 0, "request"))
			return -1;
		/* The next request can only come after this reply, so the
		 * receive is always in place before the peer needs it. */
		if (i + 1 < pp->iters && post_recv(pp))
			return -1;
		fill(pp->buf, msg_len(pp, i), i, 0xff);
		if (post_send(pp, msg_len(pp, i)) || wait_done(pp, DONE_SEND))
			return -1;
	}

	if (pp->missed_events)
		say(pp, "%u completion(s) arrived without a completion event",
		    pp->missed_events);
	step(pp, "round trips done");
	/* The client hangs up once it has checked the last reply. */
	if (expect_cm(pp, RDMA_CM_EVENT_DISCONNECTED))
		return -1;
	/* Answer the peer's disconnect request now; otherwise the client
	 * waits for the CM's retry timeout before it sees DISCONNECTED. */
	rdma_disconnect(pp->id);
	pp->connected = 0;
	printf("server: %u messages of up to %zu bytes checked\n", pp->iters,
	       pp->size);
	return 0;
}

static int run_client(struct pp *pp, const char *addr, const char *port,
		      const char *src)
{
	struct addrinfo *dst_ai, *src_ai = NULL;
	struct rdma_conn_param cp;
	unsigned char hello[PP_HELLO_LEN];
	double t0, t1;
	int rc;

	if (resolve(pp, addr, port, 0, &dst_ai))
		return -1;
	if (src && resolve(pp, src, NULL, 1, &src_ai)) {
		freeaddrinfo(dst_ai);
		return -1;
	}
	if (rdma_create_id(pp->ec, &pp->id, NULL, RDMA_PS_TCP)) {
		say(pp, "rdma_create_id: %s", strerror(errno));
		rc = -1;
	} else {
		rc = rdma_resolve_addr(pp->id, src_ai ? src_ai->ai_addr : NULL,
				       dst_ai->ai_addr, 5000);
		if (rc)
			say(pp, "rdma_resolve_addr %s: %s", addr, strerror(errno));
	}
	freeaddrinfo(dst_ai);
	if (src_ai)
		freeaddrinfo(src_ai);
	if (rc || expect_cm(pp, RDMA_CM_EVENT_ADDR_RESOLVED))
		return -1;
	if (rdma_resolve_route(pp->id, 5000)) {
		say(pp, "rdma_resolve_route: %s", strerror(errno));
		return -1;
	}
	if (expect_cm(pp, RDMA_CM_EVENT_ROUTE_RESOLVED))
		return -1;

	if (setup_verbs(pp) || post_recv(pp))
		return -1;
	step(pp, "QP ready");
	conn_params(&cp);
	put32(hello, PP_MAGIC);
	put32(hello + 4, pp->iters);
	put32(hello + 8, (uint32_t)pp->size);
	cp.private_data = hello;
	cp.private_data_len = sizeof(hello);
	if (rdma_connect(pp->id, &cp)) {
		say(pp, "rdma_connect: %s", strerror(errno));
		return -1;
	}
	if (expect_cm(pp, RDMA_CM_EVENT_ESTABLISHED))
		return -1;
	pp->connected = 1;
	printf("connected to %s port %s via %s\n", addr, port,
	       ibv_get_device_name(pp->id->verbs->device));
	fflush(stdout);

	t0 = now_us();
	for (unsigned i = 0; i < pp->iters; i++) {
		/* The reply's receive goes up before the request leaves. */
		if (i > 0 && post_recv(pp))
			return -1;
		fill(pp->buf, msg_len(pp, i), i, 0);
		if (post_send(pp, msg_len(pp, i)) ||
		    wait_done(pp, DONE_SEND | DONE_RECV))
			return -1;
		if (check(pp, pp->buf + pp->size, pp->recv_len, i, 0xff, "reply"))
			return -1;
	}
	t1 = now_us();
	step(pp, "round trips done");

	if (pp->missed_events)
		say(pp, "%u completion(s) arrived without a completion event",
		    pp->missed_events);
	if (rdma_disconnect(pp->id)) {
		say(pp, "rdma_disconnect: %s", strerror(errno));
		return -1;
	}
	if (expect_cm(pp, RDMA_CM_EVENT_DISCONNECTED))
		return -1;
	pp->connected = 0;
	printf("client: %u round trips of up to %zu bytes checked, %.1f us per round trip\n",
	       pp->iters, pp->size, pp->iters ? (t1 - t0) / pp->iters : 0.0);
	return 0;
}

/* ------------------------------------------------------------------------ */

static int usage(void)
{
	fprintf(stderr,
		"usage: rdmacm_pingpong [-v] [-S] [-t SECONDS] server ADDR PORT\n"
		"       rdmacm_pingpong [-v] [-S] [-t SECONDS] [-s SIZE] [-n ITERS] client ADDR PORT [SRC_ADDR]\n"
		"exit: 0 ok, 1 failure, 77 no verbs device\n");
	return 1;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-')
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	struct pp pp;
	unsigned long v, timeout_s = 60;
	struct ibv_device **devs;
	int ndev = 0, argi = 1, rc;

	memset(&pp, 0, sizeof(pp));
	pp.role = "?";
	pp.size = 4096;
	pp.iters = 16;

	/* Options come first; hand-parsed so the program needs nothing beyond
	 * C11 and POSIX. */
	while (argi < argc && argv[argi][0] == '-' && argv[argi][1]) {
		const char *opt = argv[argi];

		if (!strcmp(opt, "--")) {
			argi++;
			break;
		}
		if (!strcmp(opt, "-v") || !strcmp(opt, "-S")) {
			if (opt[1] == 'v')
				pp.verbose = 1;
			else
				pp.spin = 1;
			argi++;
			continue;
		}
		if (argi + 1 >= argc || opt[2])
			return usage();
		if (!strcmp(opt, "-s") && !parse_uint(argv[argi + 1], PP_MAX, &v) && v)
			pp.size = v;
		else if (!strcmp(opt, "-n") && !parse_uint(argv[argi + 1], PP_MAX, &v))
			pp.iters = (unsigned)v;
		else if (!strcmp(opt, "-t") && !parse_uint(argv[argi + 1], 86400, &v) && v)
			timeout_s = v;
		else
			return usage();
		argi += 2;
	}
	if (argc - argi < 3)
		return usage();
	pp.role = argv[argi];
	int server = !strcmp(pp.role, "server");
	if (!server && strcmp(pp.role, "client"))
		return usage();
	if (server ? argc - argi != 3 : argc - argi > 4)
		return usage();

	/* No device (or no kernel support at all) is a skip, not a failure:
	 * the caller decides whether a skip is acceptable. */
	pp.t_start = now_us();
	devs = ibv_get_device_list(&ndev);
	if (devs)
		ibv_free_device_list(devs);
	if (!devs || ndev == 0) {
		say(&pp, "no RDMA verbs device on this machine: skipping");
		return EXIT_SKIP;
	}

	step(&pp, "device list read");
	add_seconds(&pp.deadline, (unsigned)timeout_s);
	pp.ec = rdma_create_event_channel();
	if (!pp.ec) {
		say(&pp, "rdma_create_event_channel: %s", strerror(errno));
		return 1;
	}
	if (server)
		rc = run_server(&pp, argv[argi + 1], argv[argi + 2]);
	else
		rc = run_client(&pp, argv[argi + 1], argv[argi + 2],
				argc - argi == 4 ? argv[argi + 3] : NULL);
	if (rc && pp.connected)
		rdma_disconnect(pp.id);
	teardown(&pp);
	if (rc)
		say(&pp, "FAILED");
	return rc ? 1 : 0;
}
