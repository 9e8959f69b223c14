/* Addresses and the listen backlog a program sets itself (issue 16):
 *  setname  the server binds its passive endpoint with fi_setname before
 *           fi_listen, the client its active endpoint before fi_enable,
 *           each to a port of its choosing; fi_getname returns those, the
 *           server sees the client's port as the peer's, and a message
 *           crosses the connection. Malformed addresses are -FI_EINVAL,
 *           one no device has -FI_EADDRNOTAVAIL, and a failed fi_setname
 *           leaves the endpoint usable.
 *  backlog  fi_control(FI_BACKLOG, 1) before fi_listen: with two clients'
 *           requests arriving while the server reads nothing, the kernel
 *           queues one and drops the other (with the default backlog both
 *           reach the EQ at once, which is how this fails without
 *           FI_BACKLOG); the dropped one comes back by the client CM's
 *           retry once the first was read, and both connect. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdt.h"

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static struct sockaddr_in local_addr(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (inet_pton(AF_INET, fdt_addr(), &sin.sin_addr) != 1)
		FDT_FAIL("FD_RXE_ADDR0 %s is not an IPv4 address", fdt_addr());
	return sin;
}

static void expect_name(struct fid *fid, const struct sockaddr_in *want, const char *what)
{
	struct sockaddr_in got;
	size_t len = sizeof(got);

	FDT_OK(fi_getname(fid, &got, &len));
	FDT_ASSERT(len == sizeof(got) && got.sin_family == AF_INET &&
		   got.sin_addr.s_addr == want->sin_addr.s_addr &&
		   got.sin_port == want->sin_port,
		   "%s: fi_getname gives port %u, fi_setname set %u", what,
		   ntohs(got.sin_port), ntohs(want->sin_port));
}

static void bad_names(struct fid *fid)
{
	struct sockaddr_in sin = local_addr(0);
	struct sockaddr_in far = { .sin_family = AF_INET };

	FDT_EXPECT(fi_setname(fid, NULL, sizeof(sin)), -FI_EINVAL);
	FDT_EXPECT(fi_setname(fid, &sin, sizeof(sin) - 2), -FI_EINVAL);
	sin.sin_family = AF_UNIX;
	FDT_EXPECT(fi_setname(fid, &sin, sizeof(sin)), -FI_EINVAL);
	/* TEST-NET-1 (RFC 5737): no device of this host has it */
	far.sin_addr.s_addr = htonl(0xc0000201);
	FDT_EXPECT(fi_setname(fid, &far, sizeof(far)), -FI_EADDRNOTAVAIL);
}

/* Open fabric, EQ and passive endpoint on FD_RXE_ADDR0 port 0. */
static void open_listener(struct fdt_side *s, struct fi_info *hints)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };

	s->is_server = 1;
	s->hints = hints;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), fdt_addr(), "0", FI_SOURCE, hints, &s->info));
	FDT_OK(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
	FDT_OK(fi_eq_open(s->fabric, &ea, &s->eq, NULL));
	FDT_OK(fi_passive_ep(s->fabric, s->info, &s->pep, NULL));
}

/* The client's side up to an endpoint that is not enabled yet. */
static void client_open(struct fdt_side *s, struct fi_info *hints, uint16_t port)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_attr ca = { .size = 64, .format = FI_CQ_FORMAT_DATA,
				 .wait_obj = FI_WAIT_UNSPEC };
	struct fi_info *h = fi_dupinfo(hints);
	struct sockaddr_in *src = calloc(1, sizeof(*src));
	char service[16];

	FDT_ASSERT(h && src, "out of memory");
	*src = local_addr(0);
	free(h->src_addr);
	h->src_addr = src;
	h->src_addrlen = sizeof(*src);
	h->addr_format = FI_SOCKADDR_IN;
	snprintf(service, sizeof(service), "%u", port);
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), fdt_addr(), service, 0, h, &s->info));
	fi_freeinfo(h);
	FDT_OK(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
	FDT_OK(fi_eq_open(s->fabric, &ea, &s->eq, NULL));
	FDT_OK(fi_domain(s->fabric, s->info, &s->domain, NULL));
	FDT_OK(fi_cq_open(s->domain, &ca, &s->txcq, NULL));
	FDT_OK(fi_cq_open(s->domain, &ca, &s->rxcq, NULL));
	FDT_OK(fi_endpoint(s->domain, s->info, &s->ep, NULL));
}

static void client_connect(struct fdt_side *s)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];

	FDT_OK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	FDT_OK(fi_ep_bind(s->ep, &s->txcq->fid, FI_TRANSMIT));
	FDT_OK(fi_ep_bind(s->ep, &s->rxcq->fid, FI_RECV));
	FDT_OK(fi_enable(s->ep));
	FDT_OK(fi_connect(s->ep, s->info->dest_addr, NULL, 0));
	fdt_wait_event(s, FI_CONNECTED, buf, sizeof(buf));
}

