/*
 * report/info.c - text and JSON (cJSON) renderings of struct mp_info.
 * The JSON layout is documented in memprof-info(1); it is versioned by
 * MP_INFO_JSON_VERSION.
 */
#include "report/info.h"
#include "report/json_util.h"
#include "util/format.h"
#include "util/satmath.h"
#include "util/op_names.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *or_unknown(const char *s)
{
	return s && *s ? s : "unknown";
}

static const char *yes_no(const char *flag)
{
	if (!flag)
		return "unknown";
	return strcmp(flag, "0") == 0 ? "no" : "yes";
}

static void print_counts(FILE *out, const struct mp_memstate *s)
{
	int op, first = 1;

	fprintf(out, "events       %lld", (long long)s->n_events);
	for (op = MEMPROF_OP_MIN; op <= MEMPROF_OP_MAX; op++) {
		if (!s->n_by_op[op])
			continue;
		fprintf(out, "%s%s %lld", first ? " (" : ", ", mp_op_name(op),
		        (long long)s->n_by_op[op]);
		first = 0;
	}
	fprintf(out, "%s\n", first ? "" : ")");
	fprintf(out, "allocations  %lld (%lld live at the end, %lld frees without an allocation)\n",
	        (long long)(s->n_by_op[MEMPROF_OP_ALLOC] + s->n_by_op[MEMPROF_OP_PREEXISTING]),
	        (long long)s->n_live_at_end, (long long)s->n_unmatched_frees);
}

static int64_t pid_of(const struct mp_info *info, int64_t process_id)
{
	size_t i;

	for (i = 0; i < info->n_processes; i++)
		if (info->processes[i].id == process_id)
			return info->processes[i].pid;
	return 0;
}

static void print_processes(FILE *out, const struct mp_info *info)
{
	size_t i;

	fprintf(out, "processes    %zu", info->n_processes);
	for (i = 0; i < info->n_processes && i < 8; i++) {
		const struct memprof_process *p = &info->processes[i];

		fprintf(out, "%s pid %lld", i ? "," : ":", (long long)p->pid);
		if (p->rank >= 0)
			fprintf(out, " rank %lld", (long long)p->rank);
		if (p->command)
			fprintf(out, " (%s)", p->command);
	}
	fprintf(out, "%s\n", info->n_processes > 8 ? ", ..." : "");
	fprintf(out, "devices      %zu", info->n_devices);
	for (i = 0; i < info->n_devices && i < 16; i++) {
		const struct memprof_device *d = &info->devices[i];
		char b[32];

		fprintf(out, "%s %d", i ? "," : ":", d->ordinal);
		if (info->n_processes > 1)
			fprintf(out, " of pid %lld", (long long)pid_of(info, d->process_id));
		if (d->name)
			fprintf(out, " %s", d->name);
		if (d->total_bytes)
			fprintf(out, " (%s)", mp_format_bytes(b, sizeof(b), d->total_bytes));
	}
	fprintf(out, "%s\n", info->n_devices > 16 ? ", ..." : "");
}

/* Reserved memory and what fills it, for a device with a segment level. */
static void print_device_end(FILE *out, const struct mp_mem_device *d)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32];

	if (!d->has_segments)
		return;
	fprintf(out, "device %-5d peak reserved %s (%lld B) at event %lld\n", d->device,
	        mp_format_bytes(b1, sizeof(b1), d->reserved_peak.bytes),
	        (long long)d->reserved_peak.bytes, (long long)d->reserved_peak.seq);
	fprintf(out,
	        "             at the end: reserved %s, live %s, requested %s, internal "
	        "fragmentation %s, free in reserved %s\n",
	        mp_format_bytes(b1, sizeof(b1), d->reserved_bytes),
	        mp_format_bytes(b2, sizeof(b2), d->live_bytes),
	        mp_format_bytes(b3, sizeof(b3), d->requested_bytes),
	        mp_format_bytes(b4, sizeof(b4), d->live_bytes - d->requested_bytes),
	        d->reserved_bytes >= d->active_bytes
	                ? mp_format_bytes(b5, sizeof(b5), d->reserved_bytes - d->active_bytes)
	                : "unknown (blocks outside segments)");
}

