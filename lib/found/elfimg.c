/* One ELF file read through libelf. Everything that indexes the file image
 * (section data, segments, the header tables) is bounds-checked once in
 * pgbt_elf_open, so the lookups after it can trust offsets and sizes. */
#include "elfimg.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* GNU ld writes 20-byte (SHA-1) ids, other linkers 8, 16 or 32 bytes. */
#define BUILD_ID_MAX 64

struct pgbt_elf {
	char *path;
	int fd;
	Elf *elf;
	uint64_t size;          /* file size: the bound for every offset */
	GElf_Ehdr ehdr;
	size_t shnum, phnum;
	bool has_debug_info;
	uint64_t load_vaddr;
	char build_id[2 * BUILD_ID_MAX + 1];
};

/* True when [off, off + len) lies inside a file of `size` bytes, without
 * overflowing on hostile values. */
static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static const char *section_name(const struct pgbt_elf *pe, const GElf_Shdr *sh)
{
	size_t shstrndx;

	if (elf_getshdrstrndx(pe->elf, &shstrndx) != 0)
		return NULL;
	return elf_strptr(pe->elf, shstrndx, sh->sh_name);
}

/* Reads the identification bytes ourselves so that "not ELF at all" and
 * "ELF but damaged" give different messages: libelf folds both into one. */
static int check_ident(int fd, uint64_t size, const char *path,
		       struct pgbt_err *err)
{
	unsigned char ident[EI_NIDENT];
	ssize_t n = pread(fd, ident, sizeof(ident), 0);
	size_t ehdr_size;

	if (n < 0)
		return pgbt_fail(err, "%s: read: %s", path, strerror(errno));
	if ((size_t)n < SELFMAG || memcmp(ident, ELFMAG, SELFMAG) != 0)
		return pgbt_fail(err, "%s: not an ELF file", path);
	if ((size_t)n < EI_NIDENT)
		return pgbt_fail(err, "%s: corrupt ELF: truncated ELF header", path);
	if (ident[EI_CLASS] != ELFCLASS32 && ident[EI_CLASS] != ELFCLASS64)
		return pgbt_fail(err, "%s: corrupt ELF: bad class %u", path,
				 ident[EI_CLASS]);
	if (ident[EI_DATA] != ELFDATA2LSB && ident[EI_DATA] != ELFDATA2MSB)
		return pgbt_fail(err, "%s: corrupt ELF: bad data encoding %u",
				 path, ident[EI_DATA]);
	ehdr_size = ident[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr)
						  : sizeof(Elf32_Ehdr);
	if (size < ehdr_size)
		return pgbt_fail(err, "%s: corrupt ELF: truncated ELF header", path);
	return 0;
}

/* One header table: `count` entries of the expected size at `off`. */
static int check_table(const struct pgbt_elf *pe, const char *what,
		       uint64_t off, uint64_t count, unsigned entsize,
		       Elf_Type type, struct pgbt_err *err)
{
	if (!count)
		return 0;
	if (entsize != gelf_fsize(pe->elf, type, 1, EV_CURRENT) ||
	    !in_file(off, count * entsize, pe->size))
		return pgbt_fail(err, "%s: corrupt ELF: %s at 0x%" PRIx64 " (%" PRIu64
				 " x %u bytes) beyond end of file (%" PRIu64 " bytes)",
				 pe->path, what, off, count, entsize, pe->size);
	return 0;
}

/* The header tables must lie inside the file. libelf accepts a file whose
 * section headers are cut off and then reports no sections, so the raw
 * header fields are checked first; with extended numbering (counts kept in
 * section 0) the real counts are checked again once libelf has read them. */
