/*
 * fabric-direct: error numbers of the libfabric 1.x API.
 *
 * Every call returns 0, a non-negative count or a negated code from this
 * file.  Codes below 256 are the host's errno values, so a provider can pass
 * a failing system call's errno straight up; codes from 256 on are
 * fabric-specific and never collide with errno.
 */
#ifndef FD_RDMA_FI_ERRNO_H
#define FD_RDMA_FI_ERRNO_H

#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FI_SUCCESS		0

/*
 * The errno subset the API exposes.  Only these names are part of the
 * contract; applications test against them, not against raw errno.
 */
#define FI_EPERM		EPERM
#define FI_ENOENT		ENOENT
#define FI_EINTR		EINTR
#define FI_EIO			EIO
#define FI_E2BIG		E2BIG
#define FI_EBADF		EBADF
#define FI_EAGAIN		EAGAIN		/* progress, then retry */
#define FI_EWOULDBLOCK		EWOULDBLOCK
#define FI_ENOMEM		ENOMEM
#define FI_EACCES		EACCES
#define FI_EFAULT		EFAULT
#define FI_EBUSY		EBUSY
#define FI_ENODEV		ENODEV
#define FI_EINVAL		EINVAL
#define FI_EMFILE		EMFILE
#define FI_ENOSPC		ENOSPC
#define FI_ENOSYS		ENOSYS
#define FI_ENOMSG		ENOMSG
#define FI_ENODATA		ENODATA
#define FI_EOVERFLOW		EOVERFLOW
#define FI_EMSGSIZE		EMSGSIZE
#define FI_ENOPROTOOPT		ENOPROTOOPT
#define FI_EOPNOTSUPP		EOPNOTSUPP
#define FI_EADDRINUSE		EADDRINUSE
#define FI_EADDRNOTAVAIL	EADDRNOTAVAIL
#define FI_ENETDOWN		ENETDOWN
#define FI_ENETUNREACH		ENETUNREACH
#define FI_ECONNABORTED		ECONNABORTED
#define FI_ECONNRESET		ECONNRESET
#define FI_ENOBUFS		ENOBUFS
#define FI_EISCONN		EISCONN
#define FI_ENOTCONN		ENOTCONN
#define FI_ESHUTDOWN		ESHUTDOWN
#define FI_ETIMEDOUT		ETIMEDOUT
#define FI_ECONNREFUSED		ECONNREFUSED
#define FI_EHOSTDOWN		EHOSTDOWN
#define FI_EHOSTUNREACH		EHOSTUNREACH
#define FI_EALREADY		EALREADY
#define FI_EINPROGRESS		EINPROGRESS
#define FI_EREMOTEIO		EREMOTEIO
#define FI_ECANCELED		ECANCELED
#define FI_EKEYREJECTED		EKEYREJECTED

/* First code that is not an errno value (errno stays below this on Linux). */
#define FI_ERRNO_OFFSET		256

/* Values are fixed by the ABI: binaries compare against the numbers. */
enum {
	FI_EOTHER	= FI_ERRNO_OFFSET,	/* nothing more specific fits */
	FI_ETOOSMALL	= 257,	/* caller's buffer is short; size reported */
	FI_EOPBADSTATE	= 258,	/* object not in a state that allows this */
	FI_EAVAIL	= 259,	/* an error entry waits: use the readerr call */
	FI_EBADFLAGS	= 260,
	FI_ENOEQ	= 261,	/* object needs an EQ bound first */
	FI_EDOMAIN	= 262,
	FI_ENOCQ	= 263,	/* endpoint needs a CQ bound first */
	FI_ECRC		= 264,
	FI_ETRUNC	= 265,	/* data larger than the posted buffer */
	FI_ENOKEY	= 266,
	FI_ENOAV	= 267,
	FI_EOVERRUN	= 268,	/* queue overflowed, entries were lost */
	FI_ENORX	= 269,	/* peer had no receive posted */
	FI_ERRNO_MAX		/* one past the last fabric code */
};

/* Text for a code; callers pass it positive, e.g. fi_strerror(-ret). */
const char *fi_strerror(int errnum);

#ifdef __cplusplus
}
#endif

#endif /* FD_RDMA_FI_ERRNO_H */
