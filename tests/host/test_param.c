/*
 * Parameter registry (fd_param_*, fi_getparams, fi_param_define/get) and
 * logging (FI_LOG_LEVEL/PROV/SUBSYS, message layout, fi_log*, imported
 * loggers).  Uses the library's private header, so link it against the
 * library's objects (static archive), not only its exported symbols.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include "fd_core.h"
#include "fdt_check.h"

/* ------------------------------------------------------------------------
 * Parameters
 * ---------------------------------------------------------------------- */
static void test_names(void)
{
	char buf[64];

	CHECK(!fd_param_env_name("verbs", "tx_size", buf, sizeof(buf)) &&
	      !strcmp(buf, "FI_VERBS_TX_SIZE"), "%s", buf);
	CHECK(!fd_param_env_name(NULL, "log_level", buf, sizeof(buf)) &&
	      !strcmp(buf, "FI_LOG_LEVEL"), "%s", buf);
	CHECK(!fd_param_env_name("core", "provider", buf, sizeof(buf)) &&
	      !strcmp(buf, "FI_PROVIDER"), "%s", buf);
	CHECK(!fd_param_env_name("ofi_rxm", "use-srx", buf, sizeof(buf)) &&
	      !strcmp(buf, "FI_OFI_RXM_USE_SRX"), "%s", buf);
	CHECK(fd_param_env_name("verbs", "tx_size", buf, 10) == -FI_EINVAL,
	      "too small a buffer");
	CHECK(fd_param_env_name("verbs", "", buf, sizeof(buf)) == -FI_EINVAL,
	      "empty name");
}

static void test_define(void)
{
	CHECK(fd_param_define("tprov", "ival", FI_PARAM_INT, "an int") == 0,
	      "define int");
	CHECK(fd_param_define("tprov", "IVAL", FI_PARAM_INT, "again") ==
	      -FI_EALREADY, "same variable twice");
	CHECK(fd_param_define("tprov", "bval", FI_PARAM_BOOL, "a bool") == 0,
	      "define bool");
	CHECK(fd_param_define("tprov", "sval", FI_PARAM_SIZE_T, "a size") == 0,
	      "define size_t");
	CHECK(fd_param_define("tprov", "str", FI_PARAM_STRING, "a string") ==
	      0, "define string");
	CHECK(fd_param_define("tprov", "bad", (enum fi_param_type)42, "x") ==
	      -FI_EINVAL, "bad type");
}

static void test_get(void)
{
	int i = -1, b = -1;
	size_t z = 0;
	char *s = NULL;

	unsetenv("FI_TPROV_IVAL");
	CHECK(fd_param_get_int("tprov", "ival", &i) == -FI_ENODATA && i == -1,
	      "unset int");
	setenv("FI_TPROV_IVAL", "", 1);
	CHECK(fd_param_get_int("tprov", "ival", &i) == -FI_ENODATA, "empty");
	setenv("FI_TPROV_IVAL", "42", 1);
	CHECK(fd_param_get_int("tprov", "ival", &i) == 0 && i == 42, "%d", i);
	setenv("FI_TPROV_IVAL", " -17 ", 1);
	CHECK(fd_param_get_int("tprov", "ival", &i) == 0 && i == -17, "%d", i);
	i = 5;
	setenv("FI_TPROV_IVAL", "12abc", 1);
	CHECK(fd_param_get_int("tprov", "ival", &i) == -FI_EINVAL && i == 5,
	      "trailing junk");
	setenv("FI_TPROV_IVAL", "99999999999", 1);
	CHECK(fd_param_get_int("tprov", "ival", &i) == -FI_EINVAL, "range");
	setenv("FI_TPROV_IVAL", "42", 1);

	static const struct { const char *text; int value; } bools[] = {
		{ "1", 1 }, { "yes", 1 }, { "On", 1 }, { "TRUE", 1 },
		{ "0", 0 }, { "no", 0 }, { "OFF", 0 }, { "false", 0 },
	};
	for (size_t k = 0; k < sizeof(bools) / sizeof(bools[0]); k++) {
		setenv("FI_TPROV_BVAL", bools[k].text, 1);
		b = -1;
		CHECK(fd_param_get_bool("tprov", "bval", &b) == 0 &&
		      b == bools[k].value, "bool %s -> %d", bools[k].text, b);
	}
	setenv("FI_TPROV_BVAL", "maybe", 1);
	CHECK(fd_param_get_bool("tprov", "bval", &b) == -FI_EINVAL, "maybe");

	setenv("FI_TPROV_SVAL", "4096", 1);
	CHECK(fd_param_get_size_t("tprov", "sval", &z) == 0 && z == 4096,
	      "%zu", z);
	setenv("FI_TPROV_SVAL", "18446744073709551615", 1);
	CHECK(fd_param_get_size_t("tprov", "sval", &z) == 0 && z == SIZE_MAX,
	      "%zu", z);
	setenv("FI_TPROV_SVAL", "-1", 1);
	CHECK(fd_param_get_size_t("tprov", "sval", &z) == -FI_EINVAL,
	      "negative size");
	setenv("FI_TPROV_SVAL", "1k", 1);
	CHECK(fd_param_get_size_t("tprov", "sval", &z) == -FI_EINVAL,
	      "suffix");

	setenv("FI_TPROV_STR", "hello world", 1);
	CHECK(fd_param_get_str("tprov", "str", &s) == 0 && s &&
	      !strcmp(s, "hello world"), "str");

	CHECK(fd_param_get_int("tprov", "never_defined", &i) == -FI_ENOENT,
	      "undefined");
	CHECK(fd_param_get_int("tprov", "ival", NULL) == -FI_EINVAL, "NULL");
}

