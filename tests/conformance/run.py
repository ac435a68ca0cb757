#!/usr/bin/env python3
"""The MXNet 1.9.1 conformance suite: runs every case through MXNet and mxk and compares.

Usage (from the repository root, with the venv's python; ctest does this per
module, label "conformance"):

    V/bin/python tests/conformance/run.py --runner build/bin/conform_run \\
        --config-dir build/etc/mxk [--group core] [--only REGEX] [--cases-dir DIR] \\
        [--work-dir DIR] [--keep]

The directories of passing cases are deleted unless --keep (a failing case's
directory stays for a look: symbol.json, inputs.params, run.json, MXNet's
mx_outputs.params / mx_info.json and mxk's outputs.params / info.json).

For each Case / Net of cases/<group>.py (tests/conformance/case.py) it builds the
MXNet symbol (operator node named "x"), infers shapes and types, draws the inputs
with numpy from a seed derived from the case name, runs MXNet (bind with the same
grad_req; is_train True with backward, and False), and writes one directory per
run: symbol.json (MXNet's tojson()), inputs.params, run.json and MXNet's results
(mx_outputs.params, mx_info.json).  Cases with mkldnn=False are run by a second
process of this script with MXNET_MKLDNN_ENABLED=0.  conform_run (the mxk side,
conform_run.c) then runs all directories in one process (restarted after the
case it crashed or hung on) and this script compares outputs, gradients, aux
states after forward and after backward, inferred shapes, dtypes and names.  An
add run is compared with the initial gradient plus the write run's where MXNet's
own add is not that (notes list them).  It prints one line per
case and a table of passes per operator; the exit status is 0 only when every
case passes (a case marked xfail passes when it fails, and fails when it passes).
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from case import Net  # noqa: E402
import compare  # noqa: E402

mx = None  # imported by the processes that run MXNet (main(), --mxnet-worker)

MODULE_PREFIXES = (("_contrib_", "contrib"), ("_linalg_", "linalg"), ("_image_", "image"),
                   ("_sparse_", "sparse"))


# ----------------------------------------------------------------------------- collection

class Item:
    """One case or net with its full id, group and runs (variants)."""

    def __init__(self, group, name, obj):
        self.group = group
        self.name = name
        self.obj = obj
        self.id = "%s.%s" % (group, name)
        self.is_net = isinstance(obj, Net)
        self.op = obj.name if self.is_net else obj.op
        self.runs = []  # dicts: dir, is_train, grad_req, backward

    def dirname(self, work):
        safe = re.sub(r"[^A-Za-z0-9_.#-]", "_", self.id)
        return os.path.join(work, safe)


def load_module(path):
    name = "conformance_cases_" + os.path.basename(path)[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def collect(cases_dir, groups, only):
    """Items of the case modules `groups` (all when empty), filtered by the regex `only`."""
    items = []
    names = sorted(f[:-3] for f in os.listdir(cases_dir) if f.endswith(".py") and f[0] != "_")
    for group in names:
        if groups and group not in groups:
            continue
        mod = load_module(os.path.join(cases_dir, group + ".py"))
        counts = {}
        seen = set()
        for obj in list(getattr(mod, "CASES", [])) + list(getattr(mod, "NETS", [])):
            if isinstance(obj, Net):
                name = obj.name
            else:
                k = counts.get(obj.op, 0)
                counts[obj.op] = k + 1
                name = obj.name or "%s#%d" % (obj.op, k)
            if name in seen:
                raise SystemExit("%s: two cases are named %r" % (group, name))
            seen.add(name)
            it = Item(group, name, obj)
            if only and not re.search(only, it.id):
                continue
            items.append(it)
    return items


def plan_runs(it, work):
    """The runs of an item: (is_train, grad_req kind) per the Case's is_train / grad_req."""
    c = it.obj
    base = it.dirname(work)
    if it.is_net:
        grads = None if c.grad_req == "null" else "write"
        variants = [("train", True, grads), ("eval", False, None)]
    elif c.error is not None:
        kind = "write" if c.grad_req is None else None if c.grad_req == "null" else "dict"
        variants = [("train", c.is_train is not False, kind)]
    else:
        trains = [True, False] if c.is_train is None else [c.is_train]
        variants = []
        for t in trains:
            if t and c.grad_req is None:
                variants += [("train_write", True, "write"), ("train_add", True, "add")]
            elif t and isinstance(c.grad_req, dict):
                variants.append(("train", True, "dict"))
            else:
                variants.append(("train" if t else "eval", t, None))
    it.runs = [{"dir": os.path.join(base, v), "is_train": t, "kind": k} for v, t, k in variants]


