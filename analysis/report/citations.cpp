#include "report/citations.h"

#include <cctype>

namespace shardlens::report::detail {
namespace {

struct Known {
  const char* id;
  const char* label;
  const char* title;
  const char* url;
};

// The sources SHARDING.md names, with the places they are published.
constexpr Known kKnown[] = {
    {"megatron", "Megatron-LM §3",
     "Shoeybi et al. 2019, Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism (§3: "
     "column→row pairs, head-sharded attention, 2 all-reduce per layer forward)",
     "https://arxiv.org/abs/1909.08053"},
    {"sequence-parallel", "Korthikanti et al. 2022",
     "Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer Models (sequence parallelism: each "
     "all-reduce becomes reduce-scatter + all-gather)",
     "https://arxiv.org/abs/2205.05198"},
    {"gshard", "GShard", "Lepikhin et al. 2020, GShard: Scaling Giant Models with Conditional Computation and Automatic Sharding (expert parallelism, all-to-all dispatch and combine)",
     "https://arxiv.org/abs/2006.16668"},
    {"gspmd", "GSPMD", "Xu et al. 2021, GSPMD: General and Scalable Parallelization for ML Computation Graphs (resharding rules: sharded→replicated all-gather, partial→replicated all-reduce, dim→dim all-to-all)",
     "https://arxiv.org/abs/2105.04663"},
    {"megatron-layers", "Megatron tensor_parallel/layers.py", "Megatron-LM, megatron/core/tensor_parallel/layers.py (VocabParallelEmbedding: masked lookup + all-reduce; Column/RowParallelLinear)",
     "https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/core/tensor_parallel/layers.py"},
    {"megatron-cross-entropy", "Megatron cross_entropy.py", "Megatron-LM, megatron/core/tensor_parallel/cross_entropy.py (loss on vocab-sharded logits with small all-reduces)",
     "https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/core/tensor_parallel/cross_entropy.py"},
    {"megatron-dispatcher", "Megatron token_dispatcher.py", "Megatron-LM, megatron/core/transformer/moe/token_dispatcher.py (all-to-all token dispatch and combine)",
     "https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/core/transformer/moe/token_dispatcher.py"},
    {"torchtitan-ep", "torchtitan expert_parallel.py", "torchtitan, torchtitan/distributed/expert_parallel.py (expert parallelism: 2 all-to-all per MoE layer)",
     "https://github.com/pytorch/torchtitan/blob/main/torchtitan/distributed/expert_parallel.py"},
    {"dtensor", "DTensor", "PyTorch DTensor (torch.distributed.tensor): placements and redistribution between Shard, Replicate and Partial",
     "https://pytorch.org/docs/stable/distributed.tensor.html"},
    {"tt-metal-ccl", "tt-metal CCL_bandwidth.md", "tt-metal, tech_reports/CCLs/CCL_bandwidth.md (measured and fitted all-gather / reduce-scatter / all-reduce / all-to-all times on Wormhole; the cost model's constants)",
     "https://github.com/tenstorrent/tt-metal/blob/main/tech_reports/CCLs/CCL_bandwidth.md"},
    {"tt-xla-skill", "tt-xla sharding-model-analysis", "tt-xla, .claude/skills/sharding-model-analysis (the workflow this report's sections follow; mesh shapes, CCL cheat sheet, compiler support)",
     "https://github.com/tenstorrent/tt-xla/tree/main/.claude/skills/sharding-model-analysis"},
    {"tt-xla-video-vae", "tt-xla video_vae.md", "tt-xla, .claude/skills/sharding-model-analysis/references/video_vae.md (VAE blocks sharded on channels: column/row conv pairs, statistics all-reduce for norms)",
     "https://github.com/tenstorrent/tt-xla/blob/main/.claude/skills/sharding-model-analysis/references/video_vae.md"},
    {"tt-xla-compiler-support", "tt-xla compiler_support.md", "tt-xla, .claude/skills/sharding-model-analysis/references/compiler_support.md (known limitations: pattern → symptom → tracking issue → workaround)",
     "https://github.com/tenstorrent/tt-xla/blob/main/.claude/skills/sharding-model-analysis/references/compiler_support.md"},
    {"tt-xla-shardy", "torch-xla SPMD on tt-xla", "tt-xla, .claude/skills/sharding-model-analysis/references/shardy_sharding.md (xs.mark_sharding specs, Shardy, sharding constraints)",
     "https://github.com/tenstorrent/tt-xla/blob/main/.claude/skills/sharding-model-analysis/references/shardy_sharding.md"},
    {"tt-xla-ccl-cheatsheet", "tt-xla ccl_cheatsheet.md", "tt-xla, .claude/skills/sharding-model-analysis/references/ccl_cheatsheet.md (which layout emits which collective, and its size)",
     "https://github.com/tenstorrent/tt-xla/blob/main/.claude/skills/sharding-model-analysis/references/ccl_cheatsheet.md"},
};

const Known* find_known(std::string_view id) {
  for (auto& k : kKnown)
    if (id == k.id) return &k;
  return nullptr;
}

std::string link(std::string_view label, std::string_view url) { return "[" + md_escape(label) + "](" + std::string(url) + ")"; }

}  // namespace

bool Citations::known(std::string_view id) { return find_known(id) != nullptr; }

void Citations::record(const Source& s) {
  for (auto& c : cited_)
    if (c.id == s.id) return;
  cited_.push_back(s);
}

std::string Citations::cite(std::string_view id, std::string_view label) {
  const Known* k = find_known(id);
  if (!k) return "";
  record({k->id, k->label, k->title, k->url});
  return link(label.empty() ? std::string_view(k->label) : label, k->url);
}

std::string Citations::cite_issue(const std::string& name, const std::string& title, const std::string& url) {
  std::string id = name;
  for (auto& s : cited_)
    if (s.id == id) {
      if (s.title.empty() && !title.empty()) s.title = title;
      return link(name, s.url);
    }
  record({id, name, title, url});
  return link(name, url);
}

std::string Citations::linkify(std::string_view text) {
  std::string out;
  size_t i = 0;
  auto digits_at = [&](size_t p) {
    size_t q = p;
    while (q < text.size() && std::isdigit(static_cast<unsigned char>(text[q]))) ++q;
    return q;
  };
  while (i < text.size()) {
    bool done = false;
    for (std::string_view repo : {"tt-mlir", "tt-xla", "tt-metal"}) {
      if (text.compare(i, repo.size(), repo) != 0) continue;
      size_t p = i + repo.size();
      if (p + 2 > text.size() || text[p] != ' ' || text[p + 1] != '#') continue;
      size_t q = digits_at(p + 2);
      if (q == p + 2) continue;
      std::string number(text.substr(p + 2, q - p - 2));
      std::string name = std::string(repo) + " #" + number;
      out += cite_issue(name, "", "https://github.com/tenstorrent/" + std::string(repo) + "/issues/" + number);
      // ", #5017" right after: the same repository.
      while (q + 3 < text.size() && text[q] == ',' && text[q + 1] == ' ' && text[q + 2] == '#' && std::isdigit(static_cast<unsigned char>(text[q + 3]))) {
        size_t r = digits_at(q + 3);
        std::string n2(text.substr(q + 3, r - q - 3));
        out += ", " + cite_issue(std::string(repo) + " #" + n2, "", "https://github.com/tenstorrent/" + std::string(repo) + "/issues/" + n2);
        q = r;
      }
      i = q;
      done = true;
      break;
    }
    if (done) continue;
    constexpr std::string_view kMegatron = "Megatron-LM §3";
    if (text.compare(i, kMegatron.size(), kMegatron) == 0) {
      out += cite("megatron");
      i += kMegatron.size();
      continue;
    }
    if (text.compare(i, 6, "arXiv:") == 0) {
      size_t p = i + 6, q = p;
      while (q < text.size() && (std::isdigit(static_cast<unsigned char>(text[q])) || text[q] == '.')) ++q;
      while (q > p && text[q - 1] == '.') --q;
      if (q > p) {
        std::string number(text.substr(p, q - p));
        std::string url = "https://arxiv.org/abs/" + number;
        bool known = false;
        for (auto& k : kKnown)
          if (url == k.url) {
            record({k.id, k.label, k.title, k.url});
            known = true;
          }
        if (!known) record({"arXiv:" + number, "arXiv:" + number, "", url});
        out += link("arXiv:" + number, url);
        i = q;
        continue;
      }
    }
    out += md_escape(text.substr(i, 1));
    ++i;
  }
  return out;
}

std::string md_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '|': case '*': case '_': case '`': case '[': case ']': case '<': case '>': case '\\':
        out += '\\';
        out += c;
        break;
      case '\n':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string md_code(std::string_view text) {
  std::string t(text);
  for (auto& c : t)
    if (c == '\n') c = ' ';
  // Pipes end table cells even inside code spans (GFM): escape them.
  std::string escaped;
  for (char c : t) {
    if (c == '|') escaped += "\\|";
    else escaped += c;
  }
  if (t.find('`') == std::string::npos) return "`" + escaped + "`";
  return "`` " + escaped + " ``";
}

}  // namespace shardlens::report::detail
