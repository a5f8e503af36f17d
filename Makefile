# Two commands a learner needs:  make lab  and  make test.  Everything else is for maintainers.
PYTHON ?= python3
# JupyterLab refuses to start as root unless told; learners are rarely root, containers often are.
LAB_ARGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: lab test unit notebooks-test ui-test lint bench notebooks clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# Re-install only when pyproject.toml changes.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

## make lab: create .venv if needed, install, start JupyterLab in notebooks/ (token auth on; the URL is printed)
lab: $(STAMP)
	cd notebooks && ../$(VENV)/bin/jupyter lab --ServerApp.root_dir=. $(LAB_ARGS)

## make test: lint + unit tests + strict nbval over every notebook (+ browser test when chromium exists)
test: $(STAMP) lint unit notebooks-test ui-test

lint: $(STAMP)
	$(VENV)/bin/ruff check mhsa_helpers tests notebooks benchmarks tools
	$(VENV)/bin/ruff format --check mhsa_helpers tests notebooks benchmarks tools

unit: $(STAMP)
	$(VENV)/bin/pytest tests --ignore=tests/ui -q

# Strict nbval: every saved output is compared; --nbval-current-env runs the kernel in .venv.
notebooks-test: $(STAMP)
	$(VENV)/bin/pytest --nbval --nbval-current-env -p no:randomly -q notebooks

ui-test: $(STAMP)
	@if command -v chromium >/dev/null 2>&1; then \
		$(VENV)/bin/pytest tests/ui -q -s; \
	else \
		echo "################################################################"; \
		echo "# SKIPPED: browser test (tests/ui) -- 'chromium' is not installed."; \
		echo "# Install it (Debian: apt-get install chromium) to run it;"; \
		echo "# .ci/run installs it, so CI always runs this test."; \
		echo "################################################################"; \
	fi

## make notebooks: regenerate every .ipynb from its paired jupytext script and execute it in place
notebooks: $(STAMP)
	$(PY) tools/build_notebooks.py

## make bench: time every attention implementation (not part of make test)
bench: $(STAMP)
	$(PY) benchmarks/attention.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