void mp_info_print_text(FILE *out, const struct mp_info *info)
{
	const struct mp_memstate *s = info->summary;
	char b1[32], b2[32];
	int i;

	fprintf(out, "trace        %s\n", info->path);
	fprintf(out, "schema       v%d", info->schema_version);
	if (info->schema_version != info->current_version)
		fprintf(out, " (migrated to v%d)", info->current_version);
	fprintf(out, "\nsource       %s", or_unknown(info->source));
	if (info->source_file)
		fprintf(out, " from '%s'", info->source_file);
	fprintf(out, "\nwritten by   memprof %s on %s\n", or_unknown(info->tool_version),
	        or_unknown(info->created));
	if (info->command_line)
		fprintf(out, "command      %s\n", info->command_line);
	print_counts(out, s);
	print_processes(out, info);
	fprintf(out, "time span    %s", mp_format_duration(b1, sizeof(b1), mp_memstate_span_ns(s)));
	fprintf(out, " (%lld ns to %lld ns)", (long long)(s->n_events ? s->min_ts_ns : 0),
	        (long long)(s->n_events ? s->max_ts_ns : 0));
	if (s->n_out_of_order)
		fprintf(out, ", %lld events earlier than the one before them",
		        (long long)s->n_out_of_order);
	fprintf(out, "\n");
	fprintf(out, "peak live    %s (%lld B)",
	        mp_format_bytes(b1, sizeof(b1), s->live_peak.bytes), (long long)s->live_peak.bytes);
	if (s->live_peak.seq)
		fprintf(out, " at %s, event %lld",
		        mp_format_duration(b2, sizeof(b2),
		                           mp_sat_sub(s->live_peak.ts_ns, s->first_ts_ns)),
		        (long long)s->live_peak.seq);
	fprintf(out, "\n");
	for (i = 0; s->n_devices > 1 && i < s->n_devices; i++)
		fprintf(out, "  device %-4d %s (%lld B) at event %lld\n", s->devices[i].device,
		        mp_format_bytes(b1, sizeof(b1), s->devices[i].live_peak.bytes),
		        (long long)s->devices[i].live_peak.bytes,
		        (long long)s->devices[i].live_peak.seq);
	if (s->devices_truncated)
		fprintf(out, "  (more than %d devices: per-device peaks cover the first %d seen)\n",
		        MP_MEM_MAX_DEVICES, MP_MEM_MAX_DEVICES);
	for (i = 0; i < s->n_devices; i++)
		print_device_end(out, &s->devices[i]);
	fprintf(out, "truncated    %s\nlossy        %s\ndropped      %s records\n",
	        yes_no(info->truncated), yes_no(info->lossy), or_unknown(info->dropped_records));
	if (info->import_warnings)
		fprintf(out, "warnings     %s\n", info->import_warnings);
}

/* Integers go out as raw JSON text: a double would round those above 2^53. */
static cJSON *flag_json(const char *flag)
{
	return flag ? cJSON_CreateBool(strcmp(flag, "0") != 0) : cJSON_CreateNull();
}

