#ifndef VAULTKIT_BENCHMARKS_CLIBPQRAW_SHIM_H
#define VAULTKIT_BENCHMARKS_CLIBPQRAW_SHIM_H

// The bare libpq round trips the Postgres suite compares VaultKitPostgres against.
#include <libpq-fe.h>

#endif
