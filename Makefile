# A learner needs one command:  make lab  (on Linux  make lab TORCH=cpu).  Everything else is for
# maintainers (CONTRIBUTING.md).
PYTHON ?= python3
# JupyterLab refuses to start as root unless told; learners are rarely root, containers often are.
LAB_ARGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)
VENV   := .venv
# matplotlib's font cache for everything make runs, built from this checkout's .venv: a shared
# ~/.cache/matplotlib written by another environment (one since deleted, say) can point at fonts
# that are gone, and every figure then logs font warnings. Cleared whenever .venv is reinstalled.
export MPLCONFIGDIR := $(CURDIR)/build/mplconfig
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: lab test route-test unit notebooks-test ui-test install-test install-matrix lint bench train-demo train-full notebooks lock screenshot clean site site-test

# Before anything is created: is $(PYTHON) there, new enough, with venv and ensurepip? The check
# prints what was found, what is needed and the one command that fixes it. A venv that failed
# half-way is removed, so the next run starts clean.
$(PY):
	@command -v $(PYTHON) >/dev/null 2>&1 || { \
		echo; echo "No '$(PYTHON)' on PATH. The course needs Python 3.11 or newer:"; \
		echo "name one with  make lab PYTHON=python3.12  (or install Python 3.11+ first)."; \
		echo; exit 1; }
	@$(PYTHON) tools/check_python.py
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); exit 1; }

# Install through the lock (constraints.txt: the exact, tested versions; pyproject.toml states
# only ranges), and only what the command needs: make lab the lessons (.[lab]), make site the
# website's tools (.[docs]), make test everything (.[dev]). Each extra has its stamp and is
# re-installed when pyproject.toml or constraints.txt changes. tools/install_venv.py says first
# what it fetches and roughly how much, shows pip's progress bars, and with TORCH=cpu installs
# torch's CPU-only build first (kept for later runs in .venv/.torch), stopping with one line if
# that build cannot be had. A .venv made by `uv venv` has no pip: then uv installs (README, "uv").
TORCH ?=
LAB_STAMP  := $(VENV)/.installed-lab
DOCS_STAMP := $(VENV)/.installed-docs
$(LAB_STAMP): pyproject.toml constraints.txt | $(PY)
	@$(PY) tools/install_venv.py lab $(if $(TORCH),--torch $(TORCH),)
	rm -rf build/mplconfig
	touch $(LAB_STAMP)

$(DOCS_STAMP): pyproject.toml constraints.txt | $(PY)
	@$(PY) tools/install_venv.py docs $(if $(TORCH),--torch $(TORCH),)
	rm -rf build/mplconfig
	touch $(DOCS_STAMP)

# Everything make test runs (the dev extra holds lab and docs, so their stamps are current too).
$(STAMP): pyproject.toml constraints.txt | $(PY)
	@$(PY) tools/install_venv.py dev $(if $(TORCH),--torch $(TORCH),)
	rm -rf build/mplconfig
	touch $(LAB_STAMP) $(DOCS_STAMP) $(STAMP)

## make lab: create .venv if needed, install what the lessons need (.[lab]; TORCH=cpu: torch's
## CPU-only build), start JupyterLab in notebooks/ (token auth on; the URL is printed)
lab: $(LAB_STAMP)
	@$(PY) mhsa_helpers/system_fonts.py
	cd notebooks && ../$(VENV)/bin/jupyter lab --ServerApp.root_dir=. $(LAB_ARGS)

## make test: lint + unit tests + strict nbval over every notebook (+ browser test when chromium exists)
test: $(STAMP) lint unit install-test install-matrix route-test notebooks-test ui-test site-test

lint: $(STAMP)
	$(VENV)/bin/ruff check mhsa_helpers tests notebooks benchmarks tools data
	$(VENV)/bin/ruff format --check mhsa_helpers tests notebooks benchmarks tools data
	$(VENV)/bin/mypy mhsa_helpers
	$(PY) tools/render_environment.py --check
	$(PY) tools/zh_edition.py check

# Two workers: the machines this course targets have 2 cores, and every test is single-threaded.
# --dist loadfile: a file's tests share one process, so what a file loads once (torch.compile,
# the verse corpus, the CJK font, jupytext) is loaded by one worker, not both: 16 s less CPU.
unit: $(STAMP)
	$(VENV)/bin/pytest tests --ignore=tests/ui -q -n 2 --dist loadfile -p no:nbval

# Strict nbval: every saved output is compared; --nbval-current-env runs the kernel in .venv.
# Two workers, one notebook each at a time (--dist loadfile keeps a notebook's cells in order).
# Then again on torch's scalar kernels (ATEN_CPU_CAPABILITY=default): a saved output must not
# depend on the processor's vector width (AVX2, AVX-512, NEON), which changes the last bits of a
# sum. A cell whose digits are chaotic (lesson 13's runs at learning rate 0.2) is marked
# NBVAL_IGNORE_OUTPUT and asserts what holds on every machine instead.
NBVAL := $(VENV)/bin/pytest --nbval --nbval-current-env -p no:randomly -q -n 2 --dist loadfile
notebooks-test: $(STAMP)
	$(NBVAL) notebooks
	ATEN_CPU_CAPABILITY=default $(NBVAL) notebooks

