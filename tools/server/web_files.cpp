#include "web_files.h"

#include <string>
#include <system_error>

namespace sightline::demo {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decoded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = hex_digit(text[i + 1]);
    const int low = hex_digit(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

}  // namespace

std::optional<std::filesystem::path> web_file(const std::filesystem::path& root, std::string_view target) {
  target = target.substr(0, target.find('?'));
  if (target.empty() || target.front() != '/') return std::nullopt;
  std::optional<std::string> path = percent_decoded(target.substr(1));
  if (!path) return std::nullopt;
  if (path->empty() || path->back() == '/') *path += "index.html";
  if (path->find_first_of(std::string_view("\\\0", 2)) != std::string::npos) return std::nullopt;

  std::filesystem::path relative;
  std::size_t begin = 0;
  while (begin <= path->size()) {
    const std::size_t end = std::min(path->find('/', begin), path->size());
    const std::string_view segment = std::string_view(*path).substr(begin, end - begin);
    // An empty segment would make the rest absolute ("//etc"); ".." would climb out of root.
    if (segment.empty() || segment == "." || segment == "..") return std::nullopt;
    relative /= std::filesystem::path(segment);
    begin = end + 1;
  }
  const std::filesystem::path file = root / relative;
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) return std::nullopt;
  return file;
}

std::string_view content_type(const std::filesystem::path& file) {
  const std::string extension = file.extension().string();
  if (extension == ".html") return "text/html";
  if (extension == ".js") return "text/javascript";
  if (extension == ".css") return "text/css";
  if (extension == ".json") return "application/json";
  if (extension == ".png") return "image/png";
  if (extension == ".svg") return "image/svg+xml";
  return "application/octet-stream";
}

}  // namespace sightline::demo
