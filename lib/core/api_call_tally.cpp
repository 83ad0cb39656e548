#include "gpuscale/core/api_call_tally.h"

namespace gpuscale::core {
namespace {

thread_local uint64_t callsOnThisThread = 0;

}  // namespace

void ApiCallTally::note() noexcept { ++callsOnThisThread; }

uint64_t ApiCallTally::count() noexcept { return callsOnThisThread; }

}  // namespace gpuscale::core
