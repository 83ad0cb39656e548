// A free TCP port on 127.0.0.1 for a test server (bind to port 0, read the port, release it).
// Another process may take it before the test binds it; tests that can pass port 0 to the server
// should prefer that.
#pragma once

#include <cstdint>

namespace gpuscale::testing {

uint16_t freeLoopbackPort();

}  // namespace gpuscale::testing
