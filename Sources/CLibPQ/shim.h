#ifndef VAULTKIT_CLIBPQ_SHIM_H
#define VAULTKIT_CLIBPQ_SHIM_H

// PostgreSQL's client library headers (libpq-dev on Debian, libpq-devel on Fedora). Only
// the headers: nothing links libpq, which CLibPQLoader loads on first use. Debian keeps
// the header in /usr/include/postgresql; elsewhere pass its directory with
// `-Xcc -I<dir>` (for example Homebrew's `$(brew --prefix libpq)/include`).
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#elif __has_include(<postgresql/libpq-fe.h>)
#include <postgresql/libpq-fe.h>
#else
#error "libpq-fe.h not found: install libpq-dev (Debian) or pass -Xcc -I<directory of libpq-fe.h>"
#endif

#endif
