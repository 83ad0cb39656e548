#include "port_file.h"

#include <cstdio>
#include <fstream>

namespace gpuscale::sim {

void writePortFile(const std::string& path, unsigned short port) {
  if (path.empty()) return;
  std::ofstream(path + ".tmp") << port << "\n";
  std::rename((path + ".tmp").c_str(), path.c_str());
}

}  // namespace gpuscale::sim
