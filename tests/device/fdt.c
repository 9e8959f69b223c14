#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "fdt.h"

const char *fdt_addr(void)
{
	const char *addr = getenv("FD_RXE_ADDR0");
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	if (!addr || n == 0) {
		printf("SKIP: no verbs device (run under tests/rxe/run)\n");
		exit(FDT_SKIP);
	}
	return addr;
}

struct fi_info *fdt_hints(void)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		FDT_FAIL("fi_allocinfo");
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	/* Both are modes this library can live without; upstream's verbs
	 * provider insists on FI_RX_CQ_DATA for remote CQ data. */
	hints->mode = FI_CONTEXT | FI_RX_CQ_DATA;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("verbs");
	/* Inside one Soft-RoCE VM only rxe0 carries traffic (rxe loops it
	 * back); a library that would pick rxe1 for the client could not
	 * reach the server, so name the device. */
	if (getenv("FD_RXE_DEV0"))
		hints->domain_attr->name = strdup(getenv("FD_RXE_DEV0"));
	return hints;
}

/* The client names its source address too: with the destination local,
 * RDMA CM would otherwise pick a device for the source by itself (upstream
 * libfabric lets it, and it may pick rxe1, which cannot reach rxe0). */
static void fdt_client_getinfo(const char *addr, const char *port,
			       struct fi_info *hints, struct fi_info **info)
{
	struct fi_info *h = fi_dupinfo(hints);
	struct sockaddr_in *src = calloc(1, sizeof(*src));

	if (!h || !src)
		FDT_FAIL("out of memory");
	src->sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &src->sin_addr) != 1)
		FDT_FAIL("FD_RXE_ADDR0 %s is not an IPv4 address", addr);
	free(h->src_addr);
	h->src_addr = src;
	h->src_addrlen = sizeof(*src);
	h->addr_format = FI_SOCKADDR_IN;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, port, 0, h, info));
	fi_freeinfo(h);
}

static int fdt_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	fprintf(stderr, "client killed by signal %d\n", WTERMSIG(status));
	return 1;
}

/* The fork comes before any verbs call: a child must not inherit device
 * contexts opened by its parent (verbs refuses commands on them). */
/* FDT_ROLE=server runs only the server and prints "FDT_PORT <port>";
 * FDT_ROLE=client with FDT_PORT=<port> runs only the client. Two builds of
 * one test (this library, upstream libfabric) then talk to each other. */
static int fdt_run_role(const char *role, struct fi_info *hints, fdt_fn server,
			fdt_fn client, void *arg);

int fdt_run_pair(struct fi_info *hints, fdt_fn server, fdt_fn client, void *arg)
{
	struct fdt_side srv, cli;
	const char *addr = fdt_addr();
	char port[16] = "";
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss);
	int pfd[2], status, rc;
	pid_t pid;

	if (getenv("FDT_ROLE"))
		return fdt_run_role(getenv("FDT_ROLE"), hints, server, client, arg);
	if (pipe(pfd))
		FDT_FAIL("pipe");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		FDT_FAIL("fork");
	if (pid == 0) {
		close(pfd[1]);
		if (read(pfd[0], port, sizeof(port) - 1) <= 0)
			_exit(1);	/* the server failed before listening */
		memset(&cli, 0, sizeof(cli));
		cli.hints = hints;
		fdt_client_getinfo(addr, port, hints, &cli.info);
		FDT_OK(fi_fabric(cli.info->fabric_attr, &cli.fabric, NULL));
		{
			struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };

			FDT_OK(fi_eq_open(cli.fabric, &ea, &cli.eq, NULL));
		}
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
	{
		struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };

		FDT_OK(fi_eq_open(srv.fabric, &ea, &srv.eq, NULL));
	}
	FDT_OK(fi_passive_ep(srv.fabric, srv.info, &srv.pep, NULL));
	FDT_OK(fi_pep_bind(srv.pep, &srv.eq->fid, 0));
	FDT_OK(fi_listen(srv.pep));
	FDT_OK(fi_getname(&srv.pep->fid, &ss, &sslen));
	snprintf(port, sizeof(port), "%u",
		 ntohs(((struct sockaddr_in *)&ss)->sin_port));
	if (write(pfd[1], port, strlen(port)) < 0)
		FDT_FAIL("write");
	close(pfd[1]);
	rc = server(&srv, arg);
	if (rc) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return rc;
	}
	if (waitpid(pid, &status, 0) < 0)
		FDT_FAIL("waitpid");
	return fdt_exit_code(status);
}

