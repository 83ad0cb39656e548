#include "gpuscale/core/no_wait.h"

namespace gpuscale::core {
namespace {

thread_local NoWaitScope* current = nullptr;

}  // namespace

NoWaitScope::NoWaitScope() : outer_(current) { current = this; }

NoWaitScope::~NoWaitScope() { current = outer_; }

bool mayWait() {
  if (current == nullptr) return true;
  current->refused_ = true;
  return false;
}

bool waitRefused() { return current != nullptr && current->refused_; }

Status wouldBlock() { return Status::unavailable("would block"); }

}  // namespace gpuscale::core
