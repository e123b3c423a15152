# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev
PKGSTAMP := $(VENV)/.installed-package
EXAMPLE ?= resources/examples/tiny_cnn.onnx

.PHONY: run test lint bench package clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(DEVSTAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP) $@

$(PKGSTAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[package]"
	touch $(STAMP) $@

run: $(STAMP)
	$(PY) -m designer $(EXAMPLE)

test: $(DEVSTAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest $(PYTEST_ARGS)

lint: $(DEVSTAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) bench/bench_core.py
	$(PY) bench/bench_open.py
	$(PY) bench/bench_layout.py
	$(PY) bench/bench_transforms.py
	$(PY) bench/bench_activities.py

# The Linux app bundle dist/onnx-designer/ (PyInstaller onedir; packaging/README.md).
package: $(PKGSTAMP)
	@command -v objcopy >/dev/null || { echo "make package: PyInstaller needs objcopy;" \
		"on Debian/Ubuntu: sudo apt-get install binutils" >&2; exit 1; }
	$(VENV)/bin/pyinstaller --noconfirm --log-level WARN --distpath dist \
		--workpath build/pyinstaller packaging/onnx-designer.spec
	cp packaging/install.sh dist/onnx-designer/install.sh

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .mypy_cache
