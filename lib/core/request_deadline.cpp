#include "gpuscale/core/request_deadline.h"

namespace gpuscale::core {
namespace {

thread_local std::optional<RequestDeadline::Clock::time_point> currentDeadline;

}  // namespace

RequestDeadline::Scope::Scope(Clock::time_point deadline) : previous_(currentDeadline) {
  if (deadline == Clock::time_point::max()) {
    currentDeadline.reset();
  } else {
    currentDeadline = deadline;
  }
}

RequestDeadline::Scope::~Scope() { currentDeadline = previous_; }

std::optional<RequestDeadline::Clock::time_point> RequestDeadline::current() noexcept {
  return currentDeadline;
}

}  // namespace gpuscale::core