ui-test: $(STAMP)
	@if command -v chromium >/dev/null 2>&1; then \
		$(VENV)/bin/pytest tests/ui -q -s --ignore=tests/ui/test_site.py; \
	else \
		echo "################################################################"; \
		echo "# SKIPPED: browser test (tests/ui) -- 'chromium' is not installed."; \
		echo "# Install it (Debian: apt-get install chromium) to run it;"; \
		echo "# .ci/run installs it, so CI always runs this test."; \
		echo "################################################################"; \
	fi

## make site: the course website from the saved notebooks (no re-execution) into build/site/,
## English in en/, Chinese in zh/, and the offline zip in download/ (needs npm and chromium)
SITE_JS := site/node_modules/.package-lock.json
$(SITE_JS): site/package.json site/package-lock.json
	npm ci --prefix site --no-audit --no-fund --ignore-scripts
	touch $(SITE_JS)

site: $(DOCS_STAMP) $(SITE_JS)
	$(PY) tools/build_site.py

# The site in Chromium, offline: served on 127.0.0.1, then one page of the zip from file://.
# (The site is built inside the recipe, not by a $(MAKE) call, so that `make -n test` runs nothing.)
site-test: $(STAMP) $(SITE_JS)
	@if command -v chromium >/dev/null 2>&1; then \
		$(PY) tools/build_site.py && $(VENV)/bin/pytest tests/ui/test_site.py -q -s; \
	else \
		echo "################################################################"; \
		echo "# SKIPPED: site test (tests/ui/test_site.py) -- 'chromium' is not installed."; \
		echo "# make site draws the diagrams in it; Debian: apt-get install chromium."; \
		echo "################################################################"; \
	fi

# The README's "install into an environment you already have": build the wheel, install it with
# --no-deps into a second venv that already holds the pinned stack, use it from another folder.
WHEEL_VENV := .venv-wheel
install-test: $(STAMP)
	rm -rf build/wheel
	$(PY) -m pip wheel --quiet --no-deps --no-build-isolation --wheel-dir build/wheel .
	test -x $(WHEEL_VENV)/bin/python || $(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install --quiet -c constraints.txt $$($(PY) tools/render_environment.py --runtime)
	$(WHEEL_VENV)/bin/python -m pip install --quiet --no-deps --force-reinstall build/wheel/mhsa_helpers-*.whl
	cd "$$(mktemp -d)" && MPLCONFIGDIR="$$PWD/mplconfig" $(CURDIR)/$(WHEEL_VENV)/bin/python $(CURDIR)/tools/check_install.py

# The README's route without make (its <!-- route:posix --> block), run as written in a fresh copy
# of the course: venv, locked .[lab] install, JupyterLab in notebooks/, lesson 00 executed there.
route-test: $(STAMP)
	$(PY) tools/check_route.py

## make notebooks: regenerate every .ipynb from its paired jupytext script and execute it in place
notebooks: $(STAMP)
	$(PY) tools/build_notebooks.py

## make bench: time every attention implementation (not part of make test)
bench: $(STAMP)
	$(PY) benchmarks/attention.py

## make train-demo: lesson 12's shorter recipe (about 20 min on one core: whole poems, rhyme near chance) into build/char_lm_demo.pt
## make train-full: the shipped recipe (about 35 minutes on two cores) rewriting data/char_lm.pt (both seeded; an estimate first)
train-demo: $(STAMP)
	MKL_CBWR=AUTO $(PY) tools/train_char_lm.py

train-full: $(STAMP)
	MKL_CBWR=AUTO $(PY) tools/train_char_lm.py --full

## make lock: re-resolve constraints.txt from pyproject.toml's ranges for EVERY supported Python
## (uv's universal resolver: environment markers where versions differ, e.g. by python_full_version),
## keeping the current pins where they still fit; then environment.yml. Test with make install-matrix.
LOCK_PYTHON := 3.11
lock: $(STAMP)
	$(VENV)/bin/uv pip compile pyproject.toml --all-extras --universal --python-version $(LOCK_PYTHON) \
		-c tools/lock-pins.txt --no-header --no-annotate --quiet -o constraints.txt
	cat tools/constraints-header.txt constraints.txt > constraints.txt.new && mv constraints.txt.new constraints.txt
	$(PY) tools/render_environment.py

## make install-matrix: for every Python >= 3.11 found here (Debian's python3, pyenv's, PATH), a
## throw-away venv resolves the lock with every extra (pip --dry-run); the oldest gets a full install
## and an import check; uv resolves it too, and for Linux, Windows and macOS (--python-platform).
## One line per interpreter and platform; skipped ones are named.
install-matrix: $(STAMP)
	$(PY) tools/install_matrix.py

## make screenshot: refresh docs/images/explorer.png from the browser test
screenshot: $(STAMP)
	MHSA_SCREENSHOT=docs/images/explorer.png $(VENV)/bin/pytest tests/ui -q -s -k explorer

clean:
	rm -rf $(VENV) $(WHEEL_VENV) build .pytest_cache .ruff_cache .mypy_cache
