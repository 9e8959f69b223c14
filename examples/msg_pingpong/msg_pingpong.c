/*
 * msg_pingpong: the smallest complete libfabric MSG program.
 *
 *   msg_pingpong [-b ADDR] [-p PORT] [-n ITERS] [-S SIZE]     server
 *   msg_pingpong [-p PORT] [-n ITERS] [-S SIZE] SERVER-ADDR   client
 *
 * The client sends SIZE bytes, the server sends them back, ITERS times;
 * both check every byte and the client prints the average one-way latency
 * (half a round trip).  PORT 0 makes the server pick a free port, which it
 * prints ("listening on ADDR port N").
 *
 * It is plain libfabric 1.x code: built against fabric-direct with
 * FABRIC_DIRECT=verbs, fi_send/fi_recv/fi_cq_read below compile to the
 * verbs provider's inline code; built with FABRIC_DIRECT=OFF (or against
 * upstream libfabric) the very same source goes through ops tables.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
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
/* How long a wait may take before the example gives up: generous, as
 * the peer may still be starting up (loaded hosts, emulated devices). */
#define TIMEOUT_MS 60000

/* Every call is checked; the first failure ends the program with its
 * libfabric error text, which is what a user needs to see. */
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
	struct fi_info *info;	/* what the connection uses */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_ep *ep;
	struct fid_cq *cq;	/* one CQ for sends and receives */
	struct fid_mr *mr;
	char *buf;		/* [send half | receive half] */
	size_t size;
	/* completions seen so far; the op_context tells them apart */
	unsigned long sends_done, recvs_done;
};

/* Contexts of the two kinds of operations: only their addresses matter. */
static char send_ctx, recv_ctx;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Wait for one connection event; an error entry is explained and fatal. */
static void wait_event(struct ctx *c, uint32_t want, struct fi_eq_cm_entry *entry)
{
	uint32_t event;
	ssize_t rd;

	rd = fi_eq_sread(c->eq, &event, entry, sizeof(*entry), TIMEOUT_MS, 0);
	if (rd == -FI_EAVAIL) {
		struct fi_eq_err_entry err = { 0 };

		fi_eq_readerr(c->eq, &err, 0);
		fprintf(stderr, "connection error: %s (provider: %s)\n",
			fi_strerror(err.err),
			fi_eq_strerror(c->eq, err.prov_errno, err.err_data,
				       NULL, 0));
		exit(1);
	}
	if (rd < 0) {
		fprintf(stderr, "fi_eq_sread: %s\n", fi_strerror((int)-rd));
		exit(1);
	}
	if (event != want) {
		fprintf(stderr, "unexpected event %u (wanted %u)\n", event, want);
		exit(1);
	}
}

/*
 * Busy-poll the CQ until *counter reaches target: the lowest latency there
 * is.  Sends and receives share the CQ and may complete in either order,
 * so each completion is counted by its kind.
 */
static void wait_for(struct ctx *c, unsigned long *counter,
		     unsigned long target)
{
	struct fi_cq_entry comp;
	double deadline = now_us() + TIMEOUT_MS * 1000.0;
	ssize_t rd;

	while (*counter < target) {
		rd = fi_cq_read(c->cq, &comp, 1);
		if (rd == 1) {
			if (comp.op_context == &send_ctx)
				c->sends_done++;
			else
				c->recvs_done++;
			continue;
		}
		if (rd == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			fi_cq_readerr(c->cq, &err, 0);
			fprintf(stderr, "completion error: %s (provider: %s)\n",
				fi_strerror(err.err),
				fi_cq_strerror(c->cq, err.prov_errno,
					       err.err_data, NULL, 0));
			exit(1);
		}
		if (rd != -FI_EAGAIN) {
			fprintf(stderr, "fi_cq_read: %s\n",
				fi_strerror((int)-rd));
			exit(1);
		}
		if (now_us() > deadline) {
			fprintf(stderr, "no completion in %d ms\n", TIMEOUT_MS);
			exit(1);
		}
	}
}

/* Domain, CQ, buffer and endpoint for c->info; the endpoint is enabled
 * and the first receive posted, so the peer may send the moment the
 * connection is up. */
static void setup_endpoint(struct ctx *c)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT,
				      .wait_obj = FI_WAIT_NONE };

	CHECK(fi_domain(c->fabric, c->info, &c->domain, NULL));
	CHECK(fi_cq_open(c->domain, &cq_attr, &c->cq, NULL));
	/* FI_MR_LOCAL: buffers the device touches must be registered,
	 * and each operation names its registration (fi_mr_desc). */
	c->buf = calloc(2, c->size ? c->size : 1);
	if (!c->buf) {
		perror("calloc");
		exit(1);
	}
	CHECK(fi_mr_reg(c->domain, c->buf, 2 * (c->size ? c->size : 1),
			FI_SEND | FI_RECV, 0, 0, 0, &c->mr, NULL));
	CHECK(fi_endpoint(c->domain, c->info, &c->ep, NULL));
	CHECK(fi_ep_bind(c->ep, &c->eq->fid, 0));
	CHECK(fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_enable(c->ep));
	CHECK(fi_recv(c->ep, c->buf + c->size, c->size, fi_mr_desc(c->mr),
		      0, &recv_ctx));
}

static struct fi_info *make_hints(void)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints) {
		fprintf(stderr, "fi_allocinfo failed\n");
		exit(1);
	}
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	/* What this program copes with: registered local buffers, remote
	 * addresses as virtual addresses, keys chosen by the provider. */
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("verbs");
	return hints;
}

