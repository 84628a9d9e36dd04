#include "files.hpp"

#include <zlib.h>

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace perfgap::fixture {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool write_file(const fs::path& p, const std::string& content) {
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << content;
  out.close();
  return out.good();
}

bool write_script(const fs::path& p, const std::string& content) {
  return write_file(p, content) && ::chmod(p.c_str(), 0755) == 0;
}

std::string write_in(const TempDir& dir, const std::string& name, const std::string& content) {
  auto p = dir.path() + "/" + name;
  write_file(p, content);
  return p;
}

std::string source_path(const std::string& rel) { return (fs::path(PERFGAP_SOURCE_DIR) / rel).string(); }
std::string fixture_path(const std::string& rel) { return source_path("tests/fixtures/" + rel); }
std::string log_fixture(const std::string& rel) { return fixture_path("logs/" + rel); }

std::vector<std::string> case_tree_files() {
  std::vector<std::string> out;
  const fs::path dir = fixture_path("cases");
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() != ".tree" || e.path().parent_path().filename() == "base") continue;
    // Lexically: fs::relative resolves both paths through every link (~10,000 readlink calls
    // for the ~400 cases), and this runs at the start of each of the suite's ~1,500 processes.
    out.push_back(e.path().lexically_relative(dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string gzip_text(const std::string& s) {
  std::string out(compressBound(static_cast<uLong>(s.size())) + 64, '\0');
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  z.avail_in = static_cast<uInt>(s.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace perfgap::fixture
