/*
 * rma_write: one-sided RDMA over a libfabric MSG endpoint.
 *
 *   rma_write [-b ADDR] [-p PORT] [-S SIZE]      server (the target)
 *   rma_write [-p PORT] [-S SIZE] SERVER-ADDR    client (the initiator)
 *
 * 1. The server registers a buffer for remote access and hands its
 *    address, key and size to the client in the connection's private data
 *    (fi_accept's param; the client finds it in its FI_CONNECTED event).
 * 2. The client writes the first half of a pattern with fi_write and the
 *    second half with fi_writedata.  The server's CPU takes no part in the
 *    writes; the remote CQ data of the second one (its length) consumes a
 *    receive the server posted and completes it, which is how the server
 *    learns the data is there (RC places the writes in order).
 * 3. The server checks the buffer and answers with a one-byte message
 *    (fi_inject); the client reads the buffer back with fi_read and checks
 *    it too.
 *
 * Plain libfabric 1.x code; see msg_pingpong.c for the connection basics.
 */
#define _DEFAULT_SOURCE	/* htobe64, be64toh */
#include <arpa/inet.h>
#include <endian.h>
#include <inttypes.h>
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
#include <rdma/fi_rma.h>

#define API_VERSION FI_VERSION(1, 17)
/* How long a wait may take before the example gives up: generous, as
 * the peer may still be starting up (loaded hosts, emulated devices). */
#define TIMEOUT_MS 60000

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

/* What the server tells the client when it accepts, in network byte order
 * so that the two sides need not share an architecture. 24 bytes: well
 * inside the 55 bytes of connection data verbs carries. */
struct region {
	uint64_t addr;	/* FI_MR_VIRT_ADDR: the buffer's virtual address */
	uint64_t key;	/* fi_mr_key() of its registration */
	uint64_t len;
};

struct ctx {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_mr *mr;
	char *buf;	/* server: the target; client: source | read-back */
	size_t size;
	char msg;	/* the one-byte "checked" message */
};

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Wait for a connection event with room for private data after it. */
static size_t wait_event(struct ctx *c, uint32_t want, void *buf, size_t len)
{
	uint32_t event;
	ssize_t rd;

	rd = fi_eq_sread(c->eq, &event, buf, len, TIMEOUT_MS, 0);
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
	return (size_t)rd;
}

/* One completion, with the details an RMA program cares about. */
static void wait_completion(struct ctx *c, struct fi_cq_data_entry *comp)
{
	double deadline = now_ms() + TIMEOUT_MS;
	ssize_t rd;

	while ((rd = fi_cq_read(c->cq, comp, 1)) == -FI_EAGAIN) {
		if (now_ms() > deadline) {
			fprintf(stderr, "no completion in %d ms\n", TIMEOUT_MS);
			exit(1);
		}
	}
	if (rd == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		fi_cq_readerr(c->cq, &err, 0);
		fprintf(stderr, "completion error: %s (provider: %s)\n",
			fi_strerror(err.err),
			fi_cq_strerror(c->cq, err.prov_errno, err.err_data,
				       NULL, 0));
		exit(1);
	}
	if (rd != 1) {
		fprintf(stderr, "fi_cq_read: %s\n", fi_strerror((int)-rd));
		exit(1);
	}
}

static struct fi_info *make_hints(void)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		exit(1);
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA;
	/*
	 * Remote CQ data arrives in a receive the target posted: FI_RX_CQ_DATA
	 * says this program knows, and cq_data_size asks for the data at all
	 * (verbs carries 4 bytes of it).
	 */
	hints->mode = FI_RX_CQ_DATA;
	hints->domain_attr->cq_data_size = 4;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("verbs");
	return hints;
}

static void open_endpoint(struct ctx *c, uint64_t access)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA,
				      .wait_obj = FI_WAIT_NONE };

	CHECK(fi_domain(c->fabric, c->info, &c->domain, NULL));
	CHECK(fi_cq_open(c->domain, &cq_attr, &c->cq, NULL));
	c->buf = calloc(1, 2 * c->size);
	if (!c->buf)
		exit(1);
	CHECK(fi_mr_reg(c->domain, c->buf, 2 * c->size, access, 0, 0, 0,
			&c->mr, NULL));
	CHECK(fi_endpoint(c->domain, c->info, &c->ep, NULL));
	CHECK(fi_ep_bind(c->ep, &c->eq->fid, 0));
	CHECK(fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_enable(c->ep));
}

