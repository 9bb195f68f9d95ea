"""A learner's Seq2SeqAttentionDecoder in the d2l 1.0 form: AdditiveAttention(num_hiddens, dropout), LazyLinear dense, init_seq2seq.

Source: https://github.com/omroot/d2l_pytorch
Files (repository: path @ commit (definitions kept)):
  omroot/d2l_pytorch: mylearnings/myd2l/omd2l/models/AttentionSeq2Seq/Seq2SeqAttentionDecoder.py @ 13b35096c9d95b2bad61c746a70ec16d14e0f2f6 (Seq2SeqAttentionDecoder)
  omroot/d2l_pytorch: mylearnings/myd2l/omd2l/models/utils.py @ 13b35096c9d95b2bad61c746a70ec16d14e0f2f6 (init_seq2seq)
Licence: no licence file in the repository.
Edits: kept only the imports of torch/math/d2l and the definitions listed above, verbatim (data, training, plotting and demo code dropped).
  Dropped imports of the learner's own modules or plotting: `from omd2l.models.base.AttentionDecoder import AttentionDecoder`; `from omd2l.models.AttentionSeq2Seq.AdditiveAttention import AdditiveAttention`; `from omd2l.models.utils import init_seq2seq`.
  (omd2l is the learner's own copy of d2l 1.0: its AttentionDecoder is the book's, the course provides it; its AdditiveAttention is d2l 1.0's AdditiveAttention(num_hiddens, dropout) with LazyLinear layers, the course's stands in.)
  init_seq2seq is the same learner's, from mylearnings/myd2l/omd2l/models/utils.py (Seq2SeqAttentionDecoder.py imports it from there).
"""
# ruff: noqa  (a learner's code, kept verbatim)
import torch
from torch import nn


def init_seq2seq(module):  #@save
    """Initialize weights for Seq2Seq."""
    if type(module) == nn.Linear:
         nn.init.xavier_uniform_(module.weight)
    if type(module) == nn.GRU:
        for param in module._flat_weights_names:
            if "weight" in param:
                nn.init.xavier_uniform_(module._parameters[param])


class Seq2SeqAttentionDecoder(AttentionDecoder):
    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers,
                 dropout=0):
        super().__init__()
        self.attention = AdditiveAttention(num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(
            embed_size + num_hiddens, num_hiddens, num_layers,
            dropout=dropout)
        self.dense = nn.LazyLinear(vocab_size)
        self.apply(init_seq2seq)

    def init_state(self, enc_outputs, enc_valid_lens):
        # Shape of outputs: (num_steps, batch_size, num_hiddens).
        # Shape of hidden_state: (num_layers, batch_size, num_hiddens)
        outputs, hidden_state = enc_outputs
        return (outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)

    def forward(self, X, state):
        # Shape of enc_outputs: (batch_size, num_steps, num_hiddens).
        # Shape of hidden_state: (num_layers, batch_size, num_hiddens)
        enc_outputs, hidden_state, enc_valid_lens = state
        # Shape of the output X: (num_steps, batch_size, embed_size)
        X = self.embedding(X).permute(1, 0, 2)
        outputs, self._attention_weights = [], []
        for x in X:
            # Shape of query: (batch_size, 1, num_hiddens)
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            # Shape of context: (batch_size, 1, num_hiddens)
            context = self.attention(
                query, enc_outputs, enc_outputs, enc_valid_lens)
            # Concatenate on the feature dimension
            x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            # Reshape x as (1, batch_size, embed_size + num_hiddens)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        # After fully connected layer transformation, shape of outputs:
        # (num_steps, batch_size, vocab_size)
        outputs = self.dense(torch.cat(outputs, dim=0))
        return outputs.permute(1, 0, 2), [enc_outputs, hidden_state,
                                          enc_valid_lens]

    @property
    def attention_weights(self):
        return self._attention_weights
