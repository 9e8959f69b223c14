/* libFuzzer target: the verbs provider's CM private-data framing
 * (prov_verbs/verbs/fdv_cm_data.c). Whatever a peer puts in a connect request,
 * accept or reject reaches fdv_cm_unpack; it must stay inside the bytes that
 * arrived, reject a length byte that claims more than arrived or more than
 * the framing allows, and hand back exactly the framed bytes otherwise.
 * Whatever it accepts must frame back (fdv_cm_pack) to the same bytes.
 *
 * The first input byte chooses how much of the rest the "transport" claims
 * to have delivered, so short, exact and padded deliveries are all tried
 * (RDMA CM pads private data to the transport's fixed size). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "fdv_cm_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_one(const uint8_t *priv, size_t priv_len)
{
	const uint8_t *user = (const uint8_t *)1;
	size_t len = (size_t)-1;
	int ret = fdv_cm_unpack(priv, priv_len, &user, &len);

	if (!priv || !priv_len) {
		/* Nothing delivered: no data, no error. */
		if (ret != 0 || user != NULL || len != 0)
			abort();
		return;
	}
	if ((size_t)priv[0] + 1 > priv_len || priv[0] > FDV_CM_DATA_MAX) {
		/* Malformed framing must be refused and leave nothing to use. */
		if (ret != -FI_EINVAL || user != NULL || len != 0)
			abort();
		return;
	}
	if (ret != 0 || user != priv + 1 || len != priv[0])
		abort();

	/* The accepted bytes frame back to what arrived. */
	uint8_t again[FDV_CM_PRIV_MAX];
	size_t n = fdv_cm_pack(again, user, len);

	if (n != len + 1 || memcmp(again, priv, n))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t claimed;
	uint8_t *copy;

	check_one(NULL, 0);
	check_one(NULL, size);	/* a length without a buffer: nothing there */
	if (!size)
		return 0;
	claimed = data[0];
	data++;
	size--;
	/* An exact-size heap copy, so ASan catches any read past the end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	check_one(copy, size);
	if (claimed < size)
		check_one(copy, claimed);	/* fewer bytes delivered */
	free(copy);

	/* Framing user data of every legal length and decoding it again. */
	if (size <= FDV_CM_DATA_MAX) {
		uint8_t framed[FDV_CM_PRIV_MAX];
		const uint8_t *user;
		size_t len;
		size_t n = fdv_cm_pack(framed, data, size);

		if (n != size + 1 || fdv_cm_unpack(framed, n, &user, &len) ||
		    len != size || (size && memcmp(user, data, size)))
			abort();
	}
	return 0;
}
