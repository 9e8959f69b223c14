/* The kit every layer shares: small helpers that the core, verbs, rstream
 * and RDM each used to carry a copy of. Not installed (nothing inline in
 * an application includes it), so anything here may change freely.
 *
 *   container_of, an object's fi_ops table, monotonic clock, big-endian fields of wire formats,
 *   errno -> fi_errno, the FI_GETWAIT / FI_GETWAITOBJ control body,
 *   the wrap-and-narrow getinfo loop of a layer over a core provider and
 *   the hints it asks that provider with (the attribute tables those use
 *   are fd_attr.h).
 *
 * Kept to what more than one layer needs; a layer's own helpers stay in
 * the layer. */
#ifndef FD_UTIL_H
#define FD_UTIL_H

#include <endian.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "fd_enosys.h"

#ifdef __cplusplus
extern "C" {
#endif

#define fd_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* The struct fi_ops of an object: its close, bind and control (the
 * fd_no_fid_* refusals where it has none) and its tostr: NULL makes
 * fi_tostr print the object's address, fd_no_fid_tostr prints nothing.
 * No object opens or sets extra ops (fi_open_ops, fi_set_ops answer
 * -FI_ENOSYS). */
#define FD_FI_OPS(close_fn, bind_fn, control_fn, tostr_fn) {		\
	.size = sizeof(struct fi_ops),					\
	.close = (close_fn),						\
	.bind = (bind_fn),						\
	.control = (control_fn),					\
	.ops_open = fd_no_fid_ops_open,					\
	.tostr = (tostr_fn),						\
	.ops_set = fd_no_fid_ops_set,					\
}

/* The fi_ops_cm of a connectionless endpoint (RDM, DGRAM, a scalable
 * endpoint's context): it has a name and maybe joins; connection
 * management calls are -FI_ENOSYS. */
#define FD_CM_OPS_CONNECTIONLESS(getname_fn, join_fn) {			\
	.size = sizeof(struct fi_ops_cm),				\
	.setname = fd_no_cm_setname,					\
	.getname = (getname_fn),					\
	.getpeer = fd_no_cm_getpeer,					\
	.connect = fd_no_cm_connect,					\
	.listen = fd_no_cm_listen,					\
	.accept = fd_no_cm_accept,					\
	.reject = fd_no_cm_reject,					\
	.shutdown = fd_no_cm_shutdown,					\
	.join = (join_fn),						\
}

/* The fi_ops_fabric of every fabric in the tree: its own domain, passive
 * endpoint, EQ and wait-set opens; fi_trywait through the core's
 * fd_waitable (fd_sets.h) and fi_domain2 taking no flags. */
#define FD_FABRIC_OPS(domain_fn, passive_ep_fn, eq_open_fn, wait_open_fn) {	\
	.size = sizeof(struct fi_ops_fabric),				\
	.domain = (domain_fn),						\
	.passive_ep = (passive_ep_fn),					\
	.eq_open = (eq_open_fn),					\
	.wait_open = (wait_open_fn),					\
	.trywait = fd_trywait,						\
	.domain2 = fd_fabric_domain2,					\
}

/* The fid at the head of every object: class, the application's context,
 * the fi_ops (close, bind, control...). */
static inline void fd_fid_init(struct fid *fid, size_t fclass, void *context,
			       struct fi_ops *ops)
{
	fid->fclass = fclass;
	fid->context = context;
	fid->ops = ops;
}

/* ---- monotonic clock (deadlines of waits and of connection setup) ---- */

static inline uint64_t fd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline long fd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* What is left of a wait of timeout_ms begun at start_ms, for poll(2) and
 * epoll_wait(2): -1 with no limit (timeout_ms < 0), 0 once it is over. */
static inline int fd_ms_left(long start_ms, int timeout_ms)
{
	long left;

	if (timeout_ms < 0)
		return -1;
	left = start_ms + timeout_ms - fd_now_ms();
	return left > 0 ? (int)left : 0;
}

/* ---- big-endian fields of the layers' wire formats ----
 * <endian.h>'s swap and an unaligned copy: a byte loop costs several
 * instructions a field more, and RDM decodes a header per message. */

static inline void fd_put_be16(uint8_t *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, 2);
}

static inline void fd_put_be32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}

static inline void fd_put_be64(uint8_t *p, uint64_t v)
{
	fd_put_be32(p, (uint32_t)(v >> 32));
	fd_put_be32(p + 4, (uint32_t)v);
}

