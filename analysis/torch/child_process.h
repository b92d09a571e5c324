// Runs a program as a child process and collects what it prints: how shardlens runs the Python
// export helper and shardlens-graph without linking Python or LibTorch itself. POSIX.
#pragma once

#include <string>
#include <vector>

namespace shardlens::torchgraph {

struct ProcessResult {
  bool started = false;     // false: the program could not be run (see error)
  int exit_code = -1;       // the exit status; 128 + N when killed by signal N
  bool timed_out = false;
  std::string out, err;     // standard output and error
  std::string error;        // why it did not start
  double ms = 0;            // wall time
  bool writes_confined = false;  // confined, and the kernel held it to its directory (Landlock)
};

struct ProcessOptions {
  int timeout_s = 0;                   // <= 0: no limit
  std::vector<std::string> extra_env;  // "NAME=value", added to the environment
  // Non-empty: the child runs confined to this directory (confinement.h): it is its working
  // directory, its environment is confined_environment() (nothing else of ours), and where the
  // kernel allows it writes nowhere else. Paths in argv must then be absolute.
  std::string confine_to;
};

// argv[0] is looked up on PATH (find_on_path) when it has no slash. Standard input is /dev/null.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// The directory of the running executable ("" when unknown).
std::string executable_dir();

// First executable named `name` on PATH (none when none); every match when `all` is set. Empty
// and relative PATH entries are skipped: they name the current directory, which may be a
// repository the user just cloned.
std::vector<std::string> find_on_path(const std::string& name, bool all = false);

// `path` made absolute against the current directory (a confined child runs elsewhere).
std::string absolute_path(const std::string& path);

bool is_executable(const std::string& path);

}  // namespace shardlens::torchgraph
