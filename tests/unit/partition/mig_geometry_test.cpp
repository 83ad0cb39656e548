#include "gpuscale/partition/mig_geometry.h"

#include <gtest/gtest.h>

#include <iostream>

namespace gpuscale::partition {
namespace {
TEST(Scratch, Print) {
  const GpuModel* m = findModelByName("A100-40GB");
  ProfileFilter f;
  f.profiles = {"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"};
  for (auto& g : maximalGeometries(*m, f)) std::cout << formatGeometry(g) << "\n";
  ProfileFilter b;
  b.baseOnly = true;
  std::cout << maximalGeometries(*m, b).size() << " base maximal, " << enumerateGeometries(*m, b).size()
            << " all\n";
  std::cout << maximalGeometries(*m).size() << " with me\n";
  const GpuModel* a30 = findModelByName("A30-24GB");
  for (auto& g : maximalGeometries(*a30, b)) std::cout << formatGeometry(g) << "\n";
}
}  // namespace
}  // namespace gpuscale::partition
