// The abstract interpreter: executes a script's module-level code and the constructors it
// reaches, statically, to find which modules and parameters it builds. Forward passes are never
// run; whatever cannot be evaluated becomes an Unknown value that remembers why.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "python/values.h"

namespace shardlens::python {

// Something the front end could not resolve, and which module construction it happened in.
struct Event {
  std::string what;
  std::string reason;
  ir::Span span;
  uint64_t owner = 0;  // id of the outermost module under construction (0: none)
};

enum class Flow : uint8_t { Normal, Return, Break, Continue, Raise };

struct DefinitionCache {
  Value value;                                            // the class or function as bound
  std::vector<const Object*> inputs;                      // its bases and decorators, by identity
  std::vector<std::pair<std::string, Value>> attributes;  // a class's namespace as created
  uint64_t attribute_writes = 0;                          // the class's ClassObj::attribute_writes then
};

// Whether a top-level class or function definition qualifies for DefinitionCache (syntactic).
bool definition_is_cacheable(const Stmt& stmt);

struct Frame {
  std::shared_ptr<Scope> scope;
  const Unit* unit = nullptr;
  ClassObj* defining_class = nullptr;  // for zero-argument super()
  Value first_argument;                // `self` (or `cls`) of the running method
  Value return_value;
  bool is_class_body = false;
};

struct PendingException {
  std::string type;     // "ValueError"
  std::string message;
  ir::Span span;
  std::shared_ptr<ClassObj> cls;  // the class raised, when a `raise` statement named one (user exceptions)
};

class ForwardTracer;
struct NumberResult;
class ModuleLoader;
struct LoadedModule;

class Interpreter {
 public:
  struct Limits {
    uint64_t max_steps = 20'000'000;  // statements + expressions evaluated, per run
    int max_call_depth = 150;
    int64_t max_loop_iterations = 1'000'000;
    // Bytes of values a run may make (strings, list and dict slots, tensors' tracked values),
    // counted as they are made and never given back: a 186-byte script that doubles a string
    // in a loop stops here instead of taking the machine's memory. --memory-budget / memoryBudgetMiB.
    uint64_t max_value_bytes = kDefaultMemoryBudgetMiB << 20;
  };
  static constexpr uint64_t kDefaultMemoryBudgetMiB = 256;

