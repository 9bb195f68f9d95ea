"""Hints that the public and the hidden suite of one assignment both give, written once.

A hint used by one suite only stays in that suite. This module ships to students with the public
tests (the self-check bundle, every assignment's): hints describe the contract and the likely
mistake in words; they must never hold a reference solution.

The catalogue's mutants name a `symptom` phrase that a failing test's feedback must contain, and
these texts are part of that feedback: after rewording one, run the catalogue of its assignment.
"""

# ---------------------------------------------------------------- 01 kernel regression

KERNEL_HINT = ("the weight of key x_j for query x is softmax_j(-(x - x_j)**2 / 2): a Gaussian kernel "
               "with a negative exponent and the factor 1/2, normalized over the keys; "
               "the prediction is the weighted sum of the values")
NWK_HINT = ("weights are softmax(-((q_i - k_ij) * w)**2 / 2) over row i of the keys: w multiplies the distance "
            "before squaring, and query i is compared with the keys in its own row i")

# ---------------------------------------------------------------- 02 attention scoring

MASK_HINT = ("positions at index >= valid length must get weight exactly 0: replace their scores by a very "
             "large negative number (not 0) before the softmax, which runs over the last axis")

# ---------------------------------------------------------------- 04 multi-head attention

MHA_SIZES_HINT = ("W_q maps query_size, W_k key_size and W_v value_size to num_hiddens: queries go through W_q, "
                  "keys through W_k, values through W_v")

# ---------------------------------------------------------------- 05 positional encoding

PE_LAYOUT_HINT = ("P[0, i, 2j] = sin(i / 10000**(2j/d)) and P[0, i, 2j+1] = cos(i / 10000**(2j/d)): even columns "
                  "(0, 2, 4, ...) hold sines, odd columns cosines, interleaved pair by pair; positions i start at 0")
PE_FORWARD_HINT = ("forward(X) with X of shape (B, T, d) adds self.P[:, :T, :], the first T positions "
                   "(T = X.shape[1])")

# ---------------------------------------------------------------- 06 the Transformer

POST_NORM_HINT = ("the Transformer is post-norm: ln(X + sublayer(X)) is the block's output, the normalization "
                  "comes last, after the residual sum")
