/* test_info_getinfo's provider table: the configured ones, then a made-up
 * layer, as the build would list a third layer. */
#ifndef FD_PROVIDERS_H
#define FD_PROVIDERS_H

struct fd_provider;
extern const struct fd_provider fdv_provider;
extern const struct fd_provider fdt_fake_provider;
#if FD_HAVE_RSTREAM
extern const struct fd_provider fdr_provider;
#define FD_PROVIDER_LIST &fdv_provider, &fdr_provider, &fdt_fake_provider
#else
#define FD_PROVIDER_LIST &fdv_provider, &fdt_fake_provider
#endif

#endif /* FD_PROVIDERS_H */
