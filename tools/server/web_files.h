// Which file of the web root an HTTP request target names, and its Content-Type.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace sightline::demo {

/// The file of `root` (an absolute, canonical directory) that `target` (an HTTP request target,
/// e.g. "/js/main.js?x=1") names: the query is dropped, %XX escapes are decoded, "/" and a path
/// ending in '/' name index.html. nullopt (answer 404) for a target that is not an origin-form
/// path, holds a bad escape, a ".." segment, an empty segment, a backslash or a NUL, or names
/// no regular file under root.
[[nodiscard]] std::optional<std::filesystem::path> web_file(const std::filesystem::path& root,
                                                            std::string_view target);

/// The Content-Type for a file's extension (.html, .js, .css, .json, .png, .svg; anything else
/// application/octet-stream).
[[nodiscard]] std::string_view content_type(const std::filesystem::path& file);

}  // namespace sightline::demo
