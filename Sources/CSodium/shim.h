#ifndef VAULTKIT_CSODIUM_SHIM_H
#define VAULTKIT_CSODIUM_SHIM_H

// libsodium is called directly from Swift; this header only exists so the
// module map has one umbrella to import.
#include <sodium.h>

#endif
