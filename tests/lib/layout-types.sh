# shellcheck shell=bash
# Sourced by the e2e files that check a built-in layout against the DWARF
# of a file compiled from a major's installed server headers
# (postgresql-server-dev-N), where no debug build of that major or machine
# can be had: resolution.sh (x86_64) and arm64.sh (aarch64).
#
#   layout_types_build CC INCLUDE OUT [SOURCE...]
#       compiles tests/e2e/layout-types.c (and each SOURCE, e.g. a
#       server source file whose private types a layout describes) with
#       CC -g against the headers in INCLUDE into the executable OUT, for
#       `pgbt-gen check-layouts --bin OUT`; nothing in it runs. The
#       compiler's own system headers only: stubs stand in for the
#       libraries' headers the server headers name (GSSAPI, OpenSSL,
#       systemtap's sdt.h), whose types reach the layouts as pointers if
#       at all, so a cross compiler never reads this machine's headers.
#       Returns 1, with the compiler's first lines in LAYOUT_TYPES_ERR,
#       when it does not compile.

layout_types_stubs() {
	local dir=$1
	mkdir -p "$dir/gssapi" "$dir/openssl" "$dir/sys"
	printf '%s\n' 'typedef unsigned int OM_uint32;' \
		'typedef struct { unsigned long length; void *value; } gss_buffer_desc;' \
		'typedef void *gss_cred_id_t, *gss_ctx_id_t, *gss_name_t;' >"$dir/gssapi/gssapi.h"
	: >"$dir/gssapi/gssapi_ext.h"
	printf '%s\n' 'typedef struct ssl_st SSL;' 'typedef struct ssl_ctx_st SSL_CTX;' \
		'typedef struct x509_st X509;' >"$dir/openssl/ssl.h"
	: >"$dir/openssl/err.h"
	{
		echo '#define DTRACE_PROBE(p, n) ((void) 0)'
		for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
			echo "#define DTRACE_PROBE$i(p, n, ...) ((void) 0)"
		done
	} >"$dir/sys/sdt.h"
}

# shellcheck disable=SC2034 # LAYOUT_TYPES_ERR is for the caller
layout_types_build() {
	local cc=$1 inc=$2 out=$3 stubs=$E2E_TMP/layout-types-stubs src
	shift 3
	layout_types_stubs "$stubs"
	local flags=(-g -O0 -nostdinc -isystem "$("$cc" -print-file-name=include)"
		-I"$stubs" -I"$inc")
	# the libc headers for the compiler's target (cross compilers keep
	# theirs under /usr/TRIPLET/include, Debian's native gcc in
	# /usr/include/TRIPLET and /usr/include)
	local triplet
	triplet=$("$cc" -dumpmachine)
	for d in "/usr/$triplet/include" "/usr/include/$triplet"; do
		[[ -d $d ]] && flags+=(-isystem "$d")
	done
	[[ -d /usr/$triplet/include ]] || flags+=(-isystem /usr/include)
	local objs=()
	for src in "$PGBT_ROOT/tests/e2e/layout-types.c" "$@"; do
		objs+=("$out.$(basename "$src" .c).o")
		if ! "$cc" "${flags[@]}" -c -o "${objs[-1]}" "$src" 2>"$out.err"; then
			LAYOUT_TYPES_ERR="$(basename "$src"): $(grep -m3 'error' "$out.err" | tr '\n' ' ')"
			return 1
		fi
	done
	# a server source file calls into the rest of the server: unresolved
	# here, and never run
	if ! "$cc" -o "$out" "${objs[@]}" -Wl,--unresolved-symbols=ignore-all 2>"$out.err"; then
		LAYOUT_TYPES_ERR="link: $(head -n 3 "$out.err" | tr '\n' ' ')"
		return 1
	fi
}
