/* Tests of the template language and of target resolution, on the fake
 * server fixture (tests/unit/fixtures/fake_postgres.c): offline from its
 * DWARF, offline from the built-in layout (stripped copy), and live from a
 * running copy named "postgres" whose addresses it prints itself. */
#include "check.h"
#include "lib/found/cpus.h"
#include "lib/found/hwbp.h"
#include "lib/template/template.h"

#include <elf.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char fixtures[512];

#define HEADER "/*\n * t\tA test template.\n */\n"

/* The fragments {{include NAME}} finds: "tag" reads the argument $how,
 * "mixed" the parameter $m too, and $how only when m=b; "plain" declares
 * no argument and reads $how, a parameter then; "bad-arg" declares one
 * wrongly; "lines" has a bad tag on its line 4. */
static const char *const fragments[][2] = {
	{ "tag", "//@ arg how\n[{{if $how == acquire}}acq{{else}}rel{{end}} {{$how}}]\n" },
	{ "mixed", "{{if $m == b}}\n//@ arg how  \n\t{{$how}}\n{{else}}\n{{ $m }}\n{{end}}" },
	{ "plain", "{{$how}}\n" },
	{ "bad-arg", "//@ arg 9lives\n" },
	{ "lines", "//@ arg how\n{{$how}}\n\n{{ nope( }}\n" },
};

static int read_fragment(void *ctx, const char *name, char **ret, size_t *ret_len,
			 struct pgbt_err *err)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(fragments) / sizeof(fragments[0]); i++) {
		if (strcmp(fragments[i][0], name) != 0)
			continue;
		*ret = strdup(fragments[i][1]);
		*ret_len = strlen(fragments[i][1]);
		return *ret ? 0 : pgbt_fail(err, "out of memory");
	}
	return pgbt_fail(err, "no fragment %s", name);
}

/* The bpftrace templates are rendered for (NULL: none given). */
static const struct pgbt_bpftrace *render_bt;
/* How {{if watchpoints}} tests the machine (NULL: for real). */
static int (*render_wp)(struct pgbt_err *err);

/* Renders text as template "t" with parameters; NULL on error (in err). */
static char *render(struct pgbt_target *t, const char *text, const char *param,
		    struct pgbt_err *err)
{
	struct pgbt_template tpl;
	char *out = NULL;

	err->msg[0] = '\0';
	if (pgbt_template_load("t", "test", text, strlen(text), read_fragment, NULL, &tpl, err) < 0)
		return NULL;
	if (render_bt)
		pgbt_template_set_bpftrace(&tpl, render_bt);
	pgbt_template_set_watchpoint_test(&tpl, render_wp);
	if (!param || pgbt_template_set_param(&tpl, param, err) == 0)
		pgbt_template_render(&tpl, t, &out, err);
	pgbt_template_free(&tpl);
	return out;
}

/* Expects rendering to succeed and the output to contain want. */
static void expect(struct pgbt_target *t, const char *text, const char *param, const char *want)
{
	struct pgbt_err err;
	char *out = render(t, text, param, &err);

	CHECK(out && strstr(out, want));
	if (!out || !strstr(out, want))
		fprintf(stderr, "     template:\n%s\n     wanted \"%s\" in:\n%s\n     error: %s\n",
			text, want, out ? out : "(none)", err.msg);
	free(out);
}

/* Expects rendering to fail with a message containing want. */
static void expect_error(struct pgbt_target *t, const char *text, const char *param,
			 const char *want)
{
	struct pgbt_err err;
	char *out = render(t, text, param, &err);

	CHECK(!out && strstr(err.msg, want));
	if (out || !strstr(err.msg, want))
		fprintf(stderr, "     template:\n%s\n     wanted error \"%s\", got \"%s\"\n", text,
			want, out ? "(success)" : err.msg);
	free(out);
}

