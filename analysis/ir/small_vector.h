// A vector that keeps up to N elements inside itself. An op's inputs, outputs and dims and a
// tensor's shape are a handful of integers, and a trace makes and copies tens of thousands of
// them: as std::vectors each was an allocation, and the edit path is bound by allocations (the
// free list's next block is a cache miss), not by instructions. Trivially copyable elements only.
// C++17: the torch-facing translation units include the IR.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>
#include <vector>

namespace shardlens::ir {

template <class T, uint32_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector copies its elements with memcpy");
  static_assert(N > 0);

 public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  SmallVector() noexcept {}
  explicit SmallVector(size_t n, const T& value = T()) { assign(n, value); }
  SmallVector(std::initializer_list<T> items) { assign(items.begin(), items.end()); }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  // Implicit both ways, as the IR's users hand shapes to and from std::vector. Converting copies:
  // a helper that only reads a shape takes a std::span (or an ir::Shape), not a std::vector&.
  SmallVector(const std::vector<T>& v) { assign(v.begin(), v.end()); }
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }

  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { steal(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  SmallVector& operator=(const std::vector<T>& v) {
    assign(v.begin(), v.end());
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> items) {
    assign(items.begin(), items.end());
    return *this;
  }
  ~SmallVector() { release(); }

  T* data() noexcept { return on_heap() ? heap_ : inline_; }
  const T* data() const noexcept { return on_heap() ? heap_ : inline_; }
  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_t capacity() const noexcept { return capacity_; }

  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  T& operator[](size_t i) noexcept { return data()[i]; }
  const T& operator[](size_t i) const noexcept { return data()[i]; }
  T& front() noexcept { return data()[0]; }
  const T& front() const noexcept { return data()[0]; }
  T& back() noexcept { return data()[size_ - 1]; }
  const T& back() const noexcept { return data()[size_ - 1]; }

  void reserve(size_t n) {
    if (n > capacity_) grow_to(n);
  }
  void clear() noexcept { size_ = 0; }
  void push_back(const T& value) {
    T copy = value;  // `value` may be an element of this vector
    if (size_ == capacity_) grow_to(capacity_ * 2);
    data()[size_++] = copy;
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() noexcept { --size_; }
  void resize(size_t n, const T& value = T()) {
    T copy = value;  // `value` may be an element of this vector
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = copy;
    size_ = static_cast<uint32_t>(n);
  }
  void assign(size_t n, const T& value) {
    T copy = value;
    size_ = 0;
    resize(n, copy);
  }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  void assign(It first, It last) {
    // Not a range of this vector (no caller passes one; insert() takes them).
    const size_t n = static_cast<size_t>(std::distance(first, last));
    size_ = 0;
    if (n > capacity_) grow_to(n);
    std::copy(first, last, data());
    size_ = static_cast<uint32_t>(n);
  }
  void assign(std::initializer_list<T> items) { assign(items.begin(), items.end()); }

  iterator insert(const_iterator pos, const T& value) {
    const size_t at = static_cast<size_t>(pos - begin());
    T copy = value;  // `value` may be an element of this vector
    if (size_ == capacity_) grow_to(capacity_ * 2);
    T* p = data();
    std::memmove(p + at + 1, p + at, (size_ - at) * sizeof(T));
    p[at] = copy;
    ++size_;
    return p + at;
  }
  iterator insert(const_iterator pos, size_t count, const T& value) {
    SmallVector copies(count, value);
    return insert(pos, copies.begin(), copies.end());
  }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  iterator insert(const_iterator pos, It first, It last) {
    const size_t at = static_cast<size_t>(pos - begin());
    // The range may be inside this vector: copy it out (inline, when short) before moving anything.
    SmallVector items(first, last);
    reserve(size_ + items.size());
    T* p = data();
    std::memmove(p + at + items.size(), p + at, (size_ - at) * sizeof(T));
    std::copy(items.begin(), items.end(), p + at);
    size_ += static_cast<uint32_t>(items.size());
    return p + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<T> items) { return insert(pos, items.begin(), items.end()); }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    T* p = data();
    const size_t from = static_cast<size_t>(first - p), to = static_cast<size_t>(last - p);
    std::memmove(p + from, p + to, (size_ - to) * sizeof(T));
    size_ -= static_cast<uint32_t>(to - from);
    return p + from;
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }
  friend bool operator==(const SmallVector& a, const std::vector<T>& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
  friend bool operator==(const std::vector<T>& a, const SmallVector& b) { return b == a; }
  friend bool operator!=(const SmallVector& a, const std::vector<T>& b) { return !(a == b); }
  friend bool operator!=(const std::vector<T>& a, const SmallVector& b) { return !(b == a); }
  friend bool operator<(const SmallVector& a, const SmallVector& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const noexcept { return capacity_ > N; }
  void grow_to(size_t n) {
    n = std::max<size_t>(n, 2 * static_cast<size_t>(N));
    T* fresh = static_cast<T*>(::operator new(n * sizeof(T)));
    std::memcpy(fresh, data(), size_ * sizeof(T));
    release();
    heap_ = fresh;
    capacity_ = static_cast<uint32_t>(n);
  }
  void release() noexcept {
    if (on_heap()) ::operator delete(heap_);
    capacity_ = N;
  }
  void steal(SmallVector& o) noexcept {
    size_ = o.size_;
    capacity_ = o.capacity_;
    if (o.on_heap()) heap_ = o.heap_;
    else std::memcpy(inline_, o.inline_, o.size_ * sizeof(T));
    o.size_ = 0;
    o.capacity_ = N;
  }

  uint32_t size_ = 0;
  uint32_t capacity_ = N;
  union {
    T inline_[N];
    T* heap_;
  };
};

// Across inline sizes (an op's inputs against another's outputs).
template <class T, uint32_t A, uint32_t B, class = std::enable_if_t<A != B>>
bool operator==(const SmallVector<T, A>& a, const SmallVector<T, B>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}
template <class T, uint32_t A, uint32_t B, class = std::enable_if_t<A != B>>
bool operator!=(const SmallVector<T, A>& a, const SmallVector<T, B>& b) {
  return !(a == b);
}

}  // namespace shardlens::ir
