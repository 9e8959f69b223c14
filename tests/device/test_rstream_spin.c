/* An endpoint whose wait fd was never asked for (the spinning caller, as a
 * latency benchmark is): its calls leave the CQ unarmed, which must cost
 * nothing in correctness. 1. A one-byte ping-pong driven only by spinning
 * on -FI_EAGAIN, every byte checked. 2. The server, after such calls, asks
 * for the fd and sleeps in poll(): the client's next byte (sent 300 ms
 * later) must wake it, and not before. 3. The client gets a byte while it
 * has no fd and makes no call, then asks for the fd: it must be readable at
 * once (FI_GETWAIT arms the CQ and finds what already arrived). */
#include <poll.h>
#include <unistd.h>

#include "test_rstream_common.h"

#define ROUNDS 2000

static void spin_send(struct fid_ep *ep, uint8_t b)
{
	long t0 = rst_now_ms();
	ssize_t n;

	while ((n = fi_send(ep, &b, 1, NULL, 0, NULL)) == -FI_EAGAIN)
		FDT_ASSERT(rst_now_ms() - t0 < 20000, "send spun 20 s");
	FDT_EXPECT(n, 1);
}

static uint8_t spin_recv(struct fid_ep *ep)
{
	long t0 = rst_now_ms();
	uint8_t b = 0;
	ssize_t n;

	while ((n = fi_recv(ep, &b, 1, NULL, 0, NULL)) == -FI_EAGAIN)
		FDT_ASSERT(rst_now_ms() - t0 < 20000, "recv spun 20 s");
	FDT_EXPECT(n, 1);
	return b;
}

static int server(struct fdt_side *s, void *arg)
{
	uint8_t b;
	long t0;

	(void)arg;
	rst_accept(s, NULL, NULL, NULL, 0);
	/* 1 */
	for (int i = 0; i < ROUNDS; i++) {
		b = spin_recv(s->ep);
		FDT_ASSERT(b == (uint8_t)i, "round %d: byte %u", i, b);
		spin_send(s->ep, (uint8_t)(b + 1));
	}
	/* 2: completions were read and the CQ never armed */
	FDT_EXPECT(fi_recv(s->ep, &b, 1, NULL, 0, NULL), -FI_EAGAIN);
	t0 = rst_now_ms();
	for (int wakes = 0;; wakes++) {
		ssize_t n;

		/* A late send completion may wake us once; the byte must. */
		FDT_ASSERT(wakes < 5, "%d wake-ups with nothing to read", wakes);
		FDT_ASSERT(rst_poll(s->ep, 10000), "not woken by the client's byte");
		n = fi_recv(s->ep, &b, 1, NULL, 0, NULL);
		if (n == 1)
			break;
		FDT_EXPECT(n, -FI_EAGAIN);
	}
	FDT_ASSERT(b == 'x', "byte %c", b);
	FDT_ASSERT(rst_now_ms() - t0 >= 100, "the byte came %ld ms after we asked "
		   "for the fd, before the client wrote it", rst_now_ms() - t0);
	/* 3 */
	rst_send_all(s->ep, "y", 1);
	rst_recv_all(s->ep, &b, 1);
	FDT_ASSERT(b == 'z', "byte %c", b);
	fdt_close_side(s);
	printf("server: ok\n");
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	struct pollfd pfd = { .events = POLLIN };
	uint8_t b;

	(void)arg;
	rst_connect(s, NULL, NULL, NULL, 0);
	for (int i = 0; i < ROUNDS; i++) {
		spin_send(s->ep, (uint8_t)i);
		b = spin_recv(s->ep);
		FDT_ASSERT(b == (uint8_t)(i + 1), "round %d: byte %u", i, b);
	}
	usleep(300 * 1000);
	spin_send(s->ep, 'x');
	/* the server answers 'y' at once; it arrives while we sleep */
	sleep(1);
	FDT_OK(fi_control(&s->ep->fid, FI_GETWAIT, &pfd.fd));
	FDT_ASSERT(poll(&pfd, 1, 0) == 1, "the fd is not readable with a byte waiting");
	FDT_ASSERT(spin_recv(s->ep) == 'y', "byte");
	rst_send_all(s->ep, "z", 1);
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
