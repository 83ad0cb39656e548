// Pod sandbox ("pause") process for the test cluster's real node: it only holds the pod's
// namespaces open. Runs as PID 1 of the sandbox, so it exits on SIGTERM/SIGINT (PID 1 has no
// default signal actions) and reaps children that a shared process namespace may hand to it.
// Built statically so the image needs nothing but this file.
#include <sys/wait.h>
#include <csignal>
#include <cstdio>

int main(int argc, char**) {
  if (argc > 1) {  // no options; a version-style probe should not hang
    std::puts("gpuscale-pause");
    return 0;
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGCHLD) {
      while (waitpid(-1, nullptr, WNOHANG) > 0) {
      }
      continue;
    }
    return 0;
  }
}
