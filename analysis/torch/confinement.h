// What a child that runs untrusted code may do. Loading a TorchScript file runs the archive's ops
// (they can open and write files), and an export runs the user's script: such children get a
// fresh private directory as working directory, a minimal environment, and, where the kernel has
// Landlock (Linux 5.13+, no privileges needed), no write access outside that directory. POSIX.
#pragma once

#include <string>
#include <vector>

namespace shardlens::torchgraph {

// A fresh directory (mode 0700) under /tmp, removed with everything in it when this goes.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }  // "" when it could not be made
  const std::string& error() const { return error_; }

 private:
  std::string path_, error_;
};

// Restricts the calling thread, and every process it starts from then on, to writing beneath
// `dir` and to /dev/null (reading and executing stay allowed), with Landlock. Irreversible for the
// thread: call it on a thread made for one spawn. False with `why_not` when the kernel offers no
// Landlock (the thread is then unchanged, apart from no_new_privs).
bool restrict_writes_to(const std::string& dir, std::string& why_not);

// The whole environment of a confined child: PATH=/usr/local/bin:/usr/bin:/bin, LANG=C.UTF-8,
// HOME and LD_LIBRARY_PATH as this process has them (the user site-packages, a LibTorch outside
// the system's), TMPDIR and XDG_CACHE_HOME inside `dir`, then `extra` ("NAME=value"). Nothing else
// of this process's environment (tokens, keys) reaches it.
std::vector<std::string> confined_environment(const std::string& dir, const std::vector<std::string>& extra);

}  // namespace shardlens::torchgraph
