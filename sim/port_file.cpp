#include "port_file.h"

#include <cstdio>
#include <fstream>

namespace gpuscale::sim {

void addListenFlags(core::FlagSet& flags, std::string* listen, std::string* portFile) {
  flags.addString("listen", listen, "HOST:PORT to listen on (port 0: a free one)");
  flags.addString("port-file", portFile, "where the bound port is written once it listens");
}

void writePortFile(const std::string& path, unsigned short port) {
  if (path.empty()) return;
  std::ofstream(path + ".tmp") << port << "\n";
  std::rename((path + ".tmp").c_str(), path.c_str());
}

}  // namespace gpuscale::sim
