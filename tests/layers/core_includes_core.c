/* Builds with the core's include setup (positive control). */
#include "fd_core.h"

int fd_layers_probe(void);
int fd_layers_probe(void)
{
	return FD_LOG_WARN;
}
