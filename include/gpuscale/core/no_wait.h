// NoWaitScope: lets code run on a thread that must never wait (a server's I/O thread answering a
// request from caches) and find out afterwards whether it would have had to.
//
// Code that is about to wait for another system (a Prometheus query not answered yet, a call to
// kube-apiserver, a rate limiter) calls mayWait() first. Outside any scope it returns true and the
// code waits as usual. Inside a NoWaitScope on the same thread it returns false and remembers the
// refusal: the code then fails at once with wouldBlock() (its work already started may go on in the
// background, e.g. a query that later fills a cache) and must not record that failure anywhere (no
// error counter, no log, no negative cache). The owner of the scope checks refused() and, if set,
// drops whatever the work produced and runs it again where waiting is allowed.
//
// Thread safety: a scope belongs to the thread that created it; scopes nest (the innermost counts).
#pragma once

#include "gpuscale/core/status.h"

namespace gpuscale::core {

class NoWaitScope {
 public:
  NoWaitScope();
  ~NoWaitScope();
  NoWaitScope(const NoWaitScope&) = delete;
  NoWaitScope& operator=(const NoWaitScope&) = delete;

  // True once code in this scope called mayWait().
  bool refused() const { return refused_; }

 private:
  friend bool mayWait();
  friend bool waitRefused();
  NoWaitScope* outer_;
  bool refused_ = false;
};

// False inside a NoWaitScope (which then reports refused()); true otherwise.
bool mayWait();

// True inside a NoWaitScope that has refused a wait: a failure the caller sees now is that
// refusal, not something to record.
bool waitRefused();

// The Status of work that stopped because it may not wait (503, reason ServiceUnavailable, message
// "would block"). Only meaningful to the scope's owner, which never sends it to a client.
Status wouldBlock();

}  // namespace gpuscale::core
