/* Helpers for the fault and load tests; see flt.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "flt.h"
#ifdef FLT_HAVE_RSTREAM
#include "test_rstream_common.h"
#endif

long flt_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

const char *flt_kind_name(enum flt_kind kind)
{
	return kind == FLT_MSG ? "msg" : "rstream";
}

/* ---- resource accounting ---- */

/* Lines of `rdma res show WHAT` that describe one object: each starts with
 * "link" (qp, cm_id) or "dev" (mr, cq). popen execs, so this is safe in a
 * process that already uses the device. */
static int flt_res_lines(const char *what)
{
	char cmd[64], line[1024];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "rdma res show %s 2>/dev/null", what);
	f = popen(cmd, "r");
	if (!f)
		FDT_FAIL("popen(%s): %s", cmd, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "link ", 5) || !strncmp(line, "dev ", 4))
			n++;
	if (pclose(f) != 0)
		FDT_FAIL("'%s' failed (is iproute2's rdma tool installed?)", cmd);
	return n;
}

void flt_res_read(struct flt_res *r)
{
	r->qp = flt_res_lines("qp");
	r->mr = flt_res_lines("mr");
	r->cq = flt_res_lines("cq");
	r->cm_id = flt_res_lines("cm_id");
}

void flt_res_expect(const struct flt_res *before, int ms, const char *when)
{
	struct flt_res now;
	long t0 = flt_now_ms();

	for (;;) {
		flt_res_read(&now);
		if (now.qp == before->qp && now.mr == before->mr &&
		    now.cq == before->cq && now.cm_id == before->cm_id)
			break;
		if (flt_now_ms() - t0 > ms) {
			system("rdma res show qp; rdma res show mr; rdma res show cq; "
			       "rdma res show cm_id");
			FDT_FAIL("%s: leaked device objects: qp %d -> %d, mr %d -> %d, "
				 "cq %d -> %d, cm_id %d -> %d", when,
				 before->qp, now.qp, before->mr, now.mr,
				 before->cq, now.cq, before->cm_id, now.cm_id);
		}
		usleep(200 * 1000);
	}
	printf("%s: no leak (qp %d, mr %d, cq %d, cm_id %d, as before)\n", when,
	       now.qp, now.mr, now.cq, now.cm_id);
}

/* ---- helper processes ---- */

static int flt_back_fd = -1;

void flt_tell(const char *msg)
{
	char line[256];
	int len = snprintf(line, sizeof(line), "%s\n", msg);

	FDT_ASSERT(flt_back_fd >= 0, "flt_tell outside a helper");
	if (write(flt_back_fd, line, (size_t)len) != len)
		FDT_FAIL("flt_tell: %s", strerror(errno));
}

void flt_hear(struct flt_child *c, char *buf, size_t len, int ms)
{
	struct pollfd p = { .fd = c->back_fd, .events = POLLIN };
	size_t got = 0;
	long t0 = flt_now_ms();

	while (got < len - 1) {
		int left = ms - (int)(flt_now_ms() - t0);

		if (left <= 0 || poll(&p, 1, left) <= 0)
			FDT_FAIL("no word from helper %d within %d ms", (int)c->pid, ms);
		if (read(c->back_fd, buf + got, 1) != 1)
			FDT_FAIL("helper %d ended before it said anything", (int)c->pid);
		if (buf[got] == '\n')
			break;
		got++;
	}
	buf[got] = 0;
}

void flt_spawn(struct flt_child *c, flt_role role, void *arg)
{
	int pfd[2], bfd[2];
	char msg[256];
	ssize_t n;
	size_t got = 0;

	memset(c, 0, sizeof(*c));
	if (pipe(pfd) || pipe(bfd))
		FDT_FAIL("pipe");
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0)
		FDT_FAIL("fork");
	if (c->pid == 0) {
		close(pfd[1]);
		close(bfd[0]);
		flt_back_fd = bfd[1];
		/* one line; EOF before it means "not needed" */
		while (got < sizeof(msg) - 1) {
			n = read(pfd[0], msg + got, 1);
			if (n <= 0)
				_exit(0);
			if (msg[got] == '\n')
				break;
			got++;
		}
		msg[got] = 0;
		close(pfd[0]);
		n = role(msg, arg);
		fflush(NULL);
		_exit((int)n);
	}
	close(pfd[0]);
	close(bfd[1]);
	c->go_fd = pfd[1];
	c->back_fd = bfd[0];
}

