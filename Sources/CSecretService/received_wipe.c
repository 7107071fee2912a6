// Wiping a secret where sd-bus keeps it. A received message's body is sd-bus's read
// buffer, freed (not cleared) when the message goes; the provider copies a secret out of
// it into locked memory and then clears the bytes in place, so a `plain` session's
// secret does not linger in freed heap. Replies that carry a secret are marked sensitive,
// so sd-bus clears their buffers when it frees them.

#include "include/CSecretService.h"
#include <string.h>

void vkss_wipe_received(const void *bytes, size_t size) {
    if (bytes != NULL && size > 0) explicit_bzero((void *)bytes, size);
}