static void test_parse(void)
{
	struct pgbt_template tpl;
	struct pgbt_err err;
	const char *text = HEADER "//@ param interval int:1..60 5 seconds\n"
		"//@ param mode choice:summary|events summary what to print\n"
		"//@ param who ident postgres a name\n"
		"//@ let x = $interval\n"
		"body {{x}}\n";

	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) == 0);
	CHECK_STR(tpl.summary, "A test template.");
	CHECK_EQ_U(tpl.nparams, 3);
	CHECK_EQ_U(tpl.nlets, 1);
	CHECK_STR(tpl.params[0].def, "5");
	CHECK_STR(tpl.params[1].desc, "what to print");

	CHECK(pgbt_template_set_param(&tpl, "interval=60", &err) == 0);
	CHECK(pgbt_template_set_param(&tpl, "interval=61", &err) < 0);
	CHECK_STR(err.msg, "t: interval='61': not an integer in 1..60");
	CHECK(pgbt_template_set_param(&tpl, "interval=12x", &err) < 0);
	CHECK(pgbt_template_set_param(&tpl, "interval=", &err) < 0);
	/* nothing a user passes can become bpftrace code */
	CHECK(pgbt_template_set_param(&tpl, "interval=1 } system(\"id\") {", &err) < 0);
	CHECK(pgbt_template_set_param(&tpl, "mode=events", &err) == 0);
	CHECK(pgbt_template_set_param(&tpl, "mode=event", &err) < 0);
	CHECK_STR(err.msg, "t: mode='event': not one of summary|events");
	CHECK(pgbt_template_set_param(&tpl, "who=a_b9", &err) == 0);
	CHECK(pgbt_template_set_param(&tpl, "who=a\"b", &err) < 0);
	CHECK(pgbt_template_set_param(&tpl, "who=9a", &err) < 0);
	CHECK(pgbt_template_set_param(&tpl, "nope=1", &err) < 0);
	CHECK_STR(err.msg, "t: no parameter 'nope' (it has: interval, mode, who)");
	CHECK(pgbt_template_set_param(&tpl, "interval", &err) < 0);
	pgbt_template_free(&tpl);

	/* backend: a PID (checked against the server at render), 0 for none */
	text = HEADER "//@ param pid backend 0 a backend\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) == 0);
	CHECK(tpl.params[0].type == PARAM_BACKEND);
	CHECK(pgbt_template_set_param(&tpl, "pid=1234", &err) == 0);
	CHECK(pgbt_template_set_param(&tpl, "pid=12x", &err) < 0);
	CHECK_STR(err.msg, "t: pid='12x': not an integer in 0..4194304");
	CHECK(pgbt_template_set_param(&tpl, "pid=-1", &err) < 0);
	pgbt_template_free(&tpl);
	text = HEADER "//@ param pid backend 7 a default other than 0\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) < 0);

	/* bpftrace -p: the process of a backend parameter, maybe on a condition */
	text = HEADER "//@ bpftrace -p $pid if bpftrace < 0.24\n//@ param pid backend 0 a backend\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) == 0);
	CHECK_STR(tpl.run_param, "pid");
	CHECK(tpl.run_cond && strcmp(tpl.run_cond, "bpftrace < 0.24") == 0);
	pgbt_template_free(&tpl);
	text = HEADER "//@ param n int:0..9 0 x\n//@ bpftrace -p $n\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) < 0);
	CHECK_STR(err.msg, "test: //@ bpftrace -p $n: no backend parameter n");
	text = HEADER "//@ bpftrace -p $nope\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) < 0);
	static const char *const bad_runs[] = {
		"//@ bpftrace -q $pid\n", "//@ bpftrace -p pid\n", "//@ bpftrace -p $pid if\n",
		"//@ bpftrace -p $pid unless x\n", "//@ bpftrace -p $pid\n//@ bpftrace -p $pid\n",
	};
	for (size_t i = 0; i < sizeof(bad_runs) / sizeof(bad_runs[0]); i++) {
		char bad[256];
		snprintf(bad, sizeof(bad), HEADER "//@ param pid backend 0 x\n%s", bad_runs[i]);
		CHECK(pgbt_template_parse("t", "test", bad, strlen(bad), &tpl, &err) < 0);
		CHECK(strstr(err.msg, "bad directive") != NULL);
	}

	text = HEADER "//@ param n int:1..5 9 out of range default\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) < 0);
	CHECK(strstr(err.msg, "test:4: bad directive") != NULL);
	text = HEADER "//@ lett x = 1\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) < 0);
	text = "/* no header */\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) < 0);
	CHECK(strstr(err.msg, "no header line") != NULL);

	/* blocks are read once, at parse: a stray {{else}} or {{end}} is
	 * found even where no rendering would reach it, and named by line */
	text = HEADER "{{if major > 99}}\n{{for x in enum(T)}}\n{{else}}\n{{end}}\n{{end}}\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) < 0);
	CHECK_STR(err.msg, "t:6: {{else}} without {{if}} or {{for}}");
	text = HEADER "{{if major > 99}}\n{{if 1 > 0}}\n{{end}}\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) < 0);
	CHECK_STR(err.msg, "t:4: {{if major > 99}} has no {{end}}");
	text = HEADER "{{if major > 99}}a{{else}}{{if 1 > 0}}b{{end}}{{end}}{{x}}\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) == 0);
	pgbt_template_free(&tpl);

	/* Tags and directives of any length: read whole (rendered in
	   test_long_forms); a part with a fixed size is refused, not cut. */
	char long_text[2400];
	snprintf(long_text, sizeof(long_text), HEADER "BEGIN { {{ %02000d }} }\n", 1);
	CHECK(pgbt_template_parse("t", "test", long_text, strlen(long_text), &tpl, &err) == 0);
	pgbt_template_free(&tpl);
	snprintf(long_text, sizeof(long_text), HEADER "//@ param n int:1..9 3 %0200d\n", 1);
	CHECK(pgbt_template_parse("t", "test", long_text, strlen(long_text), &tpl, &err) < 0);
	CHECK(strstr(err.msg, "test:4: bad directive: parameter n: a name, default or "
		      "description too long") != NULL);
}

/* Text of n copies of part, joined by sep, between head and tail. */
static char *repeated(const char *head, const char *part, const char *sep, int n,
		      const char *tail)
{
	size_t len = strlen(head) + n * (strlen(part) + strlen(sep)) + strlen(tail) + 1;
	char *s = malloc(len);

	strcpy(s, head);
	for (int i = 0; i < n; i++) {
		strcat(s, part);
		if (i + 1 < n)
			strcat(s, sep);
	}
	strcat(s, tail);
	return s;
}

/* Tags, lets and conditions of thousands of bytes render whole; a name
 * longer than a name can be is refused, not cut to another. */
static void test_long_forms(struct pgbt_target *t)
{
	static const struct {
		const char *head, *part, *sep;
		int n;
		const char *tail, *want, *error;
	} cases[] = {
		{ HEADER "n={{ ", "1", " + ", 700, " }};\n", "n=700;\n", NULL },
		{ HEADER "//@ let big = ", "1", " + ", 700, "\nn={{ big + 1 }};\n", "n=701;\n", NULL },
		{ HEADER "{{if ", "major == 17", " && ", 200, "}}all{{else}}cut{{end}}\n", "all\n", NULL },
		{ HEADER "{{if ", "major == 1", " || ", 200, " || major == 17}}any{{end}}\n", "any\n", NULL },
		{ HEADER "{{ sizeof(", "Counters", "", 40, ") }}\n", NULL, "a name too long" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = repeated(cases[i].head, cases[i].part, cases[i].sep, cases[i].n,
				      cases[i].tail);
		if (cases[i].want)
			expect(t, text, NULL, cases[i].want);
		else
			expect_error(t, text, NULL, cases[i].error);
		free(text);
	}
}

static void test_needs(void)
{
	struct pgbt_template tpl;
	struct pgbt_needs n;
	struct pgbt_err err;
	const char *text = HEADER "//@ let a = &X->y\n{{if usdt(p:n)}}{{end}} {{a}}\n";

	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) == 0);
	pgbt_template_needs(&tpl, &n);
	CHECK(n.live && n.types && n.usdt);
	CHECK_STR(n.live_expr, "&X->y");
	pgbt_template_free(&tpl);
	text = HEADER "{{ binary }} {{ $x }}\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) == 0);
	pgbt_template_needs(&tpl, &n);
	CHECK(!n.live && !n.types && !n.usdt);
	pgbt_template_free(&tpl);
	text = HEADER "//@ param p backend 0 x\n{{ backend($p, *my_wait_event_info) }}\n";
	CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) == 0);
	pgbt_template_needs(&tpl, &n);
	CHECK(n.live);
	pgbt_template_free(&tpl);
}

