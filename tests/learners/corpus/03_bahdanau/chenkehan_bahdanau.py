"""A learner's Seq2SeqAttentionDecoder subclassing nn.Module (not AttentionDecoder), with its own argument names.

Source: https://github.com/Chenkehan21/My-dive-into-deep-learning
Files (repository: path @ commit (definitions kept)):
  Chenkehan21/My-dive-into-deep-learning: codes/Attention/bahdanau_attention.py @ df3ca5749f311e59495fef93593bf4e1d12ad43e (Seq2SeqAttentionDecoder)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `import sys`; `import matplotlib`; `import matplotlib.pyplot as plt`; `from attention_scoring_functions import AdditiveAttention`; `from Modern_RNNs.seq2seq import *`.
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
import torch.nn as nn


class Seq2SeqAttentionDecoder(nn.Module):
    def __init__(self, vocab_size, embedding_dim, num_hiddens, num_layers, dropout=0):
        super().__init__()
        # q, k, v are all rnn output's last state
        self.attention = AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embedding_dim)
        self.rnn = nn.GRU(num_hiddens + embedding_dim, num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, encoder_output_state, encoder_valid_lens):
        outputs, hidden_state = encoder_output_state
        # outputs.shape=(num_steps, batch_size, hidden_size)
        # hidden_state.shape=(D*num_layers, N, H) D=2 if bidirectional=True otherwise 1
        
        return outputs.permute(1, 0, 2), hidden_state, encoder_valid_lens

    def forward(self, x, state):
        encoder_outputs, hidden_state, encoder_valid_lens = state
        X = self.embedding(x).permute(1, 0, 2) # X.shape=(num_steps, batch_sizes, embedding_dim)
        outputs, self._attention_weights = [], []
        for x in X:
            '''
            shape requirements:
            keys.shape=(batch_size, num_keys, k_size)
            queriese.shape=(batch_size, num_queries, q_size)
            values.shape=(batch_size, num_values, v_size)
            ''' 

            queries = hidden_state[-1]
            # now queries.shape=(batch_size, num_hiddens)
            # since we are traversing X on num_steps dimension, x.shape=(batch_sizes, embedding_dim)
            # we can consider num_queries as 1, so we can unsqueeze x on dimension 1
            queries = queries.unsqueeze(dim=1)
            keys = encoder_outputs # keys.shape=(batch_size, num_steps, num_hiddens)
            values = encoder_outputs
            context = self.attention(queries, keys, values, encoder_valid_lens)
            x = torch.cat([context, x.unsqueeze(dim=1)], dim=-1)
            output, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state) # output.shape=(num_steps, batch_size, hidden_size)
            outputs.append(output)
            self._attention_weights.append(self.attention.attention_weights)
        
        res = self.dense(torch.cat(outputs, dim=0)).permute(1, 0, 2)
        
        return res, [encoder_outputs, hidden_state, encoder_valid_lens]
    
    @property
    def attention_weights(self):
        return self._attention_weights
