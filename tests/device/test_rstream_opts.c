/* What an rstream endpoint offers and refuses, and its options:
 *  - fi_getinfo: FI_EP_SOCK_STREAM entries from "verbs;rstream" with caps
 *    FI_MSG, mode 0, mr_mode 0, FI_THREAD_SAFE, manual progress, protocol
 *    FI_PROTO_RSTREAM (FI_PROTO_IWARP when asked for), sizes 384;
 *  - no CQs, no memory registration, no RMA/atomics/tagged/inject calls:
 *    -FI_ENOSYS;
 *  - fi_setopt / fi_getopt of the buffer and queue sizes as size_t or int,
 *    invalid values refused, nothing settable after fi_enable;
 *  - user CM data both ways (FI_OPT_CM_DATA_SIZE bytes);
 *  - a connection with unequal small rings and queues on the two sides
 *    moving a few MiB intact. */
#include <rdma/fi_atomic.h>
#include <rdma/fi_tagged.h>

#include "test_rstream_common.h"

static const char hello[] = "rstream hello";
static const char reply[] = "rstream reply";

static void check_info(const struct fi_info *fi, uint32_t proto)
{
	FDT_ASSERT(fi->ep_attr->type == FI_EP_SOCK_STREAM, "type");
	FDT_ASSERT(!strcmp(fi->fabric_attr->prov_name, "verbs;rstream"),
		   "prov_name %s", fi->fabric_attr->prov_name);
	FDT_ASSERT((fi->caps & (FI_MSG | FI_SEND | FI_RECV)) == (FI_MSG | FI_SEND | FI_RECV) &&
		   !(fi->caps & (FI_RMA | FI_ATOMIC | FI_TAGGED)), "caps 0x%llx",
		   (unsigned long long)fi->caps);
	FDT_ASSERT(fi->mode == 0, "mode 0x%llx", (unsigned long long)fi->mode);
	FDT_ASSERT(fi->domain_attr->mr_mode == 0, "mr_mode %d", fi->domain_attr->mr_mode);
	FDT_ASSERT(fi->domain_attr->threading == FI_THREAD_SAFE, "threading");
	FDT_ASSERT(fi->domain_attr->data_progress == FI_PROGRESS_MANUAL &&
		   fi->domain_attr->control_progress == FI_PROGRESS_AUTO, "progress");
	FDT_ASSERT(fi->ep_attr->protocol == proto, "protocol %u, expected %u",
		   fi->ep_attr->protocol, proto);
	FDT_ASSERT(fi->tx_attr->size == 384 && fi->rx_attr->size == 384, "sizes %zu %zu",
		   fi->tx_attr->size, fi->rx_attr->size);
}

static void test_getinfo(const char *addr)
{
	struct fi_info *hints, *info, *fi;
	int n = 0;

	/* every rstream entry, listed by the layered provider */
	hints = fi_allocinfo();
	hints->ep_attr->type = FI_EP_SOCK_STREAM;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, "7471", 0, hints, &info));
	for (fi = info; fi; fi = fi->next, n++)
		check_info(fi, FI_PROTO_RSTREAM);
	FDT_ASSERT(n >= 1, "no entries");
	fi_freeinfo(info);
	/* the iWARP framing on request */
	hints->ep_attr->protocol = FI_PROTO_IWARP;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, "7471", 0, hints, &info));
	check_info(info, FI_PROTO_IWARP);
	fi_freeinfo(info);
	/* other protocols: nothing */
	hints->ep_attr->protocol = FI_PROTO_RDMA_CM_IB_RC;
	FDT_EXPECT(fi_getinfo(FI_VERSION(1, 17), addr, "7471", 0, hints, &info), -FI_ENODATA);
	hints->ep_attr->protocol = FI_PROTO_UNSPEC;
	/* asking for more than a stream does */
	hints->caps = FI_MSG | FI_RMA;
	FDT_EXPECT(fi_getinfo(FI_VERSION(1, 17), addr, "7471", 0, hints, &info), -FI_ENODATA);
	hints->caps = FI_MSG;
	hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	FDT_EXPECT(fi_getinfo(FI_VERSION(1, 17), addr, "7471", 0, hints, &info), -FI_ENODATA);
	hints->domain_attr->data_progress = FI_PROGRESS_UNSPEC;
	/* the provider name, in any of its spellings */
	hints->fabric_attr->prov_name = strdup("rstream");
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, "7471", 0, hints, &info));
	fi_freeinfo(info);
	free(hints->fabric_attr->prov_name);
	hints->fabric_attr->prov_name = strdup("verbs");
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, "7471", 0, hints, &info));
	check_info(info, FI_PROTO_RSTREAM);
	fi_freeinfo(info);
	/* sizes from the hints */
	hints->tx_attr->size = 64;
	hints->rx_attr->size = 32;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, "7471", 0, hints, &info));
	FDT_ASSERT(info->tx_attr->size == 64 && info->rx_attr->size == 32, "hinted sizes");
	fi_freeinfo(info);
	/* MSG hints see no stream entry */
	hints->tx_attr->size = hints->rx_attr->size = 0;
	hints->ep_attr->type = FI_EP_MSG;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	hints->mode = FI_RX_CQ_DATA;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, "7471", 0, hints, &info));
	for (fi = info; fi; fi = fi->next)
		FDT_ASSERT(fi->ep_attr->type == FI_EP_MSG, "MSG only");
	fi_freeinfo(info);
	fi_freeinfo(hints);
	/* FI_PROV_ATTR_ONLY */
	hints = rst_hints();
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, FI_PROV_ATTR_ONLY, hints, &info));
	check_info(info, FI_PROTO_RSTREAM);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/* ---- options ---- */

