/* Readiness without completion queues: the EQ's and the endpoint's
 * FI_GETWAIT fds with poll(), and FI_PEEK on fi_recvmsg / fi_sendmsg (the
 * rstream extension). The server waits for the connection request by
 * polling the EQ's fd, not with fi_eq_sread. Each step is driven through
 * one-byte messages on the stream itself, so both sides know when the
 * other has moved. */
#include <poll.h>
#include <unistd.h>

#include "test_rstream_common.h"

static void wait_eq_fd(struct fdt_side *s, uint32_t want)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 64];
	struct pollfd pfd = { .events = POLLIN };
	uint32_t event;
	long t0 = rst_now_ms();
	ssize_t n;

	FDT_OK(fi_control(&s->eq->fid, FI_GETWAIT, &pfd.fd));
	for (;;) {
		n = fi_eq_read(s->eq, &event, buf, sizeof(buf), FI_PEEK);
		if (n > 0) {
			FDT_ASSERT(event == want, "event %u, expected %u", event, want);
			return;	/* left in the EQ for fdt_wait_event */
		}
		FDT_ASSERT(n == -FI_EAGAIN, "fi_eq_read: %zd", n);
		FDT_ASSERT(rst_now_ms() - t0 < 15000, "EQ fd never woke for event %u", want);
		FDT_ASSERT(poll(&pfd, 1, 5000) >= 0, "poll");
	}
}

static ssize_t peek_recv(struct fid_ep *ep, void *buf, size_t len)
{
	struct iovec iov = { buf, len };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = buf ? 1 : 0 };

	return fi_recvmsg(ep, &msg, FI_PEEK);
}

static ssize_t peek_send(struct fid_ep *ep, size_t len)
{
	static uint8_t dummy[1];
	struct iovec iov = { dummy, len };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = len ? 1 : 0 };

	return fi_sendmsg(ep, &msg, FI_PEEK);
}

/* Poll until readable; fail if it takes more than ms. */
static void expect_ready(struct fid_ep *ep, int ms, const char *what)
{
	long t0 = rst_now_ms();

	FDT_ASSERT(rst_poll(ep, ms), "%s: wait fd not readable within %d ms", what, ms);
	FDT_ASSERT(rst_now_ms() - t0 <= ms, "%s", what);
}

