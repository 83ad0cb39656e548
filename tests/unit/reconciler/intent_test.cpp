#include "gpuscale/reconciler/intent.h"

#include <gtest/gtest.h>

#include "gpuscale/core/rfc3339.h"

namespace gpuscale::reconciler {
namespace intent_test {

TimePoint at(const char* text) { return *core::parseRfc3339(text); }

TEST(IntentTest, NodeIntentRoundTrips) {
  NodeIntent i;
  i.plan = "2026-11-22T01:00:00Z-1";
  i.kind = NodeOpKind::kMig;
  i.phase = NodeOpPhase::kApplied;
  i.label = "gpuscale-node-1-0badf00d";
  i.previous = "all-1g.5gb";
  i.config = "version: v1\n";
  i.expect = {{"nvidia.com/mig-1g.5gb", 14}};
  i.gpus = {0, 1};
  i.started = at("2026-11-22T01:00:00Z");
  i.applied = at("2026-11-22T01:00:05Z");
  EXPECT_EQ(decodeNodeIntent(encodeNodeIntent(i)), i);
  i.then = TimeSlicingFollowUp{
      "gpuscale-node-1-0000beef", "version: v1\n", {{"nvidia.com/mig-1g.5gb", 28}}};
  EXPECT_EQ(decodeNodeIntent(encodeNodeIntent(i)), i);
  for (NodeOpKind kind : {NodeOpKind::kTimeSlicing, NodeOpKind::kMps}) {
    NodeIntent sharing = i;
    sharing.kind = kind;
    sharing.then.reset();
    sharing.gpus.clear();
    EXPECT_EQ(decodeNodeIntent(encodeNodeIntent(sharing)), sharing) << nodeOpKindName(kind);
  }
}

TEST(IntentTest, HpaIntentRoundTrips) {
  HpaIntent h{"p", 7, 28, {"a", "b"}, at("2026-11-22T01:00:00Z")};
  EXPECT_EQ(decodeHpaIntent(encodeHpaIntent(h)), h);
}

TEST(IntentTest, MalformedAnnotationsReadAsAbsent) {
  struct Row {
    const char* what;
    const char* text;
  };
  const Row rows[] = {
      {"empty", ""},
      {"not JSON", "{oops"},
      {"not an object", "[1,2]"},
      {"unknown kind",
       R"({"plan":"p","kind":"vgpu","label":"x","started":"2026-11-22T01:00:00Z"})"},
      {"no start time", R"({"plan":"p","kind":"mig","label":"x"})"},
      {"no label", R"({"plan":"p","kind":"mig","started":"2026-11-22T01:00:00Z"})"},
      // Counts and indices that do not fit their integers (converting 1e300 was undefined).
      {"float count",
       R"({"plan":"p","kind":"mig","label":"x","started":"2026-11-22T01:00:00Z","expect":{"r":1e300}})"},
      {"count above int64",
       R"({"plan":"p","kind":"mig","label":"x","started":"2026-11-22T01:00:00Z","expect":{"r":18446744073709551615}})"},
      {"float GPU index",
       R"({"plan":"p","kind":"mig","label":"x","started":"2026-11-22T01:00:00Z","gpus":[1e300]})"},
      {"negative GPU index",
       R"({"plan":"p","kind":"mig","label":"x","started":"2026-11-22T01:00:00Z","gpus":[-1]})"},
      {"GPU index above int",
       R"({"plan":"p","kind":"mig","label":"x","started":"2026-11-22T01:00:00Z","gpus":[4294967296]})"},
      {"float count in then",
       R"({"plan":"p","kind":"mig","label":"x","started":"2026-11-22T01:00:00Z","then":{"label":"y","expect":{"r":0.5}}})"},
      {"time beyond the clock",
       R"({"plan":"p","kind":"mig","label":"x","started":"4052-11-22T01:00:00Z"})"},
  };
  for (const auto& row : rows) {
    EXPECT_FALSE(decodeNodeIntent(row.text).has_value()) << row.what;
  }
}

// HPA annotations are writable by anyone who may edit the HPA: replica counts must be integers
// that fit.
TEST(IntentTest, MalformedHpaAnnotationsReadAsAbsent) {
  struct Row {
    const char* what;
    const char* text;
  };
  const Row intents[] = {
      {"float target", R"({"plan":"p","from":7,"to":1e300,"started":"2026-11-22T01:00:00Z"})"},
      {"negative origin", R"({"plan":"p","from":-7,"to":28,"started":"2026-11-22T01:00:00Z"})"},
      {"target above int",
       R"({"plan":"p","from":7,"to":4294967296,"started":"2026-11-22T01:00:00Z"})"},
      {"target as text", R"({"plan":"p","from":7,"to":"28","started":"2026-11-22T01:00:00Z"})"},
  };
  for (const auto& row : intents) {
    EXPECT_FALSE(decodeHpaIntent(row.text).has_value()) << row.what;
  }
  const Row statuses[] = {
      {"float ceiling", R"({"ceiling":1e300,"at":"2026-11-22T01:00:00Z"})"},
      {"negative ceiling", R"({"ceiling":-1,"at":"2026-11-22T01:00:00Z"})"},
      {"ceiling above int", R"({"ceiling":18446744073709551615})"},
  };
  for (const auto& row : statuses) {
    EXPECT_FALSE(decodeHpaStatus(row.text).has_value()) << row.what;
  }
  EXPECT_EQ(decodeHpaStatus(R"({"ceiling":14})")->ceiling, 14);
}

TEST(IntentTest, OutcomeKeepsItsResult) {
  NodeOutcome o{"p", NodeOpKind::kTimeSlicing, Outcome::kTimedOut, "no answer",
                at("2026-11-22T01:02:03Z")};
  auto back = decodeNodeOutcome(encodeNodeOutcome(o));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->result, Outcome::kTimedOut);
  EXPECT_EQ(back->kind, NodeOpKind::kTimeSlicing);
  EXPECT_FALSE(back->succeeded());
  EXPECT_EQ(core::formatRfc3339(back->at), "2026-11-22T01:02:03Z");
}

}  // namespace intent_test
}  // namespace gpuscale::reconciler
