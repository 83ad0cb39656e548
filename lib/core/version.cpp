#include "gpuscale/core/version.h"

#ifndef GPUSCALE_VERSION
#error "GPUSCALE_VERSION is defined by lib/core/CMakeLists.txt from the VERSION file"
#endif

namespace gpuscale::core {

std::string_view version() { return GPUSCALE_VERSION; }

void printVersion(std::ostream& out, std::string_view program) {
  out << program << " " << version() << "\n";
}

}  // namespace gpuscale::core