static const struct fi_param *find(const struct fi_param *p, int n,
				   const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(p[i].name, name))
			return &p[i];
	return NULL;
}

static void test_getparams(void)
{
	struct fi_provider prov = { .name = "tprov2" };
	struct fi_param *params = NULL;
	const struct fi_param *p;
	int count = 0, v = 0;
	char *s = NULL;

	CHECK(fi_param_define(&prov, "level", FI_PARAM_INT, "help %d", 5) == 0,
	      "fi_param_define");
	CHECK(fi_param_define(&prov, "name", FI_PARAM_STRING, "a name") == 0,
	      "fi_param_define str");
	setenv("FI_TPROV2_LEVEL", "3", 1);
	setenv("FI_TPROV2_NAME", "abc", 1);
	CHECK(fi_param_get(&prov, "level", &v) == 0 && v == 3, "get %d", v);
	CHECK(fi_param_get_str(&prov, "name", &s) == 0 && !strcmp(s, "abc"),
	      "get str");
	CHECK(fi_param_get(&prov, "other", &v) == -FI_ENOENT, "undefined");

	CHECK(fi_getparams(&params, &count) == 0 && params, "fi_getparams");
	if (!params)
		return;
	CHECK(params[count].name == NULL, "array terminated");

	p = find(params, count, "FI_TPROV_IVAL");
	CHECK(p && p->type == FI_PARAM_INT && !strcmp(p->help_string,
	      "tprov: an int") && p->value && !strcmp(p->value, "42"),
	      "FI_TPROV_IVAL listed");
	p = find(params, count, "FI_TPROV2_LEVEL");
	CHECK(p && !strcmp(p->help_string, "tprov2: help 5") &&
	      !strcmp(p->value, "3"), "FI_TPROV2_LEVEL listed");
	unsetenv("FI_TPROV_SVAL");
	p = find(params, count, "FI_TPROV_SVAL");
	CHECK(p && p->type == FI_PARAM_SIZE_T, "size_t listed");

	/* The library's own: core ones without a prefix, verbs' with. */
	p = find(params, count, "FI_LOG_LEVEL");
	CHECK(p && p->type == FI_PARAM_STRING, "FI_LOG_LEVEL");
	CHECK(p && strncmp(p->help_string, "core", 4), "no core prefix");
	CHECK(find(params, count, "FI_PROVIDER") != NULL, "FI_PROVIDER");
	p = find(params, count, "FI_VERBS_TX_SIZE");
	CHECK(p && p->type == FI_PARAM_INT &&
	      !strncmp(p->help_string, "verbs: ", 7), "FI_VERBS_TX_SIZE");
	CHECK(find(params, count, "FI_VERBS_INLINE_SIZE") != NULL, "inline");
	CHECK(find(params, count, "FI_VERBS_IFACE") != NULL, "iface");
	fi_freeparams(params);

	CHECK(fi_getparams(NULL, &count) == -FI_EINVAL, "NULL");
	fi_freeparams(NULL);
}

