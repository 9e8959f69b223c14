/* A slow reader stalls a fast writer without loss. The client writes as
 * fast as it can; the server reads 1 MiB, then stops for 2 s: the client
 * must be held (-FI_EAGAIN) with at most the server's ring in flight and
 * all the space the reader reported free in use. Freed space is reported
 * a quarter ring at a time (docs/rstream-protocol.md, rule 2), so a reader
 * that stops without warning may hold up to a quarter ring less one byte
 * read but unreported: the writer fills more than three quarters of the
 * ring, and not one byte more than the ring. Then the server reads a few
 * bytes at a time with pauses, and finally at full speed; every byte is
 * checked. The client reports its longest wait, which must span the
 * pause. */
#include <unistd.h>

#include "test_rstream_common.h"

#define TOTAL (8u << 20)
#define RING 32768
/* read but possibly not reported when the reader stops: < RING / 4 */
#define UNREPORTED_MAX (RING / 4 - 1)

static int server(struct fdt_side *s, void *arg)
{
	uint8_t *buf = malloc(1 << 16), *want = malloc(1 << 16);
	uint64_t pos = 0;
	long t0, longest = 0;
	ssize_t n, avail;
	int phase = 0;

	(void)arg;
	rst_accept(s, NULL, NULL, NULL, 0);
	while (pos < TOTAL) {
		size_t len = 1 << 16;

		if (phase == 0 && pos >= (1u << 20)) {
			/* stop reading: the writer fills our ring and waits */
			sleep(2);
			{
				struct fi_msg msg = { 0 };

				avail = fi_recvmsg(s->ep, &msg, FI_PEEK);
			}
			FDT_ASSERT(avail >= RING - UNREPORTED_MAX && avail <= RING,
				   "%zd bytes waiting after the pause, ring %d",
				   avail, RING);
			sleep(1);
			{
				struct fi_msg msg = { 0 };

				/* the writer is held: nothing more comes */
				FDT_EXPECT(fi_recvmsg(s->ep, &msg, FI_PEEK), avail);
			}
			phase = 1;
		}
		if (phase == 1) {
			/* a slow reader: small reads, pauses */
			len = 1 + rst_rand() % 700;
			usleep(2000);
			if (pos >= (2u << 20))
				phase = 2;
		}
		if (len > TOTAL - pos)
			len = (size_t)(TOTAL - pos);
		n = fi_recv(s->ep, buf, len, NULL, 0, NULL);
		if (n == -FI_EAGAIN) {
			t0 = rst_now_ms();
			FDT_ASSERT(rst_poll(s->ep, 20000), "writer stopped at %llu",
				   (unsigned long long)pos);
			if (rst_now_ms() - t0 > longest)
				longest = rst_now_ms() - t0;
			continue;
		}
		FDT_ASSERT(n > 0, "recv %zd at %llu", n, (unsigned long long)pos);
		rst_gen(want, pos, (size_t)n, 42);
		FDT_ASSERT(!memcmp(buf, want, (size_t)n), "data at %llu", (unsigned long long)pos);
		pos += (uint64_t)n;
	}
	rst_send_all(s->ep, "k", 1);
	printf("server: %u MiB, longest wait for data %ld ms\n", TOTAL >> 20, longest);
	free(buf);
	free(want);
	fdt_close_side(s);
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	uint8_t *buf = malloc(1 << 18), k;
	uint64_t pos = 0;
	long last, longest = 0;
	size_t eagain = 0;

	(void)arg;
	rst_connect(s, NULL, NULL, NULL, 0);
	last = rst_now_ms();
	while (pos < TOTAL) {
		size_t len = 1 + rst_rand() % (1 << 18);
		ssize_t n;

		if (len > TOTAL - pos)
			len = (size_t)(TOTAL - pos);
		rst_gen(buf, pos, len, 42);
		n = fi_send(s->ep, buf, len, NULL, 0, NULL);
		if (n == -FI_EAGAIN) {
			eagain++;
			FDT_ASSERT(rst_now_ms() - last < 20000, "held for 20 s");
			rst_poll(s->ep, 5000);
			continue;
		}
		FDT_ASSERT(n > 0 && (size_t)n <= len, "send %zd", n);
		if (rst_now_ms() - last > longest)
			longest = rst_now_ms() - last;
		last = rst_now_ms();
		pos += (uint64_t)n;
	}
	rst_recv_all(s->ep, &k, 1);
	printf("client: %zu EAGAIN, longest hold %ld ms\n", eagain, longest);
	FDT_ASSERT(longest >= 1500, "the writer was never held (longest %ld ms)", longest);
	free(buf);
	fdt_close_side(s);
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
