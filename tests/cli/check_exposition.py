#!/usr/bin/env python3
"""check_exposition.py - check a Prometheus text exposition (format 0.0.4)
line by line, then the samples an expectations file names.

usage: check_exposition.py EXPOSITION [EXPECTED]

The grammar: '# HELP name text' and '# TYPE name type' at most once per
family and before its samples; samples 'name{label="value",...} value';
metric and label names of the allowed characters; values that parse as
floats (+Inf, -Inf, NaN included); a family's samples together; counters
named *_total; histograms with _bucket lines whose le rises to "+Inf",
cumulative counts, +Inf equal to _count, and a _sum; the text ending in a
newline.  EXPECTED holds lines 'name{labels} value' (the sample must be
there with that value, to 1e-9 relative) or 'absent name{labels}'.
Prints each problem with its line number; exits 1 if any, else 0.
"""
import math
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
VALUE = r'"(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r"^(%s)(?:\{((?:%s=%s)(?:,%s=%s)*)?,?\})?[ \t]+(\S+)(?:[ \t]+(-?\d+))?$"
                    % (NAME, LABEL, VALUE, LABEL, VALUE))
PAIR = re.compile(r"(%s)=(%s)" % (LABEL, VALUE))
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}

problems = []


def problem(lineno, text):
    problems.append("line %d: %s" % (lineno, text))


def number(text):
    if text in ("+Inf", "Inf"):
        return math.inf
    if text == "-Inf":
        return -math.inf
    if text == "NaN":
        return math.nan
    return float(text)  # raises ValueError when it is not one


def family_of(name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)]
        if name.endswith(suffix) and types.get(base) in ("histogram", "summary"):
            return base
    return name


def parse(text):
    """Samples as {(name, frozenset(labels)): value}, checking the grammar."""
    samples, helps, types, seen_families, order = {}, set(), {}, set(), []
    if text and not text.endswith("\n"):
        problem(text.count("\n") + 1, "the last line does not end with a newline")
    current = None
    for lineno, line in enumerate(text.split("\n")[:-1], 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not re.fullmatch(NAME, name):
                    problem(lineno, "bad metric name %r" % name)
                if name in seen_families:
                    problem(lineno, "%s of %s after its samples" % (parts[1], name))
                if parts[1] == "HELP":
                    if name in helps:
                        problem(lineno, "a second HELP for %s" % name)
                    helps.add(name)
                else:
                    if name in types:
                        problem(lineno, "a second TYPE for %s" % name)
                    if len(parts) < 4 or parts[3] not in TYPES:
                        problem(lineno, "bad TYPE line %r" % line)
                    else:
                        types[name] = parts[3]
            continue
        m = SAMPLE.match(line)
        if not m:
            problem(lineno, "not a sample line: %r" % line)
            continue
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        pairs = PAIR.findall(labels)
        names = [k for k, _ in pairs]
        if len(set(names)) != len(names):
            problem(lineno, "a label given twice")
        try:
            v = number(value)
        except ValueError:
            problem(lineno, "bad value %r" % value)
            continue
        fam = family_of(name, types)
        if fam != current:
            if fam in seen_families:
                problem(lineno, "samples of %s are not together" % fam)
            seen_families.add(fam)
            order.append(fam)
            current = fam
        if fam not in types:
            problem(lineno, "sample of %s before (or without) its TYPE" % fam)
        if types.get(fam) == "counter" and not name.endswith("_total"):
            problem(lineno, "counter %s is not named *_total" % name)
        key = (name, frozenset((k, v2[1:-1]) for k, v2 in pairs))
        if key in samples:
            problem(lineno, "the same sample twice: %s" % line)
        samples[key] = (v, lineno)
    check_histograms(samples, types)
    return samples


def check_histograms(samples, types):
    for fam, t in types.items():
        if t != "histogram":
            continue
        series = {}
        for (name, labels), (v, lineno) in samples.items():
            rest = frozenset(p for p in labels if p[0] != "le")
            if name == fam + "_bucket":
                le = dict(labels).get("le")
                if le is None:
                    problem(lineno, "a bucket without le")
                    continue
                series.setdefault(rest, {"buckets": []})["buckets"].append((number(le), v, lineno))
            elif name in (fam + "_sum", fam + "_count"):
                series.setdefault(rest, {"buckets": []})[name[len(fam) + 1:]] = v
        for rest, s in series.items():
            b = sorted(s["buckets"], key=lambda x: x[2])  # in the order written
            les = [x[0] for x in b]
            where = "%s%s" % (fam, dict(rest))
            if les != sorted(les) or len(set(les)) != len(les):
                problem(b[0][2] if b else 0, "%s: le values do not rise" % where)
            if not b or les[-1] != math.inf:
                problem(b[-1][2] if b else 0, "%s: no le=\"+Inf\" bucket last" % where)
            counts = [x[1] for x in b]
            if any(y < x for x, y in zip(counts, counts[1:])):
                problem(b[0][2], "%s: bucket counts are not cumulative" % where)
            if "count" not in s or "sum" not in s:
                problem(b[0][2] if b else 0, "%s: no _count or _sum" % where)
            elif b and counts[-1] != s["count"]:
                problem(b[-1][2], "%s: +Inf bucket %g != _count %g" % (where, counts[-1], s["count"]))


def expectations(path, samples):
    for lineno, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        absent = line.startswith("absent ")
        spec = line[7:] if absent else line
        m = re.match(r"^(%s)(?:\{(.*)\})?(?:\s+(\S+))?$" % NAME, spec)
        if not m:
            sys.exit("check_exposition: %s:%d: bad expectation %r" % (path, lineno, line))
        labels = frozenset((k, v[1:-1]) for k, v in PAIR.findall(m.group(2) or ""))
        got = samples.get((m.group(1), labels))
        if absent:
            if got:
                problems.append("expected no sample %s, got %g" % (spec, got[0]))
        elif not got:
            problems.append("no sample %s" % spec)
        else:
            want = number(m.group(3))
            if not math.isclose(got[0], want, rel_tol=1e-9, abs_tol=1e-12):
                problems.append("%s: expected %s, got %r" % (spec.rsplit(None, 1)[0],
                                                            m.group(3), got[0]))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: check_exposition.py EXPOSITION [EXPECTED]")
    with open(sys.argv[1], encoding="utf-8") as f:
        samples = parse(f.read())
    if len(sys.argv) == 3:
        expectations(sys.argv[2], samples)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
