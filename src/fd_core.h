/*
 * fabric-direct core: private declarations shared by src/ and prov_verbs/.
 *
 * Never installed, never included by a public or direct header.  Everything
 * here is control path; the only thing a hot path may touch is the log-level
 * test inside the FD_* logging macros, which is one relaxed atomic load.
 */
#ifndef FD_CORE_H
#define FD_CORE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

struct sockaddr;

/* What fi_getinfo reports as fabric_attr->prov_version ("117.0"). */
#define FD_PROV_VERSION FI_VERSION(FI_MAJOR_VERSION * 100 + FI_MINOR_VERSION, \
				   FI_REVISION_VERSION * 10)

/* The newest API this library implements. */
#define FD_API_VERSION FI_VERSION(1, 17)

/* ------------------------------------------------------------------------
 * Logging
 *
 * Levels and subsystems use libfabric's numbers (enum fi_log_level and
 * enum fi_log_subsys in rdma/providers/fi_log.h) so the same values can be
 * handed to fi_tostr(FI_TYPE_LOG_LEVEL / FI_TYPE_LOG_SUBSYS) and to an
 * application's imported logger.  They are repeated here so the core does
 * not depend on the provider headers being installed.
 *
 * Environment, read once when the library loads:
 *   FI_LOG_LEVEL   warn (default), trace, info, debug
 *   FI_LOG_PROV    only log these providers ("verbs", "core", "^verbs")
 *   FI_LOG_SUBSYS  only log these subsystems ("cq,eq", "^ep_data")
 * Output goes to stderr as
 *   libfabric:<pid>:<seconds>::<prov>:<subsys>:<func>():<line><<level>> msg
 * which is libfabric's layout, so log scrapers keep working.
 * ---------------------------------------------------------------------- */
enum {
	FD_LOG_WARN = 0,
	FD_LOG_TRACE = 1,
	FD_LOG_INFO = 2,
	FD_LOG_DEBUG = 3,
	FD_LOG_LEVEL_MAX
};

enum {
	FD_LOG_CORE = 0,
	FD_LOG_FABRIC,
	FD_LOG_DOMAIN,
	FD_LOG_EP_CTRL,
	FD_LOG_EP_DATA,
	FD_LOG_AV,
	FD_LOG_CQ,
	FD_LOG_EQ,
	FD_LOG_MR,
	FD_LOG_CNTR,
	FD_LOG_SUBSYS_MAX
};

/*
 * Highest level that can possibly print (-1: nothing).  Provider and
 * subsystem filters are applied later, inside fd_log(), so a message that
 * passes this test may still be dropped; one that fails it costs one load.
 */
extern _Atomic int fd_log_max_level;

static inline int fd_log_maybe(int level)
{
	return level <= atomic_load_explicit(&fd_log_max_level,
					     memory_order_relaxed);
}

/* Full filter: level, FI_LOG_PROV and FI_LOG_SUBSYS (or imported logger). */
int fd_log_enabled(int level, int subsys, const char *prov);

/* Print one message (a trailing newline is added when missing). errno is
 * preserved. */
