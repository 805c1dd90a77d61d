/*
 * Counterpart of kubernetes/build/pause/linux/pause.c: the pod sandbox (infra) process.
 *
 * It holds the pod's namespaces open for as long as the sandbox lives and does nothing else:
 *  - SIGTERM and SIGINT make it exit with status 0 at once. As PID 1 of its PID namespace the
 *    kernel ignores any signal it has no handler for, so without these `docker stop` would wait
 *    for its grace period and then SIGKILL.
 *  - SIGCHLD reaps every exited child (waitpid(-1, WNOHANG) in a loop): with
 *    `shareProcessNamespace: true` it is the init of the pod and adopts orphans.
 *  - Otherwise it sleeps in pause(), using no CPU.
 *
 * Built by tools/lib/images.sh: gcc -static -O2, imported as kubelet-ts/pause:1.0 with CMD ["/pause"].
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_terminate(int signo) {
  (void)signo;
  _exit(0);
}

static void on_child(int signo) {
  int saved_errno = errno;
  (void)signo;
  /* One SIGCHLD may stand for several exited children: reap until none is left. */
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  errno = saved_errno;
}

static void install(int signo, void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | (signo == SIGCHLD ? SA_NOCLDSTOP : 0);
  if (sigaction(signo, &sa, NULL) < 0) {
    fprintf(stderr, "pause: sigaction(%d): %s\n", signo, strerror(errno));
    _exit(1);
  }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    printf("pause (kubelet-ts) 1.0\n");
    return 0;
  }
  if (getpid() != 1) {
    fprintf(stderr, "pause: warning: not running as PID 1\n");
  }
  install(SIGTERM, on_terminate);
  install(SIGINT, on_terminate);
  install(SIGCHLD, on_child);
  for (;;) {
    pause();
  }
  return 42; /* unreachable */
}
