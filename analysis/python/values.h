// Values of the abstract interpreter: Python objects as far as module construction needs them,
// plus Unknown for whatever the front end cannot see through (it carries the reason and where).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/big_int.h"
#include "ir/model_ir.h"
#include "python/syntax.h"

namespace shardlens::python {

struct Object;
using ObjPtr = std::shared_ptr<Object>;

struct UnknownInfo {
  std::string reason;
  ir::Span span;
  bool maybe_module = false;  // came from calling something we cannot see: may have been a layer
};

struct BigIntObj;

struct Value {
  // Int holds an int64; an int beyond 64 bits is a BigInt (obj points at its BigIntObj). is_int()
  // and as_int() see int64 only, so code that needs a machine integer (a shape, a count) never
  // takes a big one for a wrong small one; Python's int semantics use is_integral() / as_big().
  enum class Kind : uint8_t { None, Bool, Int, Float, Str, Ellipsis, Obj, Unknown, BigInt };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  ObjPtr obj;
  std::shared_ptr<const UnknownInfo> unknown;

  static Value none() { return {}; }
  static Value boolean(bool v) { Value x; x.kind = Kind::Bool; x.b = v; return x; }
  static Value integer(int64_t v) { Value x; x.kind = Kind::Int; x.i = v; return x; }
  static Value floating(double v) { Value x; x.kind = Kind::Float; x.f = v; return x; }
  static Value str(std::string v) { Value x; x.kind = Kind::Str; x.s = std::move(v); return x; }
  // An int of any size: int64 inline when it fits.
  static Value big_integer(ir::BigInt v);
  static Value ellipsis() { Value x; x.kind = Kind::Ellipsis; return x; }
  static Value object(ObjPtr o) { Value x; x.kind = Kind::Obj; x.obj = std::move(o); return x; }
  static Value make_unknown(std::string reason, ir::Span span = {}, bool maybe_module = false) {
    Value x;
    x.kind = Kind::Unknown;
    x.unknown = std::make_shared<UnknownInfo>(UnknownInfo{std::move(reason), span, maybe_module});
    return x;
  }

  bool is_none() const { return kind == Kind::None; }
  bool is_unknown() const { return kind == Kind::Unknown; }
  bool is_int() const { return kind == Kind::Int || kind == Kind::Bool; }
  bool is_number() const { return is_int() || kind == Kind::Float; }
  bool is_integral() const { return is_int() || kind == Kind::BigInt; }  // Python's int (and bool)
  ir::BigInt as_big() const;  // for is_integral() values
  bool is_str() const { return kind == Kind::Str; }
  int64_t as_int() const { return kind == Kind::Bool ? (b ? 1 : 0) : i; }
  double as_float() const;
  template <class T> T* as() const;
};

enum class ObjKind : uint8_t {
  List, Tuple, Dict, Set, Range, Slice, Function, BoundMethod, Native, Class, Instance, Namespace,
  Tensor, Partial, Super, Dtype, Property, StaticMethod, ClassMethod, DataclassField, BigInt,
};

struct Object : std::enable_shared_from_this<Object> {
  explicit Object(ObjKind k) : kind(k), serial(next_serial()) {}
  // A copy is a new object: it gets its own serial (and keeps it when assigned to).
  Object(const Object& o) : std::enable_shared_from_this<Object>(o), kind(o.kind), serial(next_serial()) {}
  Object& operator=(const Object& o) {
    kind = o.kind;
    return *this;
  }
  virtual ~Object() = default;
  ObjKind kind;
  // Creation order, process-wide: whether an object was made inside a forward() call or existed
  // before it (the tracer's memo of module calls needs to know what a call may have changed).
  uint64_t serial;
  static uint64_t next_serial();
  static uint64_t serials_issued();  // the serial the next object will get
};

template <class T> T* Value::as() const {
  return kind == Kind::Obj && obj && obj->kind == T::kKind ? static_cast<T*>(obj.get()) : nullptr;
}

struct ListObj : Object {  // also tuples (kind Tuple)
  static constexpr ObjKind kKind = ObjKind::List;
  explicit ListObj(bool tuple = false) : Object(tuple ? ObjKind::Tuple : ObjKind::List) {}
  std::vector<Value> items;
  // itertools.cycle: an endless iterator over `items` (next() takes the front and puts it back at
  // the end; zip and map run it beside finite iterables; iterating it alone is unknown).
  bool endless = false;
};
// The value of a Value of Kind::BigInt (always outside int64: Value::big_integer normalises).
struct BigIntObj : Object {
  static constexpr ObjKind kKind = ObjKind::BigInt;
  explicit BigIntObj(ir::BigInt v) : Object(ObjKind::BigInt), value(std::move(v)) {}
  const ir::BigInt value;
};

struct TupleView {  // List and Tuple share ListObj; this finds either
  static ListObj* of(const Value& v) {
    return v.kind == Value::Kind::Obj && v.obj &&
                   (v.obj->kind == ObjKind::List || v.obj->kind == ObjKind::Tuple)
               ? static_cast<ListObj*>(v.obj.get())
               : nullptr;
  }
};

// A list of ints used as a tensor index (`x[:, [-1], :]`): its length; -1 when not one.
inline int64_t int_list_length(const Value& v) {
  auto* l = v.as<ListObj>();
  if (!l) return -1;
  for (const Value& k : l->items)
    if (!k.is_int()) return -1;
  return static_cast<int64_t>(l->items.size());
}

// Insertion-ordered dict (also sets: values unused). Keys are hashable scalars or tuples of them.
struct DictObj : Object {
  static constexpr ObjKind kKind = ObjKind::Dict;
  explicit DictObj(bool set = false) : Object(set ? ObjKind::Set : ObjKind::Dict) {}
  std::vector<std::pair<Value, Value>> entries;
  std::unordered_map<std::string, size_t> index;  // empty while entries.size() <= kUnindexed
  bool ordered = false;  // made by collections.OrderedDict (torch treats it differently from dict)
  std::shared_ptr<Value> default_factory;  // collections.defaultdict / Counter: called for a missing key
  const Value* find(const Value& key) const;
  // find(Value::str(name)) without making the key: attribute lookups are most of the interpreter's.
  const Value* find_str(std::string_view name) const;
  void set(const Value& key, Value value);
  void set_str(std::string_view name, Value value);  // set(Value::str(name), value)
  bool erase(const Value& key);
  // `index` (key_of -> position) exists only above this many entries (values.cpp).
  static constexpr size_t kUnindexed = 8;