static size_t get_size(struct fid_ep *ep, int name)
{
	size_t v = 0, len = sizeof(v);

	FDT_OK(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, name, &v, &len));
	FDT_ASSERT(len == sizeof(size_t), "optlen %zu", len);
	return v;
}

static void check_opts(struct fid_ep *ep, void *arg)
{
	size_t v, len;
	int iv;
	const int *sizes = arg;	/* tx buf, rx buf, tx size, rx size */

	/* defaults */
	FDT_ASSERT(get_size(ep, FI_OPT_SEND_BUF_SIZE) == 32768, "default send buf");
	FDT_ASSERT(get_size(ep, FI_OPT_RECV_BUF_SIZE) == 32768, "default recv buf");
	FDT_ASSERT(get_size(ep, FI_OPT_TX_SIZE) == 384, "default tx size");
	FDT_ASSERT(get_size(ep, FI_OPT_RX_SIZE) == 384, "default rx size");
	FDT_ASSERT(get_size(ep, FI_OPT_CM_DATA_SIZE) >= sizeof(hello), "cm data size");
	/* int and size_t both set; read back either way */
	iv = 8192;
	FDT_OK(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_SEND_BUF_SIZE, &iv, sizeof(iv)));
	FDT_ASSERT(get_size(ep, FI_OPT_SEND_BUF_SIZE) == 8192, "int set");
	v = 16384;
	FDT_OK(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_SEND_BUF_SIZE, &v, sizeof(v)));
	len = sizeof(iv);
	FDT_OK(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_SEND_BUF_SIZE, &iv, &len));
	FDT_ASSERT(iv == 16384 && len == sizeof(int), "int get %d %zu", iv, len);
	/* refused */
	len = 2;
	FDT_EXPECT(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_TX_SIZE, &iv, &len), -FI_ETOOSMALL);
	iv = -1;
	FDT_EXPECT(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_RECV_BUF_SIZE, &iv, sizeof(iv)), -FI_EINVAL);
	v = 100;	/* too small a ring */
	FDT_EXPECT(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_RECV_BUF_SIZE, &v, sizeof(v)), -FI_EINVAL);
	v = (size_t)1 << 40;
	FDT_EXPECT(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_RECV_BUF_SIZE, &v, sizeof(v)), -FI_EINVAL);
	v = 2;		/* fewer credits than the reserve needs */
	FDT_EXPECT(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_RX_SIZE, &v, sizeof(v)), -FI_EINVAL);
	v = 1u << 20;
	FDT_EXPECT(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_TX_SIZE, &v, sizeof(v)), -FI_EINVAL);
	v = 4096;
	FDT_EXPECT(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_TX_SIZE, &v, 3), -FI_EINVAL);
	FDT_EXPECT(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_TX_SIZE, NULL, sizeof(v)), -FI_EINVAL);
	FDT_EXPECT(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, sizeof(v)), -FI_ENOSYS);
	FDT_EXPECT(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, sizeof(v)),
		   -FI_ENOPROTOOPT);
	FDT_EXPECT(fi_setopt(&ep->fid, FI_OPT_ENDPOINT + 1, FI_OPT_TX_SIZE, &v, sizeof(v)),
		   -FI_ENOPROTOOPT);
	/* what this side runs with */
	iv = sizes[0];
	FDT_OK(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_SEND_BUF_SIZE, &iv, sizeof(iv)));
	v = (size_t)sizes[1];
	FDT_OK(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_RECV_BUF_SIZE, &v, sizeof(v)));
	iv = sizes[2];
	FDT_OK(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_TX_SIZE, &iv, sizeof(iv)));
	v = (size_t)sizes[3];
	FDT_OK(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_RX_SIZE, &v, sizeof(v)));
	FDT_ASSERT(get_size(ep, FI_OPT_RX_SIZE) == (size_t)sizes[3], "rx size");
}