static int check_tables(struct pgbt_elf *pe, struct pgbt_err *err)
{
	const GElf_Ehdr *eh = &pe->ehdr;
	uint64_t raw_shnum = eh->e_shnum ? eh->e_shnum : eh->e_shoff != 0;

	if (check_table(pe, "section headers", eh->e_shoff, raw_shnum,
			eh->e_shentsize, ELF_T_SHDR, err) ||
	    check_table(pe, "program headers", eh->e_phoff, eh->e_phnum,
			eh->e_phentsize, ELF_T_PHDR, err))
		return -1;
	if (elf_getshdrnum(pe->elf, &pe->shnum) != 0 ||
	    (eh->e_shnum && pe->shnum != eh->e_shnum))
		return pgbt_fail(err, "%s: corrupt ELF: unreadable section headers",
				 pe->path);
	if (elf_getphdrnum(pe->elf, &pe->phnum) != 0)
		return pgbt_fail(err, "%s: corrupt ELF: unreadable program headers",
				 pe->path);
	if (check_table(pe, "section headers", eh->e_shoff, pe->shnum,
			eh->e_shentsize, ELF_T_SHDR, err) ||
	    check_table(pe, "program headers", eh->e_phoff, pe->phnum,
			eh->e_phentsize, ELF_T_PHDR, err))
		return -1;
	return 0;
}

/* Every section with file contents must fit in the file; records whether
 * DWARF is present while walking them. */
