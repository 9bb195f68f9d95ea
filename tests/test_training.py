"""Tests of the given data and training toolkit (solutions/datasets.py, training.py,
train_reference.py). The fast ones take well under a minute; the full-size reproduction of the
figures of docs/training.md is marked `slow`: it is skipped unless selected with `pytest -m slow`."""
from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

from solutions.datasets import (Vocab, load_data_dates, make_date_pairs,
                                make_date_texts, make_regression_data, make_test_pairs,
                                ordinal, tokenize_date)
from solutions.train_reference import (NUM_STEPS, save_attention_figures,
                                       train_bahdanau, train_transformer)
from solutions.training import (MaskedSoftmaxCELoss, bleu, cross_attention_matrix,
                                evaluate, exact_match, grad_clipping, plot_losses,
                                predict_seq2seq, set_seed, show_heatmaps)

# ----------------------------------------------------------------------------- data


def test_date_pairs_are_deterministic() -> None:
    assert make_date_pairs(100, seed=0) == make_date_pairs(100, seed=0)
    assert make_date_pairs(100, seed=0) != make_date_pairs(100, seed=1)
    # A longer draw starts with the shorter one.
    assert make_date_pairs(300, seed=0)[:100] == make_date_pairs(100, seed=0)


def test_date_pairs_content() -> None:
    pairs = make_date_pairs(500, seed=0)
    for (source, target), (text, iso) in zip(pairs, make_date_texts(500, seed=0)):
        assert source == tokenize_date(text)
        assert "".join(target) == iso
        assert len(target) == 10 and target[4] == target[7] == "-"
        assert target[:4] == list(source[-1]) or target[:4] == list(source[0])  # year token
    assert max(len(source) for source, _ in pairs) + 1 <= NUM_STEPS


def test_tokenize_and_ordinal() -> None:
    assert tokenize_date("Thursday, March 3rd, 1994") == [
        "thursday", ",", "march", "3rd", ",", "1994"]
    assert tokenize_date("03/03/1994") == ["03", "/", "03", "/", "1994"]
    assert [ordinal(d) for d in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "31st"]


def test_held_out_split_is_disjoint() -> None:
    train = make_date_pairs(2000, seed=0)
    test = make_test_pairs(200, seed=1, num_train=2000, train_seed=0)
    assert len(test) == 200
    assert not {tuple(s) for s, _ in train} & {tuple(s) for s, _ in test}
    assert test == make_test_pairs(200, seed=1, num_train=2000, train_seed=0)


def _epochs(data_iter, n: int) -> list[list[tuple[torch.Tensor, ...]]]:
    return [list(data_iter) for _ in range(n)]


def test_batches_are_deterministic_and_reiterable() -> None:
    it1, src1, tgt1 = load_data_dates(32, NUM_STEPS, num_examples=200, seed=0)
    it2, src2, tgt2 = load_data_dates(32, NUM_STEPS, num_examples=200, seed=0)
    assert src1.idx_to_token == src2.idx_to_token and tgt1.idx_to_token == tgt2.idx_to_token
    epochs1, epochs2 = _epochs(it1, 2), _epochs(it2, 2)
    assert len(epochs1[0]) == len(epochs1[1]) == len(it1) == 7  # re-iterable, 200 = 6 * 32 + 8
    for e1, e2 in zip(epochs1, epochs2):
        for b1, b2 in zip(e1, e2):
            assert all(torch.equal(t1, t2) for t1, t2 in zip(b1, b2))
    # A new shuffle each epoch, and every example exactly once per epoch.
    assert not torch.equal(epochs1[0][0][0], epochs1[1][0][0])
    for epoch in epochs1:
        X = torch.cat([batch[0] for batch in epoch])
        assert X.shape == (200, NUM_STEPS)
        assert sorted(map(tuple, X.tolist())) == sorted(map(tuple, it1.tensors[0].tolist()))
    it1.reset()
    assert torch.equal(next(iter(it1))[0], epochs1[0][0][0])


