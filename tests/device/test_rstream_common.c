/* Helpers for the rstream device tests; see test_rstream_common.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "test_rstream_common.h"

struct rst_opts rst_opt;
pid_t rst_peer_pid;
int rst_peer_killed;

void rst_parse_args(int argc, char **argv, uint64_t default_bytes)
{
	rst_opt.bytes = default_bytes;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iwarp"))
			rst_opt.iwarp = 1;
		else if (!strcmp(argv[i], "--ring") && i + 1 < argc)
			rst_opt.ring = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--mib") && i + 1 < argc)
			rst_opt.bytes = strtoull(argv[++i], NULL, 0) << 20;
		else
			FDT_FAIL("usage: %s [--iwarp] [--ring BYTES] [--mib N]", argv[0]);
	}
}

struct fi_info *rst_hints(void)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		FDT_FAIL("fi_allocinfo");
	hints->ep_attr->type = FI_EP_SOCK_STREAM;
	hints->caps = FI_MSG;
	if (rst_opt.iwarp)
		hints->ep_attr->protocol = FI_PROTO_IWARP;
	hints->fabric_attr->prov_name = strdup("verbs;rstream");
	return hints;
}

long rst_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

uint32_t rst_rand(void)
{
	/* per thread: a sender and a receiver thread both draw chunk sizes */
	static _Thread_local uint64_t s;

	if (!s)
		s = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull | 1;
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return (uint32_t)(s >> 11);
}

void rst_set_rings(struct fid_ep *ep, void *arg)
{
	size_t sz = *(size_t *)arg;

	FDT_OK(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_SEND_BUF_SIZE, &sz, sizeof(sz)));
	FDT_OK(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_RECV_BUF_SIZE, &sz, sizeof(sz)));
}

static void rst_open(struct fdt_side *s, struct fi_info *info, rst_setup_fn setup,
		     void *arg)
{
	if (!s->domain)
		FDT_OK(fi_domain(s->fabric, info, &s->domain, NULL));
	FDT_OK(fi_endpoint(s->domain, info, &s->ep, NULL));
	FDT_OK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	if (setup)
		setup(s->ep, arg);
	FDT_OK(fi_enable(s->ep));
}

static void rst_check_cm(const struct fi_eq_cm_entry *e, size_t got,
			 const void *cm, size_t cmlen)
{
	if (!cm)
		return;
	FDT_ASSERT(got == cmlen && !memcmp(e->data, cm, cmlen),
		   "CM data: got %zu bytes, expected %zu", got, cmlen);
}

void rst_accept(struct fdt_side *s, rst_setup_fn setup, void *arg,
		const void *cm, size_t cmlen)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 128];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)buf;
	ssize_t n;

	n = fdt_wait_event(s, FI_CONNREQ, buf, sizeof(buf));
	FDT_ASSERT(e->fid == &s->pep->fid, "FI_CONNREQ names the pep");
	FDT_ASSERT(e->info && e->info->handle, "FI_CONNREQ carries info and handle");
	FDT_ASSERT(e->info->ep_attr->type == FI_EP_SOCK_STREAM, "stream info");
	rst_check_cm(e, (size_t)n - sizeof(*e), cm, cmlen);
	rst_open(s, e->info, setup, arg);
	fi_freeinfo(e->info);
	FDT_OK(fi_accept(s->ep, cm, cm ? cmlen : 0));
	fdt_wait_event(s, FI_CONNECTED, buf, sizeof(buf));
	FDT_ASSERT(e->fid == &s->ep->fid, "FI_CONNECTED names the ep");
}

void rst_connect(struct fdt_side *s, rst_setup_fn setup, void *arg,
		 const void *cm, size_t cmlen)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 128];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)buf;
	ssize_t n;

	rst_open(s, s->info, setup, arg);
	FDT_OK(fi_connect(s->ep, s->info->dest_addr, cm, cm ? cmlen : 0));
	n = fdt_wait_event(s, FI_CONNECTED, buf, sizeof(buf));
	FDT_ASSERT(e->fid == &s->ep->fid, "FI_CONNECTED names the ep");
	rst_check_cm(e, (size_t)n - sizeof(*e), cm, cmlen);
}

long rst_poll_timeouts;

int rst_poll(struct fid_ep *ep, int ms)
{
	struct pollfd pfd = { .events = POLLIN };
	int rc;

	FDT_OK(fi_control(&ep->fid, FI_GETWAIT, &pfd.fd));
	do {
		rc = poll(&pfd, 1, ms);
	} while (rc < 0 && errno == EINTR);
	FDT_ASSERT(rc >= 0, "poll: %s", strerror(errno));
	if (!rc)
		rst_poll_timeouts++;
	return rc > 0;
}

