/* fi_info attribute tables (fd_attr.h): one writer for every provider's
 * template rewrite. Slow path (getinfo and object set-up only). */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "fd_attr.h"

/* Each field as the table says; a limit compares as an unsigned 64-bit
 * number, which every field of the list holds without loss (sizes,
 * bit sets, enums and mr_mode are never negative). */
#define FD_ATTR_WRITE(name, field)					\
	if (a->set.name)						\
		fi->field = a->val.name;				\
	else if (a->most.name && (uint64_t)fi->field > a->val.name)	\
		fi->field = a->val.name;				\
	else if (a->least.name && (uint64_t)fi->field < a->val.name)	\
		fi->field = a->val.name;

int fd_attrs_apply(struct fi_info *fi, const struct fd_attrs *a)
{
	FD_ATTR_FIELDS(FD_ATTR_WRITE)
	if (a->prov_name) {
		free(fi->fabric_attr->prov_name);
		fi->fabric_attr->prov_name = strdup(a->prov_name);
		if (!fi->fabric_attr->prov_name)
			return -FI_ENOMEM;
	}
	return 0;
}