def test_batch_layout() -> None:
    data_iter, src_vocab, tgt_vocab = load_data_dates(16, NUM_STEPS, num_examples=64, seed=3)
    X, X_valid_len, Y, Y_valid_len = next(iter(data_iter))
    assert X.shape == Y.shape == (16, NUM_STEPS) and X.dtype == Y.dtype == torch.long
    assert X_valid_len.shape == Y_valid_len.shape == (16,)
    assert (Y_valid_len == 11).all()  # 10 characters + <eos>
    for array, valid_len, vocab in ((X, X_valid_len, src_vocab), (Y, Y_valid_len, tgt_vocab)):
        for row, n in zip(array.tolist(), valid_len.tolist()):
            assert row[n - 1] == vocab["<eos>"]
            assert row[n:] == [vocab["<pad>"]] * (NUM_STEPS - n)
            assert vocab["<pad>"] not in row[:n] and vocab["<unk>"] not in row[:n]


def test_vocab_round_trip() -> None:
    pairs = make_date_pairs(300, seed=0)
    vocab = Vocab([source for source, _ in pairs])
    assert [vocab.to_tokens(i) for i in range(4)] == ["<pad>", "<bos>", "<eos>", "<unk>"]
    for source, _ in pairs[:50]:
        indices = vocab[source]
        assert isinstance(indices, list) and vocab.to_tokens(indices) == source
        assert vocab.to_tokens(torch.tensor(indices)) == source
    assert vocab["no-such-token"] == vocab["<unk>"] == vocab.unk
    assert vocab[("march", "1994")] == [vocab["march"], vocab["1994"]]
    assert len(vocab) == len(set(vocab.idx_to_token)) == len(vocab.token_to_idx)
    # Order-independent: the same multiset of tokens gives the same vocabulary.
    assert Vocab([source for source, _ in reversed(pairs)]).idx_to_token == vocab.idx_to_token
    assert len(Vocab([["a", "a", "b"]], min_freq=2)) == 5


def test_regression_data() -> None:
    x_train, y_train, x_test, y_truth = make_regression_data(50, seed=0)
    again = make_regression_data(50, seed=0)
    assert all(torch.equal(a, b) for a, b in zip((x_train, y_train, x_test, y_truth), again))
    assert x_train.shape == y_train.shape == (50,) and x_test.shape == y_truth.shape == (50,)
    assert torch.all(x_train[1:] >= x_train[:-1]) and 0 <= x_train.min() and x_train.max() < 5
    f = 2 * torch.sin(x_train) + x_train ** 0.8
    assert 0.3 < float((y_train - f).std()) < 0.7
    assert torch.allclose(y_truth, 2 * torch.sin(x_test) + x_test ** 0.8)
    assert not torch.equal(make_regression_data(50, seed=1)[1], y_train)


# ----------------------------------------------------------------------------- metrics, loss


def test_bleu_and_exact_match() -> None:
    label = list("1994-03-03")
    assert bleu(label, label) == pytest.approx(1.0)
    assert bleu(["a", "b"], ["a", "b"], k=4) == pytest.approx(1.0)  # shorter than k
    assert bleu(list("1994-03-04"), label) < 1
    assert bleu(list("1994-03"), label) < bleu(list("1994-03-0"), label) < 1  # brevity penalty
    assert bleu([], label) == 0.0
    assert bleu(list("xxxxxxxxxx"), label) == 0.0
    # The book's worked value: 'a b c' vs 'a b c d' with k=2 is exp(1 - 4/3).
    assert bleu(["a", "b", "c"], ["a", "b", "c", "d"], k=2) == pytest.approx(math.exp(1 - 4 / 3))
    assert exact_match(label, label) == 1.0 and exact_match(label[:-1], label) == 0.0


def test_masked_softmax_ce_loss_ignores_padding() -> None:
    torch.manual_seed(0)
    loss = MaskedSoftmaxCELoss()
    pred = torch.randn(3, 4, 10)
    label = torch.randint(0, 10, (3, 4))
    valid_len = torch.tensor([4, 2, 0])
    l = loss(pred, label, valid_len)
    assert l.shape == (3,)
    # Changing logits or labels past the valid length changes nothing.
    pred2, label2 = pred.clone(), label.clone()
    pred2[1, 2:] = torch.randn(2, 10) * 100
    label2[1, 2:] = (label2[1, 2:] + 1) % 10
    pred2[2] = 7.0
    assert torch.allclose(loss(pred2, label2, valid_len), l)
    assert l[2] == 0
    ce = torch.nn.functional.cross_entropy(pred[1, :2], label[1, :2], reduction="sum")
    assert torch.allclose(l[1], ce / 4)  # the mean over all T positions, padding counting 0
    assert torch.allclose(l[0], torch.nn.functional.cross_entropy(pred[0], label[0]))


