#include "python/interpreter.h"

#include "python/module_loader.h"
#include "python/forward_trace.h"
#include "python/lowering.h"
#include "python/numbers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace shardlens::python {

namespace {
constexpr const char* kBudget = "__analysis_budget__";
constexpr const char* kStopped = "__analysis_stopped__";  // request_stop(): unwinds everything, like the budget
bool uncatchable(const std::optional<PendingException>& p) { return p && (p->type == kBudget || p->type == kStopped); }
// Events are reported once per (what, reason, position, owner).
auto event_key(const Event& e) { return std::make_tuple(e.what, e.reason, e.span.line, e.span.column, e.owner); }

struct CallDepth {
  int& depth;
  CallDepth(int& d, int& deepest) : depth(d) { deepest = std::max(deepest, ++depth); }
  ~CallDepth() { --depth; }
};

bool user_defined(const ClassObj& cls, const std::string& name) {
  const Value* v = cls.lookup(name);
  return v && v->as<FunctionObj>();
}

// The first Unknown among values, to propagate its reason.
const Value* first_unknown(std::initializer_list<const Value*> values) {
  for (const Value* v : values)
    if (v->is_unknown()) return v;
  return nullptr;
}
}  // namespace

Interpreter::Interpreter(Bootstrap) : globals_(std::make_shared<Scope>()), builtins_(std::make_shared<Builtins>()) {
  globals_->globals = globals_.get();
  builtins_->object_base = make_builtin_class("builtins.object", {}, nullptr);
  builtins_->module_base = make_builtin_class("torch.nn.Module", {}, nullptr);
  builtins_->module_base->is_module = true;
  install_python_builtins(*this);
  install_torch(*this);
  install_files(*this);
}

std::shared_ptr<const Interpreter::Builtins> Interpreter::shared_builtins() {
  static const std::shared_ptr<const Builtins> builtins = [] {
    Interpreter bootstrap{Bootstrap{}};
    return std::shared_ptr<const Builtins>(bootstrap.builtins_);
  }();
  return builtins;
}

Interpreter::Interpreter(Limits limits)
    : limits_(limits),
      globals_(std::make_shared<Scope>()),
      // Natives only read the registry at call time, so sharing it is safe; mutation of built-in
      // classes by user code is refused in generic_set_attribute.
      builtins_(std::const_pointer_cast<Builtins>(shared_builtins())) {
  globals_->globals = globals_.get();
}

Interpreter::~Interpreter() {
  // Every closure edge points at a tracked scope; emptying those scopes and cutting their links
  // to enclosing scopes breaks every cycle that runs through a scope.
  for (auto& weak : scopes_)
    if (auto scope = weak.lock()) {
      scope->vars.clear();
      scope->parent.reset();
    }
  for (auto& weak : instances_)
    if (auto inst = weak.lock()) {
      inst->dict->entries.clear();
      inst->dict->index.clear();
      inst->dict_items.reset();
      inst->module.reset();
    }
  for (auto& weak : classes_)
    if (auto cls = weak.lock()) {
      cls->attributes.clear();
      cls->namespace_replaced();
      cls->enum_members.clear();
    }
  globals_->vars.clear();
  modules_.clear();
}

void Interpreter::rollback(const Checkpoint& to) {
  for (size_t i = to.events; i < events_.size(); ++i) event_keys_.erase(event_key(events_[i]));
  if (events_.size() > to.events) events_.resize(to.events);
  if (notes_.size() > to.notes) notes_.resize(to.notes);
  steps_ = to.steps;
  budget_exhausted_ = to.budget_exhausted;
  memory_charged_ = to.memory_charged;
  pending_.reset();
  // What the rolled-back work made and dropped needs no cycle breaking any more.
  auto expired = [](const auto& weak) { return weak.expired(); };
  std::erase_if(scopes_, expired);
  std::erase_if(instances_, expired);
  std::erase_if(classes_, expired);
}

ir::Span Interpreter::absolute(const RelSpan& s, const Unit* unit) const { return span_in_file(s, unit); }

void Interpreter::define(const std::string& qualname, Value v) {
  if (qualname.rfind("builtins.", 0) == 0) builtins_->python_builtins[qualname.substr(9)] = v;
  builtins_->registry[qualname] = std::move(v);
  for (size_t dot = qualname.find('.'); dot != std::string::npos; dot = qualname.find('.', dot + 1))
    builtins_->namespaces.insert(qualname.substr(0, dot));
}

const Value* Interpreter::builtin(const std::string& qualname) const {
  auto it = builtins_->registry.find(qualname);
  return it == builtins_->registry.end() ? nullptr : &it->second;
}

Value Interpreter::native(const std::string& qualname, NativeFn fn, Value self) {
  auto n = std::make_shared<NativeObj>();
  n->name = qualname;
  n->fn = std::move(fn);
  n->self = std::move(self);
  return Value::object(n);
}

void Interpreter::define_method(const std::string& receiver, const std::string& name, NativeFn fn) {
  builtins_->methods[receiver][name] = std::move(fn);
}

const NativeFn* Interpreter::method(const std::string& receiver, const std::string& name) const {
  auto r = builtins_->methods.find(receiver);
  if (r == builtins_->methods.end()) return nullptr;
  auto m = r->second.find(name);
  return m == r->second.end() ? nullptr : &m->second;
}

Value Interpreter::namespace_value(const std::string& qualname) {
  auto ns = std::make_shared<NamespaceObj>();
  ns->qualname = qualname;
  return Value::object(ns);
}

static void compute_mro(ClassObj& cls) {
  // C3 linearisation; falls back to depth-first order when the bases are inconsistent.
  std::vector<std::vector<ClassObj*>> seqs;
  for (auto& b : cls.bases) seqs.push_back(b->mro);
  std::vector<ClassObj*> direct;
  for (auto& b : cls.bases) direct.push_back(b.get());
  seqs.push_back(direct);
  cls.mro = {&cls};
  while (true) {
    seqs.erase(std::remove_if(seqs.begin(), seqs.end(), [](auto& s) { return s.empty(); }), seqs.end());
    if (seqs.empty()) return;
    ClassObj* pick = nullptr;
    for (auto& s : seqs) {
      ClassObj* head = s.front();
      bool in_tail = false;
      for (auto& t : seqs)
        if (std::find(t.begin() + 1, t.end(), head) != t.end()) in_tail = true;
      if (!in_tail) {
        pick = head;
        break;
      }
    }
    if (!pick) {
      for (auto& s : seqs)
        for (ClassObj* c : s)
          if (std::find(cls.mro.begin(), cls.mro.end(), c) == cls.mro.end()) cls.mro.push_back(c);
      return;
    }
    cls.mro.push_back(pick);
    for (auto& s : seqs)
      if (!s.empty() && s.front() == pick) s.erase(s.begin());
  }
}

std::shared_ptr<ClassObj> Interpreter::make_builtin_class(const std::string& qualname,
                                                          std::vector<std::shared_ptr<ClassObj>> bases,
                                                          NativeFn init) {
  auto cls = std::make_shared<ClassObj>();
  cls->qualname = qualname;
  cls->name = qualname.substr(qualname.rfind('.') + 1);
  cls->is_builtin = true;
  if (bases.empty() && builtins_->object_base && qualname != "builtins.object") bases.push_back(builtins_->object_base);
  cls->bases = std::move(bases);
  for (auto& b : cls->bases) {
    cls->is_module |= b->is_module;
    cls->is_exception |= b->is_exception;
  }
  compute_mro(*cls);
  if (init && cls->is_module) {
    // The layers' __init__ fill in the module of `self`: called unbound on what is not an instance
    // (`nn.Linear.__init__(3, 4, 5)`) it is a TypeError, not a null module (found by the front-end
    // fuzzer: a segfault). An instance that is not yet a module (a class with bases we cannot
    // see) becomes one, as when it registers a layer.
    init = [qualname, inner = std::move(init)](Interpreter& in, const Value& callee, CallArgs& a, const ir::Span& site) -> Value {
      auto* self = a.positional.empty() ? nullptr : a.positional.front().as<InstanceObj>();
      if (self && !self->module) {
        self->module = std::make_unique<ModuleData>();
        self->module->span = site;
      }
      if (self) return inner(in, callee, a, site);
      return in.raise("TypeError", "descriptor '__init__' of '" + qualname + "' needs a module instance, not " +
                                       (a.positional.empty() ? std::string("nothing") : "'" + type_name(a.positional.front()) + "'"), site);
    };
  }
  if (init) cls->set("__init__", native(qualname + ".__init__", std::move(init)));
  define(qualname, Value::object(cls));
  return cls;
}

void Interpreter::request_stop() { stop_requested_ = true; }

void Interpreter::end_stop() {
  stop_requested_ = false;
  if (pending_ && pending_->type == kStopped) pending_.reset();
}

bool Interpreter::step() {
  if (budget_exhausted_) return false;
  if (stop_requested_) {
    if (!uncatchable(pending_)) pending_ = PendingException{kStopped, "stopped", {}};
    return false;
  }
  if (++steps_ > limits_.max_steps) {
    budget_exhausted_ = true;
    budget_reason_ = "the script needs more than the analysis budget of steps to execute";
    pending_ = PendingException{kBudget, "analysis step budget exhausted", {}};
    return false;
  }
  return true;
}

bool Interpreter::charge_memory(uint64_t bytes) {
  if (budget_exhausted_) return false;
  if (__builtin_add_overflow(memory_charged_, bytes, &memory_charged_)) memory_charged_ = UINT64_MAX;  // saturates
  if (memory_charged_ <= limits_.max_value_bytes) return true;
  budget_exhausted_ = true;
  budget_reason_ = "the script's values (strings, lists, dicts, tensor values) need more than the analysis memory budget of " +
                   std::to_string(limits_.max_value_bytes >> 20) + " MiB (--memory-budget, memoryBudgetMiB)";
  pending_ = PendingException{kBudget, "analysis memory budget exhausted", {}};
  return false;
}

bool Interpreter::fits_memory(int64_t count, uint64_t each) {
  uint64_t bytes = 0;
  // Compared without adding: 'ab' * (2**63 - 1) asks for 2**64 - 2 bytes, and a sum would wrap
  // past the budget (found by the front-end fuzzer: std::length_error from the reserve below).
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), each, &bytes) || memory_charged_ > limits_.max_value_bytes ||
      bytes > limits_.max_value_bytes - memory_charged_)
    return charge_memory(UINT64_MAX - memory_charged_);  // fails, and says why
  return true;
}

bool Interpreter::charge_value(const Value& v, uint64_t made_since) {
  if (v.is_str()) return charge_memory(v.s.size());
  if (v.kind != Value::Kind::Obj || !v.obj || v.obj->serial < made_since) return true;
  if (auto* l = TupleView::of(v)) return charge_memory(l->items.size() * sizeof(Value));
  if (v.obj->kind == ObjKind::Dict || v.obj->kind == ObjKind::Set)
    return charge_memory(static_cast<DictObj*>(v.obj.get())->entries.size() * 2 * sizeof(Value));
  if (auto* t = v.as<TensorObj>()) return charge_memory(t->values.size() * sizeof(double));
  return true;
}

uint64_t Interpreter::event_owner() const { return constructing_.empty() ? 0 : constructing_.front()->id; }

void Interpreter::note(const std::string& what, const std::string& reason, const ir::Span& span) {
  Event event{what, reason, span, event_owner()};
  if (!event_keys_.insert(event_key(event)).second) return;
  events_.push_back(std::move(event));
}

// The class of an exception shardlens raises by name: a builtin one, or one of a module it models
// natively (importlib.metadata.PackageNotFoundError).
ClassObj* Interpreter::builtin_exception_class(const std::string& type) const {
  if (const Value* v = builtin("builtins." + type)) return v->as<ClassObj>();
  const std::string suffix = "." + type;
  for (const auto& [qual, v] : builtins_->registry)
    if (qual.size() > suffix.size() && qual.compare(qual.size() - suffix.size(), suffix.size(), suffix) == 0)
      if (auto* c = v.as<ClassObj>(); c && c->is_exception) return c;
  return nullptr;
}

Value Interpreter::raise(const std::string& type, const std::string& message, const ir::Span& site) {
  if (!pending_) pending_ = PendingException{type, message, site};
  return unknown(type + ": " + message, site);
}

Value Interpreter::number_result(const NumberResult& r, const ir::Span& site) {
  switch (r.kind) {
    case NumberResult::Kind::Value: return r.value;
    case NumberResult::Kind::Raise: return raise(r.error_type, r.message, site);
    case NumberResult::Kind::Unknown: return unknown(r.message, site);
  }
  return unknown(r.message, site);
}

bool Interpreter::take_exception(const std::string& type) {
  if (!pending_ || uncatchable(pending_)) return false;
  bool matches = pending_->type == type || type == "Exception";
  if (!matches) {
    const Value* raised = builtin("builtins." + pending_->type);
    const Value* wanted = builtin("builtins." + type);
    if (raised && wanted && raised->as<ClassObj>() && wanted->as<ClassObj>())
      matches = raised->as<ClassObj>()->derives_from(wanted->as<ClassObj>());
  }
  if (matches) pending_.reset();
  return matches;
}

std::shared_ptr<TensorObj> Interpreter::new_tensor(std::optional<ir::Shape> shape,
                                                   const ir::Span& site, bool parameter) {
  auto t = std::make_shared<TensorObj>();
  t->shape = std::move(shape);
  t->span = site;
  t->is_parameter = parameter;
  t->requires_grad = parameter;
  t->id = next_id();
  return t;
}

// ---------------------------------------------------------------------------------------------
// Module execution

void Interpreter::run_module(const std::vector<std::shared_ptr<Unit>>& units, const std::string& module_name) {
  globals_->vars["__name__"] = Value::str(module_name);
  global_order_.push_back("__name__");
  if (!script_path_.empty()) {
    globals_->vars["__file__"] = Value::str(script_path_);
    global_order_.push_back("__file__");
  }
  if (exec_units(units, globals_) == Flow::Raise && pending_ && pending_->type == kBudget)
    note("analysis stopped", budget_reason_, pending_->span);
}

// A module's statements in order; one that raises is noted and the rest still run (partial
// results), except when the analysis budget ran out: that is left pending for the caller.
Flow Interpreter::exec_units(const std::vector<std::shared_ptr<Unit>>& units, const std::shared_ptr<Scope>& scope) {
  Frame frame;
  frame.scope = scope;
  Frame* outer = frame_;
  frame_ = &frame;
  int outer_guards = import_guards_;
  bool outer_fallback = importer_has_fallback_;
  importer_has_fallback_ = scope != globals_ && outer_guards > 0;
  import_guards_ = 0;
  Flow result = Flow::Normal;
  for (const auto& unit : units) {
    if (!unit->stmt) continue;
    frame.unit = unit.get();
    Flow flow = exec(*unit->stmt, frame);
    if (flow == Flow::Raise && pending_) {
      // An imported module that raises ImportError fails its import, as in Python: the importer's
      // `except ImportError:` fallback runs (optional accelerators modelled as absent).
      bool import_failed = scope != globals_ && (pending_->type == "ImportError" || pending_->type == "ModuleNotFoundError");
      if (uncatchable(pending_) || import_failed) {
        result = Flow::Raise;
        break;
      }
      note("module-level statement raised " + pending_->type, pending_->message, pending_->span);
      pending_.reset();
    }
  }
  import_guards_ = outer_guards;
  importer_has_fallback_ = outer_fallback;
  frame_ = outer;
  return result;
}

Value Interpreter::evaluate_in_globals(const Expr& expr, const Unit& unit) {
  Frame frame;
  frame.scope = globals_;
  frame.unit = &unit;
  Frame* outer = frame_;
  frame_ = &frame;
  Value v = eval(expr, frame);
  frame_ = outer;
  if (pending_) {
    note("evaluating the model expression raised " + pending_->type, pending_->message, pending_->span);
    pending_.reset();
  }
  return v;
}

Value Interpreter::evaluate_source(const std::string& text, const ir::Span& site) {
  std::vector<SyntaxProblem> problems;
  auto expr = lower_expression_text(text, problems);
  if (!expr) return raise("SyntaxError", "eval() of " + repr(Value::str(text)), site);
  // The syntax tree must outlive the values it creates (functions keep their definitions).
  eval_sources_.push_back(std::move(expr));
  Frame* current = frame_;
  Frame frame;
  frame.scope = current ? current->scope : globals_;
  frame.unit = nullptr;
  frame_ = &frame;
  Value v = eval(*eval_sources_.back(), frame);
  frame_ = current;
  return v;
}

Flow Interpreter::exec_block(const Block& block, Frame& frame) {
  for (const auto& stmt : block) {
    if (!stmt) continue;
    Flow f = exec(*stmt, frame);
    if (f != Flow::Normal) return f;
  }
  return Flow::Normal;
}

