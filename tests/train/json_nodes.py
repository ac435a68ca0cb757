"""Symbol JSON compared node by node (the recurrent conformance scripts of tests/train)."""
import json


def nodes(js):
    """(op, name, attrs, inputs) of every node of a symbol's JSON."""
    return [(n["op"], n["name"], n.get("attrs", {}), n["inputs"]) for n in json.loads(js)["nodes"]]


def node_errors(want_json, got_json):
    """The first node that differs and a differing node count, as messages (none: [])."""
    want, got = nodes(want_json), nodes(got_json)
    errors = []
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            errors.append("node %d: MXNet %s, mxk %s" % (i, w, g))
            break
    if len(want) != len(got):
        errors.append("%d nodes in MXNet's JSON, %d in mxk's" % (len(want), len(got)))
    return errors
