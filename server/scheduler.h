// The server's scheduling: the events its main loop waits on (messages from the reader,
// analyses and tasks from the worker) and the worker that runs one document analysis at a time
// (a newer version replaces a job not yet started and cancels the planning of one under way),
// then the tasks queued behind them.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "ir/heap.h"
#include "session/document_analysis.h"
#include "settings.h"

namespace shardlens::server {

using Clock = std::chrono::steady_clock;
using session::ByteEdit;
using session::DocumentAnalysis;
using session::DocumentAnalyzer;

// What the reader and the worker hand to the main loop.
struct ReaderMessage {
  std::string body;
};
struct ReaderError {
  std::string problem;
};
struct ReaderEnd {};
struct AnalysisDone {
  std::string uri;
  std::shared_ptr<const DocumentAnalysis> analysis;
  uint64_t sequence = 0;  // the worker's count of them; the main loop acknowledges it (Worker::handled)
};
// Work done off the main thread (a report) hands back a continuation that runs on it.
struct TaskDone {
  std::function<void()> finish;
};
using Event = std::variant<ReaderMessage, ReaderError, ReaderEnd, AnalysisDone, TaskDone>;

class EventQueue {
 public:
  void push(Event e) {
    {
      std::lock_guard lock(mutex_);
      events_.push_back(std::move(e));
    }
    cv_.notify_one();
  }
  // Waits until an event arrives or `deadline` passes.
  std::optional<Event> pop(std::optional<Clock::time_point> deadline) {
    std::unique_lock lock(mutex_);
    auto ready = [&] { return !events_.empty(); };
    if (deadline) cv_.wait_until(lock, *deadline, ready);
    else cv_.wait(lock, ready);
    if (events_.empty()) return std::nullopt;
    Event e = std::move(events_.front());
    events_.pop_front();
    return e;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Event> events_;
};

struct Job {
  int version = 0;
  std::string path, text;
  std::vector<ByteEdit> edits;
  bool reset = true;
  Settings settings;
  bool close = false;
};

// Runs analyses one at a time; a newer job for a document replaces one not yet started, and
// cancels the planning of one under way (see newer_job_waiting).
class Worker {
 public:
  explicit Worker(EventQueue& out) : out_(out), thread_([this] { run(); }) {}
  ~Worker() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  void submit(const std::string& uri, Job job) {
    {
      std::lock_guard lock(mutex_);
      auto it = jobs_.find(uri);
      if (it != jobs_.end() && !job.close && !it->second.close) {
        // Merge: the edits of the replaced job still have to reach the analyzer.
        std::vector<ByteEdit> edits = std::move(it->second.edits);
        edits.insert(edits.end(), job.edits.begin(), job.edits.end());
        job.edits = std::move(edits);
        job.reset = job.reset || it->second.reset;
      }
      if (it == jobs_.end()) order_.push_back(uri);
      jobs_[uri] = std::move(job);
    }
    cv_.notify_one();
  }
  // The main loop has acted on (published) the worker's AnalysisDone number `sequence`.
  void handled(uint64_t sequence) {
    {
      std::lock_guard lock(mutex_);
      handled_ = std::max(handled_, sequence);
    }
    cv_.notify_one();
  }
  // Runs `work` on the worker after the analyses queued before it; its result reaches the main
  // loop as the continuation it returns.
  void submit_task(std::function<std::function<void()>()> work) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(work));
    }
    cv_.notify_one();
  }

 private:
  void run() {
    use_huge_pages_for_thread_heap();
    for (;;) {
      std::string uri;
      Job job;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || !order_.empty() || !tasks_.empty(); });
        if (stop_) return;
        if (order_.empty()) {
          auto work = std::move(tasks_.front());
          tasks_.pop_front();
          lock.unlock();
          std::function<void()> finish;
          try {
            finish = work();
          } catch (const std::exception& e) {
            std::string what = e.what();
            finish = [what] { std::fprintf(stderr, "shardlens: task failed: %s\n", what.c_str()); };
          }
          out_.push(TaskDone{std::move(finish)});
          continue;
        }
        uri = order_.front();
        order_.pop_front();
        job = std::move(jobs_[uri]);
        jobs_.erase(uri);
      }
      if (job.close) {
        analyzers_.erase(uri);
        cancelled_in_a_row_.erase(uri);
        continue;
      }
      use_huge_pages_for_thread_heap();  // the arena may have grown a new heap
      auto& analyzer = analyzers_[uri];
      if (!analyzer) analyzer = std::make_unique<DocumentAnalyzer>();
      std::shared_ptr<const DocumentAnalysis> result;
      const auto cancelled = [this, &uri] { return newer_job_waiting(uri); };
      try {
        result = analyzer->analyze(job.version, job.path, job.text, job.edits, job.reset, job.settings, cancelled);
        cancelled_in_a_row_.erase(uri);
      } catch (const plan::PlanCancelled&) {
        ++cancelled_in_a_row_[uri];
        continue;  // the newer job carries on from this one's edits
      } catch (const std::exception& e) {
        // Never lose the session over one analysis: report it on the document instead.
        analyzer = std::make_unique<DocumentAnalyzer>();
        auto a = std::make_shared<DocumentAnalysis>();
        a->version = job.version;
        a->text = job.text;
        a->line_starts.push_back(0);
        a->error = std::string("internal error while analysing: ") + e.what();
        a->findings.push_back({"internal-error", "error", a->error, 0, 0, std::nullopt, ""});
        result = a;
      }
      hand_over(uri, result);
      analyzer->drop_retired();
      // Diagnostics are on their way; the alternatives hovers show come next, unless a newer
      // version is waiting (its own analysis will be completed instead).
      if (result && !result->complete) {
        bool newer = false;
        {
          std::lock_guard lock(mutex_);
          newer = jobs_.count(uri) > 0;
        }
        if (newer) continue;
        std::shared_ptr<const DocumentAnalysis> full;
        try {
          full = analyzer->complete(result, cancelled);
        } catch (const std::exception&) {
          auto copy = std::make_shared<DocumentAnalysis>(*result);
          copy->complete = true;  // without alternatives rather than never
          full = copy;
        }
        if (full) hand_over(uri, full);
      }
    }
  }

  // Hands an analysis to the main loop and waits (briefly) until it has been published before
  // going on with work of its own (freeing the replaced run, the alternatives). Otherwise the
  // main loop, woken while this thread keeps its CPU and the client holds the other, waited for
  // the scheduler's next slice: 3 to 4 ms before the diagnostics of one code edit in five went
  // out (bench/lsp, 2 CPUs).
  void hand_over(const std::string& uri, std::shared_ptr<const DocumentAnalysis> analysis) {
    const uint64_t sequence = ++pushed_;
    out_.push(AnalysisDone{uri, std::move(analysis), sequence});
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, std::chrono::milliseconds(kHandOverWaitMs), [&] { return handled_ >= sequence || stop_ || !order_.empty(); });
  }
  static constexpr int kHandOverWaitMs = 20;  // a main loop busy elsewhere does not hold the worker longer

  // Whether the analysis of `uri` under way should give way to a newer version of the document. A
  // document edited faster than it can be planned still gets diagnostics: after a few
  // cancellations in a row one analysis runs to the end (each cancelled one leaves its solved
  // bodies in the planner's memo, so the next gets further).
  bool newer_job_waiting(const std::string& uri) {
    if (auto it = cancelled_in_a_row_.find(uri); it != cancelled_in_a_row_.end() && it->second >= kMaxCancelledInARow) return false;
    std::lock_guard lock(mutex_);
    return jobs_.count(uri) > 0;
  }
  static constexpr int kMaxCancelledInARow = 3;

  EventQueue& out_;
  std::map<std::string, int> cancelled_in_a_row_;  // worker thread only
  uint64_t pushed_ = 0;                            // worker thread only
  uint64_t handled_ = 0;                           // under mutex_
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, Job> jobs_;
  std::deque<std::string> order_;
  std::deque<std::function<std::function<void()>()>> tasks_;
  bool stop_ = false;
  std::map<std::string, std::unique_ptr<DocumentAnalyzer>> analyzers_;  // worker thread only
  std::thread thread_;
};

}  // namespace shardlens::server
