#include "session/site_packages.h"

#include <sys/stat.h>

#include <map>
#include <mutex>
#include <sstream>

#include "torch/child_process.h"

namespace shardlens::session {
namespace {

struct Answer {
  int64_t mtime_ns = -1;
  std::vector<std::string> dirs;
  std::string why;
};

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The standard library's folders (".../lib/python3.11", its lib-dynload) and zips: modelled, or
// not Python source.
bool standard_library(const std::string& path) {
  const std::string last = path.substr(path.find_last_of('/') + 1);
  return last.rfind("python", 0) == 0 || last == "lib-dynload" || (path.size() > 4 && path.compare(path.size() - 4, 4, ".zip") == 0);
}

}  // namespace

std::vector<std::string> interpreter_site_packages(const std::string& python, std::string* why) {
  if (python.empty()) return {};
  const std::vector<std::string> found = torchgraph::find_on_path(python);
  const std::string program = python.find('/') != std::string::npos ? python : found.empty() ? python : found.front();
  struct stat st {};
  const int64_t mtime = ::stat(program.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec : -1;
  static std::mutex mutex;
  static std::map<std::string, Answer> answers;
  {
    std::lock_guard lock(mutex);
    if (auto it = answers.find(program); it != answers.end() && it->second.mtime_ns == mtime) {
      if (why) *why = it->second.why;
      return it->second.dirs;
    }
  }
  Answer answer;
  answer.mtime_ns = mtime;
  torchgraph::ProcessOptions options;
  options.timeout_s = 10;
  const auto r = torchgraph::run_process({program, "-I", "-c", "import sys\nfor p in sys.path: print(p)"}, options);
  if (!r.started) answer.why = "cannot run " + program + ": " + r.error;
  else if (r.timed_out) answer.why = program + " did not answer within 10 s";
  else if (r.exit_code != 0) answer.why = program + " exited with status " + std::to_string(r.exit_code) + ": " + r.err.substr(0, 200);
  else {
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty() && line[0] == '/' && !standard_library(line) && is_dir(line)) answer.dirs.push_back(line);
  }
  if (why) *why = answer.why;
  std::lock_guard lock(mutex);
  answers[program] = answer;
  return answer.dirs;
}

}  // namespace shardlens::session
