/* The counting checks of the unit tests (host, drop-in, the getinfo
 * fuzzer and the device test_getinfo): a check that fails prints where and
 * what and is counted, and the test goes on, so one run lists every
 * failure; main() fails the test when fdt_check_failures is not 0 (the
 * fuzzer aborts at the end of the input). The device tests that stop at the
 * first failure use FDT_ASSERT (tests/device/fdt.h) instead. */
#ifndef FDT_CHECK_H
#define FDT_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int fdt_check_failures;
/* What the checks that follow are about (e.g. which ABI), printed with a
 * failure when set. */
__attribute__((unused)) static const char *fdt_check_context;

__attribute__((format(printf, 4, 5), unused))
static void fdt_check_failed(const char *file, int line, const char *cond,
			     const char *fmt, ...)
{
	va_list ap;

	fdt_check_failures++;
	fprintf(stderr, "%s:%d: %s%sFAILED %s", file, line,
		fdt_check_context ? fdt_check_context : "",
		fdt_check_context ? ": " : "", cond);
	/* fmt is ": " followed by the caller's format, if any */
	if (fmt[2]) {
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
}

/* CHECK(cond) or CHECK(cond, "printf format", args...) */
#define CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			fdt_check_failed(__FILE__, __LINE__, #cond,	\
					 ": " __VA_ARGS__);		\
	} while (0)

/* Two integers that must be equal: both values are printed. */
#define CHECK_EQ(a, b)							\
	do {								\
		long long fdt_a_ = (long long)(a), fdt_b_ = (long long)(b); \
		if (fdt_a_ != fdt_b_)					\
			fdt_check_failed(__FILE__, __LINE__, #a " == " #b, \
					 ": %lld != %lld", fdt_a_, fdt_b_); \
	} while (0)

#endif /* FDT_CHECK_H */