static void check_no_extras(struct fdt_side *s)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fid_cq *cq;
	struct fid_mr *mr;
	static char buf[64];
	uint64_t old = 0;

	FDT_EXPECT(fi_cq_open(s->domain, &ca, &cq, NULL), -FI_ENOSYS);
	FDT_EXPECT(fi_mr_reg(s->domain, buf, sizeof(buf), FI_SEND, 0, 0, 0, &mr, NULL),
		   -FI_ENOSYS);
	FDT_EXPECT(fi_write(s->ep, buf, 8, NULL, 0, 0, 0, NULL), -FI_ENOSYS);
	FDT_EXPECT(fi_read(s->ep, buf, 8, NULL, 0, 0, 0, NULL), -FI_ENOSYS);
	FDT_EXPECT(fi_inject(s->ep, buf, 8, 0), -FI_ENOSYS);
	FDT_EXPECT(fi_senddata(s->ep, buf, 8, NULL, 1, 0, NULL), -FI_ENOSYS);
	FDT_EXPECT(fi_tsend(s->ep, buf, 8, NULL, 0, 1, NULL), -FI_ENOSYS);
	FDT_EXPECT(fi_atomic(s->ep, &old, 1, NULL, 0, 0, 0, FI_UINT64, FI_SUM, NULL),
		   -FI_ENOSYS);
	FDT_EXPECT(fi_send(s->ep, buf, 8, NULL, 0, NULL), -FI_ENOTCONN);
	/* a CQ from a verbs MSG domain cannot be bound either, and an
	 * rstream fabric opens no verbs MSG domain */
	{
		struct fi_info *hints = fdt_hints(), *info;
		struct fid_fabric *fab;
		struct fid_domain *dom;

		FDT_OK(fi_getinfo(FI_VERSION(1, 17), fdt_addr(), NULL, FI_SOURCE, hints, &info));
		FDT_EXPECT(fi_domain(s->fabric, info, &dom, NULL), -FI_EINVAL);
		FDT_OK(fi_fabric(info->fabric_attr, &fab, NULL));
		FDT_OK(fi_domain(fab, info, &dom, NULL));
		FDT_OK(fi_cq_open(dom, &ca, &cq, NULL));
		FDT_EXPECT(fi_ep_bind(s->ep, &cq->fid, FI_TRANSMIT | FI_RECV), -FI_ENOSYS);
		FDT_OK(fi_close(&cq->fid));
		FDT_OK(fi_close(&dom->fid));
		FDT_OK(fi_close(&fab->fid));
		fi_freeinfo(info);
		fi_freeinfo(hints);
	}
	/* flags a stream does not know */
	{
		struct iovec iov = { buf, 8 };
		struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1 };

		FDT_EXPECT(fi_sendmsg(s->ep, &msg, FI_INJECT), -FI_EBADFLAGS);
		FDT_EXPECT(fi_recvmsg(s->ep, &msg, FI_MULTI_RECV), -FI_EBADFLAGS);
	}
}

static void expect_after_enable(struct fid_ep *ep)
{
	size_t v = 8192;

	FDT_EXPECT(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_SEND_BUF_SIZE, &v, sizeof(v)),
		   -FI_EOPBADSTATE);
}

#define VOLUME (4u << 20)

