// ir::SmallVector against std::vector: the same random operations on both, compared after each,
// across the inline-to-heap boundary, with elements of the vector itself as arguments.
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "ir/small_vector.h"

using shardlens::ir::SmallVector;

namespace {

template <class T, uint32_t N>
void require_same(const SmallVector<T, N>& small, const std::vector<T>& model) {
  REQUIRE(small.size() == model.size());
  REQUIRE(small.empty() == model.empty());
  REQUIRE(std::vector<T>(small.begin(), small.end()) == model);
  REQUIRE(small == model);
  REQUIRE(small.capacity() >= small.size());
}

}  // namespace

TEST_CASE("SmallVector does what std::vector does, over 20000 random operations", "[small_vector]") {
  std::mt19937 rng(20261202);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % (n ? n : 1)); };
  SmallVector<int, 3> small;
  std::vector<int> model;
  for (int step = 0; step < 20000; ++step) {
    const int value = static_cast<int>(rng() % 1000);
    switch (rng() % 17) {
      case 0:
      case 1:
        small.push_back(value);
        model.push_back(value);
        break;
      case 2:  // an element of the vector itself, at the moment it grows
        if (!model.empty()) {
          size_t i = pick(model.size());
          small.push_back(small[i]);
          model.push_back(model[i]);
        }
        break;
      case 3:
        if (!model.empty()) {
          small.pop_back();
          model.pop_back();
        }
        break;
      case 4: {
        size_t at = pick(model.size() + 1);
        if (!model.empty() && rng() % 2) {  // an element of the vector itself
          size_t i = pick(model.size());
          small.insert(small.begin() + at, small[i]);
          model.insert(model.begin() + static_cast<long>(at), int(model[i]));
        } else {
          auto it = small.insert(small.begin() + at, value);
          model.insert(model.begin() + static_cast<long>(at), value);
          REQUIRE(*it == value);
        }
        break;
      }
      case 5:  // a range of the vector itself, inserted into it
        if (!model.empty()) {
          size_t from = pick(model.size()), to = from + pick(model.size() - from + 1);
          size_t at = pick(model.size() + 1);
          std::vector<int> range(model.begin() + static_cast<long>(from), model.begin() + static_cast<long>(to));
          small.insert(small.begin() + at, small.begin() + from, small.begin() + to);
          model.insert(model.begin() + static_cast<long>(at), range.begin(), range.end());
        }
        break;
      case 6:
        if (!model.empty()) {
          size_t at = pick(model.size());
          auto it = small.erase(small.begin() + at);
          model.erase(model.begin() + static_cast<long>(at));
          REQUIRE(static_cast<size_t>(it - small.begin()) == at);
        }
        break;
      case 7:
        if (!model.empty()) {
          size_t from = pick(model.size()), to = from + pick(model.size() - from + 1);
          small.erase(small.begin() + from, small.begin() + to);
          model.erase(model.begin() + static_cast<long>(from), model.begin() + static_cast<long>(to));
        }
        break;
      case 8: {
        size_t n = pick(12);
        small.resize(n, value);
        model.resize(n, value);
        break;
      }
      case 9: {
        size_t n = pick(9);
        small.assign(n, value);
        model.assign(n, value);
        break;
      }
      case 10: {
        std::vector<int> other(pick(10), value);
        small.assign(other.begin(), other.end());
        model = other;
        break;
      }
      case 11:
        if (rng() % 8 == 0) {
          small.clear();
          model.clear();
        }
        break;
      case 12: {
        SmallVector<int, 3> copy(small);
        require_same(copy, model);
        copy.push_back(value);  // the copy owns its elements
        require_same(small, model);
        SmallVector<int, 3> moved(std::move(copy));
        REQUIRE(copy.empty());
        REQUIRE(moved.size() == model.size() + 1);
        REQUIRE(moved.back() == value);
        break;
      }
      case 13: {
        SmallVector<int, 3> other{1, 2, 3, 4, 5};
        other = small;
        require_same(other, model);
        SmallVector<int, 3> target{7};
        target = std::move(other);
        require_same(target, model);
        small = target;
        const SmallVector<int, 3>& self = small;
        small = self;
        break;
      }
      case 14:
        small.reserve(pick(16));
        break;
      case 15: {
        std::vector<int> as_vector = small;
        REQUIRE(as_vector == model);
        SmallVector<int, 3> from_vector = model;
        REQUIRE(from_vector == small);
        break;
      }
      case 16: {
        size_t at = pick(model.size() + 1), count = pick(6);
        small.insert(small.begin() + at, count, value);
        model.insert(model.begin() + static_cast<long>(at), count, value);
        break;
      }
    }
    require_same(small, model);
  }
}

TEST_CASE("SmallVector keeps a few elements inside itself and compares across inline sizes", "[small_vector]") {
  SmallVector<int64_t, 4> shape{2, 3, 4, 5};
  CHECK(shape.capacity() == 4);  // no allocation up to N
  shape.push_back(6);
  CHECK(shape.capacity() > 4);
  CHECK(shape == std::vector<int64_t>{2, 3, 4, 5, 6});
  CHECK(std::vector<int64_t>{2, 3, 4, 5, 6} == shape);
  CHECK(shape != std::vector<int64_t>{2, 3, 4, 5});
  SmallVector<int, 4> inputs{1, 2};
  SmallVector<int, 2> outputs{1, 2};
  CHECK(inputs == outputs);
  outputs.push_back(3);
  CHECK(inputs != outputs);
  CHECK(SmallVector<int, 2>{1, 2} < SmallVector<int, 2>{1, 3});
  CHECK(SmallVector<int, 2>().empty());
}
