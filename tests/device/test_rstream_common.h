/* Helpers shared by the rstream device tests (FI_EP_SOCK_STREAM): set-up
 * of the two sides on top of fdt's pair runner, looping send/receive with
 * poll() on the endpoint's wait fd, a position-keyed byte stream and a
 * checksum. Written against the public libfabric API only. */
#ifndef TEST_RSTREAM_COMMON_H
#define TEST_RSTREAM_COMMON_H

#include <poll.h>
#include <sys/types.h>

#include "fdt.h"

/* Command line shared by the tests: --iwarp (the iWARP framing, over
 * RoCE), --ring BYTES (both rings of both sides), --mib N (volume). */
struct rst_opts {
	int iwarp;
	size_t ring;
	uint64_t bytes;
};
extern struct rst_opts rst_opt;
void rst_parse_args(int argc, char **argv, uint64_t default_bytes);

/* Hints for an rstream entry on the harness's device. */
struct fi_info *rst_hints(void);

/* Runs before fi_enable (setopt goes here). */
typedef void (*rst_setup_fn)(struct fid_ep *ep, void *arg);

/* Server: wait for FI_CONNREQ on side->pep, open domain (once) and
 * endpoint, bind the EQ, set up, enable, accept with cm data, wait for
 * FI_CONNECTED. Client: the same with fi_connect. Optional CM data
 * expectations are checked. */
void rst_accept(struct fdt_side *s, rst_setup_fn setup, void *arg,
		const void *cm, size_t cmlen);
void rst_connect(struct fdt_side *s, rst_setup_fn setup, void *arg,
		 const void *cm, size_t cmlen);

/* setopt both buffer sizes (a setup function; arg: size_t *). */
void rst_set_rings(struct fid_ep *ep, void *arg);

/* poll() the endpoint's FI_GETWAIT fd: 1 readable, 0 timed out. */
int rst_poll(struct fid_ep *ep, int ms);
extern long rst_poll_timeouts;	/* polls that saw nothing */

/* Move exactly len bytes, polling whenever the endpoint says -FI_EAGAIN;
 * fail the test after 20 s without progress or on any error. */
void rst_send_all(struct fid_ep *ep, const void *buf, size_t len);
void rst_recv_all(struct fid_ep *ep, void *buf, size_t len);

/* Byte `pos` of stream `seed`, n of them from pos into buf. */
void rst_gen(uint8_t *buf, uint64_t pos, size_t n, uint64_t seed);
/* FNV-1a 64, continued from h (start with RST_FNV_INIT). */
#define RST_FNV_INIT 0xcbf29ce484222325ull
uint64_t rst_fnv(uint64_t h, const void *buf, size_t n);

/* A random number from a per-process xorshift. */
uint32_t rst_rand(void);

/* fdt_run_pair, also telling the server the client's pid (rst_peer_pid).
 * A server that kills its client on purpose sets rst_peer_killed; the
 * client's exit status then does not count. */
extern pid_t rst_peer_pid;
extern int rst_peer_killed;
int rst_run_pair(struct fi_info *hints, fdt_fn server, fdt_fn client, void *arg);

/* Milliseconds since an arbitrary start (CLOCK_MONOTONIC). */
long rst_now_ms(void);

#endif
