// The --listen and --port-file of gpuscale-sim's modes: where a mode listens, and where a mode
// that listens on a free port says which.
#pragma once

#include <string>

#include "gpuscale/core/flag_set.h"

namespace gpuscale::sim {

// Declares --listen (HOST:PORT, into `listen`) and --port-file (into `portFile`) on `flags`.
void addListenFlags(core::FlagSet& flags, std::string* listen, std::string* portFile);

// Writes `port` to `path` (through a temporary file and a rename, so a reader never sees half a
// number); nothing when `path` is empty.
void writePortFile(const std::string& path, unsigned short port);

}  // namespace gpuscale::sim
