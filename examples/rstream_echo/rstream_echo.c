/*
 * rstream_echo: a byte stream over RDMA with FI_EP_SOCK_STREAM endpoints.
 *
 *   rstream_echo [-b ADDR] [-p PORT]                  server
 *   rstream_echo [-p PORT] [-S SIZE] SERVER-ADDR      client
 *
 * The server sends back every byte it receives until the client hangs up.
 * The client streams SIZE bytes (default 1 MiB, many times the 32 KiB
 * rings), reads the echo while it is still sending, checks it, and hangs
 * up.
 *
 * A stream endpoint behaves like a non-blocking socket: no completion
 * queue and no memory registration; fi_send and fi_recv move what they can
 * now and return that many bytes (a short count is normal), -FI_EAGAIN
 * when nothing can move, and fi_recv returns 0 once the peer has shut
 * down and everything it sent was read.  fi_control(FI_GETWAIT) gives a
 * file descriptor to poll() when neither direction can move.
 *
 * Needs fabric-direct configured with -DFABRIC_DIRECT_RSTREAM=ON.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#define API_VERSION FI_VERSION(1, 17)
#define TIMEOUT_MS 20000
#define CHUNK 8192	/* bytes asked for per fi_recv / fi_send */

#define CHECK(call)							\
	do {								\
		int check_ret_ = (int)(call);				\
		if (check_ret_) {					\
			fprintf(stderr, "%s:%d: %s: %d (%s)\n",		\
				__FILE__, __LINE__, #call, check_ret_,	\
				fi_strerror(-check_ret_));		\
			exit(1);					\
		}							\
	} while (0)

struct ctx {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_ep *ep;
	int waitfd;		/* readable when the endpoint may move again */
};

static void wait_event(struct ctx *c, uint32_t want,
		       struct fi_eq_cm_entry *entry)
{
	uint32_t event;
	ssize_t rd;

	rd = fi_eq_sread(c->eq, &event, entry, sizeof(*entry), TIMEOUT_MS, 0);
	if (rd == -FI_EAVAIL) {
		struct fi_eq_err_entry err = { 0 };

		fi_eq_readerr(c->eq, &err, 0);
		fprintf(stderr, "connection error: %s\n", fi_strerror(err.err));
		exit(1);
	}
	if (rd < 0 || event != want) {
		fprintf(stderr, "waiting for event %u: got %zd/%u\n", want, rd,
			event);
		exit(1);
	}
}

/* Nothing could move: sleep until the endpoint says it may. */
static void wait_ready(struct ctx *c)
{
	struct pollfd pfd = { .fd = c->waitfd, .events = POLLIN };
	int n = poll(&pfd, 1, TIMEOUT_MS);

	if (n == 0) {
		fprintf(stderr, "stream stalled for %d ms\n", TIMEOUT_MS);
		exit(1);
	}
	if (n < 0) {
		perror("poll");
		exit(1);
	}
}

static struct fi_info *make_hints(void)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		exit(1);
	hints->ep_attr->type = FI_EP_SOCK_STREAM;
	hints->caps = FI_MSG;
	return hints;
}

static void open_endpoint(struct ctx *c)
{
	CHECK(fi_domain(c->fabric, c->info, &c->domain, NULL));
	CHECK(fi_endpoint(c->domain, c->info, &c->ep, NULL));
	CHECK(fi_ep_bind(c->ep, &c->eq->fid, 0));
	CHECK(fi_enable(c->ep));
	CHECK(fi_control(&c->ep->fid, FI_GETWAIT, &c->waitfd));
}

static void print_listening(const struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		port = ntohs(sin->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		port = ntohs(sin6->sin6_port);
	}
	printf("listening on %s port %u\n", host, port);
	fflush(stdout);
}