static int fdt_run_role(const char *role, struct fi_info *hints, fdt_fn server,
			fdt_fn client, void *arg)
{
	struct fdt_side side;
	const char *addr = fdt_addr();
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss);

	memset(&side, 0, sizeof(side));
	side.hints = hints;
	if (!strcmp(role, "server")) {
		/* Listen on every address: a peer library may pick either rxe
		 * device for its side, and inside one VM rxe0 and rxe1 cannot
		 * reach each other's addresses. */
		const char *node = getenv("FDT_LISTEN_ANY") ? NULL : addr;

		side.is_server = 1;
		FDT_OK(fi_getinfo(FI_VERSION(1, 17), node, "0", FI_SOURCE, hints, &side.info));
		FDT_OK(fi_fabric(side.info->fabric_attr, &side.fabric, NULL));
		FDT_OK(fi_eq_open(side.fabric, &ea, &side.eq, NULL));
		FDT_OK(fi_passive_ep(side.fabric, side.info, &side.pep, NULL));
		FDT_OK(fi_pep_bind(side.pep, &side.eq->fid, 0));
		FDT_OK(fi_listen(side.pep));
		FDT_OK(fi_getname(&side.pep->fid, &ss, &sslen));
		printf("FDT_PORT %u\n", ntohs(((struct sockaddr_in *)&ss)->sin_port));
		fflush(stdout);
		return server(&side, arg);
	}
	if (!strcmp(role, "client") && getenv("FDT_PORT")) {
		fdt_client_getinfo(addr, getenv("FDT_PORT"), hints, &side.info);
		FDT_OK(fi_fabric(side.info->fabric_attr, &side.fabric, NULL));
		FDT_OK(fi_eq_open(side.fabric, &ea, &side.eq, NULL));
		return client(&side, arg);
	}
	FDT_FAIL("FDT_ROLE must be server, or client with FDT_PORT set");
}

struct fdt_pair_args {
	struct fi_info *hints;
	fdt_fn server, client;
	void *arg;
};

static int fdt_pair_in_child(void *p)
{
	struct fdt_pair_args *a = p;

	return fdt_run_pair(a->hints, a->server, a->client, a->arg);
}

int fdt_run_pair_fresh(struct fi_info *hints, fdt_fn server, fdt_fn client, void *arg)
{
	struct fdt_pair_args a = { hints, server, client, arg };

	return fdt_run_isolated(fdt_pair_in_child, &a);
}

static int fdt_now_ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

ssize_t fdt_wait_event(struct fdt_side *side, uint32_t event, void *buf, size_t len)
{
	uint32_t got;
	ssize_t rc;

	rc = fi_eq_sread(side->eq, &got, buf, len, 10000, 0);
	if (rc == -FI_EAVAIL) {
		struct fi_eq_err_entry err = { 0 };

		fi_eq_readerr(side->eq, &err, 0);
		FDT_FAIL("waiting for event %u: error %d (%s), prov_errno %d",
			 event, err.err, fi_strerror(err.err), err.prov_errno);
	}
	if (rc < 0)
		FDT_FAIL("fi_eq_sread for event %u: %s", event, fi_strerror((int)-rc));
	if (got != event)
		FDT_FAIL("expected event %u, got %u", event, got);
	return rc;
}

