/* A MSG connection over Soft-RoCE on an IPv6 address (issue 16): the
 * server listens on the address (fi_getinfo with FI_SOURCE, FI_SOCKADDR_IN6),
 * the client connects from it, fi_getname/fi_getpeer give IPv6 addresses,
 * and a message goes each way with every byte checked.
 *
 * The address: FD_RXE_ADDR6 if set (already on the device's netdev), else,
 * inside the harness's VM, a unique local address (RFC 4193) this test adds
 * to FD_RXE_NETDEV0 (nodad: usable at once) and removes at the end. rxe
 * serves it once the address shows in the port's GID table; if it never
 * does, that is printed and the test skips (77). Anywhere else with no
 * address given it skips too, saying so. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdt.h"

#define ULA "fd00:198:18::1"

static char addr6[INET6_ADDRSTRLEN];
static bool added;

static void sh(const char *fmt, const char *a, const char *b)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	printf("+ %s\n", cmd);
	fflush(stdout);
	if (system(cmd) != 0)
		printf("  (failed)\n");
}

/* Whether the port's GID table holds addr (rdma_cm resolves an IPv6
 * address to the device through it, as RoCE v2 addresses it by GID). */
static bool gid_present(const char *dev, const struct in6_addr *a)
{
	char path[128], line[64], want[64];
	struct dirent *d;
	DIR *dir;
	bool found = false;

	snprintf(want, sizeof(want),
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 a->s6_addr[0], a->s6_addr[1], a->s6_addr[2], a->s6_addr[3],
		 a->s6_addr[4], a->s6_addr[5], a->s6_addr[6], a->s6_addr[7],
		 a->s6_addr[8], a->s6_addr[9], a->s6_addr[10], a->s6_addr[11],
		 a->s6_addr[12], a->s6_addr[13], a->s6_addr[14], a->s6_addr[15]);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gids", dev);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!found && (d = readdir(dir))) {
		char p[400];
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, d->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) && !strncmp(line, want, strlen(want)))
			found = true;
		fclose(f);
	}
	closedir(dir);
	return found;
}

static void cleanup(void)
{
	if (added)
		sh("ip -6 addr del %s/64 dev %s", addr6, getenv("FD_RXE_NETDEV0"));
}

static int setup_address(void)
{
	const char *given = getenv("FD_RXE_ADDR6");
	const char *netdev = getenv("FD_RXE_NETDEV0");
	const char *dev = getenv("FD_RXE_DEV0") ? getenv("FD_RXE_DEV0") : "rxe0";
	const char *mode = getenv("FD_RXE_MODE");
	struct in6_addr a;

	(void)fdt_addr();	/* 77 without a device */
	if (given) {
		snprintf(addr6, sizeof(addr6), "%s", given);
	} else if (mode && !strcmp(mode, "vm") && netdev) {
		snprintf(addr6, sizeof(addr6), "%s", ULA);
		sh("ip -6 addr add %s/64 dev %s nodad", addr6, netdev);
		added = true;
		atexit(cleanup);
	} else {
		printf("SKIP: no IPv6 address to test (set FD_RXE_ADDR6, or run in the VM)\n");
		return FDT_SKIP;
	}
	FDT_ASSERT(inet_pton(AF_INET6, addr6, &a) == 1, "%s is not an IPv6 address", addr6);
	for (int i = 0; i < 300 && !gid_present(dev, &a); i++)
		usleep(10000);
	if (!gid_present(dev, &a)) {
		printf("SKIP: %s never appeared in %s's GID table: Soft-RoCE does not "
		       "serve it here\n", addr6, dev);
		if (netdev)
			sh("ip -6 addr show dev %s%s", netdev, "");
		return FDT_SKIP;
	}
	printf("%s is in %s's GID table\n", addr6, dev);
	return 0;
}

static struct sockaddr_in6 sin6_of(uint16_t port)
{
	struct sockaddr_in6 s = { .sin6_family = AF_INET6, .sin6_port = htons(port) };

	FDT_ASSERT(inet_pton(AF_INET6, addr6, &s.sin6_addr) == 1, "address");
	return s;
}

static struct fi_info *hints6(void)
{
	struct fi_info *h = fdt_hints();

	h->addr_format = FI_SOCKADDR_IN6;
	return h;
}

static void check_v6(const struct sockaddr_in6 *sa, size_t len, const char *what)
{
	struct sockaddr_in6 want = sin6_of(0);
	char text[INET6_ADDRSTRLEN];

	FDT_ASSERT(len == sizeof(*sa) && sa->sin6_family == AF_INET6,
		   "%s: family %d length %zu", what, sa->sin6_family, len);
	inet_ntop(AF_INET6, &sa->sin6_addr, text, sizeof(text));
	FDT_ASSERT(!memcmp(&sa->sin6_addr, &want.sin6_addr, sizeof(want.sin6_addr)),
		   "%s: %s, not %s", what, text, addr6);
	printf("%s: [%s]:%u\n", what, text, ntohs(sa->sin6_port));
}

