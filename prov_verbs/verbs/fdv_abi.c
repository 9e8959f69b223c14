/* The library's side of fdv_abi.h: what applications compiled against,
 * compared with what the library was built with. */
#include <stdatomic.h>
#include <stdio.h>

#include "fdv_internal.h"
#include "fdv_layer.h"

/* The first disagreeing report (tag 0: none). Written from constructors,
 * before any thread of the application exists, and read later. */
static _Atomic unsigned int fdv_abi_bad_tag;
static _Atomic size_t fdv_abi_bad_ep_size, fdv_abi_bad_cq_size;

void fdv_abi_announce(unsigned int tag, size_t ep_size, size_t cq_size)
{
	unsigned int none = 0;

	if (tag == FDV_ABI_TAG && ep_size == sizeof(struct fdv_ep) &&
	    cq_size == sizeof(struct fdv_cq))
		return;
	atomic_store(&fdv_abi_bad_ep_size, ep_size);
	atomic_store(&fdv_abi_bad_cq_size, cq_size);
	/* A zero tag never comes from fdv_abi.h: keep it meaning "none". */
	atomic_compare_exchange_strong(&fdv_abi_bad_tag, &none, tag ? tag : ~0u);
}

static void fdv_abi_describe(char *buf, size_t len, unsigned int tag,
			     size_t ep_size, size_t cq_size)
{
	snprintf(buf, len, "ABI %u, FDV_THREAD_SAFE=%u, FDV_EP_LAYERS=%u, "
		 "struct fdv_ep %zu bytes, struct fdv_cq %zu bytes",
		 tag >> 8, (tag >> 1) & 1, tag & 1, ep_size, cq_size);
}

int fdv_abi_check(void)
{
	static atomic_flag logged = ATOMIC_FLAG_INIT;
	unsigned int tag = atomic_load(&fdv_abi_bad_tag);
	char app[160], lib[160];

	if (fdv_likely(!tag))
		return 0;
	if (!atomic_flag_test_and_set(&logged)) {
		fdv_abi_describe(app, sizeof(app), tag,
				 atomic_load(&fdv_abi_bad_ep_size),
				 atomic_load(&fdv_abi_bad_cq_size));
		fdv_abi_describe(lib, sizeof(lib), FDV_ABI_TAG,
				 sizeof(struct fdv_ep), sizeof(struct fdv_cq));
		FD_WARN(FD_LOG_CORE, "the program was compiled against other "
			"fabric-direct headers (%s) than this library (%s): "
			"rebuild it against this library's headers", app, lib);
	}
	return -FI_ENOSYS;
}

/* Layers' reports (fdv_abi_announce_layer): the first layout each slot
 * saw, and whether a later one differed. */
static _Atomic uint64_t fdv_abi_layer_first[FDV_ABI_LAYER_SLOTS];
static _Atomic unsigned int fdv_abi_layer_seen[FDV_ABI_LAYER_SLOTS];
static _Atomic unsigned int fdv_abi_layer_mixed[FDV_ABI_LAYER_SLOTS];

void fdv_abi_announce_layer(unsigned int slot, uint64_t layout)
{
	unsigned int none = 0;

	if (slot >= FDV_ABI_LAYER_SLOTS)
		return;
	if (atomic_compare_exchange_strong(&fdv_abi_layer_seen[slot], &none, 1u)) {
		atomic_store(&fdv_abi_layer_first[slot], layout);
		atomic_store(&fdv_abi_layer_seen[slot], 2u);
		return;
	}
	/* another unit's report: wait for the first one's layout (both run
	 * from constructors, normally one after the other) */
	while (atomic_load(&fdv_abi_layer_seen[slot]) != 2u)
		;
	if (atomic_load(&fdv_abi_layer_first[slot]) != layout)
		atomic_store(&fdv_abi_layer_mixed[slot], 1u);
}

int fdv_abi_check_layer(unsigned int slot, uint64_t layout)
{
	static atomic_flag logged = ATOMIC_FLAG_INIT;
	uint64_t app;
	int ret = fdv_abi_check();

	if (ret)
		return ret;
	if (slot >= FDV_ABI_LAYER_SLOTS)
		return -FI_EINVAL;
	if (fdv_likely(atomic_load(&fdv_abi_layer_seen[slot]) != 2u ||
		       (!atomic_load(&fdv_abi_layer_mixed[slot]) &&
			atomic_load(&fdv_abi_layer_first[slot]) == layout)))
		return 0;
	app = atomic_load(&fdv_abi_layer_first[slot]);
	if (!atomic_flag_test_and_set(&logged))
		FD_WARN(FD_LOG_CORE, "the program was compiled against other fabric-direct "
			"headers than this library (inline layer %u: layout %#llx%s, the "
			"library's %#llx): rebuild it against this library's headers",
			slot, (unsigned long long)app,
			atomic_load(&fdv_abi_layer_mixed[slot]) ? " and others" : "",
			(unsigned long long)layout);
	return -FI_ENOSYS;
}
