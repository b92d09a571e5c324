// The tracer's memo of module calls: a module whose forward() already ran on equal inputs is
// replayed from the ops of that first run, with its tensors, parameters and submodules renamed,
// instead of being interpreted again. A model's identical blocks are then traced once.
//
// A replay must give exactly what executing the call would give, so a run is kept only when it
// changed nothing that existed before it (the interpreter reports every attribute, item, global
// and in-place tensor change), raised nothing and noted nothing; and it is replayed only for a call
// of the same class and structure, on arguments equal in everything the trace can see (shapes,
// dtypes, known values, scalars), with the same values in every attribute the first run read
// (compared when looking up), and with nothing changed since then outside the calls in progress.
#include <cstring>
#include <set>

#include "ir/hash.h"
#include "python/forward_trace.h"
#include "python/interpreter.h"

namespace shardlens::python {

namespace {

// Known tensor values larger than this make a call's arguments too costly to compare.
constexpr size_t kMaxComparedValues = 256;
constexpr uint64_t kAbsent = 0xab5e17ULL;

using ir::mix64;
uint64_t identity(const Object* o) { return mix64(0x1d, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(o))); }
uint64_t text_hash(const std::string& s) { return std::hash<std::string>()(s); }
uint64_t position_hash(int code) { return mix64(0x51, static_cast<uint64_t>(code)); }

// A value as a call's behaviour may depend on it: scalars and small containers by content, other
// objects by identity (what they hold is covered by the reads and changes the tracer is told of).
uint64_t value_hash(const Value& v, int depth = 0) {
  switch (v.kind) {
    case Value::Kind::None: return 1;
    case Value::Kind::Bool: return mix64(2, v.b);
    case Value::Kind::Int: return mix64(3, static_cast<uint64_t>(v.i));
    case Value::Kind::BigInt: return mix64(3, text_hash(v.as_big().to_string()));
    case Value::Kind::Float: {
      uint64_t bits = 0;
      std::memcpy(&bits, &v.f, sizeof bits);
      return mix64(4, bits);
    }
    case Value::Kind::Str: return mix64(5, text_hash(v.s));
    case Value::Kind::Ellipsis: return 6;
    case Value::Kind::Unknown: return mix64(7, v.unknown ? text_hash(v.unknown->reason) : 0);
    case Value::Kind::Obj: break;
  }
  if (!v.obj) return 8;
  if (auto* l = TupleView::of(v); l && depth < 3 && l->items.size() <= 64) {
    uint64_t h = mix64(9, static_cast<uint64_t>(v.obj->kind));
    for (auto& item : l->items) h = mix64(h, value_hash(item, depth + 1));
    return h;
  }
  if (v.obj->kind == ObjKind::Range) {
    auto* r = static_cast<const RangeObj*>(v.obj.get());
    return mix64(mix64(mix64(10, static_cast<uint64_t>(r->start)), static_cast<uint64_t>(r->stop)), static_cast<uint64_t>(r->step));
  }
  return identity(v.obj.get());
}

std::shared_ptr<Object> keep(const Object* o) { return const_cast<Object*>(o)->shared_from_this(); }
std::shared_ptr<TensorObj> keep_tensor(const TensorObj* t) { return std::static_pointer_cast<TensorObj>(keep(t)); }

// What an instance's attribute resolves to before the class is consulted: its __dict__, then
// nn.Module's registries (as Interpreter::instance_attribute looks them up while tracing).
bool peek(const InstanceObj& inst, const std::string& name, Value& out) {
  if (const Value* v = inst.dict->find_str(name)) {
    out = *v;
    return true;
  }
  if (!inst.module) return false;
  auto& m = *inst.module;
  if (auto* p = ModuleData::find(m.parameters, name)) {
    out = *p ? Value::object(*p) : Value::none();
    return true;
  }
  if (auto* b = ModuleData::find(m.buffers, name)) {
    out = *b ? Value::object(*b) : Value::none();
    return true;
  }
  if (auto* c = ModuleData::find(m.modules, name)) {
    out = *c ? Value::object(*c) : Value::none();
    return true;
  }
  if (name == "training") {
    out = Value::boolean(false);
    return true;
  }
  return false;
}

}  // namespace