void flt_go(struct flt_child *c, const char *msg)
{
	char line[256];
	int len = snprintf(line, sizeof(line), "%s\n", msg);

	if (write(c->go_fd, line, (size_t)len) != len)
		FDT_FAIL("cannot start helper %d", (int)c->pid);
	close(c->go_fd);
	c->go_fd = -1;
}

static int flt_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int flt_reap(struct flt_child *c, int ms)
{
	long t0 = flt_now_ms();
	int status;
	pid_t p;

	if (c->done)
		return flt_code(c->status);
	if (c->go_fd > 0) {
		close(c->go_fd);
		c->go_fd = -1;
	}
	for (;;) {
		p = waitpid(c->pid, &status, WNOHANG);
		if (p == c->pid)
			break;
		if (p < 0)
			FDT_FAIL("waitpid(%d): %s", (int)c->pid, strerror(errno));
		if (flt_now_ms() - t0 > ms) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &status, 0);
			c->done = 1;
			FDT_FAIL("helper %d still running after %d ms: killed", (int)c->pid, ms);
		}
		usleep(20 * 1000);
	}
	c->done = 1;
	c->status = status;
	return flt_code(status);
}

void flt_kill(struct flt_child *c)
{
	if (c->done)
		return;
	kill(c->pid, SIGKILL);
	if (waitpid(c->pid, &c->status, 0) < 0)
		FDT_FAIL("waitpid: %s", strerror(errno));
	c->done = 1;
	if (c->go_fd > 0) {
		close(c->go_fd);
		c->go_fd = -1;
	}
}

/* ---- connections ---- */

struct fi_info *flt_hints(enum flt_kind kind)
{
#ifdef FLT_HAVE_RSTREAM
	if (kind == FLT_RSTREAM)
		return rst_hints();
#else
	if (kind == FLT_RSTREAM)
		FDT_FAIL("rstream is not built");
#endif
	return fdt_hints();
}

static void flt_open_eq(struct fdt_side *s)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };

	FDT_OK(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
	FDT_OK(fi_eq_open(s->fabric, &ea, &s->eq, NULL));
}

void flt_listen(struct fdt_side *s, struct fi_info *hints, char *port, size_t portlen)
{
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss);

	memset(s, 0, sizeof(*s));
	s->is_server = 1;
	s->hints = hints;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), fdt_addr(), "0", FI_SOURCE, hints, &s->info));
	flt_open_eq(s);
	FDT_OK(fi_passive_ep(s->fabric, s->info, &s->pep, NULL));
	FDT_OK(fi_pep_bind(s->pep, &s->eq->fid, 0));
	FDT_OK(fi_listen(s->pep));
	FDT_OK(fi_getname(&s->pep->fid, &ss, &sslen));
	snprintf(port, portlen, "%u", ntohs(((struct sockaddr_in *)&ss)->sin_port));
}

/* Endpoint (and CQs for MSG) for info, enabled; buffers registered and
 * receives posted before the handshake when b is given. */
static int flt_open(struct fdt_side *s, enum flt_kind kind, struct fi_info *info,
		    struct flt_bufs *b)
{
	int rc;

	if (!s->domain)
		FDT_OK(fi_domain(s->fabric, info, &s->domain, NULL));
	if (kind == FLT_MSG) {
		struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_DATA,
					 .wait_obj = FI_WAIT_UNSPEC };

		ca.size = s->cq_size ? s->cq_size : 512;
		FDT_OK(fi_cq_open(s->domain, &ca, &s->txcq, NULL));
		FDT_OK(fi_cq_open(s->domain, &ca, &s->rxcq, NULL));
	}
	rc = fi_endpoint(s->domain, info, &s->ep, NULL);
	if (rc)
		return rc;
	FDT_OK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	if (kind == FLT_MSG) {
		FDT_OK(fi_ep_bind(s->ep, &s->txcq->fid, FI_TRANSMIT));
		FDT_OK(fi_ep_bind(s->ep, &s->rxcq->fid, FI_RECV));
	}
	rc = fi_enable(s->ep);
	if (rc)
		return rc;
	if (kind == FLT_MSG && b)
		flt_bufs_open(s, b, 1);
	return 0;
}

