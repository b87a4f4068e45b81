#!/usr/bin/env python3
"""base_once.py: libtrace/base/gt_base.h is the one home of saturating int64
arithmetic and of the int64 and string comparators. A function elsewhere in
libtrace or the viewer that saturates an int64 sum or difference (an
overflow check that returns INT64_MAX or INT64_MIN), or a qsort/bsearch
comparator that compares whole int64_t or char * elements, is a second copy:
named, exit 1. libtrace/base/json.c is the one JSON writer: a JSON string
escape (\\u%04x, \\ufffd) elsewhere, or a key written by hand in a printf or
fputs format ("\\"name\\":"), is a second writer. Fails as well when it
finds none of the base's own, so a rename cannot make it pass by matching
nothing."""
import os
import re
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."
home = os.path.join("libtrace", "base", "gt_base.h")
comment = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
# A function definition: its head up to the opening brace, then the body up
# to the first closing brace at the start of a line.
func = re.compile(r"^(?:static\s+)?(?:inline\s+)?[\w ]+?\b(\w+)\(([^)]*)\)\s*\{(.*?)^\}", re.S | re.M)
saturates = re.compile(r"__builtin_(?:add|sub)_overflow|INT64_MAX\s*-|INT64_MIN\s*[-+]")
ends = re.compile(r"\bINT64_(?:MAX|MIN)\b")
i64_elem = re.compile(r"\*\s*\(\s*const\s+int64_t\s*\*\s*\)\s*\w+|memcpy\(&\w+,\s*\w+,\s*sizeof")
str_elem = re.compile(r"strcmp\(\s*\*\s*\((?:const\s+)?char\s*\*\s*const\s*\*\s*\)\s*\w+\s*,\s*\*\s*\((?:const\s+)?char\s*\*\s*const\s*\*\s*\)\s*\w+\s*\)")


def copies(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    code = comment.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for m in func.finditer(code):
        name, params, body = m.group(1), m.group(2), m.group(3)
        line = code.count("\n", 0, m.start()) + 1
        one_line = " ".join(body.split())
        if re.fullmatch(r"\s*int64_t \w+, int64_t \w+\s*", params) and saturates.search(body) \
                and len(ends.findall(body)) >= 1 and body.count(";") <= 6:
            yield line, name, "saturating int64 arithmetic (gt_sat_add, gt_sat_sub)"
        if re.fullmatch(r"\s*const void \*\w+, const void \*\w+\s*", params) and one_line.count(";") <= 4:
            if str_elem.search(one_line) and "return strcmp" in one_line:
                yield line, name, "a comparator of char * elements (gt_cmp_str)"
            elif i64_elem.search(one_line) and re.search(r"\bint64_t\b", one_line) \
                    and re.search(r"return\s*\(?\s*\w+\s*[<>]\s*\w+", one_line) and "->" not in one_line:
                yield line, name, "a comparator of int64_t elements (gt_cmp_i64)"


json_home = os.path.join("libtrace", "base", "json.c")
json_escape = re.compile(r'"[^"\n]*\\\\u(?:%04x|fffd)')
json_by_hand = re.compile(r'\b(?:f?printf|fputs)\s*\([^;]*"[^"\n]*\\":')


def json_writers(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    code = comment.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for n, line in enumerate(code.split("\n"), 1):
        if json_escape.search(line):
            yield n, "json_escape", "a JSON string escape (gt_json_str)"
        elif json_by_hand.search(line):
            yield n, "json_by_hand", "JSON written by hand (gt_json_key and the values)"


if not any(w == "json_escape" for _, w, _ in json_writers(os.path.join(top, json_home))):
    sys.exit(f"base_once.py: no JSON string escape found in {json_home}: the patterns are out of date")
own = {name for _, name, _ in copies(os.path.join(top, home))}
if not {"gt_sat_add", "gt_sat_sub", "gt_cmp_i64", "gt_cmp_str"} <= own:
    sys.exit(f"base_once.py: recognizes only {sorted(own)} in {home}: the patterns are out of date")
bad = []
for folder in ("libtrace", "viewer"):
    for root, _, files in os.walk(os.path.join(top, folder)):
        for f in sorted(files):
            path = os.path.join(root, f)
            rel = os.path.relpath(path, top)
            if rel == home or not f.endswith((".c", ".h")) or "nvtx3" in rel:
                continue
            for line, name, what in copies(path):
                bad.append(f"{rel}:{line}: {name} is {what}: use {home}'s")
            if rel != json_home:
                for line, _, what in json_writers(path):
                    bad.append(f"{rel}:{line}: {what}: use libtrace/base/gt_json.h")
for b in bad:
    print(b)
if bad:
    print(f"base_once.py: {len(bad)} copies of what libtrace/base holds")
    sys.exit(1)
print(f"base_once.py: saturating arithmetic and the int64/string comparators only in {home}, "
      f"JSON writing only in {json_home}")
