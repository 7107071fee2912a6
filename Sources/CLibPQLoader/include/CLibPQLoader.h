#ifndef VAULTKIT_CLIBPQ_LOADER_H
#define VAULTKIT_CLIBPQ_LOADER_H

// Nothing to call: this target defines the libpq functions VaultKitPostgres uses (see
// libpq_loader.c), so that programs linking VaultKitPostgres load libpq only when they
// first talk to PostgreSQL.

#endif
