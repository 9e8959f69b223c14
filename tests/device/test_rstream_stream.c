/* A byte stream end to end: the client writes --mib MiB (default 256) in
 * random chunk sizes (1 B .. 256 KiB, every send form, partial sends
 * resumed), the server reads in other random sizes (every receive form)
 * and checks each byte against the generator. Both sides keep an FNV-1a
 * checksum; the client sends its own after the data, the server compares
 * and answers with its own, which the client compares. Then the client
 * shuts down and the server sees the end of the stream. Waiting is poll()
 * on the endpoint's wait fd. Options: --ring BYTES (4096 for the small-ring
 * run), --iwarp (the iWARP framing over RoCE). */
#include "test_rstream_common.h"

#define MAX_CHUNK (256u * 1024)
#define SEED 0x5eed

static size_t random_size(void)
{
	/* log-uniform: as many tiny chunks as huge ones */
	unsigned bits = rst_rand() % 18;	/* below 2 << 17 == MAX_CHUNK */

	return ((size_t)1 << bits) + rst_rand() % ((size_t)1 << bits);
}

static void setup(struct fid_ep *ep, void *arg)
{
	(void)arg;
	if (rst_opt.ring)
		rst_set_rings(ep, &rst_opt.ring);
}

/* One send call of some form; returns what it accepted or the error. */
static ssize_t send_some(struct fid_ep *ep, const uint8_t *p, size_t len)
{
	struct iovec iov[3];
	struct fi_msg msg = { 0 };
	size_t a = len / 3, b = len / 2;

	switch (rst_rand() % 4) {
	case 0:
		return fi_send(ep, p, len, NULL, 0, NULL);
	case 1:
		iov[0] = (struct iovec){ (void *)p, a };
		iov[1] = (struct iovec){ (void *)(p + a), b - a };
		iov[2] = (struct iovec){ (void *)(p + b), len - b };
		return fi_sendv(ep, iov, NULL, 3, 0, NULL);
	case 2:
		iov[0] = (struct iovec){ (void *)p, len };
		msg.msg_iov = iov;
		msg.iov_count = 1;
		return fi_sendmsg(ep, &msg, 0);
	default:
		iov[0] = (struct iovec){ (void *)p, 0 };	/* empty entries are fine */
		iov[1] = (struct iovec){ (void *)p, len };
		return fi_sendv(ep, iov, NULL, 2, 0, NULL);
	}
}

static ssize_t recv_some(struct fid_ep *ep, uint8_t *p, size_t len)
{
	struct iovec iov[2];
	struct fi_msg msg = { 0 };
	size_t a = len / 2;

	switch (rst_rand() % 3) {
	case 0:
		return fi_recv(ep, p, len, NULL, 0, NULL);
	case 1:
		iov[0] = (struct iovec){ p, a };
		iov[1] = (struct iovec){ p + a, len - a };
		return fi_recvv(ep, iov, NULL, 2, 0, NULL);
	default:
		iov[0] = (struct iovec){ p, len };
		msg.msg_iov = iov;
		msg.iov_count = 1;
		return fi_recvmsg(ep, &msg, 0);
	}
}