static uint16_t read_port(int fd)
{
	uint16_t port;

	if (read(fd, &port, sizeof(port)) != sizeof(port))
		_exit(1);	/* the server failed before listening */
	return port;
}

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		FDT_FAIL("waitpid");
	if (!WIFEXITED(status)) {
		fprintf(stderr, "child killed by signal %d\n", WTERMSIG(status));
		return 1;
	}
	return WEXITSTATUS(status);
}

/* ---- setname ---- */

static int setname_client(int rfd, uint16_t cport)
{
	struct fdt_side s = { 0 };
	struct fi_info *hints = fdt_hints();
	struct sockaddr_in me = local_addr(cport);
	static uint8_t sbuf[64];
	struct fid_mr *mr;
	struct fi_cq_data_entry e;

	client_open(&s, hints, read_port(rfd));
	bad_names(&s.ep->fid);
	FDT_OK(fi_setname(&s.ep->fid, &me, sizeof(me)));
	expect_name(&s.ep->fid, &me, "active endpoint");
	client_connect(&s);
	expect_name(&s.ep->fid, &me, "connected endpoint");
	mr = fdt_reg(&s, sbuf, sizeof(sbuf), FI_SEND);
	fdt_fill(sbuf, sizeof(sbuf), 42);
	FDT_OK(fi_send(s.ep, sbuf, sizeof(sbuf), fi_mr_desc(mr), 0, sbuf));
	FDT_ASSERT(fdt_wait_cq(s.txcq, &e, NULL) == 1, "send");
	fdt_wait_shutdown(&s);
	fi_close(&mr->fid);
	fdt_close_side(&s);
	fi_freeinfo(hints);
	return 0;
}

static int run_setname(void *arg)
{
	struct fdt_side s = { 0 };
	struct fi_info *hints = fdt_hints();
	uint16_t sport = (uint16_t)(20000 + getpid() % 20000), cport = sport + 1;
	struct sockaddr_in me = local_addr(sport), peer;
	size_t len = sizeof(peer);
	static uint8_t rbuf[64];
	struct fid_mr *mr;
	struct fi_cq_data_entry e;
	int pfd[2], rc;
	pid_t pid;

	(void)arg;
	FDT_ASSERT(!pipe(pfd), "pipe");
	pid = fork();
	if (pid == 0) {
		close(pfd[1]);
		_exit(setname_client(pfd[0], cport));
	}
	close(pfd[0]);
	open_listener(&s, hints);
	bad_names(&s.pep->fid);
	FDT_OK(fi_setname(&s.pep->fid, &me, sizeof(me)));
	expect_name(&s.pep->fid, &me, "passive endpoint");
	FDT_OK(fi_pep_bind(s.pep, &s.eq->fid, 0));
	FDT_OK(fi_listen(s.pep));
	expect_name(&s.pep->fid, &me, "listening endpoint");
	FDT_ASSERT(write(pfd[1], &sport, sizeof(sport)) == sizeof(sport), "write");

	fdt_server_accept(&s, NULL, NULL, NULL, NULL);
	FDT_OK(fi_getpeer(s.ep, &peer, &len));
	FDT_ASSERT(ntohs(peer.sin_port) == cport, "peer port %u, the client set %u",
		   ntohs(peer.sin_port), cport);
	mr = fdt_reg(&s, rbuf, sizeof(rbuf), FI_RECV);
	FDT_OK(fi_recv(s.ep, rbuf, sizeof(rbuf), fi_mr_desc(mr), 0, rbuf));
	FDT_ASSERT(fdt_wait_cq(s.rxcq, &e, NULL) == 1, "receive");
	FDT_ASSERT(e.len == sizeof(rbuf) && fdt_check(rbuf, sizeof(rbuf), 42), "message");
	FDT_OK(fi_shutdown(s.ep, 0));
	rc = wait_child(pid);
	fi_close(&mr->fid);
	fdt_close_side(&s);
	fi_freeinfo(hints);
	printf("setname: listener on port %u, client from port %u: connected, message checked\n",
	       sport, cport);
	return rc;
}

/* ---- FI_BACKLOG ---- */

/* Connects (the request may have to be retried by the CM) and waits for
 * the server's shutdown. */
