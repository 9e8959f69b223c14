/* fi_reject with private data: the client sees FI_ECONNREFUSED on its EQ
 * with the rejecting bytes as err_data; then the same listener accepts a
 * second attempt. Also the CM data size limits: 55 bytes fit, 56 do not. */
#include "fdt.h"

static const char no_thanks[] = "not today";
static const char hello[] = "knock knock";

static int server(struct fdt_side *s, void *arg)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_eq_cm_entry *entry = (struct fi_eq_cm_entry *)buf;
	struct fdt_cm_data in = { hello, sizeof(hello) };
	size_t cm_size = 0, optlen = sizeof(cm_size);
	ssize_t n;

	(void)arg;
	FDT_OK(fi_getopt(&s->pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &cm_size, &optlen));
	FDT_ASSERT(cm_size == 55, "cm data size %zu", cm_size);
	n = fdt_wait_event(s, FI_CONNREQ, buf, sizeof(buf));
	FDT_ASSERT((size_t)n == sizeof(*entry) + sizeof(hello), "connreq length %zd", n);
	FDT_ASSERT(!memcmp(entry->data, hello, sizeof(hello)), "connreq data");
	FDT_EXPECT(fi_reject(s->pep, entry->info->handle, no_thanks, 56), -FI_EINVAL);
	FDT_OK(fi_reject(s->pep, entry->info->handle, no_thanks, sizeof(no_thanks)));
	fi_freeinfo(entry->info);
	/* the second attempt is accepted */
	fdt_server_accept(s, &in, NULL, NULL, NULL);
	fdt_close_side(s);
	printf("server: rejected one, accepted one\n");
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	uint8_t big[56];
	struct fi_eq_err_entry err;
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	uint32_t event;
	ssize_t n;
	struct fdt_cm_data out = { hello, sizeof(hello) };
	struct fi_info *info = fi_dupinfo(s->info);

	(void)arg;
	memset(big, 'x', sizeof(big));
	fdt_open_ep(s, s->info);
	FDT_EXPECT(fi_connect(s->ep, NULL, big, sizeof(big)), -FI_EINVAL);
	FDT_OK(fi_connect(s->ep, NULL, hello, sizeof(hello)));
	n = fi_eq_sread(s->eq, &event, buf, sizeof(buf), 10000, 0);
	FDT_EXPECT(n, -FI_EAVAIL);
	memset(&err, 0, sizeof(err));
	FDT_ASSERT(fi_eq_readerr(s->eq, &err, 0) == sizeof(err), "readerr");
	FDT_ASSERT(err.err == FI_ECONNREFUSED, "err %d (%s)", err.err, fi_strerror(err.err));
	FDT_ASSERT(err.fid == &s->ep->fid, "error fid");
	FDT_ASSERT(err.err_data_size == sizeof(no_thanks) &&
		   !memcmp(err.err_data, no_thanks, sizeof(no_thanks)),
		   "reject data (%zu bytes)", err.err_data_size);
	/* the rejected endpoint is spent: a new one connects */
	FDT_OK(fi_close(&s->ep->fid));
	s->ep = NULL;
	FDT_OK(fi_close(&s->txcq->fid));
	FDT_OK(fi_close(&s->rxcq->fid));
	s->txcq = s->rxcq = NULL;
	fdt_client_connect(s, &out, NULL, NULL, NULL);
	fi_freeinfo(info);
	fdt_close_side(s);
	printf("client: rejection seen with its data, reconnect ok\n");
	return 0;
}

int main(void)
{
	struct fi_info *hints = fdt_hints();
	int rc = fdt_run_pair(hints, server, client, NULL);

	fi_freeinfo(hints);
	return rc;
}
