#include <fmt/format.h>

#include "gpuscale/partition/policy.h"
#include "policy_fields.h"

namespace gpuscale::partition {

std::string policyReference(std::string_view regenerate) {
  Policy scratch;
  bool hasSelector = false;
  core::YamlFields fields("", "policy");
  declarePolicyFields(fields, scratch, &hasSelector);
  std::string out = "# Partition policy reference\n\n";
  out += fmt::format(
      "Every key of the reconciler's policy file (`gpuscale-reconciler run --policy FILE`, also\n"
      "read by `plan` and `explain`), generated from the parser's declarations by\n"
      "`{}` (a test compares this page with its output). How policies select HPAs\n"
      "and nodes, with examples: [partitioning.md](../partitioning.md).\n\n",
      regenerate);
  out +=
      "A file holds one policy mapping, or `policies:` with a list of them (names unique). A key\n"
      "not listed here is an error with its line and column; a deprecated name is accepted with a\n"
      "warning naming the current one. Durations are Go durations (`90s`, `10m`), quantities\n"
      "Kubernetes quantities (`4Gi`). A policy needs `hpaNamespaces` or `hpas`.\n\n";
  out += "## Keys of a policy\n\n";
  out += core::yamlKeysMarkdown(fields.keys());
  return out;
}

}  // namespace gpuscale::partition