#define RST_STALL_MS 20000

void rst_send_all(struct fid_ep *ep, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	long last = rst_now_ms();

	while (len) {
		ssize_t n = fi_send(ep, p, len, NULL, 0, NULL);

		if (n > 0) {
			FDT_ASSERT((size_t)n <= len, "send accepted %zd of %zu", n, len);
			p += n;
			len -= (size_t)n;
			last = rst_now_ms();
			continue;
		}
		if (n != -FI_EAGAIN)
			FDT_FAIL("fi_send: %zd (%s)", n, fi_strerror((int)-n));
		FDT_ASSERT(rst_now_ms() - last < RST_STALL_MS, "send stalled");
		rst_poll(ep, 1000);
	}
}

void rst_recv_all(struct fid_ep *ep, void *buf, size_t len)
{
	uint8_t *p = buf;
	long last = rst_now_ms();

	while (len) {
		ssize_t n = fi_recv(ep, p, len, NULL, 0, NULL);

		if (n > 0) {
			FDT_ASSERT((size_t)n <= len, "recv delivered %zd of %zu", n, len);
			p += n;
			len -= (size_t)n;
			last = rst_now_ms();
			continue;
		}
		if (n == 0)
			FDT_FAIL("end of stream with %zu bytes still expected", len);
		if (n != -FI_EAGAIN)
			FDT_FAIL("fi_recv: %zd (%s)", n, fi_strerror((int)-n));
		FDT_ASSERT(rst_now_ms() - last < RST_STALL_MS, "recv stalled");
		rst_poll(ep, 1000);
	}
}

static uint64_t rst_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void rst_gen(uint8_t *buf, uint64_t pos, size_t n, uint64_t seed)
{
	while (n) {
		uint64_t w = rst_mix(pos / 8 ^ seed << 40);
		unsigned i = (unsigned)(pos % 8);

		for (; i < 8 && n; i++, n--, pos++)
			*buf++ = (uint8_t)(w >> (8 * i));
	}
}

uint64_t rst_fnv(uint64_t h, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int rst_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	fprintf(stderr, "client killed by signal %d\n", WTERMSIG(status));
	return 1;
}

int rst_run_pair(struct fi_info *hints, fdt_fn server, fdt_fn client, void *arg)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss);
	const char *addr = fdt_addr();
	struct fdt_side srv, cli;
	char port[16] = "";
	int pfd[2], status, rc;

	if (pipe(pfd))
		FDT_FAIL("pipe");
	fflush(NULL);
	/* Fork before any verbs call, as fdt_run_pair does. */
	rst_peer_pid = fork();
	if (rst_peer_pid < 0)
		FDT_FAIL("fork");
	if (rst_peer_pid == 0) {
		close(pfd[1]);
		if (read(pfd[0], port, sizeof(port) - 1) <= 0)
			_exit(1);
		memset(&cli, 0, sizeof(cli));
		cli.hints = hints;
		FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, port, 0, hints, &cli.info));
		FDT_OK(fi_fabric(cli.info->fabric_attr, &cli.fabric, NULL));
		FDT_OK(fi_eq_open(cli.fabric, &ea, &cli.eq, NULL));
		rc = client(&cli, arg);
		fflush(NULL);
		_exit(rc);
	}
	close(pfd[0]);
	memset(&srv, 0, sizeof(srv));
	srv.is_server = 1;
	srv.hints = hints;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, "0", FI_SOURCE, hints, &srv.info));
	FDT_OK(fi_fabric(srv.info->fabric_attr, &srv.fabric, NULL));
	FDT_OK(fi_eq_open(srv.fabric, &ea, &srv.eq, NULL));
	FDT_OK(fi_passive_ep(srv.fabric, srv.info, &srv.pep, NULL));
	FDT_OK(fi_pep_bind(srv.pep, &srv.eq->fid, 0));
	FDT_OK(fi_listen(srv.pep));
	FDT_OK(fi_getname(&srv.pep->fid, &ss, &sslen));
	snprintf(port, sizeof(port), "%u", ntohs(((struct sockaddr_in *)&ss)->sin_port));
	if (write(pfd[1], port, strlen(port)) < 0)
		FDT_FAIL("write");
	close(pfd[1]);
	rc = server(&srv, arg);
	if (rc && !rst_peer_killed)
		kill(rst_peer_pid, SIGKILL);
	if (waitpid(rst_peer_pid, &status, 0) < 0)
		FDT_FAIL("waitpid");
	if (rc || rst_peer_killed)
		return rc;
	return rst_exit_code(status);
}
