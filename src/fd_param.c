/*
 * Parameter registry: every environment variable the library reads is
 * defined here first, so fi_getparams (and `fi_info -e`) can list it with
 * its help text and current value.
 *
 * Values are read from the environment on every get: they are consulted
 * at object-creation time only, never on a data path, and reading them
 * fresh lets a test change them with setenv.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rdma/providers/fi_prov.h>

#include "fd_core.h"

#define FD_PARAM_NAME_MAX 128

struct fd_param {
	struct fd_param		*next;
	char			*env_name;	/* FI_VERBS_TX_SIZE */
	char			*help;		/* as listed: "verbs: ..." */
	enum fi_param_type	type;
};

static pthread_mutex_t fd_param_lock = PTHREAD_MUTEX_INITIALIZER;
/* Kept in definition order, which is the order fi_getparams lists. */
static struct fd_param *fd_param_head;
static struct fd_param **fd_param_tail = &fd_param_head;

static int fd_is_core(const char *prov)
{
	return !prov || !*prov || !strcasecmp(prov, "core");
}

static size_t fd_put_upper(char *dst, const char *src)
{
	size_t n = 0;

	for (; *src; src++, n++)
		dst[n] = isalnum((unsigned char)*src) ?
			 (char)toupper((unsigned char)*src) : '_';
	return n;
}

int fd_param_env_name(const char *prov, const char *name, char *buf,
		      size_t len)
{
	size_t need, pos = 0;

	if (!name || !*name || !buf)
		return -FI_EINVAL;
	need = 3 + strlen(name) + 1;
	if (!fd_is_core(prov))
		need += strlen(prov) + 1;
	if (need > len)
		return -FI_EINVAL;

	memcpy(buf, "FI_", 3);
	pos = 3;
	if (!fd_is_core(prov)) {
		pos += fd_put_upper(buf + pos, prov);
		buf[pos++] = '_';
	}
	pos += fd_put_upper(buf + pos, name);
	buf[pos] = '\0';
	return 0;
}

/* Caller holds fd_param_lock. */
static struct fd_param *fd_param_find(const char *env_name)
{
	for (struct fd_param *p = fd_param_head; p; p = p->next)
		if (!strcmp(p->env_name, env_name))
			return p;
	return NULL;
}

int fd_param_define(const char *prov, const char *name,
		    enum fi_param_type type, const char *help)
{
	char env[FD_PARAM_NAME_MAX];
	struct fd_param *p;
	int ret;

	ret = fd_param_env_name(prov, name, env, sizeof(env));
	if (ret)
		return ret;
	if (type != FI_PARAM_STRING && type != FI_PARAM_INT &&
	    type != FI_PARAM_BOOL && type != FI_PARAM_SIZE_T)
		return -FI_EINVAL;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -FI_ENOMEM;
	p->type = type;
	p->env_name = strdup(env);
	if (fd_is_core(prov))
		p->help = strdup(help ? help : "");
	else if (asprintf(&p->help, "%s: %s", prov, help ? help : "") < 0)
		p->help = NULL;
	if (!p->env_name || !p->help) {
		free(p->env_name);
		free(p->help);
		free(p);
		return -FI_ENOMEM;
	}

	pthread_mutex_lock(&fd_param_lock);
	if (fd_param_find(env)) {
		pthread_mutex_unlock(&fd_param_lock);
		free(p->env_name);
		free(p->help);
		free(p);
		return -FI_EALREADY;
	}
	*fd_param_tail = p;
	fd_param_tail = &p->next;
	pthread_mutex_unlock(&fd_param_lock);

	FD_DBG(FD_LOG_CORE, "defined parameter %s", env);
	return 0;
}

/*
 * Look the variable up: its definition must exist and it must be set to a
 * non-empty value.  *env_name receives the variable's name for messages.
 */
