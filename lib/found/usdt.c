/* USDT probes from .note.stapsdt. Each note (owner "stapsdt", type 3)
 * describes one probe site; its descriptor is
 *   pc, base, semaphore   three target-sized addresses, file byte order
 *   provider\0 name\0 args\0
 * "base" is the link-time address of .stapsdt.base; when a tool such as
 * prelink moved the file, the section's current address minus the recorded
 * one is the shift to apply to pc and semaphore. */
#include "usdt.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NT_STAPSDT 3
#define STAPSDT_OWNER "stapsdt"

/* What the notes need from the rest of the file. */
struct note_ctx {
	const char *path;
	size_t addr_size;       /* 8 for ELFCLASS64, 4 for ELFCLASS32 */
	bool big_endian;
	bool has_base;
	uint64_t base_addr;     /* sh_addr of .stapsdt.base */
};

/* The descriptor is not translated by libelf (only note headers are), so
 * its addresses are decoded in the file's byte order here. */
static uint64_t read_addr(const struct note_ctx *ctx, const unsigned char *p)
{
	uint64_t v = 0;

	for (size_t i = 0; i < ctx->addr_size; i++) {
		size_t k = ctx->big_endian ? i : ctx->addr_size - 1 - i;

		v = (v << 8) | p[k];
	}
	return v;
}

/* Specs are separated by spaces, but aarch64's memory operands hold one
 * inside their brackets: "-4@[x19, 72] -4@x0" is two. */
static int count_args(const char *args)
{
	int n = 0, depth = 0;

	for (const char *p = args; *p; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']' && depth)
			depth--;
		else if (*p != ' ' && !depth && (p == args || p[-1] == ' '))
			n++;
	}
	return n;
}

/* Copies the NUL-terminated string at *p (which must end before `end`)
 * into dst and advances *p past it. Returns a cause on failure. */
static const char *take_string(const char **p, const char *end, char *dst,
			       size_t dst_size)
{
	const char *nul = memchr(*p, '\0', (size_t)(end - *p));
	size_t len;

	if (!nul)
		return "unterminated";
	len = (size_t)(nul - *p);
	if (len >= dst_size)
		return "too long";
	memcpy(dst, *p, len + 1);
	*p = nul + 1;
	return NULL;
}

/* Decodes one stapsdt descriptor of `size` bytes into probe. */
static int parse_desc(const struct note_ctx *ctx, const unsigned char *desc,
		      size_t size, size_t note_off, struct pgbt_usdt_probe *probe,
		      struct pgbt_err *err)
{
	const char *p = (const char *)desc + 3 * ctx->addr_size;
	const char *end = (const char *)desc + size;
	const struct { const char *what; char *dst; size_t size; } fields[] = {
		{ "provider", probe->provider, sizeof(probe->provider) },
		{ "name", probe->name, sizeof(probe->name) },
		{ "arguments", probe->args, sizeof(probe->args) },
	};
	const char *cause;
	uint64_t note_base;

	if (size < 3 * ctx->addr_size)
		return pgbt_fail(err, "%s: .note.stapsdt: note at offset %zu: "
				 "descriptor of %zu bytes is too short",
				 ctx->path, note_off, size);
	probe->pc = read_addr(ctx, desc);
	note_base = read_addr(ctx, desc + ctx->addr_size);
	probe->sema = read_addr(ctx, desc + 2 * ctx->addr_size);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if ((cause = take_string(&p, end, fields[i].dst, fields[i].size)))
			return pgbt_fail(err, "%s: .note.stapsdt: note at offset %zu: "
					 "%s %s", ctx->path, note_off,
					 fields[i].what, cause);
	if (!probe->provider[0] || !probe->name[0])
		return pgbt_fail(err, "%s: .note.stapsdt: note at offset %zu: "
				 "empty provider or name", ctx->path, note_off);
	if (ctx->has_base && note_base) {
		probe->pc += ctx->base_addr - note_base;
		if (probe->sema)
			probe->sema += ctx->base_addr - note_base;
	}
	probe->nargs = count_args(probe->args);
	return 0;
}

static int append(struct pgbt_usdt *usdt, size_t *cap,
		  const struct pgbt_usdt_probe *probe, const char *path,
		  struct pgbt_err *err)
{
	struct pgbt_usdt_probe *grown;

