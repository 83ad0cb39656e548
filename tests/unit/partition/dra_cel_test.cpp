#include "gpuscale/partition/dra_cel.h"

#include <string>

#include <gtest/gtest.h>

#include "dra_objects.h"

namespace gpuscale::partition {
namespace dra_cel_test {

enum class Outcome { kTrue, kFalse, kRuntimeError, kUnsupported, kInvalid };

struct CelCase {
  const char* expression;
  Outcome outcome;
};

// A static MIG device of the driver, read as the snapshot reads it.
DraDevice migDevice() {
  auto slice = readResourceSlice(testing::draSlice("n", {testing::draMigDevice(0, "1g.5gb", 3)}));
  EXPECT_TRUE(slice.ok()) << slice.status().toString();
  DraDevice d = slice->devices.at(0);
  d.attributes["gpu.nvidia.com/driverVersion"] = {DraValue::Type::kVersion, "550.90.7", 0, false};
  d.attributes["gpu.nvidia.com/count"] = {DraValue::Type::kInt, "", 7, false};
  d.attributes["gpu.nvidia.com/healthy"] = {DraValue::Type::kBool, "", 0, true};
  return d;
}

TEST(DraCelTest, EvaluatesTheSubsetAgainstOneDevice) {
  const CelCase cases[] = {
      // The driver's DeviceClasses and the claims people write.
      {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
       Outcome::kTrue},
      {"device.attributes['gpu.nvidia.com'].type == 'gpu'", Outcome::kFalse},
      {"device.attributes[\"gpu.nvidia.com\"].profile == '1g.5gb'", Outcome::kTrue},
      {"device.attributes['gpu.nvidia.com']['profile'] in ['1g.5gb', '2g.10gb']", Outcome::kTrue},
      {"device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA A100')", Outcome::kTrue},
      {"device.attributes['gpu.nvidia.com'].productName.matches('H[0-9]+')", Outcome::kFalse},
      {"device.attributes['gpu.nvidia.com'].productName.lowerAscii().contains('sxm4')",
       Outcome::kTrue},
      {"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('4Gi')) >= 0", Outcome::kTrue},
      {"device.capacity['gpu.nvidia.com'].memory.isLessThan(quantity('5Gi'))", Outcome::kTrue},
      {"device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.54.15'))",
       Outcome::kTrue},
      {"device.attributes['gpu.nvidia.com'].driverVersion.major() == 550", Outcome::kTrue},
      {"device.attributes['gpu.nvidia.com'].count * 2 + 1 == 15 && "
       "device.attributes['gpu.nvidia.com'].healthy",
       Outcome::kTrue},
      {"size(device.attributes['gpu.nvidia.com'].profile) == 6", Outcome::kTrue},
      {"has(device.attributes['gpu.nvidia.com'].uuid) && "
       "!has(device.attributes['gpu.nvidia.com'].index)",
       Outcome::kTrue},
      {"'profile' in device.attributes['gpu.nvidia.com']", Outcome::kTrue},
      {"device.attributes['gpu.nvidia.com'].type == 'mig' ? true : 1 / 0 == 1", Outcome::kTrue},
      // An unknown domain is an empty map; an unknown name is an error, which a deciding operand
      // of && or || absorbs (CEL's commutative logic).
      {"has(device.attributes['example.com'].x)", Outcome::kFalse},
      {"device.attributes['gpu.nvidia.com'].missing == 'x'", Outcome::kRuntimeError},
      {"device.attributes['gpu.nvidia.com'].missing == 'x' || true", Outcome::kTrue},
      {"false && device.attributes['gpu.nvidia.com'].missing == 'x'", Outcome::kFalse},
      {"device.attributes['gpu.nvidia.com'].profile == 7", Outcome::kFalse},
      {"device.attributes['gpu.nvidia.com'].profile < 7", Outcome::kRuntimeError},
      {"1 / 0 == 1", Outcome::kRuntimeError},
      {"9223372036854775807 + 1 > 0", Outcome::kRuntimeError},
      {"device.attributes['gpu.nvidia.com'].productName.matches('(')", Outcome::kRuntimeError},
      {"device.attributes['gpu.nvidia.com'].profile", Outcome::kRuntimeError},  // not a bool
      // Outside the subset: refused when compiled, with the construct named.
      {"device.attributes['gpu.nvidia.com'].exists(a, a == 'x')", Outcome::kUnsupported},
      {"cel.bind(x, 1, x == 1)", Outcome::kUnsupported},
      {"device.capacity['gpu.nvidia.com'].memory.asApproximateFloat() > 1.5",
       Outcome::kUnsupported},
      {"1.5 > 1", Outcome::kUnsupported},
      {"{'a': 1}['a'] == 1", Outcome::kUnsupported},
      {"request.name == 'x'", Outcome::kUnsupported},
      {"timestamp('2026-01-01T00:00:00Z') != null", Outcome::kUnsupported},
      // Not CEL at all.
      {"device.driver ==", Outcome::kInvalid},
      {"'unterminated", Outcome::kInvalid},
      {"device.driver == 'x')", Outcome::kInvalid},
      {"", Outcome::kInvalid},
  };
  const DraDevice device = migDevice();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expression);
    auto selector = DeviceSelector::compile(c.expression);
    if (c.outcome == Outcome::kUnsupported || c.outcome == Outcome::kInvalid) {
      ASSERT_FALSE(selector.ok());
      EXPECT_EQ(selector.status().reason(),
                c.outcome == Outcome::kUnsupported ? kCelUnsupportedReason : "Invalid");
      EXPECT_FALSE(selector.status().message().empty());
      continue;
    }
    ASSERT_TRUE(selector.ok()) << selector.status().toString();
    auto matched = selector->matches(device, kNvidiaGpuDriver);
    if (c.outcome == Outcome::kRuntimeError) {
      EXPECT_FALSE(matched.ok());
      continue;
    }
    ASSERT_TRUE(matched.ok()) << matched.status().toString();
    EXPECT_EQ(*matched, c.outcome == Outcome::kTrue);
  }
}

// Deep nesting is refused when compiled, never by the stack: brackets, unary operators and long
// operator chains alike.
TEST(DraCelTest, DeepNestingIsUnsupportedNotACrash) {
  const std::string deep[] = {
      std::string(5000, '(') + "true" + std::string(5000, ')'),
      std::string(5000, '!') + "true",
      "true" +
          [] {
            std::string s;
            for (int i = 0; i < 5000; ++i) s += " || false";
            return s;
          }(),
      "device" +
          [] {
            std::string s;
            for (int i = 0; i < 5000; ++i) s += ".a";
            return s;
          }(),
  };
  for (const auto& e : deep) {
    auto selector = DeviceSelector::compile(e);
    ASSERT_FALSE(selector.ok());
    EXPECT_EQ(selector.status().reason(), kCelUnsupportedReason);
  }
  // What real selectors nest to compiles.
  std::string chain = "device.driver == 'a'";
  for (int i = 0; i < 30; ++i) chain += " || device.driver == 'b'";
  EXPECT_TRUE(DeviceSelector::compile(chain).ok());
}

}  // namespace dra_cel_test
}  // namespace gpuscale::partition