 private:
  static constexpr size_t npos = static_cast<size_t>(-1);
  size_t position(const Value& key) const;
  size_t position_of_str(std::string_view name) const;
  void append(Value key, Value value);
  void reindex();  // index from entries, if there are more than kUnindexed
};

inline bool is_set(const Value& v) { return v.kind == Value::Kind::Obj && v.obj->kind == ObjKind::Set; }
// A new set: a | b, a & b, a - b or a ^ b (`op`), its items in a's order, then b's.
Value set_algebra(std::string_view op, const DictObj& a, const DictObj& b);

struct RangeObj : Object {
  static constexpr ObjKind kKind = ObjKind::Range;
  RangeObj() : Object(ObjKind::Range) {}
  int64_t start = 0, stop = 0, step = 1;
  int64_t size() const;
};

struct SliceObj : Object {
  static constexpr ObjKind kKind = ObjKind::Slice;
  SliceObj() : Object(ObjKind::Slice) {}
  Value lower, upper, step;
};

struct Scope;
struct ClassObj;

struct FunctionObj : Object {
  static constexpr ObjKind kKind = ObjKind::Function;
  FunctionObj() : Object(ObjKind::Function) {}
  std::shared_ptr<FunctionDef> def;
  const Unit* unit = nullptr;        // owning top-level statement (for absolute spans)
  std::shared_ptr<Scope> closure;    // enclosing function scope, or null at module level
  std::vector<Value> defaults;       // per parameter; Kind::Ellipsis-free: `has_default` says
  std::vector<bool> has_default;
  std::string qualname;
  std::string module;                  // the imported module it was defined in ("": the script)
  ClassObj* defining_class = nullptr;  // for zero-argument super()
  bool is_abstract = false;            // @abc.abstractmethod
  std::shared_ptr<DictObj> attributes; // function attributes (`f.calls = 0`), made on first use
};

struct BoundMethodObj : Object {
  static constexpr ObjKind kKind = ObjKind::BoundMethod;
  BoundMethodObj() : Object(ObjKind::BoundMethod) {}
  Value self;
  Value function;
};

class Interpreter;
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;
  const Value* keyword(const std::string& name) const {
    for (auto& kv : keywords)
      if (kv.first == name) return &kv.second;
    return nullptr;
  }
};
using NativeFn = std::function<Value(Interpreter&, const Value& self, CallArgs&, const ir::Span& site)>;

struct NativeObj : Object {
  static constexpr ObjKind kKind = ObjKind::Native;
  NativeObj() : Object(ObjKind::Native) {}
  std::string name;  // qualified, for messages
  Value self;        // bound receiver, if any
  NativeFn fn;
};

