#ifndef VAULTKIT_CLIBPQ_SHIM_H
#define VAULTKIT_CLIBPQ_SHIM_H

// PostgreSQL's client library, found with pkg-config (libpq-dev on Debian).
#include <libpq-fe.h>

#endif