static int backlog_client(int rfd, int wfd)
{
	struct fdt_side s = { 0 };
	struct fi_info *hints = fdt_hints();
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_eq_err_entry err = { 0 };
	uint32_t event;
	ssize_t n;

	client_open(&s, hints, read_port(rfd));
	FDT_OK(fi_ep_bind(s.ep, &s.eq->fid, 0));
	FDT_OK(fi_ep_bind(s.ep, &s.txcq->fid, FI_TRANSMIT));
	FDT_OK(fi_ep_bind(s.ep, &s.rxcq->fid, FI_RECV));
	FDT_OK(fi_enable(s.ep));
	FDT_OK(fi_connect(s.ep, s.info->dest_addr, NULL, 0));
	FDT_ASSERT(write(wfd, "c", 1) == 1, "write");
	n = fi_eq_sread(s.eq, &event, buf, sizeof(buf), 40000, 0);
	if (n == -FI_EAVAIL) {
		FDT_ASSERT(fi_eq_readerr(s.eq, &err, 0) > 0, "readerr");
		FDT_FAIL("connect failed with %d (%s)", err.err, fi_strerror(err.err));
	}
	FDT_ASSERT(n > 0 && event == FI_CONNECTED, "event %u n %zd", event, n);
	fdt_wait_shutdown(&s);
	fdt_close_side(&s);
	fi_freeinfo(hints);
	return 0;
}

static int run_backlog(void *arg)
{
	struct fdt_side s = { 0 }, s2 = { 0 };
	struct fi_info *hints = fdt_hints();
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)(void *)buf;
	struct timespec t0;
	struct sockaddr_in me;
	size_t len = sizeof(me);
	uint32_t event;
	int backlog = 1, to_clients[2], from_clients[2], rc[2];
	pid_t pid[2];
	uint16_t port;
	char c;
	ssize_t n;

	(void)arg;
	FDT_ASSERT(!pipe(to_clients) && !pipe(from_clients), "pipe");
	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			close(to_clients[1]);
			close(from_clients[0]);
			_exit(backlog_client(to_clients[0], from_clients[1]));
		}
	}
	close(to_clients[0]);
	close(from_clients[1]);
	open_listener(&s, hints);
	FDT_EXPECT(fi_control(&s.pep->fid, FI_BACKLOG, &(int){ 0 }), -FI_EINVAL);
	FDT_OK(fi_control(&s.pep->fid, FI_BACKLOG, &backlog));
	FDT_OK(fi_pep_bind(s.pep, &s.eq->fid, 0));
	FDT_OK(fi_listen(s.pep));
	FDT_EXPECT(fi_control(&s.pep->fid, FI_BACKLOG, &backlog), -FI_EOPBADSTATE);
	FDT_OK(fi_getname(&s.pep->fid, &me, &len));
	port = ntohs(me.sin_port);
	for (int i = 0; i < 2; i++)
		FDT_ASSERT(write(to_clients[1], &port, sizeof(port)) == sizeof(port), "write");
	/* Both requests are on their way once both connects returned; the
	 * kernel handles a request as it arrives, the EQ reads nothing yet. */
	for (int i = 0; i < 2; i++)
		FDT_ASSERT(read(from_clients[0], &c, 1) == 1, "a client failed to connect");
	usleep(500 * 1000);
	fdt_server_accept(&s, NULL, NULL, NULL, NULL);
	/* The request past the backlog was dropped by the kernel: nothing
	 * more reaches the EQ while the first waits... */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	n = fi_eq_sread(s.eq, &event, buf, sizeof(buf), 1000, 0);
	FDT_ASSERT(n == -FI_EAGAIN, "a second event %u (n %zd): the backlog of 1 let it in",
		   event, n);
	/* ...and the client's CM retries it: now that the queue has room it
	 * comes in, and is accepted too. */
	n = fi_eq_sread(s.eq, &event, buf, sizeof(buf), 30000, 0);
	FDT_ASSERT(n > 0 && event == FI_CONNREQ, "the retried request: event %u n %zd",
		   event, n);
	printf("FI_BACKLOG 1: second request held back, arrived by a CM retry %ld ms later\n",
	       ms_since(&t0) + 500);
	s2.fabric = s.fabric;
	s2.eq = s.eq;
	s2.domain = s.domain;
	fdt_open_ep(&s2, cm->info);
	fi_freeinfo(cm->info);
	FDT_OK(fi_accept(s2.ep, NULL, 0));
	fdt_wait_event(&s2, FI_CONNECTED, buf, sizeof(buf));
	FDT_OK(fi_shutdown(s.ep, 0));
	FDT_OK(fi_shutdown(s2.ep, 0));
	for (int i = 0; i < 2; i++) {
		rc[i] = wait_child(pid[i]);
		if (rc[i])
			return rc[i];
	}
	fdt_close_conn(&s2);
	fdt_close_side(&s);
	fi_freeinfo(hints);
	return 0;
}

int main(void)
{
	int rc;

	(void)fdt_addr();	/* 77 without a device */
	rc = fdt_run_isolated(run_setname, NULL);
	if (rc)
		return rc;
	return fdt_run_isolated(run_backlog, NULL);
}
