/* A program compiled against the direct headers with the other threading
 * knob than the library's (so another struct fdv_ep / fdv_cq layout and
 * another ABI tag) must be refused by the library with a clear error, not
 * run: fi_getinfo answers -FI_ENOSYS (and logs why) before any object
 * exists. Needs no device: the check comes before the device scan. */
#include <stdio.h>

#include <fdv/fdv_config.h>
#if !FDV_THREAD_SAFE
#undef FDV_THREAD_SAFE
#define FDV_THREAD_SAFE 1
#else
#undef FDV_THREAD_SAFE
#define FDV_THREAD_SAFE 0
#endif

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

int main(void)
{
	struct fi_info *info = NULL;
	int ret;

	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, FI_PROV_ATTR_ONLY,
			 NULL, &info);
	if (ret != -FI_ENOSYS || info) {
		fprintf(stderr, "test_abi_mismatch: fi_getinfo gave %d (%s), "
			"want -FI_ENOSYS\n", ret, fi_strerror(-ret));
		fi_freeinfo(info);
		return 1;
	}
	printf("test_abi_mismatch: refused with -FI_ENOSYS\n");
	return 0;
}