Flow Interpreter::exec(const Stmt& s, Frame& frame) {
  if (!step()) return Flow::Raise;
  Frame* outer = frame_;
  frame_ = &frame;
  struct Restore { Frame*& f; Frame* v; ~Restore() { f = v; } } restore{frame_, outer};
  auto span = [&] { return absolute(s.span, frame.unit); };
  auto done = [&]() { return pending_ ? Flow::Raise : Flow::Normal; };

  switch (s.kind) {
    case StmtKind::Expr:
      if (s.value) eval(*s.value, frame);
      return done();
    case StmtKind::Assign: {
      Value v = eval(*s.value, frame);
      if (pending_) return Flow::Raise;
      for (const auto& t : s.targets) assign(*t, v, frame);
      return done();
    }
    case StmtKind::AnnAssign: {
      if (!s.value) return Flow::Normal;
      Value v = eval(*s.value, frame);
      if (pending_) return Flow::Raise;
      assign(*s.targets[0], v, frame);
      return done();
    }
    case StmtKind::AugAssign: {
      const Expr& target = *s.targets[0];
      Value current = eval(target, frame);
      Value rhs = eval(*s.value, frame);
      if (pending_) return Flow::Raise;
      if (auto* l = current.as<ListObj>(); l && s.op == "+") {  // list += iterable extends in place
        if (tracer_) tracer_->mutated(l);
        if (auto items = iterate(rhs, span())) {
          if (!charge_memory(items->size() * sizeof(Value))) return Flow::Raise;
          l->items.insert(l->items.end(), items->begin(), items->end());
          return done();
        }
      }
      if (auto* d = current.as<DictObj>(); d && s.op == "|") {
        if (tracer_) tracer_->mutated(d);
        if (auto* r = rhs.as<DictObj>()) {
          if (!charge_memory(r->entries.size() * 2 * sizeof(Value))) return Flow::Raise;
          for (auto& kv : r->entries) d->set(kv.first, kv.second);
          return done();
        }
      }
      assign(target, binary(s.op, current, rhs, span()), frame);
      return done();
    }
    case StmtKind::Return:
      frame.return_value = s.value ? eval(*s.value, frame) : Value::none();
      return pending_ ? Flow::Raise : Flow::Return;
    case StmtKind::If: {
      Value cond = eval(*s.value, frame);
      if (pending_) return Flow::Raise;
      auto t = truth(cond);
      if (!t) {
        note("condition could not be evaluated; neither branch was analysed",
             cond.is_unknown() ? cond.unknown->reason : "truth value of " + type_name(cond) + " is not known",
             absolute(s.value->span, frame.unit));
        return Flow::Normal;
      }
      return exec_block(*t ? s.body : s.orelse, frame);
    }
    case StmtKind::For: {
      Value iterable = eval(*s.value, frame);
      if (pending_) return Flow::Raise;
      Value why;
      auto items = iterate(iterable, absolute(s.value->span, frame.unit), &why);
      if (pending_) return Flow::Raise;
      if (!items) {
        note("loop over a value that could not be evaluated was skipped",
             why.is_unknown() ? why.unknown->reason : "not iterable", absolute(s.value->span, frame.unit));
        return Flow::Normal;
      }
      bool broke = false;
      // While tracing, a loop over many positions whose iterations record elementwise tensor ops
      // only, no module and no contraction (RWKV's recurrence written step by step over the
      // sequence), is traced for its first kTracedSteps iterations: the ops of each step are alike,
      // and recording thousands of them makes a body no search can plan. Said in a note.
      constexpr size_t kTracedSteps = 4, kStepsBeforeCut = 64;
      const size_t ops_before = tracer_ ? tracer_->op_count() : 0;
      size_t done_steps = 0;
      for (auto& item : *items) {
        if (tracer_ && items->size() >= kStepsBeforeCut && done_steps == kTracedSteps && tracer_->op_count() > ops_before &&
            !tracer_->calls_or_contractions_since(ops_before)) {
          const ir::Span at = absolute(s.value->span, frame.unit);
          const std::string file = at.file ? ir::source_file_path(at.file) : std::string("the script");
          tracer_->note("the loop at " + file + ":" + std::to_string(at.line) + " was traced for its first " + std::to_string(kTracedSteps) +
                        " of " + std::to_string(items->size()) +
                        " iterations: each records the same elementwise ops (no module, no contraction), and the plan covers those steps only");
          break;
        }
        ++done_steps;
        assign(*s.targets[0], item, frame);
        Flow f = exec_block(s.body, frame);
        if (f == Flow::Break) { broke = true; break; }
        if (f == Flow::Continue || f == Flow::Normal) continue;
        return f;
      }
      if (!broke) return exec_block(s.orelse, frame);
      return Flow::Normal;
    }
    case StmtKind::While: {
      int64_t n = 0;
      while (true) {
        Value cond = eval(*s.value, frame);
        if (pending_) return Flow::Raise;
        auto t = truth(cond);
        if (!t) {
          note("while-loop condition could not be evaluated; the loop was not analysed",
               cond.is_unknown() ? cond.unknown->reason : "unknown truth value", absolute(s.value->span, frame.unit));
          return Flow::Normal;
        }
        if (!*t) return exec_block(s.orelse, frame);
        if (++n > limits_.max_loop_iterations) {
          note("while-loop stopped", "more than the iteration limit", span());
          return Flow::Normal;
        }
        Flow f = exec_block(s.body, frame);
        if (f == Flow::Break) return Flow::Normal;
        if (f == Flow::Continue || f == Flow::Normal) continue;
        return f;
      }
    }
    case StmtKind::Break: return Flow::Break;
    case StmtKind::Continue: return Flow::Continue;
    case StmtKind::Pass: return Flow::Normal;
    case StmtKind::FunctionDef: {
      if (frame.unit && frame.unit->definition_cacheable && frame.unit->stmt.get() == &s) return define_cached(s, frame);
      std::string qual = s.function->name;
      Value f = make_function(s.function, frame, qual);
      f = apply_decorators(s.function->decorators, f, frame);
      if (pending_) return Flow::Raise;
      bind_name(s.function->name, f, frame);
      return Flow::Normal;
    }
    case StmtKind::ClassDef: {
      if (frame.unit && frame.unit->definition_cacheable && frame.unit->stmt.get() == &s) return define_cached(s, frame);
      Value c = define_class(s, frame);
      if (pending_) return Flow::Raise;
      bind_name(s.class_def->name, c, frame);
      return Flow::Normal;
    }
    case StmtKind::Import:
    case StmtKind::ImportFrom:
      import_module(s, frame);
      return done();
    case StmtKind::Assert: {
      if (!s.value) return Flow::Normal;
      Value v = eval(*s.value, frame);
      if (pending_) return Flow::Raise;
      auto t = truth(v);
      if (t && !*t) {
        if (tracer_ && tracer_->assertion_failed(span())) return Flow::Normal;
        raise("AssertionError", "assertion failed", span());
        return Flow::Raise;
      }
      return Flow::Normal;
    }
    case StmtKind::Raise: {
      std::string type = "RuntimeError", message;
      std::shared_ptr<ClassObj> raised_class;
      if (s.value) {
        Value e = eval(*s.value, frame);
        if (pending_) return Flow::Raise;
        if (auto* c = e.as<ClassObj>()) {
          type = c->name;
          raised_class = std::static_pointer_cast<ClassObj>(e.obj);
        }
        if (auto* inst = e.as<InstanceObj>()) {
          type = inst->cls->name;
          raised_class = inst->cls;
          if (Value* args = inst->find_attribute("args"))
            if (auto* l = TupleView::of(*args); l && !l->items.empty()) message = to_str(l->items[0]);
        }
      }
      raise(type, message, span());
      if (pending_) pending_->cls = raised_class;
      return Flow::Raise;
    }
    case StmtKind::Try: {
      bool guards_imports = false;
      for (const auto& h : s.handlers) {
        if (!h.type) guards_imports = true;
        std::vector<const Expr*> types;
        if (h.type && h.type->kind == ExprKind::Tuple) for (auto& t : h.type->items) types.push_back(t.get());
        else if (h.type) types.push_back(h.type.get());
        for (const Expr* t : types)
          if ((t->kind == ExprKind::Name || t->kind == ExprKind::Attribute) &&
              (t->name == "ImportError" || t->name == "ModuleNotFoundError" || t->name == "Exception" || t->name == "BaseException"))
            guards_imports = true;
      }
      import_guards_ += guards_imports;
      Flow f = exec_block(s.body, frame);
      import_guards_ -= guards_imports;
      if (f == Flow::Raise && pending_ && !uncatchable(pending_)) {
        PendingException caught = *pending_;
        const ExceptHandler* handler = nullptr;
        for (const auto& h : s.handlers) {
          if (!h.type) { handler = &h; break; }
          pending_.reset();
          Value t = eval(*h.type, frame);
          pending_ = caught;
          std::vector<Value> types;
          if (auto* l = TupleView::of(t)) types = l->items; else types.push_back(t);
          for (auto& tv : types) {
            auto* c = tv.as<ClassObj>();
            if (!c) continue;
            ClassObj* raised = caught.cls.get();
            if (!raised) raised = builtin_exception_class(caught.type);
            if (c->name == caught.type || c->name == "Exception" || c->name == "BaseException" ||
                (raised && raised->derives_from(c)))
              handler = &h;
          }
          if (handler) break;
        }
        if (handler) {
          pending_.reset();
          if (!handler->name.empty()) bind_name(handler->name, unknown("caught exception", span()), frame);
          f = exec_block(handler->body, frame);
        }
      } else if (f == Flow::Normal) {
        f = exec_block(s.orelse, frame);
      }
      if (!s.finalbody.empty()) {
        auto saved = pending_;
        pending_.reset();
        Flow g = exec_block(s.finalbody, frame);
        if (g != Flow::Normal) return g;
        pending_ = saved;
      }
      return f;
    }
    case StmtKind::With: {
      for (const auto& [ctx, target] : s.with_items) {
        Value v = eval(*ctx, frame);
        if (target) assign(*target, v, frame);
      }
      if (pending_) return Flow::Raise;
      return exec_block(s.body, frame);
    }
    case StmtKind::Delete: {
      for (const auto& t : s.targets) {
        if (t->kind == ExprKind::Name) {
          frame.scope->vars.erase(t->name);
        } else if (t->kind == ExprKind::Attribute) {
          delete_attribute(eval(*t->items[0], frame), t->name, absolute(t->span, frame.unit));
        } else if (t->kind == ExprKind::Subscript) {
          Value obj = eval(*t->items[0], frame);
          Value key = eval(*t->items[1], frame);
          if (tracer_ && (obj.as<DictObj>() || obj.as<ListObj>())) tracer_->mutated(obj.obj.get());
          if (auto* inst = obj.as<InstanceObj>()) {
            bool found = false;
            Value delitem = class_attribute(inst->cls, &obj, "__delitem__", 0, absolute(t->span, frame.unit), found);
            if (found) call(delitem, CallArgs{{key}, {}}, absolute(t->span, frame.unit));
          } else if (auto* d = obj.as<DictObj>()) d->erase(key);
          else if (auto* l = obj.as<ListObj>(); l && key.is_int()) {
            int64_t i = key.as_int();
            if (i < 0) i += static_cast<int64_t>(l->items.size());
            if (i >= 0 && i < static_cast<int64_t>(l->items.size())) l->items.erase(l->items.begin() + i);
          }
        }
      }
      return done();
    }
    case StmtKind::Global:
      for (const auto& t : s.targets)
        if (t->kind == ExprKind::Name)
          (s.op == "nonlocal" ? frame.scope->nonlocal_names : frame.scope->global_names).push_back(t->name);
      return Flow::Normal;
    case StmtKind::Unsupported:
      note("statement not analysed", "unsupported statement: " + s.op, span());
      return Flow::Normal;
  }
  return Flow::Normal;
}

void Interpreter::set_module_loader(std::shared_ptr<ModuleLoader> loader, std::vector<std::string> roots, std::string script_path,
                                    std::vector<std::string> site_packages) {
  loader_ = std::move(loader);
  site_packages_ = std::move(site_packages);
  script_dir_ = roots.empty() ? "" : roots.front();  // the extractor puts the script's folder first, absolute
  std::vector<Value> items;
  for (auto& r : roots) items.push_back(Value::str(std::move(r)));
  sys_path_ = make_list(std::move(items));
  script_path_ = std::move(script_path);
}

Scope* Interpreter::module_globals(const std::string& module) const {
  auto it = modules_.find(module);
  if (it != modules_.end())
    if (auto* ns = it->second.as<NamespaceObj>(); ns && ns->scope) return ns->scope.get();
  return globals_.get();
}

// sys.path as the script left it: its string entries, relative ones from the script's folder.
std::vector<std::string> Interpreter::search_roots() {
  std::vector<std::string> roots;
  auto* list = sys_path_.as<ListObj>();
  if (!list) return roots;
  for (auto& v : list->items)
    if (v.is_str()) roots.push_back(from_script_dir(v.s.empty() ? "." : v.s));  // "" on sys.path: the current folder
  return roots;
}

std::string Interpreter::from_script_dir(const std::string& path) const {
  if (script_dir_.empty() || path.empty() || path[0] == '/') return path;
  if (path == ".") return script_dir_;
  return script_dir_ + "/" + path;
}

std::optional<Value> Interpreter::import_source(const std::string& qual, const ir::Span& site, std::string& why) {
  if (auto it = modules_.find(qual); it != modules_.end()) return it->second;
  if (!loader_) {
    why = "No module named '" + qual + "' (imports are not followed here)";
    return std::nullopt;
  }
  size_t dot = qual.rfind('.');
  std::optional<ModuleFile> file;
  NamespaceObj* parent = nullptr;
  if (dot == std::string::npos) {
    file = loader_->find_top(qual, search_roots(), site_packages_);
  } else {
    auto p = import_source(qual.substr(0, dot), site, why);
    if (!p) return std::nullopt;
    // The parent's __init__ may have imported this very module.
    if (auto it = modules_.find(qual); it != modules_.end()) return it->second;
    parent = p->as<NamespaceObj>();
    if (!parent || !parent->scope || parent->package_dirs.empty()) {
      why = "No module named '" + qual + "'; '" + qual.substr(0, dot) + "' is not a package";
      return std::nullopt;
    }
    file = loader_->find_sub(qual.substr(dot + 1), parent->package_dirs);
  }
  if (!file) {
    why = "No module named '" + qual + "' on the search path (the script's folder, PYTHONPATH, --python-path)";
    return std::nullopt;
  }
  auto ns = std::make_shared<NamespaceObj>();
  ns->qualname = qual;
  ns->package_dirs = file->package_dirs;
  ns->scope = std::make_shared<Scope>();
  ns->scope->globals = ns->scope.get();
  ns->scope->module_name = qual;
  scopes_.push_back(ns->scope);
  auto& vars = ns->scope->vars;
  vars["__name__"] = Value::str(qual);
  vars["__file__"] = file->path.empty() ? Value::none() : Value::str(file->path);
  vars["__package__"] = Value::str(file->is_package ? qual : (dot == std::string::npos ? std::string() : qual.substr(0, dot)));
  vars["__doc__"] = Value::none();
  vars["__spec__"] = Value::none();
  vars["__loader__"] = Value::none();
  if (file->is_package) {
    std::vector<Value> dirs;
    for (auto& d : file->package_dirs) dirs.push_back(Value::str(d));
    vars["__path__"] = make_list(std::move(dirs));
  }
  Value module = Value::object(ns);
  // Registered before it runs, as in Python: an import cycle sees the module as far as it got.
  modules_[qual] = module;
  if (parent) parent->scope->vars[qual.substr(dot + 1)] = module;
  if (!file->path.empty()) {
    std::string error;
    auto loaded = loader_->load(file->path, &error);
    if (!loaded) {
      note("module '" + qual + "' not analysed", error, site);
    } else {
      loaded_.push_back(loaded);
      if (call_depth_ >= limits_.max_call_depth) {
        note("module '" + qual + "' not analysed", "imports nest deeper than the analysis allows", site);
        return module;
      }
      CallDepth depth(call_depth_, deepest_call_);  // imports nest like calls: a cycle of them ends
      if (exec_units(loaded->units, ns->scope) == Flow::Raise && pending_) {
        if (pending_->type == kBudget) {
          note("analysis stopped", "importing '" + qual + "' needs more than the analysis budget of steps", site);
        } else {
          // Its import failed: not in sys.modules, and the importer sees why.
          modules_.erase(qual);
          if (parent) parent->scope->vars.erase(qual.substr(dot + 1));
          why = pending_->message;
          if (import_guards_ == 0) pending_.reset();  // unguarded: the names it would bind are unknown
          return std::nullopt;
        }
      }
      if (auto* replaced = sys_modules_.as<DictObj>())
        if (const Value* r = replaced->find(Value::str(qual)); r && r->obj != module.obj) ns->replaced_by = *r;
    }
  }
  return module;
}

