/* An "existing libfabric program" for tests/install/check_install.sh: it
 * knows nothing of fabric-direct, includes <rdma/fabric.h> and friends the
 * plain way and links -lfabric. It checks that the build it was compiled
 * against is the one it runs on:
 *   - FI_DIRECT_EXPECT=1: the direct prefix, so fi_send is the inline
 *     wrapper (FABRIC_DIRECT_ENDPOINT defined by the installed
 *     fi_direct_endpoint.h); 0: the default ops-table wrappers;
 *   - fi_getinfo is resolved in a library under FI_EXPECT_LIBDIR;
 *   - fi_version() is 1.17 and fi_getinfo(FI_PROV_ATTR_ONLY) names the
 *     verbs provider (no device needed). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#if defined(FABRIC_DIRECT_ENDPOINT)
#define INLINE_DATA_PATH 1
#else
#define INLINE_DATA_PATH 0
#endif

int main(void)
{
	struct fi_info *hints, *info = NULL;
	const char *want_dir = getenv("FI_EXPECT_LIBDIR");
	const char *want_direct = getenv("FI_DIRECT_EXPECT");
	char real_want[PATH_MAX], real_got[PATH_MAX];
	Dl_info dl;
	int ret;

	if (!want_dir || !want_direct) {
		fprintf(stderr, "FI_EXPECT_LIBDIR and FI_DIRECT_EXPECT must be set\n");
		return 2;
	}
	if (INLINE_DATA_PATH != atoi(want_direct)) {
		fprintf(stderr, "FAIL: inline data path %d, expected %s\n",
			INLINE_DATA_PATH, want_direct);
		return 1;
	}
	if (!dladdr((void *)fi_getinfo, &dl) || !dl.dli_fname ||
	    !realpath(want_dir, real_want) || !realpath(dl.dli_fname, real_got) ||
	    strncmp(real_got, real_want, strlen(real_want)) ||
	    real_got[strlen(real_want)] != '/') {
		fprintf(stderr, "FAIL: fi_getinfo comes from %s, not from %s\n",
			dl.dli_fname ? dl.dli_fname : "?", want_dir);
		return 1;
	}
	if (fi_version() != FI_VERSION(1, 17)) {
		fprintf(stderr, "FAIL: fi_version %u.%u\n",
			FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
		return 1;
	}
	hints = fi_allocinfo();
	if (!hints)
		return 1;
	hints->fabric_attr->prov_name = strdup("verbs");
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, FI_PROV_ATTR_ONLY, hints, &info);
	if (ret || !info || !info->fabric_attr || !info->fabric_attr->prov_name ||
	    strcmp(info->fabric_attr->prov_name, "verbs")) {
		fprintf(stderr, "FAIL: fi_getinfo(FI_PROV_ATTR_ONLY): %d (%s)\n",
			ret, fi_strerror(-ret));
		return 1;
	}
	printf("ok: %s data path, fi_getinfo from %s, provider %s\n",
	       INLINE_DATA_PATH ? "inline" : "ops-table", real_got,
	       info->fabric_attr->prov_name);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return 0;
}
