// Op rules: which input specs each op accepts on one mesh axis, the output specs it yields, and
// what moving a tensor between specs costs (SHARDING.md §3):
//   sharded -> replicated = all-gather; partial -> replicated = all-reduce; partial -> sharded =
//   reduce-scatter; sharded on one dim -> sharded on another = all-to-all; replicated -> sharded =
//   a local slice, free.
// Megatron column/row pairs, head-sharded attention, vocab-parallel embeddings, sequence and data
// parallelism are not written down anywhere here: they are what the search finds among these rules.
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

uint64_t Context::hash() const {
  uint64_t h = static_cast<uint64_t>(n) * 1000003u + static_cast<uint64_t>(topology);
  auto mix = [&](uint64_t v) { h = mix64(h, v); };
  mix(std::hash<std::string>()(hw ? hw->name : ""));
  mix(hw ? hw->fingerprint : 0);
  mix(static_cast<uint64_t>(workload.batch));
  mix(static_cast<uint64_t>(workload.seq));
  mix(static_cast<uint64_t>(workload.phase));
  mix(std::hash<std::string>()(workload.dtype));
  mix(std::hash<double>()(activation_scale));
  mix(filter.hash());
  mix(std::hash<double>()(memory_lambda));
  mix(std::hash<double>()(ccl_penalty_us));
  mix(unpinned_replicated);
  mix(static_cast<uint64_t>(rows) * 7 + static_cast<uint64_t>(row_topology));
  mix(preferred_hash);
  mix(std::hash<double>()(preference_us));
  mix(std::hash<double>()(replication_us));
  mix(tensor_required_hash);
  std::vector<std::pair<int, uint32_t>> pins;
  for (auto& [k, v] : pinned_params) pins.emplace_back(k, v.code());
  for (auto& [k, v] : pinned_outputs) pins.emplace_back(-1 - k, v.code());
  std::sort(pins.begin(), pins.end());
  for (auto& [k, v] : pins) mix(static_cast<uint64_t>(k) * 7919u + v);
  return h;
}

