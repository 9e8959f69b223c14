/* FI_THREAD_SAFE: on each side one thread sends and another receives on
 * the same endpoint, at the same time, in both directions, both waiting
 * in poll() on the one wait fd when told -FI_EAGAIN. Every byte is
 * checked; then the client ends the stream and the server reads the end. */
#include <pthread.h>

#include "test_rstream_common.h"

#define TOTAL (16u << 20)

struct job {
	struct fid_ep *ep;
	uint64_t seed;
	long waits;
};

static void *sender(void *arg)
{
	struct job *j = arg;
	uint8_t *buf = malloc(1 << 17);
	uint64_t pos = 0;
	long last = rst_now_ms();

	while (pos < TOTAL) {
		size_t len = 1 + rst_rand() % (1 << 17), off = 0;

		if (len > TOTAL - pos)
			len = (size_t)(TOTAL - pos);
		rst_gen(buf, pos, len, j->seed);
		while (off < len) {
			ssize_t n = fi_send(j->ep, buf + off, len - off, NULL, 0, NULL);

			if (n == -FI_EAGAIN) {
				j->waits++;
				FDT_ASSERT(rst_now_ms() - last < 20000, "sender stalled");
				rst_poll(j->ep, 1000);
				continue;
			}
			FDT_ASSERT(n > 0, "send %zd", n);
			off += (size_t)n;
			last = rst_now_ms();
		}
		pos += len;
	}
	free(buf);
	return NULL;
}

static void *receiver(void *arg)
{
	struct job *j = arg;
	uint8_t *buf = malloc(1 << 17), *want = malloc(1 << 17);
	uint64_t pos = 0;
	long last = rst_now_ms();

	while (pos < TOTAL) {
		size_t len = 1 + rst_rand() % (1 << 17);
		ssize_t n;

		if (len > TOTAL - pos)
			len = (size_t)(TOTAL - pos);
		n = fi_recv(j->ep, buf, len, NULL, 0, NULL);
		if (n == -FI_EAGAIN) {
			j->waits++;
			FDT_ASSERT(rst_now_ms() - last < 20000, "receiver stalled");
			rst_poll(j->ep, 1000);
			continue;
		}
		FDT_ASSERT(n > 0, "recv %zd", n);
		rst_gen(want, pos, (size_t)n, j->seed);
		FDT_ASSERT(!memcmp(buf, want, (size_t)n), "data at %llu", (unsigned long long)pos);
		pos += (uint64_t)n;
		last = rst_now_ms();
	}
	free(buf);
	free(want);
	return NULL;
}

static void duplex(struct fdt_side *s, uint64_t out_seed, uint64_t in_seed)
{
	struct job tx = { s->ep, out_seed, 0 }, rx = { s->ep, in_seed, 0 };
	pthread_t t1, t2;
	long t0 = rst_now_ms();

	FDT_ASSERT(!pthread_create(&t1, NULL, sender, &tx), "pthread_create");
	FDT_ASSERT(!pthread_create(&t2, NULL, receiver, &rx), "pthread_create");
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("%s: %u MiB each way in %ld ms (waits: send %ld, recv %ld)\n",
	       s->is_server ? "server" : "client", TOTAL >> 20, rst_now_ms() - t0,
	       tx.waits, rx.waits);
}

static int server(struct fdt_side *s, void *arg)
{
	uint8_t b;
	long t0;
	ssize_t n;

	(void)arg;
	rst_accept(s, NULL, NULL, NULL, 0);
	duplex(s, 2, 1);
	t0 = rst_now_ms();
	while ((n = fi_recv(s->ep, &b, 1, NULL, 0, NULL)) == -FI_EAGAIN) {
		FDT_ASSERT(rst_now_ms() - t0 < 20000, "no end of stream");
		rst_poll(s->ep, 1000);
	}
	FDT_EXPECT(n, 0);
	fdt_close_side(s);
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	(void)arg;
	rst_connect(s, NULL, NULL, NULL, 0);
	duplex(s, 1, 2);
	FDT_OK(fi_shutdown(s->ep, 0));
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
