// The release a program belongs to.
//
// The repository's VERSION file is the one version source: CMake reads it and compiles it into
// version.cpp only, so a new version rebuilds one file. The same string is the images' version
// label and the Helm chart's version and appVersion; a test checks that they agree.
//
// Thread safety: a constant.
#pragma once

#include <ostream>
#include <string_view>

namespace gpuscale::core {

// The semantic version of this build, e.g. "0.1.0" or "0.2.0-rc.1".
std::string_view version();

// Writes "<program> <version>\n": what every program's --version prints.
void printVersion(std::ostream& out, std::string_view program);

}  // namespace gpuscale::core
