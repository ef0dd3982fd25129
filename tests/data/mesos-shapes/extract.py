#!/usr/bin/env python3
"""Write the shape fixtures of this folder from Mesos's documentation.

Usage: extract.py OPERATOR_HTTP_API_MD STATE_MD OUTDIR

OPERATOR_HTTP_API_MD is apache/mesos docs/operator-http-api.md, STATE_MD
docs/endpoints/master/state.md. For each example answer of the master's
operator API (the "... HTTP Response (JSON)" of a call, the "... Event (JSON)"
of an event) and for /state's example, one file <name>.shape lists every
field path of the example with its JSON type, one "path type" a line:
object keys joined by ".", "[]" for "every element of the array", "*" for
"every member of an object whose keys are data" (flag names, metric names).
An empty array of the example is "array?": an array when present, as
Mesos's own JSON leaves empty repeated fields out.

Lines of an existing file that start with "absent-ok" are kept, and their
path is not written as a checked line: they are the fields offerd does not
serve, each with its reason, written by hand. GET_METRICS also yields
metric-names.list: the metric names of the example, one a line, with the
same "absent-ok" convention.
"""
import json
import os
import re
import sys

# Objects whose keys are data, not field names.
MAPS = {"flags"}


def json_type(v):
    if isinstance(v, bool):
        return "boolean"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def walk(v, path, out):
    if path:
        t = json_type(v)
        if v == []:
            # Mesos's own JSON (stout's json(Protobuf)) leaves an empty
            # repeated field out; the examples' "[]" are written by hand.
            t = "array?"
        if out.get(path, "array?") == "array?":
            out[path] = t
    if isinstance(v, dict):
        if path in MAPS:
            for member in v.values():
                walk(member, path + ".*", out)
            return
        for k, member in v.items():
            walk(member, path + "." + k if path else k, out)
    elif isinstance(v, list):
        for e in v:
            walk(e, path + "[]", out)


def first_object(text, start):
    """The JSON object text that begins at the first '{' after start."""
    i = text.index("{", start)
    if text.startswith("{{", i):
        i += 1  # GET_AGENTS' example opens with a doubled brace
    depth = 0
    in_str = False
    for j in range(i, len(text)):
        c = text[j]
        if in_str:
            if c == "\\":
                continue
            if c == '"' and text[j - 1] != "\\":
                in_str = False
        elif c == '"':
            in_str = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[i:j + 1]
    raise ValueError("unbalanced example")


def loads_lenient(s):
    # The docs' examples carry trailing commas here and there, and "{...}"
    # for "some object" (SUBSCRIBED).
    s = s.replace("{...}", "{}")
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", s))


def write(outdir, name, source, paths, extra_lines=()):
    fn = os.path.join(outdir, name)
    kept = []
    if os.path.exists(fn):
        with open(fn) as f:
            kept = [l.rstrip("\n") for l in f if l.startswith("absent-ok")]
    absent = {l.split()[1] for l in kept}
    with open(fn, "w") as f:
        f.write("# Field paths and JSON types of the example in %s.\n" % source)
        f.write("# Written by extract.py; absent-ok lines by hand.\n")
        f.write("# \"array?\": an empty array in the example; Mesos's JSON "
                "omits those.\n")
        for p, t in paths:
            if p not in absent:
                f.write(("%s %s" % (p, t)).rstrip() + "\n")
        for l in kept:
            f.write(l + "\n")


def main():
    api, state, outdir = sys.argv[1:4]
    with open(api) as f:
        text = f.read()
    text = text[:text.index("## Agent API")]
    sections = re.split(r"^##+ ", text, flags=re.M)[1:]
    for sec in sections:
        name = sec.split("\n", 1)[0].strip()
        if name == "Events":
            name = "SUBSCRIBED"  # the SUBSCRIBE call's first event
        m = re.search(r"HTTP Response \(JSON\):|Event \(JSON\)", sec)
        if m is None:
            continue
        # The answer is the object after the marker, inside its code block.
        end = sec.find("```", m.end())
        block = sec[:end] if end >= 0 else sec
        if block.find("{", m.end()) < 0:
            continue
        body = first_object(block, m.end())
        doc = loads_lenient(body)
        paths = {}
        walk(doc, "", paths)
        src = ("apache/mesos docs/operator-http-api.md, section %s" % name)
        write(outdir, name + ".shape", src, sorted(paths.items()))
        if name == "GET_METRICS":
            names = sorted({e["name"] for e in doc["get_metrics"]["metrics"]})
            write(outdir, "metric-names.list", src + " (metric names)",
                  [(n, "") for n in names])
    with open(state) as f:
        st = f.read()
    doc = loads_lenient(first_object(st, st.index("Example")))
    paths = {}
    walk(doc, "", paths)
    # /state is written field by field (readonly_handler.cpp): its lists
    # are there even when empty.
    paths = {p: ("array" if t == "array?" else t) for p, t in paths.items()}
    write(outdir, "state.shape",
          "apache/mesos docs/endpoints/master/state.md, the example",
          sorted(paths.items()))


if __name__ == "__main__":
    main()