// A module's subtree, numbered the same way in identical blocks: its modules depth-first (each
// once), then its parameters, buffers and plain tensor attributes in that module order.
struct ForwardTracer::Subtree {
  std::vector<const InstanceObj*> modules;
  std::vector<const TensorObj*> tensors;
  std::unordered_map<const Object*, int> code;

  explicit Subtree(const InstanceObj& root) {
    visit(&root);
    for (auto* m : modules) {
      for (auto& [name, t] : m->module->parameters) add_tensor(t.get());
      for (auto& [name, t] : m->module->buffers) add_tensor(t.get());
    }
    for (auto* m : modules)
      for (auto& [key, v] : m->dict->entries) add_tensor(v.as<TensorObj>());
  }
  int code_of(const Object* o) const {
    auto it = code.find(o);
    return it == code.end() ? -1 : it->second;
  }
  const Object* at(int c) const {
    if (c < 0) return nullptr;
    if (static_cast<size_t>(c) < modules.size()) return modules[static_cast<size_t>(c)];
    size_t t = static_cast<size_t>(c) - modules.size();
    return t < tensors.size() ? tensors[t] : nullptr;
  }
  bool same_shape(const Subtree& o) const { return modules.size() == o.modules.size() && tensors.size() == o.tensors.size(); }
  // The hash a read value gets: its place in the subtree when it has one, else value_hash.
  uint64_t read_hash(const Value& v) const {
    if (v.kind == Value::Kind::Obj && v.obj)
      if (int c = code_of(v.obj.get()); c >= 0) return position_hash(c);
    return value_hash(v);
  }

 private:
  void visit(const InstanceObj* m) {
    if (!m || !m->module || code.count(m)) return;
    code.emplace(m, static_cast<int>(modules.size()));
    modules.push_back(m);
    for (auto& [key, child] : m->module->modules) visit(child.get());
  }
  void add_tensor(const TensorObj* t) {
    if (!t || code.count(t)) return;
    code.emplace(t, static_cast<int>(modules.size() + tensors.size()));
    tensors.push_back(t);
  }
};

// The first run of a call, ready to replay. Tensor ids in `ops` are references: k >= 0 is the
// k-th tensor the run created, -(j + 1) is outside[j].
struct ForwardTracer::MemoEntry {
  struct ReadCheck {
    int target = -1;                   // subtree code of the instance read, or -1: `absolute`
    std::shared_ptr<Object> absolute;  // an instance outside the subtree (a shared config)
    std::string name;
    uint64_t hash = 0;
  };
  struct Outside {
    enum Kind : uint8_t { Argument, InSubtree, Absolute } kind = Absolute;
    int index = -1;  // argument tensor position or subtree code
    std::shared_ptr<TensorObj> absolute;
    // When the first run first gave it a tensor id: before the call, inside it, or never (only
    // returned). A replay must find its own tensor in the same state.
    enum Seen : uint8_t { Before, Inside, Never } seen = Before;
  };
  struct Created {
    bool fresh = true;  // made by the run; else the first sight of an outside tensor (a parameter)
    int outside = -1;
    ir::TensorInfo info;
    std::optional<double> true_fraction;
    std::optional<int64_t> index_range;
  };
  struct Returned {
    enum Kind : uint8_t { Literal, FreshTensor, OutsideTensor, SubtreeObject, Sequence, Dict } kind = Literal;
    Value literal;
    int ref = -1;       // FreshTensor: created index; OutsideTensor: outside index; SubtreeObject: code
    int object = -1;    // FreshTensor: which returned object (the same object may be returned twice)
    std::shared_ptr<TensorObj> proto;  // FreshTensor: the fields of the object
    bool tuple = false;
    std::vector<Value> keys;
    std::vector<Returned> items;
  };
  std::vector<ReadCheck> reads;
  std::vector<Outside> outside;
  std::vector<Created> created;
  std::vector<ir::Op> ops;
  std::vector<int> op_module;  // subtree code of each op's module, or -(index + 2) for one outside
  struct Note {
    int module = -1;  // subtree code whose name the note starts with, or -1
    std::string text;
  };
  std::vector<Note> notes;
  Returned result;
  size_t module_count = 0, tensor_count = 0;
  int depth_used = 0;  // how much deeper than its own call the interpreter went
};

ForwardTracer::~ForwardTracer() = default;

