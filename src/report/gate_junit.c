/*
 * report/gate_junit.c - 'memprof diff' and 'memprof check' as JUnit XML for
 * CI test reports: one testsuite "memprof", one testcase per threshold and
 * device (a failure when exceeded, skipped when not checkable or a failure
 * under --require-checked; a limit that applied to nothing likewise), the
 * figures as the suite's properties (the JUnit schema has none per
 * testcase) and the notes as its system-out.  Valid against the Jenkins
 * xUnit junit-10.xsd (tests/data/); every string goes through xml_text.
 */
#include "report/gate.h"

#include <string.h>

#include "util/error.h"

/* The length of the valid UTF-8 sequence at s, or 0 when it is not one
 * (overlong forms, surrogates and code points past U+10FFFF refused). */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

/* s as XML character data or attribute value: markup escaped, characters
 * XML 1.0 cannot carry and bytes that are not UTF-8 replaced by U+FFFD. */
static void xml_text(FILE *out, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;

	while (*s) {
		size_t n = utf8_len(s);

		if (n == 0) {
			fputs("\xef\xbf\xbd", out);
			s++;
			continue;
		}
		if (*s == '&')
			fputs("&amp;", out);
		else if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '"')
			fputs("&quot;", out);
		else if (*s == '\'')
			fputs("&apos;", out);
		else if (*s == '\n')
			fputs("&#10;", out);
		else if (*s == '\t')
			fputs("&#9;", out);
		else if (*s < 0x20 || *s == 0x7f)
			fputs("\xef\xbf\xbd", out);
		else
			fwrite(s, 1, n, out);
		s += n;
	}
}

static void property(FILE *out, const char *name, const char *value)
{
	fputs("    <property name=\"", out);
	xml_text(out, name);
	fputs("\" value=\"", out);
	xml_text(out, value);
	fputs("\"/>\n", out);
}

static void int_property(FILE *out, const char *prefix, const char *name, int64_t v)
{
	char key[400], val[32];

	snprintf(key, sizeof(key), "%s%s", prefix, name);
	snprintf(val, sizeof(val), "%lld", (long long)v);
	property(out, key, val);
}

static void ratio_property(FILE *out, const char *prefix, const char *name, int64_t nano)
{
	char key[400], val[32];

	snprintf(key, sizeof(key), "%s%s", prefix, name);
	property(out, key, mp_gate_ratio_text(val, sizeof(val), nano, 0));
}

static void device_properties(FILE *out, const char *prefix, const struct mp_gate_device *d)
{
	char key[400];

	int_property(out, prefix, "peak_live_bytes", d->peak_live_bytes);
	int_property(out, prefix, "peak_reserved_bytes", d->peak_reserved_bytes);
	snprintf(key, sizeof(key), "%sreserved_from", prefix);
	property(out, key, mp_gate_reserved_name(d->reserved));
	ratio_property(out, prefix, "free_share", d->free_share_nano);
	ratio_property(out, prefix, "external_fragmentation", d->external_nano);
	int_property(out, prefix, "leaked_bytes", d->leaked_bytes);
	int_property(out, prefix, "leaked_blocks", d->leaked_blocks);
	int_property(out, prefix, "ooms", d->n_ooms);
}

static void result_properties(FILE *out, const struct mp_gate_report *r)
{
	static const char *const outcome[] = {"pass", "exceeded", "not_checked"};
	char name[300], key[360], lim[80];
	size_t i;

	for (i = 0; i < r->n_results; i++) {
		const struct mp_gate_result *res = &r->results[i];

		if (res->head_pool)
			snprintf(name, sizeof(name), "%s.%s.%s.device.%d",
			         mp_gate_kind_option(res->limit->kind), res->head_pool->pool,
			         res->head_pool->backend, (int)res->device);
		else
			snprintf(name, sizeof(name), "%s.device.%d",
			         mp_gate_kind_option(res->limit->kind), (int)res->device);
		snprintf(key, sizeof(key), "%s.limit", name);
		property(out, key, mp_gate_limit_text(lim, sizeof(lim), res->limit));
		snprintf(key, sizeof(key), "%s.outcome", name);
		property(out, key, outcome[res->outcome]);
		if (res->outcome == MP_GATE_NOT_CHECKED)
			continue;
		snprintf(key, sizeof(key), "%s.", name);
		if (res->limit->unit == MP_GATE_RATIO) {
			if (res->base >= 0 && res->limit->kind != MP_GATE_FREE_SHARE)
				ratio_property(out, key, "base", res->base);
			ratio_property(out, key, "head", res->head);
			continue;
		}
		if (res->base >= 0)
			int_property(out, key, "base", res->base);
		int_property(out, key, "head", res->head);
	}
}

