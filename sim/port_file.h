// The --port-file of gpuscale-sim's modes: where a mode that listens on a free port says which.
#pragma once

#include <string>

namespace gpuscale::sim {

// Writes `port` to `path` (through a temporary file and a rename, so a reader never sees half a
// number); nothing when `path` is empty.
void writePortFile(const std::string& path, unsigned short port);

}  // namespace gpuscale::sim