// What an import binds: the module, or what it put in sys.modules in its place.
static Value bound_module(const Value& module) {
  auto* ns = module.as<NamespaceObj>();
  return ns && ns->replaced_by ? *ns->replaced_by : module;
}

bool Interpreter::natively_modelled(const std::string& qual) const {
  return builtins_->namespaces.count(qual.substr(0, qual.find('.'))) > 0 || builtin(qual) != nullptr;
}

std::optional<Value> Interpreter::module_named(const std::string& qual, const ir::Span& site, std::string& why) {
  if (natively_modelled(qual)) {
    if (const Value* v = builtin(qual)) return *v;
    return namespace_value(qual);
  }
  return import_source(qual, site, why);
}

bool Interpreter::package_installed(const std::string& qual) {
  const std::string top = qual.substr(0, qual.find('.'));
  if (natively_modelled(top)) return true;
  if (!loader_) return false;
  std::vector<std::string> dirs = search_roots();
  dirs.insert(dirs.end(), site_packages_.begin(), site_packages_.end());
  auto file = loader_->find_sub(top, dirs);
  return file && (!file->path.empty() || !file->package_dirs.empty());
}

Value Interpreter::import_by_name(const std::string& qual, const ir::Span& site) {
  std::string why;
  auto m = module_named(qual, site, why);
  if (pending_) return Value::none();
  if (!m) return raise("ModuleNotFoundError", why, site);
  return bound_module(*m);
}

// A function's signature as CPython exposes it (fn.__code__.co_varnames / co_argcount /
// co_kwonlyargcount / co_flags, fn.__defaults__, fn.__kwdefaults__): config decorators such as
// diffusers' register_to_config read the constructor's parameters this way.
Value Interpreter::function_introspection(const FunctionObj& f, const std::string& what, const ir::Span& site) {
  std::vector<Value> positional, keyword_only, defaults;
  auto kw_defaults = std::make_shared<DictObj>();
  std::string varargs, varkw;
  bool after_star = false;
  for (size_t i = 0; i < f.def->params.size(); ++i) {
    const Param& p = f.def->params[i];
    switch (p.kind) {
      case ParamKind::PositionalOnlyMarker: break;
      case ParamKind::KeywordOnlyMarker: after_star = true; break;
      case ParamKind::VarArgs: varargs = p.name; after_star = true; break;
      case ParamKind::VarKwargs: varkw = p.name; break;
      case ParamKind::Normal:
        (after_star ? keyword_only : positional).push_back(Value::str(p.name));
        if (i < f.has_default.size() && f.has_default[i]) {
          if (after_star) kw_defaults->set(Value::str(p.name), f.defaults[i]);
          else defaults.push_back(f.defaults[i]);
        }
        break;
    }
  }
  if (what == "__defaults__") return defaults.empty() ? Value::none() : make_tuple(std::move(defaults));
  if (what == "__kwdefaults__") return kw_defaults->entries.empty() ? Value::none() : Value::object(kw_defaults);
  const Value* ns_class = builtin("types.SimpleNamespace");
  if (!ns_class) return unknown("function attribute '__code__'", site);
  Value code = call(*ns_class, CallArgs{}, site);
  std::vector<Value> names = positional;
  names.insert(names.end(), keyword_only.begin(), keyword_only.end());
  if (!varargs.empty()) names.push_back(Value::str(varargs));
  if (!varkw.empty()) names.push_back(Value::str(varkw));
  set_attribute(code, "co_argcount", Value::integer(static_cast<int64_t>(positional.size())), site);
  set_attribute(code, "co_kwonlyargcount", Value::integer(static_cast<int64_t>(keyword_only.size())), site);
  set_attribute(code, "co_flags", Value::integer((varargs.empty() ? 0 : 0x04) | (varkw.empty() ? 0 : 0x08)), site);
  set_attribute(code, "co_name", Value::str(f.def->name), site);
  set_attribute(code, "co_varnames", make_tuple(std::move(names)), site);
  return code;
}

void Interpreter::import_module(const Stmt& s, Frame& frame) {
  ir::Span site = absolute(s.span, frame.unit);
  auto find_module = [&](const std::string& qual, std::string& why) { return module_named(qual, site, why); };
  // A module that is not there: inside `try: ... except ImportError:` the import raises, so the
  // script's fallback is analysed; elsewhere each name it would bind is an unknown saying why.
  auto absent = [&](const std::string& module, const std::string& why) {
    if (import_guards_ == 0) return false;
    std::string message = "imports from '" + module + "' were taken as unavailable, so the script's fallback was analysed";
    if (std::find(notes_.begin(), notes_.end(), message) == notes_.end()) notes_.push_back(message);
    raise("ModuleNotFoundError", why, site);
    return true;
  };
  if (pending_) return;
  if (s.kind == StmtKind::Import) {
    for (const auto& name : s.imports) {
      std::string why;
      auto m = find_module(name.path, why);
      if (!m && absent(name.path, why)) {
        if (name.alias == name.path || name.alias != name.path.substr(0, name.path.find('.')))
          unavailable_names_[name.alias] = {name.path, ""};
        return;
      }
      if (pending_) return;
      // `import a.b` binds a; `import a.b as c` binds c to a.b.
      std::string root = name.path.substr(0, name.path.find('.'));
      bool aliased = name.alias != root;
      if (!m) {
        bind_name(name.alias, unknown(why, site, true), frame);
      } else if (aliased) {
        bind_name(name.alias, bound_module(*m), frame);
      } else {
        std::string ignored;
        bind_name(name.alias, bound_module(find_module(root, ignored).value_or(*m)), frame);
      }
    }
    return;
  }
  std::string module = s.module;
  if (s.level > 0) {
    // Relative to the importing module's package (__package__), as Python resolves it.
    Scope* globals = globals_of(frame);
    auto pkg = globals->vars.find("__package__");
    std::string base = pkg != globals->vars.end() && pkg->second.is_str() ? pkg->second.s : "";
    for (int up = 1; up < s.level && !base.empty(); ++up) {
      size_t dot = base.rfind('.');
      base = dot == std::string::npos ? "" : base.substr(0, dot);
    }
    if (base.empty()) {
      std::string why = "attempted relative import (" + std::string(s.level, '.') + module + ") with no known parent package";
      if (absent(module, why)) return;
      for (const auto& name : s.imports)
        if (name.path != "*") bind_name(name.alias, unknown(why, site, true), frame);
      return;
    }
    module = module.empty() ? base : base + "." + module;
  }
  std::string why;
  auto m = find_module(module, why);
  if (!m && absent(module, why)) {
    for (const auto& name : s.imports)
      if (name.path != "*") unavailable_names_[name.alias] = {module, name.path};
    return;
  }
  if (pending_) return;
  auto* source = m ? m->as<NamespaceObj>() : nullptr;
  if (source && !source->scope) source = nullptr;
  if (source && source->replaced_by) {
    // A module that put another object in sys.modules (a lazy module): names are that object's
    // attributes, and a name it lacks may be a submodule, as Python's `from` import tries next.
    const Value replacement = *source->replaced_by;
    for (const auto& name : s.imports) {
      if (name.path == "*") {
        Value all = get_attribute(replacement, "__all__", site);
        if (pending_) return;
        if (auto items = iterate(all, site))
          for (auto& v : *items)
            if (v.is_str()) {
              Value got = get_attribute(replacement, v.s, site);
              if (pending_) return;
              bind_name(v.s, got, frame);
            }
        continue;
      }
      Value v = get_attribute(replacement, name.path, site);
      if (pending_ && pending_->type == "AttributeError") {
        std::string message = pending_->message, sub_why;
        pending_.reset();
        auto sub = import_source(module + "." + name.path, site, sub_why);
        if (pending_) return;
        if (!sub) {
          if (import_guards_ > 0) return void(raise("ImportError", "cannot import name '" + name.path + "' from '" + module + "': " + message, site));
          v = unknown("cannot import name '" + name.path + "' from '" + module + "': " + message, site, true);
        } else {
          v = bound_module(*sub);
        }
      }
      if (pending_) return;
      bind_name(name.alias, v, frame);
    }
    return;
  }
  for (const auto& name : s.imports) {
    if (!m) {
      if (name.path != "*")
        bind_name(name.alias, unknown("'" + name.path + "' is imported from '" + module + "', which was not found: " + why, site, true), frame);
      continue;
    }
    if (name.path == "*") {
      if (source) {
        // __all__ when the module defines it, else every public name.
        auto all = source->scope->vars.find("__all__");
        std::vector<std::string> names;
        if (all != source->scope->vars.end()) {
          if (auto items = iterate(all->second, site))
            for (auto& v : *items)
              if (v.is_str()) names.push_back(v.s);
        } else {
          for (auto& [k, v] : source->scope->vars)
            if (!k.empty() && k[0] != '_') names.push_back(k);
        }
        std::sort(names.begin(), names.end());
        for (auto& n : names) {
          auto it = source->scope->vars.find(n);
          if (it != source->scope->vars.end()) bind_name(n, it->second, frame);
        }
        continue;
      }
      std::string prefix = module + ".";
      for (auto& [qual, v] : builtins_->registry)
        if (qual.rfind(prefix, 0) == 0 && qual.find('.', prefix.size()) == std::string::npos)
          bind_name(qual.substr(prefix.size()), v, frame);
      continue;
    }
    std::string qual = module + "." + name.path;
    if (source) {
      auto it = source->scope->vars.find(name.path);
      if (it != source->scope->vars.end()) {
        bind_name(name.alias, it->second, frame);
        continue;
      }
      std::string sub_why;
      if (auto sub = import_source(qual, site, sub_why)) {  // a submodule of a package
        bind_name(name.alias, bound_module(*sub), frame);
        continue;
      }
      if (pending_) return;
      std::string cannot = "cannot import name '" + name.path + "' from '" + module + "'";
      if (import_guards_ > 0) {
        raise("ImportError", cannot, site);
        return;
      }
      bind_name(name.alias, unknown(cannot + (modules_.count(module) ? " (not defined there, or an import cycle)" : ""), site, true), frame);
      continue;
    }
    // A module shardlens models natively: a name it does not define is not modelled.
    Value v = find_module(qual, why).value_or(Value());
    if (auto* ns = v.as<NamespaceObj>(); ns && !builtins_->namespaces.count(qual))
      v = unknown("'" + qual + "' is not modelled by shardlens", site, true);
    bind_name(name.alias, v, frame);
  }
}

// ---------------------------------------------------------------------------------------------
// Names and scopes

Value Interpreter::lookup_name(const std::string& name, Frame& frame, const ir::Span& site) {
  for (Scope* s = frame.scope.get(); s; s = s->parent.get()) {
    auto it = s->vars.find(name);
    if (it == s->vars.end()) continue;
    if (tracer_ && s != frame.scope.get()) tracer_->closure_read(s->serial);
    return it->second;
  }
  Scope* globals = globals_of(frame);
  auto it = globals->vars.find(name);
  if (it != globals->vars.end()) return it->second;
  auto b = builtins_->python_builtins.find(name);
  if (b != builtins_->python_builtins.end()) return b->second;
  return unknown("name '" + name + "' is not defined", site, true);
}

void Interpreter::bind_name(const std::string& name, Value value, Frame& frame) {
  Scope* target = frame.scope.get();
  if (std::find(target->global_names.begin(), target->global_names.end(), name) != target->global_names.end())
    target = globals_of(frame);
  else if (std::find(target->nonlocal_names.begin(), target->nonlocal_names.end(), name) != target->nonlocal_names.end())
    for (Scope* s = target->parent.get(); s; s = s->parent.get())
      if (s->vars.count(name)) {
        target = s;
        break;
      }
  if (target == globals_.get() && !target->vars.count(name)) global_order_.push_back(name);
  if (tracer_ && target != frame.scope.get()) tracer_->untracked_state();
  target->vars[name] = std::move(value);
}

void Interpreter::assign(const Expr& target, Value value, Frame& frame) {
  ir::Span site = absolute(target.span, frame.unit);
  switch (target.kind) {
    case ExprKind::Name: bind_name(target.name, std::move(value), frame); return;
    case ExprKind::Attribute: {
      Value obj = eval(*target.items[0], frame);
      set_attribute(obj, target.name, std::move(value), site);
      return;
    }
    case ExprKind::Subscript: {
      Value obj = eval(*target.items[0], frame);
      Value key = eval(*target.items[1], frame);
      if (tracer_ && (obj.as<DictObj>() || obj.as<ListObj>())) tracer_->mutated(obj.obj.get());
      if (auto* d = obj.as<DictObj>()) {
        if (charge_memory(2 * sizeof(Value) + (key.is_str() ? key.s.size() : 0))) d->set(key, std::move(value));
      } else if (auto* l = obj.as<ListObj>()) {
        if (key.is_int()) {
          int64_t i = key.as_int();
          if (i < 0) i += static_cast<int64_t>(l->items.size());
          if (i >= 0 && i < static_cast<int64_t>(l->items.size())) l->items[i] = std::move(value);
          else raise("IndexError", "list assignment index out of range", site);
        }
      } else if (tracer_ && obj.as<TensorObj>()) {
        tracer_->set_item(*this, obj, key, value, site);
      } else if (auto* inst = obj.as<InstanceObj>()) {
        bool found = false;
        Value setitem = class_attribute(inst->cls, &obj, "__setitem__", 0, site, found);
        if (found) call(setitem, CallArgs{{key, value}, {}}, site);
      }
      return;
    }
    case ExprKind::Tuple:
    case ExprKind::List: {
      Value why;
      auto items = iterate(value, site, &why);
      if (!items) {
        for (const auto& t : target.items)
          assign(t->kind == ExprKind::Starred ? *t->items[0] : *t,
                 value.is_unknown() ? value : unknown("cannot unpack " + type_name(value), site), frame);
        return;
      }
      size_t star = target.items.size();
      for (size_t i = 0; i < target.items.size(); ++i)
        if (target.items[i]->kind == ExprKind::Starred) star = i;
      size_t n = target.items.size();
      if (star == n) {
        if (items->size() != n) {
          raise("ValueError", "cannot unpack " + std::to_string(items->size()) + " values into " + std::to_string(n), site);
          return;
        }
        for (size_t i = 0; i < n; ++i) assign(*target.items[i], (*items)[i], frame);
        return;
      }
      size_t after = n - star - 1;
      if (items->size() < n - 1) {
        raise("ValueError", "not enough values to unpack", site);
        return;
      }
      for (size_t i = 0; i < star; ++i) assign(*target.items[i], (*items)[i], frame);
      std::vector<Value> middle(items->begin() + static_cast<std::ptrdiff_t>(star),
                                items->end() - static_cast<std::ptrdiff_t>(after));
      assign(*target.items[star]->items[0], make_list(std::move(middle)), frame);
      for (size_t i = 0; i < after; ++i) assign(*target.items[star + 1 + i], (*items)[items->size() - after + i], frame);
      return;
    }
    case ExprKind::Starred: assign(*target.items[0], std::move(value), frame); return;
    default:
      note("assignment target not analysed", "unsupported assignment target", site);
  }
}

Value Interpreter::make_function(const std::shared_ptr<FunctionDef>& def, Frame& frame, const std::string& qualname) {
  auto f = std::make_shared<FunctionObj>();
  f->def = def;
  f->qualname = qualname;
  f->unit = frame.unit;  // the extractor keeps units alive for the interpreter's lifetime
  std::shared_ptr<Scope> scope = frame.is_class_body ? frame.scope->parent : frame.scope;
  // Module-level names are looked up in the module the function was defined in, by name: a
  // definition cached from an earlier run (DefinitionCache) then reads this run's module.
  Scope* globals = globals_of(frame);
  if (globals != globals_.get()) f->module = globals->module_name;
  f->closure = !scope || scope.get() == globals ? nullptr : scope;
  if (f->closure) scopes_.push_back(f->closure);
  for (const auto& p : def->params) {
    if (p.default_value) {
      f->defaults.push_back(eval(*p.default_value, frame));
      f->has_default.push_back(true);
    } else {
      f->defaults.emplace_back();
      f->has_default.push_back(false);
    }
  }
  return Value::object(f);
}

Value Interpreter::apply_decorators(const std::vector<ExprPtr>& decorators, Value target, Frame& frame) {
  for (auto it = decorators.rbegin(); it != decorators.rend(); ++it) {
    Value d = eval(**it, frame);
    if (pending_) return target;
    if (d.is_unknown()) {
      // An unknown decorator (e.g. torch.jit.script, a registry from another package): keep the
      // definition itself, which is what such decorators return in nearly all model code.
      continue;
    }
    target = call(d, CallArgs{{target}, {}}, absolute((*it)->span, frame.unit));
  }
  return target;
}