// Per-module state PyTorch keeps in _parameters / _buffers / _modules, in registration order.
struct InstanceObj;
struct TensorObj;
struct ModuleData {
  std::vector<std::pair<std::string, std::shared_ptr<TensorObj>>> parameters;  // null = None entry
  std::vector<std::pair<std::string, std::shared_ptr<TensorObj>>> buffers;
  std::vector<bool> buffer_persistent;
  std::vector<std::pair<std::string, std::shared_ptr<InstanceObj>>> modules;
  ir::Span span;
  std::string extra_repr;
  template <class V> static V* find(std::vector<std::pair<std::string, V>>& list, const std::string& key) {
    for (auto& kv : list)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
};

struct ClassObj : Object {
  static constexpr ObjKind kKind = ObjKind::Class;
  ClassObj() : Object(ObjKind::Class) {}
  std::string name;
  std::string qualname;
  std::string module_name;  // __module__: the defining module's __name__ ("builtins" for shardlens' own)
  std::vector<std::shared_ptr<ClassObj>> bases;
  std::vector<ClassObj*> mro;  // self first
  std::vector<std::pair<std::string, Value>> attributes;  // class namespace in definition order
  uint64_t attribute_writes = 0;  // set() calls so far: a cached definition restores only a changed namespace
  bool is_builtin = false;
  bool is_module = false;          // nn.Module somewhere in the MRO
  bool has_unknown_base = false;   // a base we cannot see (imported from elsewhere)
  bool is_dataclass = false;
  bool is_exception = false;
  // Whether a user-defined __getattribute__ / __setattr__ is in the MRO (set at class creation,
  // so that every attribute access need not search for them).
  bool is_enum = false;              // derives from enum.Enum: class attributes became members
  bool enum_value_equality = false;  // str/int mixed in: members compare equal to their values
  std::vector<Value> enum_members;   // in definition order
  bool custom_getattribute = false;
  bool custom_setattr = false;
  std::vector<std::string> dataclass_fields;  // in order, including inherited ones
  std::shared_ptr<ClassDef> def;
  const Unit* unit = nullptr;
  ir::Span span;
  // Built-in classes whose call is not plain instance creation (torch.Tensor(2, 3),
  // nn.Parameter(t)): calling the class runs this instead.
  NativeFn native_new;
  const Value* find(const std::string& attr) const;        // own attributes only
  const Value* lookup(const std::string& attr) const;      // along the MRO
  // The property named `attr` along the MRO, else null. Most classes hold none, and every
  // instance attribute read and write asks: those answer without searching the namespaces.
  const Value* lookup_property(const std::string& attr) const;
  void set(const std::string& attr, Value v);
  // After `attributes` is replaced or cleared other than through set().
  void namespace_replaced();
  bool derives_from(const ClassObj* other) const;

 private:
  bool holds_property_ = false;  // some value of `attributes` is a property
};

struct InstanceObj : Object {
  static constexpr ObjKind kKind = ObjKind::Instance;
  InstanceObj() : Object(ObjKind::Instance), dict(std::make_shared<DictObj>()) {}
  std::shared_ptr<ClassObj> cls;
  std::shared_ptr<DictObj> dict;        // the instance __dict__ (live: `obj.__dict__.update(...)` works)
  std::shared_ptr<DictObj> dict_items;  // storage of instances of dict subclasses
  std::unique_ptr<ModuleData> module;   // set for nn.Module instances
  uint64_t id = 0;
  Value* find_attribute(const std::string& name) { return const_cast<Value*>(dict->find_str(name)); }
  void set_attribute(const std::string& name, Value v) { dict->set_str(name, std::move(v)); }
  void erase_attribute(const std::string& name) { dict->erase(Value::str(name)); }
};

struct NamespaceObj : Object {  // an imported Python module such as torch.nn or math
  static constexpr ObjKind kKind = ObjKind::Namespace;
  NamespaceObj() : Object(ObjKind::Namespace) {}
  std::string qualname;
  // A module read from source (module_loader.h): its globals, and a package's __path__. Null for
  // the modules shardlens models natively (torch, math, ...).
  std::shared_ptr<Scope> scope;
  std::vector<std::string> package_dirs;
  // What the module put in sys.modules under its own name while it ran (diffusers' and
  // transformers' `sys.modules[__name__] = _LazyModule(...)`): importers get this object instead.
  std::optional<Value> replaced_by;
};

// A tensor's known element values, row-major. A filled tensor (torch.ones(d) as a norm's weight,
// one per layer) keeps only its fill and size until something reads its values, which few do: the
// construction of a large model need not write megabytes of ones. Reads are as std::optional's.
class TrackedValues {
 public:
  TrackedValues() = default;
  TrackedValues(std::nullopt_t) {}
  TrackedValues(std::vector<double> values) : values_(std::move(values)) {}
  static TrackedValues filled(size_t count, double value) {
    TrackedValues t;
    t.fill_count_ = count;
    t.fill_ = value;
    t.lazy_ = true;
    return t;
  }
  bool has_value() const { return lazy_ || values_.has_value(); }
  explicit operator bool() const { return has_value(); }
  // How many values, without writing out a fill.
  size_t size() const { return lazy_ ? fill_count_ : values_ ? values_->size() : 0; }
  std::vector<double>& operator*() { return materialized(); }
  const std::vector<double>& operator*() const { return materialized(); }
  std::vector<double>* operator->() { return &materialized(); }
  const std::vector<double>* operator->() const { return &materialized(); }
  void reset() {
    values_.reset();
    lazy_ = false;
  }
  operator std::optional<std::vector<double>>() const {
    return has_value() ? std::optional<std::vector<double>>(materialized()) : std::nullopt;
  }