# ----------------------------------------------------------------------------- MXNet side

def mx_op(op):
    """The Python front-end function of MXNet operator `op` (its JSON name)."""
    for prefix, sub in MODULE_PREFIXES:
        if op.startswith(prefix) and hasattr(getattr(mx.sym, sub), op[len(prefix):]):
            return getattr(getattr(mx.sym, sub), op[len(prefix):])
    for mod in (mx.sym, mx.sym._internal, mx.sym.contrib, mx.sym.random):
        if hasattr(mod, op):
            return getattr(mod, op)
    raise KeyError("MXNet 1.9.1 has no operator %r" % op)


def hand_json(c):
    """Symbol JSON of a case MXNet refuses to create: the given variables into node x.

    The attribute values are written as MXNet's front end writes them (str()).
    """
    nodes = [{"op": "null", "name": n, "inputs": []} for n in c.shapes]
    nodes.append({"op": c.op, "name": "x", "attrs": {k: str(v) for k, v in c.attrs.items()},
                  "inputs": [[i, 0, 0] for i in range(len(c.shapes))]})
    return json.dumps({"nodes": nodes, "arg_nodes": list(range(len(c.shapes))),
                       "node_row_ptr": list(range(len(nodes) + 1)),
                       "heads": [[len(nodes) - 1, 0, 0]],
                       "attrs": {"mxnet_version": ["int", 10901]}}, indent=2)


def node_x(graph):
    """The case's operator node (named x; a variable may be named x too) of a symbol JSON."""
    return [n for n in graph["nodes"] if n["name"] == "x" and n["op"] != "null"][0]


def alias_json(js, op):
    """MXNet's JSON with node x's operator written as the case names it.

    tojson() writes an alias's canonical name (_plus -> elemwise_add); writing the
    alias back makes mxk resolve it, while MXNet runs the same operator.
    """
    graph = json.loads(js)
    node = node_x(graph)
    if node["op"] == op:
        return js
    node["op"] = op
    return json.dumps(graph, indent=2)


def build_case_symbol(c):
    f = mx_op(c.op)
    vars_ = [mx.sym.Variable(n) for n in c.shapes]
    if c.variadic:
        return f(*vars_, name="x", **c.attrs)
    return f(name="x", **dict(zip(c.shapes, vars_)), **c.attrs)


def build_net(n):
    """(symbol, params) of a Net: JSON file, builder returning a Symbol or (Symbol, params).

    Dropout is switched off (p=0) so that training runs of both sides are deterministic;
    with n.smooth, ReLU and clip (relu6) become softrelu (see case.py).
    """
    src = n.source
    if isinstance(src, str):
        path = src if os.path.isabs(src) else os.path.join(ROOT, src)
        sym, params = mx.sym.load(path), {}
    else:
        got = src()
        sym, params = (got[0], dict(got[1])) if isinstance(got, tuple) else (got, {})
    graph = json.loads(sym.tojson())
    for node in graph["nodes"]:
        attrs = node.setdefault("attrs", {})
        if node["op"] == "Dropout":
            attrs["p"] = "0"
        elif n.smooth and (node["op"] == "clip" or (node["op"] == "Activation" and
                                                      attrs.get("act_type") == "relu")):
            node["op"], node["attrs"] = "Activation", {"act_type": "softrelu"}
    return mx.sym.load_json(json.dumps(graph)), params


