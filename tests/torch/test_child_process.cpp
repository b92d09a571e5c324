// Children that run untrusted code (shardlens-graph on a TorchScript file, the export helper on a
// script): executable lookup, and the confinement they run in (analysis/torch/confinement.h).
#include <catch2/catch.hpp>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "torch/child_process.h"
#include "torch/confinement.h"

using namespace shardlens::torchgraph;
namespace fs = std::filesystem;

namespace {

// Sets an environment variable for the scope of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

void write_executable(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), 0755);
}

}  // namespace

TEST_CASE("child processes: PATH lookup skips empty and relative entries (they mean the current directory)") {
  TempDir dir("shardlens-path-test-");
  REQUIRE(!dir.path().empty());
  fs::create_directories(fs::path(dir.path()) / "bin");
  write_executable(fs::path(dir.path()) / "shardlens-probe", "#!/bin/sh\necho planted\n");
  write_executable(fs::path(dir.path()) / "bin" / "shardlens-probe", "#!/bin/sh\necho planted\n");
  auto cwd = fs::current_path();
  fs::current_path(dir.path());
  {
    ScopedEnv path("PATH", ":bin:.:/usr/bin:/bin");
    CHECK(find_on_path("shardlens-probe").empty());
    auto r = run_process({"shardlens-probe"});
    CHECK(!r.started);
    CHECK(r.error.find("not found on PATH") != std::string::npos);
    CHECK(!find_on_path("sh").empty());  // absolute entries still count
  }
  {
    ScopedEnv path("PATH", dir.path() + "/bin:/usr/bin:/bin");
    auto found = find_on_path("shardlens-probe");
    REQUIRE(found.size() == 1);
    CHECK(found[0] == dir.path() + "/bin/shardlens-probe");
  }
  fs::current_path(cwd);
}

TEST_CASE("child processes: a confined child runs in its own directory with a minimal environment and cannot write outside it") {
  TempDir outside("shardlens-outside-");
  REQUIRE(!outside.path().empty());
  ScopedEnv canary("SHARDLENS_TEST_SECRET", "do-not-leak");
  std::string sandbox_path;
  ProcessResult r;
  {
    TempDir sandbox("shardlens-sandbox-");
    REQUIRE(!sandbox.path().empty());
    sandbox_path = sandbox.path();
    const std::string script =
        "pwd; echo \"secret=$SHARDLENS_TEST_SECRET\"; echo \"tmp=$TMPDIR\"; echo \"path=$PATH\";"
        "(echo x > '" + outside.path() + "/escaped') 2>/dev/null && echo wrote-outside;"
        "echo x > inside && echo wrote-inside; echo x > /dev/null && echo wrote-null";
    r = run_process({"/bin/sh", "-c", script}, {.timeout_s = 30, .confine_to = sandbox.path()});
    REQUIRE(r.started);
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(fs::path(sandbox.path()) / "inside"));
  }
  INFO(r.out << r.err);
  CHECK(r.out.find(sandbox_path + "\n") != std::string::npos);  // its working directory
  CHECK(r.out.find("secret=\n") != std::string::npos);          // nothing of ours leaks
  CHECK(r.out.find("tmp=" + sandbox_path + "\n") != std::string::npos);
  CHECK(r.out.find("path=/usr/local/bin:/usr/bin:/bin\n") != std::string::npos);
  CHECK(r.out.find("wrote-inside") != std::string::npos);
  CHECK(r.out.find("wrote-null") != std::string::npos);
  CHECK(!fs::exists(sandbox_path));  // removed with what the child left
  // Where the kernel has Landlock (Linux 5.13+) nothing outside is writable.
  const bool landlock = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION) >= 1;
  CHECK(r.writes_confined == landlock);
  if (landlock) {
    CHECK(r.out.find("wrote-outside") == std::string::npos);
    CHECK(!fs::exists(fs::path(outside.path()) / "escaped"));
  } else {
    WARN("no Landlock in this kernel: the write confinement is not checked");
  }
}

TEST_CASE("child processes: an unconfined child keeps the environment and the working directory") {
  ScopedEnv canary("SHARDLENS_TEST_SECRET", "kept");
  auto r = run_process({"sh", "-c", "pwd; echo \"secret=$SHARDLENS_TEST_SECRET\""});
  REQUIRE(r.started);
  CHECK(r.out == fs::current_path().string() + "\nsecret=kept\n");
  CHECK(!r.writes_confined);
}
