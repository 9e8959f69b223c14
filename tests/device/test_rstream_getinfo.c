/* What an rstream program asks fi_getinfo for and must get (issue 16,
 * upstream's fi_stream test asks this way):
 *  - addr_format FI_SOCKADDR, the generic format: rstream entries come
 *    back, in their address's own family (FI_SOCKADDR_IN or _IN6);
 *  - control_progress FI_PROGRESS_AUTO: entries reporting AUTO control and
 *    MANUAL data; MANUAL control still matches; AUTO data does not;
 *  - with both hints, a connection whose set-up progresses on its own: the
 *    server calls fi_accept and then blocks on a pipe, touching nothing of
 *    the library, until the client has seen FI_CONNECTED and sent its bytes
 *    into the server's ring; only then does the server read its EQ, and
 *    every byte arrives intact both ways. */
#include <poll.h>
#include <unistd.h>

#include "test_rstream_common.h"

#define N 3000

static int sync_pipe[2];	/* client -> server: "connected and sent" */

static void check_entries(struct fi_info *info, const char *what,
			  enum fi_progress control)
{
	int n = 0;

	for (struct fi_info *fi = info; fi; fi = fi->next, n++) {
		FDT_ASSERT(!strcmp(fi->fabric_attr->prov_name, "verbs;rstream"),
			   "%s: provider %s", what, fi->fabric_attr->prov_name);
		FDT_ASSERT(fi->ep_attr->type == FI_EP_SOCK_STREAM, "%s: type", what);
		FDT_ASSERT(fi->addr_format == FI_SOCKADDR_IN ||
			   fi->addr_format == FI_SOCKADDR_IN6,
			   "%s: addr_format %u is not a concrete sockaddr", what,
			   fi->addr_format);
		FDT_ASSERT(fi->domain_attr->control_progress == control,
			   "%s: control_progress %d, want %d", what,
			   fi->domain_attr->control_progress, control);
		FDT_ASSERT(fi->domain_attr->data_progress == FI_PROGRESS_MANUAL,
			   "%s: data_progress %d", what, fi->domain_attr->data_progress);
	}
	FDT_ASSERT(n > 0, "%s: no entries", what);
	printf("%s: %d entries\n", what, n);
}

static void test_hints(void)
{
	const char *addr = fdt_addr();
	struct fi_info *h, *info;

	h = rst_hints();
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, NULL, 0, h, &info));
	check_entries(info, "no progress hint", FI_PROGRESS_AUTO);
	fi_freeinfo(info);

	h->addr_format = FI_SOCKADDR;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, NULL, 0, h, &info));
	check_entries(info, "FI_SOCKADDR", FI_PROGRESS_AUTO);
	fi_freeinfo(info);

	h->addr_format = FI_FORMAT_UNSPEC;
	h->domain_attr->control_progress = FI_PROGRESS_AUTO;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, NULL, 0, h, &info));
	check_entries(info, "control AUTO", FI_PROGRESS_AUTO);
	fi_freeinfo(info);

	h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), addr, NULL, 0, h, &info));
	check_entries(info, "control MANUAL", FI_PROGRESS_MANUAL);
	fi_freeinfo(info);

	/* data still moves only inside calls on the endpoint */
	h->domain_attr->control_progress = FI_PROGRESS_UNSPEC;
	h->domain_attr->data_progress = FI_PROGRESS_AUTO;
	FDT_EXPECT(fi_getinfo(FI_VERSION(1, 17), addr, NULL, 0, h, &info), -FI_ENODATA);

	/* a sockaddr family the device has no address of finds nothing */
	h->domain_attr->data_progress = FI_PROGRESS_UNSPEC;
	h->addr_format = FI_ADDR_STR;
	FDT_EXPECT(fi_getinfo(FI_VERSION(1, 17), addr, NULL, 0, h, &info), -FI_ENODATA);
	fi_freeinfo(h);
}

static int server(struct fdt_side *s, void *arg)
{
	uint8_t ev[sizeof(struct fi_eq_cm_entry) + 64];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)ev;
	uint8_t *buf = malloc(N), *want = malloc(N);
	struct pollfd pfd = { .fd = sync_pipe[0], .events = POLLIN };
	char c;

	(void)arg;
	FDT_ASSERT(buf && want, "malloc");
	close(sync_pipe[1]);
	test_hints();	/* after the fork: the client must fork verbs-free */
	FDT_ASSERT(s->info->domain_attr->control_progress == FI_PROGRESS_AUTO,
		   "listener info: control AUTO");
	fdt_wait_event(s, FI_CONNREQ, ev, sizeof(ev));
	FDT_OK(fi_domain(s->fabric, e->info, &s->domain, NULL));
	FDT_OK(fi_endpoint(s->domain, e->info, &s->ep, NULL));
	fi_freeinfo(e->info);
	FDT_OK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	FDT_OK(fi_enable(s->ep));
	FDT_OK(fi_accept(s->ep, NULL, 0));
	/* No library call until the client is connected and has sent. */
	FDT_ASSERT(poll(&pfd, 1, 30000) == 1, "the client did not connect while "
		   "the server made no calls");
	FDT_ASSERT(read(sync_pipe[0], &c, 1) == 1 && c == 'c', "client's word");
	fdt_wait_event(s, FI_CONNECTED, ev, sizeof(ev));
	FDT_ASSERT(e->fid == &s->ep->fid, "FI_CONNECTED names the ep");
	rst_recv_all(s->ep, buf, N);
	rst_gen(want, 0, N, 7);
	FDT_ASSERT(!memcmp(buf, want, N), "client's bytes");
	rst_gen(buf, 0, N, 8);
	rst_send_all(s->ep, buf, N);
	fdt_wait_shutdown(s);
	FDT_OK(fi_close(&s->ep->fid));
	s->ep = NULL;
	free(buf);
	free(want);
	printf("server: ok\n");
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	uint8_t *buf = malloc(N), *want = malloc(N);

	(void)arg;
	FDT_ASSERT(buf && want, "malloc");
	close(sync_pipe[0]);
	FDT_ASSERT(s->info->domain_attr->control_progress == FI_PROGRESS_AUTO &&
		   (s->info->addr_format == FI_SOCKADDR_IN ||
		    s->info->addr_format == FI_SOCKADDR_IN6), "client info");
	rst_connect(s, NULL, NULL, NULL, 0);
	rst_gen(buf, 0, N, 7);
	rst_send_all(s->ep, buf, N);
	FDT_ASSERT(write(sync_pipe[1], "c", 1) == 1, "pipe");
	rst_recv_all(s->ep, buf, N);
	rst_gen(want, 0, N, 8);
	FDT_ASSERT(!memcmp(buf, want, N), "server's bytes");
	FDT_OK(fi_shutdown(s->ep, 0));
	fdt_wait_shutdown(s);
	FDT_OK(fi_close(&s->ep->fid));
	s->ep = NULL;
	free(buf);
	free(want);
	printf("client: ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct fi_info *h;
	int rc;

	rst_parse_args(argc, argv, 0);
	FDT_ASSERT(!pipe(sync_pipe), "pipe");
	h = rst_hints();
	h->addr_format = FI_SOCKADDR;
	h->domain_attr->control_progress = FI_PROGRESS_AUTO;
	h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	rc = rst_run_pair(h, server, client, NULL);
	fi_freeinfo(h);
	return rc;
}