/* ------------------------------------------------------------------------
 * Logging: stderr goes to a file we read back.
 * ---------------------------------------------------------------------- */
static FILE *capture;
static int saved_stderr;

static void capture_start(void)
{
	fflush(stderr);
	capture = tmpfile();
	saved_stderr = dup(2);
	dup2(fileno(capture), 2);
}

static char *capture_end(void)
{
	static char text[8192];
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	rewind(capture);
	n = fread(text, 1, sizeof(text) - 1, capture);
	text[n] = '\0';
	fclose(capture);
	return text;
}

static void relog(const char *level, const char *prov, const char *subsys)
{
	if (level)
		setenv("FI_LOG_LEVEL", level, 1);
	else
		unsetenv("FI_LOG_LEVEL");
	if (prov)
		setenv("FI_LOG_PROV", prov, 1);
	else
		unsetenv("FI_LOG_PROV");
	if (subsys)
		setenv("FI_LOG_SUBSYS", subsys, 1);
	else
		unsetenv("FI_LOG_SUBSYS");
	fd_log_init();
}

static void test_log_levels(void)
{
	char *out, expect[128];
	int line;

	relog(NULL, NULL, NULL);
	CHECK(fd_log_maybe(FD_LOG_WARN) && !fd_log_maybe(FD_LOG_TRACE),
	      "default is warn");
	capture_start();
	FD_INFO(FD_LOG_CORE, "not shown");
	FD_WARN(FD_LOG_CORE, "shown %d", 1); line = __LINE__;
	out = capture_end();
	CHECK(!strstr(out, "not shown"), "info at warn level: %s", out);
	snprintf(expect, sizeof(expect), ":test_log_levels():%d<warn> shown 1\n",
		 line);
	CHECK(strstr(out, expect) != NULL, "warn line: [%s] want [%s]", out,
	      expect);

	/* libfabric:<pid>:<seconds>::<prov>:<subsys>:<func>():<line><lvl> */
	{
		int pid = 0;
		long secs = 0;
		char prov[16], subsys[16];

		CHECK(sscanf(out, "libfabric:%d:%ld::%15[^:]:%15[^:]:", &pid,
			     &secs, prov, subsys) == 4 && pid == getpid() &&
		      secs > 0 && !strcmp(prov, "core") &&
		      !strcmp(subsys, "core"), "layout: %s", out);
	}

	relog("info", NULL, NULL);
	CHECK(fd_log_maybe(FD_LOG_INFO) && !fd_log_maybe(FD_LOG_DEBUG),
	      "info level");
	capture_start();
	errno = EBADF;
	FD_INFO(FD_LOG_CQ, "now shown");
	CHECK(errno == EBADF, "errno kept");
	FD_DBG(FD_LOG_CQ, "debug hidden");
	out = capture_end();
	CHECK(strstr(out, "::core:cq:") && strstr(out, "<info> now shown\n") &&
	      !strstr(out, "debug hidden"), "info: %s", out);

	relog("DEBUG", NULL, NULL);
	CHECK(fd_log_maybe(FD_LOG_DEBUG), "debug level");
	relog("2", NULL, NULL);
	CHECK(fd_log_maybe(FD_LOG_INFO) && !fd_log_maybe(FD_LOG_DEBUG),
	      "numeric level");

	capture_start();
	relog("loud", NULL, NULL);
	out = capture_end();
	CHECK(strstr(out, "FI_LOG_LEVEL=loud") && fd_log_maybe(FD_LOG_WARN) &&
	      !fd_log_maybe(FD_LOG_TRACE), "bad level: %s", out);
}

