# The labsim book: the only entry points a reader needs.
#   make book   build the website into _build/html (executes every chapter); STUDENT=1: without solutions
#   make test   build the book, then run every test (unit, notebooks, browser)
#   make lab    JupyterLab on chapters/, .md files open as notebooks, widgets live; EDITION=ko: the Korean chapters
#   make serve  serve _build/html on http://127.0.0.1:8000
#   make bench  run benchmarks/bench_*.py (each prints a table)
#   make print  every figure of every chapter for print and slides: _build/print/<chapter>/fig-N.{pdf,png,gif}
#   make pdf    the whole book as one PDF: _build/pdf/labsim-book.pdf, the Korean edition -ko.pdf (prints the built site with Chromium)
#   make slides one PDF deck per chapter, a slide per figure: _build/slides/<chapter>.pdf (from make print)
#   make fuzz   the program fuzzer, long run: 5,000 random programs (FUZZ_EXAMPLES=...) checked at every level
#   make crosscheck  compare labsim with XLA (JAX), PyTorch's FLOP counter and SCALE-Sim (installs them)
#   make clean / make distclean
SHELL      := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON     ?= python3
VENV       := .venv
PY         := $(VENV)/bin/python
STAMP      := $(VENV)/.installed
LOCK       := requirements/lock.txt
PORT       ?= 8000
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: all venv peers sysdeps book test lab serve bench print pdf slides fuzz crosscheck lock clean distclean help
all: book
help:
	@sed -n '2,13p' Makefile

# ---- Python environment: reinstalled only when pyproject.toml or the lock changes ----
venv: $(STAMP)
$(STAMP): pyproject.toml $(LOCK)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e '.[viz,book,test]' -c $(LOCK)
	@touch $@
	@echo "venv ready: $(VENV)"

# ---- System programs: Graphviz dot, Debian chromium (browser tests, make pdf), a Korean font, poppler-utils
# (pdftotext: tests/test_pdf.py reads the PDF's text) ----
APT_PKGS := graphviz chromium fonts-noto-cjk poppler-utils
CHROMIUM ?= /usr/bin/chromium
define MISSING_SYSDEPS
m=""; \
command -v dot >/dev/null 2>&1 || m="$$m graphviz"; \
test -x "$(CHROMIUM)" || command -v chromium >/dev/null 2>&1 || m="$$m chromium"; \
{ fc-list :lang=ko family 2>/dev/null | grep -q . || dpkg -s fonts-noto-cjk >/dev/null 2>&1; } || m="$$m fonts-noto-cjk"; \
command -v pdftotext >/dev/null 2>&1 || m="$$m poppler-utils"; \
echo $$m
endef
sysdeps:
	@missing="$$($(MISSING_SYSDEPS))"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing system packages:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  missing="$$($(MISSING_SYSDEPS))"; \
	  if [ -z "$$missing" ]; then exit 0; fi; \
	fi; \
	echo "Missing system programs:$$missing" >&2; \
	echo "Install them, then run make again:" >&2; \
	echo "  Debian/Ubuntu: sudo apt-get install $(APT_PKGS)" >&2; \
	echo "  macOS (Homebrew): brew install graphviz && brew install --cask chromium font-noto-sans-cjk && brew install poppler" >&2; \
	echo "                    (then run make with CHROMIUM=/Applications/Chromium.app/Contents/MacOS/Chromium)" >&2; \
	echo "  conda: conda env create -f environment.yml (brings graphviz); install chromium and a CJK font from your OS" >&2; \
	exit 1