static inline uint16_t fd_get_be16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return be16toh(v);
}

static inline uint32_t fd_get_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

static inline uint64_t fd_get_be64(const uint8_t *p)
{
	return (uint64_t)fd_get_be32(p) << 32 | fd_get_be32(p + 4);
}

/* ---- errors ---- */

/* A system errno (errno, or what rdma-core returns) as a positive fi_errno
 * code: 0 stays 0, the FI_E* that share errno's number pass through, the
 * rest is FI_EOTHER. Callers return its negation. */
int fd_errno_to_fi(int err);

/* The FI_GETWAIT / FI_GETWAITOBJ part of an object's fi_control, the same
 * for every CQ, counter, EQ and wait set (fi_cq(3), fi_eq(3), fi_cntr(3)):
 * FI_GETWAIT writes the wait fd (fd < 0: the object has none, say
 * -FI_ENODATA, as for FI_WAIT_NONE); FI_GETWAITOBJ writes obj; a NULL arg
 * is -FI_EINVAL; any other command -FI_ENOSYS, for the caller to answer
 * first what else it knows. */
static inline int fd_wait_control(int command, void *arg, int fd,
				  enum fi_wait_obj obj)
{
	switch (command) {
	case FI_GETWAIT:
		if (!arg)
			return -FI_EINVAL;
		if (fd < 0)
			return -FI_ENODATA;
		*(int *)arg = fd;
		return 0;
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		*(enum fi_wait_obj *)arg = obj;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/* The fid of an endpoint of any class (EP, SEP, its contexts, SRX
 * context): fd_fid_init, its option and CM tables, and the core's
 * -FI_ENOSYS tables (fd_no_ops_*) for every data call; the caller then
 * sets the data tables it serves. src/fd_util.c. */
void fd_ep_fid_init(struct fid_ep *ep, size_t fclass, void *context,
		    struct fi_ops *fid_ops, struct fi_ops_ep *ops,
		    struct fi_ops_cm *cm);

/* FI_GETOPSFLAG of an endpoint whose operation flags are those of its
 * fi_info: *flags (FI_TRANSMIT or FI_RECV, the first one set decides)
 * becomes that side's op_flags (0 without the attr); NULL or neither bit
 * -FI_EINVAL. src/fd_util.c. */
int fd_info_getopsflag(const struct fi_info *info, uint64_t *flags);

/* The end of an AV's fi_av_straddr: as much of `str` as fits in buf's
 * *len bytes, always terminated, *len set to the size the whole string
 * needs; returns buf. src/fd_util.c. */
const char *fd_straddr_out(char *buf, size_t *len, const char *str);

/* fi_domain2 and fi_endpoint2 of an object that takes no flags: with flags
 * 0 the object's own fi_domain / fi_endpoint (its ops table's .domain,
 * .endpoint), else -FI_EBADFLAGS. src/fd_util.c. */
int fd_fabric_domain2(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_domain **domain, uint64_t flags, void *context);
int fd_domain_endpoint2(struct fid_domain *domain, struct fi_info *info,
			struct fid_ep **ep, uint64_t flags, void *context);

/* The fid of a fabric just allocated: class, context, ops, and the API
 * version it was opened for (the library's own when the attributes name
 * none), which the EQs opened on it keep: an EQ of an application built
 * for 1.4 must not write the 1.5 error-entry fields. src/fd_util.c. */
void fd_fabric_init(struct fid_fabric *fabric, const struct fi_fabric_attr *attr,
		    void *context, struct fi_ops *fid_ops, struct fi_ops_fabric *ops);

/* ---- a layer's fabric: the same fabric of the provider below ----
 * All a layer's fabric holds is the lower provider's fabric, which the
 * layer opens its domains, EQs and passive endpoints on, and a count of
 * the layer's objects opened on it: fi_close says -FI_EBUSY while any is
 * open instead of freeing the fabric under them. */
struct fd_layer_fabric {
	struct fid_fabric fabric_fid;
	struct fid_fabric *lower;
	atomic_int refs;
};

/* fi_fabric of a layer: the fabric `attr` names opened of provider
 * lower_prov (attr->prov_name is not looked at), answering fi_close (the
 * core's) and `ops`. src/fd_util.c. */
int fd_layer_fabric_open(const char *lower_prov, struct fi_fabric_attr *attr,
			 void *context, struct fi_ops_fabric *ops,
			 struct fid_fabric **fabric);

static inline struct fd_layer_fabric *fd_layer_fabric_of(struct fid_fabric *fabric)
{
	return fd_container_of(fabric, struct fd_layer_fabric, fabric_fid);
}

/* fi_getopt of an endpoint whose one option is FI_OPT_CM_DATA_SIZE (max):
 * -FI_ENOPROTOOPT for any other, -FI_ETOOSMALL (and *optlen the size
 * needed) for a short buffer (fi_endpoint(3)). src/fd_util.c. */
int fd_opt_get_cm_data_size(int level, int optname, void *optval, size_t *optlen,
			    size_t max);

/* ---- a layer's fi_getinfo over a core provider's entries ----
 * Every layer (rstream, RDM) asks the provider below for entries, turns a
 * copy of each into its own, keeps those the hints match and narrows them
 * to the hints. What differs per layer is in these two calls. */
struct fd_layer_wrap_ops {
	/* Turn t (a copy of core entry c, next NULL) into the layer's entry:
	 * 0 to keep it, 1 to skip this core entry, a negative fi error to
	 * fail the whole call. */
	int (*make)(struct fi_info *t, const struct fi_info *c, void *arg);
	/* After matching and narrowing (fi is what the caller gets; hints as
	 * the application gave them): defaults for what the hints left open.
	 * 0 keep, 1 drop, negative fail. NULL: nothing to do. */
	int (*finish)(struct fi_info *fi, const struct fi_info *hints, void *arg);
};

/* *dst (freed first) becomes a copy of src's len bytes, or NULL and 0 when
 * there are none; -FI_ENOMEM, with *dst NULL, when memory runs out. */
int fd_info_copy_addr(void **dst, size_t *dstlen, const void *src, size_t len);

/* calloc(1, size) whose struct fi_info * at info_off is a copy of info:
 * how every object that keeps its fi_info begins. NULL when memory runs
 * out. */
void *fd_calloc_info(size_t size, size_t info_off, const struct fi_info *info);

/* Where src points, written over dst: addr_format, the source and
 * destination addresses, the domain name and, with fabric_name, the
 * fabric name (a name src lacks leaves dst's). -FI_ENOMEM when memory
 * runs out (dst partly written, still whole to free). */
int fd_info_copy_place(struct fi_info *dst, const struct fi_info *src,
		       bool fabric_name);

struct fd_attrs;

/* The hints a layer asks the provider below with: what the layer needs of
 * it (want: caps, mode, endpoint type, mr_mode...) plus the places the
 * application's hints name (address format, addresses, domain and fabric
 * names). NULL when memory runs out. */
struct fi_info *fd_layer_core_hints(const struct fi_info *hints,
				    const struct fd_attrs *want);

/* A provider's defaults for the queue sizes of an entry: what the
 * application's hints leave open (no attr, or 0) becomes the default; a
 * default of FD_SIZE_KEEP leaves the entry's value. src/fd_info.c. */
#define FD_SIZE_KEEP SIZE_MAX
struct fd_size_defaults {
	size_t tx_size, tx_iov_limit, inject_size;
	size_t rx_size, rx_iov_limit;
};
void fd_info_size_defaults(struct fi_info *fi, const struct fi_info *hints,
			   const struct fd_size_defaults *d);

/* The end of every getinfo: ret < 0 frees head and returns ret; no entry
 * is -FI_ENODATA; else *info = head, 0. */
int fd_info_hand_out(struct fi_info *head, int ret, struct fi_info **info);

struct fd_provider;

/* The entries of the provider below a layer: its own getinfo (not
 * fi_getinfo, which would apply the application's provider selection and
 * enter the layers again) asked with lower_hints (from
 * fd_layer_core_hints), which this frees; NULL lower_hints (they could
 * not be made) is -FI_ENOMEM. src/fd_info.c. */
int fd_layer_lower_getinfo(const struct fd_provider *lower, uint32_t version,
			   const char *node, const char *service, uint64_t flags,
			   struct fi_info *lower_hints, struct fi_info **entries);

/* Takes (frees) core; *info the layer's entries in core's order, or
 * -FI_ENODATA when none is left. Matching ignores the hints' provider
 * name (the front end chose this provider by it). */
int fd_layer_wrap(uint32_t version, struct fi_info *core, const struct fi_info *hints,
		  const struct fd_layer_wrap_ops *ops, void *arg, struct fi_info **info);

#ifdef __cplusplus
}
#endif

#endif