/* {{include NAME KEY=VALUE...}}: arguments read like parameters inside
 * that copy of the fragment only. */
static void test_include(struct pgbt_target *t)
{
#define HOW "//@ param how choice:acquire|release|other other a parameter of the same name\n"
#define M "//@ param m choice:a|b a a mode\n"
	expect(t, HEADER "x\n{{include tag how=acquire}}\ny\n", NULL, "\nx\n[acq acquire]\ny\n");
	expect(t, HEADER "{{include tag how=acquire}}\n  {{include tag how=release}}  \n", NULL,
	       "\n[acq acquire]\n[rel release]\n");
	/* the parameter of the same name, before and after the fragment */
	expect(t, HEADER HOW "{{$how}}\n{{include tag how=acquire}}\n{{$how}} {{if $how == other}}p{{end}}\n",
	       NULL, "\nother\n[acq acquire]\nother p\n");
	expect(t, HEADER HOW "{{include tag how=release}}\n{{$how}}\n", "how=acquire",
	       "\n[rel release]\nacquire\n");
	/* a fragment reads parameters too */
	expect(t, HEADER M "{{include mixed how=x-1.0}}\n", NULL, "\na\n");
	expect(t, HEADER M "{{include mixed how=x-1.0}}\n", "m=b", "\n\tx-1.0\n");
	/* an argument not passed: an error even where the fragment does not
	 * render it, and even where a parameter has its name */
	expect_error(t, HEADER "{{include tag}}\n", NULL,
		     "t:4: {{include tag}}: fragment tag needs how=VALUE (it declares: how)");
	expect_error(t, HEADER HOW "{{include tag}}\n", NULL, "fragment tag needs how=VALUE");
	expect_error(t, HEADER M "{{include mixed}}\n", NULL, "fragment mixed needs how=VALUE");
	expect_error(t, HEADER "{{include tag hwo=acquire}}\n", NULL,
		     "t:4: {{include tag hwo=acquire}}: fragment tag has no argument hwo "
		     "(it declares: how)");
	/* a $NAME a fragment does not declare is a parameter, or an error */
	expect(t, HEADER HOW "{{include plain}}\n", "how=release", "\nrelease\n");
	expect_error(t, HEADER "{{include plain}}\n", NULL,
		     "t, include/plain:1: fragment plain reads $how, which is neither an argument "
		     "it declares (it declares: none) nor a parameter");
	/* messages name the fragment's own line, or the script's */
	expect_error(t, HEADER "x\n{{include lines how=a}}\n", NULL,
		     "t, include/lines:4: cannot understand {{ nope( }}");
	expect_error(t, HEADER M "{{include mixed how=x}}\n{{ what is }}\n", NULL,
		     "t:6: cannot understand {{ what is }}");
	expect_error(t, HEADER M "{{include mixed how=x}}\n{{if what}}{{end}}\n", NULL,
		     "t:6: cannot understand the condition 'what'");
	expect_error(t, HEADER HOW "{{include plain how=acquire}}\n", NULL,
		     "fragment plain has no argument how (it declares: none)");
	expect_error(t, HEADER "{{include bad-arg}}\n", NULL,
		     "t:4: {{include bad-arg}}: fragment bad-arg: '//@ arg 9lives' is not "
		     "\"//@ arg NAME\"");
	/* malformed arguments */
	expect_error(t, HEADER "{{include tag how}}\n", NULL,
		     "t:4: {{include tag how}}: 'how' is not KEY=VALUE");
	expect_error(t, HEADER "{{include tag how=}}\n", NULL, "'how=' is not KEY=VALUE");
	expect_error(t, HEADER "{{include tag =x}}\n", NULL, "'=x' is not KEY=VALUE");
	expect_error(t, HEADER "{{include tag how=a\"b}}\n", NULL, "'how=a\"b' is not KEY=VALUE");
	expect_error(t, HEADER "{{include tag how=a how=b}}\n", NULL, "how is passed twice");
	expect_error(t, HEADER "{{include nope}}\n", NULL, "t:4: {{include nope}}: no fragment nope");
#undef HOW
#undef M
}

/* The language itself, on an offline target. */
static void test_bpftrace(struct pgbt_target *t);

/* Machines of each kind for {{if watchpoints}}, counting their tests. */
static int wp_tests;
static int wp_fire(struct pgbt_err *err)
{
	(void)err;
	wp_tests++;
	return 1;
}
static int wp_silent(struct pgbt_err *err)
{
	wp_tests++;
	pgbt_fail(err, "this machine's hardware watchpoints do not fire (test)");
	return 0;
}
static int wp_unknown(struct pgbt_err *err)
{
	wp_tests++;
	return pgbt_fail(err, "could not test this machine's hardware watchpoints (test)");
}

/* {{if watchpoints}}: asked of the machine once per rendering, only when
 * a template asks, said in the provenance block; a machine that cannot
 * tell counts as one where they do not fire. */
