/*
 * Logging: FI_LOG_LEVEL / FI_LOG_PROV / FI_LOG_SUBSYS filtering, the
 * internal fd_log(), the provider-facing fi_log / fi_log_enabled /
 * fi_log_ready that libfabric 1.17 exports, and fi_open("logging") so an
 * application can import its own logger (fi_import_log in fi_ext.h).
 *
 * The environment is read once, from a constructor, so the macros in
 * fd_core.h only ever compare against a cached level.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>
#include <rdma/fi_ext.h>

#include "fd_core.h"
#include "fd_enosys.h"

/* Our numbering must be libfabric's, or imported loggers and fi_tostr
 * would see the wrong values. */
_Static_assert((int)FD_LOG_DEBUG == (int)FI_LOG_DEBUG, "log level numbering");
_Static_assert((int)FD_LOG_CNTR == (int)FI_LOG_CNTR, "log subsystem numbering");

_Atomic int fd_log_max_level = FD_LOG_WARN;

#define FD_LOG_MAX_PROVS 8
#define FD_LOG_PROV_LEN 32

/* Filters, written by fd_log_init only (at load, or by a test before it
 * starts threads). */
static struct {
	int	level;
	int	prov_count;		/* 0: every provider */
	int	prov_negate;		/* list names the excluded ones */
	char	provs[FD_LOG_MAX_PROVS][FD_LOG_PROV_LEN];
	unsigned int subsys_mask;	/* bit per FD_LOG_* subsystem */
	long	interval_ms;		/* FI_LOG_INTERVAL for fi_log_ready */
} fd_log_cfg = {
	.level = FD_LOG_WARN,
	.subsys_mask = (1u << FD_LOG_SUBSYS_MAX) - 1,
	.interval_ms = 2000,
};

static const char *const fd_level_names[FD_LOG_LEVEL_MAX] = {
	"warn", "trace", "info", "debug",
};

static const char *const fd_subsys_names[FD_LOG_SUBSYS_MAX] = {
	"core", "fabric", "domain", "ep_ctrl", "ep_data",
	"av", "cq", "eq", "mr", "cntr",
};

/* An application's logger, installed through fi_open("logging"). */
static struct fi_ops_log *_Atomic fd_log_imported;

/* Split "a,b,c" or "^a,b" and hand each name to fn. */
static void fd_log_parse_list(const char *s, int *negate,
			      void (*fn)(const char *name, size_t len))
{
	*negate = 0;
	if (*s == '^') {
		*negate = 1;
		s++;
	}
	while (*s) {
		size_t n = strcspn(s, ",");

		if (n)
			fn(s, n);
		s += n;
		if (*s == ',')
			s++;
	}
}

static void fd_log_add_prov(const char *name, size_t len)
{
	if (fd_log_cfg.prov_count >= FD_LOG_MAX_PROVS ||
	    len >= FD_LOG_PROV_LEN)
		return;
	memcpy(fd_log_cfg.provs[fd_log_cfg.prov_count], name, len);
	fd_log_cfg.provs[fd_log_cfg.prov_count][len] = '\0';
	fd_log_cfg.prov_count++;
}

static unsigned int fd_log_subsys_bits;

static void fd_log_add_subsys(const char *name, size_t len)
{
	for (int i = 0; i < FD_LOG_SUBSYS_MAX; i++) {
		if (strlen(fd_subsys_names[i]) == len &&
		    !strncasecmp(name, fd_subsys_names[i], len))
			fd_log_subsys_bits |= 1u << i;
	}
}

static int fd_log_parse_level(const char *s)
{
	char *end;
	long v;

	for (int i = 0; i < FD_LOG_LEVEL_MAX; i++)
		if (!strcasecmp(s, fd_level_names[i]))
			return i;
	v = strtol(s, &end, 10);
	if (*s && !*end && v >= 0 && v < FD_LOG_LEVEL_MAX)
		return (int)v;
	return -1;
}