static int fd_param_lookup(const char *prov, const char *name,
			   enum fi_param_type type, char *env_name,
			   size_t env_len, const char **value)
{
	struct fd_param *p;
	enum fi_param_type defined;
	const char *v;
	int ret;

	ret = fd_param_env_name(prov, name, env_name, env_len);
	if (ret)
		return ret;

	pthread_mutex_lock(&fd_param_lock);
	p = fd_param_find(env_name);
	pthread_mutex_unlock(&fd_param_lock);
	defined = p ? p->type : type;
	if (!p) {
		FD_WARN(FD_LOG_CORE, "parameter %s read before it was defined",
			env_name);
		return -FI_ENOENT;
	}
	if (defined != type)
		FD_DBG(FD_LOG_CORE, "parameter %s read as another type",
		       env_name);

	v = getenv(env_name);
	if (!v || !*v)
		return -FI_ENODATA;
	*value = v;
	return 0;
}

/* Numbers may carry surrounding blanks, nothing else. */
static int fd_only_blanks(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

int fd_param_get_int(const char *prov, const char *name, int *out)
{
	char env[FD_PARAM_NAME_MAX];
	const char *v;
	char *end;
	long n;
	int ret;

	if (!out)
		return -FI_EINVAL;
	ret = fd_param_lookup(prov, name, FI_PARAM_INT, env, sizeof(env), &v);
	if (ret)
		return ret;

	errno = 0;
	n = strtol(v, &end, 10);
	if (end == v || !fd_only_blanks(end) || errno == ERANGE ||
	    n < INT_MIN || n > INT_MAX) {
		FD_WARN(FD_LOG_CORE, "ignoring %s=%s: not an integer", env, v);
		return -FI_EINVAL;
	}
	*out = (int)n;
	return 0;
}

int fd_param_get_size_t(const char *prov, const char *name, size_t *out)
{
	char env[FD_PARAM_NAME_MAX];
	const char *v, *s;
	unsigned long long n;
	char *end;
	int ret;

	if (!out)
		return -FI_EINVAL;
	ret = fd_param_lookup(prov, name, FI_PARAM_SIZE_T, env, sizeof(env),
			      &v);
	if (ret)
		return ret;

	/* strtoull quietly negates "-1"; a size is never negative. */
	for (s = v; isspace((unsigned char)*s); s++)
		;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (!isdigit((unsigned char)*s) || !fd_only_blanks(end) ||
	    errno == ERANGE || n > SIZE_MAX) {
		FD_WARN(FD_LOG_CORE, "ignoring %s=%s: not a size", env, v);
		return -FI_EINVAL;
	}
	*out = (size_t)n;
	return 0;
}

int fd_param_get_bool(const char *prov, const char *name, int *out)
{
	static const char *const yes[] = { "1", "on", "true", "yes" };
	static const char *const no[] = { "0", "off", "false", "no" };
	char env[FD_PARAM_NAME_MAX];
	const char *v;
	int ret;

	if (!out)
		return -FI_EINVAL;
	ret = fd_param_lookup(prov, name, FI_PARAM_BOOL, env, sizeof(env), &v);
	if (ret)
		return ret;

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*out = 0;
			return 0;
		}
	}
	FD_WARN(FD_LOG_CORE, "ignoring %s=%s: use 0/1, on/off, true/false "
		"or yes/no", env, v);
	return -FI_EINVAL;
}

int fd_param_get_str(const char *prov, const char *name, char **out)
{
	char env[FD_PARAM_NAME_MAX];
	const char *v;
	int ret;

	if (!out)
		return -FI_EINVAL;
	ret = fd_param_lookup(prov, name, FI_PARAM_STRING, env, sizeof(env),
			      &v);
	if (ret)
		return ret;
	*out = (char *)v;
	return 0;
}

void fd_param_define_table(const char *prov, const struct fd_param_def *defs,
			   size_t n)
{
	for (size_t i = 0; i < n; i++)
		fd_param_define(prov, defs[i].name, defs[i].type, defs[i].help);
}

/* v if it lies in [min, max]; else def, with a warning. */
static size_t fd_param_in_range(const char *prov, const char *name, long long v,
				size_t def, size_t min, size_t max)
{
	char env[FD_PARAM_NAME_MAX];

	if (v >= 0 && (unsigned long long)v >= min && (unsigned long long)v <= max)
		return (size_t)v;
	fd_param_env_name(prov, name, env, sizeof(env));
	FD_WARN(FD_LOG_CORE, "%s=%lld out of range [%zu, %zu], using %zu",
		env, v, min, max, def);
	return def;
}