namespace {

// "bsi,oi->bso" -> {"bsi", "oi"}, with `out` = "bso".
std::vector<std::string> split_equation(const std::string& eq, std::string& out) {
  auto arrow = eq.find("->");
  out = eq.substr(arrow + 2);
  return ir::split(std::string_view(eq).substr(0, arrow), ',');
}


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
        if (nb >= 0) {
          // Ext of the nested body that are visible here; computed below in order, so compute lazily.
          for (int t : op.inputs) note_use(t, static_cast<int>(pos));
        }
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

double tensor_bytes(const Prepared& prep, int t, const Context& ctx) {
  double elem = prep.fixed_element_bytes[t] ? prep.fixed_element_bytes[t] : ctx.workload.dtype_bytes();
  double b = prep.numel[t] * elem;
  if (!prep.stored[t]) b *= ctx.activation_scale;
  return b;
}

// tt-mlir lowers a generic all-to-all into many point-to-point transfers: "expect it far slower
// than the fitted figure" (SHARDING.md §4). Until it is measured, the planner charges all-to-all
// this many times its fitted kernel time; reported times use the same figure, so the choice shows.
constexpr double kAllToAllLoweringFactor = 4.0;

double collective_us(const Context& ctx, Ccl kind, double bytes) {
  if (kind == Ccl::AllToAll) {
    double t = 0;
    if (ctx.rows <= 1) t = ccl_time_us(*ctx.hw, kind, ctx.n, ctx.topology, bytes);
    else t = ccl_time_us(*ctx.hw, kind, ctx.n / ctx.rows, ctx.topology, bytes) + ccl_time_us(*ctx.hw, kind, ctx.rows, ctx.row_topology, bytes);
    return t * kAllToAllLoweringFactor;
  }
  if (ctx.rows <= 1) return ccl_time_us(*ctx.hw, kind, ctx.n, ctx.topology, bytes);
  int cols = ctx.n / ctx.rows;
  // Columns first, then rows. All-gather: gather T/rows along the columns, then T along the rows;
  // reduce-scatter mirrors it; all-reduce and all-to-all handle the whole tensor on both axes.
  switch (kind) {
    case Ccl::AllGather:
      return ccl_time_us(*ctx.hw, kind, cols, ctx.topology, bytes / ctx.rows) + ccl_time_us(*ctx.hw, kind, ctx.rows, ctx.row_topology, bytes);
    case Ccl::ReduceScatter:
      return ccl_time_us(*ctx.hw, kind, ctx.rows, ctx.row_topology, bytes) + ccl_time_us(*ctx.hw, kind, cols, ctx.topology, bytes / ctx.rows);
    default:
      return ccl_time_us(*ctx.hw, kind, cols, ctx.topology, bytes) + ccl_time_us(*ctx.hw, kind, ctx.rows, ctx.row_topology, bytes);
  }
}

// Gathering a channel-sharded image activation hangs in today's compiler (tt-mlir #8462, VAE
// all_gather; SHARDING.md §6): such plans are kept only when nothing else exists.
constexpr double kKnownHangPenaltyUs = 1e9;

double transition_us(const Prepared& prep, int t, Spec from, Spec to, const Context& ctx, int* ccl, double* bytes) {
  *ccl = -1;
  *bytes = 0;
  if (from == to) return 0;
  if (from.kind == kReplicated) return 0;  // local slice, or keep one copy as a partial sum
  double b = tensor_bytes(prep, t, ctx);
  Ccl kind;
  if (from.kind == kPartial) kind = to.kind == kReplicated ? Ccl::AllReduce : Ccl::ReduceScatter;
  else if (to.kind == kReplicated || to.kind == kPartial) kind = Ccl::AllGather;
  else kind = Ccl::AllToAll;
  if (to.kind == kPartial && from.sharded()) {
    // sharded -> partial: zero-fill the rest locally; no collective needed
    return 0;
  }
  *ccl = static_cast<int>(kind);
  *bytes = b;
  double limit = 0;
  if ((kind == Ccl::AllGather || kind == Ccl::AllToAll) && from.sharded() && from.dim >= 0 &&
      static_cast<size_t>(from.dim) < prep.roles[t].size() && prep.roles[t][from.dim] == Role::Channels &&
      prep.roles[t].size() >= 4)
    limit = kKnownHangPenaltyUs;
  return collective_us(ctx, kind, b) + ctx.ccl_penalty_us + limit;
}

namespace {

// Norms and softmax: max / mean, variance (or sum of exps), normalise, scale, shift: about five
// elementwise operations per element; memory traffic dominates them anyway.
constexpr double kNormFlopsPerElement = 5;
// Statistics exchanged per normalised row when its dim is sharded: a mean and a variance (or a
// max and a sum) in fp32, as tt-xla's sharded norms reduce them (tt-xla skill video_vae.md).
constexpr double kStatisticsBytesPerRow = 2 * 4;

double roofline_us(const Context& ctx, double flops, double bytes) {
  double t_compute = flops / (ctx.hw->flops_per_s * ctx.hw->compute_efficiency) * 1e6;
  double t_memory = bytes / (ctx.hw->dram_bytes_per_s * ctx.hw->dram_efficiency) * 1e6;
  return std::max(t_compute, t_memory);
}

// Per-device time of an op under given specs: sharded tensors are 1/n per device, replicated and
// partial ones whole; the work divides when the strategy splits it.
double op_time(const Prepared& prep, const ir::Op& op, const std::vector<Spec>& in, const std::vector<Spec>& out,
               double flops, bool split, const Context& ctx, double extra_bytes = 0) {
  double bytes = extra_bytes;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    // A lookup reads the rows it returns, not its whole table.
    if (op.kind == OpKind::Embedding && prep.model->dataflow.tensors[op.inputs[i]].parameter >= 0) continue;
    double b = tensor_bytes(prep, op.inputs[i], ctx);
    bytes += i < in.size() && in[i].sharded() ? b / ctx.n : b;
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    double b = tensor_bytes(prep, op.outputs[i], ctx);
    bytes += i < out.size() && out[i].sharded() ? b / ctx.n : b;
  }
  double f = flops * (prep.model->dataflow.tensors[op.outputs.empty() ? op.inputs[0] : op.outputs[0]].parameter >= 0 ? 1.0 : ctx.activation_scale);
  return roofline_us(ctx, split ? f / ctx.n : f, bytes);
}

// Whether a dim can be sharded evenly. Spatial dims of image activations never are: convs would
// need halo exchanges, which tt-mlir cannot lower (tt-mlir #8216; SHARDING.md §6).
bool divisible(const Prepared& prep, int t, int dim, const Context& ctx) {
  const auto& s = prep.model->dataflow.tensors[t].shape;
  if (dim < 0 || static_cast<size_t>(dim) >= s.size()) return false;
  if (static_cast<size_t>(dim) < prep.roles[t].size() && prep.roles[t][dim] == Role::Spatial) return false;
  return s[dim] % ctx.n == 0 && s[dim] >= ctx.n;
}

uint16_t tag_for(const Prepared& prep, const ir::Op& op, const std::vector<Spec>& in, const std::vector<Spec>& out) {
  const auto& flow = prep.model->dataflow;
  auto stream_features = [&](int t, Spec s) {
    if (!s.sharded() || !prep.residual_stream[static_cast<size_t>(t)]) return false;
    auto r = prep.roles[static_cast<size_t>(t)];
    return s.dim >= 0 && static_cast<size_t>(s.dim) < r.size() && stream_feature(r[s.dim]);
  };
  for (size_t i = 0; i < op.inputs.size() && i < in.size(); ++i)
    if (stream_features(op.inputs[i], in[i])) return kTagStreamFeatures;
  // A lookup in a table split on its hidden dim (Llama 2's embedding) is tensor parallel: what
  // reads its output decides whether the stream stays split.
  if (op.kind != OpKind::Embedding)
    for (size_t i = 0; i < op.outputs.size() && i < out.size(); ++i)
      if (stream_features(op.outputs[i], out[i])) return kTagStreamFeatures;
  bool any = false;
  for (size_t i = 0; i < op.inputs.size() && i < in.size(); ++i) {
    if (in[i].kind == kReplicated) continue;
    any = true;
    if (flow.tensors[op.inputs[i]].parameter >= 0 && in[i].sharded()) return kTagTensor;
  }
  for (size_t i = 0; i < op.outputs.size() && i < out.size(); ++i)
    if (out[i].kind != kReplicated) any = true;
  if (!any) return kTagReplicated;
  // Activation sharding: by the role of the sharded dim.
  auto role_of = [&](int t, Spec s) -> Role {
    if (!s.sharded()) return Role::Other;
    auto r = prep.roles[t];
    return s.dim >= 0 && static_cast<size_t>(s.dim) < r.size() ? r[s.dim] : Role::Other;
  };
  for (size_t i = 0; i < op.outputs.size() && i < out.size(); ++i) {
    Role r = role_of(op.outputs[i], out[i]);
    if (r == Role::Batch) return kTagBatch;
    if (r == Role::Seq || r == Role::Tokens) return kTagSequence;
  }
  for (size_t i = 0; i < op.inputs.size() && i < in.size(); ++i) {
    Role r = role_of(op.inputs[i], in[i]);
    if (r == Role::Batch) return kTagBatch;
    if (r == Role::Seq || r == Role::Tokens) return kTagSequence;
  }
  return kTagTensor;
}

// For a reshape: which output dim an input dim's sharding lands on (-1: it cannot stay sharded).
// Splits keep the shard on the first (outermost) sub-dim when it divides; merges keep it when the
// sharded dim is the outermost of the merged group.
int reshape_target(std::span<const int64_t> is, std::span<const int64_t> os, int d, int n, int segments,
                   int* out_segments) {
  *out_segments = 0;
  size_t i = 0, o = 0;
  while (i < is.size() || o < os.size()) {
    if (i < is.size() && o < os.size() && is[i] == os[o]) {
      if (static_cast<int>(i) == d) {
        if (segments) *out_segments = segments;
        return static_cast<int>(o);
      }
      ++i;
      ++o;
      continue;
    }
    if (i < is.size() && is[i] == 1) { if (static_cast<int>(i) == d) return -1; ++i; continue; }
    if (o < os.size() && os[o] == 1) { ++o; continue; }
    if (i >= is.size() || o >= os.size()) return -1;
    if (is[i] > os[o]) {
      size_t start = o;
      int64_t prod = 1;
      while (o < os.size() && prod < is[i]) prod *= os[o++];
      if (prod != is[i]) return -1;
      if (static_cast<int>(i) == d) {
        size_t target = start;
        if (segments) {
          // [.., k*m] as segments of m: a leading sub-dim of size k separates them; the shard
          // then lands on the next sub-dim.
          if (os[start] != segments || o - start < 2) return -1;
          target = start + 1;
        }
        while (target < o && os[target] == 1) ++target;
        return target < o && os[target] % n == 0 ? static_cast<int>(target) : -1;
      }
      ++i;
    } else {
      size_t start = i;
      int64_t prod = 1;
      while (i < is.size() && prod < os[o]) prod *= is[i++];
      if (prod != os[o]) return -1;
      size_t first = start;
      while (first < i && is[first] == 1) ++first;
      if (d >= static_cast<int>(start) && d < static_cast<int>(i)) {
        if (segments) return -1;
        return static_cast<int>(first) == d ? static_cast<int>(o) : -1;
      }
      ++o;
    }
  }
  return -1;
}

}  // namespace

