/* Memory registration as the data path sees it: the descriptor an
 * application passes to fi_send & co. points at the lkey, so turning a desc
 * into an sge costs one load and no branch on the registration's kind. */
#include <rdma/fi_domain.h>

#ifndef FDV_MR_H
#define FDV_MR_H

#include <fdv/fdv_compiler.h>

FDV_EXTERN_C_BEGIN

struct fdv_mr {
	struct fid_mr mr_fid;	/* first: mr_fid.mem_desc == &lkey */
	uint32_t lkey;
};

FDV_INLINE uint32_t fdv_desc_lkey(const void *desc)
{
	return *(const uint32_t *)desc;
}

FDV_EXTERN_C_END

#endif /* FDV_MR_H */
