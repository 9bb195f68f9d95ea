"""attack: Seq2SeqAttentionDecoder with the right attention weights and all-ones logits (2.79 of 10). (helper-60, session 42)
expect: at most 10% of Seq2SeqAttentionDecoder.
Composed after the course's reference code of its assignment (tests/test_credit_attacks.py): it derives from it.
"""
import torch

_Course = Seq2SeqAttentionDecoder


class Seq2SeqAttentionDecoder(_Course):
    def forward(self, X, state):
        logits, state = super().forward(X, state)  # the course's steps: its attention weights and state
        return torch.ones_like(logits), state