size_t fd_param_int_range(const char *prov, const char *name, size_t def,
			  size_t min, size_t max)
{
	int v;

	if (fd_param_get_int(prov, name, &v))
		return def;
	return fd_param_in_range(prov, name, v, def, min, max);
}

size_t fd_param_size_range(const char *prov, const char *name, size_t def,
			   size_t min, size_t max)
{
	size_t v;

	if (fd_param_get_size_t(prov, name, &v))
		return def;
	if (v > (size_t)INT64_MAX)	/* beyond any range: still refused */
		v = (size_t)INT64_MAX;
	return fd_param_in_range(prov, name, (long long)v, def, min, max);
}

/* ------------------------------------------------------------------------
 * Public API
 * ---------------------------------------------------------------------- */
void fi_freeparams(struct fi_param *params)
{
	if (!params)
		return;
	for (struct fi_param *p = params; p->name; p++) {
		free((char *)p->name);
		free((char *)p->help_string);
		free((char *)p->value);
	}
	free(params);
}

/* fi_getparams' body: the providers have defined theirs (fd_prov.c ran
 * fd_init before calling). */
int fd_param_list(struct fi_param **params, int *count)
{
	struct fi_param *out;
	struct fd_param *p;
	int n = 0, i = 0;

	if (!params || !count)
		return -FI_EINVAL;

	pthread_mutex_lock(&fd_param_lock);
	for (p = fd_param_head; p; p = p->next)
		n++;
	/* One spare zeroed entry ends the array for fi_freeparams. */
	out = calloc((size_t)n + 1, sizeof(*out));
	if (!out)
		goto nomem;
	for (p = fd_param_head; p; p = p->next, i++) {
		const char *v = getenv(p->env_name);

		out[i].type = p->type;
		out[i].name = strdup(p->env_name);
		out[i].help_string = strdup(p->help);
		out[i].value = v ? strdup(v) : NULL;
		if (!out[i].name || !out[i].help_string || (v && !out[i].value)) {
			for (int k = 0; k <= i; k++) {
				free((char *)out[k].name);
				free((char *)out[k].help_string);
				free((char *)out[k].value);
			}
			free(out);
			goto nomem;
		}
	}
	pthread_mutex_unlock(&fd_param_lock);
	*params = out;
	*count = n;
	return 0;
nomem:
	pthread_mutex_unlock(&fd_param_lock);
	*params = NULL;
	*count = 0;
	return -FI_ENOMEM;
}

/*
 * libfabric's provider-side entry points, for code written against
 * rdma/providers/fi_prov.h.  The provider is named by its 'name' field;
 * NULL means the core.
 */
int fi_param_define(const struct fi_provider *provider,
		    const char *param_name, enum fi_param_type type,
		    const char *help_string_fmt, ...)
{
	char *help = NULL;
	va_list ap;
	int ret;

	if (help_string_fmt) {
		va_start(ap, help_string_fmt);
		ret = vasprintf(&help, help_string_fmt, ap);
		va_end(ap);
		if (ret < 0)
			return -FI_ENOMEM;
	}
	ret = fd_param_define(provider ? provider->name : NULL, param_name,
			      type, help);
	free(help);
	return ret;
}

/* fi_param_get's body, likewise after fd_init. */
int fd_param_get_any(const char *prov, const char *param_name, void *value)
{
	char env[FD_PARAM_NAME_MAX];
	enum fi_param_type type;
	struct fd_param *p;
	int ret;

	if (!value)
		return -FI_EINVAL;
	ret = fd_param_env_name(prov, param_name, env, sizeof(env));
	if (ret)
		return ret;

	pthread_mutex_lock(&fd_param_lock);
	p = fd_param_find(env);
	type = p ? p->type : FI_PARAM_STRING;
	pthread_mutex_unlock(&fd_param_lock);
	if (!p) {
		FD_WARN(FD_LOG_CORE, "parameter %s read before it was defined",
			env);
		return -FI_ENOENT;
	}

	switch (type) {
	case FI_PARAM_INT:
		return fd_param_get_int(prov, param_name, value);
	case FI_PARAM_BOOL:
		return fd_param_get_bool(prov, param_name, value);
	case FI_PARAM_SIZE_T:
		return fd_param_get_size_t(prov, param_name, value);
	case FI_PARAM_STRING:
	default:
		return fd_param_get_str(prov, param_name, value);
	}
}
