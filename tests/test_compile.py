"""Every attention class compiles with ``torch.compile`` in one graph and computes what eager does.

``backend="aot_eager"`` traces the module the way inductor would (Dynamo + AOTAutograd) without
generating code, so the test is quick. ``fullgraph=True`` turns any graph break -- a data-dependent
branch, a host synchronisation such as ``.item()`` -- into an error. ``dynamic=False``: a new
length is a new static trace (what the lessons' fixed-size calls get), not Dynamo's symbolic
re-trace, which costs twice the whole file's time.
"""

from __future__ import annotations

import pytest
import torch
from torch.testing import assert_close

import mhsa_helpers as mh

pytestmark = pytest.mark.slow


def _modules():
    return {
        "SelfAttentionV1": (lambda: mh.SelfAttentionV1(3, 4), (5, 3)),
        "SelfAttentionV2": (lambda: mh.SelfAttentionV2(3, 4, qkv_bias=True), (5, 3)),
        "CausalAttention": (lambda: mh.CausalAttention(3, 4, 6, 0.0), (2, 5, 3)),
        "MultiHeadAttentionWrapper": (
            lambda: mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, 2),
            (2, 5, 3),
        ),
        "MultiHeadAttention": (lambda: mh.MultiHeadAttention(3, 4, 6, 0.0, 2), (2, 5, 3)),
        "FusedQKVMultiHeadAttention": (
            lambda: mh.FusedQKVMultiHeadAttention(3, 4, 6, 0.0, 2),
            (2, 5, 3),
        ),
        "SDPAMultiHeadAttention": (lambda: mh.SDPAMultiHeadAttention(3, 4, 6, 0.0, 2), (2, 5, 3)),
        "GroupedQueryAttention": (lambda: mh.GroupedQueryAttention(3, 8, 6, 0.0, 4, 2), (2, 5, 3)),
    }


NAMES = list(_modules())
WEIGHTS = ["CausalAttention", "MultiHeadAttention", "FusedQKVMultiHeadAttention"]
WEIGHTS += ["SDPAMultiHeadAttention", "GroupedQueryAttention"]


def compiled(module):
    torch._dynamo.reset()
    return torch.compile(module, backend="aot_eager", fullgraph=True, dynamic=False)


@pytest.mark.parametrize("name", NAMES)
def test_compiled_output_equals_eager(name):
    """Outputs at two lengths (a second length: a re-trace, same numbers) and, for the classes
    that return them, the weights: one compiled module per class."""
    make, shape = _modules()[name]
    torch.manual_seed(0)
    module = make().eval()
    fast = compiled(module)
    with torch.no_grad():
        for num_tokens in (shape[-2], 2):
            x = torch.rand(*shape[:-2], num_tokens, shape[-1])
            assert_close(fast(x), module(x))
        if name in WEIGHTS:
            x = torch.rand(shape)
            out, weights = fast(x, return_weights=True)
            want_out, want_weights = module(x, return_weights=True)
            assert_close(out, want_out)
            assert_close(weights, want_weights)


def test_compiled_cross_attention_equals_eager():
    torch.manual_seed(0)
    module = mh.CrossMultiHeadAttention(3, 5, 4, 2).eval()
    query, key_value = torch.rand(2, 4, 3), torch.rand(2, 7, 5)
    with torch.no_grad():
        assert_close(compiled(module)(query, key_value), module(query, key_value))


def test_compiled_gradients_equal_eager():
    torch.manual_seed(0)
    module = mh.MultiHeadAttention(3, 4, 6, 0.0, 2)
    x = torch.rand(2, 5, 3)
    compiled(module)(x).square().sum().backward()
    fast = [p.grad.clone() for p in module.parameters()]
    module.zero_grad()
    module(x).square().sum().backward()
    for got, want in zip(fast, [p.grad for p in module.parameters()]):
        assert_close(got, want)


def test_tiny_lm_compiles_in_one_graph():
    """No host synchronisation per step: the whole forward is one graph."""
    torch.manual_seed(0)
    model = mh.TinyAttentionLM(16, 8, 6, 2).eval()
    ids = torch.randint(0, 16, (2, 6))
    with torch.no_grad():
        logits, weights = compiled(model)(ids, return_weights=True)
        want_logits, want_weights = model(ids, return_weights=True)
    assert_close(logits, want_logits)
    assert_close(weights, want_weights)


def test_the_nan_check_is_eager_only():
    """Documented: the finite check reads the tensor, so torch.compile skips it."""
    torch.manual_seed(0)
    module = mh.MultiHeadAttention(3, 4, 6, 0.0, 2).eval()
    x = torch.rand(1, 4, 3)
    x[0, 2, 0] = float("nan")
    with pytest.raises(ValueError, match="at batch 0, token 2"):
        module(x)
    with torch.no_grad():
        assert torch.isnan(compiled(module)(x)).all()