def fill(spec, shape, dtype, rng):
    """Values of one variable: a fill spec (see case.py) or a literal."""
    if spec is None:
        spec = ("uniform", -1.0, 1.0)
    if isinstance(spec, tuple) and spec and isinstance(spec[0], str):
        if spec[0] == "uniform":  # dtype: inferred from dtype_of(spec)
            return rng.uniform(spec[1], spec[2], size=shape).astype(dtype)
        if spec[0] == "int":
            dt = spec[3] if len(spec) > 3 else dtype
            return rng.randint(spec[1], spec[2], size=shape).astype(dt)
        if spec[0] == "normal":
            return rng.normal(spec[1], spec[2], size=shape).astype(dtype)
        raise ValueError("unknown fill %r" % (spec,))
    return np.asarray(spec).astype(dtype)  # dtype: inferred from dtype_of(spec)


def net_default(name, shape, rng):
    """Scaled random values for a network parameter (fan-in scaled weights, positive variances)."""
    if name.endswith("gamma") or name.endswith("moving_var") or name.endswith("running_var"):
        return rng.uniform(0.5, 1.5, size=shape)
    if name.endswith("weight") and len(shape) >= 2:
        fan_in = int(np.prod(shape[1:]))
        return rng.uniform(-1.0, 1.0, size=shape) * np.sqrt(3.0 / fan_in)
    return rng.uniform(-0.1, 0.1, size=shape)


def dtype_of(spec):
    if isinstance(spec, tuple) and spec and spec[0] in ("int", "uniform") and len(spec) > 3:
        return np.dtype(spec[3])
    if isinstance(spec, np.ndarray) and spec.dtype.kind != "f":
        return spec.dtype
    return np.dtype(np.float32)


def mx_error(e):
    """The first lines of an MXNet error, without its stack trace."""
    text = str(e)
    text = text.split("Stack trace:")[0].strip()
    return text[:2000]


def prepare_item(it):
    """Builds the MXNet symbol, draws inputs, runs MXNet and writes every run's directory."""
    obj = it.obj
    rng = np.random.RandomState(zlib.crc32(it.id.encode()) & 0x7FFFFFFF)
    params = {}
    info = {}
    try:
        sym, params = build_net(obj) if it.is_net else (build_case_symbol(obj), {})
        js = sym.tojson() if it.is_net else alias_json(sym.tojson(), obj.op)
    except Exception as e:
        if it.is_net:
            info = {"error": "building the net: " + mx_error(e)}
            js = None
        else:
            # The front end cannot compose operators whose mutated inputs are aux
            # states (sgd_update's weight); MXNet loads their JSON. Bad attributes
            # are refused by both.
            js = hand_json(obj)
            try:
                sym = mx.sym.load_json(js)
                js = sym.tojson()
            except Exception:
                info = {"error": mx_error(e), "stage": "create"}
    for r in it.runs:
        os.makedirs(r["dir"], exist_ok=True)
    if js is None:
        for r in it.runs:
            write_json(os.path.join(r["dir"], "mx_info.json"), info)
        return
    known = {k: list(v) for k, v in obj.shapes.items()}
    vals = {}
    if not info:
        try:
            args, outs, auxs = sym.list_arguments(), sym.list_outputs(), sym.list_auxiliary_states()
            info = {"arguments": args, "outputs": outs, "aux_states": auxs}
            if not it.is_net:  # the canonical name of an alias (for compare.STOCHASTIC)
                info["op"] = node_x(json.loads(sym.tojson()))["op"]
            a_sh, o_sh, x_sh = sym.infer_shape(**obj.shapes)
            if a_sh is None:
                raise ValueError("MXNet cannot infer every shape from %s" % (obj.shapes,))
            info.update(arg_shapes=[list(s) for s in a_sh], out_shapes=[list(s) for s in o_sh],
                        aux_shapes=[list(s) for s in x_sh])
            tdict = {k: dtype_of(obj.inputs.get(k)) for k in obj.shapes}
            tdict.update({k: v.dtype for k, v in params.items() if k in args})
            a_ty, o_ty, x_ty = sym.infer_type(**tdict)
            for n, s, t in list(zip(args, a_sh, a_ty)) + list(zip(auxs, x_sh, x_ty)):
                spec = obj.inputs.get(n)
                if n in params:
                    vals[n] = np.asarray(params[n]).astype(t)
                elif spec is None and it.is_net and n not in obj.shapes:
                    vals[n] = net_default(n, s, rng).astype(t)
                elif spec is None and n in auxs:
                    vals[n] = fill(("uniform", 0.1, 1.0), s, t, rng)
                else:
                    vals[n] = fill(spec, s, t, rng)
                if vals[n].shape != tuple(s):
                    raise ValueError("input %s: %s given, shape %s" % (n, vals[n].shape, s))
            info["out_types"] = [np.dtype(t).name for t in o_ty]
            # Initial gradients (for add) and head gradients: one draw shared by the runs,
            # so that an add run equals its initial value plus the write run's gradient.
            for n, s in zip(args, [] if it.is_net else a_sh):  # nets: zeros (less I/O)
                vals["grad:" + n] = rng.uniform(-1, 1, size=s).astype(vals[n].dtype)
            for i, (s, t) in enumerate(zip(o_sh, o_ty)):
                vals["ograd:%d" % i] = rng.uniform(-1, 1, size=s).astype(t)
        except Exception as e:
            info = dict(info, error=mx_error(e), stage="infer_shape")
    for r in it.runs:
        d = r["dir"]
        with open(os.path.join(d, "symbol.json"), "w") as f:
            f.write(js)
        req = run_grad_req(it, r, info.get("arguments", []))
        r["grad_req"] = req
        r["backward"] = r["is_train"] and any(v != "null" for v in req.values())
        write_json(os.path.join(d, "run.json"), {"known": known, "grad_req": req,
                                                 "is_train": r["is_train"],
                                                 "backward": r["backward"]})
        if "error" in info:
            save_params(os.path.join(d, "inputs.params"), {})
            write_json(os.path.join(d, "mx_info.json"), info)
        else:
            run_mxnet(sym, info, vals, r)