static int check_sections(struct pgbt_elf *pe, struct pgbt_err *err)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *name;

	while ((scn = elf_nextscn(pe->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return pgbt_fail(err, "%s: corrupt ELF: section %zu: %s",
					 pe->path, elf_ndxscn(scn), elf_errmsg(-1));
		name = section_name(pe, &sh);
		if (sh.sh_type != SHT_NOBITS &&
		    !in_file(sh.sh_offset, sh.sh_size, pe->size))
			return pgbt_fail(err, "%s: corrupt ELF: section %zu (%s) "
					 "beyond end of file", pe->path,
					 elf_ndxscn(scn), name ? name : "?");
		if (name && sh.sh_type != SHT_NOBITS &&
		    (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			pe->has_debug_info = true;
	}
	return 0;
}

/* Segments must fit in the file too; notes the lowest PT_LOAD. */
static int check_segments(struct pgbt_elf *pe, struct pgbt_err *err)
{
	uint64_t lowest = UINT64_MAX;
	GElf_Phdr ph;

	for (size_t i = 0; i < pe->phnum; i++) {
		if (!gelf_getphdr(pe->elf, (int)i, &ph))
			return pgbt_fail(err, "%s: corrupt ELF: segment %zu: %s",
					 pe->path, i, elf_errmsg(-1));
		if (ph.p_type != PT_NULL &&
		    !in_file(ph.p_offset, ph.p_filesz, pe->size))
			return pgbt_fail(err, "%s: corrupt ELF: segment %zu beyond "
					 "end of file", pe->path, i);
		if (ph.p_type == PT_LOAD && ph.p_vaddr < lowest) {
			lowest = ph.p_vaddr;
			pe->load_vaddr = ph.p_vaddr - ph.p_offset;
		}
	}
	return 0;
}

/* Looks for NT_GNU_BUILD_ID in one block of notes; true when found. */
static bool build_id_in(struct pgbt_elf *pe, Elf_Data *data)
{
	size_t off = 0, next, name_off, desc_off;
	const unsigned char *p = data->d_buf;
	GElf_Nhdr nh;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != sizeof(ELF_NOTE_GNU) ||
		    memcmp(p + name_off, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) != 0 ||
		    nh.n_descsz == 0 || nh.n_descsz > BUILD_ID_MAX)
			continue;
		for (size_t i = 0; i < nh.n_descsz; i++)
			snprintf(pe->build_id + 2 * i, 3, "%02x", p[desc_off + i]);
		return true;
	}
	return false;
}

/* Section notes first; segments for files whose section headers were
 * stripped away entirely. A missing build-id is not an error. */
static void find_build_id(struct pgbt_elf *pe)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Phdr ph;

	while ((scn = elf_nextscn(pe->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if ((data = elf_getdata(scn, NULL)) && build_id_in(pe, data))
			return;
	}
	for (size_t i = 0; i < pe->phnum; i++) {
		if (!gelf_getphdr(pe->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(pe->elf, (int64_t)ph.p_offset, ph.p_filesz,
					    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (data && build_id_in(pe, data))
			return;
	}
}

static int open_file(struct pgbt_elf *pe, struct pgbt_err *err)
{
	struct stat st;

	pe->fd = open(pe->path, O_RDONLY | O_CLOEXEC);
	if (pe->fd < 0)
		return pgbt_fail(err, "%s: %s", pe->path, strerror(errno));
	if (fstat(pe->fd, &st) != 0)
		return pgbt_fail(err, "%s: %s", pe->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return pgbt_fail(err, "%s: not a regular file", pe->path);
	pe->size = (uint64_t)st.st_size;
	if (check_ident(pe->fd, pe->size, pe->path, err))
		return -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return pgbt_fail(err, "%s: libelf: %s", pe->path, elf_errmsg(-1));
	pe->elf = elf_begin(pe->fd, ELF_C_READ_MMAP, NULL);
	if (!pe->elf)
		return pgbt_fail(err, "%s: corrupt ELF: %s", pe->path, elf_errmsg(-1));
	if (elf_kind(pe->elf) != ELF_K_ELF || !gelf_getehdr(pe->elf, &pe->ehdr))
		return pgbt_fail(err, "%s: corrupt ELF: bad ELF header", pe->path);
	return 0;
}

struct pgbt_elf *pgbt_elf_open(const char *path, struct pgbt_err *err)
{
	struct pgbt_elf *pe = calloc(1, sizeof(*pe));

	if (!pe) {
		pgbt_fail(err, "%s: out of memory", path);
		return NULL;
	}
	pe->fd = -1;
	if (!(pe->path = strdup(path))) {
		pgbt_fail(err, "%s: out of memory", path);
		goto fail;
	}
	if (open_file(pe, err) || check_tables(pe, err) ||
	    check_sections(pe, err) || check_segments(pe, err))
		goto fail;
	find_build_id(pe);
	return pe;
fail:
	pgbt_elf_close(pe);
	return NULL;
}

void pgbt_elf_close(struct pgbt_elf *pe)
{
	if (!pe)
		return;
	if (pe->elf)
		elf_end(pe->elf);
	if (pe->fd >= 0)
		close(pe->fd);
	free(pe->path);
	free(pe);
}

const char *pgbt_elf_path(const struct pgbt_elf *pe)
{
	return pe->path;
}

Elf *pgbt_elf_handle(const struct pgbt_elf *pe)
{
	return pe->elf;
}

const char *pgbt_elf_build_id(const struct pgbt_elf *pe)
{
	return pe->build_id;
}

unsigned pgbt_elf_machine(const struct pgbt_elf *pe)
{
	return pe->ehdr.e_machine;
}

bool pgbt_elf_is_pie(const struct pgbt_elf *pe)
{
	return pe->ehdr.e_type == ET_DYN;
}

bool pgbt_elf_has_debug_info(const struct pgbt_elf *pe)
{
	return pe->has_debug_info;
}

uint64_t pgbt_elf_load_vaddr(const struct pgbt_elf *pe)
{
	return pe->load_vaddr;
}

/* Searches every section of one type (SHT_SYMTAB or SHT_DYNSYM). */
static bool symbol_in(const struct pgbt_elf *pe, Elf64_Word type,
		      const char *name, struct pgbt_sym *ret)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Sym sym;
	const char *s;

	while ((scn = elf_nextscn(pe->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getsym(data, (int)i, &sym) ||
			    sym.st_shndx == SHN_UNDEF ||
			    !(s = elf_strptr(pe->elf, sh.sh_link, sym.st_name)) ||
			    strcmp(s, name) != 0)
				continue;
			ret->value = sym.st_value;
			ret->size = sym.st_size;
			ret->type = GELF_ST_TYPE(sym.st_info);
			ret->table = type == SHT_SYMTAB ? ".symtab" : ".dynsym";
			return true;
		}
	}
	return false;
}

int pgbt_elf_symbol(const struct pgbt_elf *pe, const char *name,
		    struct pgbt_sym *ret, struct pgbt_err *err)
{
	if (symbol_in(pe, SHT_SYMTAB, name, ret) ||
	    symbol_in(pe, SHT_DYNSYM, name, ret))
		return 0;
	return pgbt_fail_code(err, PGBT_ENOTFOUND, "%s: no symbol '%s' in .symtab or .dynsym",
			      pe->path, name);
}

int pgbt_elf_read(const struct pgbt_elf *pe, uint64_t vaddr, void *buf,
		  size_t len, struct pgbt_err *err)
{
	const char *image;
	size_t image_size;
	GElf_Phdr ph;

	for (size_t i = 0; i < pe->phnum; i++) {
		if (!gelf_getphdr(pe->elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    vaddr < ph.p_vaddr || vaddr - ph.p_vaddr >= ph.p_memsz)
			continue;
		if (len > ph.p_filesz || vaddr - ph.p_vaddr > ph.p_filesz - len)
			return pgbt_fail(err, "%s: 0x%" PRIx64 " (+%zu bytes) is not "
					 "backed by file contents (.bss?)",
					 pe->path, vaddr, len);
		image = elf_rawfile(pe->elf, &image_size);
		if (!image)
			return pgbt_fail(err, "%s: %s", pe->path, elf_errmsg(-1));
		/* check_segments verified p_offset + p_filesz <= file size. */
		memcpy(buf, image + ph.p_offset + (vaddr - ph.p_vaddr), len);
		return 0;
	}
	return pgbt_fail(err, "%s: 0x%" PRIx64 " is in no PT_LOAD segment",
			 pe->path, vaddr);
}

/* Checks the string at p (at most `avail` bytes to the end of its section)
 * against the shape of PG_VERSION_STR; returns its length or 0. */
static size_t version_str_len(const char *p, size_t avail)
{
	static const char prefix[] = "PostgreSQL ";
	const size_t plen = sizeof(prefix) - 1;
	const char *end = memchr(p, '\0', avail);

	if (!end || (size_t)(end - p) <= plen || p[plen] < '0' || p[plen] > '9')
		return 0;
	if (!memmem(p, (size_t)(end - p), " on ", 4))
		return 0;
	return (size_t)(end - p);
}

/* Finds the version string in one read-only data section. */
static const char *version_in(Elf_Data *data, size_t *ret_len)
{
	const char *p = data->d_buf, *end = p + data->d_size, *hit;
	size_t n;

	while (p < end && (hit = memmem(p, (size_t)(end - p), "PostgreSQL ", 11))) {
		/* Only whole strings: message text quoting an old release
		 * ("... PostgreSQL 9.1 on ...") must not match. */
		if ((hit == data->d_buf || hit[-1] == '\0') &&
		    (n = version_str_len(hit, (size_t)(end - hit)))) {
			*ret_len = n;
			return hit;
		}
		p = hit + 1;
	}
	return NULL;
}

/* The string lives in .rodata, but scanning every allocated read-only
 * PROGBITS section costs little and survives unusual link layouts. */
static const char *find_version(const struct pgbt_elf *pe, size_t *ret_len)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	const char *hit;

	while ((scn = elf_nextscn(pe->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) ||
		    (sh.sh_flags & (SHF_WRITE | SHF_EXECINSTR)) ||
		    !(data = elf_getdata(scn, NULL)) || !data->d_buf)
			continue;
		if ((hit = version_in(data, ret_len)))
			return hit;
	}
	return NULL;
}

int pgbt_elf_pg_version(const struct pgbt_elf *pe, char *ret, size_t len,
			int *ret_major, struct pgbt_err *err)
{
	size_t n;
	const char *s = find_version(pe, &n);
	long major;

	if (!s)
		return pgbt_fail(err, "%s: no PostgreSQL version string; not a "
				 "PostgreSQL server binary?", pe->path);
	/* "PostgreSQL 17.2", "PostgreSQL 18devel", "PostgreSQL 18beta1". */
	major = strtol(s + 11, NULL, 10);
	if (major < 10 || major > 999)
		return pgbt_fail(err, "%s: PostgreSQL %ld is not supported "
				 "(\"%.*s\")", pe->path, major, (int)n, s);
	if (len) {
		n = n < len ? n : len - 1;
		memcpy(ret, s, n);
		ret[n] = '\0';
	}
	*ret_major = (int)major;
	return 0;
}