namespace {
bool constant_expr(const Expr* e) {
  if (!e) return true;
  switch (e->kind) {
    case ExprKind::Int: case ExprKind::Float: case ExprKind::Str: case ExprKind::Bool: case ExprKind::NoneLit:
    case ExprKind::EllipsisLit: return true;
    case ExprKind::UnaryOp: return (e->name == "-" || e->name == "+") && constant_expr(e->items[0].get());
    case ExprKind::Tuple:
      for (auto& item : e->items)
        if (!constant_expr(item.get())) return false;
      return true;
    default: return false;
  }
}
bool name_or_attribute(const Expr* e) {
  if (!e) return false;
  if (e->kind == ExprKind::Name) return true;
  return e->kind == ExprKind::Attribute && name_or_attribute(e->items[0].get());
}
bool pure_function(const FunctionDef& f) {
  for (auto& d : f.decorators)
    if (!name_or_attribute(d.get())) return false;
  for (auto& p : f.params)
    if (!constant_expr(p.default_value.get())) return false;
  return true;
}
}  // namespace

bool definition_is_cacheable(const Stmt& s) {
  if (s.kind == StmtKind::FunctionDef) return pure_function(*s.function);
  if (s.kind != StmtKind::ClassDef) return false;
  const ClassDef& c = *s.class_def;
  for (auto& b : c.bases)
    if (!name_or_attribute(b.get())) return false;  // also refuses metaclass= keywords
  for (auto& d : c.decorators)
    if (!name_or_attribute(d.get())) return false;
  for (auto& st : c.body) {
    if (!st) continue;
    switch (st->kind) {
      case StmtKind::Pass: break;
      case StmtKind::Expr:
        if (!st->value || st->value->kind != ExprKind::Str) return false;  // docstrings only
        break;
      case StmtKind::FunctionDef:
        if (!pure_function(*st->function)) return false;
        break;
      case StmtKind::Assign:
        if (st->targets.size() != 1 || st->targets[0]->kind != ExprKind::Name || !constant_expr(st->value.get())) return false;
        break;
      case StmtKind::AnnAssign:
        if (st->targets[0]->kind != ExprKind::Name || !constant_expr(st->value.get())) return false;
        break;
      default: return false;
    }
  }
  return true;
}

bool Interpreter::definition_inputs(const Stmt& s, Frame& frame, std::vector<const Object*>& inputs) {
  // Only names and attributes are evaluated here (no side effects); every input must be a class
  // (bases) or a built-in native (decorators: dataclass, property, ...), identified by address.
  auto native = [&](const Expr& e) {
    Value v = eval(e, frame);
    if (!v.as<NativeObj>() || pending_) return false;
    inputs.push_back(v.obj.get());
    return true;
  };
  if (s.kind == StmtKind::FunctionDef) {
    for (auto& d : s.function->decorators)
      if (!native(*d)) return false;
    return true;
  }
  for (auto& b : s.class_def->bases) {
    Value v = eval(*b, frame);
    if (!v.as<ClassObj>() || pending_) return false;
    if (const Value* hook = v.as<ClassObj>()->lookup("__init_subclass__"); hook && !hook->as<NativeObj>())
      return false;  // a user hook must run every time the subclass is defined
    inputs.push_back(v.obj.get());
  }
  for (auto& d : s.class_def->decorators)
    if (!native(*d)) return false;
  for (const Expr* d : s.class_def->method_decorators)
    if (!native(*d)) return false;
  return true;
}

void Interpreter::make_enum(ClassObj& cls) {
  // Plain class attributes become members: instances of the class with .name and .value.
  cls.is_enum = true;
  for (ClassObj* c : cls.mro)
    if (c->qualname == "builtins.str" || c->qualname == "builtins.int") cls.enum_value_equality = true;
  auto self = std::static_pointer_cast<ClassObj>(cls.shared_from_this());
  int64_t last = 0;
  // As Python's: _sunder_ and __dunder__ names are the enum's own, __private ones are not members;
  // any other name is one, a leading underscore included (diffusers' AttentionBackendName._FLASH_3).
  auto reserved = [](const std::string& name) {
    return name.rfind("__", 0) == 0 || (name.size() > 2 && name.front() == '_' && name.back() == '_');
  };
  for (auto& [name, value] : cls.attributes) {
    if (reserved(name) || value.as<FunctionObj>() || value.as<NativeObj>() || value.as<ClassObj>() ||
        (value.kind == Value::Kind::Obj && (value.obj->kind == ObjKind::Property || value.obj->kind == ObjKind::StaticMethod ||
                                            value.obj->kind == ObjKind::ClassMethod)))
      continue;
    Value v = value;
    if (v.kind == Value::Kind::Obj && v.as<DtypeObj>() && v.as<DtypeObj>()->name == "enum.auto") v = Value::integer(last + 1);
    if (v.is_int()) last = v.as_int();
    auto member = std::make_shared<InstanceObj>();
    member->cls = self;
    member->id = next_id();
    member->set_attribute("name", Value::str(name));
    member->set_attribute("value", v);
    value = Value::object(member);
    cls.enum_members.push_back(value);
  }
  cls.native_new = [](Interpreter& in, const Value& callee, CallArgs& a, const ir::Span& site) -> Value {
    auto* c = callee.as<ClassObj>();
    if (!a.positional.empty())
      for (auto& m : c->enum_members)
        if (in.equal(*m.as<InstanceObj>()->find_attribute("value"), a.positional[0]).value_or(false) ||
            (a.positional[0].as<InstanceObj>() == m.as<InstanceObj>()))
          return m;
    return in.raise("ValueError", (a.positional.empty() ? std::string("?") : repr(a.positional[0])) + " is not a valid " + c->name, site);
  };
}

Flow Interpreter::define_cached(const Stmt& s, Frame& frame) {
  std::vector<const Object*> inputs;
  bool cacheable = definition_inputs(s, frame, inputs);
  if (pending_) return Flow::Raise;
  auto& cache = frame.unit->definition_cache;
  const std::string& name = s.kind == StmtKind::ClassDef ? s.class_def->name : s.function->name;
  if (cacheable && cache && cache->inputs == inputs) {
    if (auto* cls = cache->value.as<ClassObj>()) {
      if (cls->attribute_writes != cache->attribute_writes) {  // undo what the last run's code did to the class
        cls->attributes = cache->attributes;
        cls->namespace_replaced();
        cls->attribute_writes = cache->attribute_writes;
      }
      cls->span = absolute(s.span, frame.unit);
    }
    ++definitions_reused_;
    bind_name(name, cache->value, frame);
    return Flow::Normal;
  }
  Value v;
  if (s.kind == StmtKind::ClassDef) {
    v = define_class(s, frame, /*track=*/!cacheable);
  } else {
    v = make_function(s.function, frame, s.function->name);
    v = apply_decorators(s.function->decorators, v, frame);
  }
  if (pending_) return Flow::Raise;
  bind_name(name, v, frame);
  if (auto* cls = v.as<ClassObj>(); cls && cls->is_enum && cacheable) {
    // Enum members refer back to their class: a cycle only the teardown can break.
    cacheable = false;
    classes_.push_back(std::static_pointer_cast<ClassObj>(v.obj));
  }
  if (cacheable) {
    cache = std::make_shared<DefinitionCache>();
    cache->value = v;
    cache->inputs = std::move(inputs);
    if (auto* cls = v.as<ClassObj>()) {
      cache->attributes = cls->attributes;
      cache->attribute_writes = cls->attribute_writes;
    }
  } else {
    cache.reset();
  }
  return Flow::Normal;
}

std::shared_ptr<ClassObj> Interpreter::new_class(const std::string& name, const std::vector<Value>& bases, bool track) {
  auto cls = std::make_shared<ClassObj>();
  if (track) classes_.push_back(cls);
  cls->name = name;
  cls->qualname = name;
  for (const Value& bv : bases) {
    if (auto* c = bv.as<ClassObj>()) {
      cls->bases.push_back(std::static_pointer_cast<ClassObj>(bv.obj));
      cls->is_module |= c->is_module;
      cls->has_unknown_base |= c->has_unknown_base;
      cls->is_exception |= c->is_exception;
    } else {
      cls->has_unknown_base = true;
    }
  }
  if (cls->bases.empty()) cls->bases.push_back(builtins_->object_base);
  compute_mro(*cls);
  return cls;
}

void Interpreter::set_class_member(ClassObj& cls, const std::string& name, Value v) {
  Value* fn_holder = &v;
  if (v.kind == Value::Kind::Obj && (v.obj->kind == ObjKind::Property || v.obj->kind == ObjKind::StaticMethod ||
                                     v.obj->kind == ObjKind::ClassMethod))
    fn_holder = &static_cast<WrapperObj*>(v.obj.get())->function;
  if (auto* f = fn_holder->as<FunctionObj>(); f && !f->defining_class) {
    f->defining_class = &cls;
    f->qualname = cls.name + "." + f->qualname;
  }
  cls.set(name, std::move(v));
}

void Interpreter::finish_class(ClassObj& cls) {
  for (ClassObj* c : cls.mro)
    if (c != &cls && c->qualname == "enum.Enum") make_enum(cls);
  cls.custom_getattribute = user_defined(cls, "__getattribute__");
  cls.custom_setattr = user_defined(cls, "__setattr__");
}

Value Interpreter::define_class(const Stmt& s, Frame& frame, bool track) {
  const ClassDef& def = *s.class_def;
  std::vector<Value> bases;
  for (const auto& b : def.bases)
    if (b->kind != ExprKind::Keyword) bases.push_back(eval(*b, frame));  // not metaclass=...
  auto cls = new_class(def.name, bases, track);
  cls->def = s.class_def;
  cls->unit = frame.unit;
  if (auto n = globals_of(frame)->vars.find("__name__"); n != globals_of(frame)->vars.end() && n->second.is_str())
    cls->module_name = n->second.s;
  cls->span = absolute(s.span, frame.unit);
  bool named_tuple = false;
  for (auto& b : cls->bases) named_tuple |= b->qualname == "typing.NamedTuple";

  Frame body;
  body.scope = std::make_shared<Scope>();
  body.scope->globals = globals_of(frame);
  body.scope->parent = frame.scope.get() == body.scope->globals ? nullptr : frame.scope;
  body.unit = frame.unit;
  body.is_class_body = true;
  // Class bodies can read enclosing names; lookups fall back to globals via lookup_name.
  std::vector<std::string> order;
  std::shared_ptr<DictObj> annotations;  // the class's __annotations__, as CPython evaluates them
  for (const auto& stmt : def.body) {
    if (!stmt) continue;
    Flow f = exec(*stmt, body);
    if (f == Flow::Raise) return unknown("class body raised", cls->span);
    if (stmt->kind == StmtKind::AnnAssign && stmt->annotation && !stmt->targets.empty() && stmt->targets[0]->kind == ExprKind::Name) {
      Value type = eval(*stmt->annotation, body);
      if (pending_ && !take_exception("Exception")) return unknown("class body raised", cls->span);
      if (!annotations) annotations = std::make_shared<DictObj>();
      annotations->set(Value::str(stmt->targets[0]->name), type);
    }
    auto remember = [&](const std::string& n) {
      if (std::find(order.begin(), order.end(), n) == order.end()) order.push_back(n);
    };
    if (stmt->kind == StmtKind::FunctionDef) remember(stmt->function->name);
    else if (stmt->kind == StmtKind::ClassDef) remember(stmt->class_def->name);
    else
      for (const auto& t : stmt->targets)
        if (t->kind == ExprKind::Name) remember(t->name);
  }
  if (annotations && !body.scope->vars.count("__annotations__")) {
    body.scope->vars["__annotations__"] = Value::object(annotations);
    order.push_back("__annotations__");
  }
  for (auto& [name, v] : body.scope->vars)
    if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  for (const auto& name : order) {
    auto it = body.scope->vars.find(name);
    if (it == body.scope->vars.end()) continue;
    set_class_member(*cls, name, it->second);
  }
  if (named_tuple) make_dataclass(*this, *cls);
  // __init_subclass__ of the nearest base defining it, with the class keywords (not metaclass).
  for (size_t i = 1; i < cls->mro.size(); ++i) {
    const Value* hook = cls->mro[i]->find("__init_subclass__");
    if (!hook) continue;
    Value fn = *hook;
    if (fn.kind == Value::Kind::Obj && fn.obj->kind == ObjKind::ClassMethod) fn = static_cast<WrapperObj*>(fn.obj.get())->function;
    if (!fn.as<FunctionObj>()) break;
    CallArgs args{{Value::object(cls)}, {}};
    for (const auto& b : def.bases)
      if (b->kind == ExprKind::Keyword && b->name != "metaclass") args.keywords.emplace_back(b->name, eval(*b->items[0], frame));
    call(fn, std::move(args), cls->span);
    if (pending_) return unknown("__init_subclass__ raised", cls->span);
    break;
  }
  finish_class(*cls);
  return apply_decorators(def.decorators, Value::object(cls), frame);
}

// ---------------------------------------------------------------------------------------------
// Calls

bool Interpreter::collect_args(const std::vector<ExprPtr>& items, size_t first, Frame& frame, CallArgs& out) {
  for (size_t i = first; i < items.size(); ++i) {
    const Expr& a = *items[i];
    if (a.kind == ExprKind::Keyword) {
      out.keywords.emplace_back(a.name, eval(*a.items[0], frame));
    } else if (a.kind == ExprKind::Starred) {
      Value v = eval(*a.items[0], frame);
      Value why;
      auto seq = iterate(v, absolute(a.span, frame.unit), &why);
      if (!seq) {
        out.positional.push_back(why.is_unknown() ? why : unknown("*-argument could not be evaluated", absolute(a.span, frame.unit)));
        return false;
      }
      out.positional.insert(out.positional.end(), seq->begin(), seq->end());
    } else if (a.kind == ExprKind::DoubleStar) {
      Value v = eval(*a.items[0], frame);
      auto* d = v.as<DictObj>();
      if (!d) {
        out.keywords.emplace_back("**", v.is_unknown() ? v : unknown("**-argument is not a dict", absolute(a.span, frame.unit)));
        return false;
      }
      for (auto& [k, val] : d->entries) out.keywords.emplace_back(to_str(k), val);
    } else {
      out.positional.push_back(eval(a, frame));
    }
  }
  return true;
}

Value Interpreter::eval_call(const Expr& e, Frame& frame) {
  ir::Span site = absolute(e.span, frame.unit);
  Value callee = eval(*e.items[0], frame);
  if (pending_) return unknown("exception", site);
  // Zero-argument super(): the defining class and first argument of the running method.
  if (auto* n = callee.as<NativeObj>(); n && n->name == "builtins.super" && e.items.size() == 1) {
    if (!frame.defining_class || frame.first_argument.is_none())
      return unknown("super() outside a method", site);
    auto sup = std::make_shared<SuperObj>();
    sup->after = frame.defining_class;
    sup->self = frame.first_argument;
    return Value::object(sup);
  }
  if (callee.is_unknown() && tracer_)
    if (auto stand_in = stand_in_for(*e.items[0], site)) callee = *stand_in;
  CallArgs args;
  bool complete = collect_args(e.items, 1, frame, args);
  if (pending_) return unknown("exception", site);
  if (!complete) {
    for (auto& v : args.positional)
      if (v.is_unknown()) return unknown("call with unresolvable *args: " + v.unknown->reason, site, true);
    for (auto& kv : args.keywords)
      if (kv.second.is_unknown()) return unknown("call with unresolvable **kwargs: " + kv.second.unknown->reason, site, true);
  }
  return call(callee, std::move(args), site);
}

// A kernel of a package the script took as unavailable (its import sits in `try: ... except
// ImportError:`), called in forward() all the same: Wan checks `assert FLASH_ATTN_2_AVAILABLE` and
// calls flash_attn.flash_attn_varlen_func with no other path. Where the package has a library model,
// that model stands in (imported as code without a fallback imports it), so the call is traced.
std::optional<Value> Interpreter::stand_in_for(const Expr& callee, const ir::Span& site) {
  std::string module, name;
  if (callee.kind == ExprKind::Name) {
    auto it = unavailable_names_.find(callee.name);
    if (it == unavailable_names_.end() || it->second.second.empty()) return std::nullopt;
    std::tie(module, name) = it->second;
  } else if (callee.kind == ExprKind::Attribute && !callee.items.empty() && callee.items[0] && callee.items[0]->kind == ExprKind::Name) {
    auto it = unavailable_names_.find(callee.items[0]->name);
    if (it == unavailable_names_.end() || !it->second.second.empty()) return std::nullopt;
    module = it->second.first;
    name = callee.name;
  } else {
    return std::nullopt;
  }
  const int outer_guards = import_guards_;
  import_guards_ = 0;
  std::string why;
  auto m = import_source(module, site, why);
  import_guards_ = outer_guards;
  auto* ns = m ? m->as<NamespaceObj>() : nullptr;
  if (!ns || !ns->scope || pending_) return std::nullopt;
  auto found = ns->scope->vars.find(name);
  if (found == ns->scope->vars.end() || !found->second.as<FunctionObj>()) return std::nullopt;
  std::string message = "'" + module + "." + name + "' is called although the script took '" + module +
                        "' as unavailable (no other path there): shardlens' model of it was traced";
  tracer_->note(message);
  return found->second;
}

