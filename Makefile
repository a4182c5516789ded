# Two entry points do all set-up on a fresh clone: `make run` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PACKAGING := $(VENV)/.packaging-tools
PYINSTALLER := pyinstaller==6.22.3
APP_ID := io.github.tessera.Tessera
DIST := dist/tessera

.PHONY: run test test-fast check bench fuzz package venv clean

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# With a display, the window; without one, the headless demo. The window's needs are checked
# first (app/gui/display.py: on X11, libxcb-cursor0 and the other libraries Qt's xcb plugin
# loads): what is missing is named with the command that installs it, and the demo runs instead.
run: $(STAMP)
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ]; then $(BIN)/tessera demo; \
	elif $(BIN)/python -m app.gui.display; then $(BIN)/tessera; \
	else echo "Running the headless demo instead."; $(BIN)/tessera demo; fi

# Packaging tools, for `make package` only: PyInstaller in the venv, and Debian's validators of
# the desktop files where this machine can install them (as root with apt-get). The packaging
# tests use the validators when present and check those files themselves otherwise.
$(PACKAGING): $(STAMP)
	$(BIN)/python -m pip install --quiet $(PYINSTALLER)
	@if command -v desktop-file-validate >/dev/null && command -v appstreamcli >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    desktop-file-utils appstream >/dev/null; \
	else echo "note: install desktop-file-utils and appstream to validate packaging/ in the tests"; fi
	touch $(PACKAGING)

# The suite on both cores (pytest-xdist): a file's tests stay in one process, so a module's
# fixture (the RPC cluster, the Ray cluster) starts once; TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
XDIST = -n $(TEST_WORKERS) --dist loadfile --durations=25

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q $(XDIST) $(PYTEST_ARGS)

# Everything but TVM tuning and training (the `slow` marker): the quick loop while editing.
test-fast: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q $(XDIST) -m "not slow" $(PYTEST_ARGS)

# The file loaders' fuzz with new random cases (make test replays the same 1,000 per loader),
# and the filter-expression and device-address grammars' (a quarter as many).
CASES ?= 10000
fuzz: $(STAMP)
	FUZZ_RANDOM=1 FUZZ_CASES=$(CASES) $(BIN)/python -m pytest -q tests/core/test_fuzz_files.py tests/core/test_fuzz_grammars.py

# Lint and format (ruff), types (mypy), import contracts (import-linter: core is Qt-free, the
# command line too, the layers of core, views and app), the same layers for module paths
# written as strings (tests/test_layers.py), and no SQL in app/ or views/, whose queries belong
# to core/store (tests/test_sql_seam.py). Configured in pyproject.toml.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_layers.py tests/test_sql_seam.py

bench: $(STAMP)
	@for f in tests/benchmarks/bench_*.py; do m=$$(basename $$f .py); echo "== $$m"; \
	  QT_QPA_PLATFORM=offscreen $(BIN)/python -m tests.benchmarks.$$m || exit 1; done

# The one-folder application in dist/tessera, with its desktop files under share/, then a
# smoke test of the frozen program offscreen: it opens the window on a bundled example and
# saves a screenshot, builds a TVM library in a worker process, measures and tunes a kernel
# (4 MetaSchedule trials) and trains an operator inside a small network for one epoch.
SMOKE := build/smoke
EXAMPLE := $(DIST)/_internal/resources/examples
package: $(PACKAGING)
	$(BIN)/pyinstaller packaging/tessera.spec --noconfirm --distpath dist --workpath build/pyinstaller --log-level WARN
	@# libtorch_cpu ships with its symbol table (415 -> 345 MB without; loading needs only the dynamic
	@# symbols, which stay); stripping every library breaks numpy's OpenBLAS, so only this one
	strip --strip-unneeded $(DIST)/_internal/torch/lib/libtorch_cpu.so
	install -D -m 644 packaging/$(APP_ID).desktop $(DIST)/share/applications/$(APP_ID).desktop
	install -D -m 644 packaging/$(APP_ID).metainfo.xml $(DIST)/share/metainfo/$(APP_ID).metainfo.xml
	install -D -m 644 resources/icons/tessera.svg $(DIST)/share/icons/hicolor/scalable/apps/$(APP_ID).svg
	rm -rf $(SMOKE) && mkdir -p $(SMOKE)
	QT_QPA_PLATFORM=offscreen $(DIST)/tessera gui $(EXAMPLE)/conv2d.json --screenshot $(SMOKE)/window.png
	$(DIST)/tessera export $(EXAMPLE)/conv2d.json --format library --bind C_in=4,C_out=4,H=8,W=8 --out $(SMOKE)/
	$(DIST)/tessera measure $(EXAMPLE)/conv2d.json --bind C_in=4,C_out=4,H=8,W=8 --tune-trials 4 \
	  --cost-model random --tuning-dir $(SMOKE)/tuning --repeat 3 --min-repeat-ms 5
	$(DIST)/tessera evaluate $(EXAMPLE)/depthwise_separable.json --width 8 --resolution 8 --epochs 1 \
	  --max-batches 4 --no-e2e --now --store $(SMOKE)/results.db
	@du -sh $(DIST)

clean:
	rm -rf $(VENV) build dist *.egg-info
