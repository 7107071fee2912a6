#ifndef VAULT_CLI_SHIM_H
#define VAULT_CLI_SHIM_H

#include <spawn.h>

// Process hardening and terminal handling for the `vault` tool, in C because
// Swift cannot do these itself: prctl(2) is variadic, which Swift cannot call, and
// restoring the terminal from a signal handler needs state a C handler can reach
// without allocating or taking locks.

/// Disables core dumps (RLIMIT_CORE = 0) and, on Linux, marks the process
/// non-dumpable (PR_SET_DUMPABLE = 0), which also stops other processes of the same
/// user from reading its memory through ptrace or /proc/PID/mem.
/// Returns 0, or -1 with errno set when either call failed.
int vault_cli_disable_core_dumps(void);

/// Turns echo off on the terminal `fd` and remembers its previous settings, which
/// vault_cli_echo_restore() puts back; SIGINT, SIGTERM, SIGHUP and SIGQUIT (unless
/// ignored) put them back too before the signal takes its default effect.
/// Returns 0, or -1 with errno set (nothing was changed).
int vault_cli_echo_off(int fd);

/// Restores the settings saved by vault_cli_echo_off() and the previous signal
/// handlers. Does nothing if echo is not off.
void vault_cli_echo_restore(void);

/// Installs a handler for each of the `count` signals in `signals` that sends it on to
/// the child named by vault_cli_forward_to(), whichever thread of the process receives
/// it. (Blocking the signals on one thread is not enough: the kernel may deliver a
/// process-directed signal to any thread that does not block it, and its default
/// action would end `vault` instead of reaching the child.) Signals the kernel sent on
/// the terminal's behalf (Ctrl-C, a hang-up) are not sent again: the child, in the same
/// process group, gets its own copy. A signal that arrives before the child exists is
/// kept and sent when it does. Returns 0, or -1 with errno set.
int vault_cli_forward_signals(const int *signals, int count);

/// Names the child that forwarded signals go to (see vault_cli_forward_signals()) and
/// sends it the last signal that arrived before it existed, if any.
void vault_cli_forward_to(int pid);

/// Adds to `actions` the closing of every file descriptor from `low` up in the child,
/// after the actions added before (glibc 2.34's posix_spawn_file_actions_addclosefrom_np,
/// which Swift cannot see: it is declared only with _GNU_SOURCE). Returns 0, or an error
/// number (ENOSYS where the C library has no such action).
int vault_cli_spawn_close_from(posix_spawn_file_actions_t *actions, int low);

#endif