static void test_watchpoints(struct pgbt_target *t)
{
	const char *tpl = HEADER "//@ param m choice:a|b a mode\n"
		"{{if watchpoints}}fire{{else}}none{{end}} {{if $m == a && watchpoints}}again{{end}}\n";
	struct pgbt_err err;
	int real;

	render_wp = wp_fire;
	wp_tests = 0;
	expect(t, tpl, NULL, "fire again\n");
	CHECK_EQ_U(wp_tests, 1);
	expect(t, tpl, NULL, "//   watchpoints = yes (a test watchpoint on a variable of pgbt-gen's own fired)\n");
	render_wp = wp_silent;
	expect(t, tpl, NULL, "none \n");
	expect(t, tpl, NULL, "//   watchpoints = no: this machine's hardware watchpoints do not fire (test)\n");
	render_wp = wp_unknown;
	expect(t, tpl, NULL, "none \n");
	expect(t, tpl, NULL, "//   watchpoints = no: could not test this machine's hardware watchpoints (test)\n");
	/* a server of a machine whose watchpoints pgbt cannot use: never */
	unsigned machine = t->machine;
	render_wp = wp_fire;
	t->machine = EM_AARCH64;
	wp_tests = 0;
	expect(t, tpl, NULL, "none \n");
	expect(t, tpl, NULL, "//   watchpoints = no: t: its hardware watchpoint reads the value just written");
	CHECK_EQ_U(wp_tests, 0);
	t->machine = machine;
	/* a template that does not ask never tests the machine */
	wp_tests = 0;
	expect(t, HEADER "{{if major >= 17}}x{{end}}\n", NULL, "x\n");
	CHECK_EQ_U(wp_tests, 0);
	render_wp = NULL;
	real = pgbt_hw_watchpoints_fire(&err);
	expect(t, HEADER "{{if watchpoints}}fire{{else}}none{{end}}\n", NULL,
	       real == 1 ? "fire\n" : "none\n");
}

/* {{ note(KEY: TEXT) }}: a line of the provenance block, from the branch
 * taken, rendering as nothing (alone on its line: not even the line). */
static void test_note(struct pgbt_target *t)
{
	const char *tpl = HEADER "//@ param m choice:a|b a mode\n"
		"a\n{{if $m == a}}\n  {{ note(mechanism: one (a + b), said) }}\n{{else}}\n"
		"{{ note(mechanism: the other) }}\n{{end}}\nb{{ note(via: inline) }}c\n";

	expect(t, tpl, NULL, "// parameters: m=a (default)\n// mechanism:  one (a + b), said\n"
	       "// via:        inline\n");
	expect(t, tpl, NULL, "\na\nbc\n");
	expect(t, tpl, "m=b", "// mechanism:  the other\n");
	/* the same note twice (a loop, another branch): one line */
	struct pgbt_err err;
	char *out = render(t, HEADER "{{ note(k: once) }}{{ note(k: once) }}x\n", NULL, &err);
	const char *first = out ? strstr(out, "// k:          once\n") : NULL;
	CHECK(first && !strstr(first + 1, "// k:"));
	free(out);
	expect_error(t, HEADER "{{ note(no key here) }}\n", NULL, "want note(KEY: TEXT)");
	expect_error(t, HEADER "{{ note(: empty key) }}\n", NULL, "want note(KEY: TEXT)");
	expect_error(t, HEADER "{{ note(elevenchars: x) }}\n", NULL, "want note(KEY: TEXT)");
}

/* A file holding text, for pgbt_cpus_possible. */
static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* {{cpus}}: how many CPU ids the machine can have, the highest + 1. */
static void test_cpus(struct pgbt_target *t)
{
	static const struct { const char *text; int n; } lists[] = {
		{ "0-1\n", 2 }, { "0\n", 1 }, { "0-3,8-11\n", 12 }, { "0,2,5\n", 6 },
		{ "", -1 }, { "x\n", -1 }, { "3-1\n", -1 }, { "0-\n", -1 }, { "0;1\n", -1 },
		{ "0-99999\n", -1 },
	};
	char path[] = "/tmp/pgbt-cpus-XXXXXX", list[64], want[256];
	struct pgbt_err err;
	unsigned n;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		write_file(path, lists[i].text);
		int rc = pgbt_cpus_possible(path, &n, list, sizeof(list), &err);
		CHECK(lists[i].n < 0 ? rc < 0 && strstr(err.msg, "is not a list of CPUs")
				     : rc == 0 && n == (unsigned)lists[i].n);
	}
	unlink(path);
	CHECK(pgbt_cpus_possible(path, &n, list, sizeof(list), &err) < 0 &&
	      strstr(err.msg, "No such file"));
	if (pgbt_cpus_possible(PGBT_CPUS_POSSIBLE, &n, list, sizeof(list), &err) < 0) {
		check_skip(err.msg);
		return;
	}
	snprintf(want, sizeof(want), "\nwhile ($c < %u) {}\n", n);
	expect(t, HEADER "while ($c < {{cpus}}) {}\n", NULL, want);
	snprintf(want, sizeof(want), "//   cpus = %u (CPU ids %s possible: %s)\n", n, list,
		 PGBT_CPUS_POSSIBLE);
	expect(t, HEADER "{{cpus}} {{cpus}}\n", NULL, want);
}

