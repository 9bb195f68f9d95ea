"""Public tests for assignment 01: Nadaraya-Watson kernel regression (attention pooling).

Run them in your notebook with the self-check cell, or read them to see what is checked.
Every expected number here can be worked out by hand: the weights are
softmax_j(-(x - x_j)**2 / 2) over the keys x_j, and a prediction is the weighted sum of the values.
"""
import math

import pytest
import torch

from autograder.selfcheck import testing as T
from autograder.selfcheck.hints import KERNEL_HINT, NWK_HINT
from autograder.selfcheck.i18n import _

E2 = math.exp(-2.0)
W_NEAR, W_FAR = 1 / (1 + E2), E2 / (1 + E2)  # softmax([0, -2]): key distances 0 and 2


def _nw(student, queries, keys, values):
    out = T.call("nadaraya_watson(queries, keys, values)", student.nadaraya_watson, queries, keys, values,
                 hint=KERNEL_HINT)
    y_hat, weights = T.returned_pair(out, _("nadaraya_watson must return a pair (y_hat, attention_weights), "
                                            "got {type_name}").format(type_name=T.type_name(out)))
    return T.as_plain(y_hat, _("y_hat (the first returned value)")), \
        weights if isinstance(weights, T.Missing) else T.as_plain(weights, _("attention_weights (the second returned value)"))


def _set_w(model, value):
    """Set the width to `value`: the contract's w, or the one parameter of shape (1,) under another name
    (test_nwk_contract_names charges the name)."""
    T.copy_weights(model, T.contract({"w": torch.tensor([float(value)])}))


# ---------------------------------------------------------------- nadaraya_watson

@pytest.mark.component("nadaraya_watson")
def test_nw_shapes(student):
    """returns (y_hat of shape (n,), attention_weights of shape (n, m)), in that order"""
    queries, keys, values = torch.tensor([0.0, 1.0, 2.5]), torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.arange(4.0)
    y_hat, weights = _nw(student, queries, keys, values)
    T.assert_shape(y_hat, (3,), _("y_hat for 3 queries (the first returned value)"))
    T.assert_shape(weights, (3, 4), _("attention_weights for 3 queries and 4 keys (the second returned value)"))


@pytest.mark.component("nadaraya_watson")
def test_nw_rows_sum_to_one(student):
    """each row of attention_weights sums to 1 over the keys"""
    queries, keys, values = torch.tensor([0.0, 1.0, 2.5]), torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.arange(4.0)
    _y_hat, weights = _nw(student, queries, keys, values)
    T.assert_shape(weights, (3, 4), _("attention_weights for 3 queries and 4 keys"))
    T.assert_close(weights.sum(dim=1), torch.ones(3), what=_("row sums of attention_weights (normalized over the keys)"),
                   inputs={"queries": queries, "keys": keys},
                   hint="apply the softmax over the keys (dim=1 of the (n, m) matrix), one distribution per query")


@pytest.mark.component("nadaraya_watson")
def test_nw_worked_example(student):
    """worked example: Gaussian kernel weights and the weighted sum of the values"""
    queries, keys, values = torch.tensor([1.0, 0.0]), torch.tensor([0.0, 2.0]), torch.tensor([1.0, 3.0])
    y_hat, weights = _nw(student, queries, keys, values)
    # query 1 is at distance 1 from both keys: equal weights; query 0 is at distances 0 and 2.
    expected_w = torch.tensor([[0.5, 0.5], [W_NEAR, W_FAR]])
    T.assert_close(weights, expected_w, what=_("attention_weights (Gaussian kernel)"),
                   inputs={"queries": queries, "keys": keys}, hint=KERNEL_HINT)
    expected_y = torch.tensor([2.0, W_NEAR * 1.0 + W_FAR * 3.0])
    T.assert_close(y_hat, expected_y, what=_("y_hat (weighted sum of the values)"),
                   inputs={"queries": queries, "keys": keys, "values": values}, hint=KERNEL_HINT)


# ---------------------------------------------------------------- NWKernelRegression

