// What the provider's loop waits on besides sd-bus: SIGTERM and SIGINT (turned into bytes
// on a pipe by a handler, so that no signal is lost between two waits and the loop, not
// the default action, ends the process) and one more descriptor (the terminal an unlock
// prompt reads from). One poll covers them all, so the provider never blocks on any.

#define _GNU_SOURCE
#include "include/CSecretService.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int stop_pipe[2] = {-1, -1};

static void on_stop_signal(int signal) {
    int saved = errno;
    unsigned char byte = (unsigned char)signal;
    (void)!write(stop_pipe[1], &byte, 1);
    errno = saved;
}

int vkss_catch_stop_signals(void) {
    if (stop_pipe[0] >= 0) return stop_pipe[0];
    if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return -errno;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGTERM, &action, NULL) != 0 || sigaction(SIGINT, &action, NULL) != 0) return -errno;
    return stop_pipe[0];
}

int vkss_stop_signal_received(int fd) {
    unsigned char byte = 0;
    return read(fd, &byte, 1) == 1 ? byte : 0;
}

int vkss_wait(sd_bus *bus, int stop_fd, int extra_fd, uint64_t timeout_usec) {
    int fd = vkbus_get_fd(bus);
    if (fd < 0) return fd;
    int events = vkbus_get_events(bus);
    if (events < 0) return events;
    uint64_t until = UINT64_MAX;
    int r = vkbus_get_timeout(bus, &until);
    if (r < 0) return r;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t now_usec = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
    uint64_t wait_usec = timeout_usec;
    if (until != UINT64_MAX) {
        uint64_t bus_wait = until > now_usec ? until - now_usec : 0;
        if (bus_wait < wait_usec) wait_usec = bus_wait;
    }
    int timeout_ms = wait_usec == UINT64_MAX ? -1 : (int)(wait_usec / 1000u > 3600000u ? 3600000u : (wait_usec + 999u) / 1000u);
    struct pollfd fds[3] = {{fd, (short)events, 0}, {stop_fd, POLLIN, 0}, {extra_fd, POLLIN, 0}};
    r = poll(fds, extra_fd >= 0 ? 3 : 2, timeout_ms);
    if (r < 0) return errno == EINTR ? 0 : -errno;
    int ready = 0;
    if (fds[1].revents & POLLIN) ready |= VKSS_READY_STOP;
    if (extra_fd >= 0 && fds[2].revents) ready |= VKSS_READY_EXTRA;
    return ready;
}