static void test_language(struct pgbt_target *t)
{
	expect(t, HEADER "//@ param n int:1..9 3 a number\nn={{ $n }};\n", NULL, "n=3;\n");
	expect(t, HEADER "//@ param n int:1..9 3 a number\nn={{$n}};\n", "n=7", "n=7;\n");
	expect(t, HEADER "//@ param n int:1..9 3 a number\nX\n", "n=7", "// parameters: n=7\n");
	expect(t, HEADER "//@ let b = binary\nbin={{b}}\n", NULL, "bin=");
	expect(t, HEADER "m={{major}}\n", NULL, "m=17\n");
	/* the fixture's machine (this one's), and its registers */
	expect(t, HEADER "{{machine}} {{caller}} {{ip}} {{if machine == aarch64}}a{{else}}x{{end}}\n",
	       NULL, "x86_64 *(uint64 *)reg(\"sp\") reg(\"ip\") x\n");
	/* blocks on their own lines leave no blank lines */
	expect(t, HEADER "a\n  {{if major >= 17}}\nyes\n  {{else}}\nno\n  {{end}}\nb\n", NULL,
	       "a\nyes\nb\n");
	expect(t, HEADER "a {{if major < 17}}old{{else}}new{{end}} b\n", NULL, "a new b\n");
	expect(t, HEADER "{{if !usdt(postgresql:query__start)}}uprobe{{end}}\n", NULL, "uprobe\n");
	expect(t, HEADER "{{if symbol(Counters)}}has{{end}} {{if symbol(Nope)}}not{{end}}.\n",
	       NULL, "has .\n");
	expect(t, HEADER "{{if major == 17}}{{if symbol(Nope)}}x{{else}}inner{{end}}{{end}}\n",
	       NULL, "inner\n");
	/* tracepoint(): this machine's tracefs; a category or name with a
	 * slash names no tracepoint */
	expect(t, HEADER "{{if tracepoint(nope:nothing)}}x{{else}}none{{end}}\n", NULL, "none\n");
	expect(t, HEADER "{{if tracepoint(../..:events)}}x{{else}}none{{end}}\n", NULL, "none\n");
	if (access("/sys/kernel/tracing/events/sched/sched_switch", F_OK) == 0)
		expect(t, HEADER "{{if tracepoint(sched:sched_switch)}}has{{end}}\n", NULL, "has\n");
	expect_error(t, HEADER "{{if tracepoint(sched_switch)}}x{{end}}\n", NULL,
		     "tracepoint() needs CATEGORY:NAME");
	expect_error(t, HEADER "{{if usdt(query__start)}}x{{end}}\n", NULL,
		     "usdt() needs PROVIDER:NAME");
	expect(t, HEADER "//@ param m choice:a|b a mode\n{{if $m == b}}B{{else}}A{{end}}\n",
	       "m=b", "B\n");
	/* && binds tighter than ||; "!" applies to one operand */
	expect(t, HEADER "//@ param m choice:a|b a mode\n{{if $m == b || !symbol(Nope)}}Y{{end}}\n",
	       NULL, "Y\n");
	expect(t, HEADER "//@ param m choice:a|b a mode\n{{if $m == b && symbol(Counters)}}Y{{else}}N{{end}}\n",
	       NULL, "N\n");
	expect(t, HEADER "{{if major == 1 && symbol(Nope) || major == 17 && symbol(Counters)}}Y{{end}}\n",
	       NULL, "Y\n");
	expect(t, HEADER "{{if major == 17 && symbol(Nope) || major == 1}}Y{{else}}N{{end}}\n",
	       NULL, "N\n");
	/* the provenance block replaces the directives, after the header */
	expect(t, HEADER "//@ let z = major\n{{z}}\n", NULL, " */\n// Rendered by pgbt-gen");

	/* sums of numbers: hex when either side is */
	expect(t, HEADER "{{ major + 1 }}\n", NULL, "\n18\n");
	expect(t, HEADER "{{ 0x10 + sizeof(FullTransactionId) }}\n", NULL, "\n0x18\n");
	expect_error(t, HEADER "{{ major + binary }}\n", NULL, "not a number");
	/* a parameter first in a sum: the sum, not a parameter named "hz + $hz" */
	expect(t, HEADER "//@ param hz int:1..100 20 rate\nprofile:hz:{{ $hz + $hz + $hz + $hz }}\n",
	       "hz=25", "\nprofile:hz:100\n");
	expect_error(t, HEADER "//@ param m choice:a|b a mode\n{{if $m == b}}{{ error(mode=b needs X (see Y)) }}{{end}}\n",
		     "m=b", "t: mode=b needs X (see Y)");
	expect(t, HEADER "//@ param m choice:a|b a mode\n{{if $m == b}}{{ error(no) }}{{end}}ok\n",
	       NULL, "ok\n");
	expect_error(t, HEADER "{{ *TransamVariables }}\n", NULL, "needs a running server");
	expect_error(t, HEADER "//@ param p backend 0 x\n{{ backend($p, *my_wait_event_info) }}\n",
		     NULL, "needs a running server");
	expect_error(t, HEADER "//@ param p backend 0 x\n{{ $p }}\n", "p=1",
		     "p=1 names a backend, which needs a running server");
	expect_error(t, HEADER "{{ &TransamVariables->nextXid }}\n", NULL, "needs a running server");
	expect_error(t, HEADER "{{ postmaster.pid }}\n", NULL, "needs a running server");
	expect_error(t, HEADER "{{ what is this }}\n", NULL, "cannot understand {{ what is this }}");
	expect_error(t, HEADER "{{if major > 1}}\nno end\n", NULL, "has no {{end}}");
	expect_error(t, HEADER "{{end}}\n", NULL, "without {{if}}");
	expect_error(t, HEADER "{{ $nope }}\n", NULL, "no such parameter");
	expect_error(t, HEADER "{{if frob(1)}}{{end}}\n", NULL, "cannot understand the condition");
	expect_error(t, HEADER "//@ let a = a\n{{a}}\n", NULL, "refers to itself");
	test_include(t);
	test_bpftrace(t);
	test_long_forms(t);
	test_watchpoints(t);
	test_note(t);
	test_cpus(t);

	/* a server in the host's PID namespace (an offline target too) */
	expect(t, HEADER "{{if pidns}}ns{{else}}host{{end}} {{pg_pid}}\n", NULL, "host pid\n");
	t->other_pidns = true;
	expect(t, HEADER "{{if pidns}}ns{{else}}host{{end}}\n", NULL, "ns\n");
	t->pidns_depth = 2;
	expect(t, HEADER "{{pg_pid}}\n", NULL, "(uint64)*(uint32 *)kptr((uint8 *)curtask->thread_pid + sizeof(struct pid) + 2 * sizeof(struct upid))");
	t->other_pidns = false;
}