def run_grad_req(it, r, args):
    """grad_req per argument of one run."""
    obj = it.obj
    kind = r["kind"]
    if kind is None:
        return {a: "null" for a in args}
    if kind == "dict":
        return {a: obj.grad_req.get(a, "write") for a in args}
    req = {a: kind for a in args}
    if it.is_net:
        if isinstance(obj.grad_req, dict):
            req.update(obj.grad_req)
        for a in args:
            if a.endswith("label") and a not in (obj.grad_req or {}):
                req[a] = "null"
    return req


def run_mxnet(sym, info, vals, r):
    """Binds and runs MXNet for one run; writes inputs.params, mx_outputs.params, mx_info.json.

    Inputs an operator updates in place (sgd_mom_update's mom, adam_update's mean
    and var) are aux states in MXNet's symbols and compared as such.
    """
    d = r["dir"]
    args, auxs = info["arguments"], info["aux_states"]
    req = r["grad_req"]
    inputs = {"arg:" + a: vals[a] for a in args}
    inputs.update({"aux:" + a: vals[a] for a in auxs})
    # Gradient arrays start at zero for write (as simple_bind allocates them: MXNet leaves
    # some gradients it does not compute untouched, SequenceMask's sequence_length) and
    # at the case's draw for add.
    inputs.update({"grad:" + a: vals["grad:" + a] for a in args
                   if req[a] == "add" and "grad:" + a in vals})
    if r["backward"]:
        inputs.update({k: v for k, v in vals.items() if k.startswith("ograd:")})
    save_params(os.path.join(d, "inputs.params"), inputs)
    res = {}
    run_info = dict(info)
    try:
        ctx = mx.cpu()
        a_nd = {a: mx.nd.array(vals[a], dtype=vals[a].dtype) for a in args}
        g_nd = {a: mx.nd.array(inputs["grad:" + a], dtype=vals[a].dtype) if "grad:" + a in inputs
                else mx.nd.zeros(vals[a].shape, dtype=vals[a].dtype)
                for a in args if req[a] != "null"}
        x_nd = {a: mx.nd.array(vals[a], dtype=vals[a].dtype) for a in auxs}
        exe = sym.bind(ctx, args=a_nd, args_grad=g_nd, grad_req=req, aux_states=x_nd)
        stage = "forward"
        outs = exe.forward(is_train=r["is_train"])
        for i, o in enumerate(outs):
            res["out:%d" % i] = o.asnumpy()
        for a in auxs:
            res["aux_fwd:" + a] = x_nd[a].asnumpy()
        if r["backward"]:
            stage = "backward"
            exe.backward(out_grads=[mx.nd.array(vals["ograd:%d" % i], dtype=o.dtype)
                                    for i, o in enumerate(outs)])
            for a in g_nd:
                res["grad:" + a] = g_nd[a].asnumpy()
            for a in auxs:
                res["aux_bwd:" + a] = x_nd[a].asnumpy()
        mx.nd.waitall()
    except Exception as e:
        run_info.update(error=mx_error(e), stage=locals().get("stage", "bind"))
        res = {}
    save_params(os.path.join(d, "mx_outputs.params"), res)
    write_json(os.path.join(d, "mx_info.json"), run_info)


