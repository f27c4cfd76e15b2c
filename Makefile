# llmsim — one Makefile (Redis/Lua style): explicit warnings, -MMD deps.
#
#   make            build ./llmsim
#   make demo       install missing packages, build, run the ready example
#   make test       the layer check, unit tests (cmocka), command-line
#                   tests, the golden outputs and a test that the accuracy
#                   gate fails (no simulation)
#   make asan       unit and command-line tests under AddressSanitizer +
#                   UBSan with the simulation invariants enforced
#                   (sim/base/check.h), and allocation-failure injection
#                   (tests/alloc: every allocation of three runs fails in
#                   turn)
#   make CHECK=1    build-check/llmsim with the invariants enforced
#   make valgrind   command-line tests under valgrind memcheck
#   make check-layers  no file of sim/ includes a layer below its own
#   make validate   every published measurement (tests/validation/), simulated:
#                   prints each error, writes docs/validation.md, and fails
#                   when accuracy is worse than tests/validation/baseline.tsv
#   make validate-baseline  the same run, then rewrites the baseline: commit
#                   it with the change that improves accuracy
#   make golden     regenerate tests/golden/expected/ (review the diff)
#   make fuzz       libFuzzer on every input parser, FUZZ_SECONDS (30) each
#   make install PREFIX=/usr/local
#   make deps       install what is missing (apt-get as root, else print it)

PREFIX ?= /usr/local
CC ?= cc
PKGS = gsl libconfig jansson
# make MPI=1: ./llmsim-mpi, whose sweep spreads points over mpirun's ranks
ifeq ($(MPI),1)
BUILD ?= build-mpi
PKGS += ompi-c
CFLAGS += -DLLMSIM_MPI
endif
# make CHECK=1: simulation invariants enforced (sim/check.h: a broken one
# stops the run with exit status 3), in build-check/; `make asan` has them
ifeq ($(CHECK),1)
BUILD ?= build-check
CFLAGS += -DLLMSIM_CHECK
endif
BUILD ?= build
DEB_PKGS = pkg-config libgsl-dev libconfig-dev libcmocka-dev libjansson-dev \
           valgrind gnuplot-nox libopenmpi-dev openmpi-bin

# snprintf truncation is the intended behaviour of every bounded copy here
WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror -Wno-format-truncation
# recursive (=) so pkg-config runs after `make deps` has installed things
CFLAGS_ALL = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) \
             $(OPT) -g -MMD -MP $(SAN) $(shell pkg-config --cflags $(PKGS)) \
             -DLLMSIM_DATADIR='"$(PREFIX)/share/llmsim"' $(CFLAGS)
OPT ?= -O2
LDLIBS_ALL = $(shell pkg-config --libs $(PKGS)) -lm $(LDLIBS)
TEST_LIBS = $(shell pkg-config --libs cmocka)