static void run_server(struct ctx *c, const char *bind_addr, const char *port)
{
	struct fi_info *hints = make_hints();
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_cm_entry entry;
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int bound_port = 0;

	/* FI_SOURCE: node/service name the address to listen on. */
	CHECK(fi_getinfo(API_VERSION, bind_addr, port, FI_SOURCE, hints,
			 &c->info));
	fi_freeinfo(hints);
	CHECK(fi_fabric(c->info->fabric_attr, &c->fabric, NULL));
	CHECK(fi_eq_open(c->fabric, &eq_attr, &c->eq, NULL));
	CHECK(fi_passive_ep(c->fabric, c->info, &c->pep, NULL));
	CHECK(fi_pep_bind(c->pep, &c->eq->fid, 0));
	CHECK(fi_listen(c->pep));

	CHECK(fi_getname(&c->pep->fid, &ss, &sslen));
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		bound_port = ntohs(sin->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		bound_port = ntohs(sin6->sin6_port);
	}
	printf("listening on %s port %u\n", host, bound_port);
	fflush(stdout);

	/* The request's info names the device it arrived on: the domain
	 * is opened there, which also works when listening everywhere. */
	wait_event(c, FI_CONNREQ, &entry);
	fi_freeinfo(c->info);
	c->info = entry.info;
	setup_endpoint(c);
	CHECK(fi_accept(c->ep, NULL, 0));
	wait_event(c, FI_CONNECTED, &entry);
}

static void run_client(struct ctx *c, const char *server, const char *port)
{
	struct fi_info *hints = make_hints();
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_cm_entry entry;

	/* Without FI_SOURCE node/service name the peer: the answer says
	 * which local device and address reach it. */
	CHECK(fi_getinfo(API_VERSION, server, port, 0, hints, &c->info));
	fi_freeinfo(hints);
	CHECK(fi_fabric(c->info->fabric_attr, &c->fabric, NULL));
	CHECK(fi_eq_open(c->fabric, &eq_attr, &c->eq, NULL));
	setup_endpoint(c);
	CHECK(fi_connect(c->ep, NULL, NULL, 0));
	wait_event(c, FI_CONNECTED, &entry);
}

static void fill(char *p, size_t n, unsigned int iter)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)(iter * 31 + i);
}

static int check(const char *p, size_t n, unsigned int iter)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (char)(iter * 31 + i))
			return -1;
	return 0;
}

/* One exchange: the client speaks first, the server answers with what it
 * got.  A receive for the next message is posted before the reply goes
 * out, so the peer never finds no receive waiting. */
static void pingpong(struct ctx *c, int server, unsigned int iters)
{
	char *sbuf = c->buf, *rbuf = c->buf + c->size;
	void *desc = fi_mr_desc(c->mr);
	double t0 = 0;

	for (unsigned int i = 0; i < iters; i++) {
		if (i == 1)
			t0 = now_us();	/* the first round warms up */
		if (!server) {
			fill(sbuf, c->size, i);
			CHECK(fi_send(c->ep, sbuf, c->size, desc, 0,
				      &send_ctx));
		}
		wait_for(c, &c->recvs_done, i + 1);
		if (check(rbuf, c->size, i)) {
			fprintf(stderr, "iteration %u: wrong data\n", i);
			exit(1);
		}
		if (server) {
			/* the send buffer is free again: its last send has
			 * completed */
			wait_for(c, &c->sends_done, i);
			memcpy(sbuf, rbuf, c->size);
		}
		if (i + 1 < iters)
			CHECK(fi_recv(c->ep, rbuf, c->size, desc, 0,
				      &recv_ctx));
		if (server)
			CHECK(fi_send(c->ep, sbuf, c->size, desc, 0,
				      &send_ctx));
		else
			wait_for(c, &c->sends_done, i + 1);
	}
	wait_for(c, &c->sends_done, iters);
	if (!server && iters > 1)
		printf("%u x %zu bytes: %.2f us one-way (half round trip)\n",
		       iters - 1, c->size, (now_us() - t0) / (iters - 1) / 2);
}

/* The client hangs up; the server waits until it has. */
static void teardown(struct ctx *c, int server)
{
	struct fi_eq_cm_entry entry;

	if (server)
		wait_event(c, FI_SHUTDOWN, &entry);
	else
		CHECK(fi_shutdown(c->ep, 0));
	CHECK(fi_close(&c->ep->fid));
	CHECK(fi_close(&c->mr->fid));
	CHECK(fi_close(&c->cq->fid));
	if (c->pep)
		CHECK(fi_close(&c->pep->fid));
	CHECK(fi_close(&c->eq->fid));
	CHECK(fi_close(&c->domain->fid));
	CHECK(fi_close(&c->fabric->fid));
	fi_freeinfo(c->info);
	free(c->buf);
}

int main(int argc, char **argv)
{
	const char *port = "9228", *bind_addr = NULL;
	unsigned int iters = 1000;
	struct ctx c = { .size = 64 };
	int opt, server;

	while ((opt = getopt(argc, argv, "b:p:n:S:h")) != -1) {
		switch (opt) {
		case 'b':
			bind_addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'n':
			iters = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'S':
			c.size = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-b bind-addr] [-p port] "
				"[-n iterations] [-S size] [server-addr]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (iters == 0)
		iters = 1;
	server = optind >= argc;
	if (server)
		run_server(&c, bind_addr, port);
	else
		run_client(&c, argv[optind], port);
	pingpong(&c, server, iters);
	teardown(&c, server);
	printf("%s: ok\n", server ? "server" : "client");
	return 0;
}