static cJSON *str_json(const char *s)
{
	return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* add_int, or null where the trace has no segment level */
static void add_reserved(cJSON *o, const char *key, const struct mp_mem_device *d, int64_t v)
{
	if (d->has_segments)
		mp_json_add_int(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static cJSON *device_json(const struct mp_mem_device *d)
{
	cJSON *o = cJSON_CreateObject(), *end = cJSON_CreateObject();

	mp_json_add_int(o, "device", d->device);
	mp_json_add_int(o, "peak_live_bytes", d->live_peak.bytes);
	mp_json_add_int(o, "peak_live_ts_ns", d->live_peak.ts_ns);
	mp_json_add_int(o, "peak_live_seq", d->live_peak.seq);
	add_reserved(o, "peak_reserved_bytes", d, d->reserved_peak.bytes);
	add_reserved(o, "peak_reserved_ts_ns", d, d->reserved_peak.ts_ns);
	add_reserved(o, "peak_reserved_seq", d, d->reserved_peak.seq);
	add_reserved(end, "reserved_bytes", d, d->reserved_bytes);
	mp_json_add_int(end, "live_bytes", d->live_bytes);
	mp_json_add_int(end, "requested_bytes", d->requested_bytes);
	mp_json_add_int(end, "internal_fragmentation_bytes", d->live_bytes - d->requested_bytes);
	if (d->reserved_bytes >= d->active_bytes) /* else blocks lie outside the segments */
		add_reserved(end, "free_in_reserved_bytes", d, d->reserved_bytes - d->active_bytes);
	else
		cJSON_AddNullToObject(end, "free_in_reserved_bytes");
	cJSON_AddItemToObject(o, "end", end);
	return o;
}

static cJSON *summary_json(const struct mp_memstate *s)
{
	cJSON *o = cJSON_CreateObject(), *ops = cJSON_CreateObject(), *devs = cJSON_CreateArray();
	int op, i;

	for (op = MEMPROF_OP_MIN; op <= MEMPROF_OP_MAX; op++)
		mp_json_add_int(ops, mp_op_name(op), s->n_by_op[op]);
	mp_json_add_int(o, "events", s->n_events);
	cJSON_AddItemToObject(o, "events_by_op", ops);
	mp_json_add_int(o, "allocations",
	                (s->n_by_op[MEMPROF_OP_ALLOC] + s->n_by_op[MEMPROF_OP_PREEXISTING]));
	mp_json_add_int(o, "live_at_end", s->n_live_at_end);
	mp_json_add_int(o, "unmatched_frees", s->n_unmatched_frees);
	mp_json_add_int(o, "first_ts_ns", s->first_ts_ns);
	mp_json_add_int(o, "last_ts_ns", s->last_ts_ns);
	mp_json_add_int(o, "peak_live_bytes", s->live_peak.bytes);
	mp_json_add_int(o, "peak_ts_ns", s->live_peak.ts_ns);
	mp_json_add_int(o, "peak_seq", s->live_peak.seq);
	for (i = 0; i < s->n_devices; i++)
		cJSON_AddItemToArray(devs, device_json(&s->devices[i]));
	cJSON_AddItemToObject(o, "by_device", devs);
	cJSON_AddBoolToObject(o, "by_device_truncated", s->devices_truncated);
	return o;
}

int mp_info_print_json(FILE *out, const struct mp_info *info)
{
	cJSON *o = cJSON_CreateObject(), *procs = cJSON_CreateArray(), *devs = cJSON_CreateArray();
	int rc;
	size_t i;

	mp_json_add_int(o, "memprof_info_version", MP_INFO_JSON_VERSION);
	cJSON_AddStringToObject(o, "trace", info->path);
	mp_json_add_int(o, "schema_version", info->schema_version);
	cJSON_AddItemToObject(o, "source", str_json(info->source));
	cJSON_AddItemToObject(o, "source_file", str_json(info->source_file));
	cJSON_AddItemToObject(o, "tool_version", str_json(info->tool_version));
	cJSON_AddItemToObject(o, "created", str_json(info->created));
	cJSON_AddItemToObject(o, "command_line", str_json(info->command_line));
	cJSON_AddItemToObject(o, "truncated", flag_json(info->truncated));
	cJSON_AddItemToObject(o, "lossy", flag_json(info->lossy));
	cJSON_AddItemToObject(o, "import_warnings", str_json(info->import_warnings));
	if (info->dropped_records)
		mp_json_add_int(o, "dropped_records", strtoll(info->dropped_records, NULL, 10));
	else
		cJSON_AddNullToObject(o, "dropped_records");
	for (i = 0; i < info->n_processes; i++) {
		cJSON *p = cJSON_CreateObject();

		mp_json_add_int(p, "id", info->processes[i].id);
		mp_json_add_int(p, "pid", info->processes[i].pid);
		mp_json_add_int(p, "rank", info->processes[i].rank);
		cJSON_AddItemToObject(p, "command", str_json(info->processes[i].command));
		cJSON_AddItemToArray(procs, p);
	}
	for (i = 0; i < info->n_devices; i++) {
		cJSON *d = cJSON_CreateObject();

		mp_json_add_int(d, "process_id", info->devices[i].process_id);
		mp_json_add_int(d, "ordinal", info->devices[i].ordinal);
		cJSON_AddItemToObject(d, "name", str_json(info->devices[i].name));
		mp_json_add_int(d, "total_bytes", info->devices[i].total_bytes);
		cJSON_AddItemToArray(devs, d);
	}
	cJSON_AddItemToObject(o, "processes", procs);
	cJSON_AddItemToObject(o, "devices", devs);
	cJSON_AddItemToObject(o, "summary", summary_json(info->summary));
	rc = mp_json_write(out, o);
	cJSON_Delete(o);
	return rc < 0 ? -1 : 0;
}
