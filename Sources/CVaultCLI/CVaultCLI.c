#define _GNU_SOURCE
#include "CVaultCLI.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <termios.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

int vault_cli_disable_core_dumps(void) {
    int result = 0;
    struct rlimit none = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &none) != 0) result = -1;
#ifdef __linux__
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) result = -1;
#endif
    return result;
}

// Written only while no handler can run (before installing, after uninstalling).
static int saved_fd = -1;
static struct termios saved_termios;
static const int restored_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define RESTORED_SIGNAL_COUNT (sizeof restored_signals / sizeof restored_signals[0])
static struct sigaction saved_actions[RESTORED_SIGNAL_COUNT];

static void restore_and_reraise(int signal_number) {
    // Only async-signal-safe calls here: tcsetattr, sigaction, raise.
    int saved_errno = errno;
    if (saved_fd >= 0) tcsetattr(saved_fd, TCSAFLUSH, &saved_termios);
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(signal_number, &default_action, NULL);
    raise(signal_number);
    errno = saved_errno;
}

int vault_cli_echo_off(int fd) {
    if (saved_fd >= 0) { errno = EBUSY; return -1; }
    struct termios current;
    if (tcgetattr(fd, &current) != 0) return -1;
    saved_termios = current;

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = restore_and_reraise;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < RESTORED_SIGNAL_COUNT; i++) sigaddset(&action.sa_mask, restored_signals[i]);
    saved_fd = fd;
    for (size_t i = 0; i < RESTORED_SIGNAL_COUNT; i++) {
        sigaction(restored_signals[i], &action, &saved_actions[i]);
        // A signal the parent told us to ignore (nohup, a shell's trap '') stays ignored.
        if (saved_actions[i].sa_handler == SIG_IGN) sigaction(restored_signals[i], &saved_actions[i], NULL);
    }

    current.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
    current.c_lflag |= ICANON;
    if (tcsetattr(fd, TCSAFLUSH, &current) != 0) {
        int saved_errno = errno;
        vault_cli_echo_restore();
        errno = saved_errno;
        return -1;
    }
    return 0;
}

void vault_cli_echo_restore(void) {
    if (saved_fd < 0) return;
    tcsetattr(saved_fd, TCSAFLUSH, &saved_termios);
    for (size_t i = 0; i < RESTORED_SIGNAL_COUNT; i++) sigaction(restored_signals[i], &saved_actions[i], NULL);
    saved_fd = -1;
}

// Read by the forwarding handler; written with the handler installed, hence sig_atomic_t.
static volatile sig_atomic_t forward_pid = 0;
static volatile sig_atomic_t forward_pending = 0;

static void forward_signal(int signal_number, siginfo_t *info, void *context) {
    (void)context;
    if (info != NULL && info->si_code == SI_KERNEL) return;
    int saved_errno = errno;
    pid_t pid = (pid_t)forward_pid;
    if (pid > 0) kill(pid, signal_number); else forward_pending = signal_number;
    errno = saved_errno;
}

int vault_cli_forward_signals(const int *signals, int count) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = forward_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (int index = 0; index < count; index++) {
        if (sigaction(signals[index], &action, NULL) != 0) return -1;
    }
    return 0;
}

void vault_cli_forward_to(int pid) {
    forward_pid = pid;
    int pending = forward_pending;
    if (pending != 0) {
        forward_pending = 0;
        kill((pid_t)pid, pending);
    }
}

int vault_cli_spawn_close_from(posix_spawn_file_actions_t *actions, int low) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np(actions, low);
#else
    (void)actions;
    (void)low;
    return ENOSYS;
#endif
}