static char pattern(size_t i)
{
	return (char)('a' + i % 26);
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
	struct fi_cq_data_entry comp;
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss);
	struct region r;

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

	wait_event(c, FI_CONNREQ, &entry, sizeof(entry));
	fi_freeinfo(c->info);
	c->info = entry.info;
	/* The buffer may be written and read by the peer; the local send
	 * of the answer comes from it too. */
	open_endpoint(c, FI_REMOTE_WRITE | FI_REMOTE_READ | FI_SEND | FI_RECV);
	/* The receive the remote CQ data will consume: it needs no buffer. */
	CHECK(fi_recv(c->ep, NULL, 0, NULL, 0, NULL));

	r.addr = htobe64((uint64_t)(uintptr_t)c->buf);
	r.key = htobe64(fi_mr_key(c->mr));
	r.len = htobe64(c->size);
	CHECK(fi_accept(c->ep, &r, sizeof(r)));
	wait_event(c, FI_CONNECTED, &entry, sizeof(entry));

	wait_completion(c, &comp);
	if (!(comp.flags & FI_REMOTE_CQ_DATA) || comp.data != c->size) {
		fprintf(stderr, "expected remote CQ data %zu, got flags 0x%" PRIx64
			" data %" PRIu64 "\n", c->size, comp.flags, comp.data);
		exit(1);
	}
	for (size_t i = 0; i < c->size; i++) {
		if (c->buf[i] != pattern(i)) {
			fprintf(stderr, "byte %zu not written\n", i);
			exit(1);
		}
	}
	printf("server: %zu bytes arrived by RDMA write\n", c->size);
	/* fi_inject: the byte is copied before the call returns, needs no
	 * registration and produces no completion. */
	c->msg = 'k';
	CHECK(fi_inject(c->ep, &c->msg, 1, 0));
	/* The client reads the buffer back, then hangs up. */
	wait_event(c, FI_SHUTDOWN, &entry, sizeof(entry));
}

static void client(struct ctx *c, const char *server_addr, const char *port)
{
	struct fi_info *hints = make_hints();
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_data_entry comp;
	struct fid_mr *msg_mr;
	struct region r;
	/* CONNECTED entry followed by the server's private data */
	union {
		struct fi_eq_cm_entry entry;
		uint8_t bytes[sizeof(struct fi_eq_cm_entry) + 64];
	} ev;
	size_t got, half = c->size / 2;
	void *desc;
	char *src, *back;

	CHECK(fi_getinfo(API_VERSION, server_addr, port, 0, hints, &c->info));
	fi_freeinfo(hints);
	CHECK(fi_fabric(c->info->fabric_attr, &c->fabric, NULL));
	CHECK(fi_eq_open(c->fabric, &eq_attr, &c->eq, NULL));
	open_endpoint(c, FI_WRITE | FI_READ);
	desc = fi_mr_desc(c->mr);
	src = c->buf;
	back = c->buf + c->size;

	/* The server's one-byte answer lands in its own small region. */
	CHECK(fi_mr_reg(c->domain, &c->msg, 1, FI_RECV, 0, 0, 0, &msg_mr,
			NULL));
	CHECK(fi_recv(c->ep, &c->msg, 1, fi_mr_desc(msg_mr), 0, NULL));

	CHECK(fi_connect(c->ep, NULL, NULL, 0));
	got = wait_event(c, FI_CONNECTED, &ev, sizeof(ev));
	if (got < sizeof(ev.entry) + sizeof(r)) {
		fprintf(stderr, "no region in the connection data\n");
		exit(1);
	}
	memcpy(&r, ev.entry.data, sizeof(r));
	r.addr = be64toh(r.addr);
	r.key = be64toh(r.key);
	r.len = be64toh(r.len);
	if (r.len < c->size) {
		fprintf(stderr, "server region is %" PRIu64 " bytes, need %zu\n",
			r.len, c->size);
		exit(1);
	}

	for (size_t i = 0; i < c->size; i++)
		src[i] = pattern(i);
	CHECK(fi_write(c->ep, src, half, desc, 0, r.addr, r.key, NULL));
	CHECK(fi_writedata(c->ep, src + half, c->size - half, desc,
			   c->size, 0, r.addr + half, r.key, NULL));
	wait_completion(c, &comp);
	wait_completion(c, &comp);
	wait_completion(c, &comp);	/* and the server's answer */
	if (c->msg != 'k') {
		fprintf(stderr, "server did not confirm\n");
		exit(1);
	}

	CHECK(fi_read(c->ep, back, c->size, desc, 0, r.addr, r.key, NULL));
	wait_completion(c, &comp);
	if (memcmp(src, back, c->size)) {
		fprintf(stderr, "read back differs from what was written\n");
		exit(1);
	}
	printf("client: wrote and read back %zu bytes at 0x%" PRIx64 "\n",
	       c->size, r.addr);
	CHECK(fi_shutdown(c->ep, 0));
	CHECK(fi_close(&msg_mr->fid));
}

int main(int argc, char **argv)
{
	const char *port = "9229", *bind_addr = NULL;
	struct ctx c = { .size = 1 << 20 };
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
			c.size = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-b bind-addr] [-p port] "
				"[-S size] [server-addr]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (c.size < 2)
		c.size = 2;
	is_server = optind >= argc;
	if (is_server)
		server(&c, bind_addr, port);
	else
		client(&c, argv[optind], port);

	CHECK(fi_close(&c.ep->fid));
	CHECK(fi_close(&c.mr->fid));
	CHECK(fi_close(&c.cq->fid));
	if (c.pep)
		CHECK(fi_close(&c.pep->fid));
	CHECK(fi_close(&c.eq->fid));
	CHECK(fi_close(&c.domain->fid));
	CHECK(fi_close(&c.fabric->fid));
	fi_freeinfo(c.info);
	free(c.buf);
	printf("%s: ok\n", is_server ? "server" : "client");
	return 0;
}
