#include "target.h"

#include "lib/found/found_static.h"
#include "lib/types/gdb_types.h"
#include "lib/found/machine.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The binary: ELF, version, USDT. Shared by the live and offline opens. */
static int open_binary(struct pgbt_target *t, const char *path, struct pgbt_err *err)
{
	if (path != t->path)
		snprintf(t->path, sizeof(t->path), "%s", path);
	t->elf = pgbt_elf_open(path, err);
	if (!t->elf)
		return -1;
	if (pgbt_elf_pg_version(t->elf, t->version, sizeof(t->version), &t->major, err) < 0)
		return -1;
	t->machine = pgbt_elf_machine(t->elf);
	return pgbt_usdt_read(t->elf, &t->usdt, err);
}

static void read_datadir_version(struct pgbt_target *t)
{
	char file[PATH_MAX + 16];
	FILE *f;

	snprintf(file, sizeof(file), "%s/PG_VERSION", t->datadir);
	f = fopen(file, "r");
	if (!f)
		return;
	if (fgets(t->datadir_version, sizeof(t->datadir_version), f))
		t->datadir_version[strcspn(t->datadir_version, "\n")] = '\0';
	fclose(f);
}

/* A failed open releases what it had opened: callers close only targets
 * that opened. */
static int open_failed(struct pgbt_target *t)
{
	pgbt_target_close(t);
	return -1;
}

static int open_live(struct pgbt_target *t, pid_t pid, struct pgbt_err *err)
{
	unsigned dev_major, dev_minor;
	uint64_t inode;

	t->named_pid = pid;
	if (!pgbt_proc_exists(pid))
		return pgbt_fail_code(err, PGBT_EGONE, "process %d: no such process", (int)pid);
	if (pgbt_proc_postmaster_of(pid, &t->pid, err) < 0)
		return -1;
	if (pgbt_proc_exe(t->pid, t->exe, sizeof(t->exe), err) < 0 ||
	    pgbt_proc_exe_path(t->pid, t->path, sizeof(t->path), err) < 0 ||
	    pgbt_proc_exe_id(t->pid, &dev_major, &dev_minor, &inode, err) < 0)
		return -1;
	/* The postmaster chdirs to its data directory. */
	if (pgbt_proc_cwd(t->pid, t->datadir_inside, sizeof(t->datadir_inside), err) < 0 ||
	    pgbt_proc_cwd_path(t->pid, t->datadir, sizeof(t->datadir), err) < 0)
		return -1;
	read_datadir_version(t);
	t->nspid = t->pid;
	t->other_pidns = pgbt_proc_other_pidns(t->pid);
	if (t->other_pidns && (pgbt_proc_nspid(t->pid, &t->nspid, err) < 0 ||
			       pgbt_proc_pidns_depth(t->pid, &t->pidns_depth, err) < 0))
		return -1;
	if (open_binary(t, t->path, err) < 0)
		return -1;
	if (pgbt_proc_maps(t->pid, &t->maps, err) < 0)
		return -1;
	if (pgbt_maps_load_bias(&t->maps, dev_major, dev_minor, inode,
				pgbt_elf_load_vaddr(t->elf), &t->bias, err) < 0)
		return pgbt_fail_prefix(err, "process %d", (int)t->pid);
	return 0;
}

int pgbt_target_open_pid(struct pgbt_target *t, pid_t pid, struct pgbt_err *err)
{
	memset(t, 0, sizeof(*t));
	return open_live(t, pid, err) < 0 ? open_failed(t) : 0;
}

int pgbt_target_open_datadir(struct pgbt_target *t, const char *datadir, struct pgbt_err *err)
{
	pid_t pid;

	memset(t, 0, sizeof(*t));
	if (pgbt_datadir_postmaster(datadir, &pid, err) < 0)
		return -1;
	return pgbt_target_open_pid(t, pid, err);
}

int pgbt_target_open_binary(struct pgbt_target *t, const char *path, struct pgbt_err *err)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->exe, sizeof(t->exe), "%s", path);
	return open_binary(t, path, err) < 0 ? open_failed(t) : 0;
}

int pgbt_target_open_default(struct pgbt_target *t, struct pgbt_err *err)
{
	pid_t *pids = NULL;
	size_t n = 0;
	int rc;

	memset(t, 0, sizeof(*t));
	if (pgbt_proc_postmasters(&pids, &n, err) < 0)
		return -1;
	if (n == 1) {
		rc = pgbt_target_open_pid(t, pids[0], err);
		free(pids);
		return rc;
	}
	if (n == 0) {
		free(pids);
		return pgbt_fail(err, "no running PostgreSQL server found; "
				 "name one with -p PID, -D DATADIR or --bin PATH");
	}
	{
		char list[768] = "";
		for (size_t i = 0; i < n; i++) {
			char dir[PATH_MAX] = "?", item[PATH_MAX + 32];
			struct pgbt_err ignored;
			pgbt_proc_cwd(pids[i], dir, sizeof(dir), &ignored);
			snprintf(item, sizeof(item), "%s%d (%s)", i ? ", " : "", (int)pids[i], dir);
			strncat(list, item, sizeof(list) - strlen(list) - 1);
		}
		free(pids);
		return pgbt_fail(err, "%zu PostgreSQL servers are running: %s; "
				 "choose one with -p PID or -D DATADIR", n, list);
	}
}

