#!/usr/bin/env python3
"""megatron_args.py -- the command-line flags Megatron-LM's argument parser accepts, read
statically from its sources (no torch needed): every '--flag' string literal of
megatron/training/arguments.py, and the flags ArgumentGroupFactory makes from the config
dataclasses that arguments.py hands it (a field f becomes --f with '_' as '-'; a bool
field whose default is True becomes --no-f and --disable-f; excluded fields none; an
"argparse_meta" with literal "arg_names" replaces the name), fields of base classes
included.

usage: megatron_args.py MEGATRON_CHECKOUT [FLAG...]
With flags: prints each with "ok" or "MISSING" and exits 1 if any is missing.
Without: prints every flag found, one a line. docs/megatron-args.txt keeps the flags
hetplan's export writes or checks, with the commit they were checked against."""
import ast
import os
import re
import sys


def parse(path):
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read())


def class_index(root):
    idx = {}
    for d, _, files in os.walk(os.path.join(root, "megatron")):
        for fn in files:
            if not fn.endswith(".py"):
                continue
            p = os.path.join(d, fn)
            try:
                src = open(p, encoding="utf-8").read()
            except OSError:
                continue
            for m in re.finditer(r"^class (\w+)\b", src, re.M):
                idx.setdefault(m.group(1), []).append(p)
    return idx


def class_fields(name, idx, seen=None):
    """[(field, default node, metadata arg_names or None)] of the dataclass, bases first."""
    seen = seen or set()
    if name in seen or name not in idx:
        return []
    seen.add(name)
    out = []
    for p in idx[name]:
        for node in ast.walk(parse(p)):
            if not (isinstance(node, ast.ClassDef) and node.name == name):
                continue
            for b in node.bases:
                bn = b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else None
                if bn:
                    out += class_fields(bn, idx, seen)
            for st in node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                    ann = ast.unparse(st.annotation)
                    if ann.startswith("ClassVar"):
                        continue
                    default, names, init = st.value, None, True
                    if isinstance(st.value, ast.Call) and ast.unparse(st.value.func).endswith("field"):
                        default = None
                        for kw in st.value.keywords:
                            if kw.arg == "default":
                                default = kw.value
                            if kw.arg == "init" and isinstance(kw.value, ast.Constant):
                                init = kw.value.value
                            if kw.arg == "metadata":
                                for sub in ast.walk(kw.value):
                                    if isinstance(sub, ast.Dict):
                                        for k, v in zip(sub.keys, sub.values):
                                            if isinstance(k, ast.Constant) and k.value == "arg_names" \
                                               and isinstance(v, ast.List):
                                                names = [e.value for e in v.elts if isinstance(e, ast.Constant)]
                    if init:
                        out.append((st.target.id, ann, default, names))
            return out
    return out


def flags(root):
    args_py = os.path.join(root, "megatron/training/arguments.py")
    tree = parse(args_py)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
           re.fullmatch(r"--[a-z0-9][a-z0-9-]*", node.value):
            found.add(node.value)
    idx = class_index(root)
    # exclude lists assigned to a local name (exclude = [...]) or given inline
    lists = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List) and \
           len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            lists[node.targets[0].id] = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("ArgumentGroupFactory")):
            continue
        cls = ast.unparse(node.args[0]).split(".")[-1]
        excl = []
        for kw in node.keywords:
            if kw.arg == "exclude":
                if isinstance(kw.value, ast.List):
                    excl = [e.value for e in kw.value.elts if isinstance(e, ast.Constant)]
                elif isinstance(kw.value, ast.Name):
                    excl = lists.get(kw.value.id, [])
        for f, ann, default, names in class_fields(cls, idx):
            if f in excl:
                continue
            if names:
                found.update(names)
            elif ann == "bool" and isinstance(default, ast.Constant) and default.value is True:
                found.add("--no-" + f.replace("_", "-"))
                found.add("--disable-" + f.replace("_", "-"))
            else:
                found.add("--" + f.replace("_", "-"))
    return found


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = flags(sys.argv[1])
    if len(sys.argv) == 2:
        print("\n".join(sorted(found)))
        return 0
    bad = 0
    for a in sys.argv[2:]:
        ok = a in found
        bad += not ok
        print(a, "ok" if ok else "MISSING")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