/* {{if bpftrace OP X.Y}}: the version rendered for, the oldest without one. */
static void test_bpftrace(struct pgbt_target *t)
{
	struct pgbt_bpftrace bt;
	struct pgbt_err err;
	int v[3];

	CHECK(pgbt_bpftrace_parse_version("0.23", v) == 0 && v[0] == 0 && v[1] == 23 && v[2] == 0);
	CHECK(pgbt_bpftrace_parse_version("v0.23.2", v) == 0 && v[2] == 2);
	CHECK(pgbt_bpftrace_parse_version("0.21.0-rc1", v) == 0 && v[1] == 21);
	CHECK(pgbt_bpftrace_parse_version("0", v) < 0);
	CHECK(pgbt_bpftrace_parse_version("0.2x", v) < 0);
	CHECK(pgbt_bpftrace_parse_version("", v) < 0);
	CHECK(pgbt_bpftrace_find("0.23", &bt, &err) == 0 && bt.version[1] == 23);
	CHECK(strstr(bt.how, "--bpftrace 0.23") != NULL);
	CHECK(pgbt_bpftrace_find("/nonexistent/bpftrace", &bt, &err) < 0 &&
	      strstr(err.msg, "no such program"));

	const char *tpl = HEADER "{{if bpftrace >= 0.21}}new{{else}}old{{end}}\n";
	const char *discard = HEADER "{{discard}}delete(@m[1]);\n";
	expect(t, tpl, NULL, "old\n");               /* none given: 0.17 */
	expect(t, discard, NULL, "\ndelete(@m[1]);\n");
	expect(t, tpl, NULL, "// bpftrace:   unknown: rendered for v0.17.0 and later");
	pgbt_bpftrace_find("0.21", &bt, &err);
	render_bt = &bt;
	expect(t, tpl, NULL, "new\n");
	expect(t, tpl, NULL, "// bpftrace:   v0.21.0, as asked (--bpftrace 0.21)");
	pgbt_bpftrace_find("0.20.9", &bt, &err);
	expect(t, tpl, NULL, "old\n");
	expect(t, HEADER "{{if bpftrace == 0.20.9 && bpftrace < 0.21}}y{{end}}\n", NULL, "y\n");
	expect(t, HEADER "{{if bpftrace != 0.20.9}}y{{else}}n{{end}}\n", NULL, "n\n");
	expect_error(t, HEADER "{{if bpftrace >= new}}{{end}}\n", NULL, "want bpftrace OP X.Y");
	expect(t, discard, NULL, "\ndelete(@m[1]);\n");
	pgbt_bpftrace_find("0.25", &bt, &err);
	expect(t, discard, NULL, "\n_ = delete(@m[1]);\n");
	render_bt = NULL;
}

/* Types: the same answers from DWARF and from the built-in layout. */
static void test_types(struct pgbt_target *t, const char *source)
{
	expect(t, HEADER "{{ offsetof(TransamVariablesData, nextXid) }}\n", NULL, "\n8\n");
	expect(t, HEADER "{{ offsetof((VariableCacheData|TransamVariablesData), oidCount) }}\n",
	       NULL, "\n4\n");
	expect(t, HEADER "{{ sizeof(FullTransactionId) }}\n", NULL, "\n8\n");
	expect(t, HEADER "{{ sizeof(FullTransactionId) }}\n", NULL, source);
	expect_error(t, HEADER "{{ offsetof(TransamVariablesData, nope) }}\n", NULL, "nope");
}

static void test_dwarf_only(struct pgbt_target *t)
{
	expect(t, HEADER "{{ WAIT_EVENT_PG_SLEEP }}\n", NULL, "\n0x9000002\n");
	expect(t, HEADER "{{for e in enum(WaitEventTimeout)}}{{e.name}}={{e.value}};{{end}}\n",
	       NULL, "WAIT_EVENT_BASE_BACKUP_THROTTLE=150994944;WAIT_EVENT_CHECKPOINT_WRITE_DELAY="
	       "150994945;WAIT_EVENT_PG_SLEEP=150994946;");
	expect(t, HEADER "{{ offsetof(struct counters, inner.y) }}\n", NULL, "\n8\n");
	expect(t, HEADER "{{ offsetof(counters, slots[2]) }}\n", NULL, "\n32\n");
}

/* A loop inside a loop over the same enumeration: every pair, and one
 * provenance line for the enumeration, not one per outer pass. */
static void test_nested_enum(struct pgbt_target *t)
{
	const char *text = HEADER "{{for a in enum(WaitEventTimeout)}}{{for b in "
			   "enum(WaitEventTimeout)}}{{a.label}}/{{b.label}};{{end}}{{end}}\n";
	struct pgbt_err err;
	char *out = render(t, text, NULL, &err);
	const char *p = out, *line = "//   enum(WaitEventTimeout):";
	int lines = 0;

	expect(t, text, NULL, "CheckpointWriteDelay/PgSleep;");
	expect(t, text, NULL, "PgSleep/CheckpointWriteDelay;");
	expect(t, text, NULL, "PgSleep/PgSleep;");
	while (p && (p = strstr(p, line))) {
		lines++;
		p++;
	}
	CHECK(lines == 1);
	free(out);
}

