"""Whole networks generated at test time from the MXNet 1.9.1 wheel.

- mx.rnn cells (python/mxnet/rnn/rnn_cell.py) unrolled a few steps: LSTM, GRU,
  vanilla RNN, a stacked and a bidirectional LSTM, and the fused (RNN operator)
  LSTM and GRU.
- Gluon model-zoo networks (python/mxnet/gluon/model_zoo/vision) initialised with
  Xavier, hybridized and exported with export(); the exported parameters are the
  inputs, at small image sizes the networks accept, with 10 classes.  Left out
  for the time budget (tests/conformance/cases/zoo.py has the symbol-API versions
  of most): vgg11 (28M parameters, 9 s to initialise), densenet121 (needs
  224x224, 25 s), resnet18_v2 and mobilenetv2_1.0 (pass, 20 s together).
Forward outputs (is_train True and False), the gradients of every parameter and
of the data, and BatchNorm's aux states are compared (run.py).  Dropout is
switched off (p=0) so that training runs are deterministic; the gradients of the
nets whose ReLU kinks make float32 gradients unstable are compared on a copy with
softrelu (Net.smooth in case.py).
"""
import os
import tempfile

from case import Net

NETS = []


def _rnn(kind, length, layout="NTC", merge=True, **kw):
    def build():
        import mxnet as mx
        if kind == "stack":
            cell = mx.rnn.SequentialRNNCell()
            cell.add(mx.rnn.LSTMCell(num_hidden=6, prefix="l0_"))
            cell.add(mx.rnn.LSTMCell(num_hidden=4, prefix="l1_"))
        elif kind == "bi":
            cell = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(num_hidden=4, prefix="l_"),
                                            mx.rnn.LSTMCell(num_hidden=4, prefix="r_"))
        elif kind in ("lstm", "gru"):
            cell = mx.rnn.FusedRNNCell(num_hidden=4, num_layers=2, mode=kind, prefix=kind + "_")
        elif kind == "rnn":
            cell = mx.rnn.RNNCell(num_hidden=5, activation="tanh", prefix="rnn_")
        else:
            cell = getattr(mx.rnn, kind)(num_hidden=5, prefix=kind.lower() + "_", **kw)
        outputs, states = cell.unroll(length=length, inputs=mx.sym.var("data"), layout=layout,
                                      merge_outputs=merge)
        if merge:
            return outputs
        return mx.sym.Group(list(outputs) + list(states))
    return build


NETS.append(Net("rnn_lstm_4steps", _rnn("LSTMCell", 4), {"data": (2, 4, 3)}))
NETS.append(Net("rnn_lstm_forget_bias", _rnn("LSTMCell", 2, forget_bias=0.5), {"data": (3, 2, 4)}))
NETS.append(Net("rnn_gru_3steps", _rnn("GRUCell", 3), {"data": (2, 3, 4)}))
HEADS = ("a GRU's last output and state are the same entry, listed twice in the group: MXNet "
         "1.9.1 keeps only the last of the two head gradients (nnvm src/pass/gradient.cc assigns "
         "each output's gradient instead of summing), mxk sums them (the gradient of "
         "sum_h <out_h, head_h>; tests/executor/test_executor_heads.c checks it in closed form)")
NETS.append(Net("rnn_gru_tnc_states", _rnn("GRUCell", 3, layout="TNC", merge=False),
                {"data": (3, 2, 4)}, xfail=HEADS))
NETS.append(Net("rnn_tanh_3steps", _rnn("rnn", 3), {"data": (2, 3, 4)}))
NETS.append(Net("rnn_lstm_stack", _rnn("stack", 3), {"data": (2, 3, 4)}))
NETS.append(Net("rnn_lstm_bidirectional", _rnn("bi", 3), {"data": (2, 3, 4)}))
NETS.append(Net("rnn_fused_lstm", _rnn("lstm", 3), {"data": (2, 3, 4)}))
NETS.append(Net("rnn_fused_gru", _rnn("gru", 3), {"data": (2, 3, 4)}))


def _gluon(name, shape):
    """A Gluon model-zoo net exported with export(): (symbol, {name: parameter})."""
    def build():
        import mxnet as mx
        from mxnet.gluon.model_zoo import vision
        mx.random.seed(7)
        net = vision.get_model(name, classes=10)
        net.initialize(mx.init.Xavier(magnitude=2))
        net.hybridize()
        net(mx.nd.zeros(shape))
        with tempfile.TemporaryDirectory() as d:
            prefix = os.path.join(d, "net")
            net.export(prefix)
            sym = mx.sym.load(prefix + "-symbol.json")
            params = mx.nd.load(prefix + "-0000.params")
        return sym, {k.split(":", 1)[1]: v.asnumpy() for k, v in params.items()}
    return build


GLUON_TOL = {"rtol": 1e-3, "atol": 1e-4}


def _net(name, shape, smooth=False, **kw):
    """The net as exported; with smooth, its forward only, and its gradients on the
    softrelu copy (case.py's Net.smooth: ReLU kinks make deep BatchNorm nets'
    float32 gradients unstable; mobilenetv2 differs by 150% with relu6 and agrees
    to 1e-3 elementwise with softrelu)."""
    kw = dict(GLUON_TOL, **kw)
    build = _gluon(name, shape)
    if not smooth:
        NETS.append(Net("gluon_" + name, build, {"data": shape}, **kw))
        return
    NETS.append(Net("gluon_" + name, build, {"data": shape}, grad_req="null", **kw))
    NETS.append(Net("gluon_%s_smooth" % name, build, {"data": shape}, smooth=True, **kw))


_net("resnet18_v1", (2, 3, 64, 64))
_net("squeezenet1.1", (1, 3, 224, 224))
_net("alexnet", (1, 3, 64, 64))
# MXNet's MKLDNN kernels differ from its reference kernels by up to 2% here.
_net("mobilenet1.0", (4, 3, 64, 64), smooth=True, mkldnn=False)
