/*
 * The provider table and what dispatches on it: library initialization,
 * fi_fabric and the parameter calls that need the providers initialized.  This is the only file that names the providers, and it
 * names them only through the descriptors listed by the build in
 * fd_providers.h (one per configured layer); the core never includes a
 * provider's header.
 */
#include <pthread.h>
#include <strings.h>

#include <rdma/providers/fi_prov.h>

#include "fd_core.h"
#include "fd_providers.h"

const struct fd_provider *const fd_providers[] = { FD_PROVIDER_LIST };
const size_t fd_provider_count = sizeof(fd_providers) / sizeof(fd_providers[0]);

static pthread_once_t fd_init_once = PTHREAD_ONCE_INIT;

static const struct fd_param_def fd_core_param_defs[] = {
	{ "log_level", FI_PARAM_STRING,
	  "How much to log: warn, trace, info or debug (default: warn)" },
	{ "log_prov", FI_PARAM_STRING,
	  "Log only these providers, comma separated; a leading ^ logs all "
	  "but these (default: all)" },
	{ "log_subsys", FI_PARAM_STRING,
	  "Log only these subsystems (core, fabric, domain, ep_ctrl, ep_data, "
	  "av, cq, eq, mr, cntr), comma separated; a leading ^ excludes them "
	  "(default: all)" },
	{ "log_interval", FI_PARAM_INT,
	  "Minimum milliseconds between two rate-limited log messages "
	  "(default 2000)" },
	{ "provider", FI_PARAM_STRING,
	  "Use only these providers, comma separated; a leading ^ uses all but "
	  "these (default: all available)" },
};

static void fd_do_init(void)
{
	FD_PARAM_DEFINE_TABLE(NULL, fd_core_param_defs);

	for (size_t i = 0; i < fd_provider_count; i++)
		if (fd_providers[i]->init)
			fd_providers[i]->init();
}

void fd_init(void)
{
	pthread_once(&fd_init_once, fd_do_init);
}

/*
 * The public parameter calls list and read every provider's parameters,
 * which the providers define when initialized: that happens here, where
 * the providers are known, so the registry below (fd_param.c) never calls
 * up into initialization.
 */
int fi_getparams(struct fi_param **params, int *count)
{
	if (!params || !count)
		return -FI_EINVAL;
	fd_init();
	return fd_param_list(params, count);
}

int fi_param_get(struct fi_provider *provider, const char *param_name,
		 void *value)
{
	if (!value)
		return -FI_EINVAL;
	fd_init();
	return fd_param_get_any(provider ? provider->name : NULL, param_name, value);
}

/*
 * fi_fabric takes the provider by its full name, as fi_getinfo reported
 * it in fabric_attr->prov_name ("verbs", "verbs;rstream"); no name means
 * the first (core) provider.
 */
int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
	      void *context)
{
	if (!attr || !fabric)
		return -FI_EINVAL;
	fd_init();
	for (size_t i = 0; i < fd_provider_count; i++) {
		const struct fd_provider *prov = fd_providers[i];

		if (attr->prov_name && strcasecmp(attr->prov_name, prov->name))
			continue;
		if (!prov->fabric)
			break;
		return prov->fabric(attr, fabric, context);
	}
	FD_DBG(FD_LOG_FABRIC, "no provider %s", attr->prov_name);
	return -FI_ENODATA;
}