static void test_offline(const char *file, bool stripped)
{
	struct pgbt_target t;
	struct pgbt_err err;
	char path[700];

	snprintf(path, sizeof(path), "%s/%s", fixtures, file);
	if (pgbt_target_open_binary(&t, path, &err) < 0) {
		CHECK(!"open fixture");
		fprintf(stderr, "     %s\n", err.msg);
		return;
	}
	test_language(&t);
	test_types(&t, stripped ? "built-in layout for PostgreSQL 17" : "(DWARF)");
	if (!stripped)
		test_dwarf_only(&t);
	else
		expect_error(&t, HEADER "{{ WAIT_EVENT_NOT_IN_ANY_BUILD }}\n", NULL,
			     "built-in layout for PostgreSQL 17 on x86_64 has no enumerator "
			     "WAIT_EVENT_NOT_IN_ANY_BUILD");
	expect_error(&t, HEADER "{{for S in strings(LockNames)}}{{end}}\n", NULL,
		     "strings(LockNames) reads the running server; this target has no process");
	/* labels come from the built-in layout, with DWARF or without */
	expect(&t, HEADER "{{for e in enum(WaitEventTimeout)}}{{e.value}}={{e.label}};{{end}}\n",
	       NULL, "150994945=CheckpointWriteDelay;150994946=PgSleep;");
	test_nested_enum(&t);
	pgbt_target_close(&t);
}

/* Starts a copy of the fixture named "postgres" in dir; reads its line. */
static pid_t start_fake(const char *file, const char *dir, char *line, size_t len)
{
	char cmd[2048];
	int fds[2];
	pid_t pid;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "cp %s/%s %s/postgres", fixtures, file, dir);
	if (system(cmd) != 0 || pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		char exe[600];
		snprintf(exe, sizeof(exe), "%s/postgres", dir);
		dup2(fds[1], 1);
		close(fds[0]);
		if (chdir(dir) == 0)
			execl(exe, "postgres", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f || !fgets(line, (int)len, f))
		line[0] = '\0';
	if (f)
		fclose(f);
	return pid;
}

/* backend($p, ...) reads in the fixture's forked backend, whose
 * my_wait_event_info points into shared memory (the postmaster's does not). */
static void test_backend(struct pgbt_target *t, int backend, unsigned long long backend_wait,
			 unsigned long long shared)
{
	const char *deref = HEADER "//@ param p backend 0 x\n{{ backend($p, *my_wait_event_info) }}\n";
	char param[64], want[128];

	snprintf(param, sizeof(param), "p=%d", backend);
	snprintf(want, sizeof(want), "\n0x%llx\n", backend_wait);
	expect(t, deref, param, want);
	expect(t, deref, param, "(read in backend PID");
	snprintf(want, sizeof(want), "from /proc/%d/mem", backend);
	expect(t, deref, param, want);
	snprintf(want, sizeof(want), "\n0x%llx\n", backend_wait + 4);
	expect(t, HEADER "//@ param p backend 0 x\n{{ backend($p, *my_wait_event_info + 4) }}\n",
	       param, want);
	expect(t, HEADER "//@ param p backend 0 x\n{{ backend($p, *my_wait_event_info) + 0x4 }}\n",
	       param, want);
	/* the backend inherited the postmaster's pointers */
	snprintf(want, sizeof(want), "\n0x%llx\n", shared + 8);
	expect(t, HEADER "//@ param p backend 0 x\n{{ backend($p, &TransamVariables->nextXid) }}\n",
	       param, want);
	expect_error(t, HEADER "{{ *my_wait_event_info }}\n", NULL, "is not in a shared mapping");
	expect_error(t, deref, NULL, "this needs p=PID");
	expect_error(t, HEADER "//@ param n int:0..9 0 x\n{{ backend($n, *my_wait_event_info) }}\n",
		     "n=1", "'$n' is not a parameter of type backend");
	snprintf(param, sizeof(param), "p=%d", (int)t->pid);
	expect_error(t, deref, param, "is the postmaster");
	expect_error(t, deref, "p=1", "p=1 is not a backend of postmaster");
	expect_error(t, deref, "p=4194304", "p=4194304: no such process");

	/* A script that follows the backend: the Run line after "#!", the
	 * provenance's bpftrace -p line, unless p=0 or the condition fails. */
	const char *follow = "#!/usr/bin/env bpftrace\n" HEADER
		"//@ param p backend 0 x\n//@ bpftrace -p $p if bpftrace < 0.24\nbody\n";
	struct pgbt_template tpl;
	struct pgbt_bpftrace bt;
	struct pgbt_err err;
	pid_t run = 0;
	char *out;

	snprintf(param, sizeof(param), "p=%d", backend);
	snprintf(want, sizeof(want), "#!/usr/bin/env bpftrace\n// Run: pgbt-gen ... | sudo bpftrace "
		 "-p %d -   (from a file: sudo bpftrace -p %d FILE)\n/*\n", backend, backend);
	expect(t, follow, param, want);
	snprintf(want, sizeof(want), "// bpftrace -p: %d, as the Run line says: bpftrace v0.17.0 then "
		 "keeps its USDT probes and watchpoints to that process, but not its uprobes", backend);
	expect(t, follow, param, want);
	pgbt_bpftrace_find("0.20", &bt, &err);
	render_bt = &bt;
	snprintf(want, sizeof(want), "// bpftrace -p: %d, as the Run line says: bpftrace then "
		 "attaches the probes to that process alone", backend);
	expect(t, follow, param, want);
	pgbt_bpftrace_find("0.24", &bt, &err);
	out = render(t, follow, param, &err);
	CHECK(out && !strstr(out, "// Run:") && !strstr(out, "bpftrace -p"));
	free(out);
	render_bt = NULL;
	out = render(t, follow, "p=0", &err);
	CHECK(out && !strstr(out, "// Run:") && !strstr(out, "bpftrace -p"));
	free(out);
	/* the same answer for the command line, and the command it was given */
	CHECK(pgbt_template_load("t", "test", follow, strlen(follow), read_fragment, NULL, &tpl,
				 &err) == 0);
	CHECK(pgbt_template_set_param(&tpl, param, &err) == 0);
	CHECK(pgbt_template_run_pid(&tpl, t, &run, &err) == 0 && run == backend);
	pgbt_template_set_command(&tpl, "pgbt-gen -p 1 t p=2", true);
	out = NULL;
	CHECK(pgbt_template_render(&tpl, t, &out, &err) == 0 && out &&
	      strstr(out, "\n// Run: pgbt-gen -p 1 t p=2 | bpftrace -p "));
	free(out);
	pgbt_template_free(&tpl);
}