void fd_log_init(void)
{
	const char *s;
	int negate;

	fd_log_cfg.level = FD_LOG_WARN;
	s = getenv("FI_LOG_LEVEL");
	if (s && *s) {
		int lvl = fd_log_parse_level(s);

		if (lvl >= 0)
			fd_log_cfg.level = lvl;
		else
			fprintf(stderr, "libfabric:%d:core: ignoring "
				"FI_LOG_LEVEL=%s (use warn, trace, info or "
				"debug)\n", (int)getpid(), s);
	}

	fd_log_cfg.prov_count = 0;
	fd_log_cfg.prov_negate = 0;
	s = getenv("FI_LOG_PROV");
	if (s && *s)
		fd_log_parse_list(s, &fd_log_cfg.prov_negate, fd_log_add_prov);

	fd_log_cfg.subsys_mask = (1u << FD_LOG_SUBSYS_MAX) - 1;
	s = getenv("FI_LOG_SUBSYS");
	if (s && *s) {
		fd_log_subsys_bits = 0;
		fd_log_parse_list(s, &negate, fd_log_add_subsys);
		fd_log_cfg.subsys_mask = negate ?
			fd_log_cfg.subsys_mask & ~fd_log_subsys_bits :
			fd_log_subsys_bits;
	}

	s = getenv("FI_LOG_INTERVAL");
	if (s && *s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (!*end && v >= 0)
			fd_log_cfg.interval_ms = v;
	}

	atomic_store_explicit(&fd_log_max_level,
			      atomic_load(&fd_log_imported) ? FD_LOG_DEBUG :
			      fd_log_cfg.level, memory_order_relaxed);
}

__attribute__((constructor)) static void fd_log_ctor(void)
{
	fd_log_init();
}

static int fd_log_prov_allowed(const char *prov)
{
	int listed = 0;

	if (!fd_log_cfg.prov_count)
		return 1;
	for (int i = 0; i < fd_log_cfg.prov_count; i++) {
		if (prov && !strcasecmp(prov, fd_log_cfg.provs[i])) {
			listed = 1;
			break;
		}
	}
	return fd_log_cfg.prov_negate ? !listed : listed;
}

int fd_log_enabled(int level, int subsys, const char *prov)
{
	struct fi_ops_log *imp = atomic_load(&fd_log_imported);

	if (imp) {
		struct fi_provider p = { .name = prov ? prov : "core" };

		return imp->enabled ?
		       imp->enabled(&p, (enum fi_log_level)level,
				    (enum fi_log_subsys)subsys, 0) : 0;
	}
	if (level < 0 || level > fd_log_cfg.level)
		return 0;
	if (subsys < 0 || subsys >= FD_LOG_SUBSYS_MAX ||
	    !(fd_log_cfg.subsys_mask & (1u << subsys)))
		return 0;
	return fd_log_prov_allowed(prov);
}

void fd_vlog(int level, int subsys, const char *prov, const char *func,
	     int line, const char *fmt, va_list ap)
{
	struct fi_ops_log *imp;
	char msg[1024];
	int saved = errno;
	size_t n;

	if (!fd_log_enabled(level, subsys, prov))
		goto out;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);

	imp = atomic_load(&fd_log_imported);
	if (imp) {
		struct fi_provider p = { .name = prov ? prov : "core" };

		if (imp->log)
			imp->log(&p, (enum fi_log_level)level,
				 (enum fi_log_subsys)subsys, func, line, msg);
		goto out;
	}

	/* One fprintf per message keeps lines from different threads
	 * from interleaving (stdio locks the stream per call). */
	fprintf(stderr, "libfabric:%d:%ld::%s:%s:%s():%d<%s> %s%s",
		(int)getpid(), (long)time(NULL), prov ? prov : "core",
		subsys >= 0 && subsys < FD_LOG_SUBSYS_MAX ?
			fd_subsys_names[subsys] : "unknown",
		func ? func : "?", line,
		level >= 0 && level < FD_LOG_LEVEL_MAX ?
			fd_level_names[level] : "unknown",
		msg, n && msg[n - 1] == '\n' ? "" : "\n");
