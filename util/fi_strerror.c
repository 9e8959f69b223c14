/*
 * fd_fi_strerror: the text fi_strerror gives for an error number, as
 * libfabric's fi_strerror tool prints it.  Takes what a program printed
 * ("-61", "61", "0x3d"); the sign does not matter.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

static void usage(const char *prog)
{
	printf("Usage: %s FI_ERROR_CODE\n\n"
	       "Displays the error string for the given numeric "
	       "FI_ERROR_CODE.\n"
	       "FI_ERROR_CODE may be a hexadecimal, octal, or decimal "
	       "constant.\n"
	       "For convenience, the absolute value of FI_ERROR_CODE will "
	       "be used.\n", prog);
}

int main(int argc, char **argv)
{
	const char *prog = argc > 0 && argv[0] ? argv[0] : "fi_strerror";
	const char *slash = strrchr(prog, '/');
	char *end;
	long v;

	if (slash)
		prog = slash + 1;
	if (argc != 2) {
		usage(prog);
		return 1;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(prog);
		return 0;
	}
	errno = 0;
	v = strtol(argv[1], &end, 0);
	if (errno || end == argv[1] || *end || v == LONG_MIN ||
	    labs(v) > 0x7fffffffL) {
		printf("ERROR: unable to parse '%s'\n\n", argv[1]);
		usage(prog);
		return 1;
	}
	printf("%s\n", fi_strerror((int)labs(v)));
	return 0;
}