void ForwardTracer::reset_memo() {
  memo_.clear();
  seen_once_.clear();
  reads_.clear();
  frames_.clear();
}

bool ForwardTracer::replay_call(uint64_t key, const InstanceObj& inst, const std::vector<const TensorObj*>& arg_tensors,
                                Value& result) {
  auto it = memo_.find(key);
  if (it == memo_.end()) return false;
  const Subtree sub(inst);
  for (auto& entry : it->second)
    if (replay(*entry, sub, arg_tensors, result)) {
      ++calls_replayed_;
      return true;
    }
  return false;
}

void ForwardTracer::remember_call(uint64_t key, const InstanceObj& inst, const CallFrame& frame, int depth_used, size_t first_op,
                                  size_t first_tensor, size_t first_note, const std::vector<const TensorObj*>& arg_tensors,
                                  const Value& result) {
  // A call seen once may never come again (a model's encoder, its only head): keep the second run
  // of a key, so that only calls that do repeat pay for copying their ops.
  if (seen_once_.insert(key).second) return;
  auto& runs = memo_[key];
  if (runs.size() >= kMaxRunsPerKey) return;
  if (auto entry = make_entry(inst, frame, first_op, first_tensor, first_note, arg_tensors, result)) {
    entry->depth_used = depth_used;
    runs.push_back(std::move(entry));
  }
}

void ForwardTracer::mutated(const Object* object) {
  if (frames_.empty() || !object) return;
  if (object->serial < frames_.back().first_serial) ++epoch_;
  for (auto it = frames_.rbegin(); it != frames_.rend() && object->serial < it->first_serial; ++it) it->pure = false;
}

void ForwardTracer::untracked_state() {
  ++epoch_;
  for (auto& f : frames_) f.pure = false;
}

void ForwardTracer::attribute_read(const InstanceObj& instance, const std::string& name) { log_read(instance, name); }

void ForwardTracer::closure_read(uint64_t scope_serial) {
  // A variable of a function that was running before a call began may change between calls (the
  // caller's loop variable in a closure): those calls are not kept.
  for (auto it = frames_.rbegin(); it != frames_.rend() && scope_serial < it->first_serial; ++it) it->pure = false;
}

bool ForwardTracer::keeps_read(const InstanceObj& instance) const {
  // Only calls inside the root's forward can be replayed; what an object made inside the innermost
  // call holds is decided by that call.
  return frames_.size() >= 2 && instance.serial < frames_.back().first_serial;
}

ForwardTracer::Read ForwardTracer::read_of(const InstanceObj& instance, const std::string& name, bool present, const Value& value) {
  Read r;
  r.target = &instance;
  r.name = name;
  r.hash = present ? value_hash(value) : kAbsent;
  if (present && value.kind == Value::Kind::Obj) r.value_object = value.obj.get();
  return r;
}

void ForwardTracer::log_read(const InstanceObj& instance, const std::string& name) {
  if (!keeps_read(instance)) return;
  Value v;
  bool present = peek(instance, name, v);
  reads_.push_back(read_of(instance, name, present, v));
}

void ForwardTracer::native_called(const NativeObj& fn, const CallArgs& args) {
  if (frames_.empty()) return;
  std::string_view name = fn.name;
  std::string_view method = name.substr(name.rfind('.') + 1);
  if (fn.self.kind == Value::Kind::Obj && fn.self.obj) {
    const Object* receiver = fn.self.obj.get();
    static const std::set<std::string_view> kReading = {
        "get", "keys", "values", "items", "copy", "index", "count", "union", "intersection", "difference",
        "symmetric_difference", "issubset", "issuperset", "isdisjoint", "parameters", "named_parameters", "buffers",
        "named_buffers", "children", "named_children", "modules", "named_modules", "get_submodule", "get_parameter",
        "get_buffer", "extra_repr", "state_dict"};
    switch (receiver->kind) {
      case ObjKind::Tensor:
        // In-place methods rebind the tensor's version (seen in new_version); this covers those
        // the tracer does not model.
        if (!method.empty() && method.back() == '_' && method.front() != '_') mutated(receiver);
        return;
      case ObjKind::List:
      case ObjKind::Dict:
      case ObjKind::Set:
      case ObjKind::Instance:
      case ObjKind::Class:
        if (!kReading.count(method)) mutated(receiver);
        return;
      default: return;
    }
  }
  if (name == "builtins.next" && !args.positional.empty() && args.positional[0].kind == Value::Kind::Obj)
    mutated(args.positional[0].obj.get());
}

