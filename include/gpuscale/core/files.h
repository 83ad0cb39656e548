// Reading small files (certificates, keys, tokens, rule files, kubeconfigs) and trimming text.
//
// One reader for every module, so an unreadable file fails the same way everywhere: a
// Status::invalid naming the path (never its content), payload FileFailure::kUnreadable.
//
// Thread safety: pure functions (the file system is the only shared state).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "gpuscale/core/result.h"

namespace gpuscale::core {

// The payload of the Status of a file that could not be read (Status::payload).
enum class FileFailure { kUnreadable };

// The whole content of `path`, bytes as they are. A missing or unreadable file, or a read error
// part way, is an error value.
Result<std::string> readFile(const std::filesystem::path& path);

// `text` without leading and trailing spaces, tabs and line breaks.
std::string_view trimSpace(std::string_view text);

}  // namespace gpuscale::core
