// The MIG geometry to give back after a burst: node annotation `gpuscale.io/mig-restore`,
// `{"before":"<config>","applied":"<config>"}`, written by the reconciler when it flips
// `nvidia.com/mig.config`. `before` is the node's config before gpuscale first reshaped it (kept
// across gpuscale's successive reshapes), `applied` the config gpuscale set last. The record is
// live only while the node's label still equals `applied` and `applied` is a config gpuscale owns
// for that node (config_name.h): an operator's relabel (a new baseline) voids it, and nothing is
// restored.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuscale::partition {

struct MigRestore {
  std::string before;
  std::string applied;
  friend bool operator==(const MigRestore&, const MigRestore&) = default;
};

// nullopt for an absent, malformed or incomplete annotation (empty `before` or `applied`).
std::optional<MigRestore> decodeMigRestore(std::string_view annotation);
std::string encodeMigRestore(const MigRestore& restore);

// The record after gpuscale flips the label from `previous` to `applied`: `before` stays when the
// flip continues gpuscale's own change (the live record's `applied` is `previous`), else it is
// `previous`. nullopt when `previous` is empty (no config to return to).
std::optional<MigRestore> nextMigRestore(const std::optional<MigRestore>& current,
                                         const std::string& previous, const std::string& applied);

}  // namespace gpuscale::partition