void pgbt_target_close(struct pgbt_target *t)
{
	if (t->dwarf)
		pgbt_dwarf_close(t->dwarf);
	pgbt_gdb_close(t->gdb);
	pgbt_layout_free(&t->layout);    /* loaded for labels even with DWARF */
	pgbt_usdt_free(&t->usdt);
	pgbt_proc_maps_free(&t->maps);
	if (t->elf)
		pgbt_elf_close(t->elf);
	memset(t, 0, sizeof(*t));
}

/* Opens DWARF on first use; without it, loads the built-in layout. */
static void open_types(struct pgbt_target *t)
{
	struct pgbt_err err;
	int rc;

	if (t->types_opened)
		return;
	t->types_opened = true;
	rc = pgbt_layout_builtin(t->major, pgbt_machine_name(t->machine), &t->layout, &err);
	if (t->types_from_gdb) {    /* the layout for its labels only */
		if (!(t->gdb = pgbt_gdb_types_open(t->path, &t->dwarf_err)))
			pgbt_fail_prefix(&t->dwarf_err, "--resolver gdb");
		return;
	}
	t->dwarf = pgbt_dwarf_open(t->path, &t->dwarf_err);
	if (t->dwarf)    /* the layout stays loaded for its labels only */
		return;
	if (rc == 0 && t->layout.n_abi)
		t->has_layout = true;
	else if (rc < 0)    /* a bug in pgbt's own data: say so rather than hide it */
		pgbt_fail(&t->dwarf_err, "%s; %s", t->dwarf_err.msg, err.msg);
}

void pgbt_target_types_origin(struct pgbt_target *t, char *ret, size_t len)
{
	open_types(t);
	if (t->gdb)
		snprintf(ret, len, "%s reading the debug info of %s (--resolver gdb): "
			 "%u questions in %ld ms", pgbt_gdb_version(t->gdb), t->path,
			 pgbt_gdb_asked(t->gdb), pgbt_gdb_elapsed_ms(t->gdb));
	else if (t->types_from_gdb)
		snprintf(ret, len, "none (%s)", t->dwarf_err.msg);
	else if (t->dwarf)
		snprintf(ret, len, "DWARF in %s", pgbt_dwarf_source(t->dwarf));
	else if (t->has_layout)
		snprintf(ret, len, "pgbt's %s for PostgreSQL %d on %s (%s)",
			 t->layout.origin, t->major, pgbt_machine_name(t->machine),
			 t->dwarf_err.msg);
	else
		snprintf(ret, len, "none (%s)", t->dwarf_err.msg);
}

/* Sets *how for a fact and decides between DWARF and the layout (or
 * gdb): returns 1 to use DWARF, 0 to use the layout, 2 to use gdb, -1 when
 * none can answer. */
static int types_source(struct pgbt_target *t, char *how, struct pgbt_err *err)
{
	char known[128];

	open_types(t);
	if (t->types_from_gdb) {
		snprintf(how, PGBT_HOW_LEN, "gdb");
		return t->gdb ? 2 : pgbt_fail(err, "%s", t->dwarf_err.msg);
	}
	if (t->dwarf) {
		snprintf(how, PGBT_HOW_LEN, "DWARF");
		return 1;
	}
	if (t->has_layout) {
		snprintf(how, PGBT_HOW_LEN, "%s for PostgreSQL %d", t->layout.origin, t->major);
		return 0;
	}
	pgbt_layout_builtin_majors(pgbt_machine_name(t->machine), known, sizeof(known));
	return pgbt_fail_code(err, PGBT_ENODEBUG, "%s (PostgreSQL %d), and pgbt has no built-in "
			      "layout for PostgreSQL %d on %s (it has %s there); install the "
			      "server's debug symbols (its -dbgsym or -debuginfo package), set "
			      "DEBUGINFOD_URLS, or trace a server of a major it has (or give "
			      "--layouts-dir a directory with %d.layout)", t->dwarf_err.msg,
			      t->major, t->major, pgbt_machine_name(t->machine),
			      known[0] ? known : "none", t->major);
}

