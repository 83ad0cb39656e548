// Tables of inputs a parser must refuse: each row names the case, gives the input, and a fragment
// the error message must contain. Shared by the parsers' unit tests (policies, device-plugin and
// mig-parted files, scenarios, snapshots), so every rejection table reads and checks the same way.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace gpuscale::testing {

// One refused input. `Input` is what the parser reads (YAML text by default, a JSON dump...).
template <typename Input = const char*>
struct RejectedInput {
  const char* what;      // the case, named in failure messages
  Input input;           // what the parser reads
  const char* fragment;  // a part of the error message
};

// Expects `parse(row.input)` to fail with an error whose message contains `row.fragment`, for
// every row of `rows` (any range of rows with `what`, `input` and `fragment`). `parse` returns a
// core::Result; every row is checked even when an earlier one fails.
template <typename Rows, typename Parse>
void expectAllRejected(const Rows& rows, Parse&& parse) {
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    const auto result = parse(row.input);
    if (result.ok()) {
      ADD_FAILURE() << "accepted: " << row.what;
      continue;
    }
    EXPECT_NE(result.status().message().find(row.fragment), std::string::npos)
        << row.what << ": " << result.status().message();
  }
}

}  // namespace gpuscale::testing
