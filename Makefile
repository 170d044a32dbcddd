# pgbt: build pgbt-gen, install it, run the tests and the bench.
#   make                  build build/pgbt-gen
#   make check            install test dependencies, then run every test (root)
#   make unit-asan        the unit tests under ASan and UBSan (build/asan)
#   make fuzz             each libFuzzer target for FUZZ_SECONDS (build/fuzz)
#   make demo             throwaway cluster + workload + xid-rate (root)
#   make bench            measure overhead and generator speed (root)
#   make install PREFIX=/usr/local DESTDIR=
#   make deb              Debian package in build/deb (debhelper, lintian)
# Quiet unless V=1.

# The version lives in one place: the top entry of debian/changelog.
VERSION  := $(shell sed -n '1s/^pgbt (\([0-9][^ ]*\)).*/\1/p' debian/changelog)
PREFIX   ?= /usr/local
DESTDIR  ?=
O        := build

CC       ?= cc
CFLAGS   ?= -O2 -g
PKGS     := libelf libdw libpq json-c
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libm: the HTML report's charts (a log colour scale).
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lelf -ldw -lpq -ljson-c) -lm
# snprintf and strncat truncation is how messages are bounded here, not a
# bug (_FORTIFY_SOURCE, as Debian builds with, warns of the strncat ones).
WARN     := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-format-truncation \
            -Wno-stringop-truncation
# Includes name their file from the repository's root ("lib/found/proc.h"),
# or bare when it is in the same folder.
ALL_CFLAGS := $(WARN) $(CPPFLAGS) $(CFLAGS) $(PKG_CFLAGS) -iquote . -DPGBT_VERSION='"$(VERSION)"'

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2);
endif