std::vector<Strat> strategies(const Prepared& prep, int index, const Context& ctx) {
  const auto& flow = prep.model->dataflow;
  const ir::Op& op = flow.ops[index];
  std::vector<Strat> out;
  const int n = ctx.n;
  const size_t nin = op.inputs.size(), nout = op.outputs.size();
  auto rank = [&](int t) { return static_cast<int>(flow.tensors[t].shape.size()); };
  auto numel = [&](int t) { return static_cast<double>(flow.tensors[t].numel()); };
  double elem_flops = nout ? numel(op.outputs[0]) : 0;
  auto add = [&](std::vector<Spec> in, std::vector<Spec> o, double flops, bool split, std::string label,
                 int extra_count = 0, double extra_bytes = 0) {
    Strat s;
    s.in = std::move(in);
    s.out = std::move(o);
    s.flops = flops;
    s.split = split;
    s.label = std::move(label);
    s.extra_count = extra_count;
    s.extra_bytes = extra_bytes;
    double weight_bytes = 0;
    s.compute_us = op_time(prep, op, s.in, s.out, flops, split, ctx, weight_bytes);
    s.tag = tag_for(prep, op, s.in, s.out);
    out.push_back(std::move(s));
  };
  auto all = [](size_t k, Spec s) { return std::vector<Spec>(k, s); };
  bool shardable_activation = true;
  if (op.kind == OpKind::Unknown || !flow.tensors.empty()) {
    for (int t : op.outputs)
      if (!flow.tensors[t].shape_known) shardable_activation = false;
    for (int t : op.inputs)
      if (!flow.tensors[t].shape_known) shardable_activation = false;
  }
  if (!shardable_activation || op.kind == OpKind::Unknown) {
    add(all(nin, Spec::R()), all(nout, Spec::R()), elem_flops, false, "replicated (not analysable)");
    return out;
  }
  // Elementwise-style ops: every tensor aligned to the output from the right.
  auto aligned_dim = [&](int t, int out_dim, int out_rank) -> int {
    int r = rank(t);
    int d = out_dim - (out_rank - r);
    if (d < 0 || d >= r) return -1;
    if (flow.tensors[t].shape[d] == 1 && flow.tensors[op.outputs[0]].shape[out_dim] != 1) return -1;
    return d;
  };
  auto elementwise = [&](bool allow_partial, bool partial_needs_all, double flops) {
    add(all(nin, Spec::R()), all(nout, Spec::R()), flops, false, "replicated");
    int orank = rank(op.outputs[0]);
    for (int d = 0; d < orank; ++d) {
      if (!divisible(prep, op.outputs[0], d, ctx)) continue;
      std::vector<Spec> in;
      for (int t : op.inputs) {
        int a = aligned_dim(t, d, orank);
        in.push_back(a >= 0 ? Spec::S(a) : Spec::R());
      }
      add(in, all(nout, Spec::S(d)), flops, true, "sharded");
    }
    // Segmented tensors pass through elementwise ops of the same rank.
    if (nin >= 1) {
      int d = rank(op.outputs[0]) - 1;
      for (int k : {2, 3}) {
        int64_t size = flow.tensors[op.outputs[0]].shape[d];
        if (size % (k * n) != 0 || !divisible(prep, op.outputs[0], d, ctx)) continue;
        std::vector<Spec> in;
        bool ok = true;
        for (int t : op.inputs) {
          if (rank(t) != orank) { ok = flow.tensors[t].shape.empty() || flow.tensors[t].numel() == 1; in.push_back(Spec::R()); continue; }
          in.push_back(Spec::Seg(d, k));
        }
        if (ok) add(in, all(nout, Spec::Seg(d, k)), flops, true, "segments");
      }
    }
    if (allow_partial) {
      if (partial_needs_all) add(all(nin, Spec::P()), all(nout, Spec::P()), flops, false, "partial");
      else
        for (size_t i = 0; i < nin; ++i) {
          std::vector<Spec> in = all(nin, Spec::R());
          in[i] = Spec::P();
          add(in, all(nout, Spec::P()), flops, false, "partial");
        }
    }
  };

  switch (op.kind) {
    case OpKind::Contract: {
      std::string outl;
      auto ins = split_equation(op.equation, outl);
      // Letter sizes, and whether the op has a bias-like input (letters only from the output).
      std::map<char, int64_t> size;
      for (size_t i = 0; i < ins.size() && i < nin; ++i)
        for (size_t k = 0; k < ins[i].size() && k < flow.tensors[op.inputs[i]].shape.size(); ++k)
          size[ins[i][k]] = std::max(size[ins[i][k]], flow.tensors[op.inputs[i]].shape[k]);
      for (size_t k = 0; k < outl.size() && nout; ++k) size[outl[k]] = std::max(size[outl[k]], flow.tensors[op.outputs[0]].shape[k]);
      double flops = 2;  // a multiply and an add per point of the contraction's index space
      for (auto& [c, s] : size)
        if (c != '1') flops *= static_cast<double>(s);
      std::set<char> activation_letters;
      int activations = 0;
      bool has_bias = false;
      for (size_t i = 0; i < nin; ++i) {
        if (flow.tensors[op.inputs[i]].parameter < 0) {
          ++activations;
          for (char c : ins[i]) activation_letters.insert(c);
        }
        if (i >= 2 && flow.tensors[op.inputs[i]].parameter >= 0) has_bias = true;
      }
      add(all(nin, Spec::R()), all(nout, Spec::R()), flops, false, "replicated");
      for (auto& [c, s] : size) {
        if (c == '1' || std::isupper(static_cast<unsigned char>(c))) continue;
        if (s % n != 0 || s < n) continue;
        std::vector<Spec> in;
        bool any_param = false;
        for (size_t i = 0; i < nin; ++i) {
          auto pos = i < ins.size() ? ins[i].find(c) : std::string::npos;
          in.push_back(pos == std::string::npos ? Spec::R() : Spec::S(static_cast<int>(pos)));
          if (pos != std::string::npos && flow.tensors[op.inputs[i]].parameter >= 0) any_param = true;
        }
        auto opos = outl.find(c);
        Spec o = opos == std::string::npos ? Spec::P() : Spec::S(static_cast<int>(opos));
        std::string label;
        bool in_act = activation_letters.count(c) > 0;
        if (!any_param) label = opos == std::string::npos ? "contracted" : "sharded";
        else if (opos == std::string::npos) label = "row";
        else if (!in_act) label = "column";
        else label = "expert";
        add(in, {o}, flops, true, label);
        // Per-segment column split: the output is later split into k equal segments (fused QKV).
        if (label == "column" && opos != std::string::npos && nout && opos + 1 == outl.size()) {
          int d = static_cast<int>(opos);
          const std::vector<int>& ks = prep.segments[op.outputs[0]];
          for (int k : ks) {
            if (s % (static_cast<int64_t>(k) * n) != 0) continue;
            std::vector<Spec> sin = in;
            for (size_t i = 0; i < nin; ++i)
              if (sin[i].kind == kSharded) sin[i] = Spec::Seg(sin[i].dim, k);
            add(sin, {Spec::Seg(d, k)}, flops, true, "column_segments");
          }
        }
      }
      if (activations == 1 && !has_bias) {
        std::vector<Spec> in = all(nin, Spec::R());
        for (size_t i = 0; i < nin; ++i)
          if (flow.tensors[op.inputs[i]].parameter < 0) in[i] = Spec::P();
        add(in, {Spec::P()}, flops, false, "partial");
      }
      break;
    }
    case OpKind::Embedding: {
      int ids = op.inputs[0];
      int orank = rank(op.outputs[0]);
      add({Spec::R(), Spec::R()}, {Spec::R()}, 0, false, "replicated");
      if (divisible(prep, op.inputs[1], 0, ctx)) add({Spec::R(), Spec::S(0)}, {Spec::P()}, 0, true, "vocab");
      if (divisible(prep, op.inputs[1], 1, ctx)) add({Spec::R(), Spec::S(1)}, {Spec::S(orank - 1)}, 0, true, "hidden");
      for (int d = 0; d < rank(ids); ++d)
        if (divisible(prep, ids, d, ctx)) add({Spec::S(d), Spec::R()}, {Spec::S(d)}, 0, true, "sharded");
      break;
    }
    case OpKind::Norm: {
      int x = op.inputs[0];
      int r = rank(x);
      double flops = kNormFlopsPerElement * numel(x);
      std::vector<Spec> base = all(nin, Spec::R());
      add(base, {Spec::R()}, flops, false, "replicated");
      std::vector<int> dims = op.dims;
      for (int d = 0; d < r; ++d) {
        if (!divisible(prep, x, d, ctx)) continue;
        bool normalized = std::find(dims.begin(), dims.end(), d) != dims.end();
        std::vector<Spec> in = base;
        in[0] = Spec::S(d);
        // Weights cover the normalized dims (last ones) or the channel dim (group / batch norm).
        for (size_t i = 1; i < nin; ++i) {
          int wr = rank(op.inputs[i]);
          int wd = -1;
          bool channel_weights = wr == 1 && (op.name.find("roup") != std::string::npos || op.name.find("atch") != std::string::npos ||
                                             op.name.find("nstance") != std::string::npos || op.name.find("group") != std::string::npos);
          if (channel_weights) wd = d == 1 ? 0 : -1;
          else wd = d - (r - wr);
          if (wd >= 0 && wd < wr && flow.tensors[op.inputs[i]].shape[wd] == flow.tensors[x].shape[d]) in[i] = Spec::S(wd);
        }
        int extra = 0;
        double extra_bytes = 0;
        if (normalized) {
          bool whole_groups = op.groups > 1 && d == 1 && op.groups % n == 0;
          if (!whole_groups) {
            // Statistics over the sharded dim: one small all-reduce of per-row (mean, var) in fp32.
            double rows = numel(x);
            for (int nd : dims) rows /= static_cast<double>(flow.tensors[x].shape[nd]);
            if (op.groups > 1) rows *= static_cast<double>(op.groups);
            extra = 1;
            extra_bytes = rows * kStatisticsBytesPerRow * ctx.activation_scale;
          }
        }
        add(in, {Spec::S(d)}, flops, true, normalized ? (extra ? "sharded (statistics all-reduce)" : "sharded (whole groups)") : "sharded", extra, extra_bytes);
      }
      break;
    }
    case OpKind::Softmax: {
      int x = op.inputs[0];
      int d0 = op.dims.empty() ? rank(x) - 1 : op.dims[0];
      add({Spec::R()}, {Spec::R()}, kNormFlopsPerElement * numel(x), false, "replicated");
      for (int d = 0; d < rank(x); ++d) {
        if (!divisible(prep, x, d, ctx)) continue;
        if (d == d0) {
          double rows = numel(x) / static_cast<double>(flow.tensors[x].shape[d]);
          add({Spec::S(d)}, {Spec::S(d)}, kNormFlopsPerElement * numel(x), true, "sharded (statistics all-reduce)", 1,
              rows * kStatisticsBytesPerRow * ctx.activation_scale);
        } else {
          add({Spec::S(d)}, {Spec::S(d)}, kNormFlopsPerElement * numel(x), true, "sharded");
        }
      }
      break;
    }
    case OpKind::Attention: {
      int q = op.inputs[0], k = op.inputs[1], v = op.inputs[2];
      const auto& qs = flow.tensors[q].shape;
      int r = static_cast<int>(qs.size());
      double batch = 1;
      for (int d = 0; d < r - 2; ++d) batch *= static_cast<double>(qs[d]);
      double L = static_cast<double>(qs[r - 2]), E = static_cast<double>(qs[r - 1]);
      double S = static_cast<double>(flow.tensors[k].shape[r - 2]);
      // Decode: one query per sequence against the KV cache of the context.
      double kv_len = ctx.workload.phase == Phase::Decode ? static_cast<double>(ctx.workload.seq) : S;
      // Q·Kᵀ and P·V: two matmuls of L x S x E, 2 FLOPs per multiply-add.
      double flops = 4 * batch * L * kv_len * E * ctx.activation_scale;
      double kv_bytes = ctx.workload.phase == Phase::Decode
                            ? 2 * batch * kv_len * E * ctx.workload.dtype_bytes() * ctx.activation_scale
                            : 0;
      auto attention_strat = [&](std::vector<Spec> in, Spec o, bool split, std::string label) {
        Strat s;
        s.in = in;
        s.out = {o};
        s.flops = flops;
        s.split = split;
        s.label = label;
        double bytes = kv_bytes / (split ? n : 1);
        for (size_t i = 0; i < 3; ++i) {
          double b = tensor_bytes(prep, op.inputs[i], ctx);
          bytes += in[i].sharded() ? b / n : b;
        }
        s.compute_us = roofline_us(ctx, split ? flops / n : flops, bytes);
        s.tag = tag_for(prep, op, s.in, s.out);
        out.push_back(std::move(s));
      };
      attention_strat({Spec::R(), Spec::R(), Spec::R()}, Spec::R(), false, "replicated");
      for (int d = 0; d < r - 2; ++d)
        if (divisible(prep, q, d, ctx) && divisible(prep, k, d, ctx) && divisible(prep, v, d, ctx))
          attention_strat({Spec::S(d), Spec::S(d), Spec::S(d)}, Spec::S(d), true,
                          prep.roles[q].size() > static_cast<size_t>(d) && prep.roles[q][d] == Role::Heads ? "heads" : "sharded");
      if (divisible(prep, q, r - 2, ctx) && ctx.workload.phase == Phase::Prefill)
        attention_strat({Spec::S(r - 2), Spec::R(), Spec::R()}, Spec::S(r - 2), true, "sequence (K, V gathered)");
      break;
    }
    case OpKind::Reshape: {
      int x = op.inputs[0];
      const auto& is = flow.tensors[x].shape;
      const auto& os = flow.tensors[op.outputs[0]].shape;
      add({Spec::R()}, {Spec::R()}, 0, false, "replicated");
      add({Spec::P()}, {Spec::P()}, 0, false, "partial");
      for (int d = 0; d < static_cast<int>(is.size()); ++d) {
        if (!divisible(prep, x, d, ctx)) continue;
        int seg = 0;
        int t = reshape_target(is, os, d, n, 0, &seg);
        if (t >= 0 && os[t] % n == 0) add({Spec::S(d)}, {Spec::S(t)}, 0, true, "sharded");
        for (int k : {2, 3}) {
          if (is[d] % (k * n) != 0) continue;
          int ts = reshape_target(is, os, d, n, k, &seg);
          if (ts >= 0) add({Spec::Seg(d, k)}, {seg ? Spec::Seg(ts, k) : Spec::S(ts)}, 0, true, "segments");
        }
      }
      break;
    }
    case OpKind::Permute: {
      int x = op.inputs[0];
      add({Spec::R()}, {Spec::R()}, 0, false, "replicated");
      add({Spec::P()}, {Spec::P()}, 0, false, "partial");
      for (int o = 0; o < static_cast<int>(op.dims.size()); ++o) {
        int d = op.dims[o];
        if (!divisible(prep, x, d, ctx)) continue;
        add({Spec::S(d)}, {Spec::S(o)}, 0, true, "sharded");
        for (int k : {2, 3})
          if (flow.tensors[x].shape[d] % (k * n) == 0) add({Spec::Seg(d, k)}, {Spec::Seg(o, k)}, 0, true, "segments");
      }
      break;
    }
    case OpKind::Split: {
      int x = op.inputs[0];
      int sd = op.dims.empty() ? 0 : op.dims[0];
      bool unbind = op.linear;
      add({Spec::R()}, all(nout, Spec::R()), 0, false, "replicated");
      add({Spec::P()}, all(nout, Spec::P()), 0, false, "partial");
      for (int d = 0; d < rank(x); ++d) {
        if (d == sd || !divisible(prep, x, d, ctx)) continue;
        int od = unbind && d > sd ? d - 1 : d;
        add({Spec::S(d)}, all(nout, Spec::S(od)), 0, true, "sharded");
      }
      // Segments line up with the parts: each part stays sharded without moving data.
      int k = static_cast<int>(op.sizes.size());
      bool equal = k >= 2 && std::all_of(op.sizes.begin(), op.sizes.end(), [&](int64_t v) { return v == op.sizes[0]; });
      if (equal && !unbind && op.sizes[0] % n == 0 && static_cast<int>(nout) == k)
        add({Spec::Seg(sd, k)}, all(nout, Spec::S(sd)), 0, true, "segments");
      break;
    }
    case OpKind::Concat: {
      int cd = op.dims.empty() ? 0 : op.dims[0];
      add(all(nin, Spec::R()), {Spec::R()}, 0, false, "replicated");
      add(all(nin, Spec::P()), {Spec::P()}, 0, false, "partial");
      int orank = rank(op.outputs[0]);
      bool stack = !op.sizes.empty();
      for (int d = 0; d < orank; ++d) {
        if (d == cd || !divisible(prep, op.outputs[0], d, ctx)) continue;
        int id = stack && d > cd ? d - 1 : d;
        add(all(nin, Spec::S(id)), {Spec::S(d)}, 0, true, "sharded");
      }
      // Concatenated equal parts, each sharded on the concat dim, are segments of the result.
      if (!stack && nin >= 2) {
        bool equal = true;
        for (int t : op.inputs) equal &= flow.tensors[t].shape == flow.tensors[op.inputs[0]].shape;
        if (equal && divisible(prep, op.inputs[0], cd, ctx))
          add(all(nin, Spec::S(cd)), {Spec::Seg(cd, static_cast<int>(nin))}, 0, true, "segments");
      }
      break;
    }
    case OpKind::Unary:
      elementwise(false, false, elem_flops);
      break;
    case OpKind::Scale:
    case OpKind::Interpolate:
      if (op.kind == OpKind::Interpolate) {
        add({Spec::R()}, {Spec::R()}, elem_flops, false, "replicated");
        add({Spec::P()}, {Spec::P()}, elem_flops, false, "partial");
        for (int d = 0; d < 2 && d < rank(op.inputs[0]); ++d)
          if (divisible(prep, op.inputs[0], d, ctx)) add({Spec::S(d)}, {Spec::S(d)}, elem_flops, true, "sharded");
      } else {
        elementwise(true, true, elem_flops);
      }
      break;
    case OpKind::Add:
      elementwise(true, true, elem_flops);
      break;
    case OpKind::Mul:
      elementwise(true, false, elem_flops);
      break;
    case OpKind::Reduce: {
      int x = op.inputs[0];
      const auto& is = flow.tensors[x].shape;
      const auto& os = flow.tensors[op.outputs[0]].shape;
      bool keep = is.size() == os.size();
      add({Spec::R()}, {Spec::R()}, numel(x), false, "replicated");
      if (op.linear) add({Spec::P()}, {Spec::P()}, numel(x), false, "partial");
      for (int d = 0; d < static_cast<int>(is.size()); ++d) {
        if (!divisible(prep, x, d, ctx)) continue;
        bool reduced = std::find(op.dims.begin(), op.dims.end(), d) != op.dims.end();
        if (reduced) {
          // Reducing over the sharded dim leaves partial results: sums add up (a partial sum the next
          // consumer resolves); max / min / norms need one small all-reduce of the result here.
          if (op.linear) add({Spec::S(d)}, {Spec::P()}, numel(x), true, "partial statistics");
          else add({Spec::S(d)}, {Spec::R()}, numel(x), true, "sharded (statistics all-reduce)", 1, tensor_bytes(prep, op.outputs[0], ctx));
        } else {
          int od = d;
          if (!keep)
            for (int rd : op.dims)
              if (rd < d) --od;
          add({Spec::S(d)}, {Spec::S(od)}, numel(x), true, "sharded");
        }
      }
      break;
    }
    case OpKind::Gather: {
      int x = op.inputs[0];
      int gd = op.dims.empty() ? 0 : op.dims[0];
      add(all(nin, Spec::R()), all(nout, Spec::R()), 0, false, "replicated");
      std::vector<Spec> pin = all(nin, Spec::R());
      pin[0] = Spec::P();
      add(pin, all(nout, Spec::P()), 0, false, "partial");
      int xr = rank(x), orank = rank(op.outputs[0]);
      for (int d = gd + 1; d < xr; ++d) {
        if (!divisible(prep, x, d, ctx)) continue;
        std::vector<Spec> in = all(nin, Spec::R());
        in[0] = Spec::S(d);
        add(in, {Spec::S(orank - (xr - d))}, 0, true, "sharded");
      }
      break;
    }
    case OpKind::Accumulate: {
      int x = op.inputs[0];
      add(all(nin, Spec::R()), all(nout, Spec::R()), elem_flops, false, "replicated");
      if (op.linear) {
        std::vector<Spec> in = all(nin, Spec::R());
        in[0] = Spec::P();
        if (nin > 1) in.back() = Spec::P();
        add(in, all(nout, Spec::P()), elem_flops, false, "partial");
      }
      int xr = rank(x);
      for (int d = 1; d < xr; ++d) {
        if (!divisible(prep, x, d, ctx)) continue;
        std::vector<Spec> in = all(nin, Spec::R());
        in[0] = Spec::S(d);
        if (nin > 1 && rank(op.inputs.back()) >= xr - d) in.back() = Spec::S(rank(op.inputs.back()) - (xr - d));
        add(in, all(nout, Spec::S(d)), elem_flops, true, "sharded");
      }
      break;
    }
    case OpKind::TopK: {
      int x = op.inputs[0];
      int kd = op.dims.empty() ? rank(x) - 1 : op.dims[0];
      add({Spec::R()}, all(nout, Spec::R()), numel(x), false, "replicated");
      for (int d = 0; d < rank(x); ++d)
        if (d != kd && divisible(prep, x, d, ctx)) add({Spec::S(d)}, all(nout, Spec::S(d)), numel(x), true, "sharded");
      break;
    }
    case OpKind::Repeat: {
      int x = op.inputs[0];
      add({Spec::R()}, {Spec::R()}, 0, false, "replicated");
      add({Spec::P()}, {Spec::P()}, 0, false, "partial");
      int r = rank(x), orank = rank(op.outputs[0]);
      for (int d = 0; d < r; ++d) {
        if (!divisible(prep, x, d, ctx)) continue;
        int od = d + (orank - r);
        bool repeated = std::find(op.dims.begin(), op.dims.end(), od) != op.dims.end();
        // repeat_interleave keeps contiguous shards contiguous; expand / repeat tile them.
        if (repeated && op.name != "repeat_interleave") continue;
        add({Spec::S(d)}, {Spec::S(od)}, 0, true, repeated ? "sharded (groups kept together)" : "sharded");
      }
      break;
    }
    case OpKind::Create: {
      add(all(nin, Spec::R()), all(nout, Spec::R()), 0, false, "replicated");
      // empty_like(x) and its kin read only x's shape: each device makes its own block of a
      // tensor laid out as x is (diffusers' rotary fills one so), with no collective.
      if (nin >= 1 && nout == 1 && rank(op.inputs[0]) == rank(op.outputs[0])) {
        std::vector<Spec> in = all(nin, Spec::R());
        in[0] = Spec::P();
        add(in, {Spec::R()}, 0, false, "replicated");
        for (int d = 0; d < rank(op.outputs[0]); ++d) {
          if (!divisible(prep, op.outputs[0], d, ctx)) continue;
          in[0] = Spec::S(d);
          add(in, {Spec::S(d)}, 0, true, "sharded");
        }
      }
      break;
    }
    default:
      add(all(nin, Spec::R()), all(nout, Spec::R()), elem_flops, false, "replicated");
      break;
  }
  return out;
}

}  // namespace shardlens::plan::detail