out:
	errno = saved;
}

void fd_log(int level, int subsys, const char *prov, const char *func,
	    int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fd_vlog(level, subsys, prov, func, line, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------------
 * libfabric's provider logging entry points.
 * ---------------------------------------------------------------------- */
int fi_log_enabled(const struct fi_provider *prov, enum fi_log_level level,
		   enum fi_log_subsys subsys)
{
	return fd_log_enabled((int)level, (int)subsys,
			      prov ? prov->name : NULL);
}

static uint64_t fd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int fi_log_ready(const struct fi_provider *prov, enum fi_log_level level,
		 enum fi_log_subsys subsys, uint64_t *showtime)
{
	struct fi_ops_log *imp = atomic_load(&fd_log_imported);
	uint64_t now;

	if (imp && imp->ready)
		return imp->ready(prov, level, subsys, 0, showtime);
	if (!fi_log_enabled(prov, level, subsys))
		return 0;
	if (!showtime)
		return 1;
	now = fd_now_ms();
	if (now < *showtime)
		return 0;
	*showtime = now + (uint64_t)fd_log_cfg.interval_ms;
	return 1;
}

void fi_log(const struct fi_provider *prov, enum fi_log_level level,
	    enum fi_log_subsys subsys, const char *func, int line,
	    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fd_vlog((int)level, (int)subsys, prov ? prov->name : NULL, func, line,
		fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------------
 * fi_open: library-level objects.  Only "logging" exists: binding an
 * application's fid_logging to it makes every message go to that logger.
 * ---------------------------------------------------------------------- */
static int fd_logging_close(struct fid *fid)
{
	free(fid);
	return 0;
}

static int fd_logging_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fid_logging *user = (struct fid_logging *)bfid;
	struct fi_ops_log *copy, *old;

	(void)fid;
	(void)flags;
	if (!bfid || bfid->fclass != FI_CLASS_LOG || !user->ops)
		return -FI_EINVAL;
	if (user->ops->size < offsetof(struct fi_ops_log, log) +
			      sizeof(user->ops->log) || !user->ops->log)
		return -FI_EINVAL;

	/* Keep our own copy: the application's table may be on its stack. */
	copy = calloc(1, sizeof(*copy));
	if (!copy)
		return -FI_ENOMEM;
	memcpy(copy, user->ops, sizeof(*copy));
	copy->size = sizeof(*copy);

	old = atomic_exchange(&fd_log_imported, copy);
	/* A logger replaced while another thread may still be calling it
	 * is leaked on purpose: freeing it could pull it from under that
	 * thread.  Imports happen once or twice per process. */
	(void)old;
	atomic_store_explicit(&fd_log_max_level, FD_LOG_DEBUG,
			      memory_order_relaxed);
	return 0;
}

static struct fi_ops fd_logging_fid_ops = {
	.size = sizeof(struct fi_ops),
	.close = fd_logging_close,
	.bind = fd_logging_bind,
	.control = fd_no_fid_control,
	.ops_open = fd_no_fid_ops_open,
};

int fi_open(uint32_t version, const char *name, void *attr, size_t attr_len,
	    uint64_t flags, struct fid **fid, void *context)
{
	struct fid *f;

	(void)attr;
	(void)attr_len;
	(void)flags;
	if (!name || !fid)
		return -FI_EINVAL;
	if (FI_MAJOR(version) != 1 || version > FD_API_VERSION)
		return -FI_ENOSYS;
	if (strcasecmp(name, "logging"))
		return -FI_ENOSYS;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -FI_ENOMEM;
	f->fclass = FI_CLASS_LOG;
	f->context = context;
	f->ops = &fd_logging_fid_ops;
	*fid = f;
	return 0;
}
