// Execution of parsed templates (see template.h).
#include <fmt/format.h>

#include "gpuscale/rules/template.h"
#include "template_ast.h"

namespace gpuscale::rules {

using template_detail::Arg;
using template_detail::Node;

namespace {

// A value during execution: "no value" (a missing map key via a field), a borrowed string, an owned
// string, a slice, a map, an int, or the data struct itself.
using EvalValue =
    std::variant<std::monostate, std::string_view, std::string, const std::vector<std::string>*,
                 const StringMap*, int64_t, const TemplateData*>;

std::string_view goTypeName(const EvalValue& v) {
  switch (v.index()) {
    case 1:
    case 2:
      return "string";
    case 3:
      return "[]string";
    case 4:
      return "map[string]string";
    case 5:
      return "int";
    case 6:
      return std::get<const TemplateData*>(v)->typeName;
    default:
      return "<nil>";
  }
}

EvalValue fromTemplateValue(const TemplateValue* value) {
  if (const auto* s = std::get_if<std::string>(value)) return std::string_view(*s);
  if (const auto* v = std::get_if<std::vector<std::string>>(value)) return v;
  return &std::get<StringMap>(*value);
}

void print(const EvalValue& v, std::string& out);

void printTemplateValue(const TemplateValue* value, std::string& out) {
  print(fromTemplateValue(value), out);
}

void print(const EvalValue& v, std::string& out) {
  switch (v.index()) {
    case 0:
      out += "<no value>";
      break;
    case 1:
      out += std::get<std::string_view>(v);
      break;
    case 2:
      out += std::get<std::string>(v);
      break;
    case 3:
      out += formatGoStringSlice(*std::get<const std::vector<std::string>*>(v));
      break;
    case 4: {
      out += "map[";
      bool first = true;
      for (const auto& [key, value] : *std::get<const StringMap*>(v)) {
        if (!first) out += ' ';
        first = false;
        out += key;
        out += ':';
        out += value;
      }
      out += ']';
      break;
    }
    case 5:
      out += std::to_string(std::get<int64_t>(v));
      break;
    case 6: {
      const TemplateData* data = std::get<const TemplateData*>(v);
      out += '{';
      for (size_t i = 0; i < data->fields.size(); ++i) {
        if (i > 0) out += ' ';
        printTemplateValue(data->fields[i].second, out);
      }
      out += '}';
      break;
    }
  }
}

class Executor {
 public:
  explicit Executor(const TemplateData& data) : data_(data) {}

  Result<EvalValue> evalArg(const Arg& arg, const Node& node) const {
    switch (arg.kind) {
      case Arg::Kind::kString:
        return EvalValue(std::string_view(arg.text));
      case Arg::Kind::kInt:
        return EvalValue(arg.number);
      case Arg::Kind::kField:
        break;
    }
    EvalValue current = &data_;
    for (const std::string& name : arg.chain) {
      if (const auto* data = std::get_if<const TemplateData*>(&current)) {
        const TemplateValue* field = (*data)->field(name);
        if (field == nullptr) {
          return failAt(node, arg,
                        fmt::format("can't evaluate field {} in type {}", name, (*data)->typeName));
        }
        current = fromTemplateValue(field);
      } else if (const auto* map = std::get_if<const StringMap*>(&current)) {
        auto it = (*map)->find(name);
        current = it == (*map)->end() ? EvalValue() : EvalValue(std::string_view(it->second));
      } else {
        return failAt(node, arg,
                      fmt::format("can't evaluate field {} in type {}", name, goTypeName(current)));
      }
    }
    return current;
  }

  Result<EvalValue> call(const Node& node) const {
    std::vector<EvalValue> args;
    for (const Arg& arg : node.args) {
      Result<EvalValue> value = evalArg(arg, node);
      if (!value) return value.status();
      args.push_back(std::move(*value));
    }
    if (node.function == "len") return callLen(node, args.front());
    EvalValue current = args.front();
    for (size_t i = 1; i < args.size(); ++i) {
      if (const auto* map = std::get_if<const StringMap*>(&current)) {
        std::string_view key;
        if (const auto* sv = std::get_if<std::string_view>(&args[i]))
          key = *sv;
        else if (const auto* s = std::get_if<std::string>(&args[i]))
          key = *s;
        else {
          return failCall(node,
                          fmt::format("value has type {}; should be string", goTypeName(args[i])));
        }
        auto it = (*map)->find(key);
        current = it == (*map)->end() ? EvalValue(std::string_view())
                                      : EvalValue(std::string_view(it->second));
      } else if (const auto* slice = std::get_if<const std::vector<std::string>*>(&current)) {
        const auto* index = std::get_if<int64_t>(&args[i]);
        if (index == nullptr) {
          return failCall(
              node, fmt::format("cannot index slice/array with type {}", goTypeName(args[i])));
        }
        if (*index < 0 || static_cast<uint64_t>(*index) >= (*slice)->size()) {
          return failCall(node, fmt::format("index out of range: {}", *index));
        }
        current = std::string_view((**slice)[static_cast<size_t>(*index)]);
      } else {
        return failCall(node, fmt::format("can't index item of type {}", goTypeName(current)));
      }
    }
    return current;
  }

 private:
  Result<EvalValue> callLen(const Node& node, const EvalValue& value) const {
    switch (value.index()) {
      case 1:
        return EvalValue(static_cast<int64_t>(std::get<std::string_view>(value).size()));
      case 2:
        return EvalValue(static_cast<int64_t>(std::get<std::string>(value).size()));
      case 3:
        return EvalValue(
            static_cast<int64_t>(std::get<const std::vector<std::string>*>(value)->size()));
      case 4:
        return EvalValue(static_cast<int64_t>(std::get<const StringMap*>(value)->size()));
      default:
        return failCall(node, fmt::format("len of type {}", goTypeName(value)));
    }
  }

  static Status failAt(const Node& node, const Arg& arg, const std::string& message) {
    return Status::invalid(fmt::format("template: executing {} at <{}> (offset {}): {}",
                                       node.source, arg.source, arg.offset, message));
  }
  static Status failCall(const Node& node, const std::string& message) {
    return Status::invalid(fmt::format("template: executing {} (offset {}): error calling {}: {}",
                                       node.source, node.offset, node.function, message));
  }

  const TemplateData& data_;
};

}  // namespace

const TemplateValue* TemplateData::field(std::string_view name) const {
  for (const auto& [fieldName, value] : fields) {
    if (fieldName == name) return value;
  }
  return nullptr;
}

std::string formatGoStringSlice(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ' ';
    out += values[i];
  }
  out += ']';
  return out;
}

Result<std::string> Template::execute(const TemplateData& data) const {
  std::string out;
  Executor executor(data);
  for (const Node& node : nodes_) {
    if (node.isText) {
      out += node.text;
      continue;
    }
    Result<EvalValue> value =
        node.function.empty() ? executor.evalArg(node.args.front(), node) : executor.call(node);
    if (!value) return value.status();
    print(*value, out);
  }
  return out;
}

}  // namespace gpuscale::rules