static void test_log_filters(void)
{
	relog("debug", "verbs", NULL);
	CHECK(fd_log_enabled(FD_LOG_INFO, FD_LOG_CORE, "verbs"), "verbs on");
	CHECK(!fd_log_enabled(FD_LOG_INFO, FD_LOG_CORE, "core"), "core off");
	relog("debug", "^verbs", NULL);
	CHECK(!fd_log_enabled(FD_LOG_INFO, FD_LOG_CORE, "verbs"), "^verbs");
	CHECK(fd_log_enabled(FD_LOG_INFO, FD_LOG_CORE, "core"), "^verbs core");
	relog("debug", "core,verbs", NULL);
	CHECK(fd_log_enabled(FD_LOG_INFO, FD_LOG_CORE, "VERBS") &&
	      fd_log_enabled(FD_LOG_INFO, FD_LOG_CORE, "core") &&
	      !fd_log_enabled(FD_LOG_INFO, FD_LOG_CORE, "rstream"), "list");

	relog("debug", NULL, "cq,eq");
	CHECK(fd_log_enabled(FD_LOG_DEBUG, FD_LOG_CQ, "verbs") &&
	      fd_log_enabled(FD_LOG_DEBUG, FD_LOG_EQ, "verbs") &&
	      !fd_log_enabled(FD_LOG_DEBUG, FD_LOG_CORE, "verbs"), "subsys");
	relog("debug", NULL, "^ep_data");
	CHECK(!fd_log_enabled(FD_LOG_DEBUG, FD_LOG_EP_DATA, "verbs") &&
	      fd_log_enabled(FD_LOG_DEBUG, FD_LOG_EP_CTRL, "verbs"),
	      "^subsys");

	relog("info", NULL, NULL);
	CHECK(!fd_log_enabled(FD_LOG_DEBUG, FD_LOG_CORE, "core"), "level");
	CHECK(!fd_log_enabled(FD_LOG_INFO, FD_LOG_SUBSYS_MAX, "core"),
	      "bad subsys");
}

static void test_fi_log(void)
{
	struct fi_provider prov = { .name = "myprov" };
	uint64_t showtime = 0;
	char *out;

	relog("info", NULL, NULL);
	CHECK(fi_log_enabled(&prov, FI_LOG_INFO, FI_LOG_MR) &&
	      !fi_log_enabled(&prov, FI_LOG_DEBUG, FI_LOG_MR), "fi_log_enabled");
	capture_start();
	fi_log(&prov, FI_LOG_INFO, FI_LOG_MR, "somefunc", 12, "value %s\n",
	       "x");
	out = capture_end();
	CHECK(strstr(out, "::myprov:mr:somefunc():12<info> value x\n") &&
	      !strstr(out, "x\n\n"), "fi_log: %s", out);

	CHECK(fi_log_ready(&prov, FI_LOG_WARN, FI_LOG_CORE, &showtime) == 1,
	      "first ready");
	CHECK(fi_log_ready(&prov, FI_LOG_WARN, FI_LOG_CORE, &showtime) == 0,
	      "rate limited");
	CHECK(fi_log_ready(&prov, FI_LOG_DEBUG, FI_LOG_CORE, &showtime) == 0,
	      "disabled level");
}

/* An application logger taking over through fi_open("logging"). */
static int imported_calls;
static char imported_msg[256];

static int imp_enabled(const struct fi_provider *prov, enum fi_log_level l,
		       enum fi_log_subsys s, uint64_t flags)
{
	(void)s;
	(void)flags;
	return l <= FI_LOG_INFO && prov && strcmp(prov->name, "quiet");
}

static void imp_log(const struct fi_provider *prov, enum fi_log_level l,
		    enum fi_log_subsys s, const char *func, int line,
		    const char *msg)
{
	(void)l;
	(void)s;
	(void)func;
	(void)line;
	imported_calls++;
	snprintf(imported_msg, sizeof(imported_msg), "%s|%s", prov->name, msg);
}

static void test_import(void)
{
	struct fi_ops_log ops = { .enabled = imp_enabled, .log = imp_log };
	struct fid_logging log_fid = { .ops = &ops };
	struct fid *fid;
	char *out;

	CHECK(fi_open(FI_VERSION(1, 17), "mr_cache", NULL, 0, 0, &fid, NULL) ==
	      -FI_ENOSYS, "unknown object");
	relog("warn", NULL, NULL);
	CHECK(fi_import_log(FI_VERSION(1, 17), 0, &log_fid) == 0, "import");

	capture_start();
	FD_INFO(FD_LOG_CORE, "to the app %d", 7);
	fd_log(FD_LOG_WARN, FD_LOG_CORE, "quiet", "f", 1, "dropped");
	FD_DBG(FD_LOG_CORE, "too detailed");
	out = capture_end();
	CHECK(out[0] == '\0', "nothing on stderr: %s", out);
	CHECK(imported_calls == 1 && !strcmp(imported_msg, "core|to the app 7"),
	      "imported: %d [%s]", imported_calls, imported_msg);
}