# ---- The website ----
# Jupyter Book caches executed notebooks by their own text only; when labsim changes, every chapter's
# outputs may change too, so the cache is dropped (the chapters then run again, about 25 s). The same
# holds for measurements the book reads (book/data/*.json: the GPU calibration of the accuracy appendix).
LABSIM_SRC := $(shell find labsim -name '*.py' 2>/dev/null)
_build/.labsim-stamp: $(LABSIM_SRC) $(wildcard book/data/*.json) $(wildcard labsim/locales/*/LC_MESSAGES/*.po) crosscheck/refs/xla.json crosscheck/refs/torch_flops.json crosscheck/refs/scalesim.json
	rm -rf _build/.jupyter_cache _build/jupyter_execute _build/.doctrees _build/ko
	@mkdir -p _build && touch $@

# make book STUDENT=1: the student edition, every solution cut out (book/_ext/labsim_student.py), built
# into _build/student/_build/html beside the full book.
STUDENT ?=
ifeq ($(STUDENT),1)
book: $(STAMP) sysdeps _build/.labsim-stamp
	LABSIM_BOOK=1 LABSIM_STUDENT=1 $(VENV)/bin/jb build . -W --keep-going --path-output _build/student
	@echo "built the student edition: open _build/student/_build/html/index.html"
else
book: $(STAMP) sysdeps _build/.labsim-stamp
	LABSIM_BOOK=1 $(VENV)/bin/jb build . -W --keep-going
	@# The Korean edition (ko/, issue 25) from the same execution cache: _build/html/ko
	LABSIM_BOOK=1 $(PY) book/_ext/labsim_ko_build.py -W --keep-going
	@echo "built: open _build/html/index.html (English) or _build/html/ko/index.html (Korean), or run: make serve"
endif

# Two workers (pytest-xdist): the browser tests wait on Chromium, so two share the 2-core CI machine well;
# tests/conftest.py keeps the JupyterLab tests on one worker. PYTEST_WORKERS=0 runs in one process.
PYTEST_WORKERS ?= 2
test: book
	LABSIM_REQUIRE_BOOK=1 LABSIM_CHROMIUM=$(CHROMIUM) $(PY) -m pytest tests --durations=25 \
	  $(if $(filter-out 0,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS) --dist loadgroup)

# ---- Reading and writing ----
# book/_ext/labsim_lab.py: JupyterLab rooted at the repository (jupytext.toml applies), .md chapters open as
# notebooks, the cells the website hides open collapsed, computed values render (jupyterlab-myst).
# make lab EDITION=ko: the Korean chapters (ko/chapters), whose figures labsim draws in Korean.
EDITION ?= en
lab: $(STAMP) sysdeps
	$(PY) book/_ext/labsim_lab.py --edition $(EDITION)

serve:
	@test -f _build/html/index.html || { echo "no site yet: run make book first" >&2; exit 1; }
	@echo "serving on http://127.0.0.1:$(PORT)/ (Ctrl-C to stop)"
	$(PYTHON) -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

bench: $(STAMP) sysdeps
	@for f in benchmarks/bench_*.py; do echo "== $$f"; LABSIM_BOOK=1 $(PY) $$f; done

# ---- The print face: every chapter runs once with LABSIM_PRINT_DIR set, and each figure it shows writes
# itself with matplotlib (labsim/viz/printface.py): fig-N.pdf and fig-N.png, fig-N.gif for an animation,
# N as the website numbers it, listed in _build/print/index.md. CHAPTERS="03 07" runs only those.
CHAPTERS ?=
print: $(STAMP) sysdeps
	$(PY) book/_ext/labsim_print.py --out _build/print $(CHAPTERS)

# ---- The book as one PDF (book/_ext/labsim_pdf.py): Chromium prints each page of the built site with
# book/_static/print.css (no navigation or controls; figures in their opening state, animations as strips
# of key frames), behind a title page and a contents page; page numbers stamped (pypdf).
pdf: book
	@# both editions at once (each prints page by page in one Chromium: two cores, half the time)
	LABSIM_CHROMIUM=$(CHROMIUM) $(PY) book/_ext/labsim_pdf.py --site _build/html --out _build/pdf/labsim-book.pdf & en=$$!; \
	LABSIM_CHROMIUM=$(CHROMIUM) $(PY) book/_ext/labsim_pdf.py --edition ko --out _build/pdf/labsim-book-ko.pdf; ko=$$?; \
	wait $$en; en=$$?; test $$en -eq 0 -a $$ko -eq 0

# ---- Slides (book/_ext/labsim_slides.py): per chapter, a title slide and one 16:9 slide per figure of
# make print (its number, the figure, its caption): _build/slides/<chapter>.pdf. CHAPTERS= as for print.
slides: print
	$(PY) book/_ext/labsim_slides.py --print _build/print --out _build/slides $(CHAPTERS)

# ---- The program fuzzer, long run (make test runs a fixed budget of it; see tests/test_fuzz.py), then the
# machine fuzzer: MACHINE_FUZZ_EXAMPLES random calls per machine and model function (tests/test_machine_fuzz.py) ----
FUZZ_EXAMPLES ?= 5000
MACHINE_FUZZ_EXAMPLES ?= 300
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz LABSIM_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest tests/test_fuzz.py -q -p no:cacheprovider \
	  --hypothesis-show-statistics
	HYPOTHESIS_PROFILE=fuzz LABSIM_MACHINE_FUZZ_EXAMPLES=$(MACHINE_FUZZ_EXAMPLES) $(PY) -m pytest tests/test_machine_fuzz.py \
	  -q -p no:cacheprovider -rxX --hypothesis-show-statistics

# ---- Parity with the peer tools (its own target; CI runs it too) ----
# JAX for the CPU and PyTorch 2.13.0 (CPU build) go into the same venv, once.
XSTAMP := $(VENV)/.crosscheck
$(XSTAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install -q -e '.[crosscheck]' -c $(LOCK)
	@touch $@
# SCALE-Sim 3.0.0 needs NumPy below 2.4, so it gets an environment of its own; labsim runs it as a
# separate process (crosscheck/scalesim_run.py) and never imports it. make bench uses it when present.
PEERS      := .venv-peers
PEERS_LOCK := requirements/peers-lock.txt
PSTAMP     := $(PEERS)/.installed
peers: $(PSTAMP)
$(PSTAMP): $(PEERS_LOCK)
	@test -x $(PEERS)/bin/python || $(PYTHON) -m venv $(PEERS)
	$(PEERS)/bin/pip install -q -r $(PEERS_LOCK)
	@touch $@
	@echo "SCALE-Sim ready: $(PEERS)"
crosscheck: $(XSTAMP) $(PSTAMP)
	$(PY) crosscheck/run.py

# Refresh the pinned constraints from the current venv (after changing pyproject.toml).
lock: $(STAMP)
	@{ sed -n '1,4p' $(LOCK); $(PY) -m pip freeze --exclude-editable | grep -viE '^(labsim|pip|setuptools)=='; } > $(LOCK).new
	mv $(LOCK).new $(LOCK)

clean:
	rm -rf _build .jupyter_cache .pytest_cache .hypothesis build *.egg-info
	find . \( -path ./$(VENV) -o -path ./$(PEERS) \) -prune -o -name __pycache__ -type d -print0 | xargs -0 rm -rf
distclean: clean
	rm -rf $(VENV) $(PEERS)