void fdt_open_ep(struct fdt_side *side, struct fi_info *info)
{
	struct fi_cq_attr ca = { 0 };

	if (!side->domain)
		FDT_OK(fi_domain(side->fabric, info, &side->domain, NULL));
	ca.size = side->cq_size ? side->cq_size : 512;
	ca.format = side->cq_format ? side->cq_format : FI_CQ_FORMAT_DATA;
	ca.wait_obj = FI_WAIT_UNSPEC;
	FDT_OK(fi_cq_open(side->domain, &ca, &side->txcq, NULL));
	FDT_OK(fi_cq_open(side->domain, &ca, &side->rxcq, NULL));
	FDT_OK(fi_endpoint(side->domain, info, &side->ep, NULL));
	FDT_OK(fi_ep_bind(side->ep, &side->eq->fid, 0));
	FDT_OK(fi_ep_bind(side->ep, &side->txcq->fid, FI_TRANSMIT | side->tx_bind_flags));
	FDT_OK(fi_ep_bind(side->ep, &side->rxcq->fid, FI_RECV | side->rx_bind_flags));
	FDT_OK(fi_enable(side->ep));
}

static void fdt_check_cm_data(const uint8_t *got, size_t got_len,
			      const struct fdt_cm_data *expect)
{
	if (!expect)
		return;
	if (got_len != expect->len || (expect->len && memcmp(got, expect->data, expect->len)))
		FDT_FAIL("CM data mismatch: got %zu bytes, expected %zu", got_len, expect->len);
}

void fdt_server_accept(struct fdt_side *side, const struct fdt_cm_data *in_expect,
		       const struct fdt_cm_data *reply, fdt_hook pre, void *arg)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *entry = (struct fi_eq_cm_entry *)buf;
	ssize_t n;

	n = fdt_wait_event(side, FI_CONNREQ, buf, sizeof(buf));
	FDT_ASSERT(entry->info && entry->info->handle, "CONNREQ without info/handle");
	FDT_ASSERT(entry->fid == &side->pep->fid, "CONNREQ fid is not the pep");
	fdt_check_cm_data(entry->data, (size_t)n - sizeof(*entry), in_expect);
	fdt_open_ep(side, entry->info);
	fi_freeinfo(entry->info);
	if (pre)
		pre(side, arg);
	FDT_OK(fi_accept(side->ep, reply ? reply->data : NULL, reply ? reply->len : 0));
	n = fdt_wait_event(side, FI_CONNECTED, buf, sizeof(buf));
	FDT_ASSERT(entry->fid == &side->ep->fid, "CONNECTED fid is not the ep");
}

void fdt_client_connect(struct fdt_side *side, const struct fdt_cm_data *data,
			const struct fdt_cm_data *reply_expect, fdt_hook pre, void *arg)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *entry = (struct fi_eq_cm_entry *)buf;
	ssize_t n;

	fdt_open_ep(side, side->info);
	if (pre)
		pre(side, arg);
	FDT_OK(fi_connect(side->ep, side->info->dest_addr,
			  data ? data->data : NULL, data ? data->len : 0));
	n = fdt_wait_event(side, FI_CONNECTED, buf, sizeof(buf));
	FDT_ASSERT(entry->fid == &side->ep->fid, "CONNECTED fid is not the ep");
	fdt_check_cm_data(entry->data, (size_t)n - sizeof(*entry), reply_expect);
}

int fdt_wait_cq(struct fid_cq *cq, void *entry, struct fi_cq_err_entry *err)
{
	struct timespec t0;
	ssize_t rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		rc = fi_cq_read(cq, entry, 1);
		if (rc == 1)
			return 1;
		if (rc == -FI_EAVAIL) {
			struct fi_cq_err_entry tmp;

			if (!err)
				err = &tmp;
			memset(err, 0, sizeof(*err));
			FDT_ASSERT(fi_cq_readerr(cq, err, 0) == 1, "fi_cq_readerr");
			return -FI_EAVAIL;
		}
		if (rc != -FI_EAGAIN)
			FDT_FAIL("fi_cq_read: %s", fi_strerror((int)-rc));
		if (fdt_now_ms_since(&t0) > 10000)
			FDT_FAIL("no completion within 10 s");
	}
}

struct fid_mr *fdt_reg(struct fdt_side *side, void *buf, size_t len, uint64_t access)
{
	struct fid_mr *mr;

	FDT_OK(fi_mr_reg(side->domain, buf, len, access, 0, 0, 0, &mr, NULL));
	return mr;
}

static void fdt_close(struct fid *fid, const char *what)
{
	int rc;

	if (!fid)
		return;
	rc = fi_close(fid);
	if (rc)
		FDT_FAIL("fi_close(%s): %s", what, fi_strerror(-rc));
}

