"""Conformance case descriptions: data only, read by run.py.

A ``Case`` is one operator applied to named variables; run.py builds it with
MXNet 1.9.1's Python front end (node named ``x``), runs it through MXNet and
through mxk (tests/conformance/conform_run.c) on the same inputs, and compares
outputs, input gradients (grad_req write and add), aux states after forward and
after backward, inferred shapes and argument names.  A ``Net`` is a whole
network (MXNet symbol JSON, or a builder) compared the same way.

Fields (see tests/conformance/README.md for the full description):

- op: MXNet operator name as in symbol JSON ("expand_dims", "_contrib_box_nms").
- attrs: attribute values as MXNet's Python front end takes them.
- shapes: ordered dict variable name -> shape, of the inputs given; each key is
  passed as the operator's argument of that name (positionally, in order, when
  variadic=True).  Arguments not given are created by MXNet as x_<argname>.
- inputs: name -> fill: ("uniform", lo, hi[, dtype]), ("int", lo, hi[, dtype]), or a
  literal nested list / numpy array (float32, or the array's integer dtype); default
  uniform(-1, 1) float32 (aux states: uniform(0.1, 1)).
- grad_req: None (write, then add, for every input), "null" (forward only), or
  a dict name -> req.
- is_train: None (forward with is_train True, then backward, and also with
  False), or a bool.
- rtol / atol: default MXNet's float32 tolerances (1e-4 / 1e-3,
  python/mxnet/test_utils.py).
- mkldnn=False: MXNet runs with MXNET_MKLDNN_ENABLED=0 (say why in note).
- error: both must refuse; mxk's message must contain this text.
- expected: {"output0": values, ...}: known-good outputs checked instead of
  MXNet's (when MXNet is wrong; say why in note).
- xfail: a documented known failure; the case must still fail.
- name: unique case name (default "<op>#<index among the module's cases of op>").
"""


class Case:
    """One operator configuration compared between MXNet 1.9.1 and mxk."""

    __slots__ = ("op", "attrs", "shapes", "inputs", "grad_req", "is_train", "rtol", "atol",
                 "mkldnn", "error", "expected", "xfail", "note", "name", "variadic")

    def __init__(self, op, attrs, shapes, *, inputs=None, grad_req=None, is_train=None, rtol=None,
                 atol=None, mkldnn=True, error=None, expected=None, xfail=None, note=None,
                 name=None, variadic=False):
        self.op = op
        self.attrs = dict(attrs or {})
        self.shapes = dict(shapes)
        self.inputs = dict(inputs or {})
        self.grad_req = grad_req
        self.is_train = is_train
        self.rtol = rtol
        self.atol = atol
        self.mkldnn = mkldnn
        self.error = error
        self.expected = expected
        self.xfail = xfail
        self.note = note
        self.name = name
        self.variadic = variadic

    def __repr__(self):
        return "Case(%r, %r, %r)" % (self.op, self.attrs, self.shapes)


class Net:
    """A whole network compared between MXNet 1.9.1 and mxk.

    source: path of an MXNet symbol JSON file (relative paths are taken from the
    repository root), or a callable returning a Symbol, or a (Symbol, params)
    pair where params maps argument / aux names to numpy arrays (e.g. a Gluon
    model-zoo net after export(); the values replace the random inputs).
    shapes: input name -> shape (data, labels); every other argument's shape is
    inferred.  Forward outputs (is_train True and False) and the gradients of
    every argument (grad_req write; arguments named *label: null; grad_req="null":
    forward only, or a dict of overrides) are compared, and aux states.
    mkldnn=False: MXNet runs without MKLDNN, as for a Case.
    smooth=True: Activation(relu) and clip (relu6) are replaced by
    Activation(softrelu) on both sides.  With the kinks, an activation that float32
    rounding (sums in another order) puts on the other side of 0 flips its
    gradient, and BatchNorm's batch statistics in backward spread each flip over
    the whole batch: deep BatchNorm nets then differ by up to 150% in their first
    layers' gradients while each layer alone agrees.  Compare such a net's forward
    as is (grad_req="null") and its gradients smoothed.
    """

    __slots__ = ("name", "source", "shapes", "inputs", "rtol", "atol", "xfail", "note", "grad_req",
                 "mkldnn", "smooth")

    def __init__(self, name, source, shapes, *, inputs=None, rtol=None, atol=None, xfail=None,
                 note=None, grad_req=None, mkldnn=True, smooth=False):
        self.name = name
        self.source = source
        self.shapes = dict(shapes)
        self.inputs = dict(inputs or {})
        self.rtol = rtol
        self.atol = atol
        self.xfail = xfail
        self.note = note
        self.grad_req = grad_req
        self.mkldnn = mkldnn
        self.smooth = smooth

    def __repr__(self):
        return "Net(%r)" % (self.name,)
