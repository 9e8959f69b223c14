/* FI_VERBS_CQ_SIZE is range-checked like every other verbs parameter: a
 * value outside [1, INT32_MAX] logs a warning and the default depth
 * (1024) is used, so fi_cq_open with attr.size 0 succeeds. A value in
 * range is used as the depth: one above what the device allows fails
 * fi_cq_open with -FI_EINVAL, exactly as the same size in fi_cq_attr.
 * The value is read when the domain opens (one read per domain).
 *
 * Before the range check, FI_VERBS_CQ_SIZE=0 and =2^40 made every
 * fi_cq_open without an explicit size fail with -FI_EINVAL. */
#include <stdio.h>
#include <stdlib.h>

#include "fdt.h"

/* Opens a domain with FI_VERBS_CQ_SIZE=env (NULL: unset), then a CQ with
 * size 0 and one with an explicit size; returns fi_cq_open's result for
 * the first. */
static int cq_open_with(struct fid_fabric *fab, struct fi_info *info,
			const char *env)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fid_domain *dom;
	struct fid_cq *cq;
	int ret;

	if (env)
		setenv("FI_VERBS_CQ_SIZE", env, 1);
	else
		unsetenv("FI_VERBS_CQ_SIZE");
	FDT_OK(fi_domain(fab, info, &dom, NULL));
	/* Changed after fi_domain: must not matter any more. */
	setenv("FI_VERBS_CQ_SIZE", "0", 1);
	ret = fi_cq_open(dom, &attr, &cq, NULL);
	if (!ret)
		FDT_OK(fi_close(&cq->fid));
	/* An explicit size wins over the variable either way. */
	attr.size = 64;
	FDT_OK(fi_cq_open(dom, &attr, &cq, NULL));
	FDT_OK(fi_close(&cq->fid));
	FDT_OK(fi_close(&dom->fid));
	printf("FI_VERBS_CQ_SIZE=%s: fi_cq_open(size 0) = %d\n",
	       env ? env : "(unset)", ret);
	return ret;
}

int main(void)
{
	struct fi_info *hints, *info;
	struct fid_fabric *fab;

	(void)fdt_addr();	/* exits 77 without a device */
	hints = fdt_hints();
	FDT_OK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
	FDT_OK(fi_fabric(info->fabric_attr, &fab, NULL));

	FDT_OK(cq_open_with(fab, info, NULL));
	FDT_OK(cq_open_with(fab, info, "256"));
	/* Out of range: the default, not a failure. */
	FDT_OK(cq_open_with(fab, info, "0"));
	FDT_OK(cq_open_with(fab, info, "1099511627776"));
	/* In range but beyond the device (Soft-RoCE allows far fewer than
	 * 2^30 entries): used, and refused like the same explicit size. */
	FDT_EXPECT(cq_open_with(fab, info, "1073741824"), -FI_EINVAL);

	FDT_OK(fi_close(&fab->fid));
	fi_freeinfo(info);
	fi_freeinfo(hints);
	unsetenv("FI_VERBS_CQ_SIZE");
	return 0;
}