@pytest.mark.component("NWKernelRegression")
@pytest.mark.kind("structure")
def test_nwk_contract_names(student):
    """has exactly one learnable parameter, w, an nn.Parameter of shape (1,)

    The one check of the name w (the hidden suite does not check it again): the other tests bind the
    width by structure."""
    model = student.NWKernelRegression()
    params = {name: tuple(p.shape) for name, p in model.named_parameters()}
    unregistered = _("NWKernelRegression must register its kernel width as a learnable nn.Parameter named w "
                     "(self.w = nn.Parameter(torch.rand((1,)))); found parameters {params}").format(params=params)
    if "w" not in params:
        T.assert_holds(model, ["w"], params, unregistered)  # says why, where it can
    T.check("w" in params, unregistered)
    T.check(params == {"w": (1,)}, _("expected exactly one parameter w of shape (1,), found {params}").format(params=params))


#: Queries, one row of keys per query and values for the shape tests: 3 queries, 4 keys each.
QUERIES = torch.tensor([0.0, 1.0, 2.5])
KEYS = torch.tensor([[0.0, 1.0, 2.0, 3.0], [0.5, 1.0, 1.5, 2.0], [3.0, 2.0, 1.0, 0.0]])
VALUES = torch.arange(12.0).reshape(3, 4)


def _nwk(model, queries, keys, values):
    """The model's output and its stored attention weights (a `T.Missing` where it stores none: only
    the checks of the weights fail)."""
    y_hat = T.as_plain(T.call("model(queries, keys, values)", model, queries, keys, values, hint=NWK_HINT),
                       _("the output"))
    weights = T.attribute(model, "attention_weights", "model.attention_weights")
    return y_hat, weights


@pytest.mark.component("NWKernelRegression")
def test_nwk_shape(student):
    """returns shape (n,): one prediction per query"""
    model = student.NWKernelRegression()
    _set_w(model, 1.0)
    y_hat, _weights = _nwk(model, QUERIES, KEYS, VALUES)
    T.assert_shape(y_hat, (3,), _("output for 3 queries (keys and values of shape (3, 4))"))


@pytest.mark.component("NWKernelRegression")
def test_nwk_stores_normalized_weights(student):
    """stores attention_weights of shape (n, m); each row sums to 1 over the keys"""
    model = student.NWKernelRegression()
    _set_w(model, 1.0)
    _y_hat, weights = _nwk(model, QUERIES, KEYS, VALUES)
    weights = T.as_plain(weights, "model.attention_weights")
    T.assert_shape(weights, (3, 4), _("model.attention_weights for 3 queries, 4 keys each"))
    T.assert_close(weights.sum(dim=1), torch.ones(3), what=_("row sums of model.attention_weights (normalized over the keys)"),
                   hint="apply the softmax over the keys (dim=1), and store the weights after the softmax "
                        "in self.attention_weights")


#: The parts of the worked example scored separately: a module that stores no weights keeps its output part.
PARTS = ("output", "attention_weights")


@pytest.mark.component("NWKernelRegression")
@pytest.mark.weight(1 / len(PARTS))  # the parts share one test's weight
@pytest.mark.parametrize("part", PARTS)
def test_nwk_worked_example(student, part):
    """worked example: w scales the distance before squaring; each query uses its own row of keys"""
    model = student.NWKernelRegression()
    queries = torch.tensor([1.0, 0.0])
    keys = torch.tensor([[0.0, 2.0], [0.0, 1.0]])
    values = torch.tensor([[1.0, 3.0], [1.0, 3.0]])
    # w = 2: query 1 is at distance 1 from both keys of row 0 (equal weights); query 0 is at
    # scaled distances 0 and 2 from the keys of row 1.
    _set_w(model, 2.0)
    y_hat, weights = _nwk(model, queries, keys, values)
    if part == "attention_weights":
        T.assert_close(weights, torch.tensor([[0.5, 0.5], [W_NEAR, W_FAR]]), what=_("model.attention_weights with w = 2"),
                       inputs={"queries": queries, "keys": keys}, hint=NWK_HINT)
    else:
        T.assert_close(y_hat, torch.tensor([2.0, W_NEAR * 1.0 + W_FAR * 3.0]), what=_("output with w = 2"),
                       inputs={"queries": queries, "keys": keys, "values": values}, hint=NWK_HINT)
