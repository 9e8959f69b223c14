/* End of stream, three ways, on connections of one listener (the first
 * is refused: fi_reject's data reaches the client's EQ error entry):
 *  1. the client writes, then fi_shutdown at once; the server, reading
 *     only later, still gets every byte, then 0 (end of stream) for good;
 *     sends on either side then fail with -FI_ESHUTDOWN; both EQs report
 *     FI_SHUTDOWN;
 *  2. the client writes and fi_close()s without fi_shutdown: the same
 *     orderly end for the server;
 *  3. the server ends while the client sleeps in poll() on its receive:
 *     it wakes, takes the last bytes, then reads the end. */
#include <unistd.h>

#include "test_rstream_common.h"

#define N1 100000
#define N2 5000

static void wait_eof(struct fid_ep *ep)
{
	uint8_t b;
	long t0 = rst_now_ms();
	ssize_t n;

	while ((n = fi_recv(ep, &b, 1, NULL, 0, NULL)) == -FI_EAGAIN) {
		FDT_ASSERT(rst_now_ms() - t0 < 20000, "no end of stream");
		rst_poll(ep, 1000);
	}
	FDT_EXPECT(n, 0);
	FDT_EXPECT(fi_recv(ep, &b, 1, NULL, 0, NULL), 0);	/* and it stays */
	{
		struct iovec iov = { &b, 1 };
		struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1 };

		FDT_EXPECT(fi_recvmsg(ep, &msg, FI_PEEK), 0);
	}
}

static void close_ep(struct fdt_side *s)
{
	FDT_OK(fi_close(&s->ep->fid));
	s->ep = NULL;
}

static int server(struct fdt_side *s, void *arg)
{
	uint8_t *buf = malloc(N1), *want = malloc(N1);
	uint8_t ev[sizeof(struct fi_eq_cm_entry) + 64];

	(void)arg;
	/* 0: refused */
	{
		struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)ev;

		fdt_wait_event(s, FI_CONNREQ, ev, sizeof(ev));
		FDT_EXPECT(fi_reject(s->pep, e->info->handle, NULL, 60), -FI_EINVAL);
		FDT_OK(fi_reject(s->pep, e->info->handle, "go away", 8));
		fi_freeinfo(e->info);
	}
	/* 1 */
	rst_accept(s, NULL, NULL, NULL, 0);
	sleep(1);	/* data and the end are both waiting by now */
	rst_recv_all(s->ep, buf, N1);
	rst_gen(want, 0, N1, 1);
	FDT_ASSERT(!memcmp(buf, want, N1), "connection 1 data");
	wait_eof(s->ep);
	FDT_EXPECT(fi_send(s->ep, buf, 1, NULL, 0, NULL), -FI_ESHUTDOWN);
	{
		struct iovec iov = { buf, 1 };
		struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1 };

		FDT_EXPECT(fi_sendmsg(s->ep, &msg, FI_PEEK), -FI_ESHUTDOWN);
	}
	fdt_wait_shutdown(s);
	FDT_OK(fi_shutdown(s->ep, 0));	/* nothing left to end: fine */
	close_ep(s);
	printf("server: 1 ok (fi_shutdown)\n");

	/* 2 */
	rst_accept(s, NULL, NULL, NULL, 0);
	rst_recv_all(s->ep, buf, N2);
	rst_gen(want, 0, N2, 2);
	FDT_ASSERT(!memcmp(buf, want, N2), "connection 2 data");
	wait_eof(s->ep);
	fdt_wait_shutdown(s);
	close_ep(s);
	printf("server: 2 ok (fi_close)\n");

	/* 3 */
	rst_accept(s, NULL, NULL, NULL, 0);
	rst_recv_all(s->ep, buf, 1);	/* the client is about to wait */
	usleep(300000);
	rst_send_all(s->ep, "last bytes", 10);
	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_EXPECT(fi_send(s->ep, buf, 1, NULL, 0, NULL), -FI_ESHUTDOWN);
	FDT_EXPECT(fi_recv(s->ep, buf, 1, NULL, 0, NULL), 0);
	fdt_wait_event(s, FI_SHUTDOWN, ev, sizeof(ev));
	close_ep(s);
	printf("server: 3 ok (server ends, client in poll)\n");
	free(buf);
	free(want);
	fdt_close_side(s);
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	uint8_t *buf = malloc(N1);
	long t0;
	ssize_t n;

	(void)arg;
	/* 0: refused, with the server's reason */
	{
		uint8_t ev[sizeof(struct fi_eq_cm_entry) + 64];
		struct fi_eq_err_entry err = { 0 };
		uint32_t event;

		FDT_OK(fi_domain(s->fabric, s->info, &s->domain, NULL));
		FDT_OK(fi_endpoint(s->domain, s->info, &s->ep, NULL));
		FDT_OK(fi_ep_bind(s->ep, &s->eq->fid, 0));
		FDT_OK(fi_enable(s->ep));
		FDT_OK(fi_connect(s->ep, s->info->dest_addr, NULL, 0));
		FDT_EXPECT(fi_eq_sread(s->eq, &event, ev, sizeof(ev), 10000, 0), -FI_EAVAIL);
		FDT_ASSERT(fi_eq_readerr(s->eq, &err, 0) > 0, "readerr");
		FDT_ASSERT(err.err == FI_ECONNREFUSED, "reject error %d", err.err);
		FDT_ASSERT(err.fid == &s->ep->fid, "error names the ep");
		FDT_ASSERT(err.err_data_size == 8 && !memcmp(err.err_data, "go away", 8),
			   "reject data (%zu bytes)", err.err_data_size);
		FDT_EXPECT(fi_send(s->ep, buf, 1, NULL, 0, NULL), -FI_ECONNREFUSED);
		close_ep(s);
	}
	/* 1 */
	rst_connect(s, NULL, NULL, NULL, 0);
	rst_gen(buf, 0, N1, 1);
	rst_send_all(s->ep, buf, N1);
	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_EXPECT(fi_send(s->ep, buf, 1, NULL, 0, NULL), -FI_ESHUTDOWN);
	FDT_EXPECT(fi_recv(s->ep, buf, 1, NULL, 0, NULL), 0);
	FDT_OK(fi_shutdown(s->ep, 0));	/* twice is fine */
	fdt_wait_shutdown(s);
	close_ep(s);

	/* 2 */
	rst_connect(s, NULL, NULL, NULL, 0);
	rst_gen(buf, 0, N2, 2);
	rst_send_all(s->ep, buf, N2);
	close_ep(s);

	/* 3 */
	rst_connect(s, NULL, NULL, NULL, 0);
	rst_send_all(s->ep, "w", 1);
	FDT_EXPECT(fi_recv(s->ep, buf, 10, NULL, 0, NULL), -FI_EAGAIN);
	t0 = rst_now_ms();
	FDT_ASSERT(rst_poll(s->ep, 10000), "not woken by the server's data");
	FDT_ASSERT(rst_now_ms() - t0 >= 100, "woke before the server wrote");
	rst_recv_all(s->ep, buf, 10);
	FDT_ASSERT(!memcmp(buf, "last bytes", 10), "last bytes");
	wait_eof(s->ep);
	n = fi_send(s->ep, buf, 1, NULL, 0, NULL);
	FDT_ASSERT(n == -FI_ESHUTDOWN, "send after the peer's end: %zd", n);
	fdt_wait_shutdown(s);
	close_ep(s);
	free(buf);
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