void fdt_close_side(struct fdt_side *side)
{
	fdt_close(side->ep ? &side->ep->fid : NULL, "ep");
	fdt_close(side->pep ? &side->pep->fid : NULL, "pep");
	fdt_close(side->txcq ? &side->txcq->fid : NULL, "txcq");
	fdt_close(side->rxcq ? &side->rxcq->fid : NULL, "rxcq");
	fdt_close(side->domain ? &side->domain->fid : NULL, "domain");
	fdt_close(side->eq ? &side->eq->fid : NULL, "eq");
	fdt_close(side->fabric ? &side->fabric->fid : NULL, "fabric");
	fi_freeinfo(side->info);
	memset(side, 0, sizeof(*side));
}

void fdt_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

int fdt_check(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *p = buf;
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		if (p[i] != (uint8_t)(x >> 16))
			return 0;
	}
	return 1;
}

/* ---- RMA and multi-connection helpers ---- */

static void fdt_put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t fdt_get_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

void fdt_region_pack(void *wire, const void *buf, size_t len, struct fid_mr *mr)
{
	uint8_t *p = wire;

	fdt_put_be64(p, (uint64_t)(uintptr_t)buf);
	fdt_put_be64(p + 8, fi_mr_key(mr));
	fdt_put_be64(p + 16, (uint64_t)len);
}

void fdt_region_unpack(struct fdt_region *r, const void *wire)
{
	const uint8_t *p = wire;

	r->addr = fdt_get_be64(p);
	r->key = fdt_get_be64(p + 8);
	r->len = fdt_get_be64(p + 16);
}

size_t fdt_client_connect_reply(struct fdt_side *side, const struct fdt_cm_data *data,
				void *reply, size_t reply_max, fdt_hook pre, void *arg)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *entry = (struct fi_eq_cm_entry *)buf;
	size_t got;
	ssize_t n;

	fdt_open_ep(side, side->info);
	if (pre)
		pre(side, arg);
	FDT_OK(fi_connect(side->ep, side->info->dest_addr,
			  data ? data->data : NULL, data ? data->len : 0));
	n = fdt_wait_event(side, FI_CONNECTED, buf, sizeof(buf));
	FDT_ASSERT(entry->fid == &side->ep->fid, "CONNECTED fid is not the ep");
	got = (size_t)n - sizeof(*entry);
	if (reply)
		memcpy(reply, entry->data, got < reply_max ? got : reply_max);
	return got;
}

/* fdt_run_multi's children are reaped by a watcher thread, so a client
 * that fails ends the whole run at once instead of leaving the server
 * waiting out its timeouts. A thread, not a SIGCHLD handler: a signal
 * would interrupt the server's blocking reads. */
struct fdt_watch {
	int n;
	pid_t pid[8];
	int status[8];
};

static void *fdt_watch_children(void *arg)
{
	struct fdt_watch *w = arg;

	for (int k = 0; k < w->n; k++) {
		int status, i;
		pid_t pid = waitpid(-1, &status, 0);

		if (pid < 0)
			break;
		for (i = 0; i < w->n && w->pid[i] != pid; i++)
			;
		if (i == w->n)
			continue;
		w->status[i] = status;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			int code = fdt_exit_code(status);

			fprintf(stderr, "client %d failed (%d): ending the run\n", i, code);
			for (int j = 0; j < w->n; j++)
				if (j != i)
					kill(w->pid[j], SIGKILL);
			fflush(NULL);
			_exit(code ? code : 1);
		}
	}
	return NULL;
}

