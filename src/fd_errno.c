/*
 * fi_strerror: text for fabric error numbers.
 *
 * Below FI_ERRNO_OFFSET the FI_E* codes are the system errno values, so the C
 * library's text is used.  From FI_ERRNO_OFFSET up they are libfabric's own.
 * Callers pass the code either way round (fi_strerror(-ret) and
 * fi_strerror(ret) are both common), so the sign is ignored.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>

#include "fd_core.h"
#include "fd_util.h"

/* Indexed by code - FI_ERRNO_OFFSET; one line per FI_E* of fi_errno.h. */
static const char *const fd_fabric_errstr[] = {
	[FI_EOTHER - FI_ERRNO_OFFSET] = "Unspecified error",
	[FI_ETOOSMALL - FI_ERRNO_OFFSET] = "Provided buffer is too small",
	[FI_EOPBADSTATE - FI_ERRNO_OFFSET] =
		"Operation not permitted in current state",
	[FI_EAVAIL - FI_ERRNO_OFFSET] = "Error available",
	[FI_EBADFLAGS - FI_ERRNO_OFFSET] = "Flags not supported",
	[FI_ENOEQ - FI_ERRNO_OFFSET] = "Missing or unavailable event queue",
	[FI_EDOMAIN - FI_ERRNO_OFFSET] = "Invalid resource domain",
	[FI_ENOCQ - FI_ERRNO_OFFSET] =
		"Missing or unavailable completion queue",
	[FI_ECRC - FI_ERRNO_OFFSET] = "CRC error",
	[FI_ETRUNC - FI_ERRNO_OFFSET] = "Truncation error",
	[FI_ENOKEY - FI_ERRNO_OFFSET] = "Required key not available",
	[FI_ENOAV - FI_ERRNO_OFFSET] = "Missing or unavailable address vector",
	[FI_EOVERRUN - FI_ERRNO_OFFSET] = "Queue has been overrun",
	[FI_ENORX - FI_ERRNO_OFFSET] =
		"Receiver not ready, no receive buffers available",
};

#define FD_ERRBUF_LEN 128

const char *fi_strerror(int errnum)
{
	/* Thread-local so concurrent callers never see each other's text. */
	static _Thread_local char buf[FD_ERRBUF_LEN];
	unsigned int code;

	code = errnum < 0 ? 0u - (unsigned int)errnum : (unsigned int)errnum;

	if (code >= FI_ERRNO_OFFSET) {
		unsigned int idx = code - FI_ERRNO_OFFSET;

		/* Unknown library codes read as the generic one, like
		 * libfabric does; they must not fall into strerror(). */
		if (idx < sizeof(fd_fabric_errstr) / sizeof(fd_fabric_errstr[0]) &&
		    fd_fabric_errstr[idx])
			return fd_fabric_errstr[idx];
		return fd_fabric_errstr[0];
	}

	/* _GNU_SOURCE strerror_r: may return a static string instead of
	 * filling buf, so use whatever it hands back. */
	return strerror_r((int)code, buf, sizeof(buf));
}

int fd_errno_to_fi(int err)
{
	switch (err) {
	case 0:
		return 0;
	case ENOMEM:
		return FI_ENOMEM;
	case EAGAIN:
		return FI_EAGAIN;
	case ENODEV:
		return FI_ENODEV;
	case ETIMEDOUT:
		return FI_ETIMEDOUT;
	case ECONNREFUSED:
		return FI_ECONNREFUSED;
	case EADDRINUSE:
		return FI_EADDRINUSE;
	case EADDRNOTAVAIL:
		return FI_EADDRNOTAVAIL;
	default:
		/* libfabric's codes below 256 are errno values */
		return err > 0 && err < FI_ERRNO_OFFSET ? err : FI_EOTHER;
	}
}
