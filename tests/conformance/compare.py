"""Comparison of mxk's results with MXNet 1.9.1's for the conformance suite.

Values are compared as MXNet's test_utils.assert_almost_equal does
(python/mxnet/test_utils.py): |mxk - ref| <= atol + rtol * |ref| elementwise,
NaN equal to NaN and infinities equal to themselves; integer and boolean
arrays exactly.  Operators that draw random numbers are compared by what must
hold for any draw (see STOCHASTIC).
"""
import numpy as np

DEFAULT_RTOL = 1e-4  # python/mxnet/test_utils.py default_rtols()[float32]
DEFAULT_ATOL = 1e-3  # python/mxnet/test_utils.py default_atols()[float32]


def close(got, ref, rtol, atol):
    """None when `got` matches `ref`, else a one-line description of the worst element."""
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.shape != ref.shape:
        return "shape %s, MXNet %s" % (got.shape, ref.shape)
    if got.dtype != ref.dtype:
        return "dtype %s, MXNet %s" % (got.dtype, ref.dtype)
    if got.size == 0:
        return None
    if not np.issubdtype(ref.dtype, np.floating):
        bad = got != ref
        if not bad.any():
            return None
        i = np.unravel_index(np.argmax(bad), ref.shape)
        return "%d elements differ; at %s: %s, MXNet %s" % (bad.sum(), i, got[i], ref[i])
    g = got.astype(np.float64)
    r = ref.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(g - r)
        same = (g == r) | (np.isnan(g) & np.isnan(r))
        excess = np.where(same, 0.0, err - (atol + rtol * np.abs(r)))
    excess = np.where(np.isnan(excess), np.inf, excess)
    if not (excess > 0).any():
        return None
    i = np.unravel_index(np.argmax(excess), ref.shape)
    return "%d of %d elements differ (rtol %g, atol %g); worst at %s: %.9g, MXNet %.9g" % (
        int((excess > 0).sum()), ref.size, rtol, atol, tuple(int(k) for k in i), g[i], r[i])


def _sample_stats(got, ref):
    """None when two samples of one distribution agree in mean and spread."""
    g = np.asarray(got, dtype=np.float64).ravel()
    r = np.asarray(ref, dtype=np.float64).ravel()
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return "shape/dtype %s %s, MXNet %s %s" % (got.shape, got.dtype, ref.shape, ref.dtype)
    n = g.size
    sd = max(r.std(), 1e-12)
    # 6 standard errors of the difference of two means; 15% on the spread (n >= 1000).
    if abs(g.mean() - r.mean()) > 6 * sd * np.sqrt(2.0 / n) + 1e-6:
        return "sample mean %.6g, MXNet %.6g (n %d)" % (g.mean(), r.mean(), n)
    if abs(g.std() - r.std()) > 0.15 * sd + 1e-6:
        return "sample std %.6g, MXNet %.6g (n %d)" % (g.std(), r.std(), n)
    return None


def _check_samples(case, run, got, ref, inputs):
    """random_uniform / random_normal: each output is a sample of MXNet's distribution."""
    return {k: _sample_stats(got[k], ref[k]) for k in ref if k in got and k.startswith("out:")}


def _check_dropout(case, run, got, ref, inputs):
    """Dropout with is_train: out is 0 or data / (1 - p); the data gradient follows mxk's mask.

    Upstream src/operator/nn/dropout-inl.h: out = data * mask / (1 - p); d data =
    ograd * mask / (1 - p), mask drawn per element (or per `axes` slice).
    """
    p = float(case.attrs.get("p", 0.5))
    mode = case.attrs.get("mode", "training")
    if (not run["is_train"] and mode != "always") or p <= 0 or p >= 1:
        return None  # deterministic (all kept, all dropped, inference): compared elementwise
    x = inputs["arg:data"].astype(np.float64)
    out = got["out:0"].astype(np.float64)
    res = {}
    scale = 1.0 / (1.0 - p)
    kept = out != 0
    err = np.abs(out[kept] - x[kept] * scale)
    tol = DEFAULT_ATOL + DEFAULT_RTOL * np.abs(x[kept] * scale)
    res["out:0"] = None if (err <= tol).all() else "kept elements are not data / (1 - p)"
    if "out:1" in ref:
        res["out:1"] = None  # the mask: its draw is checked through out:0
    if "grad:data" in ref:
        og = inputs["ograd:0"].astype(np.float64)
        mask = (out != 0) | (x == 0)
        want = og * scale
        g = got.get("grad:data")
        base = inputs.get("grad:data") if run["grad_req"].get("data") == "add" else None
        if g is None:
            res["grad:data"] = "missing"
        else:
            g = g.astype(np.float64) - (base if base is not None else 0)
            ok = np.abs(g[mask & (x != 0)] - want[mask & (x != 0)]) <= 1e-3 + 1e-4 * np.abs(want[
                mask & (x != 0)])
            res["grad:data"] = None if ok.all() else "data gradient is not ograd * mask / (1 - p)"
    return res


def _check_shuffle(case, run, got, ref, inputs):
    """_shuffle: the output holds the input's rows (first axis) in some order."""
    x = inputs["arg:data"]
    out = got.get("out:0")

    def rows(a):
        return sorted(map(tuple, a.reshape(a.shape[0], -1).tolist()))

    ok = out is not None and out.shape == x.shape and rows(out) == rows(x)
    return {"out:0": None if ok else "the output is not a permutation of the input's rows"}


# op -> checker(case, run, got, ref, inputs) -> {key: None | message} for the keys it judges;
# keys it does not return are compared elementwise.
STOCHASTIC = {
    "_random_uniform": _check_samples,
    "_random_normal": _check_samples,
    "_random_gamma": _check_samples,
    "_random_exponential": _check_samples,
    "_random_randint": _check_samples,
    "_shuffle": _check_shuffle,
    "Dropout": _check_dropout,
}