int flt_eq_next(struct fdt_side *s, int ms, struct fi_eq_err_entry *err)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)buf;
	uint32_t event;
	ssize_t rc;

	rc = fi_eq_sread(s->eq, &event, buf, sizeof(buf), ms, 0);
	if (rc == -FI_EAVAIL) {
		struct fi_eq_err_entry tmp;

		if (!err)
			err = &tmp;
		memset(err, 0, sizeof(*err));
		FDT_ASSERT(fi_eq_readerr(s->eq, err, 0) > 0, "fi_eq_readerr");
		FDT_ASSERT(err->err > 0, "error entry with err %d", err->err);
		return -err->err;
	}
	if (rc == -FI_EAGAIN || rc == -FI_ETIMEDOUT)
		return -FI_ETIMEDOUT;
	if (rc < 0)
		FDT_FAIL("fi_eq_sread: %s", fi_strerror((int)-rc));
	if (event == FI_CONNREQ && e->info)
		fi_freeinfo(e->info);	/* nobody takes this one */
	return (int)event;
}

void flt_accept(struct fdt_side *s, enum flt_kind kind, struct flt_bufs *b)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)buf;
	uint32_t event;
	ssize_t rc;

	rc = fi_eq_sread(s->eq, &event, buf, sizeof(buf), 30000, 0);
	FDT_ASSERT(rc > 0 && event == FI_CONNREQ, "waiting for FI_CONNREQ: rc %zd event %u",
		   rc, event);
	FDT_ASSERT(e->info && e->info->handle, "FI_CONNREQ without handle");
	FDT_OK(flt_open(s, kind, e->info, b));
	fi_freeinfo(e->info);
	FDT_OK(fi_accept(s->ep, NULL, 0));
	fdt_wait_event(s, FI_CONNECTED, buf, sizeof(buf));
	FDT_ASSERT(e->fid == &s->ep->fid, "FI_CONNECTED names the endpoint");
}

int flt_client_init(struct fdt_side *s, struct fi_info *hints, const char *node,
		    const char *port)
{
	struct fi_info *h = fi_dupinfo(hints);
	int rc;

	memset(s, 0, sizeof(*s));
	s->hints = hints;
	FDT_ASSERT(h, "fi_dupinfo");
	/* Bind to the harness address, as fdt does: inside one VM only rxe0
	 * reaches rxe0. */
	if (h->ep_attr->type == FI_EP_MSG) {
		struct sockaddr_in *src = calloc(1, sizeof(*src));

		FDT_ASSERT(src, "calloc");
		src->sin_family = AF_INET;
		FDT_ASSERT(inet_pton(AF_INET, fdt_addr(), &src->sin_addr) == 1, "address");
		free(h->src_addr);
		h->src_addr = src;
		h->src_addrlen = sizeof(*src);
		h->addr_format = FI_SOCKADDR_IN;
	}
	rc = fi_getinfo(FI_VERSION(1, 17), node, port, 0, h, &s->info);
	fi_freeinfo(h);
	if (rc)
		return rc;
	flt_open_eq(s);
	return 0;
}

int flt_client_start(struct fdt_side *s, enum flt_kind kind, struct flt_bufs *b)
{
	int rc = flt_open(s, kind, s->info, b);

	if (rc)
		return rc;
	return fi_connect(s->ep, s->info->dest_addr, NULL, 0);
}

void flt_client_connect(struct fdt_side *s, enum flt_kind kind, struct flt_bufs *b)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)buf;

	FDT_OK(flt_client_start(s, kind, b));
	fdt_wait_event(s, FI_CONNECTED, buf, sizeof(buf));
	FDT_ASSERT(e->fid == &s->ep->fid, "FI_CONNECTED names the endpoint");
}

/* ---- MSG buffers and the checked exchange ---- */

void flt_bufs_open(struct fdt_side *s, struct flt_bufs *b, int post)
{
	FDT_OK(fi_mr_reg(s->domain, b->rx, sizeof(b->rx), FI_RECV, 0, 0, 0, &b->rx_mr, NULL));
	FDT_OK(fi_mr_reg(s->domain, b->tx, sizeof(b->tx), FI_SEND, 0, 0, 0, &b->tx_mr, NULL));
	for (int i = 0; post && i < FLT_MSG_SLOTS; i++)
		FDT_OK(fi_recv(s->ep, b->rx[i], FLT_MSG_SIZE, fi_mr_desc(b->rx_mr), 0,
			       (void *)(uintptr_t)(i + 1)));
}