void fd_log(int level, int subsys, const char *prov, const char *func,
	    int line, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void fd_vlog(int level, int subsys, const char *prov, const char *func,
	     int line, const char *fmt, va_list ap);

/* Re-read FI_LOG_* from the environment (the constructor already did). */
void fd_log_init(void);

/* Files belonging to a provider define FD_LOG_PROV before including this. */
#ifndef FD_LOG_PROV
#define FD_LOG_PROV "core"
#endif

#define FD_LOG_AT(level, subsys, ...)					\
	do {								\
		if (fd_log_maybe(level))				\
			fd_log((level), (subsys), FD_LOG_PROV,		\
			       __func__, __LINE__, __VA_ARGS__);	\
	} while (0)

#define FD_WARN(subsys, ...)	FD_LOG_AT(FD_LOG_WARN, subsys, __VA_ARGS__)
#define FD_INFO(subsys, ...)	FD_LOG_AT(FD_LOG_INFO, subsys, __VA_ARGS__)
#define FD_DBG(subsys, ...)	FD_LOG_AT(FD_LOG_DEBUG, subsys, __VA_ARGS__)

/* ------------------------------------------------------------------------
 * Parameters (environment variables listed by fi_getparams / fi_info -e)
 *
 * prov NULL or "core" names FI_<NAME>; otherwise FI_<PROV>_<NAME>.  Both
 * parts are upper-cased and anything not alphanumeric becomes '_'
 * ("ofi_rxm", "tx_size" -> FI_OFI_RXM_TX_SIZE).  A provider's help text is
 * listed as "<prov>: <help>", as libfabric does.
 *
 * define: 0, -FI_EALREADY if that variable is already defined, -FI_EINVAL,
 *         -FI_ENOMEM.
 * get:    0 and *out set; -FI_ENODATA if the variable is unset (or empty);
 *         -FI_EINVAL (with a warning) if its text does not parse as the
 *         requested type; -FI_ENOENT (with a warning) if never defined.
 *         Booleans accept 0/1, on/off, true/false, yes/no (any case).
 *         Strings point into the environment: do not free or modify.
 * ---------------------------------------------------------------------- */
int fd_param_define(const char *prov, const char *name,
		    enum fi_param_type type, const char *help);
int fd_param_get_int(const char *prov, const char *name, int *out);
int fd_param_get_bool(const char *prov, const char *name, int *out);
int fd_param_get_size_t(const char *prov, const char *name, size_t *out);
int fd_param_get_str(const char *prov, const char *name, char **out);

/* A provider's parameters as a table: each row defined as by
 * fd_param_define (a row that fails is skipped: its variable reads as
 * never defined). */
struct fd_param_def {
	const char *name;
	enum fi_param_type type;
	const char *help;
};
void fd_param_define_table(const char *prov, const struct fd_param_def *defs,
			   size_t n);
#define FD_PARAM_DEFINE_TABLE(prov, defs) \
	fd_param_define_table((prov), (defs), sizeof(defs) / sizeof((defs)[0]))

/* A number variable within [min, max]: its value, or def when it is unset,
 * does not parse or lies outside the range (then with a warning that names
 * the variable, the range and the default used). _int reads an
 * FI_PARAM_INT variable, _size an FI_PARAM_SIZE_T one (parsed unsigned,
 * so a negative value is refused rather than wrapped). */
size_t fd_param_int_range(const char *prov, const char *name, size_t def,
			  size_t min, size_t max);
size_t fd_param_size_range(const char *prov, const char *name, size_t def,
			   size_t min, size_t max);

/* Build the variable name into buf; returns -FI_EINVAL if it does not fit. */
int fd_param_env_name(const char *prov, const char *name, char *buf,
		      size_t len);

/* ------------------------------------------------------------------------
 * Library initialization: defines the core and provider parameters once.
 * The public entry points that may come first (fi_getinfo, fi_fabric,
 * fi_getparams, fi_param_get) call it; everything else runs on objects
 * those made, so the getters above never need to.  Safe from any thread.
 * ---------------------------------------------------------------------- */
void fd_init(void);
/* The bodies of fi_getparams and fi_param_get, which live in fd_prov.c:
 * the parameter registry (fd_param.c) knows no provider and never
 * initializes them; the public calls do that first, then come here. */
int fd_param_list(struct fi_param **params, int *count);
int fd_param_get_any(const char *prov, const char *param_name, void *value);

/* ------------------------------------------------------------------------
 * fi_info matching, used by providers' getinfo
 *
 * fd_info_check: 0 when prov_info (a provider template holding the limits
 * it can offer) satisfies hints under API 'version', else -FI_ENODATA after
 * an FI_LOG_INFO message naming the attribute that failed.  hints may be
 * NULL (everything matches).
 *
 * fd_info_check_why: the same, and *why (if why != NULL) is set to a static
 * string naming the attribute that failed ("caps", "tx_attr->size",
 * "domain_attr->mr_mode", ...), or NULL on success.
 *
 * fd_info_narrow: a new fi_info (free with fi_freeinfo) that is a deep copy
 * of prov_info cut down to what hints asked for: requested primary caps
 * (with their modifiers) plus the provider's secondary caps, only the mode
 * bits the provider really needs, hint sizes/limits copied where given, the
 * application's threading/progress choice, mr_mode per API version,
 * op_flags from the hints, fabric_attr->api_version = version.  Call it
 * only for a prov_info that passed fd_info_check.  NULL on ENOMEM.
 *
 * The provider applies its own defaults afterwards to fields the hints left
 * zero (the template holds maxima, not defaults).
 * ---------------------------------------------------------------------- */
int fd_info_check(uint32_t version, const struct fi_info *prov_info,
		  const struct fi_info *hints);
int fd_info_check_why(uint32_t version, const struct fi_info *prov_info,
		      const struct fi_info *hints, const char **why);
struct fi_info *fd_info_narrow(uint32_t version,
			       const struct fi_info *prov_info,
			       const struct fi_info *hints);

/*
 * Version negotiation (src/fd_version.c): clear in every entry of list
 * what API 'version' does not define (caps, attribute fields, nic), so a
 * caller never gets an answer newer than the version it asked for.
 * fi_getinfo applies it to what every provider returns.
 * fd_caps_unknown_to: the capability bits defined after 'version'.
 */
void fd_info_for_version(struct fi_info *list, uint32_t version);
uint64_t fd_caps_unknown_to(uint32_t version);

/* Capability classes of the fi_getinfo man page. */
#define FD_CAP_MODIFIERS (FI_READ | FI_WRITE | FI_RECV | FI_SEND |	\
			  FI_REMOTE_READ | FI_REMOTE_WRITE)