int fdt_run_multi(struct fi_info *hints, fdt_fn server, fdt_fn client,
		  int nclients, void *arg)
{
	struct fdt_watch watch = { 0 };
	pthread_t watcher;
	const char *addr = fdt_addr();
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss);
	struct fdt_side srv;
	char port[16] = "";
	int pfd[8][2], rc;
	pid_t *pid = watch.pid;

	FDT_ASSERT(nclients > 0 && nclients <= 8, "1..8 clients, not %d", nclients);
	fflush(NULL);
	/* Every fork before the server touches the device (see fdt_run_pair). */
	for (int i = 0; i < nclients; i++) {
		if (pipe(pfd[i]))
			FDT_FAIL("pipe");
		pid[i] = fork();
		if (pid[i] < 0)
			FDT_FAIL("fork");
		if (pid[i] == 0) {
			struct fdt_side cli;
			struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };

			for (int j = 0; j < i; j++)
				close(pfd[j][1]);
			close(pfd[i][1]);
			if (read(pfd[i][0], port, sizeof(port) - 1) <= 0)
				_exit(1);
			memset(&cli, 0, sizeof(cli));
			cli.hints = hints;
			cli.client_index = i;
			fdt_client_getinfo(addr, port, hints, &cli.info);
			FDT_OK(fi_fabric(cli.info->fabric_attr, &cli.fabric, NULL));
			FDT_OK(fi_eq_open(cli.fabric, &ea, &cli.eq, NULL));
			rc = client(&cli, arg);
			fflush(NULL);
			_exit(rc);
		}
		close(pfd[i][0]);
	}
	watch.n = nclients;
	if (pthread_create(&watcher, NULL, fdt_watch_children, &watch))
		FDT_FAIL("pthread_create");
	memset(&srv, 0, sizeof(srv));
	srv.is_server = 1;
	srv.hints = hints;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, "0", FI_SOURCE, hints, &srv.info));
	FDT_OK(fi_fabric(srv.info->fabric_attr, &srv.fabric, NULL));
	{
		struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };

		FDT_OK(fi_eq_open(srv.fabric, &ea, &srv.eq, NULL));
	}
	FDT_OK(fi_passive_ep(srv.fabric, srv.info, &srv.pep, NULL));
	FDT_OK(fi_pep_bind(srv.pep, &srv.eq->fid, 0));
	FDT_OK(fi_listen(srv.pep));
	FDT_OK(fi_getname(&srv.pep->fid, &ss, &sslen));
	snprintf(port, sizeof(port), "%u",
		 ntohs(((struct sockaddr_in *)&ss)->sin_port));
	for (int i = 0; i < nclients; i++) {
		if (write(pfd[i][1], port, strlen(port)) < 0)
			FDT_FAIL("write");
		close(pfd[i][1]);
	}
	rc = server(&srv, arg);
	if (rc) {
		for (int i = 0; i < nclients; i++)
			kill(pid[i], SIGKILL);
		fflush(NULL);
		_exit(rc);	/* the watcher would take the kills for failures */
	}
	/* the watcher returns once every client has exited 0 */
	pthread_join(watcher, NULL);
	/* what the server left open: its listener, EQ, fabric and info (the
	 * leak checker counts them otherwise) */
	fdt_close_side(&srv);
	return 0;
}

void fdt_server_accept_many(struct fdt_side *base, struct fdt_side *conns, int n,
			    const struct fdt_cm_data *reply, fdt_hook pre, void *arg)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *entry = (struct fi_eq_cm_entry *)buf;
	int accepted = 0, connected = 0;
	uint32_t event;
	ssize_t rc;

	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (connected < n) {
		rc = fi_eq_sread(base->eq, &event, buf, sizeof(buf), 1000, 0);
		/* clients start slowly under emulation: allow a minute in all */
		if ((rc == -FI_EAGAIN || rc == -FI_ETIMEDOUT) &&
		    fdt_now_ms_since(&t0) < 60000)
			continue;
		if (rc == -FI_EAVAIL) {
			struct fi_eq_err_entry err = { 0 };

			fi_eq_readerr(base->eq, &err, 0);
			FDT_FAIL("accepting %d connections: error %d (%s), prov_errno %d",
				 n, err.err, fi_strerror(err.err), err.prov_errno);
		}
		if (rc < 0)
			FDT_FAIL("fi_eq_sread while accepting: %s", fi_strerror((int)-rc));
		if (event == FI_CONNREQ) {
			struct fdt_side *c;

			FDT_ASSERT(accepted < n, "more connection requests than %d", n);
			FDT_ASSERT(entry->info && entry->info->handle, "CONNREQ without handle");
			c = &conns[accepted++];
			memset(c, 0, sizeof(*c));
			c->hints = base->hints;
			c->fabric = base->fabric;
			c->domain = base->domain;
			c->eq = base->eq;
			c->cq_format = base->cq_format;
			c->cq_size = base->cq_size;
			c->tx_bind_flags = base->tx_bind_flags;
			c->rx_bind_flags = base->rx_bind_flags;
			c->is_server = 1;
			c->client_index = accepted - 1;
			fdt_open_ep(c, entry->info);
			base->domain = c->domain;
			fi_freeinfo(entry->info);
			if (pre)
				pre(c, arg);
			FDT_OK(fi_accept(c->ep, reply ? reply->data : NULL,
					 reply ? reply->len : 0));
		} else if (event == FI_CONNECTED) {
			int i;

			for (i = 0; i < accepted; i++)
				if (entry->fid == &conns[i].ep->fid)
					break;
			FDT_ASSERT(i < accepted, "FI_CONNECTED for an unknown endpoint");
			connected++;
		} else {
			FDT_FAIL("unexpected event %u while accepting", event);
		}
	}
}

