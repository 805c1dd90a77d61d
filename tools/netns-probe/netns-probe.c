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
 *   kubelet-ts-netns-probe NETNS_PATH relay HOST PORT TIMEOUT_MS
 *       port-forward (the kubelet's PortForward as the CRI runtimes run it: setns, then dial
 *       localhost): connect, then relay stdin -> socket and socket -> stdout until both ways have
 *       ended. Half-close aware: EOF on stdin becomes shutdown(SHUT_WR) of the socket, the peer's
 *       EOF closes stdout; once one way has ended the other gets RELAY_GRACE_MS (1 s, as
 *       containerd's PortForward and socat's -t) to end too, then the helper exits. HOST
 *       `localhost` dials 127.0.0.1, then ::1 when that is refused (as containerd). TIMEOUT_MS
 *       bounds the connect only; the relay itself has no deadline (the agent bounds its idle time).
 * NETNS_PATH is e.g. /proc/<sandbox pid>/ns/net. HOST is a numeric IPv4 or IPv6 address.
 * TIMEOUT_MS bounds the whole run (tcp, raw).
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
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPLY (64 * 1024)
#define MAX_REQUEST (16 * 1024)
#define RELAY_BUFFER (64 * 1024)
#define RELAY_GRACE_MS 1000

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


/* lower_first: strerror's text as Go writes it ("connection refused"), in a static buffer. */
static const char *go_error(int err) {
  static char text[128];
  snprintf(text, sizeof text, "%s", strerror(err));
  if (text[0] >= 'A' && text[0] <= 'Z') text[0] = (char)(text[0] - 'A' + 'a');
  return text;
}

/*
 * dial: a connected non-blocking TCP socket to numeric `host`:`port` within the deadline, or -1
 * with `*err` set (errno; ETIMEDOUT for the deadline) and *bad = 1 when `host` is not numeric.
 */
static int dial(const char *host, long port, int *err, int *bad) {
  struct sockaddr_storage addr;
  socklen_t addrlen;
  memset(&addr, 0, sizeof addr);
  struct sockaddr_in *a4 = (struct sockaddr_in *)&addr;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&addr;
  *bad = 0;
  if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons((unsigned short)port);
    addrlen = sizeof *a4;
  } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((unsigned short)port);
    addrlen = sizeof *a6;
  } else {
    *bad = 1;
    return -1;
  }
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *err = errno;
    return -1;
  }
  if (connect(fd, (struct sockaddr *)&addr, addrlen) != 0) {
    if (errno != EINPROGRESS) {
      *err = errno;
      close(fd);
      return -1;
    }
    int r = wait_for(fd, POLLOUT);
    if (r <= 0) {
      *err = r == 0 ? ETIMEDOUT : errno;
      close(fd);
      return -1;
    }
    int e = 0;
    socklen_t len = sizeof e;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len);
    if (e != 0) {
      *err = e;
      close(fd);
      return -1;
    }
  }
  return fd;
}

/* write_all: write n bytes to fd (blocking); 0 or -1 with errno. */
static int write_all(int fd, const char *buf, size_t n, int sock) {
  while (n > 0) {
    ssize_t k = sock ? send(fd, buf, n, MSG_NOSIGNAL) : write(fd, buf, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    buf += k;
    n -= (size_t)k;
  }
  return 0;
}

/* relay: the relay mode's copy loop on the connected socket `fd` (see the usage above). */
static int relay(int fd, const char *where) {
  signal(SIGPIPE, SIG_IGN);
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  static char buf[RELAY_BUFFER];
  int in_open = 1, out_open = 1;
  long long grace_end = 0;
  while (in_open || out_open) {
    struct pollfd p[2];
    int n = 0, in_i = -1, sock_i = -1;
    if (in_open) { p[n].fd = 0; p[n].events = POLLIN; p[n].revents = 0; in_i = n++; }
    if (out_open) { p[n].fd = fd; p[n].events = POLLIN; p[n].revents = 0; sock_i = n++; }
    int ms = -1;
    if (grace_end) {
      long long left = grace_end - now_ms();
      if (left <= 0) break;
      ms = left > INT_MAX ? INT_MAX : (int)left;
    }
    int r = poll(p, (nfds_t)n, ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      return fail(1, "poll", go_error(errno));
    }
    if (in_i >= 0 && p[in_i].revents) {
      ssize_t k = read(0, buf, sizeof buf);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) {
        in_open = 0;
        shutdown(fd, SHUT_WR);
        if (!grace_end) grace_end = now_ms() + RELAY_GRACE_MS;
      } else if (write_all(fd, buf, (size_t)k, 1) != 0) {
        fprintf(stderr, "write tcp %s: %s\n", where, go_error(errno));
        return 1;
      }
    }
    if (sock_i >= 0 && p[sock_i].revents) {
      ssize_t k = recv(fd, buf, sizeof buf, 0);
      if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (k < 0) {
        fprintf(stderr, "read tcp %s: %s\n", where, go_error(errno));
        return 1;
      }
      if (k == 0) {
        out_open = 0;
        close(1);
        if (!grace_end) grace_end = now_ms() + RELAY_GRACE_MS;
      } else if (write_all(1, buf, (size_t)k, 0) != 0) {
        return 0; /* the agent closed our stdout: the stream is gone */
      }
    }
  }
  close(fd);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 6) return fail(2, "usage", "kubelet-ts-netns-probe NETNS_PATH tcp|raw|relay HOST PORT TIMEOUT_MS");
  const char *netns = argv[1], *mode = argv[2], *host = argv[3];
  long port = strtol(argv[4], NULL, 10), timeout = strtol(argv[5], NULL, 10);
  int raw = strcmp(mode, "raw") == 0, relay_mode = strcmp(mode, "relay") == 0;
  if (!raw && !relay_mode && strcmp(mode, "tcp") != 0) return fail(2, "mode", "must be tcp, raw or relay");
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

  if (relay_mode) {
    int err = 0, bad = 0, fd;
    const char *v4 = strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
    char where[96];
    snprintf(where, sizeof where, "%s:%ld", v4, port);
    fd = dial(v4, port, &err, &bad);
    if (fd < 0 && bad) return fail(2, host, "not a numeric IP address or localhost");
    if (fd < 0 && strcmp(host, "localhost") == 0 && err == ECONNREFUSED) {
      int err6 = 0;
      fd = dial("::1", port, &err6, &bad);
      if (fd >= 0) snprintf(where, sizeof where, "[::1]:%ld", port);
    }
    if (fd < 0) {
      fprintf(stderr, "dial tcp %s: connect: %s\n", where, err == ETIMEDOUT ? "i/o timeout" : go_error(err));
      return 1;
    }
    return relay(fd, where);
  }

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