static void test_live(const char *file, bool stripped)
{
	char dir[] = "/tmp/pgbt-test-XXXXXX", line[512], want[128], cmd[600];
	unsigned long long shared = 0, priv = 0, counters = 0, backend_wait = 0;
	int backend = 0;
	struct pgbt_target t;
	struct pgbt_err err;
	pid_t pid;

	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	pid = start_fake(file, dir, line, sizeof(line));
	CHECK(pid > 0 && sscanf(line, "shared=%llx private=%llx counters=%llx backend=%d "
				"backend_wait=%llx", &shared, &priv, &counters, &backend,
				&backend_wait) == 5);
	if (pgbt_target_open_pid(&t, pid, &err) < 0) {
		CHECK(!"open live fixture");
		fprintf(stderr, "     %s\n", err.msg);
	} else {
		CHECK_EQ_U(t.pid, pid);
		CHECK_STR(t.datadir, dir);
		snprintf(want, sizeof(want), "\n0x%llx\n", shared + 8);
		expect(&t, HEADER "{{ &TransamVariables->nextXid }}\n", NULL, want);
		expect(&t, HEADER "{{ &(ShmemVariableCache|TransamVariables)->nextXid }}\n", NULL, want);
		/* a member renamed between majors: the first the type has */
		expect(&t, HEADER "{{ &TransamVariables->(nextFullXid|nextXid) }}\n", NULL, want);
		expect(&t, HEADER "{{ &TransamVariables->(nextFullXid|nextXid) }}\n", NULL,
		       "nextXid at offset 8");
		expect_error(&t, HEADER "{{ &TransamVariables->(nextFullXid|noSuchXid) }}\n", NULL,
			     "noSuchXid");
		expect(&t, HEADER "{{ offsetof(TransamVariablesData, (nextFullXid|nextXid)) }}\n",
		       NULL, "\n8\n");
		snprintf(want, sizeof(want), "\n0x%llx\n", shared);
		expect(&t, HEADER "{{ &TransamVariables->nextOid }}\n", NULL, want);
		expect(&t, HEADER "{{ &TransamVariables->nextOid }}\n", NULL, "in shared mapping");
		snprintf(want, sizeof(want), "\n%d\n", (int)pid);
		expect(&t, HEADER "{{ postmaster.pid }}\n", NULL, want);
		snprintf(want, sizeof(want), "\n0x%llx\n", counters);
		expect(&t, HEADER "{{ &Counters }}\n", NULL, want);
		/* the layout knows only TransamVariables; DWARF knows them all */
		if (!stripped) {
			expect_error(&t, HEADER "{{ &PrivateVariables->nextXid }}\n", NULL,
				     "is not in a shared mapping");
			expect_error(&t, HEADER "{{ &NullVariables->nextXid }}\n", NULL, "is NULL");
		}
		test_backend(&t, backend, backend_wait, shared);
		/* strings(): a live array of C strings, escaped, NULL as "" */
		expect(&t, HEADER "{{for S in strings(LockNames)}}{{S.index}}={{S.value}};{{end}}\n",
		       NULL, "\n0=<unassigned:0>;1=ShmemIndex;2=;3=Say \\\\\\\"hi\\\\\\\"\\\\\\\\;\n");
		expect(&t, HEADER "{{for S in strings(LockNames)}}{{end}}\n", NULL,
		       "strings(LockNames): 4 strings read from /proc/");
		expect_error(&t, HEADER "{{for S in strings(last_wait)}}{{end}}\n", NULL,
			     "4 bytes is not an array of pointers");
		expect_error(&t, HEADER "{{for S in strings(NoSuchArray)}}{{end}}\n", NULL,
			     "no symbol 'NoSuchArray'");
		expect_error(&t, HEADER "{{ &TransamVariables.nextXid }}\n", NULL, "use ->");
		expect_error(&t, HEADER "{{ &(Nope|Nada)->x }}\n", NULL,
			     "no symbol Nope, Nada in .symtab or .dynsym");
		pgbt_target_close(&t);
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/* A failed open leaves nothing to close (the sanitizer build of the unit
 * tests reports what such a failure would leak). */
static void test_open_failures(void)
{
	struct pgbt_target t;
	struct pgbt_err err;
	char path[700];

	snprintf(path, sizeof(path), "%s/usdt_probes", fixtures);   /* ELF, no server */
	CHECK(pgbt_target_open_binary(&t, path, &err) < 0);
	CHECK(strstr(err.msg, "no PostgreSQL version string") && !t.elf);
	CHECK(pgbt_target_open_binary(&t, "tests/unit/check.h", &err) < 0);
	CHECK(strstr(err.msg, "not an ELF file") && !t.elf);
	CHECK(pgbt_target_open_pid(&t, getpid(), &err) < 0);   /* not a postmaster */
	CHECK(!t.elf && !t.maps.n);
	CHECK(pgbt_target_open_datadir(&t, "/nonexistent/pgbt-datadir", &err) < 0);
	CHECK(!t.elf);
}

int main(void)
{
	const char *env = getenv("PGBT_FIXTURES");

	snprintf(fixtures, sizeof(fixtures), "%s", env ? env : "build/fixtures");
	test_parse();
	test_needs();
	test_open_failures();
	test_offline("fake_postgres", false);
	test_offline("fake_postgres.stripped", true);
	test_live("fake_postgres", false);
	test_live("fake_postgres.stripped", true);
	return check_done();
}