static int layout_missing(struct pgbt_target *t, const char *what, struct pgbt_err *err)
{
	return pgbt_fail_code(err, PGBT_ENOTFOUND, "%s: no DWARF debug info, and pgbt's built-in "
			      "layout for PostgreSQL %d on %s has no %s; install the server's "
			      "debug symbols, set DEBUGINFOD_URLS, or add it to a layout under "
			      "--layouts-dir", t->path, t->major, pgbt_machine_name(t->machine), what);
}

/* The built-in layout's fact, or NULL with an error naming what is missing. */
static const struct pgbt_fact *layout_fact(struct pgbt_target *t, enum pgbt_fact_kind kind,
					   const char *type, const char *name,
					   struct pgbt_err *err)
{
	const struct pgbt_fact *f = pgbt_layout_find(&t->layout, kind, type, name);
	char what[256];

	if (f)
		return f;
	switch (kind) {
	case FACT_MEMBER: snprintf(what, sizeof(what), "member %s.%s", type, name); break;
	case FACT_SIZEOF: snprintf(what, sizeof(what), "sizeof(%s)", type); break;
	case FACT_VAR: snprintf(what, sizeof(what), "type for the global %s", name); break;
	case FACT_ENUMERATOR: snprintf(what, sizeof(what), "enumerator %s", name); break;
	case FACT_ENUM: snprintf(what, sizeof(what), "enum %s", type); break;
	case FACT_LABEL: snprintf(what, sizeof(what), "label for %s", name); break;
	}
	layout_missing(t, what, err);
	return NULL;
}

int pgbt_target_member(struct pgbt_target *t, const char *type, const char *member,
		       uint64_t *ret_off, uint64_t *ret_size, char *how, struct pgbt_err *err)
{
	const struct pgbt_fact *f;
	int src = types_source(t, how, err);

	if (src < 0)
		return -1;
	if (src == 2)
		return pgbt_gdb_member(t->gdb, type, member, ret_off, ret_size, err);
	if (src)
		return pgbt_dwarf_member(t->dwarf, type, member, ret_off, ret_size, err);
	if (!(f = layout_fact(t, FACT_MEMBER, type, member, err)))
		return -1;
	*ret_off = f->a;
	*ret_size = f->b;
	return 0;
}

int pgbt_target_sizeof(struct pgbt_target *t, const char *type, uint64_t *ret_size,
		       char *how, struct pgbt_err *err)
{
	const struct pgbt_fact *f;
	int src = types_source(t, how, err);

	if (src < 0)
		return -1;
	if (src == 2)
		return pgbt_gdb_sizeof(t->gdb, type, ret_size, err);
	if (src)
		return pgbt_dwarf_sizeof(t->dwarf, type, ret_size, err);
	if (!(f = layout_fact(t, FACT_SIZEOF, type, NULL, err)))
		return -1;
	*ret_size = f->a;
	return 0;
}

int pgbt_target_var_type(struct pgbt_target *t, const char *var, char *ret_type,
			 size_t len, int *ret_pointers, char *how, struct pgbt_err *err)
{
	const struct pgbt_fact *f;
	int src = types_source(t, how, err);

	if (src < 0)
		return -1;
	if (src == 2)
		return pgbt_gdb_var_type(t->gdb, var, ret_type, len, ret_pointers, err);
	if (src)
		return pgbt_dwarf_var_type(t->dwarf, var, ret_type, len, ret_pointers, err);
	if (!(f = layout_fact(t, FACT_VAR, NULL, var, err)))
		return -1;
	snprintf(ret_type, len, "%s", f->type);
	*ret_pointers = (int)f->a;
	return 0;
}

int pgbt_target_enumerator(struct pgbt_target *t, const char *name, int64_t *ret,
			   char *how, struct pgbt_err *err)
{
	const struct pgbt_fact *f;
	int src = types_source(t, how, err);

	if (src < 0)
		return -1;
	if (src == 2)
		return pgbt_gdb_enumerator(t->gdb, name, ret, err);
	if (src)
		return pgbt_dwarf_enumerator(t->dwarf, name, ret, err);
	if (!(f = layout_fact(t, FACT_ENUMERATOR, NULL, name, err)))
		return -1;
	*ret = (int64_t)f->a;
	return 0;
}

int pgbt_target_enum(struct pgbt_target *t, const char *name,
		     struct pgbt_enumerator **ret, size_t *ret_n, char *how,
		     struct pgbt_err *err)
{
	const struct pgbt_fact *f;
	struct pgbt_enumerator *e = NULL;
	size_t n = 0;
	char *names, *save = NULL;
	int src = types_source(t, how, err);