static int server(struct fdt_side *s, void *arg)
{
	static const int sizes[4] = { 4096, 8192, 16, 8 };
	uint8_t cmbuf[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)cmbuf;
	uint8_t *buf = malloc(VOLUME), *want = malloc(VOLUME);
	ssize_t n;

	(void)arg;
	test_getinfo(fdt_addr());
	n = fdt_wait_event(s, FI_CONNREQ, cmbuf, sizeof(cmbuf));
	FDT_ASSERT((size_t)n - sizeof(*e) == sizeof(hello) &&
		   !memcmp(e->data, hello, sizeof(hello)), "client's CM data");
	FDT_OK(fi_domain(s->fabric, e->info, &s->domain, NULL));
	FDT_OK(fi_endpoint(s->domain, e->info, &s->ep, NULL));
	fi_freeinfo(e->info);
	check_no_extras(s);
	FDT_OK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	FDT_EXPECT(fi_ep_bind(s->ep, &s->eq->fid, 0), -FI_EINVAL);	/* one EQ */
	check_opts(s->ep, (void *)sizes);
	FDT_OK(fi_enable(s->ep));
	expect_after_enable(s->ep);
	FDT_EXPECT(fi_accept(s->ep, reply, 64), -FI_EINVAL);		/* too much CM data */
	FDT_OK(fi_accept(s->ep, reply, sizeof(reply)));
	fdt_wait_event(s, FI_CONNECTED, cmbuf, sizeof(cmbuf));
	/* unequal rings and tiny queues, both directions */
	rst_gen(want, 0, VOLUME, 7);
	rst_recv_all(s->ep, buf, VOLUME);
	FDT_ASSERT(!memcmp(buf, want, VOLUME), "client -> server stream");
	rst_gen(buf, 0, VOLUME, 8);
	rst_send_all(s->ep, buf, VOLUME);
	rst_recv_all(s->ep, buf, 1);
	free(buf);
	free(want);
	fdt_close_side(s);
	printf("server: ok\n");
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	static const int sizes[4] = { 65536, 4096, 8, 64 };
	uint8_t cmbuf[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)cmbuf;
	uint8_t *buf = malloc(VOLUME), *want = malloc(VOLUME);
	size_t v = 0, len = sizeof(v);
	ssize_t n;

	(void)arg;
	FDT_OK(fi_domain(s->fabric, s->info, &s->domain, NULL));
	FDT_OK(fi_endpoint(s->domain, s->info, &s->ep, NULL));
	FDT_OK(fi_getopt(&s->ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, &len));
	FDT_ASSERT(v >= sizeof(hello) && v < 55, "CM data size %zu", v);
	FDT_EXPECT(fi_connect(s->ep, s->info->dest_addr, hello, sizeof(hello)), -FI_EOPBADSTATE);
	FDT_EXPECT(fi_enable(s->ep), -FI_ENOEQ);
	FDT_OK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	check_opts(s->ep, (void *)sizes);
	FDT_OK(fi_enable(s->ep));
	FDT_EXPECT(fi_enable(s->ep), -FI_EOPBADSTATE);
	expect_after_enable(s->ep);
	FDT_EXPECT(fi_recv(s->ep, buf, 1, NULL, 0, NULL), -FI_ENOTCONN);
	FDT_EXPECT(fi_connect(s->ep, s->info->dest_addr, hello, v + 1), -FI_EINVAL);
	FDT_OK(fi_connect(s->ep, s->info->dest_addr, hello, sizeof(hello)));
	n = fdt_wait_event(s, FI_CONNECTED, cmbuf, sizeof(cmbuf));
	FDT_ASSERT((size_t)n - sizeof(*e) == sizeof(reply) &&
		   !memcmp(e->data, reply, sizeof(reply)), "server's CM data");
	rst_gen(buf, 0, VOLUME, 7);
	rst_send_all(s->ep, buf, VOLUME);
	rst_gen(want, 0, VOLUME, 8);
	rst_recv_all(s->ep, buf, VOLUME);
	FDT_ASSERT(!memcmp(buf, want, VOLUME), "server -> client stream");
	rst_send_all(s->ep, "!", 1);
	free(buf);
	free(want);
	fdt_close_side(s);
	printf("client: ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct fi_info *hints;
	int rc;

	rst_parse_args(argc, argv, 0);
	hints = rst_hints();
	rc = rst_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	return rc;
}
