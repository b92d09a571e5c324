#include "torch/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include "torch/confinement.h"

extern char** environ;

namespace shardlens::torchgraph {

bool is_executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::vector<std::string> find_on_path(const std::string& name, bool all) {
  std::vector<std::string> out;
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t colon = p.find(':', start);
    std::string dir = p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    std::string candidate = dir + "/" + name;
    if (!dir.empty() && dir[0] == '/' && is_executable(candidate)) {
      out.push_back(candidate);
      if (!all) break;
    }
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

std::string absolute_path(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  std::error_code ec;
  auto p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

std::string executable_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<size_t>(n));
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult r;
  auto t0 = std::chrono::steady_clock::now();
  const int timeout_s = options.timeout_s;
  if (argv.empty()) {
    r.error = "no program given";
    return r;
  }
  // Looked up here rather than by posix_spawnp, which would also search empty PATH entries.
  std::string program = argv[0];
  if (program.find('/') == std::string::npos) {
    auto found = find_on_path(program);
    if (found.empty()) {
      r.error = "cannot run " + program + ": not found on PATH";
      return r;
    }
    program = found[0];
  }
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    r.error = std::strerror(errno);
    return r;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.error = std::strerror(errno);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  const bool confined = !options.confine_to.empty();
  if (confined) posix_spawn_file_actions_addchdir_np(&actions, options.confine_to.c_str());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  if (confined) {
    env_strings = confined_environment(options.confine_to, options.extra_env);
  } else {
    std::set<std::string> overridden;
    for (auto& e : options.extra_env) overridden.insert(e.substr(0, e.find('=')));
    for (char** e = environ; e && *e; ++e) {
      std::string s = *e;
      if (!overridden.count(s.substr(0, s.find('=')))) env_strings.push_back(s);
    }
    for (auto& e : options.extra_env) env_strings.push_back(e);
  }
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  pid_t pid = 0;
  int rc = 0;
  auto spawn = [&] { rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, args.data(), env.data()); };
  if (confined) {
    // Landlock binds a thread and what it starts: a thread made for this one spawn takes the
    // restriction with it when it ends, and the server's own threads stay free.
    std::thread spawner([&] {
      std::string why_not;
      r.writes_confined = restrict_writes_to(options.confine_to, why_not);
      spawn();
    });
    spawner.join();
  } else {
    spawn();
  }
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    r.error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return r;
  }
  r.started = true;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[65536];
  auto deadline = t0 + std::chrono::seconds(timeout_s > 0 ? timeout_s : 0);
  while (open_fds > 0) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        r.timed_out = true;
        ::kill(pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    int n = ::poll(fds, 2, wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof(buf));
      if (got > 0) {
        sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace shardlens::torchgraph