	if (src < 0)
		return -1;
	if (src == 2)
		return pgbt_gdb_enum(t->gdb, name, ret, ret_n, err);
	if (src)
		return pgbt_dwarf_enum(t->dwarf, name, ret, ret_n, err);
	if (!(f = layout_fact(t, FACT_ENUM, name, NULL, err)))
		return -1;
	if (!(names = strdup(f->names)))
		return pgbt_fail(err, "out of memory");
	for (char *tok = strtok_r(names, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		const struct pgbt_fact *v = layout_fact(t, FACT_ENUMERATOR, NULL, tok, err);
		struct pgbt_enumerator *ne = v ? realloc(e, (n + 1) * sizeof(*e)) : NULL;
		if (!ne) {
			free(names);
			free(e);
			return v ? pgbt_fail(err, "out of memory") : -1;
		}
		e = ne;
		snprintf(e[n].name, sizeof(e[n].name), "%s", tok);
		e[n++].value = (int64_t)v->a;
	}
	free(names);
	*ret = e;
	*ret_n = n;
	return 0;
}

/* The one type fact the search for a static global asks. */
static int member_offset(void *t, const char *type, const char *member, uint64_t *ret,
			 struct pgbt_err *err)
{
	uint64_t size;
	char how[PGBT_HOW_LEN];

	return pgbt_target_member(t, type, member, ret, &size, how, err);
}

/* A static global found in code (found_static.c), once per target. */
static int found_static(struct pgbt_target *t, const char *name, uint64_t *ret, char *how,
			struct pgbt_err *err)
{
	if (strcmp(t->found_name, name) != 0) {
		struct pgbt_static_search s = {
			.path = t->path, .elf = t->elf, .major = t->major, .machine = t->machine,
			.pid = t->pid, .maps = &t->maps, .bias = t->bias,
			.member_offset = member_offset, .ctx = t,
		};

		if (pgbt_found_static(&s, name, &t->found_addr, t->found_how,
				      sizeof(t->found_how), err) < 0)
			return -1;
		snprintf(t->found_name, sizeof(t->found_name), "%s", name);
	}
	*ret = t->found_addr;
	snprintf(how, PGBT_HOW_LEN, "%s", t->found_how);
	return 0;
}

int pgbt_target_symbol_addr(struct pgbt_target *t, const char *name, uint64_t *ret,
			    char *how, struct pgbt_err *err)
{
	struct pgbt_sym sym;
	struct pgbt_err e;

	if (pgbt_elf_symbol(t->elf, name, &sym, &e) < 0) {
		if (e.code == PGBT_ENOTFOUND)
			return found_static(t, name, ret, how, err);
		if (err)
			*err = e;
		return -1;
	}
	*ret = sym.value + t->bias;
	snprintf(how, PGBT_HOW_LEN, "%s value 0x%" PRIx64 " + load bias 0x%" PRIx64
		 " (/proc/%d/maps)", sym.table, sym.value, t->bias, (int)t->pid);
	return 0;
}

int pgbt_target_read_shared_ptr(struct pgbt_target *t, const char *what, uint64_t addr,
				uint64_t off, uint64_t size, uint64_t *ret, char *how,
				struct pgbt_err *err)
{
	return pgbt_target_read_shared_ptr_in(t, t->pid, what, addr, off, size, ret, how, err);
}

int pgbt_target_read_shared_ptr_in(struct pgbt_target *t, pid_t pid, const char *what,
				   uint64_t addr, uint64_t off, uint64_t size, uint64_t *ret,
				   char *how, struct pgbt_err *err)
{
	const struct pgbt_map *m;
	uint64_t ptr;

	if (pgbt_proc_read(pid, addr, &ptr, sizeof(ptr), err) < 0)
		return -1;
	if (ptr == 0)
		return pgbt_fail(err, "process %d: %s is NULL (%s still starting up?)",
				 (int)pid, what, pid == t->pid ? "server" : "backend");
	/* the postmaster's shared mappings: the ones every backend inherits */
	m = pgbt_maps_find(&t->maps, ptr);
	if (!m || m->perms[3] != 's')
		return pgbt_fail(err, "process %d: %s = 0x%" PRIx64 " is not in a shared mapping "
				 "of the postmaster, so it would not be the same in every backend",
				 (int)pid, what, ptr);
	if (ptr + off + size > m->end)
		return pgbt_fail(err, "process %d: %s = 0x%" PRIx64 " + %" PRIu64
				 " runs past its shared mapping", (int)pid, what, ptr, off);
	*ret = ptr;
	snprintf(how, PGBT_HOW_LEN, "read 0x%" PRIx64 " from /proc/%d/mem, in shared mapping "
		 "%" PRIx64 "-%" PRIx64 " %s", ptr, (int)pid, m->start, m->end,
		 m->path[0] ? m->path : "[anon]");
	return 0;
}

int pgbt_target_label(struct pgbt_target *t, const char *name, char *ret, size_t len)
{
	const struct pgbt_fact *f;

	open_types(t);
	f = pgbt_layout_find(&t->layout, FACT_LABEL, NULL, name);
	if (!f)
		return -1;
	snprintf(ret, len, "%s", f->names);
	return 0;
}