Value Interpreter::call(const Value& callee, CallArgs args, const ir::Span& site) {
  if (!step()) return unknown("analysis budget exhausted", site);
  if (callee.is_unknown()) {
    return Value::make_unknown(callee.unknown->reason, callee.unknown->span.valid() ? callee.unknown->span : site,
                               true);
  }
  if (callee.kind != Value::Kind::Obj) return raise("TypeError", "'" + type_name(callee) + "' object is not callable", site);
  switch (callee.obj->kind) {
    case ObjKind::Function: return call_function(*static_cast<FunctionObj*>(callee.obj.get()), std::move(args), site, nullptr);
    case ObjKind::BoundMethod: {
      auto* m = static_cast<BoundMethodObj*>(callee.obj.get());
      if (auto* f = m->function.as<FunctionObj>()) return call_function(*f, std::move(args), site, &m->self);
      args.positional.insert(args.positional.begin(), m->self);
      return call(m->function, std::move(args), site);
    }
    case ObjKind::Native: {
      auto* n = static_cast<NativeObj*>(callee.obj.get());
      CallDepth depth(call_depth_, deepest_call_);
      if (tracer_) {
        tracer_->native_called(*n, args);
        return tracer_->native(*this, *n, args, site);
      }
      uint64_t made_since = Object::serials_issued();
      Value r = n->fn(*this, n->self, args, site);
      if (!charge_value(r, made_since)) return unknown("analysis memory budget exhausted", site);
      return r;
    }
    case ObjKind::Class: {
      auto* cls = static_cast<ClassObj*>(callee.obj.get());
      if (cls->native_new) return cls->native_new(*this, callee, args, site);
      return instantiate(std::static_pointer_cast<ClassObj>(callee.obj), std::move(args), site);
    }
    case ObjKind::Partial: {
      auto* p = static_cast<PartialObj*>(callee.obj.get());
      CallArgs merged = p->args;
      merged.positional.insert(merged.positional.end(), args.positional.begin(), args.positional.end());
      for (auto& kv : args.keywords) {
        bool replaced = false;
        for (auto& existing : merged.keywords)
          if (existing.first == kv.first) { existing.second = kv.second; replaced = true; }
        if (!replaced) merged.keywords.push_back(kv);
      }
      return call(p->function, std::move(merged), site);
    }
    case ObjKind::StaticMethod:
    case ObjKind::ClassMethod:
      return call(static_cast<WrapperObj*>(callee.obj.get())->function, std::move(args), site);
    case ObjKind::Instance: {
      auto* inst = static_cast<InstanceObj*>(callee.obj.get());
      bool found = false;
      Value c = class_attribute(inst->cls, &callee, "__call__", 0, site, found);
      if (found && !(inst->module && c.as<NativeObj>())) return call(c, std::move(args), site);
      if (inst->module && tracer_) {
        if (call_depth_ >= limits_.max_call_depth) return unknown("call depth limit reached in forward()", site);
        CallDepth depth(call_depth_, deepest_call_);
        return tracer_->module_call(*this, callee, args, site);
      }
      if (inst->module) {
        // Running forward() is the dataflow front end's job, not construction's.
        auto t = new_tensor(std::nullopt, site);
        t->why = std::make_shared<UnknownInfo>(UnknownInfo{"output of " + inst->cls->name + ".forward (not executed while extracting modules)", site, false});
        return Value::object(t);
      }
      return raise("TypeError", "'" + inst->cls->name + "' object is not callable", site);
    }
    default: return raise("TypeError", "'" + type_name(callee) + "' object is not callable", site);
  }
}

Value Interpreter::call_function(FunctionObj& fn, CallArgs args, const ir::Span& site, const Value* bound_self) {
  // Python raises here (its own limit is about 1000 frames; ours counts calls, not frames): an
  // unknown would let a class that builds itself recursively come out as a deep, valid model.
  if (call_depth_ >= limits_.max_call_depth)
    return raise("RecursionError", "maximum recursion depth exceeded (" + std::to_string(limits_.max_call_depth) +
                                       " nested calls) in " + fn.qualname, site);
  CallDepth depth(call_depth_, deepest_call_);
  if (bound_self) args.positional.insert(args.positional.begin(), *bound_self);
  const FunctionDef& def = *fn.def;
  if (!tracer_) called_.insert(&def);  // construction, not forward()

  auto scope = std::make_shared<Scope>();
  scope->parent = fn.closure;
  scope->globals = fn.module.empty() ? globals_.get() : module_globals(fn.module);
  // Bind arguments with Python's rules.
  size_t pos = 0;
  bool keyword_only = false, positional_only_seen = false;
  std::vector<bool> bound(def.params.size(), false);
  std::shared_ptr<DictObj> var_kwargs;
  size_t positional_only_end = 0;
  for (size_t i = 0; i < def.params.size(); ++i)
    if (def.params[i].kind == ParamKind::PositionalOnlyMarker) { positional_only_end = i; positional_only_seen = true; }
  for (size_t i = 0; i < def.params.size(); ++i) {
    const Param& p = def.params[i];
    if (p.kind == ParamKind::PositionalOnlyMarker) continue;
    if (p.kind == ParamKind::KeywordOnlyMarker) { keyword_only = true; continue; }
    if (p.kind == ParamKind::VarArgs) {
      std::vector<Value> rest;
      while (pos < args.positional.size()) rest.push_back(args.positional[pos++]);
      scope->vars[p.name] = make_tuple(std::move(rest));
      bound[i] = true;
      keyword_only = true;
      continue;
    }
    if (p.kind == ParamKind::VarKwargs) {
      var_kwargs = std::make_shared<DictObj>();
      scope->vars[p.name] = Value::object(var_kwargs);
      bound[i] = true;
      continue;
    }
    if (!keyword_only && pos < args.positional.size()) {
      scope->vars[p.name] = args.positional[pos++];
      bound[i] = true;
    }
  }
  if (pos < args.positional.size())
    return raise("TypeError", fn.qualname + "() takes " + std::to_string(pos) + " positional arguments but " +
                                  std::to_string(args.positional.size()) + " were given", site);
  for (auto& [name, value] : args.keywords) {
    bool matched = false;
    for (size_t i = 0; i < def.params.size(); ++i) {
      const Param& p = def.params[i];
      if (p.name != name || p.kind != ParamKind::Normal) continue;
      if (positional_only_seen && i < positional_only_end) continue;
      if (bound[i]) return raise("TypeError", fn.qualname + "() got multiple values for argument '" + name + "'", site);
      scope->vars[name] = value;
      bound[i] = matched = true;
      break;
    }
    if (!matched) {
      if (!var_kwargs) return raise("TypeError", fn.qualname + "() got an unexpected keyword argument '" + name + "'", site);
      var_kwargs->set(Value::str(name), value);
    }
  }
  for (size_t i = 0; i < def.params.size(); ++i) {
    const Param& p = def.params[i];
    if (bound[i] || p.kind != ParamKind::Normal) continue;
    if (!fn.has_default[i])
      return raise("TypeError", fn.qualname + "() missing required argument '" + p.name + "'", site);
    scope->vars[p.name] = fn.defaults[i];
  }

  Frame frame;
  frame.scope = scope;
  frame.unit = fn.unit;
  frame.defining_class = fn.defining_class;
  if (!def.params.empty() && def.params[0].kind == ParamKind::Normal) {
    auto it = scope->vars.find(def.params[0].name);
    if (it != scope->vars.end()) frame.first_argument = it->second;
  }
  if (def.lambda_body) {
    Frame* outer = frame_;
    frame_ = &frame;
    Value v = eval(*def.lambda_body, frame);
    frame_ = outer;
    return v;
  }
  if (def.is_generator) {
    // Generators run eagerly: what they yield becomes a list (model code consumes them whole,
    // e.g. nn.Sequential(*self._layers())).
    std::vector<Value> yielded;
    yields_.push_back(&yielded);
    Flow flow = exec_block(def.body, frame);
    yields_.pop_back();
    if (flow == Flow::Raise) return unknown(pending_ ? pending_->type + ": " + pending_->message : "exception", site);
    return make_list(std::move(yielded));
  }
  Flow flow = exec_block(def.body, frame);
  if (flow == Flow::Raise) return unknown(pending_ ? pending_->type + ": " + pending_->message : "exception", site);
  if (flow == Flow::Return) return frame.return_value;
  return Value::none();
}

Value Interpreter::instantiate(const std::shared_ptr<ClassObj>& cls, CallArgs args, const ir::Span& site) {
  // Built-in classes whose call is not instance creation (list, dict, int, ...) are natives.
  for (ClassObj* c : cls->mro)
    if (c->qualname == "abc.ABC") {
      // Python refuses to instantiate a class whose abstract methods are not all overridden.
      std::vector<std::string> seen;
      for (ClassObj* k : cls->mro)
        for (auto& [attr, v] : k->attributes) {
          if (std::find(seen.begin(), seen.end(), attr) != seen.end()) continue;
          seen.push_back(attr);
          auto* f = v.as<FunctionObj>();
          if (f && f->is_abstract)
            return raise("TypeError", "Can't instantiate abstract class " + cls->name + " with abstract method " + attr, site);
        }
      break;
    }
  auto inst = std::make_shared<InstanceObj>();
  inst->cls = cls;
  inst->id = next_id();
  instances_.push_back(inst);
  if (cls->is_module) {
    inst->module = std::make_unique<ModuleData>();
    inst->module->span = site;
  }
  Value self = Value::object(inst);
  if (cls->is_exception) inst->set_attribute("args", make_tuple(args.positional));
  bool found = false;
  Value init = class_attribute(cls, &self, "__init__", 0, site, found);
  if (!found || (init.as<NativeObj>() == nullptr && init.as<BoundMethodObj>() == nullptr && !init.is_unknown())) {
    return self;
  }
  if (cls->is_module) constructing_.push_back(inst.get());
  Value result = call(init, std::move(args), site);
  if (cls->is_module) constructing_.pop_back();
  if (pending_) return result;
  return self;
}

// ---------------------------------------------------------------------------------------------
// Attributes

Value Interpreter::class_attribute(const std::shared_ptr<ClassObj>& cls, const Value* self, const std::string& name,
                                   size_t mro_start, const ir::Span& site, bool& found) {
  found = false;
  for (size_t i = mro_start; i < cls->mro.size(); ++i) {
    const Value* v = cls->mro[i]->find(name);
    if (!v) continue;
    found = true;
    if (v->kind != Value::Kind::Obj) return *v;
    switch (v->obj->kind) {
      case ObjKind::Function:
      case ObjKind::Native:
        if (self) {
          auto m = std::make_shared<BoundMethodObj>();
          m->self = *self;
          m->function = *v;
          return Value::object(m);
        }
        return *v;
      case ObjKind::StaticMethod: return static_cast<WrapperObj*>(v->obj.get())->function;
      case ObjKind::ClassMethod: {
        auto m = std::make_shared<BoundMethodObj>();
        m->self = Value::object(cls);
        m->function = static_cast<WrapperObj*>(v->obj.get())->function;
        return Value::object(m);
      }
      case ObjKind::Property:
        if (self) return call(static_cast<WrapperObj*>(v->obj.get())->function, CallArgs{{*self}, {}}, site);
        return *v;
      default: return *v;
    }
  }
  // A class with a base we cannot see may inherit anything from it.
  if (cls->has_unknown_base) {
    found = true;
    return unknown("'" + name + "' may come from a base class of " + cls->name + " that is not analysed", site, true);
  }
  return Value::none();
}

Value Interpreter::module_get(InstanceObj& m, const std::string& name, bool& found) {
  found = true;
  if (auto* p = ModuleData::find(m.module->parameters, name)) return *p ? Value::object(*p) : Value::none();
  if (auto* b = ModuleData::find(m.module->buffers, name)) return *b ? Value::object(*b) : Value::none();
  if (auto* c = ModuleData::find(m.module->modules, name)) return *c ? Value::object(*c) : Value::none();
  // nn.Module.training: modules are built in training mode; forward is traced for inference (eval()).
  if (name == "training") return Value::boolean(tracer_ == nullptr);
  found = false;
  return Value::none();
}

Value Interpreter::instance_attribute(const Value& object, const std::string& name, const ir::Span& site, bool user_getattr) {
  auto* inst = static_cast<InstanceObj*>(object.obj.get());
  const bool dunder = name.size() > 4 && name[0] == '_' && name[1] == '_';
  if (dunder && name == "__class__") return Value::object(inst->cls);
  if (dunder && name == "__dict__") {
    if (tracer_) tracer_->untracked_state();  // reads and writes through it are not seen one by one
    return Value::object(inst->dict);
  }
  // Data descriptors (properties) first, then the instance dict, then the class, then
  // nn.Module's registries (its __getattr__).
  if (inst->cls->lookup_property(name)) {
    bool found = false;
    return class_attribute(inst->cls, &object, name, 0, site, found);
  }
  if (tracer_) tracer_->attribute_read(*inst, name);
  if (Value* v = inst->find_attribute(name)) return *v;
  if (inst->module) {
    bool found = false;
    Value v = module_get(*inst, name, found);
    if (found) return v;
    if (name == "_parameters" || name == "_buffers" || name == "_modules") {
      // A read-only snapshot of nn.Module's registry (writes through it are not seen).
      auto d = std::make_shared<DictObj>();
      d->ordered = true;
      auto add = [&](auto& list) {
        for (auto& [k, obj] : list) d->set(Value::str(k), obj ? Value::object(obj) : Value::none());
      };
      if (name == "_parameters") add(inst->module->parameters);
      else if (name == "_buffers") add(inst->module->buffers);
      else add(inst->module->modules);
      return Value::object(d);
    }
  }
  bool found = false;
  Value v = class_attribute(inst->cls, &object, name, 0, site, found);
  if (found) return v;
  if (inst->module) {
    if (const NativeFn* fn = method("module", name)) return native("nn.Module." + name, *fn, object);
  }
  if (user_getattr) {
    Value getattr = class_attribute(inst->cls, &object, "__getattr__", 0, site, found);
    if (found) return call(getattr, CallArgs{{Value::str(name)}, {}}, site);
  }
  return raise("AttributeError", "'" + inst->cls->name + "' object has no attribute '" + name + "'", site);
}

Value Interpreter::generic_get_attribute(const Value& object, const std::string& name, const ir::Span& site) {
  if (object.as<InstanceObj>()) return instance_attribute(object, name, site);
  return get_attribute(object, name, site);
}