static int server(struct fdt_side *s, void *arg)
{
	uint8_t buf[64], tok;
	ssize_t n;
	long t0;

	(void)arg;
	wait_eq_fd(s, FI_CONNREQ);
	rst_accept(s, NULL, NULL, NULL, 0);

	/* 1. Nothing sent yet: peeks say EAGAIN and the fd stays quiet. */
	FDT_EXPECT(peek_recv(s->ep, buf, sizeof(buf)), -FI_EAGAIN);
	FDT_EXPECT(peek_recv(s->ep, NULL, 0), -FI_EAGAIN);
	FDT_EXPECT(fi_recv(s->ep, buf, sizeof(buf), NULL, 0, NULL), -FI_EAGAIN);
	FDT_ASSERT(!rst_poll(s->ep, 300), "wait fd readable with nothing to read");
	tok = 'a';
	rst_send_all(s->ep, &tok, 1);		/* go: client sends 10 bytes */

	/* 2. Data arrives while we sleep in poll(). */
	t0 = rst_now_ms();
	while ((n = peek_recv(s->ep, NULL, 0)) == -FI_EAGAIN) {
		FDT_ASSERT(rst_now_ms() - t0 < 10000, "no data");
		expect_ready(s->ep, 10000, "data arrival");
	}
	FDT_ASSERT(n > 0 && n <= 10, "peek count %zd", n);
	while ((n = peek_recv(s->ep, NULL, 0)) < 10) {	/* the rest may trail */
		FDT_ASSERT(n > 0, "peek %zd", n);
		rst_poll(s->ep, 1000);
	}
	FDT_ASSERT(n == 10, "peek count %zd", n);
	/* 3. FI_PEEK copies without consuming, any number of times. */
	memset(buf, 0, sizeof(buf));
	FDT_EXPECT(peek_recv(s->ep, buf, 4), 4);
	FDT_ASSERT(!memcmp(buf, "0123", 4), "peeked bytes");
	FDT_EXPECT(peek_recv(s->ep, buf, sizeof(buf)), 10);
	FDT_ASSERT(!memcmp(buf, "0123456789", 10), "peeked bytes");
	FDT_EXPECT(fi_recv(s->ep, buf, 3, NULL, 0, NULL), 3);
	FDT_ASSERT(!memcmp(buf, "012", 3), "read after peek");
	FDT_EXPECT(peek_recv(s->ep, NULL, 0), 7);
	FDT_EXPECT(fi_recv(s->ep, buf, sizeof(buf), NULL, 0, NULL), 7);
	FDT_ASSERT(!memcmp(buf, "3456789", 7), "rest");
	FDT_EXPECT(peek_recv(s->ep, buf, sizeof(buf)), -FI_EAGAIN);
	/* a quiet fd again once drained */
	FDT_ASSERT(!rst_poll(s->ep, 300), "wait fd readable after draining");

	/* 4. Send side: FI_PEEK reports room and sends nothing. */
	n = peek_send(s->ep, 0);
	FDT_ASSERT(n >= 4096, "send room %zd", n);
	FDT_EXPECT(peek_send(s->ep, 100), 100);
	tok = 'b';
	rst_send_all(s->ep, &tok, 1);		/* client: expect exactly 'b' */

	/* 5. The client fills our ring while we sleep, then waits in
	 * poll() for the room our reading makes. */
	rst_recv_all(s->ep, &tok, 1);
	FDT_ASSERT(tok == 'c', "token %c", tok);
	sleep(1);
	{
		static uint8_t big[1 << 16];
		size_t got = 0;

		t0 = rst_now_ms();
		while (got < 40000) {
			n = fi_recv(s->ep, big, 40000 - got < sizeof(big) ? 40000 - got : sizeof(big),
				    NULL, 0, NULL);
			if (n == -FI_EAGAIN) {
				FDT_ASSERT(rst_now_ms() - t0 < 20000, "stalled at %zu", got);
				rst_poll(s->ep, 1000);
				continue;
			}
			FDT_ASSERT(n > 0, "recv %zd", n);
			for (ssize_t i = 0; i < n; i++)
				FDT_ASSERT(big[i] == 'x', "byte %zu", got + (size_t)i);
			got += (size_t)n;
		}
	}
	rst_recv_all(s->ep, &tok, 1);
	FDT_ASSERT(tok == 'd', "token %c", tok);
	fdt_close_side(s);
	printf("server: ok\n");
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	static uint8_t big[1 << 20];
	uint8_t tok;
	ssize_t n;
	size_t sent = 0;
	long t0;
	int fd, eqfd;

	(void)arg;
	rst_connect(s, NULL, NULL, NULL, 0);
	FDT_OK(fi_control(&s->ep->fid, FI_GETWAIT, &fd));
	FDT_OK(fi_control(&s->eq->fid, FI_GETWAIT, &eqfd));
	FDT_ASSERT(fd >= 0 && eqfd >= 0 && fd != eqfd, "wait fds %d %d", fd, eqfd);
	{
		enum fi_wait_obj wo;

		FDT_OK(fi_control(&s->ep->fid, FI_GETWAITOBJ, &wo));
		FDT_ASSERT(wo == FI_WAIT_FD, "wait object %d", wo);
	}
	rst_recv_all(s->ep, &tok, 1);
	FDT_ASSERT(tok == 'a', "token %c", tok);
	rst_send_all(s->ep, "0123456789", 10);

	/* step 4: nothing but the token may arrive */
	rst_recv_all(s->ep, &tok, 1);
	FDT_ASSERT(tok == 'b', "token %c (a peeked send leaked data?)", tok);
	FDT_EXPECT(fi_recv(s->ep, &tok, 1, NULL, 0, NULL), -FI_EAGAIN);

	/* step 5: fill the server's ring (it sleeps), see the send side
	 * say EAGAIN, then wake from poll() when its reading makes room */
	tok = 'c';
	rst_send_all(s->ep, &tok, 1);
	memset(big, 'x', sizeof(big));
	t0 = rst_now_ms();
	for (;;) {
		n = fi_send(s->ep, big, 40000 - sent, NULL, 0, NULL);
		if (n == -FI_EAGAIN)
			break;
		FDT_ASSERT(n > 0, "send %zd", n);
		sent += (size_t)n;
		FDT_ASSERT(sent < 40000, "sent %zu: more than the peer's ring", sent);
		FDT_ASSERT(rst_now_ms() - t0 < 10000, "the ring never filled");
	}
	FDT_ASSERT(sent > 0 && sent < 32768, "sent %zu before EAGAIN (ring 32 KiB)", sent);
	FDT_EXPECT(peek_send(s->ep, 0), -FI_EAGAIN);
	FDT_EXPECT(fi_send(s->ep, big, 0, NULL, 0, NULL), 0);	/* zero bytes: fine */
	t0 = rst_now_ms();
	while ((n = peek_send(s->ep, 0)) == -FI_EAGAIN) {
		FDT_ASSERT(rst_now_ms() - t0 < 10000, "no room after 10 s");
		expect_ready(s->ep, 10000, "room after the peer read");
	}
	FDT_ASSERT(n > 0, "room %zd", n);
	rst_send_all(s->ep, big, 40000 - sent);
	tok = 'd';
	rst_send_all(s->ep, &tok, 1);
	(void)eqfd;
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
