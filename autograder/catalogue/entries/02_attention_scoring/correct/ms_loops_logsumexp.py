"""
component: masked_softmax
note: Python loops over batch items and queries, a logsumexp softmax, output buffer in X's dtype (float64-safe)
"""
import torch


def masked_softmax(X, valid_lens):
    B, Q, K = X.shape
    rows = []
    for b in range(B):
        for q in range(Q):
            if valid_lens is None:
                n = K
            elif valid_lens.dim() == 1:
                n = int(valid_lens[b])
            else:
                n = int(valid_lens[b, q])
            x = X[b, q, :n]
            p = torch.exp(x - torch.logsumexp(x, dim=0))
            rows.append(torch.cat([p, torch.zeros(K - n, dtype=X.dtype, device=X.device)]))
    return torch.stack(rows).reshape(B, Q, K)
