"""Public tests for assignment 05: sinusoidal positional encoding.

These run in your notebook's self-check and in the grader. They check shapes, a small worked
example you can verify by hand, and properties of the contract; the grader runs more tests.
"""
import math

import pytest
import torch

from autograder.selfcheck import testing as T
from autograder.selfcheck.hints import PE_FORWARD_HINT, PE_LAYOUT_HINT
from autograder.selfcheck.i18n import _


def table(pe, d, max_len, what, as_stored=False):
    """pe.P, else the module's one buffer of shape (1, max_len, d) (test_pe_contract_names charges the name), in
    the contract's shape unless `as_stored`; a table built on forward's first call is read after one call; in eval
    mode, as the hidden suite reads the table forward adds."""
    pe.eval()
    P = T.as_plain(T.stored_table(pe, "P", (1, max_len, d), what, as_stored=as_stored,
                                  after_call=lambda: pe(torch.zeros(1, max_len, d))), what)
    T.assert_shape(P, (1, max_len, d), what)
    return P


@pytest.mark.component("PositionalEncoding")
@pytest.mark.kind("structure")
def test_pe_contract_names(student):
    """the encoding table is stored in the attribute P

    The one check of the name (the hidden suite does not check it again): the other tests read the table
    as P or, without one, as the module's one buffer of shape (1, max_len, num_hiddens)."""
    pe = student.PositionalEncoding(8, 0.0, 20)
    P = T.present(T.attribute(pe, "P", "PositionalEncoding(8, 0, max_len=20)"))  # missing: says so, by name
    T.check(P is not None, _("PositionalEncoding(8, 0, max_len=20).P is None once the module is built: build the "
                             "table in __init__ (forward only reads it); the other tests read a table that forward "
                             "builds on its first call"))
    T.check(isinstance(P, torch.Tensor), _("PositionalEncoding(8, 0, max_len=20).P should be the encoding table "
                                           "(a tensor of shape (1, max_len, num_hiddens)), got {type_name}").format(type_name=T.type_name(P)))


@pytest.mark.component("PositionalEncoding")
def test_table_shape(student):
    """the table P has shape (1, max_len, num_hiddens)"""
    table(student.PositionalEncoding(6, 0.0, 50), 6, 50, "PositionalEncoding(num_hiddens=6, dropout=0, max_len=50).P",
          as_stored=True)
    table(student.PositionalEncoding(4, 0.0), 4, 1000,
          _("PositionalEncoding(num_hiddens=4, dropout=0).P (max_len defaults to 1000)"), as_stored=True)


@pytest.mark.component("PositionalEncoding")
@pytest.mark.part("table")  # a stored table: the scoring gate weighs what forward returns
def test_worked_example(student):
    """the first rows of P follow the sine/cosine formula (worked example, d = 4)"""
    P = table(student.PositionalEncoding(4, 0.0, 3), 4, 3, "PositionalEncoding(4, 0, max_len=3).P")
    # Column pairs (0, 1) use the angle i / 10000**(0/4) = i, pairs (2, 3) the angle i / 10000**(2/4) = i / 100.
    expected = torch.tensor([[[0.0, 1.0, 0.0, 1.0],
                              [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)],
                              [math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)]]])
    T.assert_close(P, expected, what="PositionalEncoding(num_hiddens=4, dropout=0, max_len=3).P",
                   hint=PE_LAYOUT_HINT, atol=1e-5, rtol=0, check_dtype=False)


@pytest.mark.component("PositionalEncoding")
def test_not_trainable(student):
    """P is a fixed table, not a trainable parameter"""
    names = T.param_names(student.PositionalEncoding(8, 0.1, 20))
    T.check(not names, _("PositionalEncoding should have no trainable parameters, found {names}: keep P as a plain "
                         "tensor (self.register_buffer('P', P) or a plain attribute), not an nn.Parameter").format(names=names))


@pytest.mark.component("PositionalEncoding")
def test_input_unchanged(student):
    """forward leaves the caller's input unchanged"""
    pe = student.PositionalEncoding(4, 0.0, 10)
    pe.eval()
    X = torch.ones(2, 3, 4)
    _result, (after,) = T.call(_("PositionalEncoding(4, 0, max_len=10) on X of shape (2, 3, 4)"), T.call_and_inputs, pe, X,
                         hint=PE_FORWARD_HINT, show_args=False)
    T.assert_close(after, torch.ones(2, 3, 4), what=_("the caller's input X after calling forward(X)"),
                   hint="X += ... changes the caller's tensor in place; write X = X + ... instead")


@pytest.mark.component("PositionalEncoding")
def test_forward_adds_first_positions(student):
    """in eval mode, forward adds the first T positions P[:, :T] to every sequence of the batch"""
    pe = student.PositionalEncoding(4, 0.5, 10)
    pe.eval()
    X = torch.arange(2 * 3 * 4, dtype=torch.float32).reshape(2, 3, 4)
    expected = X + table(pe, 4, 10, "PositionalEncoding(4, dropout=0.5, max_len=10).P")[:, :3]
    out = T.call(_("PositionalEncoding(4, dropout=0.5, max_len=10) in eval mode on X of shape (2, 3, 4)"), pe, X,
                 hint=PE_FORWARD_HINT, show_args=False)
    T.assert_close(out, expected, what=_("PositionalEncoding(4, dropout=0.5, max_len=10) in eval mode on X of "
                     "shape (2, 3, 4)"), inputs={"X": X}, check_dtype=False,
                   hint="return dropout(X + self.P[:, :X.shape[1], :]): positions run along axis 1 of X, and "
                        "in eval mode dropout does nothing")