void fdt_close_conn(struct fdt_side *side)
{
	fdt_close(side->ep ? &side->ep->fid : NULL, "ep");
	fdt_close(side->txcq ? &side->txcq->fid : NULL, "txcq");
	fdt_close(side->rxcq ? &side->rxcq->fid : NULL, "rxcq");
	side->ep = NULL;
	side->txcq = NULL;
	side->rxcq = NULL;
}

void fdt_client_reset(struct fdt_side *side)
{
	struct fi_eq_attr ea = { .wait_obj = FI_WAIT_UNSPEC };

	fdt_close_conn(side);
	fdt_close(side->eq ? &side->eq->fid : NULL, "eq");
	side->eq = NULL;
	FDT_OK(fi_eq_open(side->fabric, &ea, &side->eq, NULL));
}

int fdt_wait_cq_ms(struct fid_cq *cq, void *entry, struct fi_cq_err_entry *err, int ms)
{
	struct timespec t0;
	ssize_t rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		rc = fi_cq_read(cq, entry, 1);
		if (rc == 1)
			return 1;
		if (rc == -FI_EAVAIL) {
			struct fi_cq_err_entry tmp;

			if (!err)
				err = &tmp;
			memset(err, 0, sizeof(*err));
			FDT_ASSERT(fi_cq_readerr(cq, err, 0) == 1, "fi_cq_readerr");
			return -FI_EAVAIL;
		}
		if (rc != -FI_EAGAIN)
			FDT_FAIL("fi_cq_read: %s", fi_strerror((int)-rc));
		if (fdt_now_ms_since(&t0) > ms)
			FDT_FAIL("no completion within %d ms", ms);
	}
}

void fdt_cq_expect_quiet(struct fid_cq *cq, int ms, const char *what)
{
	struct fi_cq_data_entry e[4];
	struct timespec t0;
	ssize_t rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		rc = fi_cq_read(cq, e, 1);
		if (rc == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			fi_cq_readerr(cq, &err, 0);
			FDT_FAIL("%s: unexpected error completion %d (%s)", what,
				 err.err, fi_strerror(err.err));
		}
		if (rc > 0)
			FDT_FAIL("%s: unexpected completion, context %p flags 0x%llx",
				 what, e[0].op_context, (unsigned long long)e[0].flags);
		if (rc != -FI_EAGAIN)
			FDT_FAIL("%s: fi_cq_read: %s", what, fi_strerror((int)-rc));
	} while (fdt_now_ms_since(&t0) < ms);
}

void fdt_wait_shutdown(struct fdt_side *side)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];

	fdt_wait_event(side, FI_SHUTDOWN, buf, sizeof(buf));
}

int fdt_run_isolated(int (*fn)(void *arg), void *arg)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		FDT_FAIL("fork");
	if (pid == 0) {
		int rc = fn(arg);

		fflush(NULL);
		_exit(rc);
	}
	if (waitpid(pid, &status, 0) < 0)
		FDT_FAIL("waitpid");
	return fdt_exit_code(status);
}
