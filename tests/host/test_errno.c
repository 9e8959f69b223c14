/*
 * fi_strerror: system errno texts below 256, libfabric's own above, either
 * sign accepted, never NULL.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include "fdt_check.h"

static void expect(int code, const char *text)
{
	const char *s = fi_strerror(code);

	CHECK(s && !strcmp(s, text), "fi_strerror(%d) = [%s], want [%s]",
	      code, s ? s : "NULL", text);
}

static void *thread_main(void *arg)
{
	int code = (int)(intptr_t)arg;
	char want[128];

	snprintf(want, sizeof(want), "%s", strerror(code));
	for (int i = 0; i < 50000; i++)
		if (strcmp(fi_strerror(code), want))
			return (void *)1;
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	void *ra, *rb;

	/* The FI_E* codes below FI_ERRNO_OFFSET are the errno values. */
	expect(FI_SUCCESS, strerror(0));
	expect(FI_EAGAIN, strerror(EAGAIN));
	expect(-FI_EAGAIN, strerror(EAGAIN));
	expect(FI_ENODATA, "No data available");
	expect(-FI_ENOSYS, "Function not implemented");
	expect(FI_ECONNREFUSED, strerror(ECONNREFUSED));
	expect(FI_ECANCELED, strerror(ECANCELED));
	expect(FI_EKEYREJECTED, strerror(EKEYREJECTED));

	expect(FI_EOTHER, "Unspecified error");
	expect(FI_ETOOSMALL, "Provided buffer is too small");
	expect(FI_EOPBADSTATE, "Operation not permitted in current state");
	expect(-FI_EAVAIL, "Error available");
	expect(FI_EBADFLAGS, "Flags not supported");
	expect(FI_ENOEQ, "Missing or unavailable event queue");
	expect(FI_EDOMAIN, "Invalid resource domain");
	expect(FI_ENOCQ, "Missing or unavailable completion queue");
	expect(FI_ECRC, "CRC error");
	expect(FI_ETRUNC, "Truncation error");
	expect(FI_ENOKEY, "Required key not available");
	expect(FI_ENOAV, "Missing or unavailable address vector");
	expect(FI_EOVERRUN, "Queue has been overrun");
	expect(-FI_ENORX, "Receiver not ready, no receive buffers available");

	/* Unknown codes still give text. */
	expect(FI_ERRNO_MAX, "Unspecified error");
	expect(100000, "Unspecified error");
	CHECK(fi_strerror(200) && *fi_strerror(200), "errno range unknown");
	CHECK(fi_strerror(-2147483647 - 1) && *fi_strerror(-2147483647 - 1),
	      "INT_MIN");

	pthread_create(&a, NULL, thread_main, (void *)(intptr_t)ENOMEM);
	pthread_create(&b, NULL, thread_main, (void *)(intptr_t)ETIMEDOUT);
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	CHECK(!ra && !rb, "threads");

	if (fdt_check_failures) {
		printf("test_errno: %d fdt_check_failures\n", fdt_check_failures);
		return 1;
	}
	printf("test_errno: ok\n");
	return 0;
}
