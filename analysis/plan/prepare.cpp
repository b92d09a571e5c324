// What the search needs to know of a model before it plans: each tensor's dim roles (batch,
// sequence, hidden, heads, ...), the residual stream, module bodies and their content hashes.
#include <algorithm>
#include <cmath>
#include <functional>
#include <future>
#include <map>
#include <set>

#include "ir/split.h"
#include "plan/search.h"

namespace shardlens::plan::detail {

using ir::OpKind;

const char* role_name(Role r) {
  switch (r) {
    case Role::Other: return "other";
    case Role::Batch: return "batch";
    case Role::Seq: return "seq";
    case Role::Hidden: return "hidden";
    case Role::Heads: return "heads";
    case Role::HeadDim: return "head_dim";
    case Role::Ffn: return "ffn";
    case Role::Vocab: return "vocab";
    case Role::Experts: return "experts";
    case Role::Channels: return "channels";
    case Role::Spatial: return "spatial";
    case Role::Tokens: return "tokens";
  }
  return "other";
}

std::vector<std::string> split_equation(const std::string& eq, std::string& out) {
  auto arrow = eq.find("->");
  out = eq.substr(arrow + 2);
  return ir::split(std::string_view(eq).substr(0, arrow), ',');
}

namespace {

// Dim roles: named dims for messages and for telling data / sequence parallelism from tensor
// parallelism. Propagated in execution order from the inputs.
void assign_roles(Prepared& p) {
  const auto& flow = p.model->dataflow;
  p.roles.reset(flow);
  // Model sizes that name feature dims.
  for (auto& op : flow.ops)
    if (op.kind == OpKind::Embedding && op.inputs.size() > 1) {
      auto& w = flow.tensors[op.inputs[1]].shape;
      if (w.size() == 2) {
        p.vocab_size = std::max(p.vocab_size, w[0]);
        if (!p.hidden_size) p.hidden_size = w[1];
      }
    }
  if (!p.hidden_size) {
    // No token embedding (a ViT's or Whisper's conv front end, a DiT's patches): the stream's width
    // is the one most linear layers read (q, k, v, o and up read it; only down reads the FFN's).
    // Before the inputs: a conditioning input (a DiT's text embeddings, 4096 wide against its
    // 5120) is not the stream.
    std::map<int64_t, int> reads;
    for (auto& op : flow.ops)
      if (op.kind == OpKind::Contract && op.inputs.size() >= 2 && !op.is_convolution()) {
        const auto& w = flow.tensors[op.inputs[1]];
        if (w.parameter >= 0 && w.shape.size() == 2) ++reads[w.shape[1]];
      }
    int most = 0;
    for (auto& [width, n] : reads)
      if (n > most) most = n, p.hidden_size = width;
  }
  // Whether a convolution is the first op to read tensor t ([B, C, L] audio features, not tokens).
  auto read_by_conv = [&](int t) {
    for (const auto& op : flow.ops)
      if (std::find(op.inputs.begin(), op.inputs.end(), t) != op.inputs.end()) return op.is_convolution();
    return false;
  };
  for (int in : flow.inputs) {
    auto& t = flow.tensors[in];
    auto r = p.roles[in];
    if (r.empty()) continue;
    r[0] = Role::Batch;
    bool ids = t.dtype.rfind("int", 0) == 0;
    if (ids && r.size() >= 2) r[1] = Role::Seq;
    else if (r.size() == 3 && (!p.hidden_size || t.shape[2] == p.hidden_size)) { r[1] = Role::Seq; r[2] = Role::Hidden; p.hidden_size = t.shape[2]; }
    else if (r.size() == 3 && !read_by_conv(in)) {
      // Features of another width ([B, S, F]: a DiT's text embeddings for cross-attention).
      r[1] = Role::Seq;
      r[2] = Role::Other;
    } else if (r.size() >= 3) {
      // [B, C, ...spatial] for convs; [B, S, H] for features.
      r[1] = Role::Channels;
      for (size_t i = 2; i < r.size(); ++i) r[i] = Role::Spatial;
    }
  }
  // One token per sequence (decode): a size-1 sequence dim is the whole sequence, so views that
  // merge it with the batch make a tokens dim; elsewhere such a dim is one token picked out
  // (BERT's pooler reads hidden_states[:, 0]), one vector per sample.
  bool& single_token = p.single_token;
  single_token = false;
  for (int in : flow.inputs)
    for (size_t d = 0; d < p.roles[in].size(); ++d)
      single_token |= p.roles[in][d] == Role::Seq && flow.tensors[in].shape[d] == 1;
  auto feature_role = [&](int64_t size) {
    if (size == p.hidden_size) return Role::Hidden;
    if (size == p.vocab_size) return Role::Vocab;
    return Role::Ffn;
  };
  auto aligned = [&](int from, int to) {
    auto a = p.roles[from];
    auto b = p.roles[to];
    for (size_t i = 0; i < b.size() && i < a.size(); ++i) {
      Role r = a[a.size() - 1 - i];
      if (flow.tensors[from].shape[a.size() - 1 - i] == flow.tensors[to].shape[b.size() - 1 - i] && r != Role::Other)
        b[b.size() - 1 - i] = r;
    }
  };
  for (auto& op : flow.ops) {
    if (op.outputs.empty()) continue;
    switch (op.kind) {
      case OpKind::Contract: {
        std::string out;
        std::vector<std::string> ins = split_equation(op.equation, out);
        auto ro = p.roles[op.outputs[0]];
        for (size_t k = 0; k < out.size() && k < ro.size(); ++k) {
          char l = out[k];
          Role r = Role::Other;
          bool from_activation = false;
          for (size_t i = 0; i < ins.size() && i < op.inputs.size(); ++i) {
            if (is_free(flow, op.inputs[i])) continue;
            auto pos = ins[i].find(l);
            if (pos != std::string::npos && pos < p.roles[op.inputs[i]].size()) {
              r = p.roles[op.inputs[i]][pos];
              from_activation = true;
              break;
            }
          }
          if (!from_activation) r = std::isupper(static_cast<unsigned char>(l)) ? Role::Spatial : (out.find('H') != std::string::npos ? Role::Channels : feature_role(flow.tensors[op.outputs[0]].shape[k]));
          ro[k] = r;
        }
        break;
      }
      case OpKind::Embedding: {
        auto ro = p.roles[op.outputs[0]];
        auto ri = p.roles[op.inputs[0]];
        for (size_t i = 0; i < ri.size() && i < ro.size(); ++i) ro[i] = ri[i];
        if (!ri.empty() && ri.size() == 1 && ro.size() == 2) ro[0] = Role::Seq;  // positions
        if (!ro.empty()) ro.back() = Role::Hidden;
        break;
      }
      case OpKind::Reshape: {
        auto& is = flow.tensors[op.inputs[0]].shape;
        auto& os = flow.tensors[op.outputs[0]].shape;
        auto ri = p.roles[op.inputs[0]];
        auto ro = p.roles[op.outputs[0]];
        size_t i = 0, o = 0;
        while (i < is.size() && o < os.size()) {
          if (single_token && is[i] == 1 && os[o] == 1) {
            // Decode's [1, 1, d] viewed as [1, d] is a tokens dim, batch × sequence, as it is in
            // prefill (HF Conv1D's x.view(-1, d)); [1, d] viewed back as [1, 1, d] is batch and
            // sequence again.
            size_t ones_in = 0, ones_out = 0;
            while (i + ones_in < is.size() && is[i + ones_in] == 1) ++ones_in;
            while (o + ones_out < os.size() && os[o + ones_out] == 1) ++ones_out;
            if (ones_out > ones_in && ri[i] == Role::Tokens) {
              ro[o] = Role::Batch;
              ro[o + 1] = Role::Seq;
              o += 2;
              ++i;
              continue;
            }
            if (ones_in > ones_out) {
              const size_t merged = ones_in - ones_out + 1;
              bool batch = false, tokens = false;
              for (size_t k = 0; k < merged; ++k) {
                batch |= ri[i + k] == Role::Batch;
                tokens |= ri[i + k] == Role::Seq || ri[i + k] == Role::Tokens;
              }
              ro[o++] = batch && tokens ? Role::Tokens : ri[i];
              i += merged;
              continue;
            }
          }
          if (is[i] == os[o]) { ro[o] = ri[i]; ++i; ++o; continue; }
          if (is[i] == 1) { ++i; continue; }
          if (os[o] == 1) { ++o; continue; }
          if (is[i] > os[o]) {  // split is[i] into several output dims
            size_t start = o;
            int64_t prod = 1;
            while (o < os.size() && prod < is[i]) prod *= os[o++];
            size_t parts = o - start;
            Role r = ri[i];
            if ((r == Role::Hidden || r == Role::Ffn || r == Role::Other) && parts == 2) { ro[start] = Role::Heads; ro[start + 1] = Role::HeadDim; }
            else if ((r == Role::Hidden || r == Role::Ffn || r == Role::Other) && parts == 3) { ro[start + 1] = Role::Heads; ro[start + 2] = Role::HeadDim; }
            else if (r == Role::Tokens || r == Role::Batch) ro[start] = r;
            else ro[start] = r;
            ++i;
          } else {  // merge several input dims
            size_t start = i;
            int64_t prod = 1;
            while (i < is.size() && prod < os[o]) prod *= is[i++];
            Role r = ri[start];
            if (r == Role::Heads) r = Role::Hidden;
            if (r == Role::Batch && i - start >= 2) r = Role::Tokens;
            ro[o++] = r;
          }
        }
        break;
      }
      case OpKind::Permute: {
        auto ri = p.roles[op.inputs[0]];
        auto ro = p.roles[op.outputs[0]];
        for (size_t k = 0; k < op.dims.size() && k < ro.size(); ++k)
          if (op.dims[k] >= 0 && static_cast<size_t>(op.dims[k]) < ri.size()) ro[k] = ri[op.dims[k]];
        break;
      }
      case OpKind::Attention: {
        auto ri = p.roles[op.inputs[0]];
        auto ro = p.roles[op.outputs[0]];
        for (size_t k = 0; k < ri.size() && k < ro.size(); ++k) ro[k] = ri[k];
        break;
      }
      case OpKind::Split: {
        for (int out : op.outputs) {
          auto ri = p.roles[op.inputs[0]];
          auto ro = p.roles[out];
          if (ro.size() == ri.size()) std::copy(ri.begin(), ri.end(), ro.begin());
          else {
            size_t k = 0;
            for (size_t i = 0; i < ri.size() && k < ro.size(); ++i)
              if (static_cast<int>(i) != op.dims[0]) ro[k++] = ri[i];
          }
        }
        break;
      }
      case OpKind::Reduce: {
        auto ri = p.roles[op.inputs[0]];
        auto ro = p.roles[op.outputs[0]];
        if (ro.size() == ri.size()) {
          std::copy(ri.begin(), ri.end(), ro.begin());
          for (int d : op.dims)
            if (d >= 0 && static_cast<size_t>(d) < ro.size()) ro[d] = Role::Other;
        } else {
          size_t k = 0;
          for (size_t i = 0; i < ri.size() && k < ro.size(); ++i)
            if (std::find(op.dims.begin(), op.dims.end(), static_cast<int>(i)) == op.dims.end()) ro[k++] = ri[i];
        }
        break;
      }
      case OpKind::Gather: {
        auto ro = p.roles[op.outputs[0]];
        auto ri = p.roles[op.inputs[0]];
        if (!ro.empty()) ro[0] = Role::Tokens;
        for (size_t k = 1; k < ro.size() && k < ri.size(); ++k) ro[ro.size() - k] = ri[ri.size() - k];
        // Dims a whole-dim slice passes through before the gathered one (op.sizes: their place in the output).
        if (!op.dims.empty() && static_cast<int>(op.sizes.size()) == op.dims[0])
          for (size_t d = 0; d < op.sizes.size() && d < ri.size(); ++d)
            if (op.sizes[d] >= 0 && static_cast<size_t>(op.sizes[d]) < ro.size()) ro[static_cast<size_t>(op.sizes[d])] = ri[d];
        break;
      }
      case OpKind::Experts:
      case OpKind::Interpolate:
        if (!op.inputs.empty() && p.roles[op.inputs[0]].size() == p.roles[op.outputs[0]].size())
          std::ranges::copy(p.roles[op.inputs[0]], p.roles[op.outputs[0]].begin());
        break;
      case OpKind::Call:
        break;
      default: {
        // Broadcast operands first, so that an operand of the output's own shape names its dims
        // (DiT's norm(x) * (1 + scale[:, None]): the stream's dims, not the conditioning's).
        for (int out : op.outputs)
          for (bool full : {false, true})
            for (int in : op.inputs)
              if (!is_free(flow, in) && (flow.tensors[in].shape == flow.tensors[out].shape) == full) aligned(in, out);
        if (op.kind == OpKind::TopK && !op.outputs.empty())
          for (int out : op.outputs)
            if (op.dims[0] >= 0 && op.dims[0] < static_cast<int>(p.roles[out].size())) p.roles[out][op.dims[0]] = Role::Other;
        break;
      }
    }
  }
  // Call / Experts outputs are produced inside their bodies; nothing to do. Expert bodies' routed
  // tokens: dim 0 is tokens.
  for (auto& op : flow.ops)
    if (op.kind == OpKind::Experts && !op.dims.empty() && op.dims[0] >= 0 && !p.roles[op.dims[0]].empty())
      p.roles[op.dims[0]][0] = Role::Tokens;
}

// The residual stream: the tensors norms read (LayerNorm / RMSNorm ops, or the mean of squares a
// hand-written RMSNorm takes over the hidden dim), the residual adds that carry them from layer to
// layer and the branch outputs added into them, and the normalised outputs the next layer reads.
// Found by shape-preserving elementwise steps only (add, mul, cast, dropout), so nothing inside
// attention or the FFN is on it.
void mark_residual_stream(Prepared& p) {
  const auto& flow = p.model->dataflow;
  auto& on = p.residual_stream;
  on.assign(flow.tensors.size(), 0);
  // Its own producers: on a large model this runs beside the pass of prepare() that fills
  // Prepared::producer.
  std::vector<int> producer(flow.tensors.size(), -1);
  for (size_t i = 0; i < flow.ops.size(); ++i)
    if (flow.ops[i].kind != OpKind::Call && flow.ops[i].kind != OpKind::Experts)
      for (int t : flow.ops[i].outputs) producer[static_cast<size_t>(t)] = static_cast<int>(i);
  auto same_shape = [&](int a, int b) { return flow.tensors[a].shape == flow.tensors[b].shape; };
  auto hidden_last = [&](int t) {
    auto r = p.roles[static_cast<size_t>(t)];
    return !r.empty() && stream_feature(r.back());
  };
  auto activation = [&](int t) { return !is_free(flow, t) && hidden_last(t); };
  // A projection's output (through casts): a norm over it is a q/k norm (Wan, Qwen3, OLMo) or an
  // MLA low-rank norm, not a norm of the stream; the stream's norms read a residual sum or an
  // embedding (a first block fed by a patch embedding is reached back from its residual add).
  auto projected = [&](int t) {
    for (int hops = 0; hops < 4; ++hops) {
      const int pr = producer[static_cast<size_t>(t)];
      if (pr < 0) return false;
      const auto& op = flow.ops[static_cast<size_t>(pr)];
      if (op.kind == OpKind::Contract)
        return op.inputs.size() >= 2 && flow.tensors[static_cast<size_t>(op.inputs[1])].parameter >= 0;
      if ((op.kind != OpKind::Unary && op.kind != OpKind::Scale) || op.inputs.empty() || !same_shape(op.inputs[0], t)) return false;
      t = op.inputs[0];
    }
    return false;
  };
  bool any = false;
  for (const auto& op : flow.ops) {
    if (op.inputs.empty() || op.outputs.empty()) continue;
    int seed = -1;
    if (op.kind == OpKind::Norm) seed = op.inputs[0];
    else if (op.kind == OpKind::Reduce && op.dims.size() == 1 && hidden_last(op.inputs[0]) &&
             (op.dims[0] == -1 || op.dims[0] == static_cast<int>(flow.tensors[op.inputs[0]].shape.size()) - 1)) {
      // x.float().pow(2).mean(-1): back through the elementwise steps to x.
      // Those steps are the stream too: split, they would need the statistics' all-reduce.
      seed = op.inputs[0];
      for (int hops = 0; hops < 4; ++hops) {
        const int pr = producer[static_cast<size_t>(seed)];
        if (pr < 0) break;
        const auto& prev = flow.ops[static_cast<size_t>(pr)];
        if ((prev.kind != OpKind::Unary && prev.kind != OpKind::Scale) || prev.inputs.empty() || !same_shape(prev.inputs[0], seed)) break;
        if (activation(seed)) on[static_cast<size_t>(seed)] = 1;
        seed = prev.inputs[0];
      }
    }
    if (seed >= 0 && activation(seed) && !projected(seed)) on[static_cast<size_t>(seed)] = any = true;
  }
  if (!any) return;
  auto elementwise = [](OpKind k) { return k == OpKind::Add || k == OpKind::Mul || k == OpKind::Scale; };
  // The same stream: equal shapes through elementwise steps; through a reshape, the tokens
  // flattened or unflattened with the features kept last (HF Conv1D's x.view(-1, hidden)).
  auto carries = [&](const ir::Op& op, int in, int out) {
    if (op.kind == OpKind::Reshape) {
      const auto& a = flow.tensors[in].shape;
      const auto& b = flow.tensors[out].shape;
      return !a.empty() && !b.empty() && a.back() == b.back();
    }
    return (elementwise(op.kind) || op.kind == OpKind::Norm) && same_shape(in, out);
  };
  for (int round = 0; round < 2; ++round) {
    // Back from a stream tensor to the operands of the adds, scalings and reshapes that made it.
    for (size_t i = flow.ops.size(); i-- > 0;) {
      const auto& op = flow.ops[i];
      if (op.kind == OpKind::Norm || op.outputs.empty() || !on[static_cast<size_t>(op.outputs[0])]) continue;
      for (int t : op.inputs)
        if (activation(t) && carries(op, t, op.outputs[0])) on[static_cast<size_t>(t)] = 1;
    }
    // Forward to what the stream flows into (the next residual, the normalised output).
    for (const auto& op : flow.ops) {
      if (op.outputs.empty() || !activation(op.outputs[0])) continue;
      for (int t : op.inputs)
        if (on[static_cast<size_t>(t)] && carries(op, t, op.outputs[0])) on[static_cast<size_t>(op.outputs[0])] = 1;
    }
  }
}

}  // namespace

// Below this, a second thread costs more than it saves.
constexpr size_t kPrepareOnTwoThreadsOps = 1000;

std::shared_ptr<Prepared> prepare(const ir::ModelIR& model, bool second_thread, std::shared_ptr<Prepared> recycled) {
  auto p = recycled && recycled.use_count() == 1 ? std::move(recycled) : std::make_shared<Prepared>();
  p->model = &model;
  if (!p->patterns) p->patterns = std::make_unique<ModulePatterns>();
  p->hidden_size = p->vocab_size = 0;
  // Bodies keep their vectors' buffers from the last preparation; every other member is assigned whole below.
  std::vector<Prepared::Body> spare = std::move(p->bodies);
  p->bodies.clear();
  auto new_body = [&spare](int op) {
    Prepared::Body b;
    if (!spare.empty()) {
      b = std::move(spare.back());
      spare.pop_back();
      b.clear();
    }
    b.op = op;
    return b;
  };
  const auto& flow = model.dataflow;
  // Dim roles, and each tensor's content (shape, dtype, kind, roles) hashed once for the
  // signatures, need only the dataflow: for a large model another thread works them out while this
  // one finds bodies and liveness (the two write different members).
  std::vector<uint64_t> content(flow.tensors.size());
  auto roles_and_content = [&] {
    assign_roles(*p);
    mark_residual_stream(*p);
    for (size_t t = 0; t < flow.tensors.size(); ++t) {
      const auto& info = flow.tensors[t];
      uint64_t h = 0x9e37;
      for (auto d : info.shape) h = mix64(h, static_cast<uint64_t>(d));
      h = mix64(h, std::hash<std::string>()(info.dtype));
      h = mix64(h, (info.parameter >= 0 ? 1u : 0u) | (info.buffer >= 0 ? 2u : 0u) | (info.data_dependent ? 4u : 0u));
      for (auto r : p->roles[t]) h = mix64(h, static_cast<uint64_t>(r));
      h = mix64(h, static_cast<uint64_t>(p->residual_stream[t]));
      content[t] = h;
    }
  };
  std::future<void> side;  // after what it writes: unwinding waits for it first
  if (second_thread && flow.ops.size() >= kPrepareOnTwoThreadsOps) side = std::async(std::launch::async, roles_and_content);
  else roles_and_content();
  // Per tensor: elements, fixed element bytes, and whether it is stored (a parameter or buffer).
  p->numel.resize(flow.tensors.size());
  p->fixed_element_bytes.resize(flow.tensors.size());
  auto& stored = p->stored;
  stored.resize(flow.tensors.size());
  auto& use_index = p->tensor_use_index;  // the tensor's parameter for now; its position in used_parameters below
  use_index.resize(flow.tensors.size());
  for (size_t t = 0; t < flow.tensors.size(); ++t) {
    const auto& info = flow.tensors[t];
    p->numel[t] = static_cast<double>(info.numel());
    p->fixed_element_bytes[t] = info.dtype.rfind("int", 0) == 0 ? (info.dtype == "int64" ? 8 : 4) : info.dtype == "bool" ? 1 : 0;
    stored[t] = is_free(flow, static_cast<int>(t));
    use_index[t] = info.parameter;
  }
  // One pass over the ops (they are large and scattered; each pass costs a cache miss per op):
  // bodies (the root and one per Call / Experts), each op's body, producers, consumer counts,
  // where stored tensors are used and where tensors are produced.
  p->body_of_op.assign(flow.ops.size(), -1);
  std::vector<int> parent(flow.ops.size(), 0);  // body index containing each op
  std::vector<int> depth{0}, body_parent{-1};    // per body
  auto lca = [&](int a, int b) {
    if (a < 0) return b;
    while (depth[a] > depth[b]) a = body_parent[a];
    while (depth[b] > depth[a]) b = body_parent[b];
    while (a != b) { a = body_parent[a]; b = body_parent[b]; }
    return a;
  };
  p->producer.assign(flow.tensors.size(), -1);
  p->consumer_start.assign(flow.tensors.size() + 1, 0);
  std::vector<int> tensor_home(flow.tensors.size(), -1);  // for stored tensors: the lca of their uses' bodies
  // Tensors produced by an op inside a body b are produced "in" b; a Call's outputs are produced
  // inside its body too but appear in the parent: the parent sees them as the Call's outputs (the
  // innermost Call's, when calls nest).
  std::vector<int> produced_in(flow.tensors.size(), -1);
  p->bodies.push_back(new_body(-1));
  std::vector<std::pair<int, int>> stack;  // (end, body)
  stack.push_back({static_cast<int>(flow.ops.size()), 0});
  std::vector<std::pair<int, int>> reads;  // (tensor, op) per input, in op order: the consumers without a second pass over the ops
  reads.reserve(flow.ops.size() * 2);
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    while (stack.size() > 1 && static_cast<int>(i) >= stack.back().first) stack.pop_back();
    int body = stack.back().second;
    parent[i] = body;
    p->bodies[body].items.push_back(static_cast<int>(i));
    const auto& op = flow.ops[i];
    const bool call = op.kind == OpKind::Call || op.kind == OpKind::Experts;
    for (int t : op.inputs) {
      ++p->consumer_start[t + 1];
      reads.emplace_back(t, static_cast<int>(i));
      if (stored[t]) tensor_home[t] = lca(tensor_home[t], body);
    }
    for (int t : op.outputs) {
      if (!call) p->producer[t] = static_cast<int>(i);
      if (call || produced_in[t] < 0) produced_in[t] = body;
    }
    if (call && op.end > static_cast<int>(i)) {
      Prepared::Body b = new_body(static_cast<int>(i));
      b.outputs = op.outputs;
      if (op.kind == OpKind::Experts) {
        // The body's result is the expert's output; the Experts op's own output is the combine.
        b.outputs.clear();
        for (int k = static_cast<int>(i) + 1; k < op.end; ++k)
          if (flow.ops[k].kind == OpKind::Call && flow.ops[k].end == op.end) b.outputs = flow.ops[k].outputs;
        if (b.outputs.empty() && op.end > static_cast<int>(i) + 1) b.outputs = flow.ops[op.end - 1].outputs;
      }
      p->body_of_op[i] = static_cast<int>(p->bodies.size());
      p->bodies.push_back(std::move(b));
      body_parent.push_back(body);
      depth.push_back(depth[body] + 1);
      stack.push_back({op.end, p->body_of_op[i]});
    }
  }
  p->bodies[0].outputs = flow.outputs;
  for (size_t t = 0; t < flow.tensors.size(); ++t) p->consumer_start[t + 1] += p->consumer_start[t];
  p->consumer_ops.resize(static_cast<size_t>(p->consumer_start.back()));
  {
    std::vector<int> fill(p->consumer_start.begin(), p->consumer_start.end() - 1);
    for (const auto& [t, i] : reads) p->consumer_ops[static_cast<size_t>(fill[t]++)] = i;
  }
  p->param_owner_body.assign(model.parameters.size(), 0);
  p->param_use_index.assign(model.parameters.size(), -1);
  p->used_parameters.clear();
  for (size_t t = 0; t < flow.tensors.size(); ++t)
    if (int param = use_index[t]; param >= 0) {
      if (tensor_home[t] >= 0) p->param_owner_body[param] = tensor_home[t];
      if (p->param_use_index[param] < 0) {
        p->param_use_index[param] = 0;
        p->used_parameters.push_back(param);
      }
    }
  std::sort(p->used_parameters.begin(), p->used_parameters.end());
  for (size_t k = 0; k < p->used_parameters.size(); ++k) p->param_use_index[p->used_parameters[k]] = static_cast<int>(k);
  for (int& k : use_index)
    if (k >= 0) k = p->param_use_index[static_cast<size_t>(k)];
  // Ext tensors and liveness per body.
  // (tensor, position) per use; the last use of a tensor is its largest position.
  std::vector<std::vector<std::pair<int, int>>> last_use(p->bodies.size());
  std::vector<int> listed_ext_of(flow.tensors.size(), -1);  // per tensor: the body whose ext lists it last
  for (size_t b = 0; b < p->bodies.size(); ++b) {
    auto& body = p->bodies[b];
    auto list_ext = [&](int t) {
      if (listed_ext_of[t] == static_cast<int>(b)) return;
      listed_ext_of[t] = static_cast<int>(b);
      body.ext.push_back(t);
    };
    auto is_inside = [&](int t) {
      // produced by an op of this body or of a body nested in it
      int pb = produced_in[t];
      while (pb >= 0) {
        if (pb == static_cast<int>(b)) return true;
        pb = body_parent[pb];
      }
      return false;
    };
    auto note_use = [&](int t, int pos) {
      last_use[b].emplace_back(t, pos);
      bool free_here = stored[t] && tensor_home[t] >= 0 && depth[tensor_home[t]] >= depth[b] &&
                       lca(tensor_home[t], static_cast<int>(b)) == static_cast<int>(b) && tensor_home[t] == static_cast<int>(b);
      bool free_below = stored[t] && !free_here;
      if (free_here) return;
      if (free_below) {
        // a parameter owned by an outer body: the outer body decides its spec
        list_ext(t);
        return;
      }
      if (!is_inside(t)) list_ext(t);
    };
    for (size_t pos = 0; pos < body.items.size(); ++pos) {
      int i = body.items[pos];
      const auto& op = flow.ops[i];
      if (op.kind == OpKind::Call || op.kind == OpKind::Experts) {
        int nb = p->body_of_op[i];
        // A call uses what its body reads (its ext, added below): an argument it never reads (HF's
        // position_ids and cache_position handed to every layer beside the rotary tables) does not
        // stay alive for it, so its layouts do not multiply the states around the call. The
        // routed-experts op reads its tokens and routing weights itself.
        if (nb >= 0 && op.kind == OpKind::Experts)
          for (int t : op.inputs) note_use(t, static_cast<int>(pos));
      } else {
        for (int t : op.inputs) note_use(t, static_cast<int>(pos));
      }
    }
    for (int t : body.outputs) last_use[b].emplace_back(t, static_cast<int>(body.items.size()));
  }
  // Nested bodies' ext tensors count as uses at the Call's position in the parent (params owned
  // above, activations captured from outside). Children come after parents in `bodies`, so walk
  // from the innermost outwards.
  for (size_t b = p->bodies.size(); b-- > 1;) {
    auto& body = p->bodies[b];
    int par = body_parent[b];
    auto& pbody = p->bodies[par];
    int pos = static_cast<int>(std::find(pbody.items.begin(), pbody.items.end(), body.op) - pbody.items.begin());
    for (int t : body.ext) {
      last_use[par].emplace_back(t, pos);
      bool inside_parent = produced_in[t] >= 0 && [&] {
        int pb = produced_in[t];
        while (pb >= 0) {
          if (pb == par) return true;
          pb = body_parent[pb];
        }
        return false;
      }();
      bool owned_by_parent = stored[t] && tensor_home[t] == par;
      if (!inside_parent && !owned_by_parent && std::find(pbody.ext.begin(), pbody.ext.end(), t) == pbody.ext.end())
        pbody.ext.push_back(t);
    }
  }
  std::vector<int> cursor;
  for (size_t b = 0; b < p->bodies.size(); ++b) {
    auto& body = p->bodies[b];
    auto& uses = last_use[b];
    std::sort(uses.begin(), uses.end());
    for (size_t k = 0; k < uses.size(); ++k)
      if (k + 1 == uses.size() || uses[k + 1].first != uses[k].first) body.last_use.push_back(uses[k]);
    // Bucketed by position in tensor order (last_use is sorted), so each position's list is sorted.
    auto& start = body.dies_start;
    start.assign(body.items.size() + 2, 0);
    for (auto& [t, pos] : body.last_use) ++start[static_cast<size_t>(pos) + 1];
    for (size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
    body.dies.resize(body.last_use.size());
    cursor.assign(start.begin(), start.end() - 1);
    for (auto& [t, pos] : body.last_use) body.dies[static_cast<size_t>(cursor[static_cast<size_t>(pos)]++)] = t;
  }
  // The Experts op's body reads its routed tokens (a fresh tensor) and the expert's parameters.
  // Signatures: content of each body with tensors renumbered by first appearance.
  if (side.valid()) side.get();
  // Local numbering by first appearance, without a map per body: a stamp says which body numbered it.
  std::vector<int> stamp(flow.tensors.size(), -1), local_id(flow.tensors.size(), 0);
  for (size_t b = p->bodies.size(); b-- > 0;) {
    auto& body = p->bodies[b];
    int next_id = 0;
    auto canon = [&](int t) -> uint64_t {
      if (stamp[t] != static_cast<int>(b)) {
        stamp[t] = static_cast<int>(b);
        local_id[t] = next_id++;
      }
      uint64_t h = mix64(static_cast<uint64_t>(local_id[t]) * 131u, content[t]);
      const int use = use_index[static_cast<size_t>(t)];
      if (use >= 0 && p->param_owner_body[static_cast<size_t>(p->used_parameters[static_cast<size_t>(use)])] != static_cast<int>(b)) h = mix64(h, 99);
      return h;
    };
    uint64_t h = 0x12345;
    for (int t : body.ext) h = mix64(h, canon(t));
    for (int i : body.items) {
      const auto& op = flow.ops[i];
      h = mix64(h, static_cast<uint64_t>(op.kind));
      h = mix64(h, std::hash<std::string>()(op.name));
      h = mix64(h, std::hash<std::string>()(op.equation));
      if (op.kind == OpKind::Experts) {
        for (int d : op.dims) h = mix64(h, canon(d));  // dims[0] is the routed tokens' tensor
      } else {
        for (int d : op.dims) h = mix64(h, static_cast<uint64_t>(d));
      }
      for (auto s : op.sizes) h = mix64(h, static_cast<uint64_t>(s));
      h = mix64(h, static_cast<uint64_t>(op.groups) * 3 + op.linear);
      for (int t : op.inputs) {
        h = mix64(h, canon(t));
        if (const int use = use_index[static_cast<size_t>(t)]; use >= 0) body.parameters.push_back(p->used_parameters[static_cast<size_t>(use)]);
      }
      for (int t : op.outputs) h = mix64(h, canon(t));
      h = mix64(h, static_cast<uint64_t>(op.module >= 0 ? 0 : 1));
      if (op.module >= 0) body.modules.push_back(op.module);
      if (const int nb = p->body_of_op[i]; nb >= 0) {
        const auto& nested = p->bodies[nb];  // done: nested bodies come after their parent
        h = mix64(h, nested.signature);
        body.parameters.insert(body.parameters.end(), nested.parameters.begin(), nested.parameters.end());
        body.modules.insert(body.modules.end(), nested.modules.begin(), nested.modules.end());
      }
    }
    for (int t : body.outputs) h = mix64(h, canon(t));
    body.signature = h;
    // Parameters and modules inside the body (pins name them, so pinned plans key bodies by them).
    for (auto* v : {&body.parameters, &body.modules}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
  }
  {
    std::unordered_map<uint64_t, int> with_signature;
    for (const auto& body : p->bodies) ++with_signature[body.signature];
    for (auto& body : p->bodies) body.same_signature = with_signature[body.signature];
  }
  // Op signatures: the body's content and the op's position in it.
  p->op_signature.assign(flow.ops.size(), 0);
  for (auto& body : p->bodies)
    for (size_t pos = 0; pos < body.items.size(); ++pos)
      p->op_signature[body.items[pos]] = mix64(body.signature, pos * 2654435761u + 17);
  // Segments: a last dim later split into k equal parts (directly, after elementwise ops, or by a
  // reshape that makes k its own dim) holds k segments: q, k and v of a fused projection.
  p->segments.assign(flow.tensors.size(), {});
  std::function<void(int, int, std::vector<int>&, int)> find_splits = [&](int t, int dim, std::vector<int>& ks, int depth) {
    if (depth > 4) return;
    for (int consumer : p->consumers(t)) {
      const ir::Op& other = flow.ops[consumer];
      if (other.kind == OpKind::Split && !other.dims.empty() && other.dims[0] == dim && other.sizes.size() >= 2) {
        bool equal = std::all_of(other.sizes.begin(), other.sizes.end(), [&](int64_t v) { return v == other.sizes[0]; });
        if (equal) ks.push_back(static_cast<int>(other.sizes.size()));
      }
      if (other.kind == OpKind::Reshape && !other.outputs.empty()) {
        auto& is = flow.tensors[t].shape;
        auto& os = flow.tensors[other.outputs[0]].shape;
        if (os.size() > is.size() && static_cast<size_t>(dim) < os.size() && os[dim] >= 2 && os[dim] <= 4 &&
            is[dim] % os[dim] == 0 && is[dim] != os[dim])
          ks.push_back(static_cast<int>(os[dim]));
      }
      if ((other.kind == OpKind::Scale || other.kind == OpKind::Unary || other.kind == OpKind::Add) && !other.outputs.empty() &&
          flow.tensors[other.outputs[0]].shape == flow.tensors[t].shape)
        find_splits(other.outputs[0], dim, ks, depth + 1);
      // A reshape that keeps the last dim ([B*T, 3C] -> [B, T, 3C], as HF's Conv1D does).
      if (other.kind == OpKind::Reshape && !other.outputs.empty() && !flow.tensors[other.outputs[0]].shape.empty() &&
          static_cast<size_t>(dim) + 1 == flow.tensors[t].shape.size() &&
          flow.tensors[other.outputs[0]].shape.back() == flow.tensors[t].shape.back())
        find_splits(other.outputs[0], static_cast<int>(flow.tensors[other.outputs[0]].shape.size()) - 1, ks, depth + 1);
    }
  };
  for (size_t i = 0; i < flow.ops.size(); ++i) {
    const auto& op = flow.ops[i];
    if (op.kind != OpKind::Contract || op.outputs.empty()) continue;
    int t = op.outputs[0];
    int last = static_cast<int>(flow.tensors[t].shape.size()) - 1;
    if (last < 0) continue;
    auto& ks = p->segments[t];
    find_splits(t, last, ks, 0);
    std::sort(ks.begin(), ks.end());
    ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  }
  return p;
}

}  // namespace shardlens::plan::detail
