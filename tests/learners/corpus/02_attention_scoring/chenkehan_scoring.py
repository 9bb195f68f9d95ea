"""A learner's 02: own sequence_mask(x, valid_len, mask_value), AdditiveAttention(q_size, k_size, ...) with biased w_q/w_k/w_v, DotProductAttention.

Source: https://github.com/Chenkehan21/My-dive-into-deep-learning
Files (repository: path @ commit (definitions kept)):
  Chenkehan21/My-dive-into-deep-learning: codes/Modern_RNNs/seq2seq.py @ df3ca5749f311e59495fef93593bf4e1d12ad43e (sequence_mask)
  Chenkehan21/My-dive-into-deep-learning: codes/Attention/attention_scoring_functions.py @ df3ca5749f311e59495fef93593bf4e1d12ad43e (masked_softmax, AdditiveAttention, DotProductAttention)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import sys`; `from tqdm import tqdm`; `import matplotlib.pyplot as plt`; `from .machine_translation import load_data_iter, truncate_pad`; `from Recurrent_Neural_Network.rnn_from_scratch import grad_clip`; `from Modern_RNNs.seq2seq import sequence_mask`.
  sequence_mask is the same learner's, from codes/Modern_RNNs/seq2seq.py (masked_softmax imports it from there).
"""
# ruff: noqa  (a learner's code, kept verbatim)
from torch import optim
import torch
import torch.nn as nn
import math
import collections


def sequence_mask(x, valid_len, mask_value=0):
    max_len = x.shape[1]
    '''
    the operation is in essence a broadcast:
    
    if x.shape=(a, b, c):
    x[None, :].shape=(1, a, b, c); 
    x[:, None].shape=(a, 1, b, c); 
    x[:, :, None].shape=(a, b, 1, c)
    ...
    
    actually it's the same as x.unsqueeze(dim)
    x[None, :] <=> x.unsqueeze(dim=0)
    x[:, None] <=> x.unsqueeze(dim=1)
    x[:, :, None] <=> x.unsqueeze(dim=2)
    ...
    
    broadcast:
    1. Each tensor has at least one dimension.
    2. When iterating over the dimension sizes, starting at the trailing dimension, 
    the dimension sizes must either be equal, one of them is 1, or one of them does not exist.
    
    shape (1, max_len) + shape(len(valid_len), 1) = shape (len(valid_len), max_len)
    '''
    mask = torch.arange(max_len, device=x.device)[None, :] >= valid_len[:, None]
    x[mask] = mask_value
    
    return x


def masked_softmax(scores, valid_len):
    # scores.shape=(batch_size, num_queries, num_keys)
    # valid_len is a one dimension tensor
    if valid_len is None:
        return torch.softmax(scores, dim=-1)
    else:
        shape = scores.shape
        if valid_len.dim() == 1:
            # len(valid_len) should equal to batch_size, each element means the valid len of all queries in this batch
            valid_len = torch.repeat_interleave(valid_len, shape[1])
            # after repeat+interleave, valid_len is still a one dimension tensor, len(valid_len) = batch_size * num_queries
        else:
            # valid_len.shape=(batch_size, num_queries) each element means the valid len of one query
            valid_len = valid_len.reshape(-1) # turn valid_len to a one dimension tensor
        scores = sequence_mask(scores.reshape(-1, shape[-1]), valid_len, mask_value=-1e6)
        res = torch.softmax(scores.reshape(shape), dim=-1) # return to the original shape of scores
        '''
        in sequence_mask, max_len = scores.shape[1] = num_queries
        scores.reshape(-1, shape[-1]).shape=(batch_size * num_queries, num_keys)
        valid_len.shape=(batch_size * num_queries,) so the sequence_mask would work well
        after sequence_mask, scores.shape=(batch_size * num_queries, num_keys)
        res.shape=(batch_size, num_queries, num_keys)
        '''

    return res


class AdditiveAttention(nn.Module):
    def __init__(self, q_size, k_size, num_hiddens, dropout=0.5):
        super().__init__()
        self.w_q = nn.Linear(q_size, num_hiddens)
        self.w_k = nn.Linear(k_size, num_hiddens)
        self.w_v = nn.Linear(num_hiddens, 1)
        self.dropout = nn.Dropout(dropout)
    
    def forward(self, queries, keys, values, valid_lens=None):
        # keys.shape=(batch_size, num_keys, k_size)
        # queriese.shape=(batch_size, num_queries, q_size)
        # values.shape=(batch_size, num_values, v_size)
        # num_keys = num_values
        
        features_k, features_q = self.w_k(keys), self.w_q(queries)
        # features_k.shape=(batch_size, num_keys, num_hiddens)
        # features_q.shape=(batch_size, num_queries, num_hiddens)
        
        features_k, features_q = features_k.unsqueeze(1), features_q.unsqueeze(2)
        # features_k.shape=(batch_size,      1     , num_keys, num_hiddens)
        # features_q.shape=(batch_size, num_queries,    1    , num_hiddens)
        
        features = torch.tanh(features_k + features_q)
        # features.shape=(batch_size, num_queries, num_keys, num_hiddens)
        
        scores = self.w_v(features)
        # scores.shape=(batch_size, num_queries, num_keys, 1)
        scores = scores.squeeze(-1)
        # scores.shape=(batch_size, num_queries, num_keys)
        
        self.attention_weights = masked_softmax(scores, valid_lens)
        # attention_weights.shape = (batch_size, num_queries, num_keys)
        # values.shape            = (batch_size, num_values, v_size), num_kes = num_values
        
        output = torch.bmm(self.dropout(self.attention_weights), values)
        # output.shape=(batch_size, num_queries, v_size)
        
        return output


class DotProductAttention(nn.Module):
    def __init__(self, dropout=0.5):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
    
    def forward(self, queries, keys, values, valid_lens=None):
        # keys.shape=(batch_size, num_keys, k_size)
        # queriese.shape=(batch_size, num_queries, q_size)
        # values.shape=(batch_size, num_values, v_size)
        # k_size must be equal to q_size, num_queries = num_keys
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        # attention_weights.shape = (batch_size, num_queries, num_keys)
        res = torch.bmm(self.dropout(self.attention_weights), values)
        # res.shape=(batch_size, num_queries, v_size)

        return res