#define FD_SECONDARY_CAPS (FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT |	\
			   FI_SHARED_AV | FI_TRIGGER | FI_FENCE |	\
			   FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SOURCE_ERR | \
			   FI_RMA_PMEM)

/*
 * A zeroed fid_nic with its device, bus and link attributes allocated, as
 * fi_dupinfo makes them: fi_freeinfo (through fi_close) frees it and every
 * string the caller malloc'ed into its attributes; fi_tostr prints it.
 */
struct fid_nic *fd_nic_alloc(void);

/* ------------------------------------------------------------------------
 * Addresses
 * ---------------------------------------------------------------------- */

/* sizeof the sockaddr for its family (AF_INET, AF_INET6, AF_IB), else 0. */
size_t fd_sockaddr_len(const struct sockaddr *sa);

/* FI_SOCKADDR_IN / _IN6 / _IB for a sockaddr, FI_FORMAT_UNSPEC otherwise. */
uint32_t fd_sockaddr_format(const struct sockaddr *sa);

/*
 * Parse an FI_ADDR_STR address of a sockaddr kind:
 *   fi_sockaddr_in://10.0.0.1:7471     fi_sockaddr_in6://[fe80::1]:7471
 *   fi_sockaddr://<either of the above>
 * Port is optional.  *fmt gets FI_SOCKADDR_IN/_IN6, addr (at least
 * sizeof(struct sockaddr_in6) bytes) the address, *len its size.
 * 0, or -FI_EINVAL if str is not such an address.
 */
int fd_str_to_sockaddr(const char *str, uint32_t *fmt, void *addr,
		       size_t *len);

/*
 * Format addr (addrlen bytes, in addr_format) the way fi_tostr prints it:
 * "fi_sockaddr_in://10.0.0.1:7471", "fi_sockaddr_in6://[fe80::1]:7471",
 * "(null)" for NULL.  Always NUL-terminates when len > 0.
 */
void fd_addr_str(char *buf, size_t len, uint32_t addr_format,
		 const void *addr, size_t addrlen);

/* ------------------------------------------------------------------------
 * Providers
 *
 * Each provider (a layer) exports exactly one const struct fd_provider;
 * the build lists the configured ones in fd_providers.h, and src/fd_prov.c
 * is the only file that names them.  fi_getinfo asks each in table order
 * (verbs first, layers after the core they sit on) and concatenates the
 * answers; fi_fabric hands the fabric to the one whose name is
 * fabric_attr->prov_name.  A layered provider names itself
 * "<core>;<layer>" ("verbs;rstream") and answers to either part in
 * hints->prov_name and FI_PROVIDER.
 *
 * getinfo: 0 with a list, or -FI_ENODATA/-FI_ENOMEM with *info NULL; the
 *          core sets fabric_attr->api_version on every entry (and
 *          prov_name/prov_version if the provider left them unset).
 * fabric:  fi_fabric for this provider (attr and fabric are not NULL).
 * init:    defines the provider's parameters; runs once, inside fd_init,
 *          before any other entry point of the provider.  It must not call
 *          back into fd_init.
 * ---------------------------------------------------------------------- */
struct fd_provider {
	const char *name;
	int (*getinfo)(uint32_t version, const char *node,
		       const char *service, uint64_t flags,
		       const struct fi_info *hints, struct fi_info **info);
	int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		      void *context);
	void (*init)(void);
};

/* The table (src/fd_prov.c), best first. */
extern const struct fd_provider *const fd_providers[];
extern const size_t fd_provider_count;

#endif /* FD_CORE_H */
