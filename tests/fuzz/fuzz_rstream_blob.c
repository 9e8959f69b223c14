/* libFuzzer target: the rstream connect-time blob decoder. Any bytes may
 * arrive as CM private data; the decoder must never read past them, and
 * whatever it accepts must satisfy every documented limit and encode back
 * to the same 24 bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fdr_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdr_blob b;
	uint8_t again[FDR_BLOB_LEN];
	/* An exact-size copy, so ASan catches a read past the end. */
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	if (fdr_blob_decode(&b, copy, size) == FDR_OK) {
		if (size < FDR_BLOB_LEN || b.version != FDR_PROTO_VERSION ||
		    (b.flags & ~FDR_BLOB_FLAG_IWARP) ||
		    b.ring_size < FDR_RING_MIN || b.ring_size > FDR_RING_MAX ||
		    b.credits < FDR_CREDITS_MIN || b.rkey > UINT32_MAX ||
		    !b.ring_addr || b.ring_addr + b.ring_size < b.ring_addr)
			abort();
		fdr_blob_encode(again, &b);
		if (memcmp(again, copy, FDR_BLOB_LEN))
			abort();
	}
	free(copy);
	return 0;
}