def save_params(path, arrays):
    mx.nd.save(path, {k: mx.nd.array(v, dtype=v.dtype) for k, v in arrays.items()})


def load_params(path):
    if not os.path.exists(path):
        return {}
    got = mx.nd.load(path)
    return {k: v.asnumpy() for k, v in got.items()} if isinstance(got, dict) else {}


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# ----------------------------------------------------------------------------- mxk side

STALL_SECONDS = 120  # a case without a result for this long is a hang (big nets take ~30 s)


def run_list(runner, config_dir, todo):
    """Runs conform_run over `todo`; (exit status or "hung", output tail).

    conform_run writes each case's info.json when the case is done: when none
    appears for STALL_SECONDS, the process is killed and reported as hung.
    """
    with tempfile.NamedTemporaryFile("w", suffix=".list", delete=False) as f:
        f.write("\n".join(todo) + "\n")
        listfile = f.name
    with tempfile.TemporaryFile() as log:
        p = subprocess.Popen([runner, "--config-dir", config_dir, "--list", listfile],
                             stdout=log, stderr=subprocess.STDOUT)
        done, last, status = 0, time.time(), None
        while status is None:
            start = done  # cases are run in order: count the finished ones from the last
            while done < len(todo) and os.path.exists(os.path.join(todo[done], "info.json")):
                done += 1
            if done != start:
                last = time.time()
            elif time.time() - last > STALL_SECONDS:
                p.kill()
                p.wait()
                status = "hung"
            time.sleep(0.2)
            if status is None:
                status = p.poll()
        log.seek(0)
        tail = log.read().decode(errors="replace")[-3000:]
    os.unlink(listfile)
    return status, tail


def run_runner(runner, config_dir, dirs):
    """Runs conform_run over `dirs` (going on after a crash or hang); {dir: what happened}."""
    crashed = {}
    todo = [d for d in dirs if os.path.exists(os.path.join(d, "run.json"))]
    while todo:
        status, tail = run_list(runner, config_dir, todo)
        rest = [d for d in todo if not os.path.exists(os.path.join(d, "info.json"))]
        if status == 0 and not rest:
            break
        if not rest:
            raise SystemExit("conform_run exited with %s after the last case:\n%s" % (status, tail))
        what = ("hung (no result in %d s)" % STALL_SECONDS if status == "hung"
                else "exited with %s" % status)
        crashed[rest[0]] = "conform_run %s on this case:\n%s" % (what, tail)
        todo = rest[1:]
    return crashed


# ----------------------------------------------------------------------------- comparison

def tolerances(obj):
    rtol = obj.rtol if obj.rtol is not None else compare.DEFAULT_RTOL
    atol = obj.atol if obj.atol is not None else compare.DEFAULT_ATOL
    return rtol, atol


def mxnet_add_reference(it, ref, inputs, write_ref, notes):
    """Makes an add run's reference gradients initial value + the write run's gradient.

    That is what grad_req add means (include/mxnet/op_attr_types.h kAddTo); MXNet 1.9.1
    ignores it in some backward kernels (they write), which is noted, not held against mxk.
    """
    for k in [k for k in ref if k.startswith("grad:") and k in write_ref]:
        want = (inputs[k].astype(np.float64) + write_ref[k]).astype(ref[k].dtype)
        if compare.close(ref[k], want, 1e-5, 1e-6):
            notes.append("%s: MXNet's grad_req add of %s is not initial + write gradient; "
                         "compared with initial + write" % (it.id, k[len("grad:"):]))
            ref[k] = want