# lib/ has a folder per stage of the pipeline (docs/internals.md, "The code").
LIB_SRC  := $(wildcard lib/*/*.c report/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(O)/%.o) $(O)/lib/common/embedded.o
GEN_SRC  := $(wildcard gen/*.c)
GEN_OBJ  := $(GEN_SRC:%.c=$(O)/%.o)
TEMPLATES := $(sort $(wildcard scripts/*.bt))
FRAGMENTS := $(sort $(wildcard scripts/include/*.bt))
LAYOUTS  := $(sort $(wildcard lib/types/layouts/*.layout))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_SH  := $(wildcard tests/unit/test_*.sh)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/%) $(UNIT_SH:tests/unit/%.sh=$(O)/tests/%)
FIXTURE_SRC := $(wildcard tests/unit/fixtures/*.c)
FIXTURES := $(FIXTURE_SRC:tests/unit/fixtures/%.c=$(O)/fixtures/%) \
            $(FIXTURE_SRC:tests/unit/fixtures/%.c=$(O)/fixtures/%.stripped)

.PHONY: all install uninstall deb check unit unit-asan unit-asan-build fuzz fuzzers test-deps demo bench clean
.DELETE_ON_ERROR:

all: $(O)/pgbt-gen $(O)/pgbt-gen.1

# The man page, with its SCRIPTS section filled in from the scripts.
$(O)/pgbt-gen.1: gen/pgbt-gen.1 gen/man-scripts.sh $(O)/pgbt-gen
	$(call msg,MAN,$@)
	$(Q)gen/man-scripts.sh $(O)/pgbt-gen <gen/pgbt-gen.1 >$@

$(O)/%.o: %.c $(wildcard lib/*/*.h gen/*.h report/*.h) | $(O)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@) && $(CC) $(ALL_CFLAGS) -c -o $@ $<

$(O)/libpgbt.a: $(LIB_OBJ)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

# Templates and fallback layouts are compiled into the binary, so a copied
# pgbt-gen works alone.
$(O)/lib/common/embedded.c: lib/common/embed.sh $(TEMPLATES) $(FRAGMENTS) $(LAYOUTS) | $(O)
	$(call msg,EMBED,$@)
	$(Q)mkdir -p $(dir $@) && sh lib/common/embed.sh $(TEMPLATES) $(FRAGMENTS) $(LAYOUTS) > $@

$(O)/lib/common/embedded.o: $(O)/lib/common/embedded.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(O)/pgbt-gen: $(GEN_OBJ) $(O)/libpgbt.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(GEN_OBJ) $(O)/libpgbt.a $(PKG_LIBS)

$(O):
	$(Q)mkdir -p $(O)

# Unit tests: one binary per tests/unit/test_*.c, linked with the library.
$(O)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(O)/libpgbt.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@) && $(CC) $(ALL_CFLAGS) -iquote tests/unit $(LDFLAGS) -o $@ $< $(O)/libpgbt.a $(PKG_LIBS)

# A unit test in shell (test_NAME.sh) runs from build/tests as the others do.
$(O)/tests/%: tests/unit/%.sh
	$(call msg,CP,$@)
	$(Q)mkdir -p $(dir $@) && cp $< $@ && chmod +x $@

# Fixtures: C programs with known layouts and probes, with and without DWARF.
$(O)/fixtures/%: tests/unit/fixtures/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@) && $(CC) -std=gnu11 -O1 -g -fPIE -pie -o $@ $<

# The fake server keeps its globals in .dynsym, like Debian's postgres.
$(O)/fixtures/fake_postgres: tests/unit/fixtures/fake_postgres.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@) && $(CC) -std=gnu11 -O1 -g -fPIE -pie -rdynamic -o $@ $<

$(O)/fixtures/%.stripped: $(O)/fixtures/%
	$(Q)strip -o $@ $<

unit: $(UNIT_BIN) $(FIXTURES) $(O)/pgbt-gen

# The unit tests again, built with AddressSanitizer (leaks included) and
# UndefinedBehaviorSanitizer; any report fails the test that made it.
ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
               -fno-sanitize-recover=all
unit-asan: unit-asan-build
	PGBT_BUILD=build/asan UBSAN_OPTIONS=print_stacktrace=1 tests/run unit

unit-asan-build:
	$(MAKE) O=build/asan CFLAGS='$(ASAN_CFLAGS)' unit

# libFuzzer targets (tests/fuzz/fuzz_NAME.c), built with clang into
# build/fuzz; each starts from its corpus in tests/fuzz/corpus/NAME (with
# the words in tests/fuzz/NAME.dict, if any), which
# it only reads (new inputs go to build/fuzz/corpus/NAME, crashes to
# build/fuzz/crash-*). Merge new inputs with
#   build/fuzz/fuzzers/fuzz_NAME -merge=1 -max_len=4096 NEW tests/fuzz/corpus/NAME build/fuzz/corpus/NAME
# (into an empty NEW that then replaces the corpus; -max_len keeps it small).
FUZZ_TARGETS := template layout elf report
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS  := -O1 -g -fno-omit-frame-pointer -Wno-unknown-warning-option \
                -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all

$(O)/fuzzers/fuzz_%: tests/fuzz/fuzz_%.c $(O)/libpgbt.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@) && $(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $< $(O)/libpgbt.a $(PKG_LIBS)

fuzzers:
	$(MAKE) O=build/fuzz CC=clang CFLAGS='$(FUZZ_CFLAGS)' \
	  $(FUZZ_TARGETS:%=build/fuzz/fuzzers/fuzz_%)

fuzz: fuzzers $(O)/fixtures/fake_postgres.stripped
	$(Q)for t in $(FUZZ_TARGETS); do \
	  mkdir -p build/fuzz/corpus/$$t && \
	  PGBT_FUZZ_BINARY=$(O)/fixtures/fake_postgres.stripped \
	  build/fuzz/fuzzers/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    $$(test -f tests/fuzz/$$t.dict && echo -dict=tests/fuzz/$$t.dict) -artifact_prefix=build/fuzz/ build/fuzz/corpus/$$t tests/fuzz/corpus/$$t \
	    2>build/fuzz/$$t.log || { tail -50 build/fuzz/$$t.log; exit 1; }; \
	  printf '  FUZZ   fuzz_%s: %s runs in %s s, no crash\n' $$t \
	    "$$(sed -n 's/^stat::number_of_executed_units: //p' build/fuzz/$$t.log)" $(FUZZ_SECONDS); \
	done

install: $(O)/pgbt-gen $(O)/pgbt-gen.1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/pgbt/scripts \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(O)/pgbt-gen $(DESTDIR)$(PREFIX)/bin/pgbt-gen
	install -m 644 $(TEMPLATES) $(DESTDIR)$(PREFIX)/share/pgbt/scripts/
	$(if $(FRAGMENTS),install -d $(DESTDIR)$(PREFIX)/share/pgbt/scripts/include && \
	  install -m 644 $(FRAGMENTS) $(DESTDIR)$(PREFIX)/share/pgbt/scripts/include/)
	install -m 644 $(O)/pgbt-gen.1 $(DESTDIR)$(PREFIX)/share/man/man1/pgbt-gen.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/pgbt-gen $(DESTDIR)$(PREFIX)/share/man/man1/pgbt-gen.1
	rm -rf $(DESTDIR)$(PREFIX)/share/pgbt

# The Debian package, built from a copy of this tree in DEB_DIR (so the
# tree gets no debian/ build litter), then checked by lintian, which must
# be silent (debian/pgbt.lintian-overrides says why for what it allows).
# DEB_BUILD_OPTIONS=nocheck skips the unit tests during the build.
DEB_DIR  ?= $(O)/deb
deb:
	@for p in dpkg-buildpackage dh lintian; do command -v $$p >/dev/null || \
	  { echo "make deb: no $$p (tests/setup/install-deps.sh installs it)" >&2; exit 1; }; done
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/pgbt-$(VERSION)
	tar -c --exclude-vcs --exclude=./$(O) . | tar -x -C $(DEB_DIR)/pgbt-$(VERSION)
	cd $(DEB_DIR)/pgbt-$(VERSION) && dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
	  { tail -n 40 ../build.log; echo "make deb: failed, see $(DEB_DIR)/build.log" >&2; exit 1; }
	lintian --fail-on error,warning $(DEB_DIR)/pgbt_$(VERSION)_amd64.changes
	@echo "built $(DEB_DIR)/pgbt_$(VERSION)_amd64.deb"

# Everything the tests need, installed idempotently (root).
# A source build whose source cannot be had (or a package, or a sid root
# whose bpftrace cannot be installed today) exits 3: its tests are
# skipped, by name, not passed.
test-deps:
	tests/setup/all.sh

# Every part runs even when one fails, so one failure shows every other;
# the status is non-zero if any failed, and the last line names them.
# The sanitizers' build and the fuzzers run beside tests/run at nice 19,
# on what CPU its sleeps and waits leave idle; the sanitized unit tests
# run after it (test_proc checks live servers, which e2e stops and starts).
TEST_JOBS ?= 2
check: test-deps
	$(MAKE) unit
	@failed=; \
	nice -n 19 sh -c '$(MAKE) unit-asan-build && $(MAKE) fuzz FUZZ_SECONDS=15' \
	  >$(O)/beside.log 2>&1 & beside=$$!; \
	PGBT_BYSTANDERS=1 PGBT_TEST_JOBS=$(TEST_JOBS) tests/run || failed="$$failed tests/run"; \
	wait $$beside || failed="$$failed unit-asan-build-or-fuzz"; \
	cat $(O)/beside.log; \
	PGBT_BUILD=build/asan UBSAN_OPTIONS=print_stacktrace=1 tests/run unit || failed="$$failed unit-asan"; \
	if [ -n "$$failed" ]; then echo "make check: failed:$$failed" >&2; exit 1; fi; \
	echo "make check: tests/run, unit-asan and fuzz passed"

# Says each step before it runs it (the installs take a while the first time).
demo:
	@echo "make demo: 1. the packages pgbt's build and tests use (bpftrace, a C compiler, elfutils, Debian's PostgreSQL 15...; those missing only): tests/setup/install-deps.sh"
	@tests/setup/install-deps.sh
	@echo "make demo: 2. pgbt-gen: make all"
	@$(MAKE) --no-print-directory all
	@echo "make demo: 3. a throwaway cluster and workload, traced by $(or $(SCRIPT),xid-rate): $(strip examples/demo.sh $(SCRIPT))"
	@examples/demo.sh $(SCRIPT)

# Only what the bench uses: the packages and pgbt-gen (bench/run builds the
# PostgreSQL 17 debug build it compares rendering speed on).
bench:
	tests/setup/install-deps.sh
	$(MAKE) all
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -o $(O)/calibrate bench/calibrate.c
	bench/run

clean:
	rm -rf $(O)