uint64_t ForwardTracer::call_key(const InstanceObj& inst, int index, const CallArgs& args,
                                 std::vector<const TensorObj*>& arg_tensors, bool& usable) const {
  std::function<uint64_t(const Value&, int)> arg_hash = [&](const Value& v, int depth) -> uint64_t {
    if (auto* t = v.as<TensorObj>()) {
      for (size_t k = 0; k < arg_tensors.size(); ++k)
        if (arg_tensors[k] == t) return mix64(0x77, k);
      arg_tensors.push_back(t);
      uint64_t h = mix64(0x78, t->shape ? t->shape->size() : 0xfff);
      if (t->shape)
        for (auto d : *t->shape) h = mix64(h, static_cast<uint64_t>(d));
      h = mix64(h, text_hash(t->dtype));
      h = mix64(h, (t->is_parameter ? 1u : 0u) | (t->requires_grad ? 2u : 0u));
      if (t->why) h = mix64(h, text_hash(t->why->reason));
      if (t->values) {
        if (t->values.size() > kMaxComparedValues) usable = false;
        else
          for (double x : *t->values) h = mix64(h, value_hash(Value::floating(x)));
      }
      auto it = version_.find(t);
      if (it == version_.end()) return mix64(h, 0x404);
      const ir::TensorInfo& info = flow_->tensors[static_cast<size_t>(it->second)];
      h = mix64(h, (info.data_dependent ? 1u : 0u) | (info.shape_known ? 2u : 0u));
      if (auto f = true_fraction_.find(it->second); f != true_fraction_.end()) h = mix64(h, value_hash(Value::floating(f->second)));
      if (auto r = index_range_.find(it->second); r != index_range_.end()) h = mix64(h, static_cast<uint64_t>(r->second) + 0x1ff);
      return h;
    }
    if (auto* l = TupleView::of(v); l && depth < 3 && l->items.size() <= 64) {
      uint64_t h = mix64(0x79, l->items.size());
      for (auto& item : l->items) h = mix64(h, arg_hash(item, depth + 1));
      return h;
    }
    if (auto* d = v.as<DictObj>(); d && depth < 3 && d->entries.size() <= 64) {
      uint64_t h = mix64(0x7a, d->entries.size());
      for (auto& [key, item] : d->entries) h = mix64(mix64(h, value_hash(key)), arg_hash(item, depth + 1));
      return h;
    }
    return value_hash(v);
  };
  uint64_t h = mix64(identity(inst.cls.get()), model_.modules[static_cast<size_t>(index)].structure_hash);
  h = mix64(h, epoch_);
  for (auto& v : args.positional) h = mix64(h, arg_hash(v, 0));
  for (auto& [name, v] : args.keywords) h = mix64(mix64(h, text_hash(name)), arg_hash(v, 0));
  return h;
}

