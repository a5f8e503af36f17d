"""The numbers printed in the book (and in ../shared/seeds) are reproduced by our classes.

Each class creates its layers in the book's order, so the book's seeds give the book's weights.
"""

from __future__ import annotations

import torch
from torch.testing import assert_close

import mhsa_helpers as mh


def close4(actual: torch.Tensor, name: str) -> None:
    """Equal to the book's 4-decimal print."""
    assert_close(actual.detach(), mh.reference(name), atol=5e-5, rtol=0)


def test_data_file_holds_the_book_example(journey):
    assert journey.words == ["Your", "journey", "starts", "with", "one", "step"]
    assert journey.sentence == "Your journey starts with one step"
    assert journey.inputs.shape == (6, 3)
    assert journey.inputs.dtype == torch.float32
    assert_close(journey.inputs[1], torch.tensor([0.55, 0.87, 0.66]))
    assert journey.batch.shape == (2, 6, 3)


def test_load_journey_returns_fresh_tensors(journey):
    journey.inputs.zero_()
    assert mh.load_journey().inputs.abs().sum() > 0


def test_unknown_reference_name_is_a_clear_error():
    try:
        mh.reference("nope")
    except KeyError as err:
        assert "nope" in str(err) and "seed123_query_2" in str(err)
    else:  # pragma: no cover
        raise AssertionError("expected KeyError")


def test_simplified_attention(journey):
    inputs = journey.inputs
    scores = inputs @ inputs[1]
    close4(scores, "simplified_scores_2")
    close4(scores / scores.sum(), "simplified_sum_normalized_2")
    weights = torch.softmax(scores, dim=0)
    close4(weights, "simplified_softmax_2")
    close4(weights @ inputs, "simplified_context_2")
    close4(torch.softmax(inputs @ inputs.T, dim=-1) @ inputs, "simplified_all_context")


def test_trainable_weights_step_by_step(journey):
    inputs = journey.inputs
    torch.manual_seed(123)
    W_query = torch.rand(3, 2)
    W_key = torch.rand(3, 2)
    W_value = torch.rand(3, 2)
    x_2 = inputs[1]
    close4(x_2 @ W_query, "seed123_query_2")
    close4(x_2 @ W_key, "seed123_key_2")
    close4(x_2 @ W_value, "seed123_value_2")
    keys, values = inputs @ W_key, inputs @ W_value
    scores = (x_2 @ W_query) @ keys.T
    close4(scores, "seed123_attn_scores_2")
    close4(scores[1], "seed123_attn_score_22")
    weights = torch.softmax(scores / 2**0.5, dim=-1)
    close4(weights, "seed123_attn_weights_2")
    close4(weights @ values, "seed123_context_vector_2")


def test_self_attention_v1_seed_123(journey):
    torch.manual_seed(123)
    out = mh.SelfAttentionV1(3, 2)(journey.inputs)
    close4(out, "self_attention_v1_seed123")
    close4(out[1], "seed123_context_vector_2")  # [0.3061, 0.8210]


def test_self_attention_v2_seed_789(journey):
    torch.manual_seed(789)
    close4(mh.SelfAttentionV2(3, 2)(journey.inputs), "self_attention_v2_seed789")


def test_causal_mask_three_step_and_one_step(journey):
    torch.manual_seed(789)
    sa_v2 = mh.SelfAttentionV2(3, 2)
    queries, keys = sa_v2.W_query(journey.inputs), sa_v2.W_key(journey.inputs)
    scores = queries @ keys.T
    weights = torch.softmax(scores / 2**0.5, dim=-1)
    close4(weights, "seed789_attn_weights")
    masked = weights * torch.tril(torch.ones(6, 6))
    renormalized = masked / masked.sum(dim=-1, keepdim=True)
    close4(renormalized, "seed789_masked_renormalized")
    one_step = torch.softmax(
        scores.masked_fill(mh.causal_mask(6).bool(), -torch.inf) / 2**0.5, dim=-1
    )
    assert_close(one_step, renormalized)


def test_dropout_on_ones_seed_123():
    torch.manual_seed(123)
    close4(torch.nn.Dropout(0.5)(torch.ones(6, 6)), "dropout_seed123_ones")


def test_causal_attention_seed_123(batch):
    torch.manual_seed(123)
    out = mh.CausalAttention(3, 2, 6, 0.0)(batch)
    assert out.shape == (2, 6, 2)
    close4(out[0], "causal_attention_seed123")
    close4(out[1], "causal_attention_seed123")


def test_wrapper_seed_123(batch):
    torch.manual_seed(123)
    out = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)(batch)
    assert out.shape == (2, 6, 4)
    close4(out[0], "wrapper_seed123_d_out2_heads2")


def test_multihead_seed_123(batch):
    torch.manual_seed(123)
    out = mh.MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)(batch)
    assert out.shape == (2, 6, 2)
    close4(out[0], "multihead_seed123_d_out2_heads2")


def test_layers_are_created_in_the_book_order():
    mha = mh.MultiHeadAttention(3, 4, 6, 0.0, num_heads=2)
    names = [name for name, _ in mha.named_parameters()]
    assert names == [
        "W_query.weight",
        "W_key.weight",
        "W_value.weight",
        "out_proj.weight",
        "out_proj.bias",
    ]
    assert [name for name, _ in mha.named_buffers()] == ["mask"]
