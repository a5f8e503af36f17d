# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 · Simplified self-attention — solutions (简化的自注意力 · 参考答案)
#
# Worked answers to the exercises of `01_simplified_self_attention.ipynb`. Try them yourself
# first. Each cell computes the answer and asserts that the checker passes.

# %%
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()
journey = mh.load_journey()
inputs = journey.inputs  # (T, d_in) = (6, 3)
attn_weights = torch.softmax(inputs @ inputs.T, dim=-1)  # (T, T)

# %% [markdown]
# **Exercise 1 (a seventh token).** Stack "forward" under the six embeddings, score all seven
# against it, softmax, and mix all seven. Mixing only the book's six would leave "forward" out of
# its own sentence.

# %%
new_embedding = torch.tensor(mhsa_helpers.exercises.NEW_TOKEN_EMBEDDING)  # (d_in,) = (3,)
seven = torch.cat([inputs, new_embedding.unsqueeze(0)])  # (T + 1, d_in) = (7, 3)
scores_new = seven @ new_embedding  # (7,)
weights_new = torch.softmax(scores_new, dim=0)  # (7,)
answer = weights_new @ seven  # (d_in,)
print(weights_new)
print(answer)

result = mhsa_helpers.exercises.check_context_vector_new_token(answer)
assert result, result
result

# %% [markdown]
# **Exercise 2 (a stable softmax for every row).** Subtract each row's *own* maximum
# (`keepdim=True` keeps the shape (rows, 1) so that it broadcasts over the columns). One maximum
# for the whole matrix is not enough: in `[[1000., 1001.], [-1000., -1001.]]` the second row
# would become `exp(-2001)`, which rounds to 0, and `0 / 0` is `nan`.


# %%
def softmax_rows(x):
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)  # (rows, cols), every row's max -> 0
    return e / e.sum(dim=-1, keepdim=True)  # (rows, cols)


print(softmax_rows(torch.tensor([[1000.0, 1001.0], [-1000.0, -1001.0]])))
answer = softmax_rows
result = mhsa_helpers.exercises.check_softmax_rows(answer)
assert result, result
result

# %% [markdown]
# **Exercise 3 (attention received).** What token `j` receives is column `j`: sum over the
# queries, `dim=0`. The column sums are not 1 (only the rows are), and together they add up to 6,
# one unit given out by each query. "journey" and "starts" receive the most, as the heatmap's two
# darkest columns show.

# %%
answer = attn_weights.sum(dim=0)  # (T,)
print(answer)
print(answer.sum())
result = mhsa_helpers.exercises.check_attention_received(answer)
assert result, result
result
