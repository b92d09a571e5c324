# The two entry points: `make demo` and `make test`. Both set up what they need first.
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=

.PHONY: setup build demo test test-asan bench clean

setup:
	@bash scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	@echo "== shardlens inspect examples/mistral_7b.py"
	@$(BUILD)/shardlens inspect examples/mistral_7b.py
	@echo
	@echo "== shardlens plan examples/mistral_7b.py --mesh t3k"
	@$(BUILD)/shardlens plan examples/mistral_7b.py --mesh t3k
	@echo
	@echo "== shardlens report examples/mistral_7b.py --mesh t3k -o $(BUILD)/sharding_analysis.md"
	@$(BUILD)/shardlens report examples/mistral_7b.py --mesh t3k -o $(BUILD)/sharding_analysis.md >/dev/null
	@echo "report written: $$(realpath $(BUILD)/sharding_analysis.md) (chart beside it: sharding_analysis.ccl_bytes.svg)"

test: build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS)
	@$(MAKE) --no-print-directory test-asan

# Every test again against binaries built with AddressSanitizer (leaks included) and UBSan.
test-asan: setup
	@cmake -S . -B $(BUILD)-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSHARDLENS_SANITIZE=ON \
	  -DSHARDLENS_DEPS_DIR=$(CURDIR)/$(BUILD)/_deps >/dev/null
	@cmake --build $(BUILD)-asan -j$(JOBS) --target shardlens_sanitized_tests
	@cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j$(JOBS)

bench: build
	@$(BUILD)/shardlens_bench_extract
	@$(BUILD)/shardlens_bench_plan bench/models
	@$(BUILD)/shardlens_bench_analysis bench/models/lsp_bench_model.py
	@$(BUILD)/shardlens_bench_analysis --loader tests/workspaces/hf_style_llama/load_model.py
	@if [ -f ../corpus/hf_llama/load_model.py ]; then $(BUILD)/shardlens_bench_analysis --loader ../corpus/hf_llama/load_model.py; \
	 else echo "(no ../corpus/hf_llama: build the corpus, ../shared/corpus/README.md, for the transformers Llama loader's figures)"; fi
	@bash bench/pipeline_bench.sh $(BUILD)/shardlens
	@$(BUILD)/shardlens_bench_mlir
	@bash bench/lsp/run.sh --server $(BUILD)/shardlens

clean:
	rm -rf $(BUILD) $(BUILD)-asan
