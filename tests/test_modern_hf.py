"""The modern block equals Hugging Face's: Llama's and Qwen3's attention, decoder layer and model.

Tiny configurations built in code (nothing is downloaded); each ``transformers`` module is created
with its own random initialisation and our module loads its ``state_dict`` *by name*, strictly (the
same parameter names, nothing missing, nothing extra). Outputs agree within float32 rounding.
Qwen3 adds QK-norm; its sliding-window layers check the window against Hugging Face's own masks.
Lesson 13 cites this file.
"""

from __future__ import annotations

import pytest
import torch
from torch.testing import assert_close
from transformers import LlamaConfig, LlamaModel, Qwen3Config, Qwen3Model
from transformers.models.llama import modeling_llama
from transformers.models.qwen3 import modeling_qwen3

import mhsa_helpers as mh

D, HEADS, KV, HEAD_DIM, HIDDEN, CONTEXT = 32, 4, 2, 8, 48, 24
TOL = {"atol": 2e-6, "rtol": 1e-5}  # float32 rounding of a few dozen products


def config(family: str, *, layers: int = 1, window: int | None = None):
    common = dict(
        hidden_size=D,
        intermediate_size=HIDDEN,
        num_attention_heads=HEADS,
        num_key_value_heads=KV,
        head_dim=HEAD_DIM,
        num_hidden_layers=layers,
        max_position_embeddings=CONTEXT,
        rms_norm_eps=1e-6,
        vocab_size=11,
        attn_implementation="eager",
    )
    if family == "llama":
        return LlamaConfig(**common, rope_parameters={"rope_type": "default", "rope_theta": 500.0})
    kw = {}
    if window is not None:
        kw = dict(use_sliding_window=True, sliding_window=window, max_window_layers=0)
    return Qwen3Config(
        **common, rope_parameters={"rope_type": "default", "rope_theta": 500.0}, **kw
    )


def ours(family: str, window: int | None = None) -> mh.ModernDecoderLayer:
    return mh.ModernDecoderLayer(
        D,
        CONTEXT,
        HEADS,
        KV,
        hidden_dim=HIDDEN,
        head_dim=HEAD_DIM,
        rope_base=500.0,
        qk_norm=family == "qwen3",
        sliding_window=window,
    ).eval()


def hf_inputs(cfg, x: torch.Tensor, module) -> dict:
    """What a Hugging Face layer gets from its model: cos/sin and an additive causal mask."""
    rotary = (
        modeling_llama.LlamaRotaryEmbedding
        if isinstance(cfg, LlamaConfig)
        else modeling_qwen3.Qwen3RotaryEmbedding
    )(cfg)
    positions = torch.arange(x.shape[1])[None, :]  # (1, T)
    hidden = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), diagonal=1)
    mask = torch.zeros(x.shape[1], x.shape[1]).masked_fill(hidden, torch.finfo(x.dtype).min)
    return {"position_embeddings": rotary(x, positions), "attention_mask": mask[None, None]}


FAMILIES = {
    "llama": (modeling_llama.LlamaAttention, modeling_llama.LlamaDecoderLayer),
    "qwen3": (modeling_qwen3.Qwen3Attention, modeling_qwen3.Qwen3DecoderLayer),
}


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("part", ["attention", "decoder layer"])
def test_equals_hugging_face_layer(family, part):
    cfg = config(family)
    hf_class = FAMILIES[family][part == "decoder layer"]
    torch.manual_seed(0)
    theirs = hf_class(cfg, layer_idx=0).eval()
    with torch.no_grad():  # Hugging Face initialises norms at 1: move them off it
        for name, p in theirs.named_parameters():
            if "norm" in name:
                p.add_(0.1 * torch.randn_like(p))
    layer = ours(family)
    mine = layer.self_attn if part == "attention" else layer
    mine.load_state_dict(theirs.state_dict())  # strict: the same names, nothing else
    x = torch.randn(2, 9, D)  # (b, T, d)
    expected = theirs(x, **hf_inputs(cfg, x, theirs))
    expected = expected[0] if isinstance(expected, tuple) else expected  # (b, T, d)
    with torch.no_grad():
        assert_close(mine(x), expected, **TOL)


@pytest.mark.parametrize(("family", "window"), [("llama", None), ("qwen3", None), ("qwen3", 3)])
def test_two_layer_model_equals_hugging_face_model(family, window):
    """The whole stack from ``inputs_embeds``: Hugging Face builds the causal (and sliding-window)
    masks and the RoPE tables itself here, so this checks our masks and positions against theirs."""
    cfg = config(family, layers=2, window=window)
    torch.manual_seed(1)
    model = (LlamaModel if family == "llama" else Qwen3Model)(cfg).eval()
    if window is not None:
        assert cfg.layer_types == ["sliding_attention", "sliding_attention"]
    layers = [ours(family, window) for _ in range(2)]
    for layer, theirs in zip(layers, model.layers, strict=True):
        layer.load_state_dict(theirs.state_dict())
    final = mh.RMSNorm(D)
    final.load_state_dict(model.norm.state_dict())
    x = torch.randn(2, 11, D)  # (b, T, d)
    with torch.no_grad():
        expected = model(inputs_embeds=x).last_hidden_state  # (b, T, d)
        h = x
        for layer in layers:
            h = layer(h)
        assert_close(final(h), expected, **TOL)


def test_rotary_tables_are_hugging_faces_bit_for_bit():
    cfg = config("llama")
    x = torch.randn(1, CONTEXT, D)
    cos, sin = modeling_llama.LlamaRotaryEmbedding(cfg)(x, torch.arange(CONTEXT)[None, :])
    rope = mh.RotaryEmbedding(HEAD_DIM, CONTEXT, base=500.0)
    ours_cos, ours_sin = rope(torch.zeros(1, 1, CONTEXT, HEAD_DIM))
    assert torch.equal(ours_cos, cos[0]) and torch.equal(ours_sin, sin[0])


def test_rmsnorm_and_swiglu_equal_hugging_faces():
    cfg = config("llama")
    torch.manual_seed(2)
    norm, mlp = modeling_llama.LlamaRMSNorm(D, eps=1e-6), modeling_llama.LlamaMLP(cfg)
    with torch.no_grad():
        norm.weight.add_(torch.randn(D))
    my_norm, my_mlp = mh.RMSNorm(D, eps=1e-6), mh.SwiGLU(D, HIDDEN)
    my_norm.load_state_dict(norm.state_dict())
    my_mlp.load_state_dict(mlp.state_dict())
    x = torch.randn(3, 5, D)
    assert torch.equal(my_norm(x), norm(x))
    assert torch.equal(my_mlp(x), mlp(x))