static void server(struct ctx *c, const char *bind_addr, const char *port)
{
	struct fi_info *hints = make_hints();
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_cm_entry entry;
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss), have = 0, off = 0, total = 0;
	static char buf[CHUNK];

	CHECK(fi_getinfo(API_VERSION, bind_addr, port, FI_SOURCE, hints,
			 &c->info));
	fi_freeinfo(hints);
	CHECK(fi_fabric(c->info->fabric_attr, &c->fabric, NULL));
	CHECK(fi_eq_open(c->fabric, &eq_attr, &c->eq, NULL));
	CHECK(fi_passive_ep(c->fabric, c->info, &c->pep, NULL));
	CHECK(fi_pep_bind(c->pep, &c->eq->fid, 0));
	CHECK(fi_listen(c->pep));
	CHECK(fi_getname(&c->pep->fid, &ss, &sslen));
	print_listening(&ss);

	wait_event(c, FI_CONNREQ, &entry);
	fi_freeinfo(c->info);
	c->info = entry.info;
	open_endpoint(c);
	CHECK(fi_accept(c->ep, NULL, 0));
	wait_event(c, FI_CONNECTED, &entry);

	/* Echo: read a chunk, write all of it back, repeat until the end of
	 * the stream. */
	for (;;) {
		ssize_t n;

		if (off < have) {
			n = fi_send(c->ep, buf + off, have - off, NULL, 0,
				    NULL);
			if (n > 0)
				off += (size_t)n;
		} else {
			n = fi_recv(c->ep, buf, sizeof(buf), NULL, 0, NULL);
			if (n == 0)
				break;	/* the client hung up */
			if (n > 0) {
				have = (size_t)n;
				off = 0;
				total += have;
			}
		}
		if (n == -FI_EAGAIN)
			wait_ready(c);
		else if (n < 0) {
			fprintf(stderr, "server: %s\n",
				fi_strerror((int)-n));
			exit(1);
		}
	}
	printf("server: echoed %zu bytes\n", total);
}

static char pattern(size_t i)
{
	return (char)(i * 7 + i / 251);
}

static void client(struct ctx *c, const char *server_addr, const char *port,
		   size_t size)
{
	struct fi_info *hints = make_hints();
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_cm_entry entry;
	size_t sent = 0, got = 0;
	char out[CHUNK], in[CHUNK];

	CHECK(fi_getinfo(API_VERSION, server_addr, port, 0, hints, &c->info));
	fi_freeinfo(hints);
	CHECK(fi_fabric(c->info->fabric_attr, &c->fabric, NULL));
	CHECK(fi_eq_open(c->fabric, &eq_attr, &c->eq, NULL));
	open_endpoint(c);
	CHECK(fi_connect(c->ep, NULL, NULL, 0));
	wait_event(c, FI_CONNECTED, &entry);

	/* Send and receive in one loop: the echo comes back while we still
	 * send, and a sender that never reads would fill both directions'
	 * rings and stall. */
	while (got < size) {
		ssize_t ns = -FI_EAGAIN, nr;

		if (sent < size) {
			size_t len = size - sent < CHUNK ? size - sent : CHUNK;

			for (size_t i = 0; i < len; i++)
				out[i] = pattern(sent + i);
			ns = fi_send(c->ep, out, len, NULL, 0, NULL);
			if (ns > 0)
				sent += (size_t)ns;
			else if (ns != -FI_EAGAIN) {
				fprintf(stderr, "client send: %s\n",
					fi_strerror((int)-ns));
				exit(1);
			}
		}
		nr = fi_recv(c->ep, in, sizeof(in), NULL, 0, NULL);
		if (nr > 0) {
			for (ssize_t i = 0; i < nr; i++) {
				if (in[i] != pattern(got + (size_t)i)) {
					fprintf(stderr, "byte %zu differs\n",
						got + (size_t)i);
					exit(1);
				}
			}
			got += (size_t)nr;
		} else if (nr == 0) {
			fprintf(stderr, "server closed the stream early\n");
			exit(1);
		} else if (nr != -FI_EAGAIN) {
			fprintf(stderr, "client recv: %s\n",
				fi_strerror((int)-nr));
			exit(1);
		}
		if (ns == -FI_EAGAIN && nr == -FI_EAGAIN)
			wait_ready(c);
	}
	printf("client: %zu bytes echoed intact\n", got);
	CHECK(fi_shutdown(c->ep, 0));
}

int main(int argc, char **argv)
{
	const char *port = "9230", *bind_addr = NULL;
	size_t size = 1 << 20;
	struct ctx c = { .waitfd = -1 };
	int opt, is_server;

	while ((opt = getopt(argc, argv, "b:p:S:h")) != -1) {
		switch (opt) {
		case 'b':
			bind_addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'S':
			size = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-b bind-addr] [-p port] "
				"[-S size] [server-addr]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	is_server = optind >= argc;
	if (is_server)
		server(&c, bind_addr, port);
	else
		client(&c, argv[optind], port, size);

	CHECK(fi_close(&c.ep->fid));
	if (c.pep)
		CHECK(fi_close(&c.pep->fid));
	CHECK(fi_close(&c.eq->fid));
	CHECK(fi_close(&c.domain->fid));
	CHECK(fi_close(&c.fabric->fid));
	fi_freeinfo(c.info);
	printf("%s: ok\n", is_server ? "server" : "client");
	return 0;
}
