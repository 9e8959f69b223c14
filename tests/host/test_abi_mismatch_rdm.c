/* A unit compiled against another RDM inline layout (fdm/fdm_ep.h) than
 * the library's must make the RDM layer refuse to work, not run on a
 * wrong layout: such a unit's constructor reports a different
 * FDM_ABI_LAYOUT (simulated here by reporting one next to the real one,
 * as a second unit built against other headers would), and fi_getinfo for
 * "verbs;ofi_rxm" answers -FI_ENOSYS with a log line naming the layer's
 * slot. Needs no device: the check comes first. */
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <fdm/fdm_msg.h>

static void __attribute__((constructor)) other_unit(void)
{
	if (fdv_abi_announce_layer)
		fdv_abi_announce_layer(FDM_ABI_SLOT, FDM_ABI_LAYOUT ^ 0x10);
}

int main(void)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	if (!hints)
		return 1;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED;
	hints->fabric_attr->prov_name = strdup("verbs;ofi_rxm");
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, FI_PROV_ATTR_ONLY, hints, &info);
	fi_freeinfo(hints);
	if (ret != -FI_ENOSYS || info) {
		fprintf(stderr, "test_abi_mismatch_rdm: fi_getinfo gave %d (%s), "
			"want -FI_ENOSYS\n", ret, fi_strerror(-ret));
		fi_freeinfo(info);
		return 1;
	}
	printf("test_abi_mismatch_rdm: refused with -FI_ENOSYS\n");
	return 0;
}
