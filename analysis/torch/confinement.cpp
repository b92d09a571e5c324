#include "torch/confinement.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace shardlens::torchgraph {
namespace {

// Landlock's filesystem rights that write (the kernel's ABI numbers; the system's header may
// predate some of them).
constexpr uint64_t kWriteFile = 1ULL << 1, kRemoveDir = 1ULL << 4, kRemoveFile = 1ULL << 5, kMakeChar = 1ULL << 6,
                   kMakeDir = 1ULL << 7, kMakeReg = 1ULL << 8, kMakeSock = 1ULL << 9, kMakeFifo = 1ULL << 10,
                   kMakeBlock = 1ULL << 11, kMakeSym = 1ULL << 12, kRefer = 1ULL << 13, kTruncate = 1ULL << 14;
constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0, kScopeSignal = 1ULL << 1;

long landlock_abi() {
#ifdef SYS_landlock_create_ruleset
  return ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
#else
  errno = ENOSYS;
  return -1;
#endif
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = "/tmp/" + prefix + "XXXXXX";
  if (::mkdtemp(pattern.data())) path_ = pattern;
  else error_ = "cannot create a temporary directory: " + std::string(std::strerror(errno));
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // symbolic links the child made are removed, not followed
}

bool restrict_writes_to(const std::string& dir, std::string& why_not) {
#ifdef SYS_landlock_create_ruleset
  long abi = landlock_abi();
  if (abi < 1) {
    why_not = "the kernel has no Landlock (" + std::string(std::strerror(errno)) + ")";
    return false;
  }
  uint64_t write = kWriteFile | kRemoveDir | kRemoveFile | kMakeChar | kMakeDir | kMakeReg | kMakeSock | kMakeFifo |
                   kMakeBlock | kMakeSym;
  if (abi >= 2) write |= kRefer;
  if (abi >= 3) write |= kTruncate;
  // landlock_ruleset_attr as the kernel reads it (the system's header may lack the later fields);
  // from ABI 6 the child may not signal, nor reach the abstract sockets of, processes outside it.
  struct {
    uint64_t handled_access_fs, handled_access_net, scoped;
  } attr{write, 0, kScopeAbstractUnixSocket | kScopeSignal};
  size_t attr_size = abi >= 6 ? sizeof(attr) : sizeof(uint64_t);
  Fd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0)));
  if (ruleset.get() < 0) {
    why_not = "landlock_create_ruleset: " + std::string(std::strerror(errno));
    return false;
  }
  auto allow = [&](const char* path, uint64_t rights) {
    Fd target(::open(path, O_PATH | O_CLOEXEC));
    if (target.get() < 0) return false;
    landlock_path_beneath_attr rule{};
    rule.allowed_access = rights;
    rule.parent_fd = target.get();
    return ::syscall(SYS_landlock_add_rule, ruleset.get(), LANDLOCK_RULE_PATH_BENEATH, &rule, 0) == 0;
  };
  // A file takes only the rights that apply to files.
  if (!allow(dir.c_str(), write) || !allow("/dev/null", write & (kWriteFile | kTruncate))) {
    why_not = "landlock_add_rule: " + std::string(std::strerror(errno));
    return false;
  }
  // Without privileges a thread may only restrict itself once it can gain none (setuid programs).
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0) {
    why_not = "landlock_restrict_self: " + std::string(std::strerror(errno));
    return false;
  }
  return true;
#else
  (void)dir;
  why_not = "built without Landlock";
  return false;
#endif
}

std::vector<std::string> confined_environment(const std::string& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> env{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "TMPDIR=" + dir, "XDG_CACHE_HOME=" + dir + "/cache"};
  for (const char* name : {"HOME", "LD_LIBRARY_PATH"})
    if (const char* v = std::getenv(name); v && *v) env.push_back(std::string(name) + "=" + v);
  for (auto& e : extra) {
    std::string name = e.substr(0, e.find('='));
    std::erase_if(env, [&](const std::string& have) { return have.compare(0, name.size() + 1, name + "=") == 0; });
    env.push_back(e);
  }
  return env;
}

}  // namespace shardlens::torchgraph