Value Interpreter::get_attribute(const Value& object, const std::string& name, const ir::Span& site) {
  if (object.is_unknown()) return object;
  if (auto* inst = object.as<InstanceObj>(); inst && inst->cls->custom_getattribute) {
    bool found = false;
    Value hook = class_attribute(inst->cls, &object, "__getattribute__", 0, site, found);
    return call(hook, CallArgs{{Value::str(name)}, {}}, site);
  }
  if (object.kind != Value::Kind::Obj) {
    std::string receiver = type_name(object);
    if (const NativeFn* fn = method(receiver, name)) return native(receiver + "." + name, *fn, object);
    if (const NativeFn* fn = method("@" + receiver, name)) {
      CallArgs none;
      return (*fn)(*this, object, none, site);
    }
    return raise("AttributeError", "'" + receiver + "' object has no attribute '" + name + "'", site);
  }
  switch (object.obj->kind) {
    case ObjKind::Instance: return instance_attribute(object, name, site);
    case ObjKind::Class: {
      auto cls = std::static_pointer_cast<ClassObj>(object.obj);
      if (name == "__name__") return Value::str(cls->name);
      if (name == "__qualname__") return Value::str(cls->qualname);
      bool found = false;
      if (name == "__module__") {
        Value v = class_attribute(cls, nullptr, name, 0, site, found);
        if (found) return v;
        if (!cls->module_name.empty()) return Value::str(cls->module_name);
        // shardlens' own classes are named by their qualified names (torch.nn.Linear).
        const size_t dot = cls->qualname.rfind('.');
        return Value::str(dot == std::string::npos ? "builtins" : cls->qualname.substr(0, dot));
      }
      Value v = class_attribute(cls, nullptr, name, 0, site, found);
      if (found) return v;
      // nn.Module's own methods, read from a class (`@wraps(torch.nn.Module.cuda)` in diffusers,
      // `nn.Module.to(self, ...)`): unbound, the instance first.
      if (const NativeFn* fn = method("module", name);
          fn && std::find(cls->mro.begin(), cls->mro.end(), module_base().get()) != cls->mro.end()) {
        NativeFn bound = *fn;
        return native("torch.nn.Module." + name, [bound, name](Interpreter& in, const Value&, CallArgs& a, const ir::Span& at) {
          if (a.positional.empty()) return in.raise("TypeError", "Module." + name + "() needs the module as its first argument", at);
          Value self = a.positional.front();
          CallArgs rest{{a.positional.begin() + 1, a.positional.end()}, a.keywords};
          return bound(in, self, rest, at);
        });
      }
      return raise("AttributeError", "type object '" + cls->name + "' has no attribute '" + name + "'", site);
    }
    case ObjKind::Super: {
      auto* sup = static_cast<SuperObj*>(object.obj.get());
      std::shared_ptr<ClassObj> cls;
      if (auto* inst = sup->self.as<InstanceObj>()) cls = inst->cls;
      else if (sup->self.as<ClassObj>()) cls = std::static_pointer_cast<ClassObj>(sup->self.obj);
      if (!cls) return unknown("super() of an unknown object", site);
      size_t start = 0;
      for (size_t i = 0; i < cls->mro.size(); ++i)
        if (cls->mro[i] == sup->after) start = i + 1;
      bool found = false;
      Value v = class_attribute(cls, &sup->self, name, start, site, found);
      if (found) return v;
      if (name == "__init__") return native("object.__init__", [](Interpreter&, const Value&, CallArgs&, const ir::Span&) { return Value::none(); });
      auto* inst = sup->self.as<InstanceObj>();
      bool builtin_base = false;
      for (size_t i = start; i < cls->mro.size() && inst && inst->module; ++i) 
        builtin_base |= cls->mro[i]->is_builtin && cls->mro[i]->name != "Module" && cls->mro[i]->name != "object";
      if (name == "forward" && tracer_ && builtin_base) {
        Value self = sup->self;
        return native("forward", [self](Interpreter& in, const Value&, CallArgs& args, const ir::Span& at) {
          return in.tracer_->builtin_forward(in, *self.as<InstanceObj>(), args, at);
        });
      }
      // object.__getattribute__ (and nn.Module.__getattr__, which finds parameters, buffers and
      // submodules): a class that overrides __getattr__ ends with `return super().__getattr__(name)`
      // (diffusers' ModelMixin).
      if (name == "__getattr__" || name == "__getattribute__") {
        Value self = sup->self;
        return native("object.__getattribute__", [self](Interpreter& in, const Value&, CallArgs& args, const ir::Span& at) {
          if (args.positional.empty() || !args.positional[0].is_str()) return in.raise("TypeError", "attribute name must be a string", at);
          if (!self.as<InstanceObj>()) return in.get_attribute(self, args.positional[0].s, at);
          return in.instance_attribute(self, args.positional[0].s, at, /*user_getattr=*/false);
        });
      }
      return raise("AttributeError", "'super' object has no attribute '" + name + "'", site);
    }
    case ObjKind::Namespace: {
      auto* ns = static_cast<NamespaceObj*>(object.obj.get());
      if (ns->scope) {  // a module read from source
        auto it = ns->scope->vars.find(name);
        if (it != ns->scope->vars.end()) return it->second;
        if (ns->replaced_by) return get_attribute(*ns->replaced_by, name, site);
        if (auto hook = ns->scope->vars.find("__getattr__"); hook != ns->scope->vars.end())  // PEP 562
          return call(hook->second, CallArgs{{Value::str(name)}, {}}, site);
        if (name == "__dict__") {
          auto d = std::make_shared<DictObj>();
          for (auto& [k, v] : ns->scope->vars) d->set(Value::str(k), v);
          return Value::object(d);
        }
        // A library model covers what model code needs of a library, not all of it: a name it
        // lacks is unknown (and says so), where a user's own module would raise.
        auto file = ns->scope->vars.find("__file__");
        if (file != ns->scope->vars.end() && file->second.is_str() && file->second.s.rfind(kLibraryRoot, 0) == 0)
          return unknown("'" + ns->qualname + "." + name + "' is not in shardlens' library model of " + ns->qualname, site, true);
        return raise("AttributeError", "module '" + ns->qualname + "' has no attribute '" + name + "'", site);
      }
      if (ns->qualname == "sys" && name == "path" && sys_path_.as<ListObj>()) return sys_path_;
      if (ns->qualname == "sys" && name == "modules") {
        if (!sys_modules_.as<DictObj>()) sys_modules_ = Value::object(std::make_shared<DictObj>());
        return sys_modules_;
      }
      std::string qual = ns->qualname + "." + name;
      if (const Value* v = builtin(qual)) return *v;
      if (builtins_->namespaces.count(qual)) return namespace_value(qual);
      // torch.nn.modules.<file>.<Class> is torch.nn.<Class>.
      if (ns->qualname.rfind("torch.nn.modules", 0) == 0) {
        if (const Value* v = builtin("torch.nn." + name)) return *v;
        if (!name.empty() && islower(static_cast<unsigned char>(name[0]))) return namespace_value(qual);
      }
      std::string root = ns->qualname.substr(0, ns->qualname.find('.'));
      if (builtins_->namespaces.count(root))
        return unknown("'" + qual + "' is not modelled by shardlens", site, true);
      return unknown("'" + qual + "' comes from '" + ns->qualname + "', which shardlens does not analyse", site, true);
    }
    case ObjKind::Function: {
      auto* f = static_cast<FunctionObj*>(object.obj.get());
      if (name == "__name__") return Value::str(f->def->name);
      if (name == "__qualname__") return Value::str(f->qualname);
      if (name == "__code__" || name == "__defaults__" || name == "__kwdefaults__") return function_introspection(*f, name, site);
      if (f->attributes)
        if (const Value* v = f->attributes->find(Value::str(name))) return *v;
      // A function's own attributes are all in `attributes` (set by assignment, setattr or
      // functools.wraps): any other name is missing, as `getattr(f, "__wrapped__", f)` expects.
      // Dunders Python gives every function (__module__, __doc__, __annotations__, ...) stay unknown.
      bool dunder = name.size() > 4 && name.rfind("__", 0) == 0 && name.compare(name.size() - 2, 2, "__") == 0;
      if (!dunder || name == "__wrapped__" || name == "__self__" || name == "__func__")
        return raise("AttributeError", "'function' object has no attribute '" + name + "'", site);
      return unknown("function attribute '" + name + "'", site);
    }
    case ObjKind::Property:
      if (name == "setter" || name == "getter") {
        auto prop = std::static_pointer_cast<WrapperObj>(object.obj);
        return native("property." + name, [prop, name](Interpreter& in, const Value&, CallArgs& a, const ir::Span& site) {
          if (a.positional.empty()) return in.raise("TypeError", "property." + name + "() takes a function", site);
          auto copy = std::make_shared<WrapperObj>(ObjKind::Property);
          copy->function = name == "getter" ? a.positional[0] : prop->function;
          copy->setter = name == "setter" ? a.positional[0] : prop->setter;
          return Value::object(copy);
        });
      }
      break;
    case ObjKind::Native: {
      auto* n = static_cast<NativeObj*>(object.obj.get());
      if (const Value* v = builtin(n->name + "." + name)) return *v;
      if (name == "__name__") return Value::str(n->name.substr(n->name.rfind('.') + 1));
      break;
    }
    case ObjKind::BoundMethod:
      if (name == "__self__") return static_cast<BoundMethodObj*>(object.obj.get())->self;
      if (name == "__func__") return static_cast<BoundMethodObj*>(object.obj.get())->function;
      return get_attribute(static_cast<BoundMethodObj*>(object.obj.get())->function, name, site);
    default: break;
  }
  std::string receiver = type_name(object);
  if (object.obj->kind == ObjKind::Tensor) {
    receiver = "tensor";
    // What model code set on it, or nothing: torch.Tensor has a fixed set of attributes.
    if (!is_tensor_attribute(name)) {
      const auto* t = static_cast<TensorObj*>(object.obj.get());
      if (t->attributes)
        if (const Value* v = t->attributes->find(Value::str(name))) return *v;
      return raise("AttributeError", "'Tensor' object has no attribute '" + name + "'", site);
    }
  }
  // While tracing, `x.T` / `x.mT` are the permutes they name: the planner must see them (a weight
  // read as `self.weight.T` would otherwise be a fresh tensor, stored whole and sliced for free).
  // H / mH are the same on real tensors.
  if (tracer_ && receiver == "tensor" && (name == "T" || name == "mT" || name == "H" || name == "mH"))
    if (const auto& shape = static_cast<TensorObj*>(object.obj.get())->shape; shape && shape->size() >= 2) {
      std::vector<Value> order;
      for (size_t i = 0; i < shape->size(); ++i) order.push_back(Value::integer(static_cast<int64_t>(i)));
      if (name == "T" || name == "H") std::reverse(order.begin(), order.end());
      else std::swap(order[order.size() - 2], order.back());
      return call(get_attribute(object, "permute", site), CallArgs{std::move(order), {}}, site);
    }
  if (const NativeFn* fn = method(receiver, name)) return native(receiver + "." + name, *fn, object);
  if (const NativeFn* fn = method("@" + receiver, name)) {
    CallArgs none;
    return (*fn)(*this, object, none, site);
  }
  // While tracing, any tensor method reaches the tracer, which models it or records an unknown op.
  if (receiver == "tensor" && tracer_ && !name.empty() && name[0] != '_') return native("tensor." + name, NativeFn(), object);
  if (receiver == "tensor") return unknown("tensor attribute '" + name + "' is not modelled", site);
  return raise("AttributeError", "'" + receiver + "' object has no attribute '" + name + "'", site);
}

