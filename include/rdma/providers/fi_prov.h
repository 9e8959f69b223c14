/*
 * fabric-direct: provider-side view of the libfabric 1.17 API - the
 * descriptor a provider hands to the core, and the core's run-time
 * parameter helpers (FI_<PROV>_<NAME> environment variables).
 *
 * Out-of-tree providers and the fi_ext.h logging/peer interfaces are
 * written against this layout, so struct fi_provider and the prototypes
 * below must stay exactly as in 1.17.
 */
#ifndef FD_RDMA_PROVIDERS_FI_PROV_H
#define FD_RDMA_PROVIDERS_FI_PROV_H

#include <stdint.h>
#include <stddef.h>

/* fi_context, fi_info, fi_fabric_attr, fi_param_type, EXTERNALLY_VISIBLE. */
#include <rdma/fabric.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Naming of plug-in provider libraries: provider "foo" is looked for as
 * libfoo-fi.so in <libdir>/libfabric/.  The loader builds that name from
 * these two, so plug-ins built elsewhere must agree on them.
 */
#define FI_LIB_EXTENSION	"fi"
#define FI_LIB_SUFFIX		FI_LIB_EXTENSION ".so"

/*
 * The single symbol the loader resolves in a plug-in: a provider writes
 * "FI_EXT_INI { ... return &my_prov; }".  Default visibility keeps it
 * exported from libraries built with -fvisibility=hidden, and gcc's
 * externally_visible keeps -fwhole-program from dropping it.
 */
#define FI_EXT_INI							\
	__attribute__((visibility("default"), EXTERNALLY_VISIBLE))	\
	struct fi_provider *fi_prov_ini(void)

/*
 * What a provider registers with the core.  version is the provider's own
 * release; fi_version is the API level (FI_VERSION()) it was built
 * against, which lets the core turn away providers from another major
 * API.  context is scratch space for the core, not for the provider.
 */
struct fi_provider {
	uint32_t		version;
	uint32_t		fi_version;
	struct fi_context	context;
	const char		*name;
	int	(*getinfo)(uint32_t version, const char *node,
			   const char *service, uint64_t flags,
			   const struct fi_info *hints, struct fi_info **info);
	int	(*fabric)(struct fi_fabric_attr *attr,
			  struct fid_fabric **fabric, void *context);
	void	(*cleanup)(void);
};

/*
 * Declares a tunable so fi_getparams()/fi_info -e can list it; the
 * environment name is derived from the provider's name and param_name.
 * help_string_fmt is a printf format (the trailing arguments fill it).
 */
int fi_param_define(const struct fi_provider *provider, const char *param_name,
		    enum fi_param_type type, const char *help_string_fmt, ...);

/*
 * Reads a tunable declared above.  value must point at the C type that
 * matches the declared fi_param_type (char *, int, int, size_t); it is
 * left untouched when the variable is not set (-FI_ENODATA).
 */
int fi_param_get(struct fi_provider *provider, const char *param_name,
		 void *value);

/* Typed front ends, so callers get a compile-time check on value's type. */
static inline int
fi_param_get_str(struct fi_provider *provider, const char *param_name,
		 char **value)
{
	return fi_param_get(provider, param_name, value);
}

static inline int
fi_param_get_int(struct fi_provider *provider, const char *param_name,
		 int *value)
{
	return fi_param_get(provider, param_name, value);
}

/* Booleans are read into an int (0/1), as the core stores them that way. */
static inline int
fi_param_get_bool(struct fi_provider *provider, const char *param_name,
		  int *value)
{
	return fi_param_get(provider, param_name, value);
}

static inline int
fi_param_get_size_t(struct fi_provider *provider, const char *param_name,
		    size_t *value)
{
	return fi_param_get(provider, param_name, value);
}

#ifdef __cplusplus
}
#endif

#endif /* FD_RDMA_PROVIDERS_FI_PROV_H */
