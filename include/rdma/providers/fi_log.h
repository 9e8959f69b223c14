/*
 * fabric-direct: provider logging of the libfabric 1.17 API.
 *
 * A provider tags each message with a level and a subsystem; the core
 * filters on FI_LOG_LEVEL, FI_LOG_PROV and FI_LOG_SUBSYS (or hands the
 * message to an imported logger, see fi_ext.h) before anything is
 * formatted.  The enum values are part of the ABI (fi_ext.h's imported
 * logger receives them), so they must not be renumbered.
 */
#ifndef FD_RDMA_PROVIDERS_FI_LOG_H
#define FD_RDMA_PROVIDERS_FI_LOG_H

#include <errno.h>
#include <stdint.h>

/* FI_FORMAT_PRINTF */
#include <rdma/fabric.h>
/* struct fi_provider */
#include <rdma/providers/fi_prov.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which part of the provider a message is about (FI_LOG_SUBSYS filter). */
enum fi_log_subsys {
	FI_LOG_CORE,		/* 0 */
	FI_LOG_FABRIC,
	FI_LOG_DOMAIN,
	FI_LOG_EP_CTRL,
	FI_LOG_EP_DATA,
	FI_LOG_AV,		/* 5 */
	FI_LOG_CQ,
	FI_LOG_EQ,
	FI_LOG_MR,
	FI_LOG_CNTR,
	FI_LOG_SUBSYS_MAX	/* 10: count, not a subsystem */
};

/*
 * Severity, most to least important; FI_LOG_LEVEL=x lets through x and
 * everything before it.
 */
enum fi_log_level {
	FI_LOG_WARN,		/* 0 */
	FI_LOG_TRACE,
	FI_LOG_INFO,
	FI_LOG_DEBUG,
	FI_LOG_MAX		/* 4: count, not a level */
};

/* Non-zero if a message from prov at this level/subsystem would be kept. */
int fi_log_enabled(const struct fi_provider *prov, enum fi_log_level level,
		   enum fi_log_subsys subsys);

/*
 * Like fi_log_enabled, but also rate limits: *showtime is the caller's
 * per-site timestamp of when it may next log, advanced on success.
 */
int fi_log_ready(const struct fi_provider *prov, enum fi_log_level level,
		 enum fi_log_subsys subsys, uint64_t *showtime);

/* Emits one message; func/line identify the call site in the output. */
void fi_log(const struct fi_provider *prov, enum fi_log_level level,
	    enum fi_log_subsys subsys, const char *func, int line,
	    const char *fmt, ...) FI_FORMAT_PRINTF(6, 7);

/*
 * The macros check first so the arguments are not even evaluated when the
 * message is filtered out.  errno is put back afterwards because callers
 * commonly log an error and then return -errno: the logger's own stdio
 * calls must not change what they return.
 */
#define FI_LOG(prov, level, subsystem, ...)				\
	do {								\
		if (fi_log_enabled((prov), (level), (subsystem))) {	\
			int fi_log_errno_ = errno;			\
			fi_log((prov), (level), (subsystem),		\
			       __func__, __LINE__, __VA_ARGS__);	\
			errno = fi_log_errno_;				\
		}							\
	} while (0)

/* For sites that may fire in a loop: one timestamp per call site. */
#define FI_LOG_SPARSE(prov, level, subsystem, ...)			\
	do {								\
		static uint64_t fi_log_showtime_;			\
		if (fi_log_ready((prov), (level), (subsystem),		\
				 &fi_log_showtime_)) {			\
			int fi_log_errno_ = errno;			\
			fi_log((prov), (level), (subsystem),		\
			       __func__, __LINE__, __VA_ARGS__);	\
			errno = fi_log_errno_;				\
		}							\
	} while (0)

#define FI_WARN(prov, subsystem, ...)					\
	FI_LOG(prov, FI_LOG_WARN, subsystem, __VA_ARGS__)

#define FI_WARN_SPARSE(prov, subsystem, ...)				\
	FI_LOG_SPARSE(prov, FI_LOG_WARN, subsystem, __VA_ARGS__)

#define FI_TRACE(prov, subsystem, ...)					\
	FI_LOG(prov, FI_LOG_TRACE, subsystem, __VA_ARGS__)

#define FI_INFO(prov, subsystem, ...)					\
	FI_LOG(prov, FI_LOG_INFO, subsystem, __VA_ARGS__)

/*
 * Debug output costs a branch on every call even when filtered, so it only
 * exists in builds made with ENABLE_DEBUG set non-zero; otherwise the
 * arguments are dropped unevaluated.
 */
#if defined(ENABLE_DEBUG) && ENABLE_DEBUG
#define FI_DBG(prov, subsystem, ...)					\
	FI_LOG(prov, FI_LOG_DEBUG, subsystem, __VA_ARGS__)
#define FI_DBG_TRACE(prov, subsystem, ...)				\
	FI_LOG(prov, FI_LOG_TRACE, subsystem, __VA_ARGS__)
#else
#define FI_DBG(prov, subsystem, ...)		do { } while (0)
#define FI_DBG_TRACE(prov, subsystem, ...)	do { } while (0)
#endif

/*
 * At most one warning per call site for the life of the process.  The
 * flag is only set once a warning was actually let through, so a site
 * hit while warnings are filtered out still gets to warn later.
 */
#define FI_WARN_ONCE(prov, subsystem, ...)				\
	do {								\
		static int fi_log_warned_;				\
		if (!fi_log_warned_ &&					\
		    fi_log_enabled((prov), FI_LOG_WARN, (subsystem))) {	\
			int fi_log_errno_ = errno;			\
			fi_log((prov), FI_LOG_WARN, (subsystem),	\
			       __func__, __LINE__, __VA_ARGS__);	\
			fi_log_warned_ = 1;				\
			errno = fi_log_errno_;				\
		}							\
	} while (0)

#ifdef __cplusplus
}
#endif

#endif /* FD_RDMA_PROVIDERS_FI_LOG_H */
