"""Self-checks of the conformance harness: each case must fail, and is marked xfail,
so the suite fails if run.py stops catching what it is for (wrong values, wrong
shapes, an accepted bad case, a wrong error text, a missing expected output)."""
from case import Case

X = {"lhs": (2,), "rhs": (2,)}
VALS = {"lhs": [1.0, 2.0], "rhs": [3.0, 4.0]}

CASES = [
    Case("elemwise_add", {}, X, inputs=VALS, grad_req="null", expected={"output0": [4.0, 6.5]},
         name="wrong_value", xfail="output 6 is compared with the expected 6.5"),
    Case("elemwise_add", {}, X, inputs=VALS, grad_req="null", expected={"output0": [4.0, 6.0]},
         rtol=0.0, atol=0.0, name="right_value_exact"),
    Case("elemwise_add", {}, X, inputs=VALS, grad_req="null",
         expected={"output0": [[4.0, 6.0]]}, name="wrong_shape",
         xfail="a (2,) output is compared with an expected (1, 2)"),
    Case("elemwise_add", {}, X, inputs=VALS, grad_req="null", expected={"output1": [0.0]},
         name="missing_output", xfail="elemwise_add has no second output"),
    Case("elemwise_add", {}, X, error="anything", name="accepted_error_case",
         xfail="both accept the case: an error case must be refused"),
    Case("elemwise_add", {}, {"lhs": (2,), "rhs": (3,)}, error="no such text in any message",
         name="wrong_error_text", xfail="mxk refuses with another message"),
    Case("elemwise_add", {}, {"lhs": (2,), "rhs": (3,)}, name="refused_by_both",
         xfail="a case MXNet refuses without error= is a broken case"),
]