std::shared_ptr<ForwardTracer::MemoEntry> ForwardTracer::make_entry(const InstanceObj& inst, const CallFrame& frame,
                                                                    size_t first_op, size_t first_tensor, size_t first_note,
                                                                    const std::vector<const TensorObj*>& arg_tensors,
                                                                    const Value& result) {
  auto entry = std::make_shared<MemoEntry>();
  Subtree sub(inst);
  entry->module_count = sub.modules.size();
  entry->tensor_count = sub.tensors.size();
  auto made_inside = [&](const Object* o) { return !o || o->serial >= frame.first_serial; };

  std::set<std::pair<const Object*, std::string>> seen;
  for (size_t k = frame.first_read; k < reads_.size(); ++k) {
    const Read& r = reads_[k];
    if (made_inside(r.target) || !seen.emplace(r.target, r.name).second) continue;
    MemoEntry::ReadCheck c;
    c.target = sub.code_of(r.target);
    if (c.target < 0) c.absolute = keep(r.target);
    c.name = r.name;
    int value_code = r.value_object ? sub.code_of(r.value_object) : -1;
    c.hash = value_code >= 0 ? position_hash(value_code) : r.hash;
    entry->reads.push_back(std::move(c));
  }

  std::unordered_map<const TensorObj*, int> outside_index;
  auto outside_of = [&](const TensorObj* t) -> int {
    if (auto it = outside_index.find(t); it != outside_index.end()) return it->second;
    MemoEntry::Outside o;
    for (size_t k = 0; k < arg_tensors.size() && o.index < 0; ++k)
      if (arg_tensors[k] == t) {
        o.kind = MemoEntry::Outside::Argument;
        o.index = static_cast<int>(k);
      }
    if (o.index < 0) {
      if (int c = sub.code_of(t); c >= 0) {
        o.kind = MemoEntry::Outside::InSubtree;
        o.index = c;
      } else if (!made_inside(t)) {
        o.kind = MemoEntry::Outside::Absolute;
        o.absolute = keep_tensor(t);
      } else {
        return -1;
      }
    }
    int j = static_cast<int>(entry->outside.size());
    entry->outside.push_back(std::move(o));
    outside_index.emplace(t, j);
    return j;
  };

  for (size_t id = first_tensor; id < flow_->tensors.size(); ++id) {
    const TensorObj* t = object_of_id_[id];
    MemoEntry::Created c;
    c.fresh = made_inside(t);
    if (c.fresh) {
      c.info = flow_->tensors[id];
      int i = static_cast<int>(id);
      if (auto f = true_fraction_.find(i); f != true_fraction_.end()) c.true_fraction = f->second;
      if (auto r = index_range_.find(i); r != index_range_.end()) c.index_range = r->second;
    } else {
      c.outside = outside_of(t);
      if (c.outside < 0) return nullptr;
    }
    entry->created.push_back(std::move(c));
  }
  // Tensors from before the call: by what they are, so that the replay finds its own.
  auto ref = [&](int id, bool& ok) -> int {
    if (id < 0) return id;
    if (static_cast<size_t>(id) >= first_tensor) return id - static_cast<int>(first_tensor);
    const TensorObj* t = object_of_id_[static_cast<size_t>(id)];
    auto current = t ? version_.find(t) : version_.end();
    if (current == version_.end() || current->second != id) {
      ok = false;
      return 0;
    }
    int j = outside_of(t);
    if (j < 0) ok = false;
    return -(j + 1);
  };
  bool ok = true;
  for (size_t i = first_op; i < flow_->ops.size() && ok; ++i) {
    ir::Op op = flow_->ops[i];
    for (int& t : op.inputs) t = ref(t, ok);
    for (int& t : op.outputs) t = ref(t, ok);
    if (op.kind == ir::OpKind::Experts && !op.dims.empty()) op.dims[0] = ref(op.dims[0], ok);
    if (op.end >= 0) op.end -= static_cast<int>(first_op);
    int code = op.module >= 0 && static_cast<size_t>(op.module) < walk_.size()
                   ? sub.code_of(walk_[static_cast<size_t>(op.module)].module)
                   : -1;
    entry->op_module.push_back(code >= 0 ? code : -(op.module + 2));
    entry->ops.push_back(std::move(op));
  }
  if (!ok) return nullptr;

  // Notes name their module: keep them relative to the subtree.
  for (size_t n = first_note; n < flow_->notes.size(); ++n) {
    MemoEntry::Note note{-1, flow_->notes[n]};
    for (size_t c = 0; c < sub.modules.size() && note.module < 0; ++c) {
      auto it = module_index_.find(sub.modules[c]);
      if (it == module_index_.end()) continue;
      const std::string& name = model_.modules[static_cast<size_t>(it->second)].name;
      if (!name.empty() && note.text.size() > name.size() && note.text.compare(0, name.size(), name) == 0 && note.text[name.size()] == ':') {
        note.module = static_cast<int>(c);
        note.text = note.text.substr(name.size());
      }
    }
    entry->notes.push_back(std::move(note));
  }

  std::unordered_map<const TensorObj*, int> returned_objects;
  std::function<bool(const Value&, MemoEntry::Returned&, int)> describe = [&](const Value& v, MemoEntry::Returned& out, int depth) {
    if (depth > 4) return false;
    if (v.kind != Value::Kind::Obj) {
      out.kind = MemoEntry::Returned::Literal;
      out.literal = v;
      return true;
    }
    if (auto* t = v.as<TensorObj>()) {
      if (!made_inside(t)) {
        out.kind = MemoEntry::Returned::OutsideTensor;
        out.ref = outside_of(t);
        return out.ref >= 0;
      }
      auto version = version_.find(t);
      if (version == version_.end() || static_cast<size_t>(version->second) < first_tensor) return false;
      out.kind = MemoEntry::Returned::FreshTensor;
      out.ref = version->second - static_cast<int>(first_tensor);
      auto [it, added] = returned_objects.emplace(t, static_cast<int>(returned_objects.size()));
      out.object = it->second;
      out.proto = std::make_shared<TensorObj>(*t);
      return true;
    }
    if (int c = sub.code_of(v.obj.get()); c >= 0 && static_cast<size_t>(c) < sub.modules.size()) {
      out.kind = MemoEntry::Returned::SubtreeObject;
      out.ref = c;
      return true;
    }
    if (!made_inside(v.obj.get())) return false;
    if (auto* l = TupleView::of(v)) {
      out.kind = MemoEntry::Returned::Sequence;
      out.tuple = v.obj->kind == ObjKind::Tuple;
      out.items.resize(l->items.size());
      for (size_t i = 0; i < l->items.size(); ++i)
        if (!describe(l->items[i], out.items[i], depth + 1)) return false;
      return true;
    }
    if (auto* d = v.as<DictObj>(); d && v.obj->kind == ObjKind::Dict && !d->default_factory) {
      out.kind = MemoEntry::Returned::Dict;
      out.tuple = d->ordered;
      out.items.resize(d->entries.size());
      for (size_t i = 0; i < d->entries.size(); ++i) {
        out.keys.push_back(d->entries[i].first);
        if (!describe(d->entries[i].second, out.items[i], depth + 1)) return false;
      }
      return true;
    }
    return false;
  };
  if (!describe(result, entry->result, 0)) return nullptr;
  for (auto& o : entry->outside) o.seen = MemoEntry::Outside::Never;
  for (auto& [t, j] : outside_index)
    if (version_.count(t)) entry->outside[static_cast<size_t>(j)].seen = MemoEntry::Outside::Before;
  for (auto& c : entry->created)
    if (!c.fresh) entry->outside[static_cast<size_t>(c.outside)].seen = MemoEntry::Outside::Inside;
  return entry;
}

