"""
component: masked_softmax
bug: fills a torch.zeros(shape) buffer row by row, which is float32, so float64 inputs come back as float32
fix: create the buffer in X's dtype and on X's device (torch.zeros_like(X)), or build the result without a buffer
symptom: dtype
"""
import torch


def masked_softmax(X, valid_lens):
    B, Q, K = X.shape
    out = torch.zeros(B, Q, K)
    for b in range(B):
        for q in range(Q):
            if valid_lens is None:
                n = K
            elif valid_lens.dim() == 1:
                n = int(valid_lens[b])
            else:
                n = int(valid_lens[b, q])
            out[b, q, :n] = torch.softmax(X[b, q, :n], dim=-1)
    return out