void Interpreter::module_set(InstanceObj& m, const std::string& name, Value value, const ir::Span& site) {
  auto& md = *m.module;
  auto* tensor = value.as<TensorObj>();
  auto* child = value.as<InstanceObj>();
  auto remove_from = [&](auto& list) {
    list.erase(std::remove_if(list.begin(), list.end(), [&](auto& kv) { return kv.first == name; }), list.end());
  };
  auto remove_buffer = [&] {
    for (size_t i = 0; i < md.buffers.size(); ++i)
      if (md.buffers[i].first == name) {
        md.buffers.erase(md.buffers.begin() + static_cast<std::ptrdiff_t>(i));
        md.buffer_persistent.erase(md.buffer_persistent.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
  };
  // A parameter or child module takes the name from whatever else held it, in its slot if it had one.
  auto store = [&](auto& list, auto& other_list, auto object) {
    m.erase_attribute(name);
    remove_buffer();
    remove_from(other_list);
    if (auto* slot = ModuleData::find(list, name)) *slot = object;
    else list.emplace_back(name, object);
  };
  // Any other value in a parameter's or child module's slot: None empties it, an unknown value is
  // noted (and empties a module's slot), anything else is a TypeError.
  auto assign_to_slot = [&](auto& slot, const std::string& what, bool unknown_empties, const std::string& type_error) {
    if (value.is_none()) { slot = nullptr; return; }
    if (value.is_unknown()) {
      note(what + " '" + name + "' could not be resolved", value.unknown->reason, site);
      if (unknown_empties) slot = nullptr;
      return;
    }
    raise("TypeError", type_error, site);
  };
  if (tensor && tensor->is_parameter) return store(md.parameters, md.modules, std::static_pointer_cast<TensorObj>(value.obj));
  if (auto* slot = ModuleData::find(md.parameters, name))
    return assign_to_slot(*slot, "parameter", false, "cannot assign '" + type_name(value) + "' as parameter '" + name +
                                                         "' (torch.nn.Parameter or None expected)");
  if (child && child->module) return store(md.modules, md.parameters, std::static_pointer_cast<InstanceObj>(value.obj));
  if (auto* slot = ModuleData::find(md.modules, name))
    return assign_to_slot(*slot, "submodule", true, "cannot assign '" + type_name(value) + "' as child module '" + name + "'");
  if (auto* slot = ModuleData::find(md.buffers, name)) {
    if (tensor) { *slot = std::static_pointer_cast<TensorObj>(value.obj); return; }
    if (value.is_none()) { *slot = nullptr; return; }
    if (value.is_unknown()) { note("buffer '" + name + "' could not be resolved", value.unknown->reason, site); return; }
    raise("TypeError", "cannot assign '" + type_name(value) + "' as buffer '" + name + "'", site);
    return;
  }
  if (value.is_unknown() && value.unknown->maybe_module)
    note("attribute '" + name + "' of " + m.cls->name + " could not be resolved (it may be a submodule)",
         value.unknown->reason, site);
  m.set_attribute(name, std::move(value));
}

void Interpreter::delete_attribute(const Value& object, const std::string& name, const ir::Span& site) {
  auto* inst = object.as<InstanceObj>();
  if (!inst) return;
  if (tracer_) tracer_->mutated(inst);
  if (!inst->find_attribute(name) && !(inst->module && (ModuleData::find(inst->module->parameters, name) ||
                                                        ModuleData::find(inst->module->buffers, name) ||
                                                        ModuleData::find(inst->module->modules, name)))) {
    raise("AttributeError", name, site);
    return;
  }
  inst->erase_attribute(name);
  if (!inst->module) return;
  auto erase = [&](auto& list) {
    list.erase(std::remove_if(list.begin(), list.end(), [&](auto& kv) { return kv.first == name; }), list.end());
  };
  erase(inst->module->parameters);
  erase(inst->module->modules);
  for (size_t i = 0; i < inst->module->buffers.size(); ++i)
    if (inst->module->buffers[i].first == name) {
      inst->module->buffers.erase(inst->module->buffers.begin() + static_cast<std::ptrdiff_t>(i));
      inst->module->buffer_persistent.erase(inst->module->buffer_persistent.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
}

void Interpreter::set_attribute(const Value& object, const std::string& name, Value value, const ir::Span& site) {
  if (auto* inst = object.as<InstanceObj>(); inst && inst->cls->custom_setattr) {
    bool found = false;
    Value hook = class_attribute(inst->cls, &object, "__setattr__", 0, site, found);
    call(hook, CallArgs{{Value::str(name), std::move(value)}, {}}, site);
    return;
  }
  generic_set_attribute(object, name, std::move(value), site);
}

void Interpreter::generic_set_attribute(const Value& object, const std::string& name, Value value, const ir::Span& site) {
  if (object.is_unknown()) return;
  if (tracer_ && object.kind == Value::Kind::Obj) tracer_->mutated(object.obj.get());
  if (auto* inst = object.as<InstanceObj>()) {
    if (const Value* p = inst->cls->lookup_property(name)) {
      const Value& setter = static_cast<WrapperObj*>(p->obj.get())->setter;
      if (setter.kind == Value::Kind::None) raise("AttributeError", "can't set attribute '" + name + "'", site);
      else call(setter, CallArgs{{object, std::move(value)}, {}}, site);
      return;
    }
    if (!inst->module && inst->cls->has_unknown_base) {
      // A class deriving from something we cannot see that registers a layer or parameter is,
      // in practice, an nn.Module (e.g. a PreTrainedModel from another package).
      auto* t = value.as<TensorObj>();
      auto* c = value.as<InstanceObj>();
      if ((t && t->is_parameter) || (c && c->module)) {
        inst->module = std::make_unique<ModuleData>();
        inst->module->span = site;
      }
    }
    if (inst->module) return module_set(*inst, name, std::move(value), site);
    inst->set_attribute(name, std::move(value));
    return;
  }
  if (auto* cls = object.as<ClassObj>()) {
    if (cls->is_builtin) {
      note("assignment to an attribute of built-in class " + cls->name + " was ignored",
           "built-in classes are shared and read-only in the analyser", site);
      return;
    }
    cls->set(name, std::move(value));
    return;
  }
  if (auto* ns = object.as<NamespaceObj>(); ns && ns->scope) {  // module.NAME = value
    ns->scope->vars[name] = std::move(value);
    return;
  }
  if (auto* f = object.as<FunctionObj>()) {
    if (!f->attributes) f->attributes = std::make_shared<DictObj>();
    f->attributes->set(Value::str(name), std::move(value));
    return;
  }
  if (auto* t = object.as<TensorObj>()) {
    if (name == "requires_grad") {
      if (auto b = truth(value)) t->requires_grad = *b;
    } else if (!is_tensor_attribute(name)) {
      if (!t->attributes) t->attributes = std::make_shared<DictObj>();
      t->attributes->set(Value::str(name), std::move(value));
    }
    return;
  }
}

// ---------------------------------------------------------------------------------------------
// Expressions

Value Interpreter::eval(const Expr& e, Frame& frame) {
  if (!step()) return unknown("analysis budget exhausted", absolute(e.span, frame.unit));
  auto site = [&] { return absolute(e.span, frame.unit); };
  switch (e.kind) {
    case ExprKind::Name: return lookup_name(e.name, frame, site());
    case ExprKind::Int: {
      if (e.name.empty()) return Value::integer(e.int_value);
      size_t colon = e.name.find(':');  // a literal beyond int64 (lowering.cpp)
      auto big = ir::BigInt::parse(std::string_view(e.name).substr(colon + 1), std::stoi(e.name.substr(0, colon)));
      if (!big) return unknown("integer literal " + e.name.substr(colon + 1), site());
      if (big->bit_length() > kMaxIntBits) return unknown("an integer literal beyond the " + std::to_string(kMaxIntBits) + "-bit limit", site());
      return Value::big_integer(*big);
    }
    case ExprKind::Float: return Value::floating(e.float_value);
    case ExprKind::Str: return Value::str(e.name);
    case ExprKind::FStr: return eval_fstring(e, frame);
    case ExprKind::Bool: return Value::boolean(e.int_value != 0);
    case ExprKind::NoneLit: return Value::none();
    case ExprKind::EllipsisLit: return Value::ellipsis();
    case ExprKind::Attribute: {
      Value obj = eval(*e.items[0], frame);
      if (pending_) return unknown("exception", site());
      return get_attribute(obj, e.name, site());
    }
    case ExprKind::Subscript: {
      Value obj = eval(*e.items[0], frame);
      Value idx = eval(*e.items[1], frame);
      if (pending_) return unknown("exception", site());
      uint64_t made_since = Object::serials_issued();
      Value r = eval_subscript(obj, idx, site());  // a slice is a copy: charged
      if (!charge_value(r, made_since)) return unknown("analysis memory budget exhausted", site());
      return r;
    }
    case ExprKind::Slice: {
      // A bound that is a one-element integer tensor of known value slices by that value (its
      // __index__): Wan's `u[:n] for u, n in zip(k, k_lens)`.
      auto bound = [&](const Expr& x) {
        Value v = eval(x, frame);
        if (auto* t = v.as<TensorObj>(); t && t->values && t->values->size() == 1 && t->dtype.rfind("int", 0) == 0)
          return Value::integer(static_cast<int64_t>((*t->values)[0]));
        return v;
      };
      auto s = std::make_shared<SliceObj>();
      if (e.items[0]) s->lower = bound(*e.items[0]);
      if (e.items[1]) s->upper = bound(*e.items[1]);
      if (e.items[2]) s->step = bound(*e.items[2]);
      return Value::object(s);
    }
    case ExprKind::Call: return eval_call(e, frame);
    case ExprKind::Keyword:
    case ExprKind::Starred:
    case ExprKind::DoubleStar: return unknown("misplaced argument syntax", site());
    case ExprKind::BinOp: {
      Value a = eval(*e.items[0], frame);
      Value b = eval(*e.items[1], frame);
      if (pending_) return unknown("exception", site());
      return binary(e.name, a, b, site());
    }
    case ExprKind::UnaryOp: {
      Value v = eval(*e.items[0], frame);
      return unary(e.name, v, site());
    }
    case ExprKind::BoolOp: {
      Value v = eval(*e.items[0], frame);
      for (size_t i = 1; i < e.items.size(); ++i) {
        auto t = truth(v);
        if (!t) return v.is_unknown() ? v : unknown("truth value not known", site());
        if ((e.name == "and" && !*t) || (e.name == "or" && *t)) return v;
        v = eval(*e.items[i], frame);
      }
      return v;
    }
    case ExprKind::Compare: {
      Value left = eval(*e.items[0], frame);
      Value result = Value::boolean(true);
      for (size_t i = 0; i < e.ops.size() && i + 1 < e.items.size(); ++i) {
        Value right = eval(*e.items[i + 1], frame);
        result = compare(e.ops[i], left, right, site());
        auto t = truth(result);
        if (!t || !*t) return result;
        left = right;
      }
      return result;
    }
    case ExprKind::IfExp: {
      Value test = eval(*e.items[1], frame);
      auto t = truth(test);
      if (!t) return test.is_unknown() ? test : unknown("condition could not be evaluated", site());
      return eval(*e.items[*t ? 0 : 2], frame);
    }
    case ExprKind::Tuple:
    case ExprKind::List:
    case ExprKind::Set: {
      std::vector<Value> items;
      for (const auto& item : e.items) {
        if (item->kind == ExprKind::Starred) {
          Value v = eval(*item->items[0], frame);
          Value why;
          auto seq = iterate(v, site(), &why);
          if (!seq) return why.is_unknown() ? why : unknown("cannot unpack", site());
          if (!charge_memory(seq->size() * sizeof(Value))) return unknown("analysis memory budget exhausted", site());
          items.insert(items.end(), seq->begin(), seq->end());
        } else {
          items.push_back(eval(*item, frame));
        }
      }
      if (e.kind == ExprKind::Set) {
        auto s = std::make_shared<DictObj>(true);
        for (auto& v : items) s->set(v, Value::none());
        return Value::object(s);
      }
      return make_list(std::move(items), e.kind == ExprKind::Tuple);
    }
    case ExprKind::Dict: {
      auto d = std::make_shared<DictObj>();
      for (size_t i = 0; i < e.items.size();) {
        if (e.items[i]->kind == ExprKind::DoubleStar) {
          Value v = eval(*e.items[i]->items[0], frame);
          if (auto* other = v.as<DictObj>()) {
            for (auto& kv : other->entries) d->set(kv.first, kv.second);
          } else {
            return v.is_unknown() ? v : unknown("**-splat of a non-dict", site());
          }
          ++i;
          continue;
        }
        if (i + 1 >= e.items.size()) break;
        Value k = eval(*e.items[i], frame);
        Value v = eval(*e.items[i + 1], frame);
        d->set(k, v);
        i += 2;
      }
      return Value::object(d);
    }
    case ExprKind::ListComp:
    case ExprKind::SetComp:
    case ExprKind::GenExp:
    case ExprKind::DictComp: return eval_comprehension(e, frame);
    case ExprKind::Lambda: return make_function(e.lambda, frame, "<lambda>");
    case ExprKind::NamedExpr: {
      Value v = eval(*e.items[0], frame);
      bind_name(e.name, v, frame);
      return v;
    }
    case ExprKind::Yield: {
      if (yields_.empty()) return unknown("yield outside a generator call", site());
      Value v = e.items[0] ? eval(*e.items[0], frame) : Value::none();
      if (e.name == "from") {
        Value why;
        auto items = iterate(v, site(), &why);
        if (!items) {
          note("yield from a value that could not be evaluated", why.is_unknown() ? why.unknown->reason : "not iterable", site());
          return Value::none();
        }
        yields_.back()->insert(yields_.back()->end(), items->begin(), items->end());
      } else {
        yields_.back()->push_back(v);
      }
      return Value::none();  // what send() would deliver: nothing, statically
    }
    case ExprKind::Unsupported: return unknown("unsupported syntax: " + e.name, site());
  }
  return unknown("unsupported expression", site());
}

Value Interpreter::eval_fstring(const Expr& e, Frame& frame) {
  std::string out;
  for (size_t i = 0; i < e.items.size(); ++i) {
    const std::string& spec = i < e.ops.size() ? e.ops[i] : std::string();
    if (spec == "\x01") {
      out += e.items[i]->name;
      continue;
    }
    Value v = eval(*e.items[i], frame);
    if (v.is_unknown()) return v;
    if (spec.empty()) {
      out += to_str(v);
      continue;
    }
    // Format spec: reuse str.format's implementation through the "str" method table.
    std::string fmt = "{" + spec + "}";
    if (const NativeFn* f = method("str", "format")) {
      CallArgs args{{v}, {}};
      Value formatted = (*f)(*this, Value::str(fmt), args, absolute(e.span, frame.unit));
      if (formatted.is_str()) {
        out += formatted.s;
        continue;
      }
    }
    out += to_str(v);
  }
  if (!charge_memory(out.size())) return unknown("analysis memory budget exhausted", absolute(e.span, frame.unit));
  return Value::str(out);
}

Value Interpreter::eval_comprehension(const Expr& e, Frame& frame) {
  Frame inner = frame;
  inner.scope = std::make_shared<Scope>();
  inner.scope->globals = globals_of(frame);
  inner.scope->parent = frame.scope.get() == inner.scope->globals ? nullptr : frame.scope;
  inner.is_class_body = false;
  std::vector<Value> out;
  auto dict = std::make_shared<DictObj>(e.kind == ExprKind::SetComp);
  Value failure;
  std::function<bool(size_t)> loop = [&](size_t level) -> bool {
    if (level == e.comprehensions.size()) {
      if (e.kind == ExprKind::DictComp) dict->set(eval(*e.items[0], inner), eval(*e.items[1], inner));
      else if (e.kind == ExprKind::SetComp) dict->set(eval(*e.items[0], inner), Value::none());
      else out.push_back(eval(*e.items[0], inner));
      return !pending_;
    }
    const Comprehension& c = e.comprehensions[level];
    // The first iterable is evaluated in the enclosing scope, as Python does.
    Value iterable = eval(*c.iter, level == 0 ? frame : inner);
    Value why;
    auto items = iterate(iterable, absolute(c.iter->span, frame.unit), &why);
    if (!items) {
      failure = why.is_unknown() ? why : unknown("comprehension over a non-iterable", absolute(c.iter->span, frame.unit));
      return false;
    }
    for (auto& item : *items) {
      assign(*c.target, item, inner);
      bool keep = true;
      for (const auto& cond : c.conditions) {
        auto t = truth(eval(*cond, inner));
        if (!t) {
          failure = unknown("comprehension condition could not be evaluated", absolute(cond->span, frame.unit));
          return false;
        }
        if (!*t) { keep = false; break; }
      }
      if (keep && !loop(level + 1)) return false;
    }
    return true;
  };
  if (!loop(0)) return failure.is_unknown() ? failure : unknown("exception in comprehension", absolute(e.span, frame.unit));
  if (!charge_memory((out.size() + 2 * dict->entries.size()) * sizeof(Value)))
    return unknown("analysis memory budget exhausted", absolute(e.span, frame.unit));
  if (e.kind == ExprKind::DictComp || e.kind == ExprKind::SetComp) return Value::object(dict);
  return make_list(std::move(out));
}

static int64_t normalise_index(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

// List[int], Optional[X], Dict[str, Any]: typing's alias, read through __origin__ and __args__
// (Optional[X] is Union[X, None], as typing spells it).
Value Interpreter::generic_alias(ClassObj& origin, const Value& index, const ir::Span& site) {
  const Value* alias_class = builtin("typing._GenericAlias");
  if (!alias_class || !alias_class->as<ClassObj>()) return unknown("generic alias", site);
  std::vector<Value> args;
  if (auto* items = index.kind == Value::Kind::Obj && index.obj->kind == ObjKind::Tuple ? TupleView::of(index) : nullptr) args = items->items;
  else args.push_back(index);
  if (origin.qualname == "typing.Optional") {
    if (const Value* none_type = builtin("builtins.NoneType")) args.push_back(*none_type);
  }
  Value alias = instantiate(std::static_pointer_cast<ClassObj>(alias_class->obj), CallArgs{}, site);
  auto* inst = alias.as<InstanceObj>();
  if (!inst) return unknown("generic alias", site);
  bool union_like = origin.qualname == "typing.Optional" || origin.qualname == "typing.Union";
  inst->set_attribute("__origin__", union_like ? *builtin("typing.Union") : Value::object(std::static_pointer_cast<ClassObj>(origin.shared_from_this())));
  inst->set_attribute("__args__", make_tuple(std::move(args)));
  return alias;
}

Value Interpreter::eval_subscript(const Value& target, const Value& index, const ir::Span& site) {
  if (target.is_unknown()) return target;
  if (index.is_unknown()) return index;
  if (auto* l = TupleView::of(target)) {
    int64_t n = static_cast<int64_t>(l->items.size());
    if (index.is_int()) {
      int64_t i = normalise_index(index.as_int(), n);
      if (i < 0 || i >= n) return raise("IndexError", "index out of range", site);
      return l->items[i];
    }
    if (auto* s = index.as<SliceObj>()) {
      bool ok;
      auto idx = slice_indices(*s, n, ok);
      if (!ok) return unknown("slice bounds could not be evaluated", site);
      std::vector<Value> out;
      for (int64_t i : idx) out.push_back(l->items[i]);
      return make_list(std::move(out), target.obj->kind == ObjKind::Tuple);
    }
    return raise("TypeError", "indices must be integers or slices", site);
  }
  if (target.is_str()) {
    int64_t n = static_cast<int64_t>(target.s.size());
    if (index.is_int()) {
      int64_t i = normalise_index(index.as_int(), n);
      if (i < 0 || i >= n) return raise("IndexError", "string index out of range", site);
      return Value::str(std::string(1, target.s[i]));
    }
    if (auto* s = index.as<SliceObj>()) {
      bool ok;
      auto idx = slice_indices(*s, n, ok);
      if (!ok) return unknown("slice bounds could not be evaluated", site);
      std::string out;
      for (int64_t i : idx) out.push_back(target.s[i]);
      return Value::str(out);
    }
  }
  if (auto* d = target.as<DictObj>()) {
    if (const Value* v = d->find(index)) return *v;
    if (d->default_factory) {
      Value made = call(*d->default_factory, CallArgs{}, site);
      if (tracer_) tracer_->mutated(d);
      d->set(index, made);
      return made;
    }
    return raise("KeyError", repr(index), site);
  }
  if (auto* r = target.as<RangeObj>(); r && index.is_int()) {
    int64_t i = normalise_index(index.as_int(), r->size());
    if (i < 0 || i >= r->size()) return raise("IndexError", "range object index out of range", site);
    return Value::integer(r->start + i * r->step);
  }
  if (auto* inst = target.as<InstanceObj>()) {
    bool found = false;
    Value getitem = class_attribute(inst->cls, &target, "__getitem__", 0, site, found);
    if (found) return call(getitem, CallArgs{{index}, {}}, site);
  }
  if (auto* cls = target.as<ClassObj>()) {
    if (cls->is_enum && index.is_str()) {
      for (auto& m : cls->enum_members)
        if (m.as<InstanceObj>()->find_attribute("name")->s == index.s) return m;
      return raise("KeyError", index.s, site);
    }
    return generic_alias(*cls, index, site);  // List[int], Optional[X]
  }
  if (tracer_ && target.as<TensorObj>()) return tracer_->subscript(*this, target, index, site);
  if (const NativeFn* f = method(target.kind == Value::Kind::Obj && target.obj->kind == ObjKind::Tensor ? "tensor" : type_name(target), "__getitem__")) {
    CallArgs args{{index}, {}};
    return (*f)(*this, target, args, site);
  }
  return unknown("subscript of " + type_name(target) + " is not modelled", site);
}

// ---------------------------------------------------------------------------------------------
// Operators

std::optional<bool> Interpreter::truth(const Value& v) {
  switch (v.kind) {
    case Value::Kind::None: return false;
    case Value::Kind::Bool: return v.b;
    case Value::Kind::Int: return v.i != 0;
    case Value::Kind::BigInt: return true;  // never zero: zero fits in int64
    case Value::Kind::Float: return v.f != 0;
    case Value::Kind::Str: return !v.s.empty();
    case Value::Kind::Ellipsis: return true;
    case Value::Kind::Unknown: return std::nullopt;
    case Value::Kind::Obj: break;
  }
  if (auto* l = TupleView::of(v)) return !l->items.empty();
  if (auto* d = v.as<DictObj>()) return !d->entries.empty();
  if (v.obj->kind == ObjKind::Set) return !static_cast<DictObj*>(v.obj.get())->entries.empty();
  if (auto* r = v.as<RangeObj>()) return r->size() > 0;
  if (auto* t = v.as<TensorObj>()) {
    if (t->values && t->values->size() == 1) return (*t->values)[0] != 0;
    return std::nullopt;
  }
  if (auto* inst = v.as<InstanceObj>()) {
    bool found = false;
    Value len = class_attribute(inst->cls, &v, "__len__", 0, {}, found);
    if (found && !len.is_unknown()) {
      Value n = call(len, CallArgs{}, {});
      if (n.is_int()) return n.as_int() != 0;
      return std::nullopt;
    }
    return true;
  }
  return true;
}

std::optional<bool> Interpreter::equal(const Value& a, const Value& b) {
  if (a.is_unknown() || b.is_unknown()) return std::nullopt;
  for (const Value* v : {&a, &b})  // class Color(str, Enum): Color.RED == "red"
    if (auto* inst = v->as<InstanceObj>(); inst && inst->cls->enum_value_equality) {
      const Value& other = v == &a ? b : a;
      if (!other.as<InstanceObj>())
        if (Value* value = inst->find_attribute("value")) return equal(*value, other);
    }
  if (a.is_integral() && b.is_integral()) return compare_ints(a, b) == 0;
  if ((a.is_integral() || a.kind == Value::Kind::Float) && (b.is_integral() || b.kind == Value::Kind::Float))
    return a.as_float() == b.as_float();
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::None:
    case Value::Kind::Ellipsis: return true;
    case Value::Kind::Str: return a.s == b.s;
    default: break;
  }
  auto* la = TupleView::of(a);
  auto* lb = TupleView::of(b);
  if (la && lb) {
    if (a.obj->kind != b.obj->kind || la->items.size() != lb->items.size()) return false;
    for (size_t i = 0; i < la->items.size(); ++i) {
      auto e = equal(la->items[i], lb->items[i]);
      if (!e || !*e) return e;
    }
    return true;
  }
  if (auto* da = a.as<DtypeObj>()) {
    auto* db = b.as<DtypeObj>();
    return db && da->name == db->name;
  }
  if (auto* da = a.as<DictObj>()) {
    auto* db = b.as<DictObj>();
    if (!db || da->entries.size() != db->entries.size()) return false;
    for (auto& [k, v] : da->entries) {
      const Value* other = db->find(k);
      if (!other) return false;
      auto e = equal(v, *other);
      if (!e || !*e) return e;
    }
    return true;
  }
  return a.obj == b.obj;
}

std::string Interpreter::to_str(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Str: return v.s;
    case Value::Kind::Obj:
      if (auto* inst = v.as<InstanceObj>()) {
        bool found = false;
        Value s = class_attribute(inst->cls, &v, "__str__", 0, {}, found);
        if (found) {
          Value r = call(s, CallArgs{}, {});
          if (r.is_str()) return r.s;
        }
      }
      return repr(v);
    default: return repr(v);
  }
}

Value Interpreter::unary(const std::string& op, const Value& v, const ir::Span& site) {
  if (op == "not") {
    auto t = truth(v);
    if (!t) return v.is_unknown() ? v : unknown("truth value not known", site);
    return Value::boolean(!*t);
  }
  if (v.is_unknown()) return v;
  if (v.as<TensorObj>()) {
    if (tracer_) return tracer_->unary(*this, op, v, site);
    if (const NativeFn* f = method("tensor", "__unary__")) {
      CallArgs args{{v, Value::str(op)}, {}};
      return (*f)(*this, v, args, site);
    }
    return v;
  }
  if (auto r = number_unary(op, v)) return number_result(*r, site);
  return raise("TypeError", "bad operand type for unary " + op + ": '" + type_name(v) + "'", site);
}

Value Interpreter::compare(const std::string& op, const Value& a, const Value& b, const ir::Span& site) {
  if (op == "is" || op == "is not") {
    if (a.is_unknown() || b.is_unknown()) {
      // `x is None` on an unknown stays unknown.
      return a.is_unknown() ? a : b;
    }
    bool same;
    if (a.kind != b.kind) same = false;
    else if (a.kind == Value::Kind::Obj) same = a.obj == b.obj || (a.as<DtypeObj>() && equal(a, b).value_or(false));
    else same = equal(a, b).value_or(false);
    return Value::boolean(op == "is" ? same : !same);
  }
  if (op == "in" || op == "not in") {
    if (b.is_unknown()) return b;
    std::optional<bool> found;
    if (b.is_str()) {
      if (!a.is_str()) return a.is_unknown() ? a : raise("TypeError", "'in <string>' requires string", site);
      found = b.s.find(a.s) != std::string::npos;
    } else if (auto* d = b.as<DictObj>(); d || (b.kind == Value::Kind::Obj && b.obj->kind == ObjKind::Set)) {
      if (a.is_unknown()) return a;
      found = static_cast<DictObj*>(b.obj.get())->find(a) != nullptr;
    } else if (auto* inst = b.as<InstanceObj>(); inst && !inst->module) {
      bool f = false;
      Value contains = class_attribute(inst->cls, &b, "__contains__", 0, site, f);
      if (!f) return unknown("membership test on " + inst->cls->name, site);
      Value r = call(contains, CallArgs{{a}, {}}, site);
      if (pending_) return r;
      auto t = truth(r);  // `in` is bool(__contains__(...)), `not in` its negation
      if (!t) return unknown("membership test on " + inst->cls->name + ": __contains__ gave a value of unknown truth", site);
      found = *t;
    } else {
      auto items = iterate(b, site);
      if (!items) return unknown("membership test on an unknown container", site);
      found = false;
      for (auto& item : *items) {
        auto e = equal(a, item);
        if (!e) return unknown("membership test with unknown values", site);
        if (*e) { found = true; break; }
      }
    }
    return Value::boolean(op == "in" ? *found : !*found);
  }
  if (a.as<TensorObj>() || b.as<TensorObj>()) return binary(op, a, b, site);
  if (auto* u = first_unknown({&a, &b})) return *u;
  // Rich comparisons a class defines (packaging's Version: `torch_version >= version.parse("2.3")`),
  // then the reflected one of the right operand, as Python tries them.
  static const std::map<std::string, std::pair<const char*, const char*>> dunders = {
      {"<", {"__lt__", "__gt__"}}, {"<=", {"__le__", "__ge__"}}, {">", {"__gt__", "__lt__"}},
      {">=", {"__ge__", "__le__"}}, {"==", {"__eq__", "__eq__"}}, {"!=", {"__ne__", "__ne__"}}};
  if (auto d = dunders.find(op); d != dunders.end())
    for (int side = 0; side < 2; ++side) {
      const Value& self = side == 0 ? a : b;
      const Value& other = side == 0 ? b : a;
      auto* inst = self.as<InstanceObj>();
      if (!inst || inst->module) continue;
      bool found = false;
      Value method = class_attribute(inst->cls, &self, side == 0 ? d->second.first : d->second.second, 0, site, found);
      if (found) return call(method, CallArgs{{other}, {}}, site);
    }
  // No __ne__: object.__ne__ inverts __eq__, as in CPython (torch.device, dataclasses define only __eq__).
  if (op == "!=")
    for (int side = 0; side < 2; ++side) {
      const Value& self = side == 0 ? a : b;
      auto* inst = self.as<InstanceObj>();
      if (!inst || inst->module) continue;
      bool found = false;
      Value method = class_attribute(inst->cls, &self, "__eq__", 0, site, found);
      if (!found) continue;
      Value eq = call(method, CallArgs{{side == 0 ? b : a}, {}}, site);
      auto t = truth(eq);
      if (!t) return unknown("__eq__ of unknown truth", site);
      return Value::boolean(!*t);
    }
  if (op == "==" || op == "!=") {
    auto e = equal(a, b);
    if (!e) return unknown("comparison with unknown values", site);
    return Value::boolean(op == "==" ? *e : !*e);
  }
  if (is_set(a) && is_set(b)) {
    // Subset order: a <= b when every item of a is in b.
    auto& x = static_cast<const DictObj&>(*a.obj);
    auto& y = static_cast<const DictObj&>(*b.obj);
    auto within = [](const DictObj& small, const DictObj& big) {
      for (auto& kv : small.entries)
        if (!big.find(kv.first)) return false;
      return true;
    };
    if (op == "<=") return Value::boolean(within(x, y));
    if (op == ">=") return Value::boolean(within(y, x));
    if (op == "<") return Value::boolean(within(x, y) && x.entries.size() < y.entries.size());
    if (op == ">") return Value::boolean(within(y, x) && y.entries.size() < x.entries.size());
  }
  int cmp = 0;
  if (a.is_integral() && b.is_integral()) {
    cmp = compare_ints(a, b);
  } else if ((a.is_integral() || a.kind == Value::Kind::Float) && (b.is_integral() || b.kind == Value::Kind::Float)) {
    cmp = a.as_float() < b.as_float() ? -1 : a.as_float() > b.as_float() ? 1 : 0;
  } else if (a.is_str() && b.is_str()) {
    cmp = a.s.compare(b.s);
    cmp = cmp < 0 ? -1 : cmp > 0 ? 1 : 0;
  } else if (TupleView::of(a) && TupleView::of(b)) {
    auto& x = TupleView::of(a)->items;
    auto& y = TupleView::of(b)->items;
    size_t i = 0;
    for (; i < x.size() && i < y.size(); ++i) {
      auto e = equal(x[i], y[i]);
      if (!e) return unknown("comparison with unknown values", site);
      if (!*e) return compare(op, x[i], y[i], site);
    }
    cmp = x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  } else {
    return unknown("comparison of " + type_name(a) + " and " + type_name(b) + " is not modelled", site);
  }
  if (op == "<") return Value::boolean(cmp < 0);
  if (op == "<=") return Value::boolean(cmp <= 0);
  if (op == ">") return Value::boolean(cmp > 0);
  if (op == ">=") return Value::boolean(cmp >= 0);
  return unknown("operator " + op, site);
}

Value Interpreter::binary(const std::string& op, const Value& a, const Value& b, const ir::Span& site) {
  uint64_t made_since = Object::serials_issued();
  Value r = binary_uncharged(op, a, b, site);
  if (!charge_value(r, made_since)) return unknown("analysis memory budget exhausted", site);
  return r;
}

Value Interpreter::binary_uncharged(const std::string& op, const Value& a, const Value& b, const ir::Span& site) {
  if (a.as<TensorObj>() || b.as<TensorObj>()) {
    if (tracer_) return tracer_->binary(*this, op, a, b, site);
    if (const NativeFn* f = method("tensor", "__binary__")) {
      CallArgs args{{a, b, Value::str(op)}, {}};
      return (*f)(*this, Value(), args, site);
    }
    return unknown("tensor arithmetic", site);
  }
  if (auto* u = first_unknown({&a, &b})) return *u;
  if (auto r = number_binary(op, a, b)) return number_result(*r, site);
  if (a.is_str() && b.is_str() && op == "+") {
    if (!fits_memory(1, a.s.size() + b.s.size())) return unknown("analysis memory budget exhausted", site);
    return Value::str(a.s + b.s);
  }
  if (op == "*" && ((a.is_str() && b.is_int()) || (a.is_int() && b.is_str()))) {
    const std::string& s = a.is_str() ? a.s : b.s;
    int64_t n = std::max<int64_t>(0, a.is_str() ? b.as_int() : a.as_int());
    if (!fits_memory(n, s.size())) return unknown("analysis memory budget exhausted", site);
    std::string out;
    out.reserve(static_cast<size_t>(n) * s.size());
    for (int64_t k = 0; k < n; ++k) out += s;
    return Value::str(out);
  }
  if (a.is_str() && op == "%") {
    if (const NativeFn* f = method("str", "__mod__")) {
      CallArgs args{{b}, {}};
      return (*f)(*this, a, args, site);
    }
  }
  auto* la = TupleView::of(a);
  auto* lb = TupleView::of(b);
  if (la && lb && op == "+" && a.obj->kind == b.obj->kind) {
    std::vector<Value> items = la->items;
    items.insert(items.end(), lb->items.begin(), lb->items.end());
    return make_list(std::move(items), a.obj->kind == ObjKind::Tuple);
  }
  if (op == "*" && ((la && b.is_int()) || (lb && a.is_int()))) {
    auto* l = la ? la : lb;
    int64_t n = std::max<int64_t>(0, la ? b.as_int() : a.as_int());
    if (!fits_memory(n, l->items.size() * sizeof(Value))) return unknown("analysis memory budget exhausted", site);
    std::vector<Value> items;
    for (int64_t k = 0; k < n; ++k) items.insert(items.end(), l->items.begin(), l->items.end());
    return make_list(std::move(items), (la ? a : b).obj->kind == ObjKind::Tuple);
  }
  if (is_set(a) && is_set(b) && (op == "|" || op == "&" || op == "-" || op == "^"))
    return set_algebra(op, static_cast<const DictObj&>(*a.obj), static_cast<const DictObj&>(*b.obj));
  if (op == "|") {
    auto* da = a.as<DictObj>();
    auto* db = b.as<DictObj>();
    if (da && db) {
      auto d = std::make_shared<DictObj>();
      for (auto& kv : da->entries) d->set(kv.first, kv.second);
      for (auto& kv : db->entries) d->set(kv.first, kv.second);
      return Value::object(d);
    }
  }
  if (auto* inst = a.as<InstanceObj>()) {
    static const std::unordered_map<std::string, std::string> dunder = {
        {"+", "__add__"}, {"-", "__sub__"}, {"*", "__mul__"}, {"/", "__truediv__"}, {"//", "__floordiv__"},
        {"%", "__mod__"}, {"@", "__matmul__"}, {"**", "__pow__"}};
    auto it = dunder.find(op);
    bool found = false;
    if (it != dunder.end()) {
      Value m = class_attribute(inst->cls, &a, it->second, 0, site, found);
      if (found) return call(m, CallArgs{{b}, {}}, site);
    }
  }
  // `int | None` (PEP 604) in an annotation or a type alias: a union nothing here needs to look into.
  auto is_type = [](const Value& v) {
    auto* alias = v.as<InstanceObj>();
    return v.as<ClassObj>() || v.is_none() || (alias && alias->cls->qualname == "typing._GenericAlias");
  };
  if (op == "|" && is_type(a) && is_type(b)) return unknown("a type union (X | Y)", site);
  return raise("TypeError", "unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'", site);
}

std::optional<std::vector<Value>> Interpreter::iterate(const Value& v, const ir::Span& site, Value* why) {
  if (v.is_unknown()) {
    if (why) *why = v;
    return std::nullopt;
  }
  if (const auto* l = v.as<ListObj>(); l && l->endless) {
    if (why) *why = unknown("an endless itertools.cycle iterated on its own", site);
    return std::nullopt;
  }
  if (auto* l = TupleView::of(v)) return l->items;
  if (v.is_str()) {
    std::vector<Value> out;
    for (char c : v.s) out.push_back(Value::str(std::string(1, c)));
    return out;
  }
  if (v.kind != Value::Kind::Obj) {
    if (why) *why = unknown("'" + type_name(v) + "' object is not iterable", site);
    return std::nullopt;
  }
  if (v.obj->kind == ObjKind::Dict || v.obj->kind == ObjKind::Set) {
    std::vector<Value> out;
    for (auto& kv : static_cast<DictObj*>(v.obj.get())->entries) out.push_back(kv.first);
    return out;
  }
  if (auto* r = v.as<RangeObj>()) {
    int64_t n = r->size();
    if (n > limits_.max_loop_iterations) {
      if (why) *why = unknown("range of " + std::to_string(n) + " items is beyond the iteration limit", site);
      return std::nullopt;
    }
    std::vector<Value> out;
    out.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out.push_back(Value::integer(r->start + i * r->step));
    return out;
  }
  if (auto* cls = v.as<ClassObj>(); cls && cls->is_enum) return cls->enum_members;
  if (auto* t = v.as<TensorObj>(); t && t->shape && !t->shape->empty()) {
    int64_t n = (*t->shape)[0];
    if (n > limits_.max_loop_iterations) {
      if (why) *why = unknown("tensor of " + std::to_string(n) + " rows is beyond the iteration limit", site);
      return std::nullopt;
    }
    std::vector<int64_t> row_shape(t->shape->begin() + 1, t->shape->end());
    int64_t row = 1;
    for (auto d : row_shape) row *= d;
    std::vector<Value> out;
    for (int64_t i = 0; i < n; ++i) {
      auto r = new_tensor(row_shape, site);
      r->dtype = t->dtype;
      if (t->values && static_cast<int64_t>(t->values->size()) == n * row)
        r->values = std::vector<double>(t->values->begin() + i * row, t->values->begin() + (i + 1) * row);
      out.push_back(Value::object(r));
    }
    return out;
  }
  if (auto* t = v.as<TensorObj>(); t && !t->shape && tracer_)
    if (auto rows = tracer_->rows_of_unknown(*this, *t, site)) return rows;
  if (auto* inst = v.as<InstanceObj>()) {
    bool found = false;
    Value iter = class_attribute(inst->cls, &v, "__iter__", 0, site, found);
    if (found) {
      Value r = call(iter, CallArgs{}, site);
      if (auto* l = TupleView::of(r)) return l->items;
    }
  }
  if (why) *why = unknown("iteration over " + type_name(v) + " is not modelled", site);
  return std::nullopt;
}

}  // namespace shardlens::python