def test_grad_clipping() -> None:
    net = torch.nn.Linear(3, 2)
    net.weight.grad = torch.full_like(net.weight, 10.0)
    net.bias.grad = torch.full_like(net.bias, 10.0)
    norm = grad_clipping(net, 1.0)
    assert norm == pytest.approx(math.sqrt(8 * 100))
    total = torch.sqrt(sum((p.grad ** 2).sum() for p in net.parameters()))
    assert float(total) == pytest.approx(1.0, rel=1e-5)


# ----------------------------------------------------------------------------- training

@pytest.fixture
def one_thread():
    """Train on one torch thread (much faster on a shared CPU), restoring the setting after."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


TINY = dict(num_examples=600, num_test=20, batch_size=64, num_epochs=4, lr=0.01)


@pytest.mark.parametrize("train, sizes", [
    (train_bahdanau, dict(embed_size=16, num_hiddens=32)),
    (train_transformer, dict(num_hiddens=32, ffn_num_hiddens=64)),
])
def test_tiny_training_lowers_the_loss(train, sizes, tmp_path, one_thread) -> None:
    logged: list[tuple[int, float]] = []
    net, losses, metrics = train(log=lambda epoch, loss: logged.append((epoch, loss)),
                                 **TINY, **sizes)
    assert len(losses) == TINY["num_epochs"] and all(math.isfinite(l) for l in losses)
    assert logged == list(enumerate(losses, start=1))
    assert losses[-1] < 0.8 * losses[0]
    assert 0 <= metrics["exact_match"] <= 1 and 0 <= metrics["bleu"] <= 1 and metrics["n"] == 20

    # Greedy decoding returns tokens and one set of attention weights per step.
    source = make_test_pairs(1, seed=5, num_train=600)[0][0]
    pred, weights = predict_seq2seq(net, source, net.src_vocab, net.tgt_vocab, NUM_STEPS,
                                    save_attention_weights=True)
    assert not net.training
    assert all(token in net.tgt_vocab for token in pred) and len(pred) <= NUM_STEPS
    assert len(weights) in (len(pred), len(pred) + 1)
    matrix = cross_attention_matrix(weights)
    assert matrix.shape == (len(weights), NUM_STEPS)
    assert torch.allclose(matrix.sum(dim=1), torch.ones(len(weights)), atol=1e-5)
    assert (matrix[:, len(source) + 1:] == 0).all()  # no weight on source padding
    paths = save_attention_figures(net, "tiny", str(tmp_path), source)
    assert all((tmp_path / p.split("/")[-1]).stat().st_size > 0 for p in paths)


def test_training_is_reproducible(one_thread) -> None:
    kwargs = dict(num_examples=256, num_test=0, batch_size=64, num_epochs=2,
                  embed_size=8, num_hiddens=16, num_layers=1, dropout=0.0)
    _, losses1, _ = train_bahdanau(**kwargs)
    _, losses2, _ = train_bahdanau(**kwargs)
    assert losses1 == losses2


def test_plots_save_files(tmp_path) -> None:
    set_seed(0)
    path = tmp_path / "heat.png"
    show_heatmaps(torch.rand(2, 3, 4, 5), "keys", "queries", titles=["a", "b", "c"],
                  path=str(path))
    assert path.stat().st_size > 0
    show_heatmaps(torch.rand(4, 5), "keys", "queries", path=str(tmp_path / "one.png"))
    plot_losses([1.0, 0.5, 0.25], path=str(tmp_path / "loss.png"))
    assert (tmp_path / "one.png").stat().st_size > 0 and (tmp_path / "loss.png").stat().st_size > 0


# ----------------------------------------------------------------------------- full size


@pytest.mark.slow
@pytest.mark.parametrize("train", [train_bahdanau, train_transformer])
def test_full_training_reproduces_readme_figures(train, one_thread, request) -> None:
    # About a minute of CPU each: skipped unless selected by a marker expression naming slow.
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("full-size training: run with -m slow")
    net, losses, metrics = train()
    assert metrics["exact_match"] >= 0.8 and metrics["bleu"] >= 0.9
    assert losses[-1] < 0.1 * losses[0]
    again = evaluate(net, make_test_pairs(50, seed=1), net.src_vocab, net.tgt_vocab, NUM_STEPS)
    assert again["exact_match"] >= 0.8