static int server(struct fdt_side *s, void *arg)
{
	uint8_t *buf = malloc(MAX_CHUNK), *want = malloc(MAX_CHUNK);
	uint64_t pos = 0, sum = RST_FNV_INIT, theirs = 0;
	long t0, last;
	size_t eagain = 0;
	uint8_t tail[8];
	ssize_t n;

	(void)arg;
	FDT_ASSERT(buf && want, "malloc");
	rst_accept(s, setup, NULL, NULL, 0);
	t0 = last = rst_now_ms();
	while (pos < rst_opt.bytes) {
		size_t len = random_size();

		if (len > rst_opt.bytes - pos)
			len = (size_t)(rst_opt.bytes - pos);
		n = recv_some(s->ep, buf, len);
		if (n == -FI_EAGAIN) {
			eagain++;
			FDT_ASSERT(rst_now_ms() - last < 20000, "no data for 20 s at %llu",
				   (unsigned long long)pos);
			rst_poll(s->ep, 1000);
			continue;
		}
		FDT_ASSERT(n > 0 && (size_t)n <= len, "recv %zd (%s) at %llu", n,
			   n < 0 ? fi_strerror((int)-n) : "", (unsigned long long)pos);
		rst_gen(want, pos, (size_t)n, SEED);
		if (memcmp(buf, want, (size_t)n)) {
			for (ssize_t i = 0; i < n; i++)
				if (buf[i] != want[i])
					FDT_FAIL("byte %llu differs: 0x%02x, expected 0x%02x",
						 (unsigned long long)(pos + (uint64_t)i),
						 buf[i], want[i]);
		}
		sum = rst_fnv(sum, buf, (size_t)n);
		pos += (uint64_t)n;
		last = rst_now_ms();
	}
	rst_recv_all(s->ep, tail, sizeof(tail));
	memcpy(&theirs, tail, sizeof(theirs));
	FDT_ASSERT(theirs == sum, "checksum: client 0x%016llx, server 0x%016llx",
		   (unsigned long long)theirs, (unsigned long long)sum);
	rst_send_all(s->ep, &sum, sizeof(sum));
	/* end of stream: every later receive says 0 */
	for (;;) {
		n = fi_recv(s->ep, buf, 1, NULL, 0, NULL);
		if (n == 0)
			break;
		FDT_ASSERT(n == -FI_EAGAIN, "after the data: %zd", n);
		FDT_ASSERT(rst_now_ms() - last < 20000, "no end of stream");
		rst_poll(s->ep, 1000);
	}
	FDT_EXPECT(fi_recv(s->ep, buf, 1, NULL, 0, NULL), 0);
	printf("server: %llu MiB in %ld ms, checksum 0x%016llx ok, %zu EAGAIN, %ld poll timeouts%s%s\n",
	       (unsigned long long)(rst_opt.bytes >> 20), rst_now_ms() - t0,
	       (unsigned long long)sum, eagain, rst_poll_timeouts, rst_opt.iwarp ? ", iWARP framing" : "",
	       rst_opt.ring ? ", small rings" : "");
	free(buf);
	free(want);
	fdt_close_side(s);
	return 0;
}

static int client(struct fdt_side *s, void *arg)
{
	uint8_t *buf = malloc(MAX_CHUNK);
	uint64_t pos = 0, sum = RST_FNV_INIT, theirs;
	long last;

	(void)arg;
	FDT_ASSERT(buf, "malloc");
	rst_connect(s, setup, NULL, NULL, 0);
	last = rst_now_ms();
	while (pos < rst_opt.bytes) {
		size_t len = random_size(), off = 0;

		if (len > rst_opt.bytes - pos)
			len = (size_t)(rst_opt.bytes - pos);
		rst_gen(buf, pos, len, SEED);
		sum = rst_fnv(sum, buf, len);
		while (off < len) {
			ssize_t n = send_some(s->ep, buf + off, len - off);

			if (n == -FI_EAGAIN) {
				FDT_ASSERT(rst_now_ms() - last < 20000, "send stalled at %llu",
					   (unsigned long long)(pos + off));
				rst_poll(s->ep, 1000);
				continue;
			}
			FDT_ASSERT(n > 0 && (size_t)n <= len - off, "send %zd (%s)", n,
				   n < 0 ? fi_strerror((int)-n) : "");
			off += (size_t)n;
			last = rst_now_ms();
		}
		pos += len;
	}
	rst_send_all(s->ep, &sum, sizeof(sum));
	rst_recv_all(s->ep, &theirs, sizeof(theirs));
	FDT_ASSERT(theirs == sum, "server's checksum differs");
	FDT_OK(fi_shutdown(s->ep, 0));
	FDT_EXPECT(fi_send(s->ep, buf, 1, NULL, 0, NULL), -FI_ESHUTDOWN);
	free(buf);
	fdt_close_side(s);
	printf("client: ok, %ld poll timeouts\n", rst_poll_timeouts);
	return 0;
}

int main(int argc, char **argv)
{
	struct fi_info *hints;
	int rc;

	rst_parse_args(argc, argv, 256ull << 20);
	hints = rst_hints();
	rc = rst_run_pair(hints, server, client, NULL);
	fi_freeinfo(hints);
	return rc;
}
