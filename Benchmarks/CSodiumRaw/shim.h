#ifndef VAULTKIT_BENCHMARKS_CSODIUMRAW_SHIM_H
#define VAULTKIT_BENCHMARKS_CSODIUMRAW_SHIM_H

// The raw libsodium calls the Sealing suite compares VaultKit against.
#include <sodium.h>

#endif
