/*
 * kubelet-ts-netns-probe: the network half of an httpGet / tcpSocket probe (kubelet pkg/probe/http,
 * pkg/probe/tcp) run INSIDE a pod sandbox's network namespace. Pods with network mode `none` have
 * no address the node can reach, and neither the pause image nor the app image has to carry any
 * tool, so the agent (root on the node) runs this small static helper: it enters the namespace
 * with setns(2) and connects from there.
 *
 * Usage:
 *   kubelet-ts-netns-probe NETNS_PATH tcp HOST PORT TIMEOUT_MS
 *       connect, then close. Exit 0 when the connection was accepted.
 *   kubelet-ts-netns-probe NETNS_PATH raw HOST PORT TIMEOUT_MS
 *       connect, write stdin (a complete HTTP/1.1 request with `Connection: close`) to the socket,
 *       copy the reply to stdout (at most 64 KiB) until the peer closes or 64 KiB arrived.
 * NETNS_PATH is e.g. /proc/<sandbox pid>/ns/net. HOST is a numeric IPv4 or IPv6 address.
 * TIMEOUT_MS bounds the whole run.
 *
 * Exit status: 0 success; 1 the probe failed (refused, unreachable, timed out; reason on stderr);
 * 2 the probe could not be run (bad arguments, cannot enter the namespace; reason on stderr).
 *
 * Built by tools/lib/netns-probe.sh: gcc -static -O2 → .run/bin/kubelet-ts-netns-probe.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPLY (64 * 1024)
#define MAX_REQUEST (16 * 1024)

static long long deadline_ms;

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* left_ms: ms to the deadline, at most INT_MAX (poll's int; wait_for polls again past it). */
static int left_ms(void) {
  long long left = deadline_ms - now_ms();
  if (left > INT_MAX) return INT_MAX;
  return left > 0 ? (int)left : 0;
}

static int fail(int code, const char *what, const char *detail) {
  fprintf(stderr, "%s: %s\n", what, detail);
  return code;
}

/* wait_for: poll one fd for `events` until the deadline; 1 ready, 0 timed out, -1 error. */
static int wait_for(int fd, short events) {
  for (;;) {
    struct pollfd p = {.fd = fd, .events = events};
    int ms = left_ms();
    if (ms == 0) return 0;
    int n = poll(&p, 1, ms);
    if (n > 0) return 1;
    if (n == 0) {
      if (left_ms() > 0) continue;
      return 0;
    }
    if (errno != EINTR) return -1;
  }
}

int main(int argc, char **argv) {
  if (argc != 6) return fail(2, "usage", "kubelet-ts-netns-probe NETNS_PATH tcp|raw HOST PORT TIMEOUT_MS");
  const char *netns = argv[1], *mode = argv[2], *host = argv[3];
  long port = strtol(argv[4], NULL, 10), timeout = strtol(argv[5], NULL, 10);
  int raw = strcmp(mode, "raw") == 0;
  if (!raw && strcmp(mode, "tcp") != 0) return fail(2, "mode", "must be tcp or raw");
  if (port < 1 || port > 65535) return fail(2, "port", "must be 1-65535");
  if (timeout < 1) return fail(2, "timeout", "must be >= 1 ms");
  deadline_ms = now_ms() + timeout;

  static char request[MAX_REQUEST];
  size_t request_len = 0;
  if (raw) {
    ssize_t n;
    while (request_len < sizeof request && (n = read(0, request + request_len, sizeof request - request_len)) != 0) {
      if (n < 0) {
        if (errno == EINTR) continue;
        return fail(2, "read request", strerror(errno));
      }
      request_len += (size_t)n;
    }
  }

  int nsfd = open(netns, O_RDONLY | O_CLOEXEC);
  if (nsfd < 0) return fail(2, netns, strerror(errno));
  if (setns(nsfd, CLONE_NEWNET) != 0) return fail(2, "setns", strerror(errno));
  close(nsfd);

  struct sockaddr_storage addr;
  socklen_t addrlen;
  memset(&addr, 0, sizeof addr);
  struct sockaddr_in *a4 = (struct sockaddr_in *)&addr;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&addr;
  if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons((unsigned short)port);
    addrlen = sizeof *a4;
  } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((unsigned short)port);
    addrlen = sizeof *a6;
  } else {
    return fail(2, host, "not a numeric IP address");
  }

  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(2, "socket", strerror(errno));
  if (connect(fd, (struct sockaddr *)&addr, addrlen) != 0) {
    if (errno != EINPROGRESS) return fail(1, "dial tcp", strerror(errno));
    int r = wait_for(fd, POLLOUT);
    if (r == 0) return fail(1, "dial tcp", "i/o timeout");
    if (r < 0) return fail(1, "dial tcp", strerror(errno));
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return fail(1, "dial tcp", strerror(err));
  }
  if (!raw) {
    close(fd);
    return 0;
  }

  size_t sent = 0;
  while (sent < request_len) {
    ssize_t n = send(fd, request + sent, request_len - sent, MSG_NOSIGNAL);
    if (n > 0) { sent += (size_t)n; continue; }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return fail(1, "write", strerror(errno));
    int r = wait_for(fd, POLLOUT);
    if (r <= 0) return fail(1, "write", r == 0 ? "i/o timeout" : strerror(errno));
  }

  static char reply[MAX_REPLY];
  size_t got = 0;
  while (got < sizeof reply) {
    ssize_t n = recv(fd, reply + got, sizeof reply - got, 0);
    if (n > 0) { got += (size_t)n; continue; }
    if (n == 0) break;
    if (errno != EAGAIN && errno != EINTR) {
      if (got > 0) break; /* a reset after the reply: keep what arrived */
      return fail(1, "read", strerror(errno));
    }
    int r = wait_for(fd, POLLIN);
    if (r == 0) {
      if (got > 0) break; /* the peer keeps the connection open: judge what arrived */
      return fail(1, "read", "i/o timeout");
    }
    if (r < 0) return fail(1, "read", strerror(errno));
  }
  close(fd);
  fwrite(reply, 1, got, stdout);
  return 0;
}