bool ForwardTracer::replay(const MemoEntry& entry, const Subtree& sub, const std::vector<const TensorObj*>& arg_tensors,
                           Value& result) {
  if (interp_.call_depth() + entry.depth_used >= interp_.max_call_depth()) return false;
  if (sub.modules.size() != entry.module_count || sub.tensors.size() != entry.tensor_count) return false;
  auto target_of = [&](const MemoEntry::ReadCheck& r) -> const InstanceObj* {
    const Object* o = r.target >= 0 ? sub.at(r.target) : r.absolute.get();
    return o && o->kind == ObjKind::Instance ? static_cast<const InstanceObj*>(o) : nullptr;
  };
  // What each read finds, kept for the calls around this one (see the end).
  std::vector<Read> found;
  for (auto& r : entry.reads) {
    const InstanceObj* target = target_of(r);
    if (!target) return false;
    Value v;
    bool present = peek(*target, r.name, v);
    uint64_t h = present ? sub.read_hash(v) : kAbsent;
    if (h != r.hash) return false;
    if (keeps_read(*target)) found.push_back(read_of(*target, r.name, present, v));
  }
  // Outside tensors, and that each is seen (or not yet) as it was by the first run, so that new
  // tensor ids come in the order an execution would give them.
  std::vector<const TensorObj*> outside(entry.outside.size(), nullptr);
  for (size_t j = 0; j < entry.outside.size(); ++j) {
    auto& o = entry.outside[j];
    const Object* obj = o.kind == MemoEntry::Outside::Argument
                            ? (static_cast<size_t>(o.index) < arg_tensors.size() ? arg_tensors[static_cast<size_t>(o.index)] : nullptr)
                        : o.kind == MemoEntry::Outside::InSubtree ? sub.at(o.index)
                                                                  : o.absolute.get();
    if (!obj || obj->kind != ObjKind::Tensor) return false;
    outside[j] = static_cast<const TensorObj*>(obj);
  }
  for (size_t j = 0; j < outside.size(); ++j)
    if ((version_.count(outside[j]) != 0) != (entry.outside[j].seen == MemoEntry::Outside::Before)) return false;

  std::vector<int> created(entry.created.size());
  for (size_t k = 0; k < entry.created.size(); ++k) {
    auto& c = entry.created[k];
    if (!c.fresh) {
      created[k] = id_of(keep_tensor(outside[static_cast<size_t>(c.outside)]));
      continue;
    }
    int id = static_cast<int>(flow_->tensors.size());
    flow_->tensors.push_back(c.info);
    object_of_id_.push_back(nullptr);  // made by a replay: no object unless it is returned
    if (c.true_fraction) true_fraction_[id] = *c.true_fraction;
    if (c.index_range) index_range_[id] = *c.index_range;
    created[k] = id;
  }
  auto id_for = [&](int r) -> int {
    if (r >= 0) return created[static_cast<size_t>(r)];
    return version_.at(outside[static_cast<size_t>(-r - 1)]);
  };
  // Each subtree module's index, looked up once rather than per op.
  const int caller = module_stack_.empty() ? 0 : module_stack_.back();
  std::vector<int> module_of_code(sub.modules.size());
  for (size_t c = 0; c < sub.modules.size(); ++c) {
    auto it = module_index_.find(sub.modules[c]);
    module_of_code[c] = it == module_index_.end() ? caller : it->second;
  }
  const int first_op = static_cast<int>(flow_->ops.size());
  for (size_t i = 0; i < entry.ops.size(); ++i) {
    ir::Op& op = flow_->ops.emplace_back(entry.ops[i]);  // copied in place, then renamed
    for (int& t : op.inputs) t = id_for(t);
    for (int& t : op.outputs) t = id_for(t);
    if (op.kind == ir::OpKind::Experts && !op.dims.empty()) op.dims[0] = id_for(op.dims[0]);
    if (op.end >= 0) op.end += first_op;
    int code = entry.op_module[i];
    op.module = code >= 0 ? module_of_code[static_cast<size_t>(code)] : -code - 2;
  }
  for (auto& note : entry.notes) {
    std::string text = note.text;
    if (note.module >= 0)
      if (auto it = module_index_.find(sub.modules[static_cast<size_t>(note.module)]); it != module_index_.end())
        text = model_.modules[static_cast<size_t>(it->second)].name + text;
    flow_->notes.push_back(std::move(text));
  }
  std::vector<std::shared_ptr<TensorObj>> objects;
  std::function<Value(const MemoEntry::Returned&)> build = [&](const MemoEntry::Returned& r) -> Value {
    switch (r.kind) {
      case MemoEntry::Returned::Literal: return r.literal;
      case MemoEntry::Returned::OutsideTensor: return Value::object(keep_tensor(outside[static_cast<size_t>(r.ref)]));
      case MemoEntry::Returned::SubtreeObject: return Value::object(keep(sub.at(r.ref)));
      case MemoEntry::Returned::FreshTensor: {
        if (objects.size() <= static_cast<size_t>(r.object)) objects.resize(static_cast<size_t>(r.object) + 1);
        auto& t = objects[static_cast<size_t>(r.object)];
        if (!t) {
          t = interp_.new_tensor(r.proto->shape, r.proto->span, r.proto->is_parameter);
          t->dtype = r.proto->dtype;
          t->requires_grad = r.proto->requires_grad;
          t->why = r.proto->why;
          t->values = r.proto->values;
          int version = created[static_cast<size_t>(r.ref)];
          version_[t.get()] = version;
          object_of_id_[static_cast<size_t>(version)] = t.get();
          keep_alive_.push_back(t);
        }
        return Value::object(t);
      }
      case MemoEntry::Returned::Sequence: {
        std::vector<Value> items;
        for (auto& item : r.items) items.push_back(build(item));
        return make_list(std::move(items), r.tuple);
      }
      case MemoEntry::Returned::Dict: {
        auto d = std::make_shared<DictObj>();
        d->ordered = r.tuple;
        for (size_t i = 0; i < r.items.size(); ++i) d->set(r.keys[i], build(r.items[i]));
        return Value::object(d);
      }
    }
    return Value::none();
  };
  result = build(entry.result);
  // The calls around this one depend on what it read, as if it had run.
  for (auto& r : found) reads_.push_back(std::move(r));
  return true;
}

}  // namespace shardlens::python