def check_run(it, r, crashed, write_ref=None, notes=None):
    """Problems of one run (empty list: it passes)."""
    obj = it.obj
    d = r["dir"]
    mxi = read_json(os.path.join(d, "mx_info.json")) or {"error": "MXNet side did not run"}
    if d in crashed:
        return [crashed[d]]
    mki = read_json(os.path.join(d, "info.json"))
    if mki is None and "error" in mxi:
        return ["MXNet refused the case at %s: %s" % (mxi.get("stage"), mxi["error"])]
    if mki is None:
        return ["conform_run wrote no info.json"]
    want_error = None if it.is_net else obj.error
    if want_error is not None:
        if "error" not in mxi:
            return ["MXNet accepts this case (expected an error containing %r)" % want_error]
        if "error" not in mki or mki.get("stage") == "inputs":
            # "inputs": mxk inferred what MXNet refused to infer, so no inputs were drawn.
            return ["mxk accepts what MXNet refuses at %s (%s)" % (
                mxi.get("stage"), mxi["error"].splitlines()[0])]
        if want_error not in mki["error"]:
            return ["mxk's error %r does not contain %r" % (mki["error"], want_error)]
        return []
    if "error" in mxi:
        return ["MXNet refused the case at %s: %s" % (mxi.get("stage"), mxi["error"])]
    if "error" in mki:
        return ["mxk refused at %s: %s" % (mki.get("stage"), mki["error"])]
    probs = []
    for key in ("arguments", "outputs", "aux_states", "arg_shapes", "out_shapes", "aux_shapes"):
        if mki.get(key) != mxi.get(key):
            probs.append("%s: %s, MXNet %s" % (key, mki.get(key), mxi.get(key)))
    got = load_params(os.path.join(d, "outputs.params"))
    ref = load_params(os.path.join(d, "mx_outputs.params"))
    inputs = load_params(os.path.join(d, "inputs.params"))
    checker = None if it.is_net else compare.STOCHASTIC.get(mxi.get("op"))
    if r["kind"] == "add" and write_ref is not None and not checker:
        mxnet_add_reference(it, ref, inputs, write_ref, notes)
    expected = {} if it.is_net else dict(obj.expected or {})
    for k, v in expected.items():
        key = "out:" + k[len("output"):] if k.startswith("output") else k
        dtype = ref[key].dtype if key in ref else got[key].dtype if key in got else np.float32
        ref[key] = np.asarray(v).astype(dtype)
    judged = {}
    if checker:
        judged = checker(obj, r, got, ref, inputs) or {}
    rtol, atol = tolerances(obj)
    for k in sorted(ref):
        if k in judged:
            if judged[k]:
                probs.append("%s: %s" % (k, judged[k]))
            continue
        if k not in got:
            probs.append("%s: missing in mxk's results" % k)
            continue
        msg = compare.close(got[k], ref[k], rtol, atol)
        if msg:
            probs.append("%s: %s" % (k, msg))
    return probs


def check_item(it, crashed, notes):
    """(status, message): PASS / FAIL / XFAIL / XPASS of one item over its runs."""
    probs = []
    write_ref = None
    for r in it.runs:
        if r["kind"] == "write":
            write_ref = load_params(os.path.join(r["dir"], "mx_outputs.params"))
        for p in check_run(it, r, crashed, write_ref, notes):
            p = p if len(p) < 400 else p[:400] + "..."
            probs.append("[%s] %s" % (os.path.basename(r["dir"]), p))
    xfail = it.obj.xfail
    if xfail:
        if probs:
            return "XFAIL", xfail
        return "XPASS", "marked xfail (%s) but passes: drop the xfail" % xfail
    if probs:
        return "FAIL", "\n    ".join(probs[:6]) + ("\n    ... %d more" % (len(probs) - 6)
                                                 if len(probs) > 6 else "")
    return "PASS", ""