  explicit Interpreter(Limits limits);
  Interpreter() : Interpreter(Limits()) {}
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Imports read modules from source: `roots` is the initial sys.path (the script's folder first),
  // searched before the library models; `script_path` is the script's __file__ ("" if unknown);
  // `site_packages`, an interpreter's, are searched after the library models.
  void set_module_loader(std::shared_ptr<ModuleLoader> loader, std::vector<std::string> roots, std::string script_path,
                         std::vector<std::string> site_packages = {});
  // The modules imported from source so far (a change to any of their files invalidates the run).
  const std::vector<std::shared_ptr<const LoadedModule>>& loaded_modules() const { return loaded_; }
  // The global scope of an imported module ("" or unknown: the script's).
  Scope* module_globals(const std::string& module) const;
  // Runs top-level statements in order, as `python script.py` would with the given __name__.
  void run_module(const std::vector<std::shared_ptr<Unit>>& units, const std::string& module_name);
  // Evaluates an expression (e.g. --model) in the module's global scope.
  Value evaluate_in_globals(const Expr& expr, const Unit& unit);
  Scope& globals() { return *globals_; }
  const std::vector<std::string>& global_order() const { return global_order_; }

  // The bodies of the user functions called outside tracing (a body that never ran decided
  // nothing: the extractor may swap it for an edited one without running the script again).
  bool was_called(const FunctionDef* def) const { return called_.count(def) > 0; }
  // What a run has reported and counted up to a point, to go back to: the extractor traces forward()
  // again on a kept construction, and the trace's events, notes and steps must not pile up.
  struct Checkpoint {
    size_t events = 0, notes = 0;
    uint64_t steps = 0;
    bool budget_exhausted = false;
    uint64_t memory_charged = 0;
  };
  Checkpoint checkpoint() const { return {events_.size(), notes_.size(), steps_, budget_exhausted_, memory_charged_}; }
  void rollback(const Checkpoint& to);

  // --- services for the natives (builtin_*.cpp, torch_*.cpp) ---
  Value call(const Value& callee, CallArgs args, const ir::Span& site);
  Value get_attribute(const Value& object, const std::string& name, const ir::Span& site);
  // importlib.import_module of an absolute name: the module, or what it put in sys.modules in
  // its place; raises ModuleNotFoundError when there is none.
  Value import_by_name(const std::string& qualname, const ir::Span& site);
  ClassObj* builtin_exception_class(const std::string& type) const;
  // importlib.util.find_spec: is the top-level package there (modelled natively, or real source on
  // the search path; a library model alone is not an installed package).
  bool package_installed(const std::string& qualname);
  void set_attribute(const Value& object, const std::string& name, Value value, const ir::Span& site);
  // object.__getattribute__ / object.__setattr__: attribute access without user overrides.
  Value generic_get_attribute(const Value& object, const std::string& name, const ir::Span& site);
  void generic_set_attribute(const Value& object, const std::string& name, Value value, const ir::Span& site);
  // nullopt: truth value unknown
  std::optional<bool> truth(const Value& v);
  // nullopt: not iterable here (the Unknown to propagate is written to *why)
  std::optional<std::vector<Value>> iterate(const Value& v, const ir::Span& site, Value* why = nullptr);
  Value binary(const std::string& op, const Value& a, const Value& b, const ir::Span& site);  // charges its result
  std::optional<bool> equal(const Value& a, const Value& b);
  Value compare(const std::string& op, const Value& a, const Value& b, const ir::Span& site);
  // `del obj.name` / delattr(): also unregisters a module's parameter, buffer or child.
  void delete_attribute(const Value& object, const std::string& name, const ir::Span& site);
  std::string to_str(const Value& v);
  Value raise(const std::string& type, const std::string& message, const ir::Span& site);
  // An arithmetic result (python/numbers.h) as a value: raised or unknown at `site` if it is one.
  Value number_result(const NumberResult& r, const ir::Span& site);
  // Counts `bytes` of values made against Limits::max_value_bytes; false once the budget is
  // exceeded (the run then unwinds as it does when the step budget runs out).
  bool charge_memory(uint64_t bytes);
  // charge_memory() for what `v` holds, if it was made after serial `made_since` (strings always:
  // they are copies).
  bool charge_value(const Value& v, uint64_t made_since);
  uint64_t memory_charged() const { return memory_charged_; }
  // Whether `count` values of `each` bytes would fit the budget (charging nothing if so; a value
  // this large is refused before it is made).
  bool fits_memory(int64_t count, uint64_t each);
  bool exception_pending() const { return pending_.has_value(); }
  const PendingException* pending_exception() const { return pending_ ? &*pending_ : nullptr; }
  // Clears a pending exception of this type (or a subclass of it); true if there was one.
  bool take_exception(const std::string& type);
  void note(const std::string& what, const std::string& reason, const ir::Span& span);
  Value unknown(const std::string& reason, const ir::Span& span, bool maybe_module = false) {
    return Value::make_unknown(reason, span, maybe_module);
  }
  uint64_t next_id() { return ++id_counter_; }
  // Objects made by natives join the cycle breaking done at destruction.
  void track(const std::shared_ptr<InstanceObj>& inst) { instances_.push_back(inst); }
  void track(const std::shared_ptr<ClassObj>& cls) { classes_.push_back(cls); }

  // Registry of built-in names by qualified name ("builtins.len", "torch.nn.Linear", "math.pi").
  void define(const std::string& qualname, Value v);
  const Value* builtin(const std::string& qualname) const;
  Value native(const std::string& qualname, NativeFn fn, Value self = {});
  void define_native(const std::string& qualname, NativeFn fn) { define(qualname, native(qualname, std::move(fn))); }
  // Native methods per receiver kind ("str", "list", "dict", "tensor", "module", ...).
  void define_method(const std::string& receiver, const std::string& name, NativeFn fn);
  const NativeFn* method(const std::string& receiver, const std::string& name) const;
  Value namespace_value(const std::string& qualname);

  // Classes and instances.
  std::shared_ptr<ClassObj> make_builtin_class(const std::string& qualname,
                                               std::vector<std::shared_ptr<ClassObj>> bases,
                                               NativeFn init);
  // A class statement and type(name, bases, namespace) alike: the class from its bases, then its
  // members (functions learn their class, for zero-argument super()), then what the members imply.
  std::shared_ptr<ClassObj> new_class(const std::string& name, const std::vector<Value>& bases, bool track = true);
  void set_class_member(ClassObj& cls, const std::string& name, Value member);
  void finish_class(ClassObj& cls);
  std::shared_ptr<ClassObj> module_base() const { return builtins_->module_base; }
  std::shared_ptr<ClassObj> object_base() const { return builtins_->object_base; }
  Value instantiate(const std::shared_ptr<ClassObj>& cls, CallArgs args, const ir::Span& site);
  std::shared_ptr<TensorObj> new_tensor(std::optional<ir::Shape> shape, const ir::Span& site,
                                        bool parameter = false);
  const std::vector<Event>& events() const { return events_; }
  // Whether the module now executing was imported inside `try: ... except ImportError:` (library
  // models of CUDA-only packages read it: absent where the code has a fallback, modelled where not).
  bool importer_has_fallback() const { return importer_has_fallback_; }
  // Choices made on the user's behalf that a user should know about.
  const std::vector<std::string>& notes() const { return notes_; }
  // eval() of a string: an expression evaluated in the running frame.
  Value evaluate_source(const std::string& text, const ir::Span& site);
  uint64_t steps() const { return steps_; }
  size_t definitions_reused() const { return definitions_reused_; }
  bool budget_exhausted() const { return budget_exhausted_; }
  // From the next step on, everything unwinds as if an exception no code can catch were raised,
  // until end_stop() (the tracer ends its first pass once it knows what it ran it for).
  void request_stop();
  void end_stop();

  // Registering on nn.Module: the rules of nn.Module.__setattr__.
  void module_set(InstanceObj& module, const std::string& name, Value value, const ir::Span& site);
  Value module_get(InstanceObj& module, const std::string& name, bool& found);
  ir::Span absolute(const RelSpan& span, const Unit* unit) const;
  // While set, forward() runs and tensor operations are recorded (forward_trace.h).
  void set_tracer(ForwardTracer* tracer) { tracer_ = tracer; }
  // Call depth, against the limit (the tracer replays a call only where running it would not hit it).
  int call_depth() const { return call_depth_; }
  int max_call_depth() const { return limits_.max_call_depth; }
  int deepest_call() const { return deepest_call_; }
  void set_deepest_call(int depth) { deepest_call_ = depth; }
  // A path as the script means it: a relative one from the script's folder, where a user runs a
  // loader from; file reads and sys.path entries alike.
  std::string from_script_dir(const std::string& path) const;

 private:
  Flow exec_block(const Block& block, Frame& frame);
  Flow exec(const Stmt& stmt, Frame& frame);
  Value eval(const Expr& expr, Frame& frame);
  Value eval_call(const Expr& expr, Frame& frame);
  Value eval_comprehension(const Expr& expr, Frame& frame);
  Value eval_fstring(const Expr& expr, Frame& frame);
  Value eval_subscript(const Value& target, const Value& index, const ir::Span& site);
  Value generic_alias(ClassObj& origin, const Value& index, const ir::Span& site);
  void assign(const Expr& target, Value value, Frame& frame);
  bool collect_args(const std::vector<ExprPtr>& items, size_t first, Frame& frame, CallArgs& out);
  Value lookup_name(const std::string& name, Frame& frame, const ir::Span& site);
  void bind_name(const std::string& name, Value value, Frame& frame);
  Value make_function(const std::shared_ptr<FunctionDef>& def, Frame& frame, const std::string& qualname);
  Value call_function(FunctionObj& fn, CallArgs args, const ir::Span& site, const Value* bound_self);
  Value define_class(const Stmt& stmt, Frame& frame, bool track = true);
  bool definition_inputs(const Stmt& stmt, Frame& frame, std::vector<const Object*>& inputs);
  Flow define_cached(const Stmt& stmt, Frame& frame);
  void make_enum(ClassObj& cls);
  Value apply_decorators(const std::vector<ExprPtr>& decorators, Value target, Frame& frame);
  void import_module(const Stmt& stmt, Frame& frame);
  Value function_introspection(const FunctionObj& f, const std::string& what, const ir::Span& site);
  // An absolute module read from source, its parent packages first (each runs once, as Python's
  // sys.modules keeps them). nullopt: no such module on the search path (*why says so).
  std::optional<Value> import_source(const std::string& qualname, const ir::Span& site, std::string& why);
  // Modules shardlens models natively (torch, math, ...) are never read from source.
  bool natively_modelled(const std::string& qualname) const;
  // A natively modelled module, or one read from source (import_source).
  std::optional<Value> module_named(const std::string& qualname, const ir::Span& site, std::string& why);
  Flow exec_units(const std::vector<std::shared_ptr<Unit>>& units, const std::shared_ptr<Scope>& scope);
  Scope* globals_of(const Frame& frame) const { return frame.scope && frame.scope->globals ? frame.scope->globals : globals_.get(); }
  std::vector<std::string> search_roots();
  Value unary(const std::string& op, const Value& v, const ir::Span& site);
  Value class_attribute(const std::shared_ptr<ClassObj>& cls, const Value* self, const std::string& name,
                        size_t mro_start, const ir::Span& site, bool& found);
  // user_getattr false: without the class's own __getattr__ (what super().__getattr__ reaches).
  Value instance_attribute(const Value& object, const std::string& name, const ir::Span& site, bool user_getattr = true);
  bool step();
  uint64_t event_owner() const;

  // Built-in names, classes and methods: installed once per process and shared, read-only, by
  // every interpreter (installing them costs more than a typical incremental re-extraction).
  struct Builtins {
    std::unordered_map<std::string, Value> registry;
    std::unordered_map<std::string, Value> python_builtins;  // "len" -> registry["builtins.len"]
    std::unordered_set<std::string> namespaces;
    std::unordered_map<std::string, std::unordered_map<std::string, NativeFn>> methods;
    std::shared_ptr<ClassObj> module_base;
    std::shared_ptr<ClassObj> object_base;
  };
  struct Bootstrap {};
  explicit Interpreter(Bootstrap);
  static std::shared_ptr<const Builtins> shared_builtins();

  Limits limits_;
  std::shared_ptr<Scope> globals_;
  std::vector<std::string> global_order_;
  std::shared_ptr<Builtins> builtins_;
  std::vector<Event> events_;
  std::set<std::tuple<std::string, std::string, uint32_t, uint32_t, uint64_t>> event_keys_;
  std::optional<PendingException> pending_;
  std::vector<std::vector<Value>*> yields_;
  int import_guards_ = 0;             // depth of try blocks that catch ImportError
  bool importer_has_fallback_ = false;  // the module being imported was imported inside such a block
  // Names that `import X` / `from X import f` inside such a block left unbound, with the module
  // (and the name in it): a call of one while tracing takes X's library model (stand_in_for).
  std::map<std::string, std::pair<std::string, std::string>> unavailable_names_;
  std::optional<Value> stand_in_for(const Expr& callee, const ir::Span& site);
  std::vector<ExprPtr> eval_sources_;  // expressions given to eval()
  std::vector<std::string> notes_;
  std::vector<InstanceObj*> constructing_;
  // Python objects form reference cycles (closures that see themselves, modules that keep their
  // parent); the destructor empties these so that the shared_ptr graph is freed.
  std::vector<std::weak_ptr<Scope>> scopes_;
  std::vector<std::weak_ptr<InstanceObj>> instances_;
  std::vector<std::weak_ptr<ClassObj>> classes_;
  Frame* frame_ = nullptr;
  ForwardTracer* tracer_ = nullptr;
  uint64_t steps_ = 0;
  size_t definitions_reused_ = 0;
  uint64_t id_counter_ = 0;
  int call_depth_ = 0;
  uint64_t memory_charged_ = 0;
  Value binary_uncharged(const std::string& op, const Value& a, const Value& b, const ir::Span& site);
  std::string budget_reason_;  // why the budget ran out: steps or memory
  int deepest_call_ = 0;  // the largest call_depth_ reached since set_deepest_call()
  bool budget_exhausted_ = false;
  bool stop_requested_ = false;
  std::unordered_set<const FunctionDef*> called_;
  // Imports from source (module_loader.h).
  std::shared_ptr<ModuleLoader> loader_;
  Value sys_path_;  // sys.path, a list the script may change (sys.path.insert(0, ...))
  Value sys_modules_;  // sys.modules as far as scripts write it: only replacements are read back
  std::vector<std::string> site_packages_;  // searched after the library models (set_module_loader)
  std::string script_path_;
  std::string script_dir_;  // relative sys.path entries are taken from here
  std::unordered_map<std::string, Value> modules_;  // sys.modules of the modules read from source
  std::vector<std::shared_ptr<const LoadedModule>> loaded_;
};

// Turns a class into a dataclass (fields from its annotated class attributes, in order).
void make_dataclass(Interpreter& interp, ClassObj& cls, bool keyword_only = false);

// Installed by the constructor; each defined in its own file.
void install_python_builtins(Interpreter& interp);
void install_torch(Interpreter& interp);
void install_files(Interpreter& interp);  // open() for reading, json, os.path (file_builtins.cpp)

}  // namespace shardlens::python