 private:
  std::vector<double>& materialized() const {
    if (lazy_) {
      values_.emplace(fill_count_, fill_);
      lazy_ = false;
    }
    return *values_;
  }
  // Mutable: reading a fill writes it out once, behind a const reader's back.
  mutable std::optional<std::vector<double>> values_;
  mutable bool lazy_ = false;
  size_t fill_count_ = 0;
  double fill_ = 0;
};

struct TensorObj : Object {
  static constexpr ObjKind kKind = ObjKind::Tensor;
  TensorObj() : Object(ObjKind::Tensor) {}
  std::optional<ir::Shape> shape;  // empty optional: shape unknown (see why)
  std::string dtype = "float32";
  bool is_parameter = false;
  bool requires_grad = false;
  ir::Span span;
  std::shared_ptr<const UnknownInfo> why;
  // Element values, row-major, for small tensors whose values are known statically (arange,
  // linspace, tensor([...]) and elementwise arithmetic on them): stochastic-depth schedules and
  // RoPE frequency tables decide module structure and buffer shapes in real model code.
  TrackedValues values;
  uint64_t id = 0;
  // Attributes model code set on it (Megatron's `param.sequence_parallel = True`); null while none.
  std::shared_ptr<DictObj> attributes;
  int64_t numel() const { return shape ? ir::saturating_numel(*shape) : 1; }
};
// Whether torch.Tensor (or nn.Parameter) has an attribute of this name (tensor_attribute_names.cpp).
bool is_tensor_attribute(std::string_view name);

struct PartialObj : Object {
  static constexpr ObjKind kKind = ObjKind::Partial;
  PartialObj() : Object(ObjKind::Partial) {}
  Value function;
  CallArgs args;
};

struct SuperObj : Object {
  static constexpr ObjKind kKind = ObjKind::Super;
  SuperObj() : Object(ObjKind::Super) {}
  ClassObj* after = nullptr;  // lookups start after this class in self's MRO
  Value self;
};

struct DtypeObj : Object {
  static constexpr ObjKind kKind = ObjKind::Dtype;
  DtypeObj() : Object(ObjKind::Dtype) {}
  std::string name;
};

struct WrapperObj : Object {  // property, staticmethod, classmethod
  explicit WrapperObj(ObjKind k) : Object(k) {}
  Value function;
  Value setter;  // property only: the @x.setter function
};

struct DataclassFieldObj : Object {
  static constexpr ObjKind kKind = ObjKind::DataclassField;
  DataclassFieldObj() : Object(ObjKind::DataclassField) {}
  std::optional<Value> default_value;
  std::optional<Value> default_factory;
  bool init = true;  // field(init=False): not an __init__ argument
};

// Names bound in one function call, class body or the module; `parent` is the enclosing
// function scope (closures), `globals` the module scope.
struct Scope {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Scope> parent;
  Scope* globals = nullptr;  // the module scope names fall back to (null: the script's)
  std::string module_name;  // set on an imported module's own scope
  std::vector<std::string> global_names;    // names declared `global` here
  std::vector<std::string> nonlocal_names;  // names declared `nonlocal` here
  uint64_t serial = Object::next_serial();  // creation order, as Object::serial
};

// Helpers shared by the interpreter and the natives.
// The argument at `position`, else the keyword `name`, else null.
inline const Value* argument(const CallArgs& args, size_t position, const char* name) {
  if (position < args.positional.size()) return &args.positional[position];
  return name ? args.keyword(name) : nullptr;
}
std::string key_of(const Value& v);  // dict key encoding: type tag + value
std::string repr(const Value& v);
std::string type_name(const Value& v);
Value make_list(std::vector<Value> items, bool tuple = false);
// The positions a Python slice selects from a sequence of n items (ok = false: bounds unknown).
std::vector<int64_t> slice_indices(const SliceObj& s, int64_t n, bool& ok);
Value make_tuple(std::vector<Value> items);

}  // namespace shardlens::python