/* A table of definitions, and the range-checked readers: a value in range
 * is taken, anything else (unset, unparsable, outside) gives the default,
 * and outside the range says so in a warning naming the variable. */
static void test_table_and_range(void)
{
	static const struct fd_param_def defs[] = {
		{ "depth", FI_PARAM_INT, "a depth" },
		{ "bytes", FI_PARAM_SIZE_T, "a size" },
		{ "bad", (enum fi_param_type)99, "refused, the rest still defined" },
		{ "word", FI_PARAM_STRING, "a word" },
	};
	char *out, *w;
	int v;

	FD_PARAM_DEFINE_TABLE("tprov3", defs);
	CHECK(fd_param_define("tprov3", "depth", FI_PARAM_INT, "x") == -FI_EALREADY,
	      "table row defined");
	CHECK(fd_param_define("tprov3", "word", FI_PARAM_STRING, "x") == -FI_EALREADY,
	      "row after a refused one defined");
	CHECK(fd_param_get_int("tprov3", "bad", &v) == -FI_ENOENT, "refused row");
	setenv("FI_TPROV3_WORD", "w1", 1);
	CHECK(!fd_param_get_str("tprov3", "word", &w) && !strcmp(w, "w1"), "word");

	relog("warn", NULL, NULL);
	unsetenv("FI_TPROV3_DEPTH");
	CHECK(fd_param_int_range("tprov3", "depth", 7, 1, 100) == 7, "unset");
	setenv("FI_TPROV3_DEPTH", "1", 1);
	CHECK(fd_param_int_range("tprov3", "depth", 7, 1, 100) == 1, "low edge");
	setenv("FI_TPROV3_DEPTH", "100", 1);
	CHECK(fd_param_int_range("tprov3", "depth", 7, 1, 100) == 100, "high edge");
	setenv("FI_TPROV3_DEPTH", "0", 1);
	capture_start();
	v = (int)fd_param_int_range("tprov3", "depth", 7, 1, 100);
	out = capture_end();
	CHECK(v == 7, "below: %d", v);
	CHECK(strstr(out, "FI_TPROV3_DEPTH=0 out of range [1, 100], using 7") != NULL,
	      "warning: %s", out);
	setenv("FI_TPROV3_DEPTH", "-5", 1);
	capture_start();
	v = (int)fd_param_int_range("tprov3", "depth", 7, 0, 100);
	out = capture_end();
	CHECK(v == 7 && strstr(out, "FI_TPROV3_DEPTH=-5") != NULL,
	      "negative: %d %s", v, out);
	setenv("FI_TPROV3_DEPTH", "101", 1);
	capture_start();
	CHECK(fd_param_int_range("tprov3", "depth", 7, 1, 100) == 7, "above");
	capture_end();
	unsetenv("FI_TPROV3_DEPTH");

	setenv("FI_TPROV3_BYTES", "4096", 1);
	CHECK(fd_param_size_range("tprov3", "bytes", 64, 1, 1 << 20) == 4096, "size");
	setenv("FI_TPROV3_BYTES", "18446744073709551615", 1);
	capture_start();
	CHECK(fd_param_size_range("tprov3", "bytes", 64, 1, 1 << 20) == 64,
	      "huge size");
	out = capture_end();
	CHECK(strstr(out, "FI_TPROV3_BYTES=") != NULL, "huge size warned: %s", out);
	setenv("FI_TPROV3_BYTES", "-1", 1);
	capture_start();
	CHECK(fd_param_size_range("tprov3", "bytes", 64, 1, 1 << 20) == 64,
	      "negative size refused by the parser");
	capture_end();
	unsetenv("FI_TPROV3_BYTES");
	unsetenv("FI_TPROV3_WORD");
	relog(NULL, NULL, NULL);
}

int main(void)
{
	test_names();
	test_define();
	test_get();
	test_getparams();
	test_log_levels();
	test_log_filters();
	test_fi_log();
	test_table_and_range();
	test_import();	/* last: the import cannot be undone */
	if (fdt_check_failures) {
		printf("test_param: %d fdt_check_failures\n", fdt_check_failures);
		return 1;
	}
	printf("test_param: ok\n");
	return 0;
}
