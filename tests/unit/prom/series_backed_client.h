// A prom::Client over a fixed list of series that evaluates the selectors it is given (`name{l="v",
// l!="v", l=~"re", l!~"re"}`, several `match[]` ORed) the way Prometheus does, so that discovery
// strategies can be checked against the series view on any data set instead of against canned
// answers keyed by query text. Time windows are ignored. Calls are counted by kind; answers for one
// kind can be replaced by a failure.
//
// Thread safety: thread-safe; callbacks run on the calling thread.
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "gpuscale/prom/client.h"
#include "gpuscale/prom/errors.h"

namespace gpuscale::prom::testing {

class SeriesBackedClient : public Client {
 public:
  using StringList = std::vector<std::string>;

  explicit SeriesBackedClient(std::vector<Series> series) : series_(std::move(series)) {}

  // Every later call of `kind` ("series", "values", "labels") answers with `status`.
  void failCalls(const std::string& kind, core::Status status) {
    std::lock_guard lock(mutex_);
    failures_[kind] = std::move(status);
  }
  size_t calls(const std::string& kind) const {
    std::lock_guard lock(mutex_);
    auto it = calls_.find(kind);
    return it == calls_.end() ? 0 : it->second;
  }
  // The match[] lists of every call so far, in order ("kind: m1 or m2").
  std::vector<std::string> log() const {
    std::lock_guard lock(mutex_);
    return log_;
  }

  void queryAsync(std::string, Timestamp, Callback<QueryResultPtr> done) override {
    done(core::Status::badRequest("SeriesBackedClient answers no queries"));
  }
  void seriesAsync(Matchers match, TimeRange, Callback<std::vector<Series>> done) override {
    auto selected = select("series", match);
    if (!selected) return done(selected.status());
    done(std::move(*selected));
  }
  void labelValuesAsync(std::string label, Matchers match, TimeRange,
                        Callback<StringList> done) override {
    auto selected = select("values", match);
    if (!selected) return done(selected.status());
    std::set<std::string> values;
    for (const auto& s : *selected) {
      if (auto it = s.find(label); it != s.end() && !it->second.empty()) values.insert(it->second);
    }
    done(StringList(values.begin(), values.end()));
  }
  void labelNamesAsync(Matchers match, TimeRange, Callback<StringList> done) override {
    auto selected = select("labels", match);
    if (!selected) return done(selected.status());
    std::set<std::string> names;
    for (const auto& s : *selected) {
      for (const auto& [name, value] : s) names.insert(name);
    }
    done(StringList(names.begin(), names.end()));
  }

 private:
  struct Matcher {
    std::string label;
    std::string op;
    std::string value;
  };

  // Parses `name{label op "value", ...}`; values are double-quoted with \" and \\ escapes.
  static core::Result<std::vector<Matcher>> parse(const std::string& selector) {
    std::vector<Matcher> out;
    size_t i = 0;
    auto skipSpace = [&] {
      while (i < selector.size() && selector[i] == ' ') ++i;
    };
    skipSpace();
    size_t nameEnd = selector.find('{');
    std::string name = selector.substr(i, nameEnd == std::string::npos ? nameEnd : nameEnd - i);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (!name.empty()) out.push_back({"__name__", "=", name});
    if (nameEnd == std::string::npos) return out;
    i = nameEnd + 1;
    while (true) {
      skipSpace();
      if (i < selector.size() && selector[i] == '}') return out;
      size_t opStart = selector.find_first_of("=!", i);
      if (opStart == std::string::npos) return core::Status::badRequest("bad selector " + selector);
      Matcher m;
      m.label = selector.substr(i, opStart - i);
      while (!m.label.empty() && m.label.back() == ' ') m.label.pop_back();
      size_t quote = selector.find('"', opStart);
      if (quote == std::string::npos) return core::Status::badRequest("bad selector " + selector);
      m.op = selector.substr(opStart, quote - opStart);
      while (!m.op.empty() && m.op.back() == ' ') m.op.pop_back();
      for (i = quote + 1; i < selector.size() && selector[i] != '"'; ++i) {
        if (selector[i] == '\\' && i + 1 < selector.size()) ++i;
        m.value += selector[i];
      }
      ++i;
      out.push_back(std::move(m));
      skipSpace();
      if (i < selector.size() && selector[i] == ',') ++i;
    }
  }

  static bool matches(const Series& s, const Matcher& m) {
    auto it = s.find(m.label);
    std::string value = it == s.end() ? "" : it->second;
    if (m.op == "=") return value == m.value;
    if (m.op == "!=") return value != m.value;
    bool full = std::regex_match(value, std::regex(m.value));
    return m.op == "=~" ? full : !full;
  }

  core::Result<std::vector<Series>> select(const std::string& kind, const Matchers& match) {
    std::lock_guard lock(mutex_);
    ++calls_[kind];
    std::string entry = kind + ":";
    for (const auto& m : match) entry += (entry.back() == ':' ? " " : " or ") + m;
    log_.push_back(entry);
    if (auto it = failures_.find(kind); it != failures_.end()) return it->second;
    std::vector<std::vector<Matcher>> sets;
    for (const auto& selector : match) {
      auto parsed = parse(selector);
      if (!parsed) return parsed.status();
      sets.push_back(std::move(*parsed));
    }
    std::vector<Series> out;
    for (const auto& s : series_) {
      bool selected = sets.empty();
      for (const auto& set : sets) {
        if (std::all_of(set.begin(), set.end(), [&](const Matcher& m) { return matches(s, m); })) {
          selected = true;
        }
      }
      if (selected) out.push_back(s);
    }
    return out;
  }

  const std::vector<Series> series_;
  mutable std::mutex mutex_;
  std::map<std::string, size_t> calls_;
  std::map<std::string, core::Status> failures_;
  std::vector<std::string> log_;
};

}  // namespace gpuscale::prom::testing