void flt_bufs_close(struct flt_bufs *b)
{
	if (b->rx_mr)
		FDT_OK(fi_close(&b->rx_mr->fid));
	if (b->tx_mr)
		FDT_OK(fi_close(&b->tx_mr->fid));
	b->rx_mr = b->tx_mr = NULL;
}

static void flt_msg_send(struct fdt_side *s, struct flt_bufs *b, int slot, size_t len)
{
	struct fi_cq_data_entry ce;
	struct fi_cq_err_entry err = { 0 };
	ssize_t rc;

	do {
		rc = fi_send(s->ep, b->tx[slot], len, fi_mr_desc(b->tx_mr), 0,
			     (void *)(uintptr_t)(100 + slot));
	} while (rc == -FI_EAGAIN);
	FDT_OK(rc);
	rc = fdt_wait_cq_ms(s->txcq, &ce, &err, 30000);
	FDT_ASSERT(rc == 1, "send completion: error %d (%s)", err.err, fi_strerror(err.err));
	FDT_ASSERT(ce.op_context == (void *)(uintptr_t)(100 + slot), "send context");
}

static int flt_msg_recv(struct fdt_side *s, size_t *len)
{
	struct fi_cq_data_entry ce;
	struct fi_cq_err_entry err = { 0 };
	int rc, slot;

	rc = fdt_wait_cq_ms(s->rxcq, &ce, &err, 30000);
	FDT_ASSERT(rc == 1, "receive completion: error %d (%s)", err.err, fi_strerror(err.err));
	slot = (int)(uintptr_t)ce.op_context - 1;
	FDT_ASSERT(slot >= 0 && slot < FLT_MSG_SLOTS, "receive context %p", ce.op_context);
	*len = ce.len;
	return slot;
}

static void flt_msg_repost(struct fdt_side *s, struct flt_bufs *b, int slot)
{
	FDT_OK(fi_recv(s->ep, b->rx[slot], FLT_MSG_SIZE, fi_mr_desc(b->rx_mr), 0,
		       (void *)(uintptr_t)(slot + 1)));
}

void flt_exchange(struct fdt_side *s, enum flt_kind kind, struct flt_bufs *b,
		  int rounds, uint32_t seed)
{
	if (kind == FLT_MSG) {
		for (int i = 0; i < rounds; i++) {
			size_t len = FLT_MSG_SIZE - (size_t)(i % 7) * 500;
			size_t got;
			int slot;

			if (!s->is_server) {
				fdt_fill(b->tx[0], len, seed + (uint32_t)i);
				flt_msg_send(s, b, 0, len);
				slot = flt_msg_recv(s, &got);
				FDT_ASSERT(got == len && fdt_check(b->rx[slot], len,
								   ~(seed + (uint32_t)i)),
					   "echo %d: %zu bytes, wrong contents", i, got);
			} else {
				slot = flt_msg_recv(s, &got);
				FDT_ASSERT(got == len && fdt_check(b->rx[slot], len,
								   seed + (uint32_t)i),
					   "message %d: %zu bytes, wrong contents", i, got);
				fdt_fill(b->tx[0], len, ~(seed + (uint32_t)i));
				flt_msg_send(s, b, 0, len);
			}
			flt_msg_repost(s, b, slot);
		}
		return;
	}
#ifdef FLT_HAVE_RSTREAM
	{
		static uint8_t out[65536], in[65536];

		for (int i = 0; i < rounds; i++) {
			rst_gen(out, 0, sizeof(out), seed + (uint64_t)i + (s->is_server ? 7777 : 0));
			if (!s->is_server) {
				rst_send_all(s->ep, out, sizeof(out));
				rst_recv_all(s->ep, in, sizeof(in));
			} else {
				rst_recv_all(s->ep, in, sizeof(in));
				rst_send_all(s->ep, out, sizeof(out));
			}
			rst_gen(out, 0, sizeof(out), seed + (uint64_t)i + (s->is_server ? 0 : 7777));
			FDT_ASSERT(!memcmp(in, out, sizeof(in)), "stream round %d: wrong bytes", i);
		}
	}
#else
	FDT_FAIL("rstream is not built");
#endif
}
