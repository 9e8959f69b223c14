/* Builds with the rstream layer's include setup (positive control): the
 * verbs contract header, an installed verbs header and the core's. */
#include "fdv_layer.h"
#include <fdv/fdv_ep.h>
#include "fd_core.h"

int fd_layers_probe(void);
int fd_layers_probe(void)
{
	return FDV_EP_KIND_LAYER + FD_LOG_WARN;
}
