/* An active endpoint that takes over a passive endpoint's address
 * (fi_endpoint(3): info->handle set to the passive endpoint's fid; issue
 * 21, fabtests' fi_msg_sockets). The client reserves an address with a
 * passive endpoint on FD_RXE_ADDR0 and an ephemeral port, passes the
 * endpoint as hints->handle to fi_getinfo (which hands it back in
 * info->handle), opens its active endpoint from that info and closes the
 * passive one. fi_endpoint must succeed (it was -FI_EINVAL); the active
 * endpoint's fi_getname is the reserved address before and after the
 * connection, the server sees that port as the peer's (the client tells
 * it the port in the connect data), and a message crosses each way with
 * its bytes checked. Our build also checks the passive endpoint it took
 * the address from refuses further use, and a handle that is neither a
 * passive endpoint nor a connection request is -FI_EINVAL. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "fdt.h"

#define MSG_LEN 256

static void expect_addr(struct fid *fid, const struct sockaddr_in *want, const char *what)
{
	struct sockaddr_in got;
	size_t len = sizeof(got);

	memset(&got, 0, sizeof(got));
	FDT_OK(fi_getname(fid, &got, &len));
	FDT_ASSERT(len == sizeof(got) && got.sin_family == AF_INET &&
		   got.sin_addr.s_addr == want->sin_addr.s_addr &&
		   got.sin_port == want->sin_port,
		   "%s: fi_getname gives port %u, the passive endpoint had %u",
		   what, ntohs(got.sin_port), ntohs(want->sin_port));
}

static int server(struct fdt_side *s, void *arg)
{
	static uint8_t rbuf[MSG_LEN], sbuf[MSG_LEN];
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_eq_cm_entry *entry = (struct fi_eq_cm_entry *)(void *)buf;
	struct fi_cq_data_entry e;
	struct fid_mr *rmr, *smr;
	struct sockaddr_in peer;
	size_t len = sizeof(peer);
	uint16_t port_be;
	ssize_t n;

	(void)arg;
	n = fdt_wait_event(s, FI_CONNREQ, buf, sizeof(buf));
	FDT_ASSERT((size_t)n >= sizeof(*entry) + sizeof(port_be),
		   "connect data: %zd bytes", n - (ssize_t)sizeof(*entry));
	memcpy(&port_be, entry->data, sizeof(port_be));
	fdt_open_ep(s, entry->info);
	fi_freeinfo(entry->info);
	rmr = fdt_reg(s, rbuf, sizeof(rbuf), FI_RECV);
	FDT_OK(fi_recv(s->ep, rbuf, sizeof(rbuf), fi_mr_desc(rmr), 0, rbuf));
	FDT_OK(fi_accept(s->ep, NULL, 0));
	fdt_wait_event(s, FI_CONNECTED, buf, sizeof(buf));
	FDT_OK(fi_getpeer(s->ep, &peer, &len));
	FDT_ASSERT(peer.sin_port == port_be,
		   "the peer's port is %u, the client's passive endpoint had %u",
		   ntohs(peer.sin_port), ntohs(port_be));

	FDT_ASSERT(fdt_wait_cq(s->rxcq, &e, NULL) == 1, "receive");
	FDT_ASSERT(e.len == MSG_LEN && fdt_check(rbuf, MSG_LEN, 21), "client's message");
	smr = fdt_reg(s, sbuf, sizeof(sbuf), FI_SEND);
	fdt_fill(sbuf, sizeof(sbuf), 22);
	FDT_OK(fi_send(s->ep, sbuf, sizeof(sbuf), fi_mr_desc(smr), 0, sbuf));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1, "send");
	/* The side that sent last ends the connection once its send is
	 * complete: a peer that closed at once on receiving could take the
	 * acknowledgement with it. */
	FDT_OK(fi_shutdown(s->ep, 0));
	fi_close(&rmr->fid);
	fi_close(&smr->fid);
	fdt_close_side(s);
	printf("server: peer connected from port %u, messages checked both ways\n",
	       ntohs(port_be));
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	static uint8_t rbuf[MSG_LEN], sbuf[MSG_LEN];
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_info *pinfo, *hints, *info;
	struct fid_pep *pep;
	struct sockaddr_in bound;
	size_t len = sizeof(bound);
	struct fi_cq_attr ca = { .size = 64, .format = FI_CQ_FORMAT_DATA,
				 .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cq_data_entry e;
	struct fid_mr *rmr, *smr;
	uint16_t port_be;

	(void)arg;
	/* The reservation: a passive endpoint bound to the device's address
	 * and a port the kernel picks. */
	pinfo = fi_dupinfo(s->info);
	FDT_ASSERT(pinfo && pinfo->src_addr, "fi_dupinfo");
	((struct sockaddr_in *)pinfo->src_addr)->sin_port = 0;
	free(pinfo->dest_addr);
	pinfo->dest_addr = NULL;
	pinfo->dest_addrlen = 0;
	FDT_OK(fi_passive_ep(s->fabric, pinfo, &pep, NULL));
	fi_freeinfo(pinfo);
	memset(&bound, 0, sizeof(bound));
	FDT_OK(fi_getname(&pep->fid, &bound, &len));
	FDT_ASSERT(len == sizeof(bound) && bound.sin_port != 0,
		   "the passive endpoint has no port (len %zu)", len);

	/* fi_getinfo carries the passive endpoint through in info->handle.
	 * The hints name the device's address but not the port: upstream's
	 * fi_getinfo answered -FI_ENODATA with the passive endpoint's port in
	 * them (it resolves the route with an id of its own bound there). */
	hints = fi_dupinfo(s->hints);
	FDT_ASSERT(hints, "fi_dupinfo");
	hints->src_addr = malloc(sizeof(bound));
	FDT_ASSERT(hints->src_addr, "malloc");
	memcpy(hints->src_addr, &bound, sizeof(bound));
	((struct sockaddr_in *)hints->src_addr)->sin_port = 0;
	hints->src_addrlen = sizeof(bound);
	hints->addr_format = FI_SOCKADDR_IN;
	hints->handle = &pep->fid;
	{
		char node[INET_ADDRSTRLEN], service[16];
		const struct sockaddr_in *dst = s->info->dest_addr;

		inet_ntop(AF_INET, &dst->sin_addr, node, sizeof(node));
		snprintf(service, sizeof(service), "%u", ntohs(dst->sin_port));
		FDT_OK(fi_getinfo(FI_VERSION(1, 17), node, service, 0, hints, &info));
	}
	hints->handle = NULL;
	fi_freeinfo(hints);
	FDT_ASSERT(info->handle == &pep->fid, "fi_getinfo: handle %p, the passive endpoint is %p",
		   (void *)info->handle, (void *)&pep->fid);
	fi_freeinfo(s->info);
	s->info = info;

	FDT_OK(fi_domain(s->fabric, info, &s->domain, NULL));
#ifndef FDT_UPSTREAM
	{
		struct fid *h = info->handle;
		struct fid_ep *bad;

		info->handle = &s->eq->fid;
		FDT_EXPECT(fi_endpoint(s->domain, info, &bad, NULL), -FI_EINVAL);
		info->handle = h;
	}
#endif
	FDT_OK(fi_cq_open(s->domain, &ca, &s->txcq, NULL));
	FDT_OK(fi_cq_open(s->domain, &ca, &s->rxcq, NULL));
	FDT_OK(fi_endpoint(s->domain, info, &s->ep, NULL));
#ifndef FDT_UPSTREAM
	{
		struct fid_ep *again;

		/* The address went to the active endpoint; the passive one has
		 * nothing left to give or to listen with. */
		FDT_EXPECT(fi_endpoint(s->domain, info, &again, NULL), -FI_EOPBADSTATE);
		FDT_EXPECT(fi_listen(pep), -FI_EOPBADSTATE);
		FDT_EXPECT(fi_getname(&pep->fid, &bound, &(size_t){ sizeof(bound) }),
			   -FI_EOPBADSTATE);
	}
#endif
	FDT_OK(fi_close(&pep->fid));
	expect_addr(&s->ep->fid, &bound, "fi_endpoint");

	FDT_OK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	FDT_OK(fi_ep_bind(s->ep, &s->txcq->fid, FI_TRANSMIT));
	FDT_OK(fi_ep_bind(s->ep, &s->rxcq->fid, FI_RECV));
	FDT_OK(fi_enable(s->ep));
	expect_addr(&s->ep->fid, &bound, "fi_enable");
	rmr = fdt_reg(s, rbuf, sizeof(rbuf), FI_RECV);
	FDT_OK(fi_recv(s->ep, rbuf, sizeof(rbuf), fi_mr_desc(rmr), 0, rbuf));
	port_be = bound.sin_port;
	FDT_OK(fi_connect(s->ep, info->dest_addr, &port_be, sizeof(port_be)));
	fdt_wait_event(s, FI_CONNECTED, buf, sizeof(buf));
	expect_addr(&s->ep->fid, &bound, "the connection");

	smr = fdt_reg(s, sbuf, sizeof(sbuf), FI_SEND);
	fdt_fill(sbuf, sizeof(sbuf), 21);
	FDT_OK(fi_send(s->ep, sbuf, sizeof(sbuf), fi_mr_desc(smr), 0, sbuf));
	FDT_ASSERT(fdt_wait_cq(s->txcq, &e, NULL) == 1, "send");
	FDT_ASSERT(fdt_wait_cq(s->rxcq, &e, NULL) == 1, "receive");
	FDT_ASSERT(e.len == MSG_LEN && fdt_check(rbuf, MSG_LEN, 22), "server's message");
	fdt_wait_shutdown(s);
	fi_close(&rmr->fid);
	fi_close(&smr->fid);
	fdt_close_side(s);
	printf("client: active endpoint on the passive endpoint's port %u: connected, "
	       "messages checked both ways\n", ntohs(port_be));
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc = fdt_run_pair(hints, server, client, NULL);

	fi_freeinfo(hints);
	return rc;
}