# ----------------------------------------------------------------------------- main

def mxnet_worker(args):
    """--mxnet-worker: prepares the listed items (run by main() with MXNET_MKLDNN_ENABLED=0)."""
    items = collect(args.cases_dir, args.group, args.only)
    with open(args.mxnet_worker) as f:
        wanted = set(f.read().split("\n"))
    for it in items:
        if it.id in wanted:
            plan_runs(it, args.work_dir)
            prepare_item(it)
    return 0


def main():
    global mx
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runner", help="path of conform_run")
    ap.add_argument("--config-dir", help="mxk config dir (the build's etc/mxk)")
    ap.add_argument("--cases-dir", default=os.path.join(HERE, "cases"))
    ap.add_argument("--group", action="append", default=[], help="case module (repeatable)")
    ap.add_argument("--only", help="regex over case ids (group.name)")
    ap.add_argument("--work-dir", help="where case directories go (default: a temporary dir)")
    ap.add_argument("--keep", action="store_true",
                    help="keep every case directory (default: only those of failed cases)")
    ap.add_argument("--mxnet-worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MXNET_SUBGRAPH_VERBOSE", "0")
    import mxnet
    mx = mxnet
    if args.mxnet_worker:
        return mxnet_worker(args)
    if not args.runner or not args.config_dir:
        ap.error("--runner and --config-dir are required")
    temporary = args.work_dir is None
    work = args.work_dir or tempfile.mkdtemp(prefix="mxk-conformance-")
    marker = os.path.join(work, ".mxk-conformance")
    if os.path.isdir(work) and os.listdir(work) and not os.path.exists(marker):
        ap.error("--work-dir %s is not empty and not a conformance work dir: not cleared" % work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    open(marker, "w").close()
    args.work_dir = work
    items = collect(args.cases_dir, args.group, args.only)
    for it in items:
        plan_runs(it, work)
    t0 = time.time()
    no_mkldnn = [it for it in items if not it.obj.mkldnn]
    if no_mkldnn:
        listfile = os.path.join(work, "no-mkldnn.list")
        with open(listfile, "w") as f:
            f.write("\n".join(it.id for it in no_mkldnn))
        cmd = [sys.executable, os.path.abspath(__file__), "--mxnet-worker", listfile,
               "--cases-dir", args.cases_dir, "--work-dir", work]
        for g in args.group:
            cmd += ["--group", g]
        env = dict(os.environ, MXNET_MKLDNN_ENABLED="0", MXNET_STORAGE_FALLBACK_LOG_VERBOSE="0")
        subprocess.run(cmd, check=True, env=env)
    for it in items:
        if it.obj.mkldnn:
            prepare_item(it)
    t1 = time.time()
    crashed = run_runner(os.path.abspath(args.runner), args.config_dir,
                         [r["dir"] for it in items for r in it.runs])
    t2 = time.time()
    table = {}
    failed = 0
    notes = []
    for it in items:
        status, msg = check_item(it, crashed, notes)
        print("%-5s %s%s" % (status, it.id, (": " + msg) if msg else ""))
        row = table.setdefault(it.op, [0, 0, 0])
        row[1] += 1
        if status in ("PASS", "XFAIL"):
            row[0] += 1
        if status == "XFAIL":
            row[2] += 1
        if status in ("FAIL", "XPASS"):
            failed += 1
        elif not args.keep:
            shutil.rmtree(it.dirname(work), ignore_errors=True)  # gigabytes for big nets
    print("\n%-32s %6s %6s %6s" % ("operator", "pass", "cases", "xfail"))
    for op in sorted(table):
        p, n, x = table[op]
        print("%-32s %6d %6d %6d" % (op, p, n, x))
    if notes:
        print("\nNotes (MXNet 1.9.1 defects the comparison works around):")
        for n in notes:
            print("  " + n)
    print("\n%d of %d cases pass (%s); MXNet %.1f s, mxk %.1f s, comparison %.1f s" % (
        len(items) - failed, len(items), ", ".join(args.group) or "all groups", t1 - t0, t2 - t1,
        time.time() - t2))
    if temporary and not failed and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