static void print_properties(FILE *out, const struct mp_gate_report *r)
{
	char prefix[64];
	size_t i;

	fputs("  <properties>\n", out);
	property(out, "command", r->command);
	if (r->base)
		property(out, "base", r->base->path);
	property(out, r->base ? "head" : "trace", r->head->path);
	for (i = 0; r->diff && i < r->diff->n_devices; i++) {
		const struct mp_gate_device_change *c = &r->diff->devices[i];

		snprintf(prefix, sizeof(prefix), "device.%d.base.", (int)c->device);
		if (c->base)
			device_properties(out, prefix, c->base);
		snprintf(prefix, sizeof(prefix), "device.%d.head.", (int)c->device);
		if (c->head)
			device_properties(out, prefix, c->head);
	}
	for (i = 0; !r->diff && i < r->head->n_devices; i++) {
		snprintf(prefix, sizeof(prefix), "device.%d.", (int)r->head->devices[i].device);
		device_properties(out, prefix, &r->head->devices[i]);
	}
	result_properties(out, r);
	fputs("  </properties>\n", out);
}

/* A check not made: skipped, or a failure under --require-checked. */
static void unchecked(FILE *out, const struct mp_gate_report *r, const char *why)
{
	fputs(r->require_checked ? "    <failure type=\"not_checked\" message=\"NOT CHECKED: "
	                         : "    <skipped message=\"",
	      out);
	xml_text(out, why);
	if (r->require_checked) {
		fputs("\">--require-checked: ", out);
		xml_text(out, why);
		fputs("</failure>\n", out);
	} else {
		fputs("\"/>\n", out);
	}
}

static void print_testcase(FILE *out, const struct mp_gate_report *r,
                           const struct mp_gate_result *res)
{
	char name[200], text[600];

	mp_gate_result_name(name, sizeof(name), res);
	mp_gate_result_text(text, sizeof(text), res);
	fprintf(out, "  <testcase classname=\"memprof.%s\" name=\"", r->command);
	xml_text(out, name);
	fputs("\">\n", out);
	if (res->outcome == MP_GATE_EXCEEDED) {
		fputs("    <failure type=\"threshold\" message=\"", out);
		xml_text(out, text);
		fputs("\">", out);
		xml_text(out, text);
		fputs("</failure>\n", out);
	} else if (res->outcome == MP_GATE_NOT_CHECKED) {
		unchecked(out, r, res->why);
	}
	fputs("    <system-out>", out);
	xml_text(out, text);
	fputs("</system-out>\n  </testcase>\n", out);
}

/* A limit that applied to nothing: a testcase of its own, not checked. */
static void print_unapplied(FILE *out, const struct mp_gate_report *r,
                            const struct mp_gate_limit *l, const char *why)
{
	char lim[80];

	fprintf(out, "  <testcase classname=\"memprof.%s\" name=\"%s (applies to nothing)\">\n",
	        r->command, mp_gate_kind_option(l->kind));
	unchecked(out, r, why);
	fputs("    <system-out>", out);
	xml_text(out, mp_gate_limit_text(lim, sizeof(lim), l));
	fputs(" checked nothing: ", out);
	xml_text(out, why);
	fputs("</system-out>\n  </testcase>\n", out);
}

struct note_ctx {
	FILE *out;
	int n;
};

static void put_note(void *ctx, const char *note)
{
	struct note_ctx *c = ctx;

	fputs(c->n++ ? "&#10;" : "  <system-out>", c->out);
	xml_text(c->out, note);
}

int mp_gate_write_junit(FILE *out, const struct mp_gate_report *r)
{
	struct note_ctx c = {out, 0};
	size_t i, n_unchecked = mp_gate_n_unchecked(r), n_unapplied = 0;
	const char *why;

	for (i = 0; i < r->n_limits; i++)
		n_unapplied += mp_gate_unapplied_why(r, &r->limits[i]) != NULL;
	fprintf(out,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<testsuite name=\"memprof\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
	        "skipped=\"%zu\">\n",
	        r->n_results + n_unapplied,
	        mp_gate_n_exceeded(r) + (r->require_checked ? n_unchecked : 0),
	        r->require_checked ? 0 : n_unchecked);
	print_properties(out, r);
	for (i = 0; i < r->n_results; i++)
		print_testcase(out, r, &r->results[i]);
	for (i = 0; i < r->n_limits; i++)
		if ((why = mp_gate_unapplied_why(r, &r->limits[i])))
			print_unapplied(out, r, &r->limits[i], why);
	mp_gate_notes(r, put_note, &c);
	if (c.n)
		fputs("</system-out>\n", out);
	fputs("</testsuite>\n", out);
	return ferror(out) ? MP_EIO : 0;
}