static uint8_t buf[2][256];

static void exchange(struct fdt_side *s, int first, uint32_t seed_out, uint32_t seed_in)
{
	struct fid_mr *mr = fdt_reg(s, buf, sizeof(buf), FI_SEND | FI_RECV);
	struct fi_cq_data_entry e, rx;

	FDT_OK(fi_recv(s->ep, buf[1], sizeof(buf[1]), fi_mr_desc(mr), 0, buf[1]));
	fdt_fill(buf[0], sizeof(buf[0]), seed_out);
	if (!first)
		FDT_ASSERT(fdt_wait_cq(s->rxcq, &rx, NULL) == 1, "receive");
	FDT_OK(fi_send(s->ep, buf[0], sizeof(buf[0]), fi_mr_desc(mr), 0, buf[0]));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1, "send");
	if (first)
		FDT_ASSERT(fdt_wait_cq(s->rxcq, &rx, NULL) == 1, "receive");
	FDT_ASSERT(rx.len == sizeof(buf[1]) && fdt_check(buf[1], sizeof(buf[1]), seed_in),
		   "message over IPv6");
	fi_close(&mr->fid);
}

static void pre_recv(struct fdt_side *s, void *arg)
{
	(void)s;
	(void)arg;
}

static int client(uint16_t port)
{
	struct fdt_side s = { 0 };
	struct fi_info *h = hints6();
	struct sockaddr_in6 *src = calloc(1, sizeof(*src)), peer, me;
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };
	size_t len;
	char service[16];

	FDT_ASSERT(src, "out of memory");
	*src = sin6_of(0);
	h->src_addr = src;
	h->src_addrlen = sizeof(*src);
	snprintf(service, sizeof(service), "%u", port);
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr6, service, 0, h, &s.info));
	FDT_ASSERT(s.info->addr_format == FI_SOCKADDR_IN6, "addr_format %u",
		   s.info->addr_format);
	FDT_OK(fi_fabric(s.info->fabric_attr, &s.fabric, NULL));
	FDT_OK(fi_eq_open(s.fabric, &ea, &s.eq, NULL));
	fdt_client_connect(&s, NULL, NULL, pre_recv, NULL);
	len = sizeof(me);
	FDT_OK(fi_getname(&s.ep->fid, &me, &len));
	check_v6(&me, len, "client fi_getname");
	len = sizeof(peer);
	FDT_OK(fi_getpeer(s.ep, &peer, &len));
	check_v6(&peer, len, "client fi_getpeer");
	FDT_ASSERT(ntohs(peer.sin6_port) == port, "peer port");
	exchange(&s, 1, 61, 62);
	fdt_wait_shutdown(&s);
	fdt_close_side(&s);
	fi_freeinfo(h);
	return 0;
}

static int run(void *arg)
{
	struct fdt_side s = { 0 };
	struct fi_info *h = hints6();
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };
	struct sockaddr_in6 name, peer;
	size_t len = sizeof(name);
	int pfd[2], status;
	uint16_t port;
	pid_t pid;

	(void)arg;
	FDT_ASSERT(!pipe(pfd), "pipe");
	pid = fork();
	if (pid == 0) {
		close(pfd[1]);
		if (read(pfd[0], &port, sizeof(port)) != sizeof(port))
			_exit(1);
		_exit(client(port));
	}
	close(pfd[0]);
	s.is_server = 1;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr6, "0", FI_SOURCE, h, &s.info));
	FDT_ASSERT(s.info->addr_format == FI_SOCKADDR_IN6, "addr_format %u",
		   s.info->addr_format);
	FDT_OK(fi_fabric(s.info->fabric_attr, &s.fabric, NULL));
	FDT_OK(fi_eq_open(s.fabric, &ea, &s.eq, NULL));
	FDT_OK(fi_passive_ep(s.fabric, s.info, &s.pep, NULL));
	FDT_OK(fi_pep_bind(s.pep, &s.eq->fid, 0));
	FDT_OK(fi_listen(s.pep));
	FDT_OK(fi_getname(&s.pep->fid, &name, &len));
	check_v6(&name, len, "listener fi_getname");
	port = ntohs(name.sin6_port);
	FDT_ASSERT(write(pfd[1], &port, sizeof(port)) == sizeof(port), "write");
	fdt_server_accept(&s, NULL, NULL, NULL, NULL);
	len = sizeof(peer);
	FDT_OK(fi_getpeer(s.ep, &peer, &len));
	check_v6(&peer, len, "server fi_getpeer");
	exchange(&s, 0, 62, 61);
	FDT_OK(fi_shutdown(s.ep, 0));
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "client failed (status 0x%x)\n", status);
		return 1;
	}
	fdt_close_side(&s);
	fi_freeinfo(h);
	printf("IPv6: connected over %s, one message each way checked\n", addr6);
	return 0;
}

int main(void)
{
	int rc = setup_address();

	if (rc)
		return rc;
	return fdt_run_isolated(run, NULL);
}
