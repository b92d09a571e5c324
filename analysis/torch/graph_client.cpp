#include "torch/graph_client.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "torch/child_process.h"
#include "torch/confinement.h"

namespace shardlens::torchgraph {
namespace {

constexpr int kExpectedFormat = 1;

uint64_t fnv(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

uint64_t fnv(uint64_t h, const std::string& s) { return fnv(h, s.data(), s.size() + 1); }

bool make_dirs(const std::string& path) {
  std::string cur;
  size_t i = 0;
  while (i <= path.size()) {
    size_t slash = path.find('/', i);
    cur = path.substr(0, slash == std::string::npos ? path.size() : slash);
    if (!cur.empty()) ::mkdir(cur.c_str(), 0755);
    if (slash == std::string::npos) break;
    i = slash + 1;
  }
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string first_line(const std::string& s) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  return t;
}

}  // namespace

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool hash_file(const std::string& path, uint64_t& hash, std::string& error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    error = "cannot read '" + path + "'";
    return false;
  }
  uint64_t h = 1469598103934665603ULL;
  std::vector<char> buf(1 << 16);
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h = fnv(h, buf.data(), static_cast<size_t>(f.gcount()));
  }
  hash = h;
  return true;
}

std::string default_cache_dir() {
  if (const char* d = std::getenv("SHARDLENS_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/shardlens";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/shardlens";
  return "/tmp/shardlens-cache";
}

std::string find_graph_executable(const std::string& configured, std::string& error) {
  if (!configured.empty()) {
    if (is_executable(configured)) return configured;
    error = "shardlens-graph not found at '" + configured + "'";
    return "";
  }
  if (const char* e = std::getenv("SHARDLENS_GRAPH"); e && *e) {
    if (is_executable(e)) return e;
    error = "SHARDLENS_GRAPH='" + std::string(e) + "' is not an executable";
    return "";
  }
  std::string dir = executable_dir();
  for (const char* rel : {"/shardlens-graph", "/../libexec/shardlens/shardlens-graph"})
    if (!dir.empty() && is_executable(dir + rel)) return dir + rel;
  auto found = find_on_path("shardlens-graph");
  if (!found.empty()) return found[0];
  error = "shardlens-graph was not found next to " + (dir.empty() ? std::string("this program") : dir) +
          " nor on PATH (it is built when LibTorch is installed: apt-get install libtorch-dev, then rebuild)";
  return "";
}

GraphResponse fetch_graph(const GraphRequest& request, const GraphClientOptions& options) {
  GraphResponse r;
  auto t0 = std::chrono::steady_clock::now();
  auto done = [&]() -> GraphResponse& {
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  struct stat st {};
  if (::stat(request.file.c_str(), &st) != 0) {
    r.error = "no such file: " + request.file;
    return done();
  }
  if (S_ISDIR(st.st_mode)) {
    r.error = "'" + request.file + "' is a directory, not a TorchScript file";
    return done();
  }
  std::string exe = find_graph_executable(options.executable, r.error);
  if (exe.empty()) return done();
  exe = absolute_path(exe);
  std::vector<std::string> argv{exe, absolute_path(request.file), "--batch", std::to_string(request.batch), "--tokens",
                                std::to_string(request.tokens), "--spatial",
                                std::to_string(request.spatial[0]) + "x" + std::to_string(request.spatial[1])};
  for (auto& in : request.inputs) {
    argv.push_back("--input");
    argv.push_back(in);
  }
  if (!request.graph) argv.push_back("--no-graph");

  // Cache key: the file's bytes, the arguments, and the tool's build (its size and time).
  std::string cache_path;
  if (options.use_cache) {
    uint64_t content = 0;
    std::string error;
    if (hash_file(request.file, content, error)) {
      uint64_t h = 1469598103934665603ULL;
      h = fnv(h, &content, sizeof(content));
      for (size_t i = 2; i < argv.size(); ++i) h = fnv(h, argv[i]);
      struct stat es {};
      if (::stat(exe.c_str(), &es) == 0) {
        int64_t stamp[2] = {static_cast<int64_t>(es.st_size), static_cast<int64_t>(es.st_mtime)};
        h = fnv(h, stamp, sizeof(stamp));
      }
      h = fnv(h, &kExpectedFormat, sizeof(kExpectedFormat));
      std::string dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
      cache_path = dir + "/graphs/" + hex64(h) + ".json";
      r.cache_file = cache_path;
      std::ifstream cached(cache_path);
      if (cached) {
        std::stringstream ss;
        ss << cached.rdbuf();
        auto j = nlohmann::json::parse(ss.str(), nullptr, false);
        if (!j.is_discarded() && j.is_object() && j.value("format", 0) == kExpectedFormat) {
          r.ok = true;
          r.json = std::move(j);
          r.from_cache = true;
          return done();
        }
      }
    }
  }
  // Loading the file runs its code: in a confined child (confinement.h).
  TempDir sandbox("shardlens-graph-");
  if (sandbox.path().empty()) {
    r.error = sandbox.error();
    return done();
  }
  ProcessOptions confined;
  confined.timeout_s = options.timeout_s;
  confined.confine_to = sandbox.path();
  auto p = run_process(argv, confined);
  r.exit_code = p.exit_code;
  if (!p.started) {
    r.error = p.error;
    return done();
  }
  if (p.timed_out) {
    r.error = "shardlens-graph did not finish within " + std::to_string(options.timeout_s) + " s";
    return done();
  }
  if (p.exit_code != 0) {
    std::string msg = first_line(p.err);
    const std::string prefix = "shardlens-graph: ";
    if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
    r.error = msg.empty() ? "shardlens-graph exited with status " + std::to_string(p.exit_code) : msg;
    return done();
  }
  auto j = nlohmann::json::parse(p.out, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    r.error = "shardlens-graph printed something that is not JSON";
    return done();
  }
  if (j.value("format", 0) != kExpectedFormat) {
    r.error = "shardlens-graph speaks format " + std::to_string(j.value("format", 0)) + ", expected " +
              std::to_string(kExpectedFormat) + " (rebuild both)";
    return done();
  }
  r.ok = true;
  r.json = std::move(j);
  if (!cache_path.empty()) {
    std::string dir = cache_path.substr(0, cache_path.rfind('/'));
    if (make_dirs(dir)) {
      std::string tmp = cache_path + ".tmp." + std::to_string(::getpid());
      {
        std::ofstream f(tmp);
        f << p.out;
      }
      std::rename(tmp.c_str(), cache_path.c_str());
    }
  }
  return done();
}

}  // namespace shardlens::torchgraph
