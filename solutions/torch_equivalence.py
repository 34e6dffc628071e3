"""Our MultiHeadAttention against PyTorch's own building blocks."""

import torch
import torch.nn.functional as F
from torch import nn

from attnkit.solutions.multihead import merge_heads, split_heads


def to_torch_multihead(mha):
    """Copy a MultiHeadAttention (d_in == d_out) into an equivalent nn.MultiheadAttention.

    Call the result as torch_mha(x, x, x, attn_mask=causal_mask(num_tokens), need_weights=False).
    """
    d_out = mha.d_out
    if mha.W_query.in_features != d_out:
        raise ValueError(
            "nn.MultiheadAttention needs d_in == d_out for the query; "
            f"got d_in={mha.W_query.in_features}, d_out={d_out}"
        )
    torch_mha = nn.MultiheadAttention(
        embed_dim=d_out, num_heads=mha.num_heads, dropout=mha.dropout.p, bias=True, batch_first=True
    )
    torch_mha = torch_mha.to(dtype=mha.W_query.weight.dtype, device=mha.W_query.weight.device)
    projections = (mha.W_query, mha.W_key, mha.W_value)
    with torch.no_grad():
        # PyTorch stacks the three projection matrices as rows of one (3 * d_out, d_out) matrix.
        torch_mha.in_proj_weight.copy_(torch.cat([p.weight for p in projections], dim=0))
        biases = [p.bias if p.bias is not None else torch.zeros_like(p.weight[:, 0]) for p in projections]
        torch_mha.in_proj_bias.copy_(torch.cat(biases))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def sdpa_causal(mha, x):
    """The same forward pass as mha(x) with F.scaled_dot_product_attention doing the attention."""
    queries = split_heads(mha.W_query(x), mha.num_heads)  # (b, num_heads, num_tokens, head_dim)
    keys = split_heads(mha.W_key(x), mha.num_heads)
    values = split_heads(mha.W_value(x), mha.num_heads)
    dropout_p = mha.dropout.p if mha.training else 0.0
    context = F.scaled_dot_product_attention(queries, keys, values, dropout_p=dropout_p, is_causal=True)
    return mha.out_proj(merge_heads(context))  # (b, num_tokens, d_out)