# one folder per layer (docs/how-it-works.md); check-layers keeps them in order
LAYERS = base engine hw coll model cost mem train serve decide report cfg cli
SRC = $(foreach l,$(LAYERS),$(wildcard sim/$(l)/*.c))
LIBSRC = $(filter-out sim/cli/main.c,$(SRC))
LIBOBJ = $(LIBSRC:sim/%.c=$(BUILD)/%.o)
TESTSRC = $(wildcard tests/unit/test_*.c)
TESTBIN = $(TESTSRC:tests/unit/%.c=$(BUILD)/tests/%)
# fuzz targets (fuzz/README.md): `make unit` replays their corpus and
# regression inputs with $(CC); `make fuzz` fuzzes them with libFuzzer
FUZZ_TARGETS = model hf gpus topo train include serve compare trace lens calib sweep argv
REPLAYBIN = $(FUZZ_TARGETS:%=$(BUILD)/fuzz/replay-%)
FUZZ_SECONDS ?= 30
BIN = $(if $(filter build,$(BUILD)),llmsim,$(if $(filter build-mpi,$(BUILD)),llmsim-mpi,$(BUILD)/llmsim))

.PHONY: all deps demo test unit cli asan valgrind install clean bench validate validate-baseline calib knee plots \
        check-layers golden golden-check alloc

all: $(BIN)

deps:
	@sh tests/deps.sh $(DEB_PKGS)

$(BUILD)/%.o: sim/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Isim -c $< -o $@

$(BUILD)/libllmsim.a: $(LIBOBJ)
	rm -f $@ && ar rcs $@ $^

$(BIN): $(BUILD)/cli/main.o $(BUILD)/libllmsim.a
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libllmsim.a
	@mkdir -p $(BUILD)/tests
	$(CC) $(CFLAGS_ALL) -Isim -o $@ $< $(BUILD)/libllmsim.a $(TEST_LIBS) $(LDLIBS_ALL)

unit: $(TESTBIN) $(REPLAYBIN)
	@fail=0; for t in $(TESTBIN); do \
	  LLMSIM_DATA=$(CURDIR) ./$$t || fail=1; done; \
	for t in $(FUZZ_TARGETS); do LLMSIM_DATA=$(CURDIR) \
	  ./$(BUILD)/fuzz/replay-$$t fuzz/corpus/$$t fuzz/regress/$$t || fail=1; \
	done; exit $$fail

$(BUILD)/fuzz/%.o: fuzz/%.c
	@mkdir -p $(BUILD)/fuzz
	$(CC) $(CFLAGS_ALL) -Isim -DFUZZ_REPO='"$(CURDIR)"' -c $< -o $@

.PRECIOUS: $(BUILD)/fuzz/%.o
$(BUILD)/fuzz/replay-%: $(BUILD)/fuzz/replay.o $(BUILD)/fuzz/fuzz_%.o \
                        $(BUILD)/fuzz/fuzz_util.o $(BUILD)/libllmsim.a
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

# libFuzzer, FUZZ_SECONDS per target (fuzz/run.sh).  clang builds the
# library again into build-fuzz/ (never build/), with coverage hooks;
# its warnings are not errors (gcc and -Werror judge the code, not clang).
.PHONY: fuzz fuzz-bins
fuzz:
	@sh tests/deps.sh clang libclang-rt-14-dev pkg-config libgsl-dev libconfig-dev libjansson-dev
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang OPT=-O1 \
	  SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  CFLAGS="$(CFLAGS) -Wno-unknown-warning-option -Wno-error" fuzz-bins
	@FUZZ_SECONDS=$(FUZZ_SECONDS) sh fuzz/run.sh $(FUZZ_TARGETS)

fuzz-bins: $(FUZZ_TARGETS:%=$(BUILD)/fuzz-%)

$(BUILD)/fuzz-%: $(BUILD)/fuzz/fuzz_%.o $(BUILD)/fuzz/fuzz_util.o $(BUILD)/libllmsim.a
	$(CC) $(CFLAGS_ALL) -fsanitize=fuzzer -o $@ $^ $(LDLIBS_ALL)

check-layers:
	@sh tests/check-layers.sh

# Golden outputs of the ready experiments (tests/golden/run.sh): `make
# golden` rewrites them, `make test` compares them byte for byte.
golden: all
	@rm -rf tests/golden/expected
	@sh tests/golden/run.sh tests/golden/expected
	@echo "golden: tests/golden/expected/ rewritten; review \`git diff tests/golden\`"

golden-check: $(BIN)
	@d=$$(mktemp -d) && LLMSIM=./$(BIN) sh tests/golden/run.sh $$d/out && \
	  if diff -r tests/golden/expected $$d/out >$$d/diff; then \
	    echo "golden: $$(ls tests/golden/expected | wc -l) outputs byte-identical"; rm -rf $$d; \
	  else head -60 $$d/diff; echo "golden: outputs differ (make golden, then review the diff)"; rm -rf $$d; exit 1; fi

# ./llmsim finds the data beside itself; other builds are pointed at it
cli: $(BIN) $(BUILD)/trace-check
	@$(if $(filter llmsim,$(BIN)),,LLMSIM_DATA=$(CURDIR)) LLMSIM=./$(BIN) \
	  TRACE_CHECK=./$(BUILD)/trace-check sh tests/cli/run.sh

# the MPI build too, so the command-line tests can check mpirun's sweep
test: deps
	@$(MAKE) --no-print-directory all
	@if pkg-config --exists ompi-c && command -v mpirun >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory MPI=1 all >/dev/null; fi
	@$(MAKE) --no-print-directory check-layers unit cli golden-check
	@sh tests/validate-gate-test.sh

# ./llmsim too: the command-line tests check both builds write the same bytes
asan: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 CHECK=1 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  unit cli alloc

# Allocation-failure injection (tests/alloc/): llmsim linked with
# failalloc.o, whose wrappers of malloc & co. fail the N-th allocation;
# every N over a training run, a serving run and a sweep point must exit 1
# with "out of memory", no crash, no leak.  Runs in `make asan`.
ALLOC_WRAP = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
$(BUILD)/alloc/failalloc.o: tests/alloc/failalloc.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/llmsim-failalloc: $(BUILD)/cli/main.o $(BUILD)/libllmsim.a $(BUILD)/alloc/failalloc.o
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(ALLOC_WRAP) $(LDLIBS_ALL)

alloc: $(BUILD)/llmsim-failalloc
	@LLMSIM_DATA=$(CURDIR) sh tests/alloc/run.sh ./$< train -- \
	  train configs/train-llama2-7b-8xh100.cfg --set parallel.global_batch=8
	@LLMSIM_DATA=$(CURDIR) sh tests/alloc/run.sh ./$< serve -- \
	  serve configs/serve-llama2-70b-disagg-2xh100.cfg --requests 4
	@LLMSIM_DATA=$(CURDIR) sh tests/alloc/run.sh ./$< sweep-point -- \
	  sweep configs/train-llama2-7b-8xh100.cfg --vary parallel.tp=2 -j 1 \
	  --no-progress --out @OUT@

valgrind: deps all $(TESTBIN) $(BUILD)/trace-check
	@for t in $(TESTBIN); do LLMSIM_DATA=$(CURDIR) valgrind -q --error-exitcode=99 \
	  --leak-check=full --errors-for-leak-kinds=definite,indirect ./$$t >/dev/null || exit 1; done
	@echo "valgrind: unit tests clean"
	@LLMSIM="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect ./llmsim" \
	  sh tests/cli/run.sh

# The headline question: 8 x A100 or 4 x H100 for a 70B model?
demo: deps
	@$(MAKE) --no-print-directory all
	./llmsim compare configs/compare-8xa100-vs-4xh100.cfg --png demo-compare.png
	@echo "demo: the comparison's picture is in demo-compare.png"

$(BUILD)/bench: tests/bench/bench.c $(BUILD)/libllmsim.a
	$(CC) $(CFLAGS_ALL) -Isim -o $@ $< $(BUILD)/libllmsim.a $(LDLIBS_ALL)

# The trace-event schema checker the command-line tests run on traces
$(BUILD)/trace-check: tests/trace/trace_check.c
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDLIBS_ALL)

# Figures, not assertions: events/s and wall time of fixed scenarios.
bench: deps
	@$(MAKE) --no-print-directory $(BUILD)/bench
	@./$(BUILD)/bench

# CUDA calibration microbenchmarks: built where nvcc exists, skipped
# cleanly elsewhere; `llmsim calibrate --run --gpu NAME` runs them.
calib:
	@if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then \
	  $(MAKE) --no-print-directory -C calib/cuda; \
	else echo "nvcc not found: skipping calibration microbenchmarks"; fi

# Predicted against published measurements, every case with its error;
# docs/validation.md is rewritten, and the run fails on a regression against
# tests/validation/baseline.tsv (tests/validate-compare.sh says what counts).
validate: deps
	@$(MAKE) --no-print-directory all
	@sh tests/validate.sh

# The same run, then the baseline rewritten from it: in the commit that
# improves accuracy (or, saying why, in one that accepts a worse case).
validate-baseline: deps
	@$(MAKE) --no-print-directory all
	@sh tests/validate.sh --update

# The latency-throughput knee of the ready serving deployment (README).
KNEE = plots/serve-knee-llama2-70b-8xh100
knee: deps
	@$(MAKE) --no-print-directory all
	sh plots/serve-knee.sh $(KNEE).csv "2 4 6 8 10 12 14 16 17 18 19 20 22 24" -- \
	  --model llama-2-70b --cluster dgx-h100 --tp 4 --replicas 2 \
	  --prompt-len empirical:configs/traces/azure-llm-2023-conv.csv \
	  --output-len empirical:configs/traces/azure-llm-2023-conv.csv \
	  --requests 3000 --seed 1 --slo-ttft 1000 --slo-tpot 100 --allow-truncate
	gnuplot -e "in='$(KNEE).csv'; out='$(KNEE).png'; slo_ttft=1.0; slo_tpot=100; title='Llama-2-70B on 8 x H100 (2 replicas of TP 4), Poisson arrivals with the Azure conversation lengths'" plots/serve-knee.gp

# The README's pictures, PNG and SVG, from the ready experiments.  Sweep
# files are removed first: a sweep resumes whatever its --out file holds.
P = plots
SCALING = $(P)/scaling-llama2-13b-dgx-a100
MEMORY = $(P)/memory-llama3-70b-64xh100
CDF = $(P)/latency-cdf-llama2-70b-8xh100
TIMELINE = $(P)/timeline-llama2-7b-8xh100
COMPARE = $(P)/compare-8xa100-vs-4xh100
plots: deps
	@$(MAKE) --no-print-directory all
	./llmsim compare configs/compare-8xa100-vs-4xh100.cfg --png $(COMPARE).png >/dev/null
	./llmsim compare configs/compare-8xa100-vs-4xh100.cfg --png $(COMPARE).svg >/dev/null
	rm -f $(SCALING).csv
	./llmsim sweep configs/sweep-scaling-interconnect.cfg --no-progress
	sh $(P)/scaling.sh $(SCALING).csv $(SCALING).dat
	for t in png svg; do gnuplot -e "in='$(SCALING).dat'; out='$(SCALING).$$t'; term='$$t'; title='Llama-2-13B weak scaling on DGX A100: TP 8 in a node, data parallel over InfiniBand (NVLink and IB per GPU)'" $(P)/scaling.gp; done
	rm -f $(MEMORY).csv
	./llmsim sweep configs/train-llama3-70b-64xh100.cfg --vary parallel.zero=0,1,2,3 \
	  --vary parallel.recompute=none,selective,full --out $(MEMORY).csv --no-progress
	sh $(P)/memory.sh $(MEMORY).csv $(MEMORY).dat
	for t in png svg; do gnuplot -e "in='$(MEMORY).dat'; out='$(MEMORY).$$t'; term='$$t'; title='Llama-3-70B on 64 H100 (TP 8 x PP 4 interleaved x DP 2): memory per GPU at the peak'" $(P)/memory.gp; done
	./llmsim serve configs/serve-llama2-70b-8xh100.cfg --requests 3000 --csv $(CDF).csv >/dev/null
	./llmsim serve configs/serve-llama2-70b-8xh100.cfg --requests 3000 --set serving.tp=8 \
	  --set serving.replicas=1 --csv $(CDF)-tp8.csv >/dev/null
	for t in png svg; do gnuplot -e "in='$(CDF).csv'; label1='2 replicas of TP 4'; in2='$(CDF)-tp8.csv'; label2='1 replica of TP 8'; out='$(CDF).$$t'; term='$$t'; slo_ttft=1000; slo_tpot=100; title='Llama-2-70B on 8 x H100, Azure conversation trace (first 3,000 requests)'" $(P)/latency-cdf.gp; done
	./llmsim train --model llama-2-7b --cluster dgx-h100 --tp 2 --pp 2 --dp 2 --sp \
	  --global-batch 16 --seq-len 4096 --recompute selective --zero 1 --timeline $(TIMELINE).csv >/dev/null
	for t in png svg; do gnuplot -e "in='$(TIMELINE).csv'; out='$(TIMELINE).$$t'; term='$$t'; title='Llama-2-7B on 8 x H100, TP 2 x PP 2 x DP 2: one training step'" $(P)/timeline.gp; done
	@$(MAKE) --no-print-directory knee
	gnuplot -e "in='$(KNEE).csv'; out='$(KNEE).svg'; term='svg'; slo_ttft=1.0; slo_tpot=100; title='Llama-2-70B on 8 x H100 (2 replicas of TP 4), Poisson arrivals with the Azure conversation lengths'" $(P)/serve-knee.gp
	@echo "plots: PNG and SVG in $(P)/"

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/llmsim/topologies \
	  $(DESTDIR)$(PREFIX)/share/llmsim/models $(DESTDIR)$(PREFIX)/share/llmsim/stacks
	install -m 755 llmsim $(DESTDIR)$(PREFIX)/bin/llmsim
	install -m 644 topologies/*.cfg topologies/*.tsv $(DESTDIR)$(PREFIX)/share/llmsim/topologies/
	install -m 644 models/*.cfg $(DESTDIR)$(PREFIX)/share/llmsim/models/
	install -m 644 stacks/*.cfg $(DESTDIR)$(PREFIX)/share/llmsim/stacks/
	install -d $(DESTDIR)$(PREFIX)/share/llmsim/configs/traces
	install -m 644 configs/*.cfg $(DESTDIR)$(PREFIX)/share/llmsim/configs/
	install -m 644 configs/traces/* $(DESTDIR)$(PREFIX)/share/llmsim/configs/traces/
	cd calib && find . -name '*.tsv' -o -name '*.md' | while read f; do \
	  install -D -m 644 "$$f" "$(DESTDIR)$(PREFIX)/share/llmsim/calib/$$f"; done

clean:
	rm -rf build build-asan build-mpi build-fuzz build-check llmsim llmsim-mpi

-include $(wildcard $(BUILD)/*/*.d)