	if (usdt->n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		grown = realloc(usdt->probes, *cap * sizeof(*grown));
		if (!grown)
			return pgbt_fail(err, "%s: .note.stapsdt: out of memory", path);
		usdt->probes = grown;
	}
	usdt->probes[usdt->n++] = *probe;
	return 0;
}

/* Finds .note.stapsdt (*ret NULL when absent) and the address of
 * .stapsdt.base; an ELF whose section names cannot be read is an error,
 * not a build without probes. */
static int find_sections(Elf *elf, struct note_ctx *ctx, Elf_Scn **ret, struct pgbt_err *err)
{
	Elf_Scn *scn = NULL, *notes = NULL;
	size_t shstrndx;
	const char *name;
	GElf_Shdr sh;

	*ret = NULL;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return pgbt_fail(err, "%s: elf_getshdrstrndx: %s", ctx->path, elf_errmsg(-1));
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (sh.sh_type == SHT_NOTE && !strcmp(name, ".note.stapsdt") && !notes)
			notes = scn;
		if (!strcmp(name, ".stapsdt.base")) {
			ctx->has_base = true;
			ctx->base_addr = sh.sh_addr;
		}
	}
	*ret = notes;
	return 0;
}

/* Walks the notes of the section, keeping the stapsdt ones. */
static int read_notes(const struct note_ctx *ctx, Elf_Data *data,
		      struct pgbt_usdt *usdt, struct pgbt_err *err)
{
	const unsigned char *buf = data->d_buf;
	struct pgbt_usdt_probe probe;
	size_t off = 0, next, name_off, desc_off, cap = 0;
	GElf_Nhdr nh;

	while (off < data->d_size) {
		next = gelf_getnote(data, off, &nh, &name_off, &desc_off);
		if (!next)
			return pgbt_fail(err, "%s: .note.stapsdt: truncated note at "
					 "offset %zu", ctx->path, off);
		if (nh.n_type == NT_STAPSDT &&
		    nh.n_namesz == sizeof(STAPSDT_OWNER) &&
		    !memcmp(buf + name_off, STAPSDT_OWNER, sizeof(STAPSDT_OWNER))) {
			memset(&probe, 0, sizeof(probe));
			if (parse_desc(ctx, buf + desc_off, nh.n_descsz, off, &probe, err) ||
			    append(usdt, &cap, &probe, ctx->path, err))
				return -1;
		}
		off = next;
	}
	return 0;
}

int pgbt_usdt_read(const struct pgbt_elf *pe, struct pgbt_usdt *ret,
		   struct pgbt_err *err)
{
	struct note_ctx ctx = { .path = pgbt_elf_path(pe) };
	Elf *elf = pgbt_elf_handle(pe);
	struct pgbt_usdt usdt = { 0 };
	const char *ident;
	Elf_Data *data;
	Elf_Scn *scn;

	ident = elf_getident(elf, NULL);
	ctx.addr_size = ident && ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	ctx.big_endian = ident && ident[EI_DATA] == ELFDATA2MSB;
	if (find_sections(elf, &ctx, &scn, err) < 0)
		goto fail;
	if (scn) {
		data = elf_getdata(scn, NULL);
		if (!data) {
			pgbt_fail(err, "%s: .note.stapsdt: %s", ctx.path, elf_errmsg(-1));
			goto fail;
		}
		if (read_notes(&ctx, data, &usdt, err))
			goto fail;
	}
	*ret = usdt;
	return 0;
fail:
	pgbt_usdt_free(&usdt);
	return -1;
}

void pgbt_usdt_free(struct pgbt_usdt *usdt)
{
	if (!usdt)
		return;
	free(usdt->probes);
	usdt->probes = NULL;
	usdt->n = 0;
}

static bool matches(const struct pgbt_usdt_probe *p, const char *provider,
		    const char *name)
{
	return !strcmp(p->provider, provider) && !strcmp(p->name, name);
}

const struct pgbt_usdt_probe *pgbt_usdt_find(const struct pgbt_usdt *usdt,
					     const char *provider,
					     const char *name)
{
	for (size_t i = 0; i < usdt->n; i++)
		if (matches(&usdt->probes[i], provider, name))
			return &usdt->probes[i];
	return NULL;
}

size_t pgbt_usdt_count(const struct pgbt_usdt *usdt, const char *provider,
		       const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < usdt->n; i++)
		n += matches(&usdt->probes[i], provider, name);
	return n;
}
