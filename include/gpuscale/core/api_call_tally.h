// ApiCallTally: how many calls to a remote API (kube-apiserver) the current thread has made, so a
// server can attribute them to the request that thread is serving.
//
// A server worker serves one request at a time from start to end, and every Kubernetes call made
// on a request's behalf (TokenReview, SubjectAccessReview, a LIST) blocks that worker until the
// answer is in. The Kubernetes client notes each call it sends; the request handler reads the
// tally before and after the request and exports the difference (requests per served request).
// Informer threads note their LISTs and WATCHes too; nobody reads their tallies.
//
// Thread safety: a thread-local counter, no sharing.
#pragma once

#include <cstdint>

namespace gpuscale::core {

class ApiCallTally {
 public:
  // One more call sent by this thread.
  static void note() noexcept;
  // Calls this thread has sent since it started.
  static uint64_t count() noexcept;
};

}  // namespace gpuscale::core
