/* A peer killed mid-stream (SIGKILL: no fi_shutdown, no close) must give
 * the survivor an error, never a hang and never a clean end of stream.
 *   (default) the client streams, the server reads, then kills it: the
 *             server's fi_recv drains what had arrived and then fails
 *             (-FI_ECONNRESET or -FI_EIO), and so does fi_send;
 *   --send    the server streams, the client reads, the server kills it:
 *             the server's fi_send fails instead of waiting for room. */
#include <signal.h>
#include <unistd.h>

#include "test_rstream_common.h"

static int send_case;

#define CHUNK 65536
#define LIMIT_MS 30000

static int is_reset(ssize_t n)
{
	return n == -FI_ECONNRESET || n == -FI_EIO;
}

static void expect_eq_news(struct fdt_side *s)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	uint32_t event;
	ssize_t n;

	/* FI_SHUTDOWN, or an error entry: either says the link is gone */
	n = fi_eq_sread(s->eq, &event, buf, sizeof(buf), LIMIT_MS, 0);
	if (n == -FI_EAVAIL) {
		struct fi_eq_err_entry err = { 0 };

		FDT_ASSERT(fi_eq_readerr(s->eq, &err, 0) > 0, "readerr");
		return;
	}
	FDT_ASSERT(n > 0 && event == FI_SHUTDOWN, "EQ after the kill: %zd, event %u", n, event);
}

static int server(struct fdt_side *s, void *arg)
{
	static uint8_t buf[CHUNK];
	uint64_t got = 0, sent = 0;
	int32_t pid;
	ssize_t n;
	long t0;

	(void)arg;
	rst_accept(s, NULL, NULL, NULL, 0);
	rst_recv_all(s->ep, &pid, sizeof(pid));
	FDT_ASSERT(pid == rst_peer_pid, "pid %d, forked %d", pid, (int)rst_peer_pid);
	if (!send_case) {
		while (got < (1u << 20)) {
			n = fi_recv(s->ep, buf, sizeof(buf), NULL, 0, NULL);
			if (n == -FI_EAGAIN) {
				rst_poll(s->ep, 1000);
				continue;
			}
			FDT_ASSERT(n > 0, "recv %zd", n);
			got += (uint64_t)n;
		}
	} else {
		memset(buf, 's', sizeof(buf));
		while (sent < (1u << 20)) {
			n = fi_send(s->ep, buf, sizeof(buf), NULL, 0, NULL);
			if (n == -FI_EAGAIN) {
				rst_poll(s->ep, 1000);
				continue;
			}
			FDT_ASSERT(n > 0, "send %zd", n);
			sent += (uint64_t)n;
		}
	}
	rst_peer_killed = 1;
	FDT_OK(kill(rst_peer_pid, SIGKILL));
	t0 = rst_now_ms();
	for (;;) {
		if (!send_case)
			n = fi_recv(s->ep, buf, sizeof(buf), NULL, 0, NULL);
		else
			n = fi_send(s->ep, buf, sizeof(buf), NULL, 0, NULL);
		if (n > 0) {
			*(send_case ? &sent : &got) += (uint64_t)n;
			continue;
		}
		FDT_ASSERT(n != 0, "a killed peer looks like a clean end of stream");
		if (is_reset(n))
			break;
		FDT_ASSERT(n == -FI_EAGAIN, "after the kill: %zd (%s)", n, fi_strerror((int)-n));
		FDT_ASSERT(rst_now_ms() - t0 < LIMIT_MS, "no error %d s after the peer died",
			   LIMIT_MS / 1000);
		rst_poll(s->ep, 1000);
	}
	printf("server: %s failed with %s %ld ms after the kill (%llu bytes moved)\n",
	       send_case ? "fi_send" : "fi_recv", fi_strerror((int)-n),
	       rst_now_ms() - t0, (unsigned long long)(send_case ? sent : got));
	/* the error sticks, for both directions */
	FDT_ASSERT(is_reset(fi_send(s->ep, buf, 1, NULL, 0, NULL)), "send after reset");
	n = fi_recv(s->ep, buf, sizeof(buf), NULL, 0, NULL);
	FDT_ASSERT(is_reset(n), "recv after reset: %zd", n);
	expect_eq_news(s);
	fdt_close_side(s);
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	static uint8_t buf[CHUNK];
	int32_t pid = (int32_t)getpid();
	ssize_t n;

	(void)arg;
	rst_connect(s, NULL, NULL, NULL, 0);
	rst_send_all(s->ep, &pid, sizeof(pid));
	memset(buf, 'c', sizeof(buf));
	/* until killed */
	for (;;) {
		if (!send_case)
			n = fi_send(s->ep, buf, sizeof(buf), NULL, 0, NULL);
		else
			n = fi_recv(s->ep, buf, sizeof(buf), NULL, 0, NULL);
		if (n == -FI_EAGAIN)
			rst_poll(s->ep, 1000);
		else
			FDT_ASSERT(n > 0, "client: %zd", n);
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct fi_info *hints;
	int rc;

	if (argc > 1 && !strcmp(argv[argc - 1], "--send")) {
		send_case = 1;
		argc--;
	}
	rst_parse_args(argc, argv, 0);
	hints = rst_hints();
	rc = rst_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	return rc;
}
