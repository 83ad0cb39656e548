#include "gpuscale/core/signals.h"

#include <pthread.h>

#include <cerrno>
#include <ctime>

namespace gpuscale::core {

StopSignals::StopSignals(std::initializer_list<int> stopSignals,
                         std::initializer_list<int> alsoBlocked) {
  sigemptyset(&waited_);
  for (int signal : stopSignals) sigaddset(&waited_, signal);
  sigset_t blocked = waited_;
  for (int signal : alsoBlocked) sigaddset(&blocked, signal);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
}

int StopSignals::wait(const std::function<bool()>& stopEarly) const {
  if (!stopEarly) {
    int received = 0;
    while (sigwait(&waited_, &received) != 0) {
    }
    return received;
  }
  const timespec step{0, 200'000'000};
  while (!stopEarly()) {
    const int received = sigtimedwait(&waited_, nullptr, &step);
    if (received > 0) return received;
    // EAGAIN: the step passed; EINTR: another signal interrupted the wait. Both mean look again.
  }
  return 0;
}

}  // namespace gpuscale::core
